"""The package's one `njit`: numba's, with a `cache=True` that works wherever the package is installed.

numba caches compiled code in NUMBA_CACHE_DIR if set, else in `__pycache__` beside the source, else in
the user's cache directory (~/.cache/numba), and `@njit(cache=True)` raises at import when none is
writable: a read-only install run by a user without a home.  Then the code is cached in a directory of
this user's own under the temporary directory, `budgetlearn-numba-UID`, created with mode 0700.  It is
used only if it is a directory (not a symlink) owned by us that neither group nor others may write:
whoever can write a cache makes us run their code.  Otherwise, or without a temporary directory, the
code is compiled anew in each process, after one note on stderr.

numba itself (~0.2 s and ~40 MB of LLVM) is imported only when compiled code first runs (and without
the scipy.linalg import its start-up check of BLAS costs: `_defer_blas_check`): `njit` returns
a `Lazy` stand-in, and the first call of any stand-in makes every function decorated so far numba's
(`compile_all`), puts the compiled functions in place of the stand-ins in the modules that hold them
(compiled code calls other compiled functions through its module's globals), and registers the record
types (`record`).  So `--version`, `info` and a `predict` that scores a few lines with numpy
(fewscores.py) never load numba.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile

from . import _aot

_lazy: list["Lazy"] = []  # every stand-in made, compiled or not
_records: list[type] = []  # record types made before numba was loaded
_intrinsics: list["LazyIntrinsic"] = []  # `intrinsic` stand-ins, made numba's by compile_all
_loaded = False  # compile_all has run


class Lazy:
    """A function decorated with `njit`, before numba is loaded; calling it (or asking for one of numba's
    attributes, such as `py_func`) loads numba and compiles every decorated function (`compile_all`)."""

    def __init__(self, func, options: dict):
        self.func, self.options, self.compiled = func, options, None
        self.entry = f"{func.__module__}:{func.__qualname__}"  # its name among the compiled-at-install loops
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        if not kwargs and (compiled := _aot.lookup(self.entry, args)) is not None:
            return compiled(*args)
        compile_all()
        return self.compiled(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        compile_all()
        return getattr(self.compiled, name)


class LazyIntrinsic:
    """A function decorated with `intrinsic`, before numba is loaded: compiled code that calls it is
    compiled after `compile_all` has put numba's intrinsic in its place."""

    def __init__(self, func):
        self.func, self.compiled = func, None
        functools.update_wrapper(self, func)


def intrinsic(func):
    """numba.extending.intrinsic(func) (LLVM IR of our own, e.g. sync.py's atomic operations), made when
    numba is loaded, as `njit`'s functions are."""
    if _loaded:
        from numba.extending import intrinsic as numba_intrinsic

        return numba_intrinsic(func)
    stand_in = LazyIntrinsic(func)
    _intrinsics.append(stand_in)
    return stand_in


def njit(**options):
    """numba.njit(**options) as the module's docstring says: lazily, and with a cache that works anywhere."""

    def decorate(func):
        if _loaded:
            return _compile(func, options)
        stand_in = Lazy(func, options)
        _lazy.append(stand_in)
        return stand_in

    return decorate


def compile_all() -> None:
    """Load numba, decorate every function `njit` has seen, and put each in place of its stand-in in
    every loaded module of this package (and any other module that imported one by name)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    _defer_blas_check()
    if _intrinsics:
        from numba.extending import intrinsic as numba_intrinsic

        for made in _intrinsics:
            made.compiled = numba_intrinsic(made.func)
    for stand_in in _lazy:
        stand_in.compiled = _compile(stand_in.func, stand_in.options)
    for cls in _records:
        _register(cls)
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        for name, value in list(names.items()):
            if type(value) is Lazy or type(value) is LazyIntrinsic:
                names[name] = value.compiled
            elif isinstance(value, type) and value.__module__ == module.__name__:  # e.g. a learner's `loop`
                for attr, member in list(vars(value).items()):
                    if type(member) is Lazy:
                        setattr(value, attr, member.compiled)


def _defer_blas_check() -> None:
    """Skip numba's eager check that scipy's BLAS imports, which costs every process that runs compiled
    code 65–90 ms (importing scipy.linalg; `python -X importtime`).

    numba's CPU target, set up at the first compiled call, imports numba.np.arraymath, whose import
    runs `ensure_blas()` at once to set a flag only one of its helpers reads.  No compiled function here
    calls BLAS, and a function that does still gets numba's own check when it is compiled (np.dot and
    np.linalg call `ensure_blas` then).  So `ensure_blas` refuses while arraymath is first imported, and
    is put back at once.  A numba laid out otherwise, or one whose arraymath is loaded already: nothing
    is skipped."""
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        import numba.np.linalg as linalg

        check = linalg.ensure_blas
    except (ImportError, AttributeError):
        return

    def deferred():
        raise ImportError("numba's BLAS check is deferred to the compilation of code that uses BLAS")

    linalg.ensure_blas = deferred
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        linalg.ensure_blas = check


def _compile(func, options):
    import numba

    if options.get("cache"):
        compiled = _cached(func, options, numba.config.CACHE_DIR)  # where numba chooses
        if compiled is None and (own := _own_cache_dir()) is not None:
            compiled = _cached(func, options, own)
        if compiled is not None:
            return compiled
        _note_uncached()
    return numba.njit(**{**options, "cache": False})(func)


def _cached(func, options, cache_dir: str):
    """numba.njit(**options)(func) with NUMBA_CACHE_DIR = cache_dir, or None if numba finds no writable place."""
    import numba

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
    if _loaded:
        _register(cls)
    else:
        _records.append(cls)
    return cls


def _register(cls: type) -> None:
    from numba.core.typing.typeof import typeof_impl

    typeof_impl.register(cls, typeof_impl.dispatch(tuple))


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
    print(
        "budgetlearn: note: compiled code is not cached (no writable cache directory of this user's own; "
        "set NUMBA_CACHE_DIR to one): each run compiles it again",
        file=sys.stderr,
    )
