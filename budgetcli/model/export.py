"""Models in LIBSVM's own model text format: export for `svm-predict`, import as a starting point.

A binary budgetlearn model is f(x) = Σ_i α_i k(x, sv_i) with the label map's +1 label where f > 0
(and the −1 label where f ≤ 0).  LIBSVM's C-SVC model for two classes predicts with

    dec(x) = Σ_i sv_coef_i k(x, SV_i) − rho,   label[0] if dec > 0, else label[1]

(svm.cpp, svm_predict_values), so the export writes, exactly:

- ``label POS NEG`` — our +1 label first, since LIBSVM gives dec > 0 to the first label, and the
  tie dec = 0 goes to the second label, as our f = 0 goes to the −1 label;
- ``rho`` — minus the kernel's offset (`kernels.Kernel.offset`): 0 for every model budgetlearn
  trains, which has no bias; an imported LIBSVM model's own ρ, which it keeps;
- ``sv_coef = α``, with the SVs ordered as LIBSVM orders them: the SVs "of" the first label
  (α > 0; in a C-SVC y_i α_i > 0 for class +1) first, then the others (α ≤ 0), each group in
  our slot order, and ``nr_sv`` the two group sizes.  For two classes LIBSVM sums over all SVs
  with the one coefficient row whatever the grouping, so the grouping only keeps the file
  meaningful to tools that read nr_sv;
- the kernel in LIBSVM's own parameterisation, which is ours (LIBSVM names poly 'polynomial'): rbf exp(−γ‖x−y‖²),
  poly (γ x·y + coef0)^degree, linear x·y (LIBSVM computes exp with the C library: its scores of a
  model made with `--rbf-exp vectorised` may differ from ours in the last bits, as its ‖x − y‖² does;
  an imported model keeps the C library's exp, `kernels.Kernel.exp`);
- numbers with 17 significant digits (``repr``), so LIBSVM reads back the same doubles.

LIBSVM reads labels as C ints, so a label map with a non-integer label is refused; so is a
label map that is not binary (multiclass models: LIBSVM's one-vs-one layout needs one
coefficient row per pair of classes, which a budgetlearn multiclass model does not have) and a
model that has seen only one label (LIBSVM's C-SVC format needs both).  Averaged models export
like any other: their coefficients are the averaged ones, and the evicted vectors an exact
average keeps are ordinary support vectors.

A novelty model (`--task novelty`) is LIBSVM's one-class SVM (`svm_type one_class`, `svm-train -s 2`),
whose svm-predict writes +1 where Σ_i sv_coef_i k(x, SV_i) − rho > 0 and −1 elsewhere (svm.cpp,
svm_predict_values), our +1 (normal) where g(x) = f(x) − ρ > 0: the export writes sv_coef = α and
rho = ρ − the kernel's offset, ρ the threshold the model predicts with (`algorithms/novelty.py`,
refitted), in the support set's slot order, and no label and no nr_sv lines, as svm_save_model.

Import reads such a file (binary C-SVC, linear/poly/rbf) back into a budgetlearn model of an
algorithm whose whole state is its coefficients (`IMPORTABLE`), so that `train --resume` can go
on learning from it; the Gram inverse of the Projectron family or the budget bookkeeping of the
evicting algorithms cannot be recovered from a LIBSVM file, so those are refused.  A one-class file
imports into norma-novelty (`IMPORTABLE_NOVELTY`), its rho as the learner's ρ (the file keeps no
examples to refit it on, so the model predicts with it until it learns: `--rho-fit`), its support
vectors as the expansion in file order, each term's age unknown (the truncation evicts in slot order
from there), its window τ the file's support vectors when they are more than the default 500.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from ..base.core import MAX_INDEX, DataError, shortest_text
from ..io.inputs import MAX_LINE_BYTES, bounded_lines, line_too_long
from ..numerics.kernels import Kernel
from ..learning.labels import BinaryLabels, kept_spelling
from ..learning.contract import NotAnExpansion
from ..base.modelfile import open_regular

# Algorithms whose state beyond the support set is only the coefficients (and counters), so a
# LIBSVM model is a complete starting point for them.
IMPORTABLE = ("perceptron", "pa", "pa-i", "pa-ii")
# the same for a regression (an ε-SVR or ν-SVR file): the filters whose state is their support set and
# coefficients (NORMA's truncation needs each term's age, which a LIBSVM file does not hold)
IMPORTABLE_REGRESSION = ("klms", "qklms")
IMPORTABLE_NOVELTY = ("norma-novelty",)  # a one-class file: NORMA's expansion and its ρ
SVR_TYPES = ("epsilon_svr", "nu_svr")  # LIBSVM's regressions: the same model, f(x) = Σ coef k(x, SV) − rho
# our kernel names -> LIBSVM's (svm.cpp, kernel_type_table)
LIBSVM_KERNEL_NAMES = {"linear": "linear", "poly": "polynomial", "rbf": "rbf"}


class ExportError(ValueError):
    """A model that the requested format cannot express; str(e) says why."""


def _binary_labels(model, path) -> BinaryLabels:
    labels = model.labels
    # A multiclass label map (issue 5) is another class: check the kind, never assume its internals.
    kind = labels.to_dict().get("kind") if hasattr(labels, "to_dict") else None
    if not isinstance(labels, BinaryLabels) or kind != "binary" or model.learner.multiclass:
        raise ExportError(
            f"{path}: LIBSVM's model format holds binary models only and this model's labels are "
            f"{kind or type(labels).__name__}; LIBSVM's one-vs-one multiclass layout cannot express it"
        )
    if labels.positive is None or labels.negative is None:
        raise ExportError(
            f"{path}: the model has seen only one label ({labels.spelling(labels.classes[0])}) "
            "and LIBSVM's C-SVC format needs both"
            if labels.classes
            else f"{path}: the model has seen no labels"
        )
    for v in labels.classes:
        if v != int(v) or abs(v) > 2**31 - 1:
            raise ExportError(
                f"{path}: LIBSVM stores labels as integers and this model's label {labels.spelling(v)} is not one"
            )
    return labels


def libsvm_text(model, path="model") -> str:
    """The model as LIBSVM model text; ExportError when LIBSVM cannot express it.  A regression model
    is an ε-SVR's (`svm_type epsilon_svr`): svm-predict's value is Σ sv_coef_i k(x, SV_i) − rho, which
    is f(x) with sv_coef = α and rho = −offset, in the support set's slot order.  A novelty model is a
    one-class SVM's (`svm_type one_class`): rho = ρ − offset, the module's docstring."""
    novelty = model.task.name == "novelty"
    regression = model.task.name == "regression"
    labels = None if regression or novelty else _binary_labels(model, path)
    learner = model.hypothesis_learner()
    if model.scaling is not None:
        raise ExportError(
            f"{path}: the model scales every example it scores (train --scale), which LIBSVM's model format "
            "cannot hold; to export, train on data scaled by `budgetlearn scale -s RANGES` (and give svm-predict "
            "data scaled by `budgetlearn scale -r RANGES`)"
        )
    try:
        indptr, indices, values, alpha = learner.expansion()
    except NotAnExpansion as exc:
        raise ExportError(f"{path}: {exc}: LIBSVM's model format cannot express it") from None
    kernel = learner.kernel
    n = len(alpha)
    if not np.all(np.isfinite(alpha)):
        raise ExportError(f"{path}: the model has non-finite coefficients")
    svm_type = "one_class" if novelty else "epsilon_svr" if regression else "c_svc"
    lines = [f"svm_type {svm_type}", f"kernel_type {LIBSVM_KERNEL_NAMES[kernel.kind]}"]
    if kernel.kind == "poly":
        lines.append(f"degree {int(kernel.degree)}")
    if kernel.kind in ("poly", "rbf"):
        lines.append(f"gamma {float(kernel.gamma)!r}")
    if kernel.kind == "poly":
        lines.append(f"coef0 {float(kernel.coef0)!r}")
    rho = (learner.threshold() if novelty else 0.0) - float(kernel.offset)
    lines += ["nr_class 2", f"total_sv {n}", f"rho {rho!r}" if rho else "rho 0"]
    if regression or novelty:  # svm_save_model writes no label and no nr_sv for a regression or one class
        order = np.arange(n)
    else:
        first = np.flatnonzero(alpha > 0)  # the SVs of LIBSVM's label[0], our +1 label
        second = np.flatnonzero(~(alpha > 0))
        order = np.concatenate([first, second])
        lines += [f"label {int(labels.positive)} {int(labels.negative)}", f"nr_sv {len(first)} {len(second)}"]
    lines.append("SV")
    for i in order.tolist():
        lo, hi = indptr[i], indptr[i + 1]
        feats = " ".join(f"{j}:{float(v)!r}" for j, v in zip(indices[lo:hi].tolist(), values[lo:hi].tolist()))
        lines.append(f"{float(alpha[i])!r} {feats}".rstrip() + " ")  # svm_save_model ends SV lines with a space
    return "\n".join(lines) + "\n"


# ---- import ------------------------------------------------------------------------------------

_HEADER_KEYS = {
    "svm_type",
    "kernel_type",
    "degree",
    "gamma",
    "coef0",
    "nr_class",
    "total_sv",
    "rho",
    "label",
    "nr_sv",
    "probA",
    "probB",
    "prob_density_marks",
}


def read_libsvm_model(path) -> dict:
    """Parse a LIBSVM binary C-SVC, ε-SVR or ν-SVR model file: {'svm_type', 'kernel', 'labels' (first,
    second; None for a regression), 'spellings' (the labels as written), 'rho', 'coef', 'indptr',
    'indices', 'values'}.  Errors are DataErrors naming file and line."""
    source = os.fspath(path)
    try:
        f = open_regular(source)
    except OSError as exc:
        raise DataError(source, 0, None, f"cannot open: {exc.strerror or exc}") from None
    with f:
        lines = _text_lines(f, source)
        header, header_end = _libsvm_header(lines, source)
        svm_type, kernel, labels, spellings, rho, total = _libsvm_header_values(header, source, header_end)
        coef, indptr, indices, values, lineno = _libsvm_support_vectors(lines, source, header_end)
    if len(coef) != total:
        raise DataError(source, lineno, None, f"total_sv {total} but {len(coef)} SV lines")
    return {
        "svm_type": svm_type,
        "kernel": kernel,
        "labels": labels,
        "spellings": spellings,
        "rho": rho,
        "coef": np.array(coef, np.float64),
        "indptr": np.array(indptr, np.int64),
        "indices": np.array(indices, np.int32),
        "values": np.array(values, np.float64),
    }


def _text_lines(f, source: str):
    """The lines of the binary file f as text, each at most MAX_LINE_BYTES as the data reader bounds
    them: a longer one is a DataError naming it, never read whole (a hostile file's one huge line)."""
    for lineno, (line, _) in enumerate(bounded_lines(f), start=1):
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise line_too_long(source, lineno)
        yield line.decode("utf-8", errors="replace")


def _libsvm_header(f, source: str) -> tuple[dict[str, list[str]], int]:
    """The header lines up to 'SV', by key, and the line number of 'SV'."""
    header: dict[str, list[str]] = {}
    lineno = 0
    for line in f:
        lineno += 1
        words = line.split()
        if not words:
            continue
        if words[0] == "SV":
            return header, lineno
        if words[0] not in _HEADER_KEYS:
            raise DataError(source, lineno, words[0], "not a LIBSVM model header line")
        header[words[0]] = words[1:]
    raise DataError(source, lineno, None, "no 'SV' line: not a LIBSVM model file")


def _libsvm_header_values(header: dict, source: str, header_end: int) -> tuple:
    """(svm_type, kernel, labels, their spellings, rho, total_sv) of a binary C-SVC model's header, or an
    ε-SVR's or ν-SVR's (labels and spellings None), checked."""

    def need(key):
        if key not in header or not header[key]:
            raise DataError(source, header_end, None, f"LIBSVM model without '{key}'")
        return header[key]

    svm_type = need("svm_type")[0]
    if svm_type not in ("c_svc", "one_class", *SVR_TYPES):
        raise DataError(
            source,
            header_end,
            svm_type,
            "only C-SVC, one-class, ε-SVR and ν-SVR (svm_type c_svc, one_class, epsilon_svr, nu_svr) models can "
            "be imported",
        )
    if need("nr_class")[0] != "2":
        raise DataError(source, header_end, header["nr_class"][0], "only binary models (nr_class 2) can be imported")
    kind = {v: k for k, v in LIBSVM_KERNEL_NAMES.items()}.get(need("kernel_type")[0])
    if kind is None:
        raise DataError(
            source, header_end, header["kernel_type"][0], "only linear, polynomial and rbf kernels can be imported"
        )
    try:
        kernel = Kernel(
            kind,
            float(header.get("gamma", ["1"])[0]),
            float(header.get("coef0", ["0"])[0]),
            int(header.get("degree", ["3"])[0]),
        )
        spellings = None if svm_type != "c_svc" else need("label")
        labels = None if spellings is None else [float(v) for v in spellings]
        rho = float(need("rho")[0])
        total = int(need("total_sv")[0])
    except ValueError as exc:
        raise DataError(source, header_end, None, f"bad header value ({exc})") from None
    if labels is not None and (len(labels) != 2 or not all(math.isfinite(v) for v in labels)):
        raise DataError(source, header_end, " ".join(header["label"]), "'label' must give two finite numbers")
    if not math.isfinite(rho):
        raise DataError(source, header_end, str(rho), "rho is not finite")
    return svm_type, kernel, labels, spellings, rho, total


def _libsvm_support_vectors(f, source: str, lineno: int) -> tuple:
    """(coef, indptr, indices, values, last line number) of the 'coef idx:val ...' lines after 'SV'."""
    coef, indptr, indices, values = [], [0], [], []
    for line in f:
        lineno += 1
        words = line.split()
        if not words:
            continue
        try:
            c = float(words[0])
            pairs = [w.split(":", 1) for w in words[1:]]
            idx = [int(i) for i, _ in pairs]
            val = [float(v) for _, v in pairs]
        except ValueError:
            raise DataError(source, lineno, line.strip()[:40], "bad SV line (expected 'coef idx:val ...')") from None
        if not math.isfinite(c) or any(not math.isfinite(v) for v in val):
            raise DataError(source, lineno, words[0], "non-finite number")
        if any(not 0 <= i <= MAX_INDEX for i in idx) or any(b <= a for a, b in zip(idx, idx[1:])):
            raise DataError(source, lineno, None, f"feature indices must be 0 to {MAX_INDEX:,} and increasing")
        coef.append(c)
        indices += idx
        values += val
        indptr.append(len(indices))
    return coef, indptr, indices, values, lineno


def import_libsvm(path, algorithm_cls, params: dict, seed: int = 0):
    """A budgetlearn Model with the LIBSVM model's support vectors, coefficients, kernel and labels (an
    ε-SVR's or ν-SVR's: a regression model, of a filter of IMPORTABLE_REGRESSION), ready for `train
    --resume`.  Its counters start at zero."""
    from ..learning.targets import NoveltyVerdicts, RealTargets
    from .model import Model

    m = read_libsvm_model(path)
    regression, novelty = m["svm_type"] in SVR_TYPES, m["svm_type"] == "one_class"
    importable = IMPORTABLE_REGRESSION if regression else IMPORTABLE_NOVELTY if novelty else IMPORTABLE
    if algorithm_cls.name not in importable:
        kind = "a regression (ε-SVR or ν-SVR)" if regression else "a one-class SVM" if novelty else "a C-SVC classifier"
        known = algorithm_cls.name in IMPORTABLE + IMPORTABLE_REGRESSION + IMPORTABLE_NOVELTY
        why = "" if known else f"{algorithm_cls.name} keeps state a LIBSVM model does not hold; "
        raise ExportError(f"{os.fspath(path)}: {why}the file is {kind}: import it into one of: {', '.join(importable)}")
    if not regression and not novelty and m["labels"][0] == m["labels"][1]:
        raise ExportError(f"{os.fspath(path)}: both labels are {shortest_text(m['labels'][0])}")
    # dec(x) = Σ coef_i k(x, SV_i) − ρ: the bias −ρ is the kernel's offset, kept by every command; a one-class
    # file's ρ is the novelty learner's own threshold
    kernel = dataclasses.replace(m["kernel"], offset=-m["rho"]) if m["rho"] and not novelty else m["kernel"]
    n = len(m["coef"])
    if novelty and n > algorithm_cls(kernel, **params).hyper["budget"]:
        params = {**params, "budget": n}  # the window τ holds every term of the file
    learner = algorithm_cls(kernel, seed=seed, **params)
    header, arrays = learner.state()  # a fresh learner's, its support set and coefficients the file's
    header["n_features"] = int(m["indices"].max()) + 1 if n and len(m["indices"]) else 0
    arrays.update({name: np.zeros(n) for name, kind in algorithm_cls.slot_arrays.items() if kind == "vector"})
    arrays.update(
        sv_indptr=m["indptr"], sv_indices=m["indices"], sv_values=m["values"], alpha=m["coef"], avg_stamp=np.ones(n)
    )  # in the hypothesis from round 1 on, for online-to-batch averages
    learner = algorithm_cls.from_state(header, arrays)
    if novelty:
        from ..learning.task import RHO

        learner.scalars[RHO] = m["rho"]
        labels = NoveltyVerdicts()
    elif regression:
        labels = RealTargets()
    else:  # LIBSVM's label[0] takes dec > 0: it is our +1 label
        first, second = m["labels"]
        spelt = dict(zip(m["labels"], m["spellings"]))
        labels = BinaryLabels(negative=second, positive=first, spellings={v: kept_spelling(v, spelt[v]) for v in spelt})
    # its features are numbered as its support vectors show: from 0 when index 0 occurs (Model.first_index)
    return Model(learner, labels, first_index=0 if (m["indices"] == 0).any() else 1)
