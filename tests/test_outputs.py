"""Every output path of every subcommand, whatever is at the path (issue: production-hard, outputs).

A regular file is replaced atomically; a character device, FIFO or socket is written directly and
stays what it was; a symbolic link is followed and its target replaced (the link stays a link);
a directory is refused.  New files get 0666 less the umask.  The device nodes, FIFOs and sockets
are made under the test's temporary directory, never taken from the real /dev.

The standard-output cases (`-`, a link to /proc/self/fd/1, a full device, a closed pipe, an I/O
error on a terminal) run real processes: what happens to fd 1 cannot be seen in process.
"""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli import modelfile
from budgetcli.cli import main

from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parent.parent
UMASK = 0o027  # not the usual 022, so that a mode that ignores the umask shows
MEM_MAJOR, NULL_MINOR, FULL_MINOR = 1, 3, 7  # Linux's /dev/null and /dev/full, made anew under tmp


def _can_mknod(directory: Path) -> bool:
    try:
        os.mknod(directory / "probe", 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, NULL_MINOR))
    except (PermissionError, AttributeError, OSError):
        return False
    os.unlink(directory / "probe")
    return True


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A data file, a model, a LIBSVM model and a learning curve for the writers to read."""
    d = tmp_path_factory.mktemp("inputs")
    data = d / "train.txt"
    write_stream(data, n=300)
    model = d / "m.model"
    r = CliRunner().invoke(main, ["train", "-a", "perceptron", "-q", "--curve", str(d / "c.csv"), "--curve-every",
                                  "50", str(data), "-o", str(model)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["export", str(model), "-o", str(d / "m.libsvm")])
    assert r.exit_code == 0, r.output
    return {"data": data, "model": model, "libsvm": d / "m.libsvm", "curve": d / "c.csv", "dir": d}


# name -> (arguments with OUT for the output path, file name suffix, canonical form of the bytes written)
def _model_canon(raw: bytes, where: Path) -> bytes:
    """A model's header and arrays: a model written to a FIFO or socket is a zip with data
    descriptors (an unseekable stream), byte-for-byte different but holding the same content."""
    copy = where / "canon.model"
    copy.write_bytes(raw)
    header, arrays = modelfile.load(copy)
    return json.dumps(header, sort_keys=True).encode() + b"".join(
        name.encode() + arrays[name].tobytes() for name in sorted(arrays))


def _without_columns(raw: bytes, *names) -> bytes:
    rows = list(csv.reader(io.StringIO(raw.decode())))
    keep = [j for j, n in enumerate(rows[0]) if n not in names]
    return "\n".join(",".join(r[j] for j in keep) for r in rows).encode()


def _exact(raw: bytes, where: Path) -> bytes:
    return raw


WRITERS = {
    "train -o": (["train", "-a", "perceptron", "-q", "{data}", "-o", "OUT"], "", _model_canon),
    "online-to-batch -o": (["online-to-batch", "-a", "perceptron", "-q", "{data}", "-o", "OUT"], "", _model_canon),
    "train --curve": (["train", "-a", "perceptron", "-q", "--curve-every", "50", "{data}", "-o", "{scratch}/x.model",
                       "--curve", "OUT"], ".csv", lambda raw, where: _without_columns(raw, "seconds")),
    "predict -o": (["predict", "{model}", "{data}", "-o", "OUT"], "", _exact),
    "export -o": (["export", "{model}", "-o", "OUT"], "", _exact),
    "import -o": (["import", "{libsvm}", "-o", "OUT"], "", _model_canon),
    "tune --csv": (["tune", "-a", "perceptron", "--permutations", "0", "{data}", "--json", "--csv", "OUT"], ".csv",
                   lambda raw, where: _without_columns(raw, "seconds_mean", "seconds_std")),
    "tune --save-best": (["tune", "-a", "perceptron", "--permutations", "0", "{data}", "--json", "--save-best", "OUT"],
                         "", _model_canon),
    "generate -o": (["generate", "projectron-gaussians", "-n", "200", "-o", "OUT"], "", _exact),
    "plot -o": (["plot", "{curve}", "-o", "OUT"], ".png", _exact),
}


def _args(writer: str, out: Path, inputs, scratch: Path) -> list[str]:
    args, _, _ = WRITERS[writer]
    fill = {k: str(v) for k, v in inputs.items()} | {"scratch": str(scratch)}
    return [str(out) if a == "OUT" else a.format(**fill) for a in args]


def _invoke(args):
    old = os.umask(UMASK)
    try:
        return CliRunner().invoke(main, args)
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory):
    """What each writer puts in a plain new file: the content every other kind of path must receive."""
    d = tmp_path_factory.mktemp("reference")
    out = {}
    for writer, (_, suffix, canon) in WRITERS.items():
        path = d / f"out{suffix}"
        r = _invoke(_args(writer, path, inputs, d))
        assert r.exit_code == 0, (writer, r.output)
        out[writer] = canon(path.read_bytes(), d)
        path.unlink()
    return out


class Collector(threading.Thread):
    """Reads everything written into a FIFO, or into connections to a listening Unix socket."""

    def __init__(self, path: Path, kind: str):
        super().__init__(daemon=True)
        self.path, self.kind, self.data = path, kind, b""
        if kind == "socket":
            self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.server.bind(str(path))
            self.server.listen(4)
        else:
            os.mkfifo(path)
        self.start()

    def run(self):
        if self.kind == "socket":
            conn, _ = self.server.accept()
            with conn:
                while chunk := conn.recv(1 << 16):
                    self.data += chunk
        else:
            with open(self.path, "rb") as f:
                self.data = f.read()

    def finish(self) -> bytes:
        if self.is_alive() and self.kind == "fifo":  # the command never opened it: let the reader go
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
        self.join(timeout=60)
        if self.kind == "socket":
            self.server.close()
        return self.data


def in_place(writer: str, kind: str) -> bool:
    """A replaced file is a new file (0666 less the umask); the curve, written in place as it grows,
    keeps an existing file and its mode, as the shell's `>` does."""
    return writer == "train --curve" and kind in ("regular file", "symlink to a file")


KINDS = ["new file", "regular file", "symlink to a file", "dangling symlink", "fifo", "socket", "null device",
         "full device", "directory"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_output_of_every_writer(tmp_path, inputs, reference, writer, kind):
    _, suffix, canon = WRITERS[writer]
    out = tmp_path / f"out{suffix}"
    target = tmp_path / f"target{suffix}"  # what a link points to
    old = b"old content\n"
    collector = None
    if kind in ("null device", "full device"):
        if not _can_mknod(tmp_path):
            pytest.skip("cannot make device nodes here (not root)")
        minor = NULL_MINOR if kind == "null device" else FULL_MINOR
        os.mknod(out, 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, minor))
    elif kind == "regular file":
        out.write_bytes(old)
        os.chmod(out, 0o600)
    elif kind == "symlink to a file":
        target.write_bytes(old)
        os.chmod(target, 0o600)
        out.symlink_to(target.name)
    elif kind == "dangling symlink":
        out.symlink_to(target.name)
    elif kind in ("fifo", "socket"):
        collector = Collector(out, kind)
    elif kind == "directory":
        out.mkdir()
    before = os.lstat(out) if os.path.lexists(out) else None

    r = _invoke(_args(writer, out, inputs, tmp_path))
    received = collector.finish() if collector else None

    if kind == "full device":
        assert r.exit_code == 1
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"budgetlearn: error: {out}: cannot write")
        assert r.stderr.rstrip().endswith("No space left on device"), r.stderr
    elif kind == "directory":  # refused as a usage error by the option's type, before anything runs
        assert r.exit_code == 2
        assert f"'{out}' is a directory" in r.stderr
        assert out.is_dir() and not any(out.iterdir())
    else:
        assert r.exit_code == 0, r.output
    # nothing but the output itself: no temporary file left beside it, no node replaced
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert left == [], left
    if before is not None:
        after = os.lstat(out)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode), "the node was replaced"
        if stat.S_ISCHR(before.st_mode):
            assert after.st_rdev == before.st_rdev
    if kind in ("new file", "regular file"):
        assert canon(out.read_bytes(), tmp_path) == reference[writer]
        assert stat.S_IMODE(os.stat(out).st_mode) == (0o600 if in_place(writer, kind) else 0o666 & ~UMASK)
    elif kind in ("symlink to a file", "dangling symlink"):
        assert out.is_symlink() and os.readlink(out) == target.name
        assert canon(target.read_bytes(), tmp_path) == reference[writer]
        assert stat.S_IMODE(os.stat(target).st_mode) == (0o600 if in_place(writer, kind) else 0o666 & ~UMASK)
    elif kind in ("fifo", "socket"):
        assert canon(received, tmp_path) == reference[writer]


def test_checkpoints_need_a_regular_file(tmp_path, inputs):
    """A checkpoint is a file to resume from, rewritten many times: a FIFO or device cannot be one."""
    os.mkfifo(tmp_path / "fifo")
    r = _invoke(["train", "-a", "perceptron", "--checkpoint-every", "100", str(inputs["data"]),
                 "-o", str(tmp_path / "fifo")])
    assert r.exit_code == 2
    assert "--checkpoint-every needs a regular file" in r.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def test_a_file_name_with_a_newline_stays_one_line(tmp_path, inputs):
    odd = tmp_path / "no such\ndirectory" / "p.txt"
    r = _invoke(["predict", str(inputs["model"]), str(inputs["data"]), "-o", str(odd)])
    assert r.exit_code == 1
    assert r.stderr == (f"budgetlearn: error: {tmp_path}/no such\\ndirectory/p.txt: cannot write the predictions: "
                        "No such file or directory\n")


def test_plot_refuses_an_unknown_extension_in_one_line(tmp_path, inputs):
    r = _invoke(["plot", str(inputs["curve"]), "-o", str(tmp_path / "x.unknownext")])
    assert r.exit_code == 1
    assert r.stderr.count("\n") == 1
    assert "cannot tell the image format from the extension .unknownext; use one of" in r.stderr
    assert not (tmp_path / "x.unknownext").exists()


def test_a_curve_write_error_names_the_curve_not_the_model(tmp_path, inputs):
    if not _can_mknod(tmp_path):
        pytest.skip("cannot make device nodes here (not root)")
    full = tmp_path / "full.csv"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, FULL_MINOR))
    model = tmp_path / "m.model"
    model.write_bytes(b"old")
    r = _invoke(["train", "-a", "perceptron", "-q", "--curve", str(full), str(inputs["data"]), "-o", str(model)])
    assert r.exit_code == 1
    assert r.stderr == f"budgetlearn: error: {full}: cannot write the curve: No space left on device\n"
    assert model.read_bytes() == b"old"


# ---- standard output, in real processes -------------------------------------------------------

def _run(args, stdout, **kw):
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run([sys.executable, "-m", "budgetcli.cli", *args], cwd=PROJECT_ROOT, env=env,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=300, **kw)


@pytest.mark.parametrize("writer", ["predict -o", "export -o", "generate -o"])
@pytest.mark.parametrize("how", ["-", "link to /proc/self/fd/1"])
def test_standard_output_by_name(tmp_path, inputs, reference, writer, how):
    """`-o -` and a path that is this process's stdout (what /dev/stdout is) write to the stream;
    the link stays a link (today's bug: it was replaced by a regular file and nothing was printed)."""
    out = "-"
    if how != "-":
        out = tmp_path / "stdout"
        out.symlink_to("/proc/self/fd/1")
    sink = tmp_path / "captured"
    with open(sink, "wb") as f:
        p = _run(_args(writer, out, inputs, tmp_path), f)
    assert p.returncode == 0, p.stderr
    assert sink.read_bytes() == reference[writer]
    if how != "-":
        assert os.readlink(out) == "/proc/self/fd/1"


# every subcommand, with what it prints on stdout
STDOUT_COMMANDS = {
    "--help": ["--help"],
    "--version": ["--version"],
    "train --help": ["train", "--help"],
    "train --json": ["train", "-a", "perceptron", "--json", "-q", "{data}", "-o", "{scratch}/x.model"],
    "online-to-batch --json": ["online-to-batch", "-a", "perceptron", "--json", "-q", "{data}", "-o",
                               "{scratch}/x.model"],
    "predict": ["predict", "{model}", "{data}"],
    "eval": ["eval", "{model}", "{data}"],
    "eval --json": ["eval", "--json", "{model}", "{data}"],
    "info": ["info", "{model}"],
    "info --json": ["info", "--json", "{model}"],
    "export -o -": ["export", "{model}", "-o", "-"],
    "algorithms": ["algorithms"],
    "generate": ["generate", "projectron-gaussians", "-n", "100"],
    "tune": ["tune", "-a", "perceptron", "--permutations", "0", "{data}"],
    "tune --json": ["tune", "-a", "perceptron", "--permutations", "0", "--json", "{data}"],
}


def _stdout_args(name, inputs, scratch):
    fill = {k: str(v) for k, v in inputs.items()} | {"scratch": str(scratch)}
    return [a.format(**fill) for a in STDOUT_COMMANDS[name]]


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_stdout_on_a_full_device(tmp_path, inputs, name):
    if not _can_mknod(tmp_path):
        pytest.skip("cannot make device nodes here (not root)")
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, FULL_MINOR))
    with open(full, "wb") as f:
        p = _run(_stdout_args(name, inputs, tmp_path), f)
    _assert_one_stdout_error(p, "No space left on device")


def _assert_one_stdout_error(p, reason: str):
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert err.count("\n") == 1, err
    # "cannot write: …", or "cannot write the predictions: …" where the command names what it writes
    assert err.startswith("budgetlearn: error: standard output: cannot write") and err.endswith(f": {reason}\n"), err


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_stdout_on_a_closed_pipe(tmp_path, inputs, name):
    """`| head -1` whose reader is already gone: the command stops quietly with exit 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        p = _run(_stdout_args(name, inputs, tmp_path), write_end)
    finally:
        os.close(write_end)
    assert p.returncode == 0, p.stderr
    assert p.stderr == b""


@pytest.mark.parametrize("name", ["algorithms", "info", "eval --json", "predict"])
def test_stdout_io_error(tmp_path, inputs, name):
    """A terminal whose other side is gone answers every write with EIO."""
    controller, terminal = os.openpty()
    os.close(controller)
    try:
        p = _run(_stdout_args(name, inputs, tmp_path), terminal)
    finally:
        os.close(terminal)
    _assert_one_stdout_error(p, "Input/output error")
