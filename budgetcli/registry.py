"""Algorithm registry: name -> learner class.  Each module of budgetcli.algorithms registers its
learners with `@register`; `load_all` imports them all."""

from __future__ import annotations

import importlib
import pkgutil

ALGORITHMS: dict[str, type] = {}

def register(cls):
    if cls.name in ALGORITHMS:
        raise RuntimeError(f"algorithm {cls.name!r} registered twice")
    ALGORITHMS[cls.name] = cls
    return cls


def load_all() -> dict[str, type]:
    """Import every module of budgetcli.algorithms so that each registers itself."""
    from . import algorithms

    for info in pkgutil.iter_modules(algorithms.__path__):
        importlib.import_module(f"{algorithms.__name__}.{info.name}")
    return ALGORITHMS


def get(name: str):
    algos = load_all()
    try:
        return algos[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; choose one of: {', '.join(sorted(algos))}") from None
