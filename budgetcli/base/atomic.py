"""Where outputs go: regular files appear whole or not at all; nothing else is ever replaced.

`output_file(path)` gives a file object to write to, and decides by what is at `path`:

- `-`, or a path that is this process's own standard output or error (`/dev/stdout`,
  `/proc/self/fd/1`, a file the shell redirected stdout to): written through that stream, as `-`.
- A character or block device, a FIFO or a socket (a listening Unix stream socket is connected to):
  written directly.  The node is never replaced: `-o /dev/null` stays a device, a FIFO stays a FIFO.
- A directory: refused (`IsADirectoryError`).
- A regular file, or no file yet: the output goes to a temporary file in the target's directory;
  only when the `with` block ends without an exception is it flushed, fsynced and renamed over the
  target (`os.replace`, atomic on POSIX).  On any exception (a data error half-way through,
  Ctrl-C, a full disk) the temporary file is removed and an existing target keeps its old content,
  so a cron job never leaves half a predictions file or a partial model behind.
- A symbolic link is followed: what it points to is judged by the rules above, and a regular
  file is replaced atomically where it lives, so the link stays a link, as `cp` and `sed -i
  --follow-symlinks` treat it.  A link that loops or dangles is refused as `cp` refuses it ("Too
  many levels of symbolic links", "not writing through dangling symlink"), never replaced by a
  regular file: a dangling link names a file wherever it once pointed, which nobody may expect
  to be created.
- A path that names a directory (it ends in `/`, `.` or `..`) but is none is refused ("Not a
  directory", as `cp FILE x.model/` says), rather than writing `x.model`; an empty path is refused
  as `open` refuses it.

New files get the permissions a plain `open()` gives (0666 less the umask), whichever way they
were written.  A replaced regular file keeps its mode, and its owner and group where this user may
set them, as `cp` onto an existing file and `sed -i` keep them.

A file a run read and writes back (`train --resume M … -o M`, `calibrate M … -o M`, a model the
Python API loaded and saves to its path) is replaced only if it is still the file that was read
(`FileState`): two runs that continue one model at once would otherwise both succeed, the one
that ends last overwriting the other's data.  The check and the rename are made under a lock on
the file (`flock`), so that of two such runs ending together one writes and the other is refused
(`ChangedSinceRead`), its model not written: nothing is lost silently.

No command writes over one of its own inputs: `refuse_same_files` compares the inputs' and the
outputs' device and inode numbers (so another spelling of the path, a hard link or a symbolic link
are caught) before anything is opened for writing.

SIGTERM during training is turned into the same clean stop as Ctrl-C (signals.py).  `kill -9` cannot be
caught: it may leave a `.NAME.*.tmp` file beside the target, never a partial target
(NAME is the target's name, shortened when needed so that the temporary name fits the file system's
NAME_MAX: any name `touch` can create can be written).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import tempfile
from typing import IO, Iterator


def current_umask() -> int:
    # There is no read-only umask query; set and immediately restore it.
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_directory(directory: str) -> None:
    """Make the rename durable; best effort (Windows cannot open directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _standard_stream(st: os.stat_result):
    """sys.stdout or sys.stderr when `st` is the file behind it (fd 1 or 2), else None."""
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            return stream
    return None


def refusal(path: str) -> OSError | None:
    """The error an output at `path` is refused with before anything is written (as `cp` refuses
    it; see the module docstring), or None."""
    path = os.fspath(path)
    if path == "-":
        return None
    if path == "":
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    try:
        st = os.stat(path)  # follows symbolic links
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
        if os.path.islink(path):  # there, but what it points to is not
            return FileNotFoundError(errno.ENOENT, "not writing through dangling symlink", path)
        st = None
    names_directory = path.endswith(os.sep) or os.path.basename(path) in (".", "..")
    if names_directory and (st is None or not stat.S_ISDIR(st.st_mode)):
        return NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    return None


def output_kind(path: str) -> str:
    """How `output_file` writes `path`: "stdout", "stderr", "direct", "directory" or "replace"
    (`refusal` says first whether it may be written at all)."""
    if path == "-":
        return "stdout"
    try:
        st = os.stat(path)  # follows symbolic links
    except OSError:  # nothing there yet (or a parent that is no directory: creating the file will say why)
        return "replace"
    stream = _standard_stream(st)
    if stream is not None:
        return "stdout" if stream is sys.stdout else "stderr"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    return "replace" if stat.S_ISREG(st.st_mode) else "direct"


def writable_problem(path: str) -> str | None:
    """Why `path` cannot be written, checked before a long run; None when it looks writable."""
    refused = refusal(path)
    if refused is not None:
        return refused.strerror
    kind = output_kind(path)
    if kind == "directory":
        return "is a directory"
    if kind == "direct":
        return None if os.access(path, os.W_OK) else "not writable"
    if kind == "replace":
        directory = os.path.dirname(os.path.realpath(path))
        if not os.access(directory, os.W_OK):
            return f"directory {directory} is missing or not writable"
    return None


class ChangedSinceRead(OSError):
    """The file a run read and would write back was replaced or changed since (another run wrote it)."""


def _state(st: os.stat_result) -> tuple:
    # not the ctime: a hard link or a chmod changes it, not the content
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class FileState:
    """What a file was when a run read it (device, inode, size, modification time), to write it back
    only if it is still that file (`output_file(..., expect=)`); each such write makes the state the
    new file's, so that a run's later writes (checkpoints) expect its own."""

    def __init__(self, path):
        self.path = os.path.realpath(path)
        self.state = _state(os.stat(path))

    def names(self, path) -> bool:
        """True when `path` is the path this state was taken at (however spelled, through links)."""
        return os.path.realpath(path) == self.path


def _replace_unchanged(tmp_path: str, target: str, expect: FileState) -> None:
    """os.replace(tmp_path, target) if `target` is still the file `expect` saw, else ChangedSinceRead;
    checked and renamed under an exclusive lock on the target, which every such writer takes."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, PermissionError):  # removed since (nothing there to lose), or not readable
        fd = None
    try:
        if fd is not None:
            _lock(fd)
        if os.path.lexists(target) and (
            _state(os.stat(target)) != expect.state or (fd is not None and _state(os.fstat(fd)) != expect.state)
        ):
            raise ChangedSinceRead(
                errno.EBUSY,
                "it changed since this run read it (another run wrote it), so it is not overwritten: "
                "this run's data is not in it; continue from it again",
                target,
            )
        new = _state(os.stat(tmp_path))
        os.replace(tmp_path, target)
        expect.state = new
    finally:
        if fd is not None:
            os.close(fd)  # and the lock with it


def _lock(fd: int) -> None:
    """An exclusive flock on fd, waiting for another writer's check and rename (a moment); none where
    the file system has no locks (the check is still made)."""
    try:
        import fcntl
    except ImportError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass


@contextlib.contextmanager
def output_file(path: str, binary: bool = False, expect: FileState | None = None) -> Iterator[IO]:
    """A file object for the output at `path`, written as the module docstring says (text: UTF-8
    with "\\n" line ends; `binary`: bytes).  Failures raise OSError, with the path as its filename
    when it concerns the path.  When the block raises, what was buffered is dropped quietly, so the
    block's own exception is the one that comes out.  `expect`: the state of the file at `path`
    when it was read; a regular file there is replaced only if it is still that file
    (ChangedSinceRead otherwise)."""
    path = os.fspath(path)
    refused = refusal(path)
    if refused is not None:
        raise refused
    kind = output_kind(path)
    if kind in ("stdout", "stderr"):
        stream = sys.stdout if kind == "stdout" else sys.stderr
        stream.flush()
        out = stream.buffer if binary else stream
        yield out
        out.flush()
        return
    if kind == "directory":
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if kind == "direct":
        with _open_direct(path) as raw:
            yield from _written(raw, binary)
        return
    target = os.path.realpath(path)  # a link stays a link: what it points to is replaced
    directory, name = os.path.split(target)
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=_temporary_prefix(directory, name), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw:
            yield from _written(raw, binary)
            os.fsync(raw.fileno())
        _take_mode(tmp_path, target)
        if expect is None:
            os.replace(tmp_path, target)
        else:
            _replace_unchanged(tmp_path, target, expect)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path)
        raise
    _fsync_directory(directory)


# what mkstemp adds to the prefix: 8 random characters, then the suffix ".tmp"
_TEMPORARY_TAIL = 8 + len(".tmp")


def _temporary_prefix(directory: str, name: str) -> str:
    """ ".NAME." for the temporary file beside `name`, NAME cut (in bytes, as the file system counts
    them) so that the whole temporary name fits the directory's NAME_MAX."""
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        name_max = 255
    room = max(1, name_max - _TEMPORARY_TAIL - 2)  # the two dots
    return "." + os.fsdecode(os.fsencode(name)[:room]) + "."


def _take_mode(tmp_path: str, target: str) -> None:
    """Give the temporary file what the target would have had written in place: the mode, owner and
    group of the file it replaces (the owner and group where this user may set them), or for a new
    file the permissions a plain open() gives (mkstemp creates 0600 files)."""
    try:
        old = os.stat(target)
    except OSError:
        os.chmod(tmp_path, 0o666 & ~current_umask())
        return
    for owner in ((old.st_uid, old.st_gid), (-1, old.st_gid)):  # a user may set a group of theirs only
        try:
            os.chown(tmp_path, *owner)
            break
        except OSError:
            continue
    os.chmod(tmp_path, stat.S_IMODE(old.st_mode))  # after chown, which may clear set-id bits


class SameFileError(ValueError):
    """An output names one of the command's inputs (or another of its outputs)."""


def _identity(path: str, stream_fd: int) -> tuple | None:
    """(device, inode) of the regular file `path` names ('-': the file behind `stream_fd`), else None."""
    try:
        st = os.fstat(stream_fd) if path == "-" else os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def refuse_same_files(inputs, outputs, may_replace=()) -> None:
    """SameFileError when an output is one of the inputs or another output, however each is named.

    `inputs` and `outputs` are (role, path) pairs (a path None: not given); '-' is standard input or
    standard output.  Regular files are compared by device and inode, so another spelling of the
    path, a hard link or a symbolic link is the same file; two outputs that do not exist yet are the
    same when their real paths are.  Devices, FIFOs and sockets are streams, never replaced, so they
    are never refused.  `may_replace` lists the (input role, output role) pairs where writing over
    the input is the point (`train --resume M -o M` continues M)."""
    seen = []  # (role, path, identity) of every input, then of each output checked
    for role, path in inputs:
        key = None if path is None else _identity(path, 0)
        if key is not None:
            seen.append((role, "standard input" if path == "-" else path, key))
    for role, path in outputs:
        if path is None:
            continue
        key = _identity(path, 1)
        if key is None and path != "-" and not os.path.exists(path):
            key = os.path.realpath(path)  # not made yet: another output may still name it
        if key is None:
            continue
        shown = "standard output" if path == "-" else path
        for other_role, other_path, other_key in seen:
            if other_key == key and (other_role, role) not in may_replace:
                raise SameFileError(
                    f"{shown} and {other_path} are the same file: {role} would write over {other_role}; nothing written"
                )
        seen.append((role, shown, key))


def _written(raw, binary: bool):
    """Yield `raw` (or a UTF-8 text layer over it) to the caller's block; flush it when the block
    ends, or close it quietly when the block raises."""
    f = raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
    try:
        yield f
        f.flush()
    except BaseException:
        with contextlib.suppress(OSError, ValueError):
            f.close()  # also closes raw, after trying (and failing) to write what was buffered
        raise
    if not binary:
        f.detach()  # leave raw to its owner


@contextlib.contextmanager
def _open_direct(path: str) -> Iterator[IO[bytes]]:
    """A device or FIFO opened for writing (never created: O_CREAT would make a regular file if
    the node vanished meanwhile), or a Unix socket connected to."""
    if stat.S_ISSOCK(os.stat(path).st_mode):
        import socket  # here: every process writes files, few write to a socket (its import is ~2 ms)

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.connect(path)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, path) from None
            with sock.makefile("wb") as raw:
                yield raw
        finally:
            sock.close()
        return
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    with _Stream(io.FileIO(fd, "wb")) as raw:
        yield raw


class _Stream(io.BufferedWriter):
    """A device written as a stream.  /dev/null answers every tell() with 0, which would make the
    zip writer behind model files seek back over what it wrote; told it cannot seek, it writes
    what an unseekable pipe gets (sizes after each member)."""

    def seekable(self):
        return False

    def tell(self):
        raise io.UnsupportedOperation("a device is written as a stream")

    def seek(self, *args):
        raise io.UnsupportedOperation("a device is written as a stream")
