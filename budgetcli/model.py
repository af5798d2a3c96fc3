"""A trained model: the learner (kernel, algorithm, parameters, support set, coefficients,
counters, random state) plus the label map, saved in one model file (modelfile.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import __version__, algorithms, modelfile, registry, statecheck  # noqa: F401  (algorithms: registered)
from .atomic import FileState
from .labels import BinaryLabels, MulticlassLabels, labels_from_dict
from .modelfile import ModelFileError
from .projection import onto_kept
from .support import sv_put


# what a model predicts with, by its `hypothesis` (said by the train summary and `info`)
HYPOTHESES = {
    "online": "the last hypothesis f_T (resumable; train --average keeps the average)",
    "running-average": "the averaged hypothesis (1/T) Σ f_t (resumable)",
    "average": "the averaged hypothesis (1/T) Σ f_t (a batch model)",
    "projected-average": "the averaged hypothesis, evicted vectors projected (a batch model)",
    "last": "the last hypothesis f_T (a batch model)",
}


@dataclass
class Model:
    learner: object
    labels: BinaryLabels | MulticlassLabels
    # "online": predicts with the last hypothesis f_T and resumes; "running-average" (train --average):
    # holds the same online state, resumes it, and predicts with the average (1/T) Σ_t f_t of its
    # running sums (`load`); "average", "projected-average", "last": online-to-batch's
    # batch models, not resumable
    hypothesis: str = "online"
    resume_state: bool = True  # its file holds the resume state (--save-resume; files of format 1 all do)
    # a sharded run's checkpoint: its shards, --sync-every, and each shard's reading position and random
    # stream (distributed.ShardPool.sharding), for `train --resume` to go on where it stopped
    sharding: dict | None = None
    # the learner's coefficients are already the ones it predicts with (a running-average model loaded
    # for prediction holds its averaged coefficients in place of the online ones)
    predicting: bool = False
    run: dict | None = None  # what decided the model (spec.TrainSpec.to_dict), saved in the header
    calibration: dict | None = None  # Platt's sigmoid(s) for probabilities (calibration.py; `budgetlearn calibrate`)
    # the file it was loaded from, as it was then (atomic.FileState): saved back to that path, it must
    # still be that file, or another run wrote it meanwhile and is not overwritten
    read_from: object = field(default=None, repr=False, compare=False)

    # ---- prediction, for the Python API (api.py) ----------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The scores of the rows of X (numpy or scipy.sparse, 0-based columns = feature index − 1):
        f(x) for a binary model (> 0: its +1 label), an n × classes matrix for a multiclass one, of the
        hypothesis the model predicts with (the averaged one for a running-average model)."""
        from .estimator import csr_chunk

        return self.scorer().decision_function(csr_chunk(X, np.zeros(X.shape[0])))

    def predict(self, X) -> np.ndarray:
        """The label values the model predicts for the rows of X, as `budgetlearn predict` does."""
        return self.predicted(self.decision_function(X))

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the rows of X (a calibrated model: `calibrate`): n × 2, columns the −1
        then the +1 label, for a binary model; n × classes, in `labels.classes` order, for a multiclass one."""
        return self.probabilities(self.decision_function(X))

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities of the model's scores (module calibration.py); ValueError when uncalibrated."""
        from . import calibration

        if self.calibration is None:
            raise ValueError(
                "the model is not calibrated: it gives no probabilities (budgetlearn calibrate, or "
                "calibrate() of the Python API, fits them on held-out data)"
            )
        return calibration.probabilities(self.calibration, scores)

    def predicted(self, scores: np.ndarray) -> np.ndarray:
        """The label values of the model's scores: the top class, or the +1 label where f > 0 and the
        −1 label where f ≤ 0 (a model that saw one label predicts it everywhere)."""
        if self.learner.multiclass:
            return np.asarray(self.labels.classes)[self.labels.predict_index(scores)]
        labels = self.labels
        positive = labels.positive if labels.positive is not None else labels.negative
        negative = labels.negative if labels.negative is not None else labels.positive
        return np.where(scores > 0, positive, negative)

    def scorer(self):
        """The learner predicting with the model's hypothesis: a running-average model's averaged
        coefficients, made once, on a copy (the online learner stays resumable)."""
        if self.hypothesis != "running-average" or self.predicting:
            return self.learner
        if getattr(self, "_averaged", None) is None or self._averaged[0] != self.learner.counter("examples"):
            learner = type(self.learner).from_state(*self.learner.portable_state())
            learner.set_coefficients(_averaged_finite(self.learner))
            self._averaged = (self.learner.counter("examples"), learner)
        return self._averaged[1]

    def as_written(self, hypothesis: str, run: dict | None = None) -> "Model":
        """The model a run whose spec names `hypothesis` writes (spec.HYPOTHESES): the online learner
        ("online", and online-to-batch's "last", which is f_T), the online learner with its running
        average ("running-average": the part of evicted vectors folded onto the kept ones, so the file
        stays within the budget), or a batch average (`averaged`).  `run`: what decided it (the spec's
        `to_dict`), kept in the model file's header; a model that has one (resumed) keeps its own, so a
        checkpoint resumed and finished is the file of the uninterrupted run, byte for byte."""
        if hypothesis in ("average", "projected-average"):
            model = self.averaged(projected=hypothesis == "projected-average")
        else:
            model = self
            if hypothesis == "running-average":
                self.learner.fold_retired()
                self.hypothesis = hypothesis
        if model.run is None:  # the run that made the model; a resumed run continues it with its settings
            model.run = run
        return model

    def averaged(self, projected: bool = False) -> "Model":
        """The averaged hypothesis (1/T) Σ_t f_t.

        Without evictions it lives on the online support set.  Vectors an evicting learner
        discarded (kept in `learner.retired` when `keep_retired` was on) are part of the exact
        average, which then grows beyond the budget; with `projected` their part is instead
        projected onto the span of the final support set (the RKHS-closest combination of the
        kept vectors), so the model keeps the budget."""
        online = self.learner
        learner = type(online).from_state(*online.state())
        n = len(learner.support)
        T = max(online.counter("examples"), 1)
        coef = online.averaged_coefficients()
        if online.retired:
            rows, sums = online.retired_rows(), online.retired_sums() / T
            if projected:
                coef = coef + onto_kept(learner, rows, sums).T
            else:
                indptr, indices, values = rows
                learner.make_room(n + len(indptr) - 1, len(indices))
                for j in range(len(indptr) - 1):
                    idx, val = indices[indptr[j] : indptr[j + 1]], values[indptr[j] : indptr[j + 1]]
                    sv_put(learner.support.arrays, n + j, idx, val, float(val @ val))
                coef = np.concatenate([coef, sums.T])
        learner.set_coefficients(coef)
        return Model(learner, self.labels, "projected-average" if projected else "average")

    def save(self, path, resume: bool = False, expect=None) -> None:
        """Write the model file: compact (what prediction needs, and the small state resuming needs),
        or with `resume` also the resume state (K⁻¹ and other |S|² arrays), for a bit-for-bit resume.
        Every 1-D array is stored in the narrowest dtype that holds its values exactly.  Written to
        the file it was loaded from (or to the one whose atomic.FileState is `expect`), it replaces it
        only if that file has not changed since (atomic.ChangedSinceRead otherwise)."""
        if expect is None and self.read_from is not None and self.read_from.names(path):
            expect = self.read_from
        header, arrays = self.learner.state() if resume else self.learner.portable_state()
        if self.hypothesis != "running-average":  # what only the average needs; a plain model stays compact
            for name in self.learner.average_arrays:
                arrays.pop(name)
        header["labels"] = self.labels.to_dict()
        header["hypothesis"] = self.hypothesis
        header["resume_state"] = resume
        if self.sharding is not None:
            header["sharding"] = self.sharding
        if self.run is not None:
            header["run"] = self.run
        if self.calibration is not None:
            header["calibration"] = self.calibration
        header["library_version"] = __version__
        arrays = {name: narrowest(a) for name, a in arrays.items()}
        try:  # every model written is one that loads: the loader's own checks, before anything is written
            statecheck.check_members(self.learner.name, self.learner.saved_arrays(header, arrays), arrays)
            _check_state(type(self.learner), header, arrays)
            if self.hypothesis == "running-average":
                _averaged_finite(self.learner)
            modelfile.save(path, header, arrays, expect)
        except (ValueError, TypeError, KeyError) as exc:
            raise UnloadableModel(
                f"the model would not load ({exc.args[0] if exc.args else exc}); nothing written"
            ) from None

    @classmethod
    def load(cls, path, resume: bool = False) -> "Model":
        """A model from its file; without `resume` its resume state is not read (a learner loaded so
        rebuilds it before it learns)."""
        expected: dict = {}

        def expect(header, members):
            expected.update(_expected_arrays(header, members))

        def skip(header):
            if resume or not isinstance(header.get("algorithm"), str) or header["algorithm"] not in registry.ALGORITHMS:
                return ()
            return registry.get(header["algorithm"]).resume_arrays(header)

        try:  # taken before it is read: a file replaced meanwhile is then refused when written back
            read_from = FileState(path)
        except (OSError, ValueError):
            read_from = None  # modelfile.load says why it cannot be read
        header, arrays = modelfile.load(path, expect=expect, skip=skip)
        arrays = {name: a.astype(expected[name][1]) if name in expected else a for name, a in arrays.items()}
        _file_indices(header, arrays)
        try:
            learner_cls = registry.get(header["algorithm"])
            try:
                _check_state(learner_cls, header, arrays)
            except (ValueError, TypeError) as exc:
                raise ModelFileError(f"{path}: invalid model: {exc}") from None
            learner = learner_cls.from_state(header, arrays)
            labels = labels_from_dict(header["labels"])
            hypothesis = header.get("hypothesis", "online")
            resume_state = header.get("resume_state", True) is not False
            sharding = header.get("sharding")
            if sharding is not None:
                try:
                    statecheck.check_sharding(sharding)
                except ValueError as exc:
                    raise ModelFileError(f"{path}: invalid model: {exc}") from None
        except ModelFileError:
            raise
        except KeyError as exc:
            # A header field or array this build's layout needs and the file's layout did not have.
            written_by = header.get("library_version", "an unknown version")
            missing = exc.args[0] if exc.args else "?"
            raise ModelFileError(
                f"{path}: written by budgetlearn {written_by} without {missing!r}, which budgetlearn {__version__} "
                f"needs for {header.get('algorithm', 'this model')}; retrain the model, or use budgetlearn "
                f"{written_by}"
            ) from None
        except (ValueError, TypeError) as exc:
            # A checksummed file that this build cannot interpret: an algorithm it lacks, or
            # a layout it does not know.
            raise ModelFileError(f"{path}: cannot use this model ({type(exc).__name__}: {exc})") from exc
        model = cls(
            learner,
            labels,
            hypothesis,
            resume_state,
            sharding,
            run=header.get("run") if isinstance(header.get("run"), dict) else None,
            calibration=header.get("calibration"),
            read_from=read_from,
        )
        if resume or hypothesis != "running-average":
            return model
        # to predict, a running-average model's averaged coefficients (its evicted vectors' part was
        # folded in when it was saved) take the online ones' place
        try:
            coef = _averaged_finite(learner)
        except ValueError as exc:  # running sums of a file from anybody
            raise ModelFileError(f"{path}: invalid model: {exc}") from None
        learner.set_coefficients(coef)
        model.predicting = True
        return model


class UnloadableModel(ValueError):
    """Model.save refused a model that the loader would refuse (its numbers overflowed)."""


def _check_state(learner_cls, header: dict, arrays: dict) -> None:
    """What a saved state must satisfy, for the loader and for Model.save alike: ValueError or
    TypeError naming the field."""
    learner_cls.check_saved(header, arrays)
    if header.get("calibration") is not None:
        from .calibration import check

        check(header["calibration"], max(len(labels_from_dict(header["labels"]).classes), 2))
    if header.get("hypothesis") == "running-average" and not set(learner_cls.average_arrays) <= set(arrays):
        raise ValueError(f"hypothesis = 'running-average' without {', '.join(learner_cls.average_arrays)}")
    labels_from_dict(header["labels"]).check(learner_cls, header)


def _file_indices(header: dict, arrays: dict) -> None:
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


def _averaged_finite(learner) -> np.ndarray:
    """The averaged coefficients a running-average model predicts with; ValueError when not finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        coef = learner.averaged_coefficients()
    if not np.isfinite(coef).all():
        raise ValueError("its averaged coefficients are not finite")
    return coef


def _expected_arrays(header: dict, members: dict) -> dict:
    """modelfile.load's check before any array is read: the arrays are those the model's learner
    saves, with the shapes and dtypes its sizes give (statecheck.py); returns them, name -> (shape,
    dtype).  An algorithm this build lacks is left to Model.load's own message."""
    try:
        learner_cls = registry.get(header.get("algorithm"))
        expected = learner_cls.saved_arrays(header, members)
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
