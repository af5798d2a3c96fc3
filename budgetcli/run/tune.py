"""Many training runs at once: every (setting, permutation) pair of a parameter grid, in parallel.

A *setting* is one point of the grid (say η = 0.1, γ = 0.04); a *run* trains it over one seeded
permutation of the data with `pipeline.train`.  Runs go to joblib, so the same code runs on local
processes (loky), threads, a dask.distributed cluster or ray.

Why the results do not depend on the number of jobs or the backend:

* A run is a pure function of its arguments.  Its seed is derived from (--seed, permutation index)
  only — never from the worker, the order of execution or the number of jobs.  Run p of every
  setting uses seed `--seed + p`: `pipeline.train(..., shuffle=True, seed=s)` permutes the data
  with numpy's `default_rng((s, 0))` and seeds the algorithm's own random choices with s, so the
  run is exactly `budgetlearn train --shuffle --seed s ...` (tested).  Every setting sees the same
  permutations and the same random draws (common random numbers): the table compares settings,
  not luck.  `--permutations 0` makes one run per setting over the file in its own order.  With
  `--epochs N` a run makes N passes, exactly `train --epochs N` (pass e permuted by
  `default_rng((s, e))`, as `train --shuffle` does).
* Each worker reads the data from its path (the path, not arrays, goes through the scheduler), so
  DATA and --test must be readable at the same path on every worker of a cluster.  A worker holds
  one model and one chunk: a permuted run reads the file once to note where each example starts
  (8 bytes a line, 16 more per example while reading) and then reads the examples in permuted order by seeking
  (io/permuted.py);
  only a compressed DATA, which cannot be seeked, and a permuted run of several passes are permuted
  in memory as `train --shuffle` does.
* Results come back in submission order and are aggregated in grid order; ties in the sort keep
  grid order.  Only the seconds differ between two runs of the table.

Settings that provably learn nothing (Projectron's η ≥ 1 with rbf, ...) are refused before any run,
as `train` refuses them (spec.TrainSpec).  A setting whose runs ended with no support vector
learned nothing on this data: it is sorted after every setting that learned something, whatever the
sort metric (its 0 support vectors would otherwise win `--sort support`, and predicting one class
everywhere can beat a weak setting's test accuracy).  Each setting carries the distinct warnings of
its runs (report.Report), which the table marks.

The best model (`--save-best`) is the run of the top setting that is best by the sort metric (ties:
the lowest permutation index).  Workers do not ship models back; the main process trains that one
run again — deterministic, so the same model — and checks its counters against the table.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from . import pipeline
from ..base.core import KernelSpec
from .grid import KERNEL_GRID
from .tune_table import describe
from .predictions import splittable
from ..model.spec import TrainSpec

BACKENDS = ("loky", "threading", "dask", "ray")
TARGETS_IN_MEMORY = ("regression", "novelty")  # the tasks whose permuted runs are permuted in memory (train_run)

# sort metric -> (key in a row, True when larger is better); a task's own figures (learning/task TUNE, SORTS):
# a classification's accuracies and online mistake rate, a regression's mean squared errors, a novelty
# detector's held-out AUC (its online flagged fraction is a column, not a rank: it is ν by construction)
SORT_KEYS = {
    "cv-accuracy": ("cv_accuracy", True),
    "error": ("online_mistake_rate", False),
    "support": ("support_size", False),
    "test-accuracy": ("test_accuracy", True),
    "seconds": ("seconds", False),
    "cv-mse": ("cv_mse", False),
    "online-mse": ("online_mse", False),
    "test-mse": ("test_mse", False),
    "test-auc": ("test_auc", True),
}


@dataclass(frozen=True)
class Run:
    """One training run: everything a worker needs, small enough to send anywhere."""

    setting: int  # index into the grid's settings
    permutation: int  # -1: the file in its own order
    data: str
    test: str | None
    spec: TrainSpec  # its seed: --seed + permutation; shuffled unless the file's own order
    fold: int = -1  # --folds K: the fold this run holds out (crossval.py), trained on the others in file order
    folds: int = 0
    scoring: dict = field(default_factory=dict)  # how the task scores --test (novelty: its normal_label)

    @property
    def seed(self) -> int:
        return self.spec.seed


@dataclass
class RunResult:
    setting: int
    permutation: int
    seed: int
    examples: int
    mistakes: int
    online_mistake_rate: float
    support_size: int
    test_accuracy: float | None
    seconds: float
    warnings: list = field(default_factory=list)
    learned: bool = True  # False: the hypothesis ended f = 0 (no support vector, or every weight 0)
    task_name: str = "classification"  # what the run learnt (learning/task)
    held_out: int | None = None  # --folds: the examples of the fold held out, and those predicted right
    held_out_correct: int | None = None
    # a regression's (--task regression): its online (prequential) MSE, on --test, and the squared
    # error of the fold held out
    online_mse: float | None = None
    test_mse: float | None = None
    held_out_squared_error: float | None = None
    # a novelty detector's (--task novelty): the fraction it flagged online, its ν, and its AUC on --test
    online_flagged_fraction: float | None = None
    nu: float | None = None
    test_auc: float | None = None

    @property
    def cv_accuracy(self) -> float | None:
        return None if self.held_out is None or self.held_out_correct is None else self.held_out_correct / self.held_out

    @property
    def task(self):
        from ..learning.task import named

        return named(self.task_name)

    @property
    def cv_mse(self) -> float | None:
        if self.held_out is None or self.held_out_squared_error is None:
            return None
        return self.held_out_squared_error / self.held_out


@dataclass
class Row:
    """One setting's runs and their mean ± std (population std, as repro/ reports)."""

    index: int  # position of the setting in the grid
    setting: dict
    runs: list = field(default_factory=list)

    def stats(self, key: str) -> tuple[float | None, float | None]:
        values = [getattr(r, key) for r in self.runs]
        if any(v is None for v in values):
            return None, None
        a = np.array(values, dtype=np.float64)
        if key == "cv_accuracy":  # svm-train -v's: all held-out examples predicted right, over all (± the folds' std)
            return sum(r.held_out_correct for r in self.runs) / sum(r.held_out for r in self.runs), float(a.std())
        if key == "cv_mse":  # svm-train -v's: the squared error of every held-out example, over all
            return sum(r.held_out_squared_error for r in self.runs) / sum(r.held_out for r in self.runs), float(a.std())
        return float(a.mean()), float(a.std())

    @property
    def learned_nothing(self) -> bool:
        """A run of this setting ended with f = 0 (no support vector, or every weight of a feature map 0)."""
        return any(not r.learned for r in self.runs)

    @property
    def warnings(self) -> list[str]:
        """The distinct warnings of its runs, in order of first appearance."""
        return list(dict.fromkeys(w for r in self.runs for w in r.warnings))

    def figures(self) -> tuple[str, ...]:
        """The row's figures: its task's (learning/task TUNE: cv, when the task has it, online, test), support size
        and seconds."""
        task = self.runs[0].task
        cv = () if task.TUNE["cv"] is None else (task.TUNE["cv"],)
        return (*cv, task.TUNE["online"], "support_size", task.TUNE["test"], "seconds")

    def to_dict(self) -> dict:
        out = {"setting": self.setting, "runs": len(self.runs)}
        for key in self.figures():
            out[f"{key}_mean"], out[f"{key}_std"] = self.stats(key)
        out["learned_nothing"] = self.learned_nothing
        out["warnings"] = self.warnings
        out["per_run"] = [vars(r) for r in self.runs]
        return out


def plan(
    data: str,
    test: str | None,
    base: TrainSpec,
    settings: list[dict],
    permutations: int,
    folds: int = 0,
    scoring: dict | None = None,
) -> list[Run]:
    """Every (setting, permutation) run, setting-major: `base` with the setting's values, each run's
    spec checked as it is made (a setting the algorithm refuses is a ValueError naming it, before
    anything is read).  Run p's seed is base.seed + p.  With `folds` K, a setting's runs are instead
    the K folds of `train -v K --seed base.seed` (crossval.py), in file order.  `scoring`: how the
    task's tally scores --test (novelty: {"normal_label": L})."""
    runs, scoring = [], scoring or {}
    for i, setting in enumerate(settings):
        spec = setting_spec(base, setting)
        if folds:
            runs += [Run(i, -1, data, test, spec, fold, folds, scoring) for fold in range(folds)]
            continue
        for perm in range(permutations) if permutations else [-1]:
            spec_p = replace(spec, seed=base.seed + max(perm, 0), shuffle=perm >= 0)
            runs.append(Run(i, perm, data, test, spec_p, scoring=scoring))
    return runs


def setting_spec(base: TrainSpec, setting: dict) -> TrainSpec:
    """`base` with a setting's kernel values and parameters; ValueError naming the setting."""
    kernel = {name: value for name, value in setting.items() if name in KERNEL_GRID}
    params = {name: value for name, value in setting.items() if name not in KERNEL_GRID}
    try:
        return replace(
            base, kernel=KernelSpec.from_params(base.kernel.params() | kernel), params={**base.params, **params}
        )
    except ValueError as exc:
        raise ValueError(f"setting {describe(setting)}: {exc}") from None


def train_run(run: Run) -> pipeline.TrainResult:
    """Train one run (in a worker, or again in the main process for --save-best).

    A permuted run of one pass over a plain file reads its examples in the permuted order by seeking
    (io/permuted.py), so the worker holds one model and one chunk, not the data; the model is the
    one `pipeline.train` of the shuffled spec makes from the data in memory, which compressed files,
    runs of several passes (each pass its own permutation) and regressions still use."""
    spec = run.spec
    # a regression's or a novelty detector's permuted run is train --shuffle's in memory: the seeking reader
    # notes each label's first line, which for real targets is a note per example, and a novelty detector's
    # lines may have no label
    if not spec.shuffle or (spec.epochs or 1) > 1 or not splittable(run.data) or spec.task in TARGETS_IN_MEMORY:
        return pipeline.train(spec, run.data)
    from ..io.permuted import PermutedExamples  # here: every command imports this module, few tune

    examples = PermutedExamples(run.data, spec.seed)
    problem = examples.label_problem()
    if problem is not None and not spec.learner_class.multiclass:
        raise problem
    result = pipeline.train(replace(spec, shuffle=False), examples.lines())
    result.model.labels.spellings = examples.model_spellings()
    return result


def execute(run: Run) -> RunResult:
    """A worker's job: read the data from its path, train, score the test file chunk by chunk (and, for a
    fold, the fold held out), each by the task's figures (learning/task TUNE)."""
    held = None
    if run.folds:
        from . import crossval

        held, result = crossval.held_out(run.spec, run.data, run.folds, run.fold)
    else:
        result = train_run(run)
    model, learner = result.model, result.model.learner
    task = model.task
    t, m = learner.counter("examples"), learner.counter("mistakes")
    out = RunResult(
        run.setting,
        run.permutation,
        run.spec.seed,
        t,
        m,
        m / t,
        learner.support_size(),
        None,
        result.seconds,
        result.warnings,
        not learner.learned_nothing(),
        task_name=task.name,
    )
    summary = task.summary(learner)  # the task's online figure (task TUNE), and a novelty detector's ν beside it
    setattr(out, task.TUNE["online"], summary[task.TUNE["online"]])
    out.nu = summary.get("nu")
    if run.test:
        setattr(out, task.TUNE["test"], held_out_figure(model, run.test, **run.scoring))
    if held is not None:
        out.held_out = held.examples
        if task.name == "regression":
            out.held_out_squared_error = held.squared_error
        else:
            out.held_out_correct = held.correct
    return out


def held_out_figure(model, test, **scoring) -> float:
    """The model's figure on the test file, scored chunk by chunk as `eval` scores it (the task's `tally`,
    with `scoring`): a classifier's accuracy, a regression's mean squared error, a novelty detector's AUC
    of normal examples (labelled `normal_label`) above novel ones."""
    tally = model.task.tally(model, **scoring)
    for chunk, scores in pipeline.scores(model, test):
        tally.add(chunk.labels, scores)
    return tally.held_out(test)


test_accuracy = held_out_figure  # a classifier's figure, by its former name


@contextmanager
def backend_config(backend: str, scheduler: str | None, jobs: int):
    """joblib's parallel_config for `backend`; yields the n_jobs to pass to Parallel.

    dask: a distributed.Client on --scheduler, or on a local cluster of `jobs` single-threaded worker
    processes started here.  ray: ray.init(address=--scheduler, or a local ray)."""
    import joblib

    if backend in ("loky", "threading"):
        if scheduler is not None:
            raise ValueError(f"--scheduler is for the dask and ray backends, not {backend}")
        with joblib.parallel_config(backend=backend, n_jobs=jobs):
            yield jobs
        return
    with ExitStack() as stack:
        if backend == "dask":
            from .distributed.pool import cluster  # the local cluster `train --backend dask` starts, or --scheduler's

            stack.enter_context(cluster("dask", jobs, scheduler))
            stack.enter_context(joblib.parallel_config(backend="dask", wait_for_workers_timeout=60))
            yield -1  # dask decides; every worker of the cluster takes runs
        else:
            try:
                import ray
                from ray.util.joblib import register_ray
            except ImportError:
                raise RuntimeError(
                    "the ray backend needs ray, which is not installed: pip install 'ray[default]' "
                    "(or use --backend dask)"
                ) from None
            ray.init(address=scheduler, ignore_reinit_error=True)
            stack.callback(ray.shutdown)
            register_ray()
            stack.enter_context(joblib.parallel_config(backend="ray"))
            yield jobs


def run_all(runs: list[Run], jobs: int = 1, backend: str = "loky", scheduler: str | None = None) -> list[RunResult]:
    """Execute the runs; results in the order of `runs` whatever the backend."""
    import joblib

    if jobs == 1 and backend == "loky" and scheduler is None:
        return [execute(r) for r in runs]
    with backend_config(backend, scheduler, jobs) as n_jobs:
        return joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(execute)(r) for r in runs)


def table(settings: list[dict], results: list[RunResult], sort: str) -> list[Row]:
    """One Row per setting, sorted by `sort` (best first; ties keep grid order), settings that learned
    nothing last."""
    rows = [Row(i, s) for i, s in enumerate(settings)]
    for r in results:
        rows[r.setting].runs.append(r)
    key, larger_better = SORT_KEYS[sort]
    if rows and rows[0].stats(key)[0] is None:
        raise ValueError(f"--sort {sort} needs --test")
    return sorted(
        rows, key=lambda row: (row.learned_nothing, -row.stats(key)[0] if larger_better else row.stats(key)[0])
    )


def best_run(row: Row, sort: str) -> RunResult:
    """The top setting's run that is best by `sort`; ties go to the lowest permutation index."""
    key, larger_better = SORT_KEYS[sort]
    return min(row.runs, key=lambda r: (-getattr(r, key) if larger_better else getattr(r, key), r.permutation))


def retrain(run: Run, expected: RunResult):
    """Train `run` again in this process and check it is the run of the table."""
    model = train_run(run).model
    got = (model.learner.counter("examples"), model.learner.counter("mistakes"), model.learner.support_size())
    if got != (expected.examples, expected.mistakes, expected.support_size):
        raise RuntimeError(
            f"retraining the best run gave {got}, the table says "
            f"{(expected.examples, expected.mistakes, expected.support_size)}: the run is not "
            "deterministic (is DATA changing?)"
        )
    return model
