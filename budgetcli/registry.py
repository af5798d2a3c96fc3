"""Algorithm registry: name -> learner class, and the one table of CLI flags for parameters.

Every algorithm declares its parameters once (learner.Param); the CLI builds its options from
those declarations and from FLAGS, so the same symbol has the same flag in every algorithm.
"""

from __future__ import annotations

import importlib
import pkgutil

ALGORITHMS: dict[str, type] = {}

# canonical parameter name -> CLI flags (papers' symbols, long form)
FLAGS = {
    "eta": ("--eta",),
    "budget": ("-B", "--budget"),
    "beta": ("--beta",),
    "lambda_": ("--lambda",),
    "cost": ("-C", "--cost"),
    "epsilon": ("--epsilon",),
    "update": ("--update",),
}


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
