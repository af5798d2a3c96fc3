"""A trained model: the learner (kernel, algorithm, parameters, support set, coefficients,
counters, random state) plus the label map, saved in one model file (modelfile.py)."""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__, modelfile, registry
from .labels import BinaryLabels
from .modelfile import ModelFileError


@dataclass
class Model:
    learner: object
    labels: BinaryLabels
    hypothesis: str = "online"  # or "average": the online-to-batch conversion, not resumable

    def averaged(self) -> "Model":
        """The averaged hypothesis (1/T) Σ_t f_t as a model on the same support set."""
        learner = type(self.learner).from_state(*self.learner.state())
        n = len(learner.support)
        learner.slot["alpha"][:n] = self.learner.averaged_alpha()
        return Model(learner, self.labels, "average")

    def save(self, path) -> None:
        header, arrays = self.learner.state()
        header["labels"] = self.labels.to_dict()
        header["hypothesis"] = self.hypothesis
        header["library_version"] = __version__
        modelfile.save(path, header, arrays)

    @classmethod
    def load(cls, path) -> "Model":
        header, arrays = modelfile.load(path)
        try:
            learner_cls = registry.get(header["algorithm"])
            learner = learner_cls.from_state(header, arrays)
            labels = BinaryLabels.from_dict(header["labels"])
            hypothesis = header.get("hypothesis", "online")
        except (KeyError, ValueError, TypeError) as exc:
            # A checksummed file that this build cannot interpret: an algorithm it lacks, or
            # a layout it does not know.
            raise ModelFileError(f"{path}: cannot use this model ({type(exc).__name__}: {exc})") from exc
        return cls(learner, labels, hypothesis)
