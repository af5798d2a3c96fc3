"""Every output path of every subcommand, whatever is at the path (issue: production-hard, outputs).

A regular file is replaced atomically; a character device, FIFO or socket is written directly and
stays what it was; a symbolic link is followed and its target replaced (the link stays a link); a
link that loops or dangles, a directory and a name ending in `/` that is no directory are refused,
as `cp` refuses them.  New files get 0666 less the umask, whatever the length of their name.  The
device nodes, FIFOs and sockets are made under the test's temporary directory, never taken from the
real /dev.

The standard-output cases (`-`, a link to /proc/self/fd/1, a full device, a closed pipe, an I/O
error on a terminal) run real processes: what happens to fd 1 cannot be seen in process.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.base import modelfile
from budgetcli.entry import main

from . import doctables
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
    r = CliRunner().invoke(
        main,
        [
            "train",
            "-a",
            "perceptron",
            "-q",
            "--curve",
            str(d / "c.csv"),
            "--curve-every",
            "50",
            str(data),
            "-o",
            str(model),
        ],
    )
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
        name.encode() + arrays[name].tobytes() for name in sorted(arrays)
    )


def _without_columns(raw: bytes, *names) -> bytes:
    rows = list(csv.reader(io.StringIO(raw.decode())))
    keep = [j for j, n in enumerate(rows[0]) if n not in names]
    return "\n".join(",".join(r[j] for j in keep) for r in rows).encode()


def _exact(raw: bytes, where: Path) -> bytes:
    return raw


# name -> (arguments, OUT standing for the output path; file name suffix; canonical form of the bytes
# written; WHAT the error message says is written)
WRITERS = {
    "train -o": (["train", "-a", "perceptron", "-q", "{data}", "-o", "OUT"], "", _model_canon, "the model"),
    "online-to-batch -o": (
        ["online-to-batch", "-a", "perceptron", "-q", "{data}", "-o", "OUT"],
        "",
        _model_canon,
        "the model",
    ),
    "train --curve": (
        [
            "train",
            "-a",
            "perceptron",
            "-q",
            "--curve-every",
            "50",
            "{data}",
            "-o",
            "{scratch}/x.model",
            "--curve",
            "OUT",
        ],
        ".csv",
        lambda raw, where: _without_columns(raw, "seconds"),
        "the curve",
    ),
    "predict -o": (["predict", "{model}", "{data}", "-o", "OUT"], "", _exact, "the predictions"),
    "export -o": (["export", "{model}", "-o", "OUT"], "", _exact, "the LIBSVM model"),
    "import -o": (["import", "{libsvm}", "-o", "OUT"], "", _model_canon, "the model"),
    "tune --csv": (
        ["tune", "-a", "perceptron", "--permutations", "0", "{data}", "--json", "--csv", "OUT"],
        ".csv",
        lambda raw, where: _without_columns(raw, "seconds_mean", "seconds_std"),
        "the table",
    ),
    "tune --save-best": (
        ["tune", "-a", "perceptron", "--permutations", "0", "{data}", "--json", "--save-best", "OUT"],
        "",
        _model_canon,
        "the model",
    ),
    "generate -o": (["generate", "projectron-gaussians", "-n", "200", "-o", "OUT"], "", _exact, "the data"),
    "calibrate -o": (["calibrate", "{model}", "{data}", "-o", "OUT"], "", _model_canon, "the model"),
    "plot -o": (["plot", "{curve}", "-o", "OUT"], ".png", _exact, "the image"),
}


def _args(writer: str, out: Path, inputs, scratch: Path) -> list[str]:
    args = WRITERS[writer][0]
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
    for writer, (_, suffix, canon, _) in WRITERS.items():
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
        if kind == "Unix stream socket":
            self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.server.bind(str(path))
            self.server.listen(4)
        else:
            os.mkfifo(path)
        self.start()

    def run(self):
        if self.kind == "Unix stream socket":
            conn, _ = self.server.accept()
            with conn:
                while chunk := conn.recv(1 << 16):
                    self.data += chunk
        else:
            with open(self.path, "rb") as f:
                self.data = f.read()

    def finish(self) -> bytes:
        self.join(timeout=10)  # the command has closed its end: the reader is taking the last bytes
        if self.is_alive() and self.kind == "FIFO":  # the command never opened it: let the reader go
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self.join(timeout=60)
        if self.kind == "Unix stream socket":
            self.server.close()
        return self.data


@dataclass(frozen=True)
class Kind:
    """What can be at an output path, what becomes of it, and what the command says (OUT: the path,
    WHAT: what the command writes, e.g. "the model"); the rows of the table in docs/RELIABILITY.md."""

    name: str
    outcome: str
    exit: int = 0
    stderr: str = ""


KINDS = {
    k.name: k
    for k in [
        Kind("nothing (a new file)", "created whole when the command succeeds; mode 0666 less the umask"),
        Kind(
            "a regular file",
            "replaced atomically (temporary file beside it, fsync, rename): old or new content, "
            "never a mix; the new file keeps the old one's mode, and its owner and group where "
            "permitted (as `cp` onto an existing file and `sed -i` keep them)",
        ),
        Kind(
            "a symbolic link to a regular file",
            "followed: the file it points to is replaced as above; the link stays a link",
        ),
        Kind(
            "a name of 255 bytes (NAME_MAX) that does not exist yet",
            "created whole, as for any new file (its temporary name is shortened to fit NAME_MAX)",
        ),
        Kind(
            "a dangling symbolic link",
            "refused, as `cp` refuses it: the link stays and nothing is created where it points",
            1,
            "budgetlearn: error: OUT: cannot write WHAT: not writing through dangling symlink",
        ),
        Kind(
            "a symbolic link that loops",
            "refused, as `cp` refuses it; the link stays",
            1,
            "budgetlearn: error: OUT: cannot write WHAT: Too many levels of symbolic links",
        ),
        Kind(
            "a regular file, named with a trailing / (OUT/)",
            "refused, as `cp` refuses it (never written as the file without the slash); the file stays",
            1,
            "budgetlearn: error: OUT/: cannot write WHAT: Not a directory",
        ),
        Kind("a FIFO", "written directly (a model as a zip stream); stays a FIFO"),
        Kind("a Unix stream socket", "connected to and written directly; stays a socket"),
        Kind("a character device (a null device)", "written directly; stays the device"),
        Kind(
            "a character device that is full",
            "nothing replaced; the device stays",
            1,
            "budgetlearn: error: OUT: cannot write WHAT: No space left on device",
        ),
        Kind(
            "a directory",
            "refused before anything runs (a usage error)",
            2,
            "budgetlearn: error: Invalid value for ...: File 'OUT' is a directory. (see 'budgetlearn COMMAND --help')",
        ),
    ]
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_output_of_every_writer(tmp_path, inputs, reference, writer, kind):
    _, suffix, canon, what = WRITERS[writer]
    expected = KINDS[kind]
    kind = kind.split(" (")[0].removeprefix("a ").removeprefix("an ")
    out = tmp_path / f"out{suffix}"
    target = tmp_path / f"target{suffix}"  # what a link points to
    given = str(out)  # the path as the command gets it
    old = b"old content\n"
    collector = None
    if kind.startswith("character device"):
        if not _can_mknod(tmp_path):
            pytest.skip("cannot make device nodes here (not root)")
        minor = FULL_MINOR if kind.endswith("full") else NULL_MINOR
        os.mknod(out, 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, minor))
    elif kind == "regular file":
        out.write_bytes(old)
        os.chmod(out, 0o600)
    elif kind == "symbolic link to a regular file":
        target.write_bytes(old)
        os.chmod(target, 0o600)
        out.symlink_to(target.name)
    elif kind == "dangling symbolic link":
        out.symlink_to(target.name)
    elif kind == "symbolic link that loops":
        out.symlink_to(out.name)
    elif kind.startswith("regular file, named with a trailing /"):
        out.write_bytes(old)
        given += "/"
    elif kind.startswith("name of 255 bytes"):
        out = tmp_path / ("n" * (255 - len(suffix)) + suffix)
        given = str(out)
    elif kind in ("FIFO", "Unix stream socket"):
        collector = Collector(out, kind)
    elif kind == "directory":
        out.mkdir()
    before = os.lstat(out) if os.path.lexists(out) else None

    r = _invoke(_args(writer, given, inputs, tmp_path))
    received = collector.finish() if collector else None

    assert r.exit_code == expected.exit, r.output
    message = expected.stderr.replace("OUT", str(out)).replace("WHAT", what)
    if kind == "directory":  # a usage error naming the option: one line
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(message.split("...")[0])
        assert message.split("...")[1].split("(see")[0].strip() in r.stderr
        assert out.is_dir() and not any(out.iterdir())
    elif message:
        assert r.stderr == message + "\n"
    else:
        assert "error" not in r.stderr, r.stderr  # (tune notes its best model on stderr)
    # nothing but the output itself: no temporary file left beside it, no node replaced
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert left == [], left
    if before is not None:
        after = os.lstat(out)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode), "the node was replaced"
        if stat.S_ISCHR(before.st_mode):
            assert after.st_rdev == before.st_rdev
    # a new file: 0666 less the umask; a replaced one keeps its 0600 (0640 would be the umask's)
    if kind in ("nothing", "regular file") or kind.startswith("name of 255 bytes"):
        assert canon(out.read_bytes(), tmp_path) == reference[writer]
        assert stat.S_IMODE(os.stat(out).st_mode) == (0o600 if kind == "regular file" else 0o666 & ~UMASK)
    elif kind == "symbolic link to a regular file":
        assert out.is_symlink() and os.readlink(out) == target.name
        assert canon(target.read_bytes(), tmp_path) == reference[writer]
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    elif kind in ("dangling symbolic link", "symbolic link that loops"):
        assert out.is_symlink() and os.readlink(out) == (target if kind.startswith("dangling") else out).name
        assert not os.path.lexists(target)
    elif kind.startswith("regular file, named with a trailing /"):
        assert out.read_bytes() == old and sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    elif kind in ("FIFO", "Unix stream socket"):
        assert canon(received, tmp_path) == reference[writer]


def test_checkpoints_need_a_regular_file(tmp_path, inputs):
    """A checkpoint is a file to resume from, rewritten many times: a FIFO or device cannot be one."""
    os.mkfifo(tmp_path / "fifo")
    r = _invoke(
        ["train", "-a", "perceptron", "--checkpoint-every", "100", str(inputs["data"]), "-o", str(tmp_path / "fifo")]
    )
    assert r.exit_code == 2
    assert "--checkpoint-every needs a regular file" in r.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def test_a_file_name_with_a_newline_stays_one_line(tmp_path, inputs):
    odd = tmp_path / "no such\ndirectory" / "p.txt"
    r = _invoke(["predict", str(inputs["model"]), str(inputs["data"]), "-o", str(odd)])
    assert r.exit_code == 1
    assert r.stderr == (
        f"budgetlearn: error: {tmp_path}/no such\\ndirectory/p.txt: cannot write the predictions: "
        "No such file or directory\n"
    )


@pytest.mark.parametrize("writer", ["train -o", "predict -o", "generate -o"])
def test_an_empty_output_path_is_no_such_file(tmp_path, inputs, writer):
    """`-o ''` named the working directory ("cannot write: Is a directory"); it is no file at all."""
    r = _invoke(_args(writer, "", inputs, tmp_path))
    assert (r.exit_code, r.stderr) == (
        1,
        f"budgetlearn: error: : cannot write {WRITERS[writer][3]}: No such file or directory\n",
    )


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
    return subprocess.run(
        [sys.executable, "-m", "budgetcli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=300,
        **kw,
    )


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


# every subcommand, with what it prints on stdout, and what its error names ("" : the output)
STDOUT_COMMANDS = {
    "--help": (["--help"], ""),
    "--version": (["--version"], ""),
    "train --help": (["train", "--help"], ""),
    "train --json": (["train", "-a", "perceptron", "--json", "-q", "{data}", "-o", "{scratch}/x.model"], ""),
    "online-to-batch --json": (
        ["online-to-batch", "-a", "perceptron", "--json", "-q", "{data}", "-o", "{scratch}/x.model"],
        "",
    ),
    "predict": (["predict", "{model}", "{data}"], "the predictions"),
    "eval": (["eval", "{model}", "{data}"], ""),
    "eval --json": (["eval", "--json", "{model}", "{data}"], ""),
    "info": (["info", "{model}"], ""),
    "info --json": (["info", "--json", "{model}"], ""),
    "export -o -": (["export", "{model}", "-o", "-"], "the LIBSVM model"),
    "algorithms": (["algorithms"], ""),
    "generate": (["generate", "projectron-gaussians", "-n", "100"], "the data"),
    "tune": (["tune", "-a", "perceptron", "--permutations", "0", "{data}"], ""),
    "tune --json": (["tune", "-a", "perceptron", "--permutations", "0", "--json", "{data}"], ""),
}

STDOUT_KINDS = {
    k.name: k
    for k in [
        Kind(
            "a full device",
            "the command stops",
            1,
            "budgetlearn: error: standard output: cannot write[ WHAT]: No space left on device",
        ),
        Kind("a pipe whose reader is gone (`| head -1`)", "the command stops quietly, as a pipeline expects"),
        Kind(
            "an I/O error (a terminal whose other side is gone)",
            "the command stops",
            1,
            "budgetlearn: error: standard output: cannot write[ WHAT]: Input/output error",
        ),
    ]
}


def _stdout_args(name, inputs, scratch):
    fill = {k: str(v) for k, v in inputs.items()} | {"scratch": str(scratch)}
    return [a.format(**fill) for a in STDOUT_COMMANDS[name][0]]


def _expected_stderr(kind: str, name: str) -> bytes:
    what = STDOUT_COMMANDS[name][1]
    message = STDOUT_KINDS[kind].stderr.replace("[ WHAT]", f" {what}" if what else "")
    return (message + "\n").encode() if message else b""


@contextlib.contextmanager
def _stdout_that_is(kind: str, tmp_path: Path):
    """A file descriptor or file for the child's stdout, as STDOUT_KINDS names it."""
    if kind == "a full device":
        if not _can_mknod(tmp_path):
            pytest.skip("cannot make device nodes here (not root)")
        os.mknod(tmp_path / "full", 0o666 | stat.S_IFCHR, os.makedev(MEM_MAJOR, FULL_MINOR))
        with open(tmp_path / "full", "wb") as f:
            yield f
        return
    if kind.startswith("a pipe"):
        read_end, end = os.pipe()
        os.close(read_end)  # the reader is gone before the first write
    else:
        controller, end = os.openpty()
        os.close(controller)  # a terminal whose other side is gone answers every write with EIO
    try:
        yield end
    finally:
        os.close(end)


@pytest.mark.parametrize("kind", list(STDOUT_KINDS))
@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_every_subcommand_on_a_stdout_that_fails(tmp_path, inputs, name, kind):
    with _stdout_that_is(kind, tmp_path) as stdout:
        p = _run(_stdout_args(name, inputs, tmp_path), stdout)
    assert (p.returncode, p.stderr) == (STDOUT_KINDS[kind].exit, _expected_stderr(kind, name))


# ---- the tables of docs/RELIABILITY.md -------------------------------------------------------------

DOC = PROJECT_ROOT / "docs" / "RELIABILITY.md"
BEGIN, END = "<!-- tables generated from tests/test_outputs.py: begin -->", "<!-- end of the output tables -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_tables() -> str:
    rows = [
        "Every output option: " + ", ".join(f"`{w}`" for w in sorted(WRITERS)) + ".",
        "",
        "| what is at the path | what happens | exit | stderr (OUT: the path; WHAT: e.g. `the model`) |",
        "|---|---|---:|---|",
    ]
    rows += [
        f"| {_cell(k.name)} | {_cell(k.outcome)} | {k.exit} | {f'`{_cell(k.stderr)}`' if k.stderr else ''} |"
        for k in KINDS.values()
    ]
    rows += [
        "",
        "Standard output, for every subcommand ("
        + ", ".join(f"`{c}`" for c in sorted(STDOUT_COMMANDS))
        + "), when it is:",
        "",
        "| standard output is | what happens | exit | stderr (`[ WHAT]`: what predict, export and generate name) |",
        "|---|---|---:|---|",
    ]
    rows += [
        f"| {_cell(k.name)} | {_cell(k.outcome)} | {k.exit} | {f'`{_cell(k.stderr)}`' if k.stderr else ''} |"
        for k in STDOUT_KINDS.values()
    ]
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_tables(), "tests.test_outputs")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_tables())
