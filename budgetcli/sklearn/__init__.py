"""scikit-learn estimators around the budgetlearn learners (optional: pip install 'budgetlearn[sklearn]'):
BudgetClassifier, and BudgetRegressor for real targets (`budgetlearn train --task regression`).

    from budgetcli.sklearn import BudgetClassifier
    clf = BudgetClassifier().fit(X, y)                    # projectron++, or mc-projectron++ for 3+ classes
    clf = BudgetClassifier("rbp", budget=200, gamma=0.04).fit(X, y)
    clf.partial_fit(X_more, y_more)                       # online: goes on from where fit stopped
    clf.predict(X_test), clf.decision_function(X_test)
    clf.calibrate(X_held_out, y_held_out).predict_proba(X_test)
    BudgetClassifier.from_model("a9a.model")              # a model file `budgetlearn train` wrote
    reg = BudgetRegressor("klms", gamma=0.5).fit(X, y)    # y real; predict gives f(x), score R²
    BudgetRegressor.from_model("mg30.model")              # `budgetlearn train --task regression`'s
    BudgetOneClass(nu=0.05).fit(X_normal).predict(X)      # novelty detection: +1 normal, -1 novel

X is a numpy array or a scipy.sparse matrix (kept sparse: the learners store sparse support vectors);
its column j is the feature of index j + 1 of a data file, as scikit-learn's load_svmlight_file reads
a 1-based file, or of index j for a model `from_model` loads that learned from a 0-based file (one
holding index 0, as dump_svmlight_file writes by default: the model's `first_index`).  Algorithm
parameters are keyword arguments with their canonical names (`eta`, `budget`, `beta`, `lambda_`,
`cost`, ... as `budgetlearn algorithms` lists them); get_params /
set_params / clone see them like the fixed ones.  An unknown algorithm or a parameter the algorithm
does not take is a ValueError at fit time (scikit-learn validates in fit, not in __init__), and so
are settings that provably learn nothing, as `budgetlearn train` refuses them.

`fit` is `budgetlearn train` on the same examples: one TrainSpec, the same pipeline, the same blocks,
so the same decisions and the same model (`to_model`); its warnings (a model no better than a
constant, ...) are Python warnings.  Conventions:
- algorithm=None is train's default: projectron++ for two classes, mc-projectron++ for more.  Every
  algorithm works on two classes; a multiclass one on any number of classes, a binary one refuses a
  third class as train does.
- average=None predicts with the hypothesis `budgetlearn train` writes for the algorithm: the averaged one
  (1/T) Σ f_t (scikit-learn's SGDClassifier(average=True)), but for the learners that track drift (spa,
  rbp, bogd, bogd++: the last one); average=True with the averaged one, average=False with the last, f_T.
- class_weight is `train -w LABEL W`: {class: weight}, or "balanced" (n_samples / (n_classes ·
  count of the class) over fit's y, as scikit-learn's; partial_fit refuses it, as SGDClassifier's does);
  sample_weight in fit and partial_fit weighs each row, times its class's (0: the row is left out).  A
  weight is the cost of the row's update (`budgetlearn algorithms` says how each algorithm takes it; the
  others refuse weights).  A model that goes on learning keeps the class weights it was fitted with.
- threshold: predict gives classes_[1] where decision_function > threshold (two classes; 0 by default,
  `budgetlearn predict --threshold`, on scikit-learn's score, which is the learner's f or −f).
- `fit` makes `epochs` passes over X in the given order (nothing shuffled: a seeded run is
  reproducible); `partial_fit` makes one pass and keeps all state, exactly like `train --resume`.
  Classes may arrive mid-stream (through `classes=` or from y).
- Numeric classes are the model's label values (a model file keeps them), and so are string classes
  that spell a number as a data file's label does ('-1' is the label -1); other classes take the
  smallest whole numbers ≥ 0 no class takes, in order of arrival (labels.label_values).  Two
  classes: decision_function > 0 means `classes_[1]` (scikit-learn's convention), and it is the
  learner's f, negated when the learner's +1 class is `classes_[0]` (the larger class came first,
  alone).  More: one column per class of `classes_`.
- predict_proba exists once the model is calibrated (`calibrate` on held-out data, or a calibrated
  model file): Platt's sigmoid as `budgetlearn calibrate` fits it.
- gamma=None is train's default 1/k, k the number of features of the first block (the last column
  holding a non-zero), as LIBSVM's 1/#features; sigma is the alternative width exp(−‖x−y‖²/(2σ²)).
- rbf_exp is `train --rbf-exp`: how the rbf kernel's exp is computed ("vectorised", budgetlearn's own,
  or "libm", the C library's); `from_model` takes the model's own.
- scale=True is `train --scale`: `fit` scales every feature onto [−1, 1] by the ranges of X (svm-scale's,
  a missing value counting 0), which the model keeps and applies to every X it scores; `partial_fit` and
  a model file's classifier (`from_model`) keep their own ranges.
"""

from .classifier import BudgetClassifier
from .one_class import BudgetOneClass
from .regressor import BudgetRegressor

__all__ = ["BudgetClassifier", "BudgetRegressor", "BudgetOneClass"]
