"""The compiled loops built at install (`aot_build`), found and matched without importing numba.

`lookup(name, args)` returns the extension's entry point for the function `name` ("module:qualname")
when the types of `args` are exactly those of an entry (numba's typing of arrays, scalars and tuples,
spelt by `type_key`), else None, and the caller (`_jit.Lazy`) runs the JIT instead.  The extension is
used only if every source it was built from is unchanged (`_loops.json` holds their hashes: an edited
loop never runs stale machine code), if it is the file built, byte for byte (its size and sha256, also
in `_loops.json`, checked before it is loaded: a truncated or damaged file would kill every command with
SIGBUS), and BUDGETLEARN_JIT is unset or 0.  `status()` says which path runs and why (`budgetlearn
--version`), a failed or skipped build's reason included."""

from __future__ import annotations

import hashlib
import json
import os

np = None  # numpy, imported by _load: `budgetlearn --version` (status) loads neither numpy nor the extension

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package root: the extension sits there

_DTYPE_NAMES: dict[str, str] = {}  # a dtype's character code -> its name, for the dtypes of the loops' arrays
_table: dict | None = None  # name -> {argument types: entry point} (`lookup`); {} when the extension is not used
_why = ""  # why the JIT runs instead, once _load has run


def lookup(name: str, args: tuple):
    table = _table if _table is not None else _load()
    entries = table.get(name)
    if entries is None:
        return None
    if type(entries) is list:  # made on first use: a process calls a few of the entries
        entries = table[name] = {_frozen(key): entry for key, entry in entries}
    try:
        return entries.get(tuple(type_key(a) for a in args))
    except TypeError:  # a value the compiled entries never take
        return None


def status() -> str:
    """One line for `--version`: which compiled code runs, and why."""
    why = _unusable()
    if why is None:
        return "loops: compiled at install (ahead of time)"
    return f"loops: compiled just in time by numba ({why})"


def type_key(value):
    """numba's type of a value, in `aot_build.numba_key`'s JSON form, as a tuple."""
    global np
    if np is None:
        import numpy as np

        _DTYPE_NAMES.update((np.dtype(name).char, name) for name in ("float64", "int64", "int32", "uint8", "bool"))
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        dtype = value.dtype
        name = _DTYPE_NAMES.get(dtype.char) or dtype.name  # dtype.name is built anew at each call
        return ("a", name, value.ndim, layout, not flags.writeable, flags.aligned)
    if kind is bool or kind is np.bool_:
        return ("s", "bool")
    if kind is int:
        return ("s", "int64")
    if kind is float:
        return ("s", "float64")
    if value is None:
        return ("n",)
    if isinstance(value, tuple):
        name = None if kind is tuple else f"{kind.__module__}:{kind.__qualname__}"
        return ("t", name, tuple(type_key(v) for v in value))
    if isinstance(value, np.generic):
        return ("s", value.dtype.name)
    raise TypeError(kind)


def _frozen(key):
    return tuple(_frozen(k) for k in key) if isinstance(key, list) else key


def _unusable() -> str | None:
    """Why the extension cannot be used, or None: BUDGETLEARN_JIT, no extension (the install skipped or
    failed its build: `_loops.json` says why), a source changed since it was built, or an extension that
    is not, byte for byte, the one built (its size and sha256 in `_loops.json`: a file truncated at
    install, or damaged since, would kill the process with SIGBUS when loaded)."""
    import importlib.util

    if os.environ.get("BUDGETLEARN_JIT", "0") not in ("", "0"):
        return "BUDGETLEARN_JIT is set"
    try:
        with open(os.path.join(HERE, "_loops.json")) as f:
            record = json.load(f)
    except OSError:
        record = None
    except ValueError:
        return "compiled at install failed: its record, budgetcli/_loops.json, is damaged"
    if isinstance(record, dict) and "skipped" in record:
        return f"not compiled at install: {record['skipped']}"
    if isinstance(record, dict) and "failed" in record:
        return f"compiled at install failed: {record['failed']}"
    spec = importlib.util.find_spec(f"{__package__.rpartition('.')[0]}._loops")
    if record is None or spec is None or not isinstance(record, dict):
        return "no extension was compiled at install: that needs a C compiler"
    for path, digest in record.get("sources", {}).items():
        try:
            with open(os.path.join(HERE, path), "rb") as f:
                same = hashlib.sha256(f.read()).hexdigest() == digest
        except OSError:
            same = False
        if not same:
            return f"budgetcli/{path} changed since the extension was compiled"
    return _damage(record.get("extension"), spec.origin)


def _damage(built, path: str) -> str | None:
    """How the extension at `path` differs from the one `built` describes (_loops.json), or None."""
    name = os.path.basename(path)
    if not isinstance(built, dict) or built.get("file") != name or not isinstance(built.get("bytes"), int):
        return f"compiled at install failed: budgetcli/_loops.json does not describe {name}"
    damaged = f"the compiled extension is damaged: budgetcli/{name}"
    try:
        size = os.path.getsize(path)
        if size != built["bytes"]:
            return f"{damaged} holds {size:,} bytes, not the {built['bytes']:,} built"
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != built.get("sha256"):
                return f"{damaged} is not the file built (its sha256 differs)"
    except OSError as exc:
        return f"the compiled extension cannot be read: {exc.strerror or exc}"
    return None


def _load() -> dict:
    global _table, _why
    _table = {}
    _why = _unusable()
    if _why is not None:
        return _table
    try:
        from .. import _loops
    except ImportError as exc:
        _why = f"the compiled extension does not load ({exc})"
        return _table
    with open(os.path.join(HERE, "aot_signatures.json")) as f:
        entries = json.load(f)
    table: dict = {}  # name -> [(argument types as JSON, entry point)], made a dict by `lookup`
    for i, (name, _, args) in enumerate(entries):
        table.setdefault(name, []).append((args, getattr(_loops, f"e{i}")))
    _table = table
    return _table
