"""Algorithm parameters: each parameter's one declaration, flag included.

Every algorithm lists its parameters as `Param` objects; the CLI builds its options and --help from
them, so a symbol of the papers has one flag and one meaning in every algorithm that takes it (the
registry refuses two declarations of one name that differ in anything but the default).  Parameters
of several algorithms are declared here; an algorithm's own ones in its module.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: the single declaration its CLI option, --help, check and the value the
    compiled loop gets come from."""

    name: str  # canonical name, the keyword of the Python API
    type: type
    default: Any  # None: computed from other parameters (`default_text` says how)
    help: str
    check: Callable[[Any], bool] = lambda v: True
    requirement: str = ""  # what `check` demands, for the error message
    default_text: str = ""  # --help's wording of a computed default
    flags: tuple[str, ...] = ()  # CLI flags; default: --name with '-' for '_'
    choices: tuple[str, ...] = ()  # a str parameter's values
    codes: tuple[int, ...] = ()  # what the compiled loop gets for each choice (default: its index)

    def __post_init__(self):
        if not self.flags:
            object.__setattr__(self, "flags", ("--" + self.name.rstrip("_").replace("_", "-"),))

    @property
    def flag(self) -> str:
        """The long flag, as messages name the parameter."""
        return self.flags[-1]

    def but(self, **changes) -> "Param":
        """The same parameter with another default (an algorithm's own)."""
        return dataclasses.replace(self, **changes)

    def same_as(self, other: "Param") -> bool:
        """One parameter, perhaps with another default: what the registry requires of two declarations."""
        ignore = {"default": None, "default_text": ""}
        return dataclasses.replace(self, **ignore) == dataclasses.replace(other, **ignore)

    def code(self, value) -> Any:
        """The value as the compiled loops take it (a choice's code)."""
        if not self.choices:
            return value
        return (self.codes or range(len(self.choices)))[self.choices.index(value)]


# The rules a parameter's value may have to follow: (check, what the error message says it must be).
FINITE = (lambda v: math.isfinite(v), "a finite number")
NONNEGATIVE = (lambda v: v >= 0 and math.isfinite(v), "a finite number ≥ 0")
POSITIVE = (lambda v: v > 0 and math.isfinite(v), "a finite number > 0")
POSITIVE_OR_INF = (lambda v: v > 0 and not math.isnan(v), "a number > 0 (inf allowed)")
UNIT = (lambda v: 0 <= v <= 1, "in [0, 1]")
HALF_OPEN_UNIT = (lambda v: 0 < v <= 1, "in (0, 1]")
COUNT = (lambda v: v >= 1, "an integer ≥ 1")


def number(name: str, default, help: str, rule=FINITE, **more) -> Param:
    """A float parameter following `rule` (one of the rules above)."""
    return Param(name, float, default, help, check=rule[0], requirement=rule[1], **more)


def count(name: str, default: int, help: str, **more) -> Param:
    """An integer parameter ≥ 1."""
    return Param(name, int, default, help, check=COUNT[0], requirement=COUNT[1], **more)


def choice(name: str, choices: tuple[str, ...], default: str, help: str, codes: tuple[int, ...] = ()) -> Param:
    """A parameter taking one of `choices` (strings); the loop gets `codes` (default: the index)."""
    wording = " or ".join(choices) if len(choices) == 2 else "one of " + ", ".join(choices)
    return Param(
        name, str, default, help, check=lambda v: v in choices, requirement=wording, choices=choices, codes=codes
    )


ETA = number("eta", 0.1, "projection threshold on ‖δ‖ (paper §3; DOGMA's η is our η²)", NONNEGATIVE)
BUDGET = count("budget", 100, "support-set budget B (number of support vectors kept)", flags=("-B", "--budget"))
COST = number(
    "cost",
    1.0,
    "C: aggressiveness of PA-I / PA-II (Crammer et al. 2006) and BPA (Wang & Vucetic 2010), box of the No-Bias-SVM "
    "update (Weston et al. Fig. 2)",
    POSITIVE_OR_INF,
    flags=("-C", "--cost"),
)
BETA = number("beta", 0.0, "margin β: update when y f(x) ≤ β (Weston et al. Fig. 1)")
