"""A learner's state as a model file holds it (contract.Learner's part): a JSON header and arrays (`state`,
`portable_state` without the resume state), what a file may hold (`saved_arrays`, `check_saved`: for files
from anybody, statecheck.py), a learner made back from them (`from_state`, `from_file`), and the resume
state a compact file left out, rebuilt before the learner learns again (`rebuild_stale`).  Each kind of
learner adds its hypothesis' arrays (`_support_state`, `_kept_state`)."""

from __future__ import annotations

from . import statecheck
from ..numerics.kernels import Kernel
from ..numerics.rng import seed_state
from .records import COUNTER_NAMES


class SavedState:
    """contract.Learner's state, to a model file and back (module docstring)."""

    def state(self) -> tuple[dict, dict]:
        """(JSON header, arrays) holding everything to predict and to resume: its kind's hypothesis,
        counters, random state, scalars (subclasses add theirs).  A resume-state array still to be
        rebuilt (`stale`) is left out, as the file it was loaded from left it out."""
        header = {
            "algorithm": self.name,
            "params": dict(self.hyper),
            "kernel": self.kernel.to_dict(),
            "seed": self.seed,
            "n_features": self.n_features,
            "file_indices": True,  # sv_indices are the data file's (format before: the file's − 1; model.load)
            "counters": {c: int(v) for c, v in zip(COUNTER_NAMES, self.counters)},
        }
        return header, self._support_state() | self._book_state() | self._kept_state()

    def _book_state(self) -> dict:
        return {"counters": self.counters.copy(), "rng_state": self.rng_state.copy(), "scalars": self.scalars.copy()}

    def _support_state(self) -> dict:
        """The support set's arrays of a model file (its kind's), first in the file."""
        raise NotImplementedError

    def _kept_state(self) -> dict:
        """The hypothesis' arrays of a model file after the counters (its kind's)."""
        raise NotImplementedError

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        """name -> (shape, dtype) of every array `state()` saves, in terms of the sizes a file declares
        (None in a shape: any size).  For model files from anybody (statecheck.py); its kind's arrays,
        and subclasses that save more extend it."""
        return {
            "counters": ((None,), statecheck.I64),  # older layouts had fewer
            "rng_state": (seed_state(0).shape, statecheck.U64),
            "scalars": ((cls.n_scalars,), statecheck.F64),
        }

    @classmethod
    def check_saved(cls, header: dict, arrays: dict) -> None:
        """ValueError naming the field when a saved state (header with the model's hypothesis, and
        arrays) is one the compiled loops must not see: see statecheck.py."""
        statecheck.check_common(header, arrays, COUNTER_NAMES)

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> SavedState:
        """The inverse of `state` (its kind restores its hypothesis, subclasses what they add, after this)."""
        params = {cls.renamed.get(k, k): v for k, v in header["params"].items()}
        self = cls(Kernel.from_dict(header["kernel"]), seed=header["seed"], **params)
        saved = arrays["counters"]
        if saved.shape[0] > self.counters.shape[0]:
            raise ValueError(f"the model has {saved.shape[0]} counters, this build knows {self.counters.shape[0]}")
        self.counters[: saved.shape[0]] = saved  # counters a later build added start at 0
        self.rng_state[:] = arrays["rng_state"]
        self.scalars[:] = arrays["scalars"]
        self.n_features = int(header["n_features"])
        return self

    @classmethod
    def from_file(cls, header: dict, arrays: dict) -> SavedState:
        """The learner of a model file's state (checked by `check_saved`): `from_state`, after its kind
        has read what a file holds that a state does not (archive.KeepsEvicted's sums before the fold)."""
        return cls.from_state(header, arrays)

    @classmethod
    def resume_arrays(cls, header: dict) -> set[str]:
        """The arrays of a model file that only resuming needs: its resume state (`rebuilt`)."""
        return set(cls.rebuilt)

    def portable_state(self) -> tuple[dict, dict]:
        """`state()` without the resume state (Gram matrices and inverses, O(|S|²)): what a compact model
        file holds and what a mix sends; a learner made from it rebuilds the rest before it learns."""
        header, arrays = self.state()
        for name in self.resume_arrays(header):
            arrays.pop(name, None)
        return header, arrays

    def rebuild_stale(self) -> None:
        """Make the resume state a compact model file did not hold now (`rebuilt`; once, O(|S|³))."""
        if self.stale:
            self._rebuild()

    def _rebuild(self) -> None:
        for name in sorted(self.stale):
            self.rebuilt[name](self, name)
        self.stale.clear()  # a resumed run's summary says so (model.Model.resume_note)
