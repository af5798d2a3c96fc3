"""A trained model: the learner (kernel, algorithm, parameters, support set, coefficients,
counters, random state) plus the label map, saved in one model file (modelfile.py; what the file holds
beside the learner's state, and its checks: stored.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import __version__  # noqa: F401
from ..learning import algorithms, statecheck  # noqa: F401
from ..base import modelfile, registry
from . import scaling as scaling_, stored
from ..base.atomic import FileState
from ..learning.labels import BinaryLabels, MulticlassLabels, labels_from_dict
from ..base.modelfile import ModelFileError


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
    # evicted vectors whose part of the running average its learner holds folded onto the support vectors
    # without them (loaded from a file written without the resume state; `save` adds its archive's when it
    # writes one): a resume from its file is not exact.  None: not known (a file of an earlier build, which
    # folded them and did not say how many).  A run that goes on from the model starts it again at 0
    # (pipeline.train): what it keeps is complete for its own continuation.
    evicted_folded: int | None = 0
    # The feature index of an array's column 0: column j is index j + first_index (every array edge maps
    # so, io/arrays.py csr_chunk).  0 once index 0 occurred in the data the model learned from (a 0-based
    # file, as scikit-learn's dump_svmlight_file writes; load_svmlight_file's zero_based="auto" decides
    # alike), else 1.  The header keeps 0 only: a file without the field means 1, what every edge did
    # before the field (column j is index j + 1; an index 0 of such a file has no column).
    first_index: int = 1

    @property
    def task(self):
        """What the model learns (learning/task): its targets say it (a regression model's are RealTargets)."""
        from ..learning.task import of_targets

        return of_targets(self.labels)

    def refuse_task(self, edge: str) -> None:
        """ValueError, one line, when `edge` (a command or an interface that serves classification only)
        is given a model of another task: nothing there is silently wrong for it."""
        if self.task.name != "classification":
            raise ValueError(f"{edge} takes a classification model; this one is a {self.task.name} model")

    def learned_from(self, chunk) -> None:
        """Note how `chunk`, learned from, numbers its features (`first_index`)."""
        if self.first_index and chunk.holds_index_zero:
            self.first_index = 0

    scaling: object = None  # scaling.Scaling applied to every example before the learner (`train --scale`)
    # the file it was loaded from, as it was then (atomic.FileState): saved back to that path, it must
    # still be that file, or another run wrote it meanwhile and is not overwritten
    read_from: object = field(default=None, repr=False, compare=False)
    # each label's weight (label value -> w, those of 1 left out: spec.TrainSpec.class_weight), which a run
    # that goes on from the model keeps; saved in the header only when there is one
    class_weight: dict = field(default_factory=dict)

    # ---- prediction, for the Python API (api.py) ----------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The scores of the rows of X (numpy or scipy.sparse, column j the feature of index j +
        `first_index`):
        f(x) for a binary model (> 0: its +1 label), an n × classes matrix for a multiclass one, of the
        hypothesis the model predicts with (the averaged one for a running-average model)."""
        from ..io.arrays import csr_chunk

        return self.scorer().decision_function(csr_chunk(X, first_index=self.first_index))

    def predict(self, X, threshold: float = 0.0) -> np.ndarray:
        """The label values the model predicts for the rows of X, as `budgetlearn predict` does; a binary
        model's +1 label where f > `threshold` (`predict --threshold`)."""
        self.check_threshold(threshold)
        return self.predicted(self.decision_function(X), threshold)

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

    def predicted(self, scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """The label values of the model's scores: the top class, or the +1 label where f > threshold (0
        unless `predict --threshold` says) and the −1 label elsewhere (a model that saw one label predicts
        it everywhere): its label map's rule."""
        return self.labels.predicted(scores, threshold)

    def check_threshold(self, threshold: float) -> None:
        """ValueError when `threshold` (the score above which a binary model predicts its +1 label) is not a
        finite number, or is not 0 for a multiclass model (whose prediction is the top class)."""
        if not isinstance(threshold, (int, float, np.integer, np.floating)) or not math.isfinite(threshold):
            raise ValueError(f"threshold {threshold!r}: give a finite number")
        if threshold != 0 and self.task.name == "regression":
            raise ValueError("a threshold is for a binary model; a regression model predicts its score f(x) itself")
        if threshold != 0 and self.learner.multiclass:
            raise ValueError(
                f"a threshold is for a binary model; this one ({self.learner.name}) predicts the class of the top score"
            )

    def scorer(self):
        """What scores examples with the model's hypothesis (`hypothesis_learner`), scaling them first
        when the model scales (`train --scale`)."""
        learner = self.hypothesis_learner()
        return learner if self.scaling is None else self.scaling.scorer(learner)

    def hypothesis_learner(self):
        """The learner of the model's hypothesis: a running-average model's averaged coefficients, the
        archive of evicted vectors folded in as a written file holds them (`averaged_copy`), made once, on
        a copy (the online learner stays as it is); else the learner itself."""
        if self.hypothesis != "running-average" or self.predicting:
            return self.learner
        if getattr(self, "_averaged", None) is None or self._averaged[0] != self.learner.counter("examples"):
            learner = self.learner.averaged_copy()
            learner.set_coefficients(_averaged_finite(learner))
            self._averaged = (self.learner.counter("examples"), learner)
        return self._averaged[1]

    def as_written(self, hypothesis: str, run: dict | None = None) -> "Model":
        """The model a run whose spec names `hypothesis` writes (spec.HYPOTHESES): the online learner
        ("online", and online-to-batch's "last", which is f_T), the online learner with its running
        average ("running-average": `save` folds the part of evicted vectors onto the kept ones, in the
        file, so that it stays within the budget), or a batch average (`averaged`).  The learner is never
        changed: a checkpoint changes nothing in the run that goes on.  `run`: what decided it (the spec's
        `to_dict`), kept in the model file's header; a model that has one (resumed) keeps its own, so a
        checkpoint resumed and finished is the file of the uninterrupted run, byte for byte."""
        if hypothesis in ("average", "projected-average"):
            model = self.averaged(projected=hypothesis == "projected-average")
        else:
            model = self
            self.hypothesis = "running-average" if hypothesis == "running-average" else "online"
        if model.run is None:  # the run that made the model; a resumed run continues it with its settings
            model.run = run
        return model

    def mixed_once(self) -> bool:
        """A sharded run's mix of a learner whose shards are mixed once, at the end (mixing.Mixing.at_end: a
        filter's state beside its coefficients is no average): it predicts, and is not resumed."""
        return bool(self.learner.mixing.at_end and self.run is not None and self.run.get("sharding"))

    def inexact_resume(self) -> str | None:
        """Why `train --resume` from this model's file would not go on bit for bit as the run that wrote
        it would have (its file: the one it was loaded from or last saved to), or None when it would.
        A batch model is not resumed at all (a reason too)."""
        if self.hypothesis in ("average", "projected-average"):
            return "a batch model, not resumed (resume the online model it was made from)"
        if self.mixed_once():
            return (
                f"averaged from shards, not resumed ({self.learner.name}'s state beside its coefficients is no average)"
            )
        reasons = []
        learner = self.learner
        inexact = sorted(set(learner.rebuilt) - learner.rebuilt_exactly) if not self.resume_state else []
        if inexact:
            reasons.append(f"{', '.join(inexact)} rebuilt from the support vectors, up to rounding")
        folded = self._folded()
        if folded:
            reasons.append(folded)
        return "; ".join(reasons) or None

    def _folded(self) -> str:
        """What the file's running average holds folded in without the vectors ("": nothing)."""
        if self.hypothesis != "running-average" or not self.learner.evicts or self.evicted_folded == 0:
            return ""
        if self.evicted_folded is None:
            return (
                "the average holds the evicted vectors' part folded onto the support vectors (an earlier build's file)"
            )
        return f"the average holds the part of {self.evicted_folded:,} evicted vectors folded onto the support vectors"

    def resume_note(self, written: str) -> str | None:
        """The one line a run resumed from this model's file, writing the hypothesis `written`, says about
        it: the resume state it rebuilds, and whether it goes on bit for bit as one uninterrupted run;
        None when there is nothing to say."""
        learner = self.learner
        said = []
        if learner.stale:
            how = "bit for bit" if learner.stale <= learner.rebuilt_exactly else "up to rounding"
            names = ", ".join(sorted(learner.stale))
            said.append(f"rebuilt {names} from the {learner.support_size():,} support vectors, {how}")
        if self._folded():
            said.append(self._folded())
        inexact = bool(self.inexact_resume())
        if said and not self.resume_state:
            said[-1] += " (the model was saved without --save-resume)"
        kept, evicted, compressions = learner.archive_counts()
        if written in ("average", "projected-average") and compressions:
            # online-to-batch keeps every evicted vector; the running average kept a compressed archive
            said.append(
                f"its running average kept {kept:,} of the {evicted:,} vectors evicted before "
                f"this run (compressed {compressions:,} times), where online-to-batch keeps them all"
            )
            inexact = True
        if not said:
            return None
        return "; ".join(said) + (": this run goes on close to, not bit for bit as, one run" if inexact else "")

    def averaged(self, projected: bool = False) -> "Model":
        """The batch model of the averaged hypothesis (1/T) Σ_t f_t (its learner's `batch_average`: with
        `projected`, the part of the vectors an evicting learner discarded is projected onto the final
        support set, so the model keeps the budget)."""
        return Model(
            self.learner.batch_average(projected),
            self.labels,
            "projected-average" if projected else "average",
            first_index=self.first_index,
            scaling=self.scaling,
            class_weight=dict(self.class_weight),
        )

    def save(self, path, resume: bool = False, expect=None) -> None:
        """Write the model file: compact (what prediction needs, and the small state resuming needs),
        or with `resume` also the resume state (K⁻¹ and other |S|² arrays, a running average's archive
        of evicted vectors), for a bit-for-bit resume.  A running average's file holds the archive's
        part folded onto the support vectors (what `predict` uses, the same in both); with `resume`,
        the sums before that fold too (archive.KeepsEvicted.fold_archive), which a resume goes on from.
        Every 1-D array is stored in the narrowest dtype that holds its values exactly.  Written to
        the file it was loaded from (or to the one whose atomic.FileState is `expect`), it replaces it
        only if that file has not changed since (atomic.ChangedSinceRead otherwise)."""
        if expect is None and self.read_from is not None and self.read_from.names(path):
            expect = self.read_from
        try:  # every model written is one that loads: the loader's own checks, before anything is written
            header, arrays, evicted_folded = stored.contents(self, resume)
            expected = self.learner.saved_arrays(header, arrays) | scaling_.saved_arrays(header, arrays)
            statecheck.check_members(self.learner.name, expected, arrays)
            stored.check_state(type(self.learner), header, arrays)
            modelfile.save(path, header, arrays, expect)
        except (ValueError, TypeError, KeyError) as exc:
            raise UnloadableModel(
                f"the model would not load ({exc.args[0] if exc.args else exc}); nothing written"
            ) from None
        self.resume_state, self.evicted_folded = resume, evicted_folded  # what its file holds now

    @classmethod
    def load(cls, path, resume: bool = False) -> "Model":
        """A model from its file; without `resume` its resume state is not read (a learner loaded so
        rebuilds it before it learns)."""
        expected: dict = {}

        def expect(header, members):
            expected.update(stored.expected_arrays(header, members))

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
        stored.shift_file_indices(header, arrays)
        scaled = {name: arrays.pop(name) for name in scaling_.ARRAYS if name in arrays}
        try:
            learner_cls = registry.get(header["algorithm"])
            try:
                stored.check_state(learner_cls, header, arrays)
                # a running average of an evicting learner written by an earlier build: folded, not known how much
                earlier = header.get("hypothesis") == "running-average" and learner_cls.evicts
                evicted_folded = header.get("evicted_folded", None if earlier else 0)
                if evicted_folded is not None and not (type(evicted_folded) is int and 0 <= evicted_folded < 2**62):
                    raise ValueError(f"evicted_folded = {evicted_folded!r} is not a count of vectors")
                scaling = stored.scaling_of(header, scaled)
                class_weight = stored.class_weight_of(header.get("class_weight", []))
            except (ValueError, TypeError) as exc:
                raise ModelFileError(f"{path}: invalid model: {exc}") from None
            learner = learner_cls.from_file(header, arrays)
            labels = labels_from_dict(header["labels"])
            hypothesis = header.get("hypothesis", "online")
            first_index = header.get("first_index", 1)
            if first_index not in (0, 1) or isinstance(first_index, bool):
                raise ModelFileError(f"{path}: invalid model: first_index {first_index!r} is neither 0 nor 1")
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
            evicted_folded=evicted_folded,
            first_index=first_index,
            scaling=scaling,
            read_from=read_from,
            class_weight=class_weight,
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


def _averaged_finite(learner) -> np.ndarray:
    """The averaged coefficients a running-average model predicts with; ValueError when not finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        coef = learner.averaged_coefficients()
    if not np.isfinite(coef).all():
        raise ValueError("its averaged coefficients are not finite")
    return coef
