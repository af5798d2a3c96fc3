"""The transports of `budgetlearn serve`: standard input/output, a TCP port, a Unix socket; one thread.

One event loop (selectors) reads every client, cuts what a client sent into lines (`Lines`, holding at most
`max_line` bytes of the line being read), and hands the complete lines of each read to the one Answerer as
one batch: learning is applied in the order the batches arrive, one batch at a time, and every answer comes
from the model as it stood at that line.  Answers go back in the order of the lines.

What a client can do: send lines and read answers.  Nothing it sends names a file or runs code; a client that
disconnects mid-line loses that line only (it was neither learnt nor answered); one that sends nothing for
`idle_timeout` seconds is closed; beyond `max_clients` a new connection gets one error line and is closed; a
client that does not read its answers is not read from while more than OUT_LIMIT bytes of them wait.

Signals are handled between batches, never inside one: SIGTERM and SIGINT stop the server (a final checkpoint
first), SIGHUP writes a checkpoint and goes on."""

from __future__ import annotations

import errno
import os
import selectors
import signal
import socket
import stat
import sys
import time

from ..base.core import DataError
from .answers import TOO_LONG, Stopped

READ_SIZE = 1 << 20  # bytes read at once from a client: the largest batch
OUT_LIMIT = 4 << 20  # answers waiting for a client beyond which it is not read from
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class OutputFailed(Exception):
    """Standard output could not take the answers (a full disk, an I/O error): the OSError, as `error`."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


class Lines:
    """A client's bytes cut into lines (without their newline), numbered from 1; a line longer than
    `max_line` bytes is given as TOO_LONG as soon as it is known to be, and its bytes are dropped up to its
    newline."""

    def __init__(self, max_line: int):
        self.max_line, self.tail, self.dropping, self.next_line = max_line, bytearray(), False, 1

    def feed(self, data: bytes) -> tuple[int, list]:
        """(number of the first line, the lines `data` completes)."""
        first, out, start = self.next_line, [], 0
        while (newline := data.find(b"\n", start)) >= 0:
            if self.dropping:
                self.dropping = False  # the end of a line given as TOO_LONG already
            elif len(self.tail) + newline - start > self.max_line:
                out.append(TOO_LONG)
            else:
                out.append(bytes(self.tail) + data[start:newline])
            self.tail.clear()
            start = newline + 1
        if not self.dropping:
            if len(self.tail) + len(data) - start > self.max_line:
                out.append(TOO_LONG)
                self.dropping = True
                self.tail.clear()
            else:
                self.tail += data[start:]
        self.next_line += len(out)
        return first, out

    @property
    def mid_line(self) -> bool:
        return bool(self.tail)


class Client:
    """One source of lines and its answers: a connection, or standard input and output."""

    def __init__(self, name: str, max_line: int, sock: socket.socket | None = None):
        self.name, self.sock, self.lines = name, sock, Lines(max_line)
        self.out = bytearray()
        self.reading = True
        self.last_heard = time.monotonic()

    def fileno(self) -> int:
        return self.sock.fileno() if self.sock is not None else sys.stdin.fileno()

    def receive(self) -> bytes:
        if self.sock is None:
            return os.read(self.fileno(), READ_SIZE)
        return self.sock.recv(READ_SIZE)

    def flush(self) -> None:
        """Send what can be sent now (standard output: all of it, waiting as a pipe makes a writer wait)."""
        if self.sock is None:
            view = memoryview(bytes(self.out))
            self.out.clear()
            while view:
                view = view[os.write(sys.stdout.fileno(), view) :]
            return
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except BlockingIOError:
                return
            del self.out[:sent]


class Server:
    """The loop: clients, listeners, signals and the clock, over one Answerer."""

    def __init__(self, answerer, max_line: int, max_clients: int = 64, idle_timeout: float | None = None, log=None):
        self.answerer, self.max_line, self.max_clients, self.idle_timeout = (
            answerer,
            max_line,
            max_clients,
            idle_timeout,
        )
        self.log = log or (lambda text: None)
        self.selector = None
        self.clients: dict[int, Client] = {}
        self.listeners: list[socket.socket] = []
        self.unix_path: tuple[str, int] | None = None  # the socket file this server made: (path, inode)
        self.stdio = False
        self.stop_signal: int | None = None
        self.checkpoint_asked = False
        self.connections = 0
        self.output_failed: OSError | None = None  # standard output's error (a full disk), raised at the end

    # ---- transports -------------------------------------------------------------------------
    def listen_tcp(self, host: str, port: int) -> tuple:
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.listeners.append(sock)
        return sock.getsockname()[:2]

    def listen_unix(self, path: str) -> None:
        """Listen at `path`; a socket left there by a server that is gone is replaced, anything else refused
        (OSError): a file, a directory, a socket another server listens at."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None:
            if not stat.S_ISSOCK(st.st_mode):
                raise FileExistsError(errno.EEXIST, "exists and is not a socket; not replaced", path)
            if _listening(path):
                raise FileExistsError(errno.EADDRINUSE, "another server listens at this socket", path)
            os.unlink(path)  # a socket nobody listens at: a server's that stopped
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
        sock.listen()
        self.listeners.append(sock)
        self.unix_path = (path, os.lstat(path).st_ino)

    def use_stdio(self) -> None:
        self.stdio = True

    # ---- the loop ---------------------------------------------------------------------------
    def run(self) -> int | None:
        """Serve until standard input ends (stdio) or a stop signal; the final checkpoint written.
        Returns the stop signal's number, None at the end of the input or when the reader of standard output
        went away.  Stopped when the model's numbers stopped being finite (nothing written); OutputFailed
        when standard output failed (after the checkpoint)."""
        # select() reads a regular file given as stdin (epoll refuses it); the sockets take the system's best
        self.selector = selectors.SelectSelector() if self.stdio else selectors.DefaultSelector()
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        previous = self._catch_signals(wake_w)
        try:
            self.selector.register(wake_r, selectors.EVENT_READ, "wake")
            for sock in self.listeners:
                sock.setblocking(False)
                self.selector.register(sock, selectors.EVENT_READ, "listener")
            if self.stdio:
                self._add(Client("<stdin>", self.max_line))
            while self.stop_signal is None and (self.clients or not self.stdio):
                self._turn(wake_r)
            self.answerer.checkpoint()  # what was learnt is kept, whatever became of its answers
            if self.output_failed is not None:
                raise OutputFailed(self.output_failed)
            return self.stop_signal
        finally:
            self._restore_signals(previous)
            self._close()
            for fd in (wake_r, wake_w):
                os.close(fd)

    def _turn(self, wake_r: int) -> None:
        """One wait for events, and what they bring."""
        for key, events in self.selector.select(self._timeout()):
            if key.data == "wake":
                while _drain(wake_r):
                    pass
            elif key.data == "listener":
                self._accept(key.fileobj)
            else:
                client = key.data
                if events & selectors.EVENT_READ:
                    self._read(client)
                if events & selectors.EVENT_WRITE and client.fileno() in self.clients:
                    self._send(client)
        if self.checkpoint_asked:
            self.checkpoint_asked = False
            self._checkpoint("SIGHUP")
        now = time.monotonic()
        if self.answerer.checkpoints is not None and self.answerer.checkpoints.due(now):
            self._checkpoint("--checkpoint-seconds")
        if self.idle_timeout is not None:
            for client in list(self.clients.values()):
                if client.sock is not None and now - client.last_heard >= self.idle_timeout:
                    self._drop(client)

    def _timeout(self) -> float:
        waits = [1.0]
        now = time.monotonic()
        if self.idle_timeout is not None:
            waits += [c.last_heard + self.idle_timeout - now for c in self.clients.values()]
        checkpoints = self.answerer.checkpoints
        if checkpoints is not None and checkpoints.seconds is not None:
            waits.append(checkpoints.last_time + checkpoints.seconds - now)
        return max(0.0, min(waits))

    def _checkpoint(self, why: str) -> None:
        """A checkpoint asked for while serving; one that cannot be written is said, and serving goes on
        (the file keeps the last one that was)."""
        try:
            self.answerer.checkpoint()
        except OSError as exc:
            self.log(f"{why}: cannot write the checkpoint: {exc}; serving on")

    def _accept(self, listener: socket.socket) -> None:
        try:
            sock, address = listener.accept()
        except (BlockingIOError, ConnectionAbortedError):
            return
        if len(self.clients) >= self.max_clients:
            try:
                sock.setblocking(False)
                sock.send(f"error: too many clients (at most {self.max_clients}); try again later\n".encode())
            except OSError:
                pass
            sock.close()
            return
        sock.setblocking(False)
        self.connections += 1
        where = f"{address[0]}:{address[1]}" if isinstance(address, tuple) else "unix"
        self._add(Client(f"<client {self.connections} {where}>", self.max_line, sock))

    def _add(self, client: Client) -> None:
        self.clients[client.fileno()] = client
        self.selector.register(client.fileno(), selectors.EVENT_READ, client)

    def _read(self, client: Client) -> None:
        try:
            data = client.receive()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # reset by the peer: what it sent whole was answered
            self._drop(client)
            return
        if not data:
            self._ended(client)
            return
        client.last_heard = time.monotonic()
        first, lines = client.lines.feed(data)
        if lines:
            answers = self.answerer.answer(lines, client.name, first)
            client.out += ("\n".join(answers) + "\n").encode()
            self._send(client)

    def _ended(self, client: Client) -> None:
        """The client's input ended: a line cut in the middle is not learnt (its error is the last answer);
        the answers still waiting are sent, then the client is closed (standard input: the server stops)."""
        if client.lines.mid_line:
            error = DataError(
                client.name,
                client.lines.next_line,
                None,
                "input ended in the middle of a line (no newline at the end): not learnt",
            )
            client.out += f"error: {error}\n".encode()
        client.reading = False
        self._send(client)

    def _send(self, client: Client) -> None:
        try:
            client.flush()
        except OSError as exc:  # the client is gone (a closed pipe, a reset connection)
            self._drop(client)
            if client.sock is None:  # standard output: its reader went away (stop quietly), or it failed
                self.clients.clear()
                if exc.errno != errno.EPIPE:
                    self.output_failed = exc
            return
        if not client.reading and not client.out:
            self._drop(client)
            return
        events = (selectors.EVENT_READ if client.reading and len(client.out) < OUT_LIMIT else 0) | (
            selectors.EVENT_WRITE if client.out else 0
        )
        self.selector.modify(client.fileno(), events or selectors.EVENT_READ, client)

    def _drop(self, client: Client) -> None:
        fd = client.fileno()
        if self.clients.pop(fd, None) is None:
            return
        self.selector.unregister(fd)
        if client.sock is not None:
            client.sock.close()

    def _close(self) -> None:
        for client in list(self.clients.values()):
            if client.sock is not None:
                client.sock.setblocking(True)
                client.sock.settimeout(1.0)
                try:
                    client.sock.sendall(client.out)
                except OSError:
                    pass
            self._drop(client)
        for sock in self.listeners:
            sock.close()
        if self.unix_path is not None:
            path, inode = self.unix_path
            try:
                if os.lstat(path).st_ino == inode:
                    os.unlink(path)
            except OSError:
                pass
        self.selector.close()

    # ---- signals ----------------------------------------------------------------------------
    def _catch_signals(self, wake_w: int) -> dict:
        def stop(signum, frame):
            self.stop_signal = signum

        def hup(signum, frame):
            self.checkpoint_asked = True

        previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, hup)
        previous["wakeup"] = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        return previous

    @staticmethod
    def _restore_signals(previous: dict) -> None:
        signal.set_wakeup_fd(previous.pop("wakeup"))
        for s, handler in previous.items():
            signal.signal(s, handler)


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except BlockingIOError:
        return False


def _listening(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


__all__ = ["Lines", "OutputFailed", "Server", "Stopped"]
