"""An algorithm's settings (contract.Learner's part): its parameters resolved and checked, each named by its
flag in messages (`resolve_params`, from the declarations of base/params.py), the settings as messages name
them (`describe`), and what it refuses: a kernel (`check_kernel`), settings that learn nothing
(`refuse_degenerate`), weights (`check_weights`).  It reads the class attributes `name`, `params` and
`weighting` the contract declares."""

from __future__ import annotations


class Settings:
    """contract.Learner's parameters and what it refuses (module docstring)."""

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        """The parameters with defaults filled in and every value checked: ValueError naming the flag."""
        known = {p.name: p for p in cls.params}
        unknown = [name for name in given if name not in known]
        if unknown:
            from ..base.registry import params  # every algorithm's, to name a known parameter by its flag

            shown = ", ".join(params()[n].flag if n in params() else repr(n) for n in unknown)
            raise ValueError(
                f"{shown} does not apply to {cls.name} "
                f"(it takes: {', '.join(p.flag for p in cls.params) or 'no parameters'})"
            )
        out = {}
        for p in cls.params:
            v = given.get(p.name)
            if v is None:
                out[p.name] = p.default
                continue
            try:
                v = p.type(v)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"{cls.name}: {p.flag} must be {p.requirement}, got {v!r}") from None
            if p.type is int and not -(2**62) < v < 2**62:  # the compiled loops take it as an int64
                raise ValueError(f"{cls.name}: {p.flag} = {v} is out of range")
            if not p.check(v):
                raise ValueError(f"{cls.name}: {p.flag} must be {p.requirement}, got {v}")
            out[p.name] = v
        return out

    def describe(self) -> str:
        """The settings, as messages name them: `NAME --flag V ..., kernel KIND (...)`."""
        given = " ".join(
            f"{p.flag} {self.hyper[p.name]:g}"
            if isinstance(self.hyper[p.name], float)
            else f"{p.flag} {self.hyper[p.name]}"
            for p in self.params
        )
        return f"{self.name}{' ' + given if given else ''}, kernel {self.kernel.describe()}"

    @classmethod
    def check_kernel(cls, kernel_kind: str, params: dict) -> None:
        """Raise ValueError when the algorithm is not defined for this kind of kernel with these
        (resolved) parameters: checked whenever a learner is made, a loaded one included."""

    @classmethod
    def refuse_degenerate(cls, kernel_kind: str, params: dict) -> None:
        """Raise ValueError when these (resolved) parameters with this kind of kernel provably learn
        nothing on any data.  Checked for a new model before any data is read (spec.TrainSpec),
        never when a model is loaded: a saved model keeps loading."""

    @classmethod
    def check_weights(cls) -> None:
        """ValueError, one line naming the algorithms that take them, when this one takes no weights."""
        if cls.weighting is None:
            from ..base.registry import ALGORITHMS

            weighted = ", ".join(name for name, c in sorted(ALGORITHMS.items()) if c.weighting is not None)
            raise ValueError(f"{cls.name} takes no example or class weights (the algorithms that do: {weighted})")
