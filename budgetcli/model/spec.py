"""A training run's settings as one value: `TrainSpec`, built once at each edge (the CLI, `tune`, the
scikit-learn and River classes, a plain Python call), checked once when it is made, stored in the
model header (`to_dict`) and handed whole to `pipeline.train` and `distributed.train`.

Checked when made, each rule with its own message: the algorithm exists; its parameters (by their
canonical names) and the kernel are values it takes; the settings do not provably learn nothing
(`contract.Learner.refuse_degenerate`); the options go together (a sharded run has no `--shuffle`, and
no averaged hypothesis for an algorithm that evicts).  A spec that continues a model (`resumed`)
takes the model's own algorithm, kernel, parameters and seed, checked when the model was made:
which fields those are is declared here, on the fields (`FROM_MODEL`), so an edge refuses a resumed
run that sets one of them without keeping a list of options.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

from ..learning import algorithms  # noqa: F401  (algorithms: registered for lookups)
from ..base import bounds, registry
from ..base.core import KernelSpec, gamma_from_sigma

# What a model predicts with (model.HYPOTHESES): the online learner's last hypothesis f_T or its running
# average (both resumable), or a batch model of online-to-batch.
HYPOTHESES = ("online", "running-average", "average", "projected-average", "last")
AVERAGES = ("average", "projected-average")  # batch averages of f_1 .. f_T (online-to-batch)
BACKENDS = ("serial", "dask")
MAX_THREADS = 256  # --threads

_MODEL = {"resume": "model"}  # metadata: a resumed run takes this field from the model


@dataclass(frozen=True)
class Sharding:
    """One model over several inputs by iterative parameter mixing (distributed/)."""

    inputs: tuple  # paths, globs (one shard per match) or fsspec URLs
    backend: str = "serial"  # or "dask"
    jobs: int = 1  # dask: worker processes of a local cluster
    scheduler: str | None = None  # dask: a running cluster's scheduler
    sync_every: int | None = None  # examples per shard between synchronisations (None: 10,000, or a checkpoint's)
    sync: str | None = None  # "static", "dynamic" (None: static, or a checkpoint's)
    divergence: float | None = None  # Δ of dynamic averaging

    def __post_init__(self):
        if not self.inputs:
            raise ValueError("a sharded run needs at least one input")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r} (known: {', '.join(BACKENDS)})")
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError("--scheduler is for --backend dask")
        if self.sync not in (None, "static", "dynamic"):
            raise ValueError(f"unknown synchronisation {self.sync!r} (known: static, dynamic)")
        if self.sync == "static" and self.divergence is not None:
            raise ValueError("--divergence is for --sync dynamic")
        if self.divergence is not None and not (self.divergence > 0 and self.divergence < float("inf")):
            raise ValueError(
                f"--divergence {self.divergence!r}: give a positive number (a squared distance in the RKHS)"
            )
        if self.sync == "dynamic" and self.divergence is None:
            raise ValueError("--sync dynamic needs --divergence Δ")
        bounds.check_jobs(self.jobs)
        if self.sync_every is not None and not (type(self.sync_every) is int and self.sync_every >= 1):
            raise ValueError(f"--sync-every {self.sync_every!r}: give a whole number ≥ 1")


@dataclass(frozen=True)
class TrainSpec:
    """Everything that decides the model a training run writes (module docstring)."""

    algorithm: str | None = field(default=None, metadata=_MODEL)  # None: registry.DEFAULT, by the first block
    kernel: KernelSpec = field(default=KernelSpec(), metadata=_MODEL)
    params: dict = field(default_factory=dict, metadata=_MODEL)  # canonical names (`budgetlearn algorithms`)
    seed: int = field(default=0, metadata=_MODEL)
    epochs: int | None = None  # passes over the data (None: 1, or a resumed sharded checkpoint's)
    shuffle: bool = False  # shuffle every pass (seeded by `seed` and the pass)
    hypothesis: str | None = None  # what the written model predicts with (HYPOTHESES); None: `written`
    skip_bad_lines: bool = False
    checkpoint_every: int | None = None  # examples between two checkpoints (the caller writes them)
    save_resume: bool = False  # the written model also holds the resume state
    sharding: Sharding | None = None
    block_lines: int = 4096  # examples per block read (decides nothing in the model)
    threads: int = 1  # threads for the products of a learner that has them (decides nothing in the model)
    resumed: bool = False  # algorithm, kernel, params and seed are a model's, checked when it was made
    # scale every feature as svm-scale does, by the model's own ranges (scaling.py): True, from the data
    # (a first pass over a file, the first block of a stream), or given (ranges.Ranges: --scale-ranges)
    scale: object = field(default=False, metadata=_MODEL)
    # each label's weight, label value -> w > 0 (`train -w LABEL W`; labels left out weigh 1): the cost of an
    # update on an example of that class, as LIBSVM's C_i = w_i C (contract.Learner.weighting says how each
    # algorithm takes it); a sample weight multiplies it.  Weights of 1 are dropped: the unweighted run.
    class_weight: dict = field(default_factory=dict, metadata=_MODEL)
    # what the run learns (learning/task): "classification" (None: a new model's default, a resumed model's own)
    # or "regression" (`--task`); the algorithm must declare it (contract.Learner.tasks)
    task: str | None = None

    def __post_init__(self):
        self._check_scale()
        self._check_class_weight()
        self._check_task()
        fixed = registry.task_default(self.task)  # regression's and novelty's default, whatever the data
        if self.algorithm is None and self.sharding is not None and fixed and not self.resumed:
            object.__setattr__(self, "algorithm", fixed)
        if self.algorithm is None:  # chosen from the data (`choosing`), then checked as if given
            if self.sharding is not None:
                raise ValueError("a sharded run needs -a NAME (classification's default is chosen from one input)")
            if not self.resumed:
                _default_takes(self.params, self.task or "classification")
            return
        object.__setattr__(self, "algorithm", registry.canonical(self.algorithm))
        cls = registry.get(self.algorithm)
        if self.hypothesis is not None and self.hypothesis not in HYPOTHESES:
            raise ValueError(f"unknown hypothesis {self.hypothesis!r} (known: {', '.join(HYPOTHESES)})")
        for name in ("epochs", "checkpoint_every", "block_lines"):
            value = getattr(self, name)
            if value is not None and not (type(value) is int and value >= 1):
                raise ValueError(f"--{name.replace('_', '-')} {value!r}: give a whole number ≥ 1")
        if type(self.seed) is not int or self.seed < 0:
            raise ValueError(f"--seed {self.seed!r}: give a whole number ≥ 0")
        if not (type(self.threads) is int and 1 <= self.threads <= MAX_THREADS):
            raise ValueError(f"--threads {self.threads!r}: give a whole number in [1, {MAX_THREADS}]")
        if self.threads > 1:
            self._check_threads(cls)
        if not self.resumed:  # bad parameters and kernels, and settings that learn nothing
            from ..numerics.kernels import Kernel

            if self.class_weight:
                cls.check_weights()

            object.__setattr__(self, "params", cls.resolve_params(self.params))
            cls.resolve_params(self.params)  # a computed default the learner would refuse is refused now
            cls.check_kernel(Kernel.of(self.kernel, 1).kind, self.params)
            cls.refuse_degenerate(self.kernel.kind, self.params)
        if self.sharding is not None:
            if self.shuffle:
                raise ValueError("--shuffle is not available for a sharded run (several inputs or --backend)")
            if self.hypothesis == "running-average" and cls.evicts:
                raise ValueError(
                    f"--average: a sharded run does not keep the vectors {cls.name} evicts, which its "
                    "average needs; train without --average, or in one process"
                )

    def _check_task(self) -> None:
        """ValueError, one line, for a task this build does not know, or one the algorithm given does not
        learn (naming --task when the algorithm learns another), or class weights of a regression run."""
        from ..learning.task import TASKS

        if self.task is not None and self.task not in TASKS:
            raise ValueError(f"--task {self.task!r}: give one of {', '.join(TASKS)}")
        task = self.task or "classification"
        if self.algorithm is not None and not self.resumed:
            cls = registry.get(self.algorithm)
            if task not in cls.tasks:
                hint = f"; give --task {cls.tasks[0]}" if self.task is None else ""
                # the algorithms that run the same loop on this task (fogd's regression form, fogd-regression)
                forms = sorted(c.name for c in registry.ALGORITHMS.values() if c.loop is cls.loop and task in c.tasks)
                hint += f"; for {task}: {', '.join(forms)}" if forms and self.task is not None else ""
                raise ValueError(f"{cls.name} learns {' and '.join(cls.tasks)}, not {task}{hint}")
        if task != "classification" and self.class_weight:
            raise ValueError(f"class weights are for classification; a {task} run takes sample weights only")

    def _check_scale(self) -> None:
        from .ranges import Ranges

        if not (type(self.scale) is bool or isinstance(self.scale, Ranges)):
            raise ValueError(f"scale={self.scale!r}: give True (the data's ranges), False, or ranges.Ranges")
        if self.scale is not False and self.sharding is not None:
            raise ValueError(
                "--scale is not available for a sharded run: scale the shards by one range file "
                "(budgetlearn scale -s, then -r)"
            )

    def _check_class_weight(self) -> None:
        """class_weight as label value -> weight, both floats, each weight finite and > 0, those of 1 dropped."""
        try:
            given = dict(self.class_weight)
        except (TypeError, ValueError):
            raise ValueError(f"class_weight={self.class_weight!r}: give a mapping of label to weight") from None
        weights = {}
        for label, weight in given.items():
            try:
                value, w = float(label), float(weight)
            except (TypeError, ValueError):
                raise ValueError(f"class weight {label!r}: {weight!r}: give a label and its weight, numbers") from None
            if not math.isfinite(value):
                raise ValueError(f"class weight of label {label!r}: the label is not a finite number")
            if not (w > 0 and math.isfinite(w)):
                raise ValueError(f"class weight of label {label!r}: {weight!r} is not a finite number > 0")
            if w != 1.0:
                weights[value] = w
        object.__setattr__(self, "class_weight", weights)
        if weights and self.sharding is not None:
            raise ValueError("class weights are for a run in one process, not a sharded one")

    def _check_threads(self, cls) -> None:
        from ..numerics import sync

        if not cls.threaded:
            threaded = ", ".join(name for name, c in sorted(registry.ALGORITHMS.items()) if c.threaded)
            raise ValueError(f"--threads: {cls.name} runs on one thread (the threaded ones: {threaded})")
        if self.sharding is not None:
            raise ValueError("--threads is for a run in one process, not a sharded one")
        if not sync.available():
            raise ValueError("--threads needs a POSIX system")

    def choosing(self, n_labels: int) -> "TrainSpec":
        """This spec with its algorithm: the one given, else the default for data whose first block
        holds `n_labels` distinct labels (registry.DEFAULT); DefaultRefuses when that one does not take
        a parameter given."""
        kind = "three or more labels" if n_labels > 2 else "two labels"
        return self.defaulting(registry.default_for(n_labels), kind)

    def defaulting(self, name: str, kind: str) -> "TrainSpec":
        """This spec with its algorithm: the one given, else `name`, the default for `kind` of data;
        DefaultRefuses when that one does not take a parameter given."""
        if self.algorithm is not None:
            return self
        try:
            return replace(self, algorithm=name)
        except ValueError as exc:
            raise DefaultRefuses(f"{exc}: the default for {kind}, by the first block") from None

    @property
    def learner_class(self):
        if self.algorithm is None:
            raise ValueError("the algorithm is chosen from the data: TrainSpec.choosing(n_labels) first")
        return registry.get(self.algorithm)

    @property
    def written(self) -> str:
        """The hypothesis the written model predicts with: the one given, else the algorithm's default
        (`contract.Learner.default_hypothesis`: the averaged one, but for learners that track drift), but
        the last one for a sharded run of a learner that evicts (its shards keep no evicted vectors)."""
        if self.hypothesis is not None:
            return self.hypothesis
        cls = self.learner_class
        return "online" if self.sharding is not None and cls.evicts else cls.default_hypothesis

    def resuming(self, model) -> "TrainSpec":
        """This run's settings going on from `model`: its algorithm, kernel, parameters and seed (the
        fields `FROM_MODEL` names), and a running average when the model keeps one.  NotResumable when
        the model cannot go on as asked (`refuse_resume`)."""
        refuse_resume(model, self.hypothesis)
        if self.task is not None and self.task != model.task.name:
            raise NotResumable(
                f"a {model.task.name} model cannot go on learning {self.task} (--task {self.task}); train a new model",
                settings=True,
            )
        if model.scaling is not None and self.sharding is not None:
            raise NotResumable("a scaled model (train --scale) cannot go on in a sharded run", settings=True)
        learner = model.learner
        kernel = learner.kernel.spec()
        if not self.resumed:  # a spec made for the model (the CLI's, scikit-learn's) names nothing else
            self._refuse_other_settings(learner, kernel, model.class_weight)
        hypothesis = self.hypothesis
        if hypothesis is None:  # the model's own setting, as its kernel and parameters are
            hypothesis = model.hypothesis if model.hypothesis == "running-average" else "online"
        return replace(
            self,
            algorithm=learner.name,
            kernel=kernel,
            params=dict(learner.hyper),
            seed=learner.seed,
            hypothesis=hypothesis,
            resumed=True,
            class_weight=dict(model.class_weight),
            scale=False,  # the model's own scaling goes on (pipeline.train)
            task=None if model.task.name == "classification" else model.task.name,
        )

    def _refuse_other_settings(self, learner, kernel: KernelSpec, model_class_weight: dict) -> None:
        """NotResumable when this spec sets one of the fields FROM_MODEL to a value (other than its
        default) that is not the model's own, as `train --resume` refuses a given -a, kernel option,
        parameter or --seed: the run would silently go on with the model's."""
        default, other = TrainSpec(), []
        if self.algorithm is not None and self.algorithm != learner.name:
            other.append(f"algorithm {self.algorithm} (the model's: {learner.name})")
        for name in ("kind", "gamma", "degree", "coef0", "exp"):
            given, own = getattr(self.kernel, name), getattr(kernel, name)
            if given != getattr(default.kernel, name) and given != own:
                other.append(f"kernel {name} {given!r} (the model's: {own!r})")
        if self.kernel.sigma is not None and gamma_from_sigma(self.kernel.sigma) != kernel.gamma:
            other.append(f"kernel sigma {self.kernel.sigma!r} (the model's gamma: {kernel.gamma!r})")
        defaults = {p.name: p.default for p in learner.params}
        for name, given in self.params.items():
            if given != defaults.get(name) and given != learner.hyper.get(name):
                other.append(f"{name} {given!r} (the model's: {learner.hyper.get(name)!r})")
        if self.seed != default.seed and self.seed != learner.seed:
            other.append(f"seed {self.seed} (the model's: {learner.seed})")
        if self.scale is not False:
            other.append("scale (a resumed model keeps its own scaling)")
        if self.class_weight and self.class_weight != model_class_weight:
            other.append(f"class weights {self.class_weight} (the model's: {model_class_weight or 'none'})")
        if other:
            raise NotResumable(
                f"a resumed run continues the model's own settings; the spec gives {'; '.join(other)}", settings=True
            )

    def to_dict(self) -> dict:
        """What decided the model, as its header stores it ("run"; JSON): the settings, not where the run
        was (a sharded run's backend, workers and scheduler), so that every backend writes one file."""
        out = asdict(replace(self, scale=False, class_weight={}))
        out.pop("scale")
        out.pop("class_weight")
        if out["task"] in (None, "classification"):  # a classification model's record stays as it was
            out.pop("task")
        if self.class_weight:  # as the model header keeps them (Model.class_weight), none: the field left out
            out["class_weight"] = weight_pairs(self.class_weight)
        if self.scale is not False:  # the ranges themselves are the model's (Model.scaling)
            out["scale"] = "ranges" if self.scale is not True else "data"
        out["hypothesis"] = self.written
        if self.epochs is None and self.sharding is None:  # one pass: the same record from every edge
            out["epochs"] = 1
        if self.sharding is not None:
            out["sharding"] = {  # how the shards were mixed; which shards: the header's "sharding" sources
                "sync_every": self.sharding.sync_every,
                "sync": self.sharding.sync,
                "divergence": self.sharding.divergence,
            }
        for name in ("block_lines", "resumed", "save_resume", "checkpoint_every", "threads"):
            out.pop(name)
        return out


class DefaultRefuses(ValueError):
    """A setting that the default algorithm chosen from the first block (`TrainSpec.choosing`) does not take:
    the run's settings contradict its data (the CLI's usage error, exit 2)."""


class NotResumable(ValueError):
    """A model that cannot go on learning as a run asks; `settings`: the run's settings are what
    contradicts it (the CLI's usage error, exit 2), not the model itself (exit 1)."""

    def __init__(self, message: str, settings: bool = False):
        super().__init__(message)
        self.settings = settings


def refuse_resume(model, hypothesis: str | None) -> None:
    """The one rule of what may go on learning, for every edge that resumes (`train --resume`,
    `online-to-batch --resume`, `budgetcli.train(..., resume=)`, a sharded run, scikit-learn's
    `partial_fit` of a loaded model): NotResumable for a batch average (online-to-batch's average and
    projected-average keep no online state), and for a run that asks for an average (`hypothesis`) of
    a model that does not keep one when what it needs was not kept."""
    if model.hypothesis not in ("online", "running-average", "last"):
        raise NotResumable("an averaged batch model cannot be resumed; resume the online model")
    if model.mixed_once():
        raise NotResumable(
            f"a {model.learner.name} model averaged from shards cannot be resumed: its state beside the coefficients "
            "is no average of the shards'; train again"
        )
    if hypothesis in AVERAGES + ("running-average",) and model.hypothesis != "running-average":
        learner = model.learner
        if learner.evicts or not learner.average_kept:
            lost = (
                f"the vectors {learner.name} evicted before this run were not kept"
                if learner.evicts
                else "its file does not hold the running sums (a model trained without --average)"
            )
            last = "use --method last" if hypothesis in AVERAGES else "resume with --hypothesis last"
            raise NotResumable(f"{lost}, so its average cannot be completed; {last}", settings=True)


def weight_pairs(class_weight: dict) -> list:
    """Class weights as a model header keeps them: [[label, weight], ...] in label order (JSON keys are text)."""
    return [[label, class_weight[label]] for label in sorted(class_weight)]


def _default_takes(params: dict, task: str = "classification") -> None:
    """ValueError naming the flag when a parameter given without -a is taken by neither default algorithm
    of the task (registry.DEFAULT: which one runs is chosen from the first block, and checks the rest
    then), or when its value is one that every default that takes it refuses."""
    names = [registry.DEFAULT[task]] if task != "classification" else [registry.default_for(2), registry.default_for(3)]
    defaults = [registry.get(name) for name in dict.fromkeys(names)]
    for name, value in params.items():
        takers = [cls for cls in defaults if name in {p.name for p in cls.params}]
        if not takers:
            flag = registry.params()[name].flag if name in registry.params() else repr(name)
            wording = ", ".join(
                f"{cls.name} ({', '.join(p.flag for p in cls.params) or 'no parameters'})" for cls in defaults
            )
            raise ValueError(f"{flag} does not apply to the default algorithms, {wording}; give -a NAME")
        takers[0].resolve_params({name: value})  # a bad value: its message


FROM_MODEL = tuple(f.name for f in fields(TrainSpec) if f.metadata.get("resume") == "model")
