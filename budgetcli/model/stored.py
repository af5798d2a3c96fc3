"""A model as its file stores it, beside its learner's state (Model.save, Model.load): the header fields and
arrays it writes (`contents`), each 1-D array in the narrowest dtype that holds it exactly; the checks of
what a file holds, the loader's and the saver's alike (a file from anybody); an earlier layout's feature
indices brought to today's."""

from __future__ import annotations

import math

import numpy as np

from .. import __version__
from ..base import registry
from ..learning import statecheck
from ..learning.labels import labels_from_dict
from . import scaling as scaling_
from .spec import weight_pairs


def contents(model, resume: bool) -> tuple[dict, dict, int | None]:
    """(header, arrays, evicted_folded) of the file Model.save writes of `model` (`resume`: with the resume
    state); the evicted vectors whose part the file's running average holds folded (Model.evicted_folded)."""
    learner = model.learner
    header, arrays = learner.state() if resume else learner.portable_state()
    evicted_folded = model.evicted_folded
    if model.hypothesis != "running-average":  # what only the average needs; a plain model stays compact
        for name in learner.average_arrays:
            arrays.pop(name)
    else:
        predicting = model.hypothesis_learner()  # the averaged coefficients, as the file's reader makes them: finite
        folded = learner.fold_archive(arrays, predicting, resume)  # its running sums hold the archive folded in
        if folded is not None and evicted_folded is not None:  # Model.inexact_resume; none: an earlier build's
            evicted_folded += folded
            header["evicted_folded"] = evicted_folded
    header["labels"] = model.labels.to_dict()
    if model.task.name != "classification":  # a file without the field is a classification model
        header["task"] = model.task.name
    header["hypothesis"] = model.hypothesis
    header["resume_state"] = resume
    if model.sharding is not None:
        header["sharding"] = model.sharding
    if model.run is not None:
        header["run"] = model.run
    if model.calibration is not None:
        header["calibration"] = model.calibration
    if model.first_index != 1:
        header["first_index"] = model.first_index
    if model.scaling is not None:
        header["scaling"] = model.scaling.header()
        arrays |= model.scaling.arrays()
    if model.class_weight:
        header["class_weight"] = weight_pairs(model.class_weight)
    header["library_version"] = __version__
    return header, {name: narrowest(a) for name, a in arrays.items()}, evicted_folded


def check_state(learner_cls, header: dict, arrays: dict) -> None:
    """What a saved state must satisfy, for the loader and for Model.save alike: ValueError or
    TypeError naming the field."""
    learner_cls.check_saved(header, arrays)
    if header.get("calibration") is not None:
        from .calibration import check

        check(header["calibration"], max(len(labels_from_dict(header["labels"]).classes), 2))
    if header.get("hypothesis") == "running-average" and not set(learner_cls.average_arrays) <= set(arrays):
        raise ValueError(f"hypothesis = 'running-average' without {', '.join(learner_cls.average_arrays)}")
    labels_from_dict(header["labels"]).check(learner_cls, header)


def scaling_of(header: dict, arrays: dict):
    """The model's scaling (scaling.Scaling) from its header field and arrays, or None without one;
    ValueError naming what is wrong, arrays of a scaling without the field included."""
    if "scaling" not in header:
        if arrays:
            raise ValueError(f"arrays {', '.join(sorted(arrays))} without a scaling")
        return None
    kernel = header["kernel"].get("kind") if isinstance(header.get("kernel"), dict) else None
    return scaling_.Scaling.from_file(header["scaling"], arrays, kernel)


def class_weight_of(pairs) -> dict:
    """The class weights of a header's field: [[label, weight], ...], finite labels once each, weights finite
    and > 0; ValueError naming what is wrong (a file from anybody)."""
    if not isinstance(pairs, list) or len(pairs) > statecheck.MAX_CLASSES:
        raise ValueError(f"class_weight {str(pairs)[:80]!r} is not a list of [label, weight] pairs")
    out = {}
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) in (int, float) for v in pair)):
            raise ValueError(f"class_weight holds {str(pair)[:80]!r}, not a [label, weight] pair of numbers")
        label, weight = float(pair[0]), float(pair[1])
        if not math.isfinite(label) or label in out or not (weight > 0 and math.isfinite(weight)):
            raise ValueError(f"class_weight holds {pair!r}: a label twice, or not finite, or a weight not > 0")
        out[label] = weight
    return out


def shift_file_indices(header: dict, arrays: dict) -> None:
    """A model file written before index 0 was a feature stored each feature index less one: its
    vectors' indices (and n_features, the largest index + 1) are shifted up to the file's, in place."""
    if header.get("file_indices") is True or not isinstance(header.get("n_features"), int):
        return
    for name in ("sv_indices", "eval_indices"):
        if name in arrays and arrays[name].dtype.kind in "iu":
            shifted = arrays[name].astype(np.int64) + 1  # checked against n_features as any file's, after
            arrays[name] = shifted.astype(np.int32) if shifted.max(initial=0) <= np.iinfo(np.int32).max else shifted
    if header["n_features"] > 0:
        header["n_features"] += 1
    header["file_indices"] = True


def expected_arrays(header: dict, members: dict) -> dict:
    """modelfile.load's check before any array is read: the arrays are those the model's learner
    saves, with the shapes and dtypes its sizes give (statecheck.py); returns them, name -> (shape,
    dtype).  An algorithm this build lacks is left to Model.load's own message."""
    try:
        learner_cls = registry.get(header.get("algorithm"))
        expected = learner_cls.saved_arrays(header, members) | scaling_.saved_arrays(header, members)
    except (KeyError, TypeError, AttributeError):  # a header field missing or mistyped: worded by Model.load
        return {}
    except ValueError as exc:
        if "unknown algorithm" in str(exc):
            return {}
        raise
    statecheck.check_members(learner_cls.name, expected, members)
    return expected


def narrowest(a: np.ndarray) -> np.ndarray:
    """A 1-D array in the narrowest numeric dtype that holds every one of its values bit for bit (a
    model file's a9a support vectors: uint8 indices and values), else as it is."""
    if a.ndim != 1 or a.size == 0:
        return a
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32):
        if np.dtype(dtype).itemsize >= a.dtype.itemsize or not statecheck.widens_to(np.dtype(dtype), a.dtype):
            continue
        with np.errstate(invalid="ignore", over="ignore"):  # NaN, inf and large values do not round-trip
            narrow = a.astype(dtype)
        if narrow.astype(a.dtype).tobytes() == a.tobytes():
            return narrow
    return a
