"""The package's one `njit`: numba's, with a `cache=True` that works wherever the package is installed.

numba caches compiled code in NUMBA_CACHE_DIR if set, else in `__pycache__` beside the source, else in
the user's cache directory (~/.cache/numba), and `@njit(cache=True)` raises at import when none is
writable: a read-only install run by a user without a home.  Then the code is cached in a directory of
this user's own under the temporary directory, `budgetlearn-numba-UID`, created with mode 0700.  It is
used only if it is a directory (not a symlink) owned by us that neither group nor others may write:
whoever can write a cache makes us run their code.  Otherwise, or without a temporary directory, the
code is compiled anew in each process, after one note on stderr.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile

import numba


def njit(**options):
    """numba.njit(**options), falling back as the module's docstring says when cache=True."""
    def decorate(func):
        if options.get("cache"):
            compiled = _cached(func, options, numba.config.CACHE_DIR)  # where numba chooses
            if compiled is None and (own := _own_cache_dir()) is not None:
                compiled = _cached(func, options, own)
            if compiled is not None:
                return compiled
            _note_uncached()
        return numba.njit(**{**options, "cache": False})(func)
    return decorate


def _cached(func, options, cache_dir: str):
    """numba.njit(**options)(func) with NUMBA_CACHE_DIR = cache_dir, or None if numba finds no writable place."""
    saved, numba.config.CACHE_DIR = numba.config.CACHE_DIR, cache_dir  # numba reads it here, at decoration
    try:
        return numba.njit(**options)(func)
    except RuntimeError:  # "cannot cache function …: no locator available"
        return None
    finally:
        numba.config.CACHE_DIR = saved


def record(cls: type) -> type:
    """Class decorator: tell numba that this named tuple class is typed as the tuple it is.

    numba types an argument by `functools.singledispatch` on its class; a class met for the first time
    is resolved by walking the registered types with `issubclass`, whose checks against numba's
    abstract base classes cost 2 to 50 ms in a process (more the more modules are loaded), once per
    record class.  Registering the class directly skips that walk on the first call of every loop."""
    from numba.core.typing.typeof import typeof_impl
    typeof_impl.register(cls, typeof_impl.dispatch(tuple))
    return cls


@functools.cache
def _own_cache_dir() -> str | None:
    """TMPDIR/budgetlearn-numba-UID, made if missing; None if there is none that is ours alone."""
    try:
        path = os.path.join(tempfile.gettempdir(), f"budgetlearn-numba-{os.getuid()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    except OSError:  # no usable temporary directory
        return None
    ours = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022
    return path if ours else None


@functools.cache
def _note_uncached() -> None:
    print("budgetlearn: note: compiled code is not cached (no writable cache directory of this user's own; "
          "set NUMBA_CACHE_DIR to one): each run compiles it again", file=sys.stderr)
