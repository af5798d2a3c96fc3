"""The model file container: one versioned, integrity-checked ``.npz`` file.

On disk a model is a numpy ``.npz`` archive (a zip of ``NAME.npy`` members, as ``np.load`` reads)
holding the caller's arrays under their own names plus one reserved uint8 array
``__header__`` with UTF-8 JSON::

    {"format": "budgetlearn-model", "version": 2, "checksum": "sha256:<hex>",
     "members": {"<array name>": "sha256:<hex>", ...}, "header": {...caller's header...}}

Each array has its own checksum, over its name, dtype string, shape and C-order bytes
(``_member_checksum``), and ``checksum`` covers the canonical JSON of the caller's header and the
sorted list of member checksums, so a file that unzips cleanly but holds altered, missing or extra
arrays is still rejected, and an array the caller does not need (``load(..., skip=...)``) is never
read.  Version 1 files (one checksum over the header and all arrays in sorted name order) still
load; their arrays are all read, as that checksum needs them.

``load`` returns only the caller's header: the container's own keys (format,
version, checksum) are stripped. Files are read with ``allow_pickle=False``, so
loading can never execute code, and are written by ``atomic.output_file``: a regular file is
replaced atomically (temp file in the same directory, fsync, ``os.replace``), so a crash never
leaves a half-written model; a device, FIFO or socket is written directly, never replaced.

Members are stored uncompressed, except one that deflate (level 1) at least halves, such as a
multiclass learner's coefficient matrix (two non-zero classes per support vector): on a 1000x1000
float64 array of Gaussian values (what support vectors and coefficients look like) compression
saves a few per cent of the size but makes saving and loading many times slower, so
compression is tried only where it pays.  A file never inflates to more than MAX_INFLATION / 2
times its size (+ INFLATION_SLACK), half the bound `load` refuses a zip bomb at, so that every file
`save` writes loads.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import stat
import zipfile
import zlib

import numpy as np

from .atomic import output_file
from .npy import NUMERIC_KINDS, Member, member_data, member_header, nbytes

FORMAT_NAME = "budgetlearn-model"
FORMAT_VERSION = 2
_OLDEST_READABLE_VERSION = 1

_HEADER_MEMBER = "__header__"
# np.savez takes the arrays as keyword arguments, so these names would be
# swallowed as its own parameters instead of being stored.
_SAVEZ_PARAMETERS = frozenset({"file", "allow_pickle"})
# Everything reading a damaged archive is known to raise: zipfile raises
# NotImplementedError / RuntimeError when a flipped bit announces an unknown
# compression method or encryption, and a damaged shape in an .npy header can
# make numpy try to allocate an absurd array.
_READ_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,  # a damaged deflated member
    EOFError,
    ValueError,
    OSError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    MemoryError,
)


class HeaderTooLarge(ValueError):
    """`save` refused a header that `load` would refuse."""


class ModelFileError(ValueError):
    """One-line, user-facing reason why a model file cannot be loaded; str(e) names the path.

    e.g. "m.model: not a budgetlearn model file",
    "m.model: truncated or corrupt (checksum mismatch)",
    "m.model: written by format version 7, this build reads versions up to 1; upgrade budgetlearn".
    """


def _error(path, reason: str) -> ModelFileError:
    message = f"{os.fsdecode(path)}: {reason}"
    # Exception details (or an odd file name) must not break the one-line promise.
    return ModelFileError(message.replace("\r", "\\r").replace("\n", "\\n"))


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__  # e.g. a bare EOFError()


def _canonical_json(header: dict) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _digest_array(digest, name: str, array: np.ndarray) -> None:
    # The JSON list is self-delimiting and dtype+shape fix the length of the
    # raw bytes that follow, so the concatenation is unambiguous.
    meta = json.dumps([name, array.dtype.str, list(array.shape)], separators=(",", ":"))
    digest.update(meta.encode("utf-8"))
    digest.update(np.ascontiguousarray(array).tobytes())


def _member_checksum(name: str, array: np.ndarray) -> str:
    digest = hashlib.sha256()
    _digest_array(digest, name, array)
    return "sha256:" + digest.hexdigest()


def _checksum(header_json: bytes, members: dict[str, str]) -> str:
    """Version 2: the header and the member checksums, in sorted name order."""
    digest = hashlib.sha256(header_json)
    digest.update(_canonical_json(dict(sorted(members.items()))))
    return "sha256:" + digest.hexdigest()


def _checksum_v1(header_json: bytes, arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256(header_json)
    for name in sorted(arrays):
        _digest_array(digest, name, arrays[name])
    return "sha256:" + digest.hexdigest()


def _validated_arrays(arrays: dict) -> dict[str, np.ndarray]:
    if not isinstance(arrays, dict):
        raise TypeError(f"arrays must be a dict of name -> numpy array, got {type(arrays).__name__}")
    checked = {}
    for name, value in arrays.items():
        if not isinstance(name, str):
            raise TypeError(f"array names must be strings, got {name!r}")
        # zipfile silently cuts member names at a NUL byte, which would rename the array.
        if not name or "\0" in name:
            raise ValueError(f"array name {name!r} is empty or contains a NUL byte")
        if name == _HEADER_MEMBER or name in _SAVEZ_PARAMETERS:
            raise ValueError(f"array name {name!r} is reserved")
        array = np.asarray(value)
        if array.dtype.kind not in NUMERIC_KINDS or array.dtype.fields is not None:
            raise TypeError(f"array {name!r} has non-numeric dtype {array.dtype}; only numeric arrays can be saved")
        checked[name] = array
    return checked


def save(path, header: dict, arrays: dict[str, np.ndarray], expect=None) -> None:
    """Atomically write ``header`` and ``arrays`` to ``path`` as a model file (``expect``: the
    atomic.FileState of the file read from ``path``, which it must still be).

    Raises TypeError for a non-dict header, a header JSON cannot encode, or a
    non-numeric array; ValueError for an empty, NUL-containing or reserved array
    name or a circular header; OSError if the file cannot be written. On failure
    an existing regular file at ``path`` is left untouched and no temp file remains.
    """
    if not isinstance(header, dict):
        raise TypeError(f"header must be a dict, got {type(header).__name__}")
    arrays = _validated_arrays(arrays)
    header_json = _canonical_json(header)
    members = {name: _member_checksum(name, array) for name, array in arrays.items()}
    container = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "checksum": _checksum(header_json, members),
        "members": members,
        "header": header,
    }
    container_bytes = np.frombuffer(_canonical_json(container), dtype=np.uint8)
    if len(container_bytes) > MAX_HEADER_BYTES:  # `load` would refuse the file
        raise HeaderTooLarge(
            f"its header takes {len(container_bytes):,} bytes, more than the {MAX_HEADER_BYTES:,} a model file may have"
        )

    with output_file(path, binary=True, expect=expect) as f:
        _write_zip(f, {_HEADER_MEMBER: container_bytes, **arrays})


_TRY_DEFLATE_BELOW = 32 << 20  # larger members (a kept K⁻¹: dense doubles) are stored as they are


def _write_zip(f, arrays: dict[str, np.ndarray]) -> None:
    """The .npz archive of `arrays` (header member first), each member stored or deflated (module doc)."""
    members = {}  # name -> (.npy bytes, deflated size or None to store)
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        raw = buffer.getvalue()
        size = len(zlib.compress(raw, 1)) if len(raw) < _TRY_DEFLATE_BELOW else len(raw)
        members[name] = (raw, size if 2 * size <= len(raw) else None)
    total = sum(len(raw) for raw, _ in members.values())
    while (
        total
        > MAX_INFLATION // 2 * sum(len(raw) if size is None else size for raw, size in members.values())
        + INFLATION_SLACK // 2
    ):  # keep clear of load's bound: store the largest deflated member as it is
        name = max((n for n, (_, size) in members.items() if size is not None), key=lambda n: len(members[n][0]))
        members[name] = (members[name][0], None)
    with zipfile.ZipFile(f, "w", allowZip64=True) as zf:
        for name, (raw, size) in members.items():
            deflated = size is not None
            zf.writestr(
                zipfile.ZipInfo(name + ".npy"),
                raw,
                compress_type=zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED,
                compresslevel=1,
            )


def _read_container(path, raw: np.ndarray) -> dict:
    """Parse and validate the ``__header__`` array; return the container dict."""
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise _error(path, "not a budgetlearn model file (malformed __header__)")
    try:
        container = json.loads(raw.tobytes().decode("utf-8"))
    except (ValueError, RecursionError):  # ValueError covers UnicodeDecodeError and JSONDecodeError
        raise _error(path, "not a budgetlearn model file (unparsable __header__)") from None
    if not isinstance(container, dict) or container.get("format") != FORMAT_NAME:
        raise _error(path, "not a budgetlearn model file")

    version = container.get("version")
    if type(version) is not int:  # bool is an int subclass but never a valid version
        raise _error(path, f"not a budgetlearn model file (invalid format version {version!r})")
    if version > FORMAT_VERSION:
        raise _error(
            path,
            f"written by format version {version}, this build reads versions up to "
            f"{FORMAT_VERSION}; upgrade budgetlearn",
        )
    if version < _OLDEST_READABLE_VERSION:
        raise _error(
            path,
            f"written by format version {version}, which this build cannot read "
            f"(oldest supported is {_OLDEST_READABLE_VERSION})",
        )
    if (
        not isinstance(container.get("header"), dict)
        or not isinstance(container.get("checksum"), str)
        or version >= 2
        and not (
            isinstance(container.get("members"), dict)
            and all(isinstance(v, str) for v in container["members"].values())
        )
    ):
        raise _error(path, "truncated or corrupt (incomplete __header__)")
    return container


# Bounds on what loading a file may cost, whoever wrote it.  budgetlearn writes every array
# uncompressed, so its own files inflate to their size on disk; a member may be compressed (another
# zip tool rewrote the file), but all arrays together may take at most MAX_INFLATION times the file's
# size plus INFLATION_SLACK in memory, checked from the members' .npy headers before any array is
# read: a zip bomb is refused having cost a few hundred bytes of reading.
MAX_INFLATION = 8
INFLATION_SLACK = 64 << 20
MAX_HEADER_BYTES = 16 << 20  # the JSON header: a few kB, up to ~8 MB for the label map of 65,536 classes
MAX_MEMBERS = 256
_NPY_MAGIC = b"\x93NUMPY"


def load(path, expect=None, skip=()) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model file; return ``(header, arrays)`` with only the caller's header keys.

    ``expect(header, members)``, if given, sees the caller's header and each array's declared
    ``Member`` (shape, dtype) before any array is read, and raises ValueError naming the field
    for anything the caller's layout does not allow; it is reported as ``PATH: invalid model:
    MESSAGE``.  Arrays named in ``skip`` (or in ``skip(header)``) are neither read nor returned (a
    version 1 file, whose checksum needs every array, reads them and leaves them out).  Every failure is raised as a
    one-line ModelFileError naming ``path``.
    """
    try:
        f = open_regular(path)
    except OSError as e:
        raise _error(path, f"cannot open: {e.strerror or e}") from None
    with f:
        try:
            magic = f.read(len(_NPY_MAGIC))
            f.seek(0)
            if not magic:
                raise _error(path, "not a budgetlearn model file (empty file)")
            if magic == _NPY_MAGIC:
                raise _error(path, "not a budgetlearn model file (a single .npy array)")
            if not magic.startswith(b"PK"):  # neither a zip nor an .npy file (a pickle, text, ...)
                raise _error(path, "not a budgetlearn model file")
            size = os.fstat(f.fileno()).st_size
            with zipfile.ZipFile(f) as zf:
                container, names, arrays = _read_members(path, zf, size, expect, skip)
        except ModelFileError:
            raise
        except _READ_ERRORS as e:
            raise _error(path, f"truncated or corrupt ({_describe(e)})") from None
    header = container["header"]
    header_json = _canonical_json(header)
    if container["version"] == 1:  # every array was read: its checksum covers them all
        if _checksum_v1(header_json, arrays) != container["checksum"]:
            raise _error(path, "truncated or corrupt (checksum mismatch)")
        skip = skip(header) if callable(skip) else skip
        return header, {name: a for name, a in arrays.items() if name not in skip}
    members = container["members"]
    if (
        _checksum(header_json, members) != container["checksum"]
        or set(members) != names
        or any(_member_checksum(name, a) != members[name] for name, a in arrays.items())
    ):
        raise _error(path, "truncated or corrupt (checksum mismatch)")
    return header, arrays


def open_regular(path):
    """`path` opened for binary reading, when it is a regular file: OSError otherwise, before anything
    is read.  Opened without blocking, so that a FIFO named where a model is expected is refused, not
    waited on until some writer comes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a directory"
                if stat.S_ISDIR(mode)
                else "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a file"
            )
            raise OSError(errno.EINVAL, f"{kind}, not a regular file", os.fsdecode(path))
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_members(path, zf: zipfile.ZipFile, file_size: int, expect, skip) -> tuple[dict, set, dict[str, np.ndarray]]:
    """(container, the names of the arrays the file holds, the arrays not skipped)."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise _error(path, f"not a budgetlearn model file ({len(infos)} members, at most {MAX_MEMBERS})")
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename[:-4]
        if not info.filename.endswith(".npy") or name in members:
            raise _error(path, f"truncated or corrupt (member {info.filename!r} is not an array)")
        members[name] = info
    if _HEADER_MEMBER not in members:
        raise _error(path, "not a budgetlearn model file (no __header__)")
    # The header is read first, so a file from a newer version gets the upgrade message even if
    # it holds arrays this build cannot parse.
    shape, dtype, offset = member_header(zf, _HEADER_MEMBER, members[_HEADER_MEMBER])
    if len(shape) != 1 or dtype.itemsize * shape[0] > MAX_HEADER_BYTES:
        raise _error(path, "not a budgetlearn model file (malformed __header__)")
    container = _read_container(path, member_data(zf, members.pop(_HEADER_MEMBER), shape, dtype, offset))

    declared = {name: member_header(zf, name, info) for name, info in members.items()}
    total = sum(nbytes(shape, dtype) for shape, dtype, _ in declared.values())
    bound = MAX_INFLATION * file_size + INFLATION_SLACK
    if total > bound:
        raise _error(
            path,
            f"invalid model: its arrays would take {total:,} bytes, more than the bound of "
            f"{MAX_INFLATION} × the file's {file_size:,} bytes + {INFLATION_SLACK >> 20} MiB",
        )
    if expect is not None:
        try:
            expect(container["header"], {name: Member((shape, dtype)) for name, (shape, dtype, _) in declared.items()})
        except (ValueError, TypeError, KeyError) as exc:
            raise _error(path, f"invalid model: {exc.args[0] if exc.args else exc}") from None
    skip = () if container["version"] == 1 else skip(container["header"]) if callable(skip) else skip
    arrays = {
        name: member_data(zf, members[name], shape, dtype, offset)
        for name, (shape, dtype, offset) in declared.items()
        if name not in skip
    }
    return container, set(declared), arrays
