"""Probabilities from a model's scores, as LIBSVM's `-b 1` makes them (`budgetlearn calibrate`).

Binary: Platt's sigmoid P(+1 | f) = 1 / (1 + exp(A f + B)) (A is normally negative), fitted to held-out
scores by the numerically careful Newton method of Lin, Lin and Weng ("A note on Platt's probabilistic
outputs for support vector machines", Machine Learning 68, 2007, Algorithm 1; LIBSVM's sigmoid_train):
targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), A = 0 and B = log((N₋ + 1)/(N₊ + 1)) to start, Newton steps on
the Hessian plus 1e-12·I with a backtracking line search (sufficient decrease 1e-4, the step halved down
to 1e-10), stopping when both gradient components are below 1e-5 or after 100 iterations.

Multiclass: pairwise coupling, as LIBSVM does for its one-against-one machines (Wu, Lin and Weng,
"Probability estimates for multi-class classification by pairwise coupling", JMLR 5, 2004, method 2;
LIBSVM's multiclass_probability).  A budgetlearn multiclass model scores each class, f_i(x), so the
pair (i, j) is the difference d_ij = f_i − f_j, whose sigmoid r_ij = P(i | i or j, x) is fitted, as a
binary one, to the held-out examples of classes i and j only (LIBSVM fits the decision values of the
pair's own machine on that pair's examples: the same construction on our scores).  A pair with no
held-out example keeps A = 0, B = log(1) = 0, r = 1/2.  Each r_ij is clipped to [1e-7, 1 − 1e-7], and
the class probabilities p solve min ½ pᵀQp, Σp = 1 (Q_tt = Σ_{j≠t} r_jt², Q_tj = −r_jt r_tj) by
Wu, Lin and Weng's fixed point, t = 0..k−1 in order, to max_t |(Qp)_t − pᵀQp| < 0.005/k or max(100, k)
sweeps: LIBSVM's stopping rule, so the figures compare.

Binary probabilities are clipped the same way, and LIBSVM's k = 2 rule holds: no coupling, p = (r, 1 − r).
"""

from __future__ import annotations

import math

import numpy as np

MIN_PROB = 1e-7  # LIBSVM's clipping of a pairwise probability


def fit_sigmoid(f: np.ndarray, positive: np.ndarray, max_iter: int = 100) -> tuple[float, float]:
    """(A, B) of Platt's sigmoid for scores f and the examples' classes (`positive` True for the +1
    class), by Lin, Lin and Weng's Algorithm 1 (module docstring)."""
    f = np.asarray(f, np.float64)
    n1 = float(np.count_nonzero(positive))
    n0 = float(len(f)) - n1
    t = np.where(positive, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    A, B = 0.0, math.log((n0 + 1.0) / (n1 + 1.0))
    value = _loss(f * A + B, t)
    for _ in range(max_iter):
        p, q = _probabilities(f * A + B)
        d2 = p * q
        h11 = 1e-12 + float(np.sum(f * f * d2))
        h22 = 1e-12 + float(np.sum(d2))
        h21 = float(np.sum(f * d2))
        d1 = t - p
        g1, g2 = float(np.sum(f * d1)), float(np.sum(d1))
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            new = _loss(f * (A + step * dA) + B + step * dB, t)
            if new < value + 1e-4 * step * slope:
                A, B, value = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        if step < 1e-10:  # the line search cannot decrease it further: (A, B) is as good as it gets
            break
    return A, B


def _probabilities(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, 1 − p) with p = 1/(1 + exp(z)), both without overflow or cancellation."""
    e = np.exp(-np.abs(z))
    low, high = e / (1.0 + e), 1.0 / (1.0 + e)
    return np.where(z >= 0, low, high), np.where(z >= 0, high, low)


def _loss(z: np.ndarray, t: np.ndarray) -> float:
    """−Σ t log p + (1 − t) log(1 − p), p = 1/(1 + exp(z)), in the form that cannot overflow."""
    return float(
        np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-np.abs(z))), (t - 1.0) * z + np.log1p(np.exp(-np.abs(z)))))
    )


def sigmoid(f: np.ndarray, A: float, B: float) -> np.ndarray:
    """P(+1 | f) = 1/(1 + exp(A f + B)), clipped to [MIN_PROB, 1 − MIN_PROB]."""
    return np.clip(_probabilities(np.asarray(f, np.float64) * A + B)[0], MIN_PROB, 1.0 - MIN_PROB)


def pairs(k: int) -> list[tuple[int, int]]:
    """The class pairs (i, j), i < j, in LIBSVM's order."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def couple(r: np.ndarray) -> np.ndarray:
    """Class probabilities from the k × k pairwise ones, r[i, j] = P(i | i or j) (module docstring)."""
    return couple_rows(r[None])[0]


def couple_rows(r: np.ndarray) -> np.ndarray:
    """`couple` of every row of an n × k × k array at once: LIBSVM's iteration (multiclass_probability)
    run on all rows together, each row frozen once it meets the stopping rule, so that every row gets
    the numbers the one-row loop gives it (tests/test_calibration.py holds that loop)."""
    n, k, _ = r.shape
    off = ~np.eye(k, dtype=bool)
    Q = -np.transpose(r, (0, 2, 1)) * r
    Q[:, ~off] = 0.0
    Q[:, np.arange(k), np.arange(k)] = np.sum(np.where(off, r * r, 0.0), axis=1)
    p = np.full((n, k), 1.0 / k)
    active = np.ones(n, dtype=bool)
    for _ in range(max(100, k)):
        rows = np.flatnonzero(active)
        if not len(rows):
            break
        Qa, pa = Q[rows], p[rows]
        Qp = np.einsum("nij,nj->ni", Qa, pa)
        pQp = np.einsum("ni,ni->n", pa, Qp)
        going = np.max(np.abs(Qp - pQp[:, None]), axis=1) >= 0.005 / k
        active[rows[~going]] = False
        rows, Qa, pa, Qp, pQp = rows[going], Qa[going], pa[going], Qp[going], pQp[going]
        for t in range(k):
            Qtt = Qa[:, t, t]
            diff = (pQp - Qp[:, t]) / Qtt
            pa[:, t] += diff
            pQp = (pQp + diff * (diff * Qtt + 2.0 * Qp[:, t])) / (1.0 + diff) / (1.0 + diff)
            Qp = (Qp + diff[:, None] * Qa[:, t]) / (1.0 + diff)[:, None]
            pa /= (1.0 + diff)[:, None]
        p[rows] = pa
    return p


def calibrate(scores: np.ndarray, classes: np.ndarray, k: int) -> dict:
    """The calibration (model header form) of a model with k classes from held-out scores: f per example
    (binary; `classes` 1 for the +1 label, 0 for the −1 label) or an n × k matrix (multiclass; `classes`
    the class indices)."""
    if scores.ndim == 1:
        A, B = fit_sigmoid(scores, classes == 1)
        return {"method": "platt", "A": [A], "B": [B], "examples": int(len(scores))}
    A, B = [], []
    for i, j in pairs(k):
        rows = (classes == i) | (classes == j)
        a, b = fit_sigmoid(scores[rows, i] - scores[rows, j], classes[rows] == i)
        A.append(a)
        B.append(b)
    return {"method": "platt-pairwise", "A": A, "B": B, "examples": int(len(scores))}


MIN_EXAMPLES = 10  # held-out examples of a class under which its fit is mostly the prior (a warning)


def calibrate_model(model, blocks) -> list[str]:
    """Fit `model.calibration` on held-out (chunk, scores) blocks (`calibrate`) and return what a user
    should not miss, as eval's warnings are returned (`budgetlearn calibrate` prints them, the Python
    API warns): labels the model never saw (left out of the fit, in eval's words), classes of the model
    with no held-out example (their pairs keep r = 1/2), classes with fewer than MIN_EXAMPLES (their fit
    is mostly Platt's prior, the probabilities stay near 1/2), and a fitted sigmoid that does not grow
    with the score (A ≥ 0: the held-out scores do not separate the labels, an outlying score or examples
    ranked the wrong way round), whose probabilities contradict the predictions.  ValueError when the
    data hold fewer than two of the model's labels: nothing can be fitted."""
    from ..base.core import unique
    from ..learning.metrics import unseen_warning

    labels = model.labels
    scores, classes, counts = [], [], {}
    for chunk, f in blocks:
        index = labels.index_of(chunk.labels)
        scores.append(f[index >= 0])
        classes.append(index[index >= 0])
        values, n = unique(chunk.labels, return_counts=True)
        for v, c in zip(values.tolist(), n.tolist()):
            counts[v] = counts.get(v, 0) + c
    classes = np.concatenate(classes) if classes else np.zeros(0, np.int64)
    if len(unique(classes)) < 2:
        raise ValueError(
            "the calibration data hold fewer than two of the model's labels: no probabilities can be fitted"
        )
    model_labels = labels.classes
    names = [labels.spelling(v) for v in model_labels]
    unseen = unseen_warning(counts, set(model_labels), labels.spelling, names, "they are left out of the fit")
    out = [unseen] if unseen else []
    k = len(model_labels)
    fitted = calibrate(np.concatenate(scores), classes, max(k, 2))
    per_class = np.bincount(classes, minlength=k)
    missing = [names[i] for i in range(k) if per_class[i] == 0]
    if missing:
        out.append(
            f"the held-out data hold no example of {', '.join(missing)}: the probabilities of "
            f"{'its' if len(missing) == 1 else 'their'} pairs are not fitted (1/2 each), and the most probable "
            "label may not be the predicted one; calibrate on data that hold every class"
        )
    few = [f"{per_class[i]:,} of {names[i]}" for i in range(k) if 0 < per_class[i] < MIN_EXAMPLES]
    if few:
        out.append(
            f"only {', '.join(few)} in the held-out data (fewer than {MIN_EXAMPLES}): the fit is mostly "
            "Platt's prior, the probabilities stay near 1/2 and the most probable label may not be the "
            "predicted one; calibrate on more held-out examples"
        )
    fitted_pairs = [(1, 0)] if fitted["method"] == "platt" else pairs(k)  # (i, j): P(i | i or j)
    backwards = [
        f"{names[i]} against {names[j]} (A = {a:.3g})"
        for (i, j), a in zip(fitted_pairs, fitted["A"])
        if a >= 0 and per_class[i] and per_class[j]
    ]
    if backwards:
        out.append(
            f"the fitted sigmoid of {', '.join(backwards)} does not grow with the score: the held-out scores "
            "do not separate these labels (an outlying score, or examples ranked the wrong way round), and the "
            "probabilities contradict the predictions"
        )
    model.calibration = fitted
    return out


def probabilities(calibration: dict, scores: np.ndarray) -> np.ndarray:
    """Class probabilities of each example: n × 2 for a binary model, columns (−1 label, +1 label); n × k
    for a multiclass one, in its class order."""
    A, B = calibration["A"], calibration["B"]
    if scores.ndim == 1:
        p = sigmoid(scores, A[0], B[0])
        return np.column_stack([1.0 - p, p])
    n, k = scores.shape
    r = np.zeros((n, k, k))
    for (i, j), a, b in zip(pairs(k), A, B):
        r[:, i, j] = sigmoid(scores[:, i] - scores[:, j], a, b)
        r[:, j, i] = 1.0 - r[:, i, j]
    if k == 2:
        return np.column_stack([r[:, 0, 1], r[:, 1, 0]])
    return couple_rows(r)


def check(calibration, classes: int) -> None:
    """ValueError naming the field when a model file's calibration is not one this module made."""
    if not isinstance(calibration, dict) or calibration.get("method") not in ("platt", "platt-pairwise"):
        raise ValueError("calibration is not a Platt calibration")
    expected = 1 if calibration["method"] == "platt" else classes * (classes - 1) // 2
    for name in ("A", "B"):
        values = calibration.get(name)
        if (
            not isinstance(values, list)
            or len(values) != expected
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)
        ):
            raise ValueError(f"calibration {name} is not {expected} finite numbers")
