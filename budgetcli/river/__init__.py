"""A River classifier and regressor around the budgetlearn learners (optional: pip install 'budgetlearn[river]').
BudgetRegressor (real targets, `budgetlearn train --task regression`) shares everything below but the
labels: its targets are real numbers, its prediction the score f(x).  BudgetAnomalyDetector (`--task
novelty`, River's anomaly API) has no labels: its score is minus the novelty score g(x) (its docstring).

    from river import evaluate, metrics, preprocessing
    from budgetcli.river import BudgetClassifier
    model = preprocessing.StandardScaler() | BudgetClassifier("projectron++", eta=0.1, gamma=0.1)
    evaluate.progressive_val_score(dataset, model, metrics.Accuracy())

Any algorithm of `budgetlearn algorithms`, binary or multiclass; its parameters are keyword
arguments with their canonical names (`eta`, `budget`, `lambda_`, ...), checked when the
classifier is made.  BudgetClassifier() is `budgetlearn train`'s default, the same model from the
same examples: projectron++ predicting with its averaged hypothesis, or mc-projectron++ when the first
`learn_many` frame holds three labels or more (a stream learnt by `learn_one` gets projectron++, whose
third label is a ValueError naming mc-projectron++: give it for more labels).  `learn_one` is one
round of the online algorithm, exactly as `budgetlearn train` runs it; `learn_many` runs the same
rounds over a whole DataFrame in one call of the compiled loop (same model as `learn_one` row by
row, much less overhead per example).

Conventions:
- Features: any hashable names, given a column of the learner once (1, 2, ...: the feature index a
  saved model file uses), in order of first appearance
  (within a DataFrame: row by row, left to right).  A feature present with the value 0 takes its
  column too; None and NaN mean "absent"; a non-number or an infinite value is a ValueError.
  A feature never learnt from has no column: it meets no support vector, so at prediction time it
  adds nothing to any dot product, only its square to ‖x‖² (which the rbf kernel uses), the
  kernel's exact value for it.
- gamma=None is 1/d, d the number of features of the first learn_one example (of the first
  learn_many frame), as the CLI takes 1/(the largest feature index of its first block).
- Labels: any hashable values.  Multiclass algorithms number the classes in order of first
  appearance, as `budgetlearn train` does.  Binary algorithms take two labels (a third is a
  ValueError naming the multiclass algorithms): a label first seen alone is the learner's +1 when
  it is a number > 0 (True, 1, +1) and its −1 otherwise (False, 0, −1, a string), as the CLI
  treats a first block holding one label; the second label is the other side.  Bool labels are
  both known from the first one on (True is +1), River's binary convention, so `predict_proba_one`
  answers over {False, True}; a binary model that has learnt nothing answers so too.
- Predictions: binary `predict_one` is the +1 label when f(x) > 0, else the −1 label (as
  `budgetlearn predict`); `predict_proba_one` maps the score through the logistic function,
  P(+1 label) = 1 / (1 + exp(−f(x))), P(−1 label) = 1 − that.  Multiclass `predict_one` is the
  class with the highest f_i(x) (ties: the class seen first) and `predict_proba_one` the softmax of
  the f_i(x) over the known classes.  Neither is a calibrated probability.  A multiclass model
  that has learnt nothing predicts None ({} as probabilities), River's convention.
- Online mistakes: the learners count a round as a mistake when y·f(x) ≤ 0, or f_y(x) ≤ f_r(x) for
  some other class r, so a tie is a mistake whatever the label (which is how learning starts).
  River's progressive validation scores `predict_one` instead.  Binary: the counts differ only on
  rounds with f(x) = 0 whose label is the −1 label, which River counts right.  Multiclass: on rounds
  where the true class ties for the top score and was seen before the others tied with it (River
  right), and on a round that brings a new class while every known class scores below 0 (River
  wrong: it cannot name a label it has not seen; the learner's new class has f = 0, the highest).
- `save(path)` writes a budgetlearn model file that the CLI's predict, eval, info and `train
  --resume` read (features are LIBSVM indices 1, 2, ... in the map's order; a label is the number
  it is or spells, as a data file's label, else a whole number no other label takes: `to_model`); it
  also holds the feature map, the labels and the classifier's parameters, which
  `BudgetClassifier.load` reads.
- A refused example changes nothing: bad values and labels are refused before learning, and an
  example whose numbers overflow stops `learn_many` there, keeping only what the rows before it
  brought (which were learnt).
- Weights: `learn_one(x, y, w)` (River's convention; `learn_many(X, y, w)` a Series or array) weighs the
  example, times its label's `class_weight` ({label: weight}, `train -w`): the cost of its update, as
  `budgetlearn algorithms` says for each algorithm (the others refuse weights); w = 0 leaves it out.
"""

from .anomaly import BudgetAnomalyDetector
from .classifier import BudgetClassifier
from .regressor import BudgetRegressor

__all__ = ["BudgetClassifier", "BudgetRegressor", "BudgetAnomalyDetector"]
