"""Algorithm parameters: the one declaration each parameter has, and the one table of CLI flags.

Every algorithm lists its parameters as `Param` objects; the CLI builds its options and --help from
them and from FLAGS, so a symbol of the papers has the same flag and meaning in every algorithm.
Parameters shared by several algorithms are declared here once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

@dataclass(frozen=True)
class Param:
    """One algorithm parameter: the single declaration the CLI options and --help come from."""

    name: str  # canonical name; its CLI flag is FLAGS[name]
    type: type
    default: Any
    help: str
    check: Callable[[Any], bool] = lambda v: True
    requirement: str = ""  # what `check` demands, for the error message
    default_text: str = ""  # --help's wording of a default computed from other parameters (default None)


# canonical parameter name -> CLI flags (papers' symbols, long form)
FLAGS = {
    "eta": ("--eta",),
    "budget": ("-B", "--budget"),
    "beta": ("--beta",),
    "lambda_": ("--lambda",),
    "cost": ("-C", "--cost"),
    "epsilon": ("--epsilon",),
    "update": ("--update",),
    "eval_set": ("--eval-set",),
    "eval_size": ("--eval-size",),
    "size": ("--size",),
    "alma_alpha": ("--alma-alpha",),
    "alma_b": ("--alma-b",),
    "alma_c": ("--alma-c",),
    "sop_a": ("--sop-a",),
    "radius": ("-U", "--radius"),
    "step": ("--step",),
    "step_schedule": ("--step-schedule",),
    "ahpatron_eta": ("--ahpatron-eta",),
    "ahpatron_c": ("--ahpatron-c",),
    "maintenance": ("--maintenance",),
}


ETA = Param("eta", float, 0.1, "projection threshold on ‖δ‖ (paper §3; DOGMA's η is our η²)",
            check=lambda v: v >= 0 and math.isfinite(v), requirement="a finite number ≥ 0")

BUDGET = Param("budget", int, 100, "support-set budget B (number of support vectors kept)",
               check=lambda v: v >= 1, requirement="an integer ≥ 1")

COST = Param("cost", float, 1.0, "C: aggressiveness of PA-I / PA-II (Crammer et al. 2006), box of the No-Bias-SVM update (Weston et al. Fig. 2)",
             check=lambda v: v > 0 and not math.isnan(v), requirement="a number > 0 (inf allowed)")

BETA = Param("beta", float, 0.0, "margin β: update when y f(x) ≤ β (Weston et al. Fig. 1)",
             check=lambda v: math.isfinite(v), requirement="a finite number")

LAMBDA = Param("lambda_", float, 0.1, "decay λ of the Shifting Perceptron, λ_k = λ/(λ+k) (no paper default)",
               check=lambda v: v >= 0 and math.isfinite(v), requirement="a finite number ≥ 0")
