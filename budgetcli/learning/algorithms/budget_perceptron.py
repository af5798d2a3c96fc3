"""Budget Perceptrons that remove a support vector chosen by a criterion (Weston, Bordes, Bottou,
"Online (and Offline) on an Even Tighter Budget", AISTATS 2005):

- `budget-perceptron`, Crammer, Kandola and Singer (NIPS 2003), "CKS", as in Weston et al. Fig. 1:
  remove the support vector that stays classified with the largest margin after its own removal,
      i = argmax_j y_j (f(x_j) − a_j k(x_j, x_j))            (a_j = α_j y_j, the signed coefficient)
- `tighter-perceptron`, Weston et al. Fig. 3: remove the one whose removal leaves the fewest errors
  on an evaluation set E,   i = argmin_j Σ_{k∈E} L(y_k, sign(f(x_k) − a_j k(x_j, x_k))),
  with E chosen by `--eval-set` (§3.2):
      all      every example seen so far, x_t included (Fig. 3).  Memory and time grow as O(t·B):
               the set is never trimmed.  Kept for fidelity; prefer the others on long streams.
      support  the support set itself (eq. 3).
      random   a uniform random sample of q examples of the stream (eq. 4), kept by reservoir sampling
               (the paper only says "randomly chosen"); x_t is a candidate on every round.
      flip     the q examples whose predicted label flips most often per round in the set (Fig. 5),
               x_t entering on each margin error.  Fig. 5 writes argmax s_i for the example to drop,
               but its caption and §3.2 say the examples that flip most are *kept*: we drop argmin s_i,
               s_i = flips / rounds in the set.
  L is the 0/1 loss with y·f ≤ 0 counted as an error, as mistakes are everywhere in the package.

`budget-perceptron --size variable` is CKS's variable-size variant, which Weston et al. give in one
sentence ("removes all examples that violate y_j(w_{t−1} − α_j y_j x_j)·x_j < β on each iteration").
Our reading: after each update, repeatedly remove the support vector with the largest margin after its
own removal while that margin is ≥ β (it is then redundant), updating the cached margins after each
removal; ties to the lowest slot.  The budget B still caps the size.

Both update on y_t f(x_t) ≤ β; with B support vectors stored the removal happens first, then x_t is
inserted with α_t from the update rule of Fig. 2, computed on f after the removal:
    perceptron   α = 1
    mira         α = min(1, max(0, −y f(x) / k(x, x)))
    svm          α = min(C, max(0, (1 − y f(x)) / k(x, x)))      (No-Bias-SVM; the paper uses β = 1)
Fig. 1 inserts x_t whatever α_t is, so a zero coefficient is stored too.  (So MIRA with β ≥ 0 never
leaves f = 0: its α is 0 whenever y f ≥ 0, as Fig. 2 writes it.)

To make removals cheap, as the paper assumes ("all kernel calculations cached"), the Gram matrix of
the support set, f(x_j) for every support vector, and for E its kernel block against the support
set and f(x_k) are kept current on each insertion and removal.  Ties go to the lowest slot.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    MARGIN_UPDATES,
    MISTAKES,
    KernelLearner,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    give_answer,
)
from ..mixing import Mixing, Unmixable
from .. import statecheck
from ...base.params import BETA, BUDGET, COST, choice, count
from ...numerics.gram import gram_of_support
from ...base.registry import register
from ...numerics.rng import randbelow
from ...numerics.support import COUNT, SupportSet, kernel_row, sv_fits, sv_put, sv_remove

UPDATE = choice(
    "update",
    ("perceptron", "mira", "svm"),
    "perceptron",
    "update rule of Weston et al. Fig. 2: perceptron, mira or svm",
)
SIZE = choice(
    "size",
    ("fixed", "variable"),
    "fixed",
    "CKS budget: fixed (remove one SV when B are stored) or "
    "variable (also drop every SV still classified with margin ≥ β without itself)",
)
EVAL_SET = choice(
    "eval_set",
    ("all", "support", "random", "flip"),
    "flip",
    "evaluation set of the Tighter Budget Perceptron (Weston et al. §3.2): all, support, random or flip",
)
EVAL_SIZE = count("eval_size", 100, "size q of the random or flip evaluation set (Weston et al. §3.2)")

PERCEPTRON_RULE, MIRA, SVM = range(3)  # UPDATE's choices
FIXED, VARIABLE = range(2)  # SIZE's choices
ALL, SUPPORT, SAMPLE, FLIP = range(4)  # EVAL_SET's choices
CKS_MARGIN = 4  # budget-perceptron's removal criterion, in place of an evaluation set

# the evaluation-set arrays of tighter-perceptron, per entry (2-D: entry x support slot)
EVAL_ARRAYS = ("e_label", "e_f", "e_flips", "e_since", "e_krow")


@njit(cache=True)
def remove_slot(S, i, alpha, avg_sum, avg_stamp, label, fsv, gram, krow):
    """Take support vector i out of f (fsv, and the caller's f via krow) and out of the slot arrays,
    moving the last slot into i as `sv_remove` does."""
    n = S.meta[COUNT]
    for j in range(n):
        fsv[j] -= alpha[i] * gram[i, j]
    last = sv_remove(S, i)
    if i != last:
        alpha[i], avg_sum[i], avg_stamp[i] = alpha[last], avg_sum[last], avg_stamp[last]
        label[i], fsv[i], krow[i] = label[last], fsv[last], krow[last]
        for j in range(n):
            gram[i, j] = gram[last, j]
        for j in range(n):
            gram[j, i] = gram[j, last]
        gram[i, i] = gram[last, last]


@njit(cache=True)
def shift_eval(e_f, e_flips, block, m, j, coef):
    """f(x_e) += coef · k(x_e, sv_j) for every evaluation entry, counting sign flips."""
    for e in range(m):
        old = e_f[e]
        new = old + coef * block[e, j]
        if (old > 0.0) != (new > 0.0):
            e_flips[e] += 1.0
        e_f[e] = new


@njit(cache=True)
def eval_put(E, e, idx, val, sq, e_label, e_f, e_flips, e_since, block, krow, n, yt, f, rnd):
    """Put example x_t (label yt, current score f, kernel row krow against n SVs) in entry e."""
    sv_put(E, e, idx, val, sq)
    e_label[e], e_f[e], e_flips[e], e_since[e] = yt, f, 0.0, rnd
    for j in range(n):
        block[e, j] = krow[j]


@njit(cache=True)
def eval_remove(E, e, e_label, e_f, e_flips, e_since, block, n):
    last = sv_remove(E, e)
    if e != last:
        e_label[e], e_f[e], e_flips[e], e_since[e] = e_label[last], e_f[last], e_flips[last], e_since[last]
        for j in range(n):
            block[e, j] = block[last, j]


@njit(cache=True)
def sample_stream(E, st, book, mode, q, idx, val, sq, n, yt, f, rnd):
    """Before the update test: x_t joins the `all` set always (Fig. 3 sums over k = 1..t), the `random`
    set by reservoir sampling of the stream (eq. 4)."""
    m = E.meta[COUNT]
    if mode == ALL or m < q:
        eval_put(E, m, idx, val, sq, st.e_label, st.e_f, st.e_flips, st.e_since, st.block, st.krow, n, yt, f, rnd)
    else:
        r = randbelow(book.rng_state, rnd)
        if r < q:
            eval_put(E, r, idx, val, sq, st.e_label, st.e_f, st.e_flips, st.e_since, st.block, st.krow, n, yt, f, rnd)


@njit(cache=True)
def flip_set(E, st, q, idx, val, sq, n, yt, f, rnd):
    """On an update: x_t joins the `flip` set (Fig. 5), which drops the entry that flips least per
    round when full (see the module docstring)."""
    m = E.meta[COUNT]
    if m >= q:
        drop, lowest = 0, math.inf
        for e in range(m):
            s = st.e_flips[e] / (rnd - st.e_since[e])
            if s < lowest:
                drop, lowest = e, s
        eval_remove(E, drop, st.e_label, st.e_f, st.e_flips, st.e_since, st.block, n)
    eval_put(
        E, E.meta[COUNT], idx, val, sq, st.e_label, st.e_f, st.e_flips, st.e_since, st.block, st.krow, n, yt, f, rnd
    )


@njit(cache=True)
def removal_choice(st, mode, n, m):
    """Steps 1a–1c: the support vector to remove (ties to the lowest slot)."""
    alpha, label, fsv, gram = st.alpha, st.label, st.fsv, st.gram
    best, best_score = 0, -math.inf
    for j in range(n):
        if mode == CKS_MARGIN:  # largest margin after its own removal
            score = label[j] * (fsv[j] - alpha[j] * gram[j, j])
        elif mode == SUPPORT:  # fewest errors on the support set (eq. 3)
            errors = 0.0
            for k in range(n):
                if label[k] * (fsv[k] - alpha[j] * gram[j, k]) <= 0.0:
                    errors += 1.0
            score = -errors
        else:  # fewest errors on the evaluation set
            errors = 0.0
            for e in range(m):
                if st.e_label[e] * (st.e_f[e] - alpha[j] * st.block[e, j]) <= 0.0:
                    errors += 1.0
            score = -errors
        if score > best_score:
            best, best_score = j, score
    return best


@njit(cache=True)
def new_alpha(h, yt, f, kxx):
    """The signed coefficient of x_t by the update rule of Fig. 2."""
    if h.update == PERCEPTRON_RULE:
        a = 1.0
    elif kxx <= 0.0:
        a = 0.0
    elif h.update == MIRA:
        a = min(1.0, max(0.0, -yt * f / kxx))
    else:
        a = min(h.cost, max(0.0, (1.0 - yt * f) / kxx))
    return a * yt


@njit(cache=True)
def drop_redundant(S, book, st, beta, rnd):
    """CKS variable size: drop every support vector still classified with margin ≥ β without itself."""
    while S.meta[COUNT] > 0:
        best, best_margin = 0, -math.inf
        for j in range(S.meta[COUNT]):
            margin = st.label[j] * (st.fsv[j] - st.alpha[j] * st.gram[j, j])
            if margin > best_margin:
                best, best_margin = j, margin
        if best_margin < beta:
            break
        retire(S, book, st.alpha, st.avg_sum, st.avg_stamp, best, rnd)
        remove_slot(S, best, st.alpha, st.avg_sum, st.avg_stamp, st.label, st.fsv, st.gram, st.krow)


@njit(cache=True)
def removal_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, fsv, gram, krow, E, block = st.alpha, st.fsv, st.gram, st.krow, st.E, st.block
    mode = h.eval_set
    keeps_eval = mode == ALL or mode == SAMPLE or mode == FLIP
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        if keeps_eval and not (sv_fits(E, indptr[t + 1] - indptr[t]) and E.meta[COUNT] < block.shape[0]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        if mode == ALL or mode == SAMPLE:
            sample_stream(E, st, book, mode, h.eval_size, idx, val, sq, n, yt, f, rnd)
        if yt * f <= 0.0:
            counters[MISTAKES] += 1
        elif yt * f > h.beta:
            continue
        else:
            counters[MARGIN_UPDATES] += 1
        if mode == FLIP:
            flip_set(E, st, h.eval_size, idx, val, sq, n, yt, f, rnd)
        m = E.meta[COUNT]
        if n >= h.budget:
            best = removal_choice(st, mode, n, m)
            f -= alpha[best] * krow[best]
            retire(S, book, alpha, st.avg_sum, st.avg_stamp, best, rnd)
            if keeps_eval:
                shift_eval(st.e_f, st.e_flips, block, m, best, -alpha[best])
                for e in range(m):
                    block[e, best] = block[e, n - 1]
            remove_slot(S, best, alpha, st.avg_sum, st.avg_stamp, st.label, fsv, gram, krow)
            n -= 1
        kxx = self_kernel(K, sq)
        a = new_alpha(h, yt, f, kxx)
        for j in range(n):  # steps 2–4, keeping f(x_j) and the Gram matrix current
            fsv[j] += a * krow[j]
            gram[n, j] = krow[j]
            gram[j, n] = krow[j]
        gram[n, n] = kxx
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, a, rnd)
        st.label[n] = yt
        fsv[n] = f + a * kxx
        if keeps_eval:  # k(x_e, x_t) for the evaluation set: the new support vector's column
            kernel_row(E, K, book.scratch, idx, val, sq, st.e_krow)
            for e in range(m):
                block[e, n] = st.e_krow[e]
            shift_eval(st.e_f, st.e_flips, block, m, n, a)
        if h.size == VARIABLE:
            drop_redundant(S, book, st, h.beta, rnd)
    return y.shape[0]


class CachedScoresMixing(Mixing):
    remade = ("fsv",)

    def after_mix(self, learner) -> None:
        """The cached scores f(x_j) of a mixed model, Kα (a mix keeps each vector's first label: the label
        of the example that first brought it, as the contract keeps every per-slot number)."""
        n = len(learner.support)
        learner.slot["fsv"][:n] = learner.gram() @ learner.slot["alpha"][:n]


@register
class BudgetPerceptron(KernelLearner):
    name = "budget-perceptron"
    summary = (
        "Crammer–Kandola–Singer Budget Perceptron: on a margin error with B stored, remove the SV "
        "with the largest margin after its own removal"
    )
    paper = "Crammer, Kandola, Singer, NIPS 2003; Weston, Bordes, Bottou, AISTATS 2005, Figs. 1, 2"
    params = (BUDGET, BETA, UPDATE, COST, SIZE)
    slot_arrays = KernelLearner.slot_arrays | {"label": "vector", "fsv": "vector", "gram": "square"}
    rebuilt = {"gram": gram_of_support}
    rebuilt_exactly = frozenset(rebuilt)  # the same kernel values
    evicts = True
    constants = {"eval_set": CKS_MARGIN, "eval_size": 1}
    mixing = CachedScoresMixing()
    loop = removal_range

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._init_eval(1, 1)

    def _init_eval(self, entries: int, nnz: int) -> None:
        self.evalset = SupportSet(capacity=entries, pool_capacity=nnz)
        self.eval = {name: np.zeros(entries) for name in EVAL_ARRAYS}
        self.eval_block = np.zeros((entries, self.support.capacity))  # k(x_e, sv_j)

    def _state_arrays(self):
        return self.slot | self.eval | {"E": self.evalset.arrays, "block": self.eval_block}


@register
class TighterPerceptron(BudgetPerceptron):
    name = "tighter-perceptron"
    summary = (
        "Tighter Budget Perceptron: on a margin error with B stored, remove the SV whose removal "
        "leaves the fewest errors on an evaluation set"
    )
    paper = "Weston, Bordes, Bottou, AISTATS 2005, Figs. 2, 3, 5 and §3.2"
    params = (BUDGET, BETA, UPDATE, COST, EVAL_SET, EVAL_SIZE)
    constants = {"size": FIXED}
    mixing = Unmixable("its evaluation set is drawn from one learner's own stream; an average of models has none")
    # the evaluation set's kernel block is rebuilt as exactly as the Gram matrix (support.kernel_row)
    rebuilt = BudgetPerceptron.rebuilt | {"eval_block": lambda self, name: self._rebuild_eval_block()}
    rebuilt_exactly = frozenset(rebuilt)

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        if self.hyper["eval_set"] in ("random", "flip"):
            # sized for the first entries, not for q: the set grows with the examples seen
            # (`_reserve_extra`), so memory is bounded by the stream, never by --eval-size alone
            first = min(self.hyper["eval_size"], 63) + 1
            self._init_eval(first, 64 * first)

    def _rebuild_eval_block(self) -> None:
        m = len(self.evalset)
        self.eval_block[:m, : len(self.support)] = self.kernel_matrix(*self.evalset.to_csr())

    def _reserve_extra(self, nnz: int) -> None:
        self.evalset.reserve(len(self.evalset) + 1, nnz)
        self._fit_eval_arrays()

    def _resize(self, capacity: int) -> None:
        super()._resize(capacity)
        self._fit_eval_arrays()

    def _fit_eval_arrays(self) -> None:
        rows, cols = self.evalset.capacity, self.support.capacity
        if self.eval["e_f"].shape[0] < rows:
            for name in EVAL_ARRAYS:
                grown = np.zeros(rows)
                grown[: self.eval[name].shape[0]] = self.eval[name]
                self.eval[name] = grown
        if self.eval_block.shape != (max(rows, self.eval_block.shape[0]), max(cols, self.eval_block.shape[1])):
            grown = np.zeros((max(rows, self.eval_block.shape[0]), max(cols, self.eval_block.shape[1])))
            grown[: self.eval_block.shape[0], : self.eval_block.shape[1]] = self.eval_block
            self.eval_block = grown

    def state(self):
        header, arrays = super().state()
        m, n = len(self.evalset), len(self.support)
        arrays["eval_indptr"], arrays["eval_indices"], arrays["eval_values"] = self.evalset.to_csr()
        for name in EVAL_ARRAYS[:-1]:
            arrays[name] = self.eval[name][:m].copy()
        if "eval_block" not in self.stale:
            arrays["eval_block"] = self.eval_block[:m, :n].copy()
        return header, arrays

    @classmethod
    def saved_arrays(cls, header, members):
        out = super().saved_arrays(header, members)
        n = out["sv_indptr"][0][0] - 1
        m = statecheck.vector_length(members, "eval_indptr") - 1
        nnz = statecheck.vector_length(members, "eval_indices")
        out.update(
            {
                "eval_indptr": ((m + 1,), statecheck.I64),
                "eval_indices": ((nnz,), statecheck.I32),
                "eval_values": ((nnz,), statecheck.F64),
                "eval_block": ((m, n), statecheck.F64),
            }
        )
        out.update({name: ((m,), statecheck.F64) for name in EVAL_ARRAYS[:-1]})
        return out

    @classmethod
    def check_saved(cls, header, arrays):
        super().check_saved(header, arrays)
        statecheck.check_csr("eval", arrays["eval_indptr"], arrays["eval_indices"], header["n_features"])
        examples = int(arrays["counters"][0]) if len(arrays["counters"]) else 0
        if (arrays["e_since"] > examples).any():  # Fig. 5 divides by the rounds since an entry came
            raise ValueError(f"e_since holds a round after the {examples} examples seen")

    @classmethod
    def from_state(cls, header, arrays):
        self = super().from_state(header, arrays)
        self.evalset = SupportSet.from_csr(arrays["eval_indptr"], arrays["eval_indices"], arrays["eval_values"])
        m, n = len(self.evalset), len(self.support)
        self.eval = {name: np.zeros(self.evalset.capacity) for name in EVAL_ARRAYS}
        for name in EVAL_ARRAYS[:-1]:
            self.eval[name][:m] = arrays[name]
        self.eval_block = np.zeros((self.evalset.capacity, self.support.capacity))
        if "eval_block" in arrays:
            self.eval_block[:m, :n] = arrays["eval_block"]
        else:
            self.stale.add("eval_block")
        return self
