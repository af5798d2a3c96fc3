"""Where a regression learner and a novelty detector keep their running numbers, in their `scalars`."""

# A regression learner's running sums, in its `scalars`: of its online (a priori) errors y_t − f_t(x_t),
# squared and absolute, and of the targets (their mean: eval's baseline), added as each example is learnt
# (so that a checkpoint or a resume holds them exactly).
SQUARED_ERROR, ABSOLUTE_ERROR, TARGET_SUM = 0, 1, 2
# A novelty detector's, in its `scalars`: its threshold ρ (the score is g(x) = f(x) − ρ), and the sum of the ρ of
# every hypothesis after a round, whose mean is the averaged hypothesis's ρ; the rounds it flagged (g ≤ 0, the
# one-class hinge's margin errors) are its counter `margin_updates`.
RHO, RHO_SUM = 0, 1
