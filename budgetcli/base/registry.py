"""Algorithm registry: name -> learner class.  Each module of budgetcli.learning.algorithms registers its
learners with `@register` when it is imported; importing the package `budgetcli.learning.algorithms` imports
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


# The algorithm `train` runs without -a, by the labels of the first block: chosen from the table of
# every algorithm with its defaults (docs/ALGORITHMS.md, "Start here"; bench/defaults.py measures it).
# `--task regression` runs krlst when none is named (`python bench/regression.py --defaults`): bounded by its
# budget (100 centres), it has a lower test MSE than qklms, the default before, on four of the five sets and
# is 3% behind on Friedman #1, where qklms's codebook grew to 20,000 centres (before its -B cap, 10,000); krls
# (ALD) is often better but has no budget (649 centres and 74 s on Friedman #1).
# `--task novelty` runs norma-novelty, the one novelty learner so far.
DEFAULT = {"binary": "projectron++", "multiclass": "mc-projectron++", "regression": "krlst", "novelty": "norma-novelty"}


def task_default(task: str | None) -> str | None:
    """The default algorithm of a task whose default does not depend on the data (regression's, novelty's);
    None for classification's, which the labels of the first block choose (`default_for`)."""
    return DEFAULT.get(task) if task in ("regression", "novelty") else None


def default_for(n_labels: int) -> str:
    """The default algorithm for data whose first block holds `n_labels` distinct labels."""
    return DEFAULT["multiclass" if n_labels > 2 else "binary"]


def canonical(name: str) -> str:
    """The registered spelling of `name`, whatever its case; an unknown name raises ValueError with
    the closest names ("did you mean"), or all of them when none is close."""
    if not isinstance(name, str):
        raise ValueError(f"unknown algorithm {name!r}: not a name")
    if name in ALGORITHMS:
        return name
    folded = {known.lower(): known for known in ALGORITHMS}
    if name.lower() in folded:
        return folded[name.lower()]
    import difflib

    close = difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.6)
    if close:
        hint = "did you mean " + " or ".join(folded[c] for c in close) + "?"
    else:
        registered = ", ".join(sorted(ALGORITHMS))
        hint = "choose one of: " + (registered or "none registered: import budgetcli.learning.algorithms")
    raise ValueError(f"unknown algorithm {name!r}; {hint} (`budgetlearn algorithms` lists them)")


def get(name: str):
    return ALGORITHMS[canonical(name)]


def params() -> dict[str, Param]:
    """Every algorithm parameter, by canonical name."""
    return PARAMS
