"""Plain reference implementations of the second-order Perceptron family and of AVP / Ahpatron,
written from the papers: dense numpy, one example at a time, every matrix built from kernel
evaluations and every inverse a direct solve (no incremental updates, no tracked norms).

- sop: Cesa-Bianchi, Conconi, Gentile, SIAM J. Comput. 2005, kernel form
  ŷ = sign([y; 0]ᵀ (aI + G_t)⁻¹ k_t) over the mistakes so far plus x_t; `sop_primal` is the linear
  form of the same paper, ŷ = sign(vᵀ (aI + X Xᵀ + x xᵀ)⁻¹ x), for the linear-kernel identity.
- rbsop / lbsop: MLJ 2007 §4, SOP whose support set is capped at B by evicting a random / the
  oldest support vector (the newcomer takes its slot, the store's convention).
- avp / ahpatron: AAAI 2024 Algorithms 1 and 2 with eqs. 6–9.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .reference import SplitMix64, Trace


@dataclass
class SecondOrderTrace(Trace):
    paper_margins: list = field(default_factory=list)  # per round: [y; 0]ᵀ (aI + G_t)⁻¹ k_t (SOP only)
    norms: list = field(default_factory=list)  # per round: ‖f‖ after the round, from the Gram matrix
    halvings: list = field(default_factory=list)  # rounds (0-based) at which Ahpatron halved


def gram(X, k, rows, cols):
    return np.array([[k(X[i], X[j]) for j in cols] for i in rows]).reshape(len(rows), len(cols))


def sop(X, y, k, a=1.0, budget=None, policy="random", seed=0) -> SecondOrderTrace:
    """SOP (budget None), RBSOP (policy "random") or LBSOP ("oldest").  The score is
    g(x_t) = y_Sᵀ (aI + K_S)⁻¹ k_S(x_t); the paper's margin is recorded beside it."""
    tr = SecondOrderTrace()
    rng = SplitMix64(seed)
    slots, born = [], []
    for t in range(len(y)):
        if slots:
            yS = y[slots]
            kS = gram(X, k, slots, [t])[:, 0]
            g = float(yS @ np.linalg.solve(a * np.eye(len(slots)) + gram(X, k, slots, slots), kS))
            full = slots + [t]
            kt = gram(X, k, full, [t])[:, 0]
            paper = float(np.append(yS, 0.0) @ np.linalg.solve(a * np.eye(len(full)) + gram(X, k, full, full), kt))
        else:
            g = paper = 0.0
        tr.scores.append(g)
        tr.paper_margins.append(paper)
        mistake = y[t] * g <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if not mistake:
            continue
        if budget is None or len(slots) < budget:
            slots.append(t)
            born.append(t)
        else:
            j = rng.below(budget) if policy == "random" else int(np.argmin(born))
            slots[j], born[j] = t, t
    tr.support = slots
    tr.alpha = np.linalg.solve(a * np.eye(len(slots)) + gram(X, k, slots, slots), y[slots]) if slots else np.zeros(0)
    return tr


def sop_primal(X, y, a=1.0) -> list:
    """The linear second-order Perceptron of the SIAM paper (Fig. 1): its margins per round."""
    d = X.shape[1]
    M = a * np.eye(d)  # aI + Σ_mistakes x xᵀ
    v = np.zeros(d)
    margins = []
    for t in range(len(y)):
        x = X[t]
        w = np.linalg.solve(M + np.outer(x, x), v)
        margin = float(w @ x)
        margins.append(margin)
        if y[t] * margin <= 0:
            M += np.outer(x, x)
            v += y[t] * x
    return margins


def aggressive(
    X, y, k, radius=np.inf, step=1.0, epsilon=0.6, step_schedule="constant", budget=None, eta=5e-4, c=None
) -> SecondOrderTrace:
    """AVP (budget None; Algorithm 1) and Ahpatron (Algorithm 2).  ‖f‖ is recomputed as √(αᵀKα) every
    time; the halving solves (K₂ + ηI) θ = K₂₁ α₁ directly."""
    tr = SecondOrderTrace()
    slots, alpha = [], np.zeros(0)
    mistakes = 0

    def norm(sl, al):
        return float(np.sqrt(max(al @ gram(X, k, sl, sl) @ al, 0.0))) if sl else 0.0

    for t in range(len(y)):
        f = float(alpha @ gram(X, k, slots, [t])[:, 0]) if slots else 0.0
        tr.scores.append(f)
        m = y[t] * f
        tr.mistakes.append(m <= 0)
        mistakes += m <= 0
        update = m < 1 - epsilon
        tr.margin_updates.append(update and m > 0)
        if update:
            lam = step if step_schedule == "constant" else radius / np.sqrt(radius**2 + mistakes)
            if budget is not None and len(slots) >= budget:
                order = sorted(range(len(slots)), key=lambda i: (-abs(alpha[i]), i))
                keep = sorted(order[: len(slots) // 2])
                drop = sorted(order[len(slots) // 2 :])
                K2 = gram(X, k, [slots[i] for i in keep], [slots[i] for i in keep])
                K21 = gram(X, k, [slots[i] for i in keep], [slots[i] for i in drop])
                theta = np.linalg.solve(K2 + eta * np.eye(len(keep)), K21 @ alpha[drop])  # eq. 9
                beta = alpha[keep] + theta
                target = norm(slots, alpha) if c is None else c * radius  # c_t U
                nb = float(np.sqrt(beta @ K2 @ beta))
                alpha = beta * (target / nb) if nb > 0 else np.zeros(len(keep))
                slots = [slots[i] for i in keep]
                tr.halvings.append(t)
                f = float(alpha @ gram(X, k, slots, [t])[:, 0])
            slots = slots + [t]
            alpha = np.append(alpha, lam * y[t])
            nrm = norm(slots, alpha)
            if nrm > radius:
                alpha = alpha * (radius / nrm)
        tr.norms.append(norm(slots, alpha))
    tr.support = slots
    tr.alpha = alpha
    return tr


# Each algorithm's reference run for tests/test_contract.py (see tests/reference.py).
REFERENCES = {
    "sop": ({"sop_a": 0.7}, lambda X, y, k, seed: sop(X, y, k, 0.7)),
    "rbsop": ({"sop_a": 0.7, "budget": 8}, lambda X, y, k, seed: sop(X, y, k, 0.7, 8, "random", seed=seed)),
    "lbsop": ({"sop_a": 0.7, "budget": 8}, lambda X, y, k, seed: sop(X, y, k, 0.7, 8, "oldest", seed=seed)),
    "avp": ({"radius": 3.0, "epsilon": 0.7}, lambda X, y, k, seed: aggressive(X, y, k, 3.0, 1.0, 0.7)),
    "ahpatron": (
        {"budget": 8, "radius": 3.0, "step": 0.5},
        lambda X, y, k, seed: aggressive(X, y, k, 3.0, 0.5, 0.5, budget=8),
    ),
}
