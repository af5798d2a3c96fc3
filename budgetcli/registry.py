"""Algorithm registry: name -> learner class.  Each module of budgetcli.algorithms registers its
learners with `@register`; `load_all` imports them all.  PARAMS holds every parameter declaration
by name (one per name: see params.py)."""

from __future__ import annotations

import importlib
import pkgutil

from .params import Param

ALGORITHMS: dict[str, type] = {}
PARAMS: dict[str, Param] = {}


def register(cls):
    if cls.name in ALGORITHMS:
        raise RuntimeError(f"algorithm {cls.name!r} registered twice")
    for p in cls.params:
        known = PARAMS.setdefault(p.name, p)
        if not known.same_as(p):
            raise RuntimeError(f"{cls.name}: parameter {p.name!r} is declared differently by another algorithm; "
                               "one name, one declaration (a different default is allowed: Param.but)")
    ALGORITHMS[cls.name] = cls
    return cls


_loaded = False  # every module of budgetcli.algorithms imported (a walk of the package is not free)


def load_all() -> dict[str, type]:
    """Import every module of budgetcli.algorithms so that each registers itself (once per process)."""
    global _loaded
    if not _loaded:
        from . import algorithms

        for info in pkgutil.iter_modules(algorithms.__path__):
            importlib.import_module(f"{algorithms.__name__}.{info.name}")
        _loaded = True
    return ALGORITHMS


def get(name: str):
    algos = load_all()
    try:
        return algos[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; choose one of: {', '.join(sorted(algos))}") from None


def params() -> dict[str, Param]:
    """Every algorithm parameter, by canonical name."""
    load_all()
    return PARAMS
