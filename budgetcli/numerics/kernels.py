"""Kernels: linear, polynomial and Gaussian (RBF), with LIBSVM's parameterisation.

    linear  k(x, y) = x·y
    poly    k(x, y) = (γ x·y + coef0)^degree
    rbf     k(x, y) = exp(−γ ‖x − y‖²)          (γ = 1 / (2σ²) for papers that write exp(−‖x−y‖²/(2σ²)))

The compiled functions take the kernel as one `KernelArgs` record (a named tuple of plain numbers,
which numba passes by value), so every learner's loop can call them without objects.  A kernel row
k(x, S) is computed by scattering x into a dense scratch vector once and dotting each support
vector's non-zeros against it: cost Σ nnz(SV), no allocation per example (support.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ._jit import njit, record
from ..base.core import KernelSpec
from .exponential import exp_row, exp_scalar
from ..base.params import Param, choice

LINEAR, POLY, RBF = 0, 1, 2
RBF_VECTORISED = 3  # rbf with exponential.py's exp (`Kernel.exp`); RBF is the C library's
EXPS = ("vectorised", "libm")  # Kernel.exp; new models take the first
MAX_DEGREE = 64  # of the poly kernel; a model file may declare no more (statecheck.check_common)
MAX_LOG10 = 308  # a double holds magnitudes below 1.8e308
KERNEL_CODES = {"linear": LINEAR, "poly": POLY, "rbf": RBF}

# The kernel parameters' one declaration: the CLI options, the Python APIs and `tune`'s grid names come
# from it, with core.KernelSpec's defaults.  Their values are checked by `Kernel`.
_SPEC = KernelSpec()
KERNEL_PARAMS = {
    p.name: p
    for p in (
        choice(
            "kernel",
            ("rbf", "poly", "linear"),
            _SPEC.kind,
            "the kernel: rbf exp(−γ‖x−y‖²), poly (γ x·y + coef0)^degree or linear x·y",
        ),
        Param(
            "gamma",
            float,
            _SPEC.gamma,
            "γ of rbf exp(−γ‖x−y‖²) and poly",
            default_text="1/k, k = largest feature index in the first 4,096 examples (LIBSVM: 1/#features)",
        ),
        Param("sigma", float, _SPEC.sigma, "rbf width σ as in exp(−‖x−y‖²/(2σ²)); same as --gamma 1/(2σ²)"),
        Param("degree", int, _SPEC.degree, "poly kernel degree (1 to 64)"),
        Param("coef0", float, _SPEC.coef0, "poly: (γ x·y + coef0)^degree"),
        choice(
            "rbf_exp",
            EXPS,
            _SPEC.exp,
            "rbf: exp in plain arithmetic, four values at a time, the same bits on every machine (vectorised), "
            "or the C library's, one value at a time (libm: what files written before the choice hold)",
        ),
    )
}


@record
class KernelArgs(NamedTuple):
    """A kernel as the compiled code takes it."""

    code: int  # LINEAR, POLY, RBF or RBF_VECTORISED
    gamma: float
    coef0: float
    degree: int
    offset: float  # a constant added to every binary score (an imported LIBSVM model's −ρ); else 0


@dataclass(frozen=True)
class Kernel:
    """A kernel with every number settled (γ included), checked."""

    kind: str = _SPEC.kind
    gamma: float = 1.0
    coef0: float = _SPEC.coef0
    degree: int = _SPEC.degree
    # f(x) = Σ α_i k(x, s_i) + offset: the bias −ρ of a model imported from LIBSVM, which predict, eval,
    # export and a resumed run all keep (constant: no learner here updates a bias); 0 for every model
    # budgetlearn trains.  Kept with the kernel because every compiled scoring function takes it.
    offset: float = 0.0
    # rbf: how exp(−γ d²) is computed (EXPS); a file without the field was written with libm's exp, and
    # is scored and resumed with it, bit for bit.  Other kernels take no exp and keep "libm".
    exp: str = "libm"

    @classmethod
    def of(cls, spec: KernelSpec, first_chunk_features: int) -> "Kernel":
        """The kernel a spec gives on data whose first chunk's largest feature index is that
        (core.KernelSpec.gamma_for); ValueError for a bad value."""
        exp = spec.exp if spec.kind == "rbf" else "libm"
        return cls(spec.kind, spec.gamma_for(first_chunk_features), spec.coef0, spec.degree, exp=exp)

    def __post_init__(self):
        if self.kind not in KERNEL_CODES:
            raise ValueError(f"unknown kernel {self.kind!r}; choose one of {', '.join(KERNEL_CODES)}")
        if self.exp not in EXPS or (self.exp != "libm" and self.kind != "rbf"):
            raise ValueError(f"the kernel's exp must be one of {', '.join(EXPS)} (rbf only), got {self.exp!r}")
        if self.kind != "linear" and not (self.gamma > 0 and math.isfinite(self.gamma)):
            raise ValueError(f"gamma must be a positive number, got {self.gamma}")
        if not math.isfinite(self.coef0):
            raise ValueError(f"coef0 must be a finite number, got {self.coef0}")
        if not math.isfinite(self.offset):
            raise ValueError(f"the kernel's offset (a LIBSVM model's −rho) must be a finite number, got {self.offset}")
        lowest = 1 if self.kind == "poly" else 0  # other kernels ignore it; older files hold 0 there
        if int(self.degree) != self.degree or not lowest <= self.degree <= MAX_DEGREE:
            raise ValueError(f"degree must be an integer in {lowest}..{MAX_DEGREE}, got {self.degree}")
        if self.kind == "poly":
            if self.coef0 != 0 and math.log10(abs(self.coef0)) * self.degree > MAX_LOG10:
                raise ValueError(
                    f"coef0^degree = {self.coef0:g}^{self.degree} overflows a double, so the poly kernel "
                    "of two orthogonal vectors is infinite: lower --coef0 or --degree"
                )

    @property
    def code(self) -> int:
        return RBF_VECTORISED if self.exp == "vectorised" else KERNEL_CODES[self.kind]

    @property
    def sigma(self) -> float:
        """The width σ with γ = 1/(2σ²), for papers that write the Gaussian kernel with σ."""
        return math.sqrt(1.0 / (2.0 * self.gamma))

    def args(self) -> KernelArgs:
        """The kernel as the compiled loops take it."""
        return KernelArgs(self.code, float(self.gamma), float(self.coef0), int(self.degree), float(self.offset))

    def describe(self) -> str:
        bias = f", bias {self.offset:g}" if self.offset else ""
        if self.kind == "linear":
            return "linear" + bias
        if self.kind == "poly":
            return f"poly (γ={self.gamma:g}, coef0={self.coef0:g}, degree={self.degree}){bias}"
        return f"rbf (γ={self.gamma:g}, σ={self.sigma:g}){bias}"

    def spec(self) -> KernelSpec:
        """The KernelSpec that gives this kernel again (γ settled; the offset of an imported model is
        the learner's, not a setting)."""
        return KernelSpec(self.kind, self.gamma, None, self.degree, self.coef0, self.exp)

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "gamma": self.gamma, "coef0": self.coef0, "degree": self.degree}
        if self.offset:  # only an imported model has one: every other file stays as it was
            out["offset"] = self.offset
        if self.exp != "libm":
            out["exp"] = self.exp
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Kernel":
        return cls(
            kind=d["kind"],
            gamma=float(d["gamma"]),
            coef0=float(d["coef0"]),
            degree=int(d["degree"]),
            offset=float(d.get("offset", 0.0)),
            exp=d.get("exp", "libm"),
        )


@njit(cache=True, inline="always")
def rbf_exponent(K, dot, sqnorm_a, sqnorm_b):
    """−γ‖a − b‖² from a·b and the squared norms.  ‖a − b‖² = ‖a‖² + ‖b‖² − 2 a·b can come out a hair
    below zero for a == b: clamped at 0."""
    d2 = sqnorm_a + sqnorm_b - 2.0 * dot
    return -K.gamma * (0.0 if d2 < 0.0 else d2)


@njit(cache=True, inline="always")
def kernel_from_dot(K, dot, sqnorm_a, sqnorm_b):
    """k(a, b) from a·b and the squared norms (the norms are only used by the RBF kernel)."""
    if K.code == RBF or K.code == RBF_VECTORISED:
        x = rbf_exponent(K, dot, sqnorm_a, sqnorm_b)
        return math.exp(x) if K.code == RBF else exp_scalar(x)
    if K.code == POLY:
        return (K.gamma * dot + K.coef0) ** K.degree
    return dot


@njit(cache=True)
def kernel_values(K, out, n, x_sqnorm, sqnorms):
    """out[i] = k(x, y_i) from out[i] = x·y_i, i < n, with ‖y_i‖² = sqnorms[i]: `kernel_from_dot`'s
    values, and for the vectorised rbf its steps with the exps four at a time (`exp_row`)."""
    if K.code == RBF_VECTORISED:
        for i in range(n):
            out[i] = rbf_exponent(K, out[i], x_sqnorm, sqnorms[i])
        exp_row(out, n)
        return
    for i in range(n):
        out[i] = kernel_from_dot(K, out[i], x_sqnorm, sqnorms[i])


@njit(cache=True, inline="always")
def self_kernel(K, sqnorm):
    """k(x, x)."""
    if K.code == RBF or K.code == RBF_VECTORISED:
        return 1.0
    if K.code == POLY:
        return (K.gamma * sqnorm + K.coef0) ** K.degree
    return sqnorm


@njit(cache=True)
def scatter(scratch, idx, val):
    for j in range(idx.shape[0]):
        scratch[idx[j]] = val[j]


@njit(cache=True)
def unscatter(scratch, idx):
    for j in range(idx.shape[0]):
        scratch[idx[j]] = 0.0


@njit(cache=True)
def sparse_sqnorm(val):
    s = 0.0
    for j in range(val.shape[0]):
        s += val[j] * val[j]
    return s
