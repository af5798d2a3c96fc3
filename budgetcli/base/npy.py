"""One ``.npy`` member of a zip archive (a model file's arrays: modelfile.py), read in bounded memory: what
its header declares (``member_header``: shape, dtype, where its data starts), checked before any of its data
is read, then its data (``member_data``), read into an array of that size and no more."""

from __future__ import annotations

import numpy as np

# Numeric dtype kinds: bool, signed int, unsigned int, float, complex.
NUMERIC_KINDS = frozenset("biufc")


class BadMember(ValueError):
    """A member that is not a plain numeric array holding the data its zip entry says; str(e) says which and why."""


class Member(tuple):
    """What a member's .npy header declares: (shape, dtype), before its data is read."""

    shape = property(lambda self: self[0])
    dtype = property(lambda self: self[1])


def nbytes(shape, dtype) -> int:
    """The bytes an array of that shape and dtype holds (Python ints: no overflow, whatever a header declares)."""
    n = dtype.itemsize
    for dim in shape:
        n *= dim
    return n


def member_header(zf, name, info) -> tuple[tuple, np.dtype, tuple[int, bool]]:
    """(shape, dtype, offset of the data) from a member's .npy header; refuses anything but a plain
    numeric array whose data is exactly what the zip entry says it holds (BadMember)."""
    with zf.open(info) as stream:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise BadMember(f"member {name!r}: .npy format {version}")
        offset = stream.tell()
    if dtype.hasobject or dtype.fields is not None or dtype.kind not in NUMERIC_KINDS:
        raise BadMember(f"member {name!r} is not a plain numeric array: {dtype}")
    if info.file_size != offset + nbytes(shape, dtype):
        raise BadMember(
            f"member {name!r} holds {info.file_size - offset:,} bytes of data, "
            f"its shape {shape} needs {nbytes(shape, dtype):,}"
        )
    return shape, dtype, (offset, fortran)


def member_data(zf, info, shape, dtype, where) -> np.ndarray:
    """The member's array, of the shape and dtype its header declared (`member_header`; `where` is its third
    item), read into an array of exactly that size: EOFError when the entry ends early."""
    offset, fortran = where
    flat = np.empty(nbytes(shape, dtype) // dtype.itemsize, dtype)
    with zf.open(info) as stream:
        stream.read(offset)
        view = memoryview(flat).cast("B") if flat.size else memoryview(b"")
        got = 0
        while got < len(view):
            n = stream.readinto(view[got:])
            if not n:
                raise EOFError(f"member {info.filename!r} ends early")
            got += n
        stream.read(1)  # at the end of the entry, zipfile checks its CRC
    return flat.reshape(shape, order="F" if fortran else "C")
