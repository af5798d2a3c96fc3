"""Algorithm registry: name -> learner class.  Each module of budgetcli.algorithms registers its
learners with `@register` when it is imported; importing the package `budgetcli.algorithms` imports
them all (its `__init__`), so a module that looks an algorithm up imports that package first.  PARAMS
holds every parameter declaration by name (one per name: see params.py)."""

from __future__ import annotations

from .params import Param

ALGORITHMS: dict[str, type] = {}
PARAMS: dict[str, Param] = {}


def register(cls):
    if cls.name in ALGORITHMS:
        raise RuntimeError(f"algorithm {cls.name!r} registered twice")
    for p in cls.params:
        known = PARAMS.setdefault(p.name, p)
        if not known.same_as(p):
            raise RuntimeError(
                f"{cls.name}: parameter {p.name!r} is declared differently by another algorithm; "
                "one name, one declaration (a different default is allowed: Param.but)"
            )
    ALGORITHMS[cls.name] = cls
    return cls


def get(name: str):
    try:
        return ALGORITHMS[name]
    except KeyError:
        known = ", ".join(sorted(ALGORITHMS)) or "none registered: import budgetcli.algorithms first"
        raise ValueError(f"unknown algorithm {name!r}; choose one of: {known}") from None


def params() -> dict[str, Param]:
    """Every algorithm parameter, by canonical name."""
    return PARAMS
