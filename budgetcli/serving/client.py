"""A client of `budgetlearn serve` (`budgetlearn predict --server ADDRESS DATA`): sends a file's lines, writes
the answers, one per line, in order."""

from __future__ import annotations

import socket
import threading

from ..io.inputs import open_binary

PIECE = 1 << 20


class ServerError(OSError):
    """The server could not be reached, or went away before answering every line."""


def connect(address: str, timeout: float) -> socket.socket:
    """A connection to HOST:PORT, or to a Unix socket when the address holds a '/'."""
    try:
        if "/" in address:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(address)
            return sock
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ServerError(f"{address}: give HOST:PORT, or the path of a Unix socket")
        return socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as exc:
        if isinstance(exc, ServerError):
            raise
        raise ServerError(f"{address}: cannot connect: {exc.strerror or exc}") from None


def ask(address: str, data, out, timeout: float = 60.0) -> tuple[int, int]:
    """Send every line of `data` (a path, '-', .gz/.bz2/.xz) to the server at `address` and write its answers
    to the binary file `out`; (lines answered, of them errors).  A thread sends while this one reads, so that
    a server that holds back from a client who does not read its answers never waits on this one.  ServerError
    when the server goes away early or says nothing for `timeout` seconds."""
    f, _ = open_binary(data)
    sock = connect(address, timeout)
    sent = {"lines": 0, "error": None}

    def send():
        last = b"\n"
        try:
            while piece := f.read(PIECE):
                sock.sendall(piece)
                sent["lines"] += piece.count(b"\n")
                last = piece[-1:]
            if last != b"\n":  # a file's last line may lack its newline; the server waits for one
                sock.sendall(b"\n")
                sent["lines"] += 1
            sock.shutdown(socket.SHUT_WR)
        except OSError as exc:
            sent["error"] = exc

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    answered = errors = 0
    line = b""
    try:
        with sock.makefile("rb") as answers:
            for line in answers:
                out.write(line)
                answered += 1
                errors += line.startswith(b"error: ")
    except OSError as exc:
        raise ServerError(f"{address}: {exc.strerror or exc} after {answered:,} answers") from None
    finally:
        sender.join(timeout)
        sock.close()
        if data != "-":
            f.close()
    if sent["error"] is not None or answered < sent["lines"]:
        said = f" ({line.decode(errors='replace').strip()})" if line.startswith(b"error: ") else ""
        raise ServerError(f"{address}: the server closed the connection after {answered:,} answers{said}")
    return answered, errors
