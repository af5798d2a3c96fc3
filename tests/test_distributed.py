"""Training one model over shards (budgetcli/run/distributed/, budgetcli/learning/mixing.py): the mix, the
compression, the same model file on every backend, the algorithms that cannot be mixed, URLs, bad data in a shard."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.learning import algorithms, mixing
from budgetcli.run import distributed
from budgetcli.base import registry
from budgetcli.learning.algorithms.lms import RegressionMixing
from budgetcli.learning.algorithms.nystrom import NystromMixing
from budgetcli.learning.algorithms.novelty import RECENT, NoveltyMixing, mixed_recent
from budgetcli.entry import main
from budgetcli.base.core import KernelSpec, concatenate
from budgetcli.learning.task import RHO, RHO_SUM
from budgetcli.run.distributed import average
from budgetcli.run.distributed.shard import Shard
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.featuremap import FeatureMapLearner, WeightMixing
from budgetcli.learning.learner import MISTAKES
from budgetcli.model.model import Model
from budgetcli.run.pipeline import Watch
from budgetcli.model.spec import Sharding, TrainSpec

from .helpers import random_stream


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def train_shards(
    inputs,
    algorithm,
    kernel,
    params,
    seed=0,
    skip_bad_lines=False,
    block_lines=4096,
    backend="serial",
    jobs=1,
    sync_every=None,
    sync=None,
    divergence=None,
    resume=None,
    checkpoint_every=None,
    on_checkpoint=None,
    epochs=None,
    task=None,
):
    """distributed.train of the spec these settings make."""
    spec = TrainSpec(
        algorithm,
        kernel,
        params,
        seed,
        epochs,
        skip_bad_lines=skip_bad_lines,
        checkpoint_every=checkpoint_every,
        block_lines=block_lines,
        sharding=Sharding(tuple(inputs), backend, jobs, None, sync_every, sync, divergence),
        task=task,
    )
    return distributed.train(spec, resume, Watch(on_checkpoint=on_checkpoint))


def lines(n, seed):
    X, y = random_stream(n, 4, seed)
    return "".join(
        ("+1" if lab > 0 else "-1") + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
        for row, lab in zip(X, y)
    )


def dense_rows(csr, d):
    """Support vectors read from files (1-based indices) as dense rows: index j in column j − 1."""
    indptr, indices, values = csr
    X = np.zeros((len(indptr) - 1, d))
    for i in range(len(indptr) - 1):
        X[i, indices[indptr[i] : indptr[i + 1]] - 1] = values[indptr[i] : indptr[i + 1]]
    return X


def rbf(A, B, gamma=0.5):
    """numpy's Gaussian kernel matrix, k(a, b) = exp(−γ‖a − b‖²)."""
    return np.exp(-gamma * np.sum((A[:, None, :] - B[None, :, :]) ** 2, axis=2))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    d = tmp_path_factory.mktemp("shards")
    for w in range(3):
        (d / f"part-{w}.svm").write_text(lines(300 + 50 * w, w))
    return d


def report(svs, alpha, learned, counters):
    """A shard's report as Shard.step makes it, for a perceptron with a linear kernel."""
    learner = registry.get("perceptron")(Kernel("linear", 1.0, 0.0, 1))
    header, arrays = learner.state()
    indptr = np.cumsum([0] + [len(s) for s in svs])
    arrays.update(
        sv_indptr=indptr,
        sv_indices=np.array([j for s in svs for j, _ in s], np.int32),
        sv_values=np.array([v for s in svs for _, v in s]),
        alpha=np.array(alpha, float),
        counters=np.array(counters, np.int64),
    )
    return {
        "header": header | {"n_features": 2},
        "arrays": arrays,
        "average": np.array(alpha, float) / 2,
        "learned": learned,
    }


def test_mix_is_the_union_weighted_by_the_shards_shares():
    x1, x2, x3 = [(0, 1.0)], [(1, 2.0)], [(0, 1.0), (1, 1.0)]
    a = report([x1, x2], [1.0, -1.0], 1, [1, 1, 0, 0])
    b = report([x2, x3], [0.5, 2.0], 3, [3, 2, 0, 0])  # x2 is in both: one vector in the mix
    header, arrays = average.mix([a, b], np.zeros(4, np.int64))
    assert arrays["sv_indptr"].tolist() == [0, 1, 2, 4]
    assert arrays["sv_indices"].tolist() == [0, 1, 0, 1]
    assert arrays["sv_values"].tolist() == [1.0, 2.0, 1.0, 1.0]
    assert arrays["alpha"].tolist() == [0.25, 0.25 * -1.0 + 0.75 * 0.5, 0.75 * 2.0]
    assert arrays["counters"].tolist() == [4, 3, 0, 0] and header["counters"]["examples"] == 4
    # the mixed averaged hypothesis, as averaged_alpha reads it: the shares' mix of the shards' averages
    learner = registry.get("perceptron").from_state(header, arrays)
    assert learner.averaged_alpha().tolist() == [0.125, (0.25 * -1.0 + 0.75 * 0.5) / 2, 0.75]
    # counters since the last mix are added to it, not the shards' totals
    _, again = average.mix([a, b], np.array([1, 1, 0, 0], np.int64))
    assert again["counters"].tolist() == [3, 2, 0, 0]


def test_compression_keeps_the_largest_and_projects_the_rest():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.5]])
    alpha = np.array([3.0, -0.1, 2.0, -0.5])
    svs = [[(j, v) for j, v in enumerate(row) if v] for row in X]
    header, arrays = average.mix([report(svs, alpha, 1, [1, 0, 0, 0])], np.zeros(4, np.int64))
    learner = mixing.compress_to_budget(registry.get("perceptron").from_state(header, arrays), 2)
    assert len(learner.support) == 2
    assert learner.support.to_csr()[1].tolist() == [0, 0, 1]  # rows 0 and 2 kept, in their order
    keep, drop = [0, 2], [1, 3]
    G = X[keep] @ X[keep].T  # the linear kernel
    ridge = mixing.MIX_RIDGE * np.trace(G) / 2
    expected = alpha[keep] + np.linalg.solve(G + ridge * np.eye(2), X[keep] @ X[drop].T @ alpha[drop])
    np.testing.assert_allclose(learner.slot["alpha"][:2], expected, rtol=1e-12)


def test_the_projectron_s_compression_keeps_the_vectors_beyond_eta_of_the_span_and_projects_the_rest():
    """In slot order: e1 is kept; x2 lies 0.1 from span{e1} (≤ η = 0.2); e2 is 1 away: kept; x4 is in
    span{e1, e2}.  The union is no set the rule allows, so the compression takes it largest coefficient
    first: x2 (|α| = 2), then e1, 0.1005 from span{x2}: projected, e2: kept, x4: projected.  The
    projection is exact in the plane, so f does not change."""
    X = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [3.0, 0.5]])
    alpha = np.array([1.0, -2.0, 0.5, 0.25])
    svs = [[(j, v) for j, v in enumerate(row) if v] for row in X]
    header, arrays = average.mix([report(svs, alpha, 1, [1, 0, 0, 0])], np.zeros(4, np.int64))
    learner = registry.get("perceptron").from_state(header, arrays)
    assert mixing.span_keep(learner, 0.2).tolist() == [0, 2]
    assert mixing.span_keep(learner, 0.2, whole=True) is None  # x2 is not kept
    assert mixing.span_keep(learner, 0.05).tolist() == [0, 1]  # x2 kept; e2 is then in their span
    assert mixing.span_keep(learner, 0.2, np.array([1, 0, 2, 3])).tolist() == [1, 2]
    small = mixing.compress_to_span(learner, 0.2)
    assert small.support.to_csr()[2].tolist() == [0.99, 0.1, 1.0]  # x2 and e2, in slot order
    np.testing.assert_allclose(small.slot["alpha"][:2] @ X[[1, 2]], alpha @ X, rtol=1e-9)  # the same f
    valid = registry.get("perceptron").from_state(*small.state())  # a set the rule allows stays whole
    assert mixing.compress_to_span(valid, 0.2) is valid


def test_a_projectron_mix_drops_only_vectors_within_eta_of_the_kept_ones_span(shards, monkeypatch):
    """Every vector of every mix's union that the compression drops lies within η of the span of the
    vectors it keeps (numpy's rbf and least squares), so the projection moves f by at most η per vector."""

    def dense(learner):
        return dense_rows(learner.support.to_csr(), 4)

    seen = []
    real = mixing.compress_to_span

    def watched(learner, eta):
        union = dense(learner)
        out = real(learner, eta)
        seen.append((union, dense(out)))
        return out

    monkeypatch.setattr(mixing, "compress_to_span", watched)
    train_shards(
        sorted(str(p) for p in shards.glob("part-*.svm")),
        "projectron++",
        KernelSpec("rbf", 0.5),
        {"eta": 0.5},
        sync_every=60,
    )
    assert any(len(kept) < len(union) for union, kept in seen)
    for union, kept in seen:
        assert {r.tobytes() for r in kept} <= {r.tobytes() for r in union}
        G, cross = rbf(kept, kept), rbf(kept, union)
        beta = np.linalg.lstsq(G, cross, rcond=None)[0]
        distance2 = 1.0 - np.sum(cross * beta, axis=0)  # ‖φ(u) − P φ(u)‖², k(u, u) = 1
        assert np.all(distance2 <= 0.5**2 * (1 + 1e-9))


@pytest.mark.parametrize("name", sorted(algorithms.load_all()))
def test_a_mixable_learner_has_only_state_the_mix_makes(name):
    """What `mix` does not average must be resume state (rebuilt) or scalars after_mix sets."""
    cls = registry.get(name)
    if cls.mixing.reason:
        return
    first_occurrence = {"born", "label"}  # per-slot numbers the mix takes from the vector's first occurrence
    if issubclass(cls, FeatureMapLearner):  # its weights and their sums, which the mix averages, and no slot
        assert not hasattr(cls, "slot_arrays") and isinstance(cls.mixing, WeightMixing)
    elif cls.multiclass:  # the coefficient matrix and its sums are the multiclass contract's own arrays
        saved = {n for n, kind in cls.slot_arrays.items() if kind != "work"} - set(cls.rebuilt) - set(cls.mixing.remade)
        assert saved <= first_occurrence
    else:
        saved = {n for n, kind in cls.slot_arrays.items() if kind != "work"} - set(cls.rebuilt) - set(cls.mixing.remade)
        if cls.mixing.at_end:  # mixed once and not resumed: its filter state is zeros or first occurrences
            first_occurrence |= set(cls.mixing.history) | {n for n, k in cls.slot_arrays.items() if k == "vector"}
        assert {"alpha", "avg_sum", "avg_stamp"} <= saved <= {"alpha", "avg_sum", "avg_stamp"} | first_occurrence
    own = type(cls.mixing)  # the default Mixing sets no scalars and remakes no array
    # a kind whose mix sets its own scalars after the task's: nogd's (its phase, and its map remade)
    kind_sets = isinstance(cls.mixing, NystromMixing) and cls.n_scalars - cls.constants["nystrom_at"] == 3
    task_numbers = list(range(cls.constants["nystrom_at"] if kind_sets else cls.n_scalars))
    if isinstance(cls.mixing, RegressionMixing):  # a regression mix sets every scalar: summed or averaged
        assert sorted(cls.mixing.summed + cls.mixing.averaged) == task_numbers
        return
    if isinstance(cls.mixing, NoveltyMixing):  # a novelty mix sets ρ and Σρ: a kind with scalars of its own is not
        assert task_numbers == [0, 1]
        return
    assert (
        cls.n_scalars == 0 or own.after_mix is not mixing.Mixing.after_mix or own.scalars is not mixing.Mixing.scalars
    )
    assert not cls.mixing.remade or own.after_mix is not mixing.Mixing.after_mix


def test_the_docs_name_exactly_the_algorithms_that_can_be_mixed():
    text = (Path(__file__).resolve().parents[1] / "docs" / "SHARDED.md").read_text(encoding="utf-8")
    part = text[text.index("- Additive learners are mixed:") : text.index("the others are refused")]
    named = {name for name in algorithms.load_all() if re.search(rf"(?<![\w+-]){re.escape(name)}(?![\w+-])", part)}
    assert named == {name for name in algorithms.load_all() if not registry.get(name).mixing.reason}


def test_refused_algorithm_is_one_line(shards, tmp_path):
    out = tmp_path / "m.model"
    r = run("train", "-a", "sop", shards / "part-0.svm", shards / "part-1.svm", "-o", out)
    assert r.exit_code == 2
    assert r.output.splitlines() == [
        "budgetlearn: error: sop cannot be trained on shards: its coefficients "
        "(aI + K)⁻¹y belong to its own support set's labels; an average is no such model"
    ]
    assert not out.exists()


@pytest.mark.parametrize(
    "sync", [[], ["--sync", "dynamic", "--divergence", "2"], ["--epochs", "2"]], ids=["static", "dynamic", "epochs"]
)
def test_serial_and_dask_write_the_same_model_file(shards, tmp_path, sync):
    pytest.importorskip("distributed")
    args = [
        "train",
        "-a",
        "rbp",
        "-B",
        "20",
        "--gamma",
        "0.5",
        "--sync-every",
        "100",
        "-q",
        str(shards / "part-*.svm"),
        *sync,
        "--backend",
    ]
    assert run(*args, "serial", "-o", tmp_path / "serial.model").exit_code == 0
    r = run(*args, "dask", "--jobs", "2", "-o", tmp_path / "dask.model")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "serial.model").read_bytes() == (tmp_path / "dask.model").read_bytes()
    model = Model.load(tmp_path / "serial.model")
    assert len(model.learner.support) == 20  # the budget, after the last compression
    assert model.learner.counter("examples") == (2 if "--epochs" in sync else 1) * (300 + 350 + 400)


def test_serial_shards_share_one_rebuild_per_mix_and_write_dask_s_model_file(shards, tmp_path, monkeypatch):
    """Projectron++'s factor is not sent: each dask worker rebuilds it from the mixed support set, and the
    serial backend rebuilds it once for all its shards (distributed.ShardPool.adopt)."""
    pytest.importorskip("distributed")
    args = [
        "train",
        "-a",
        "projectron++",
        "--eta",
        "0.5",
        "--gamma",
        "0.5",
        "--sync-every",
        "60",
        "-q",
        str(shards / "part-*.svm"),
        "--backend",
    ]
    r = run(*args, "dask", "--jobs", "2", "-o", tmp_path / "dask.model")
    assert r.exit_code == 0, r.output
    assert run(*args, "serial", "-o", tmp_path / "serial.model").exit_code == 0
    assert (tmp_path / "serial.model").read_bytes() == (tmp_path / "dask.model").read_bytes()
    cls = registry.get("projectron++")
    rebuilds = []
    monkeypatch.setattr(
        cls,
        "rebuilt",
        {name: (lambda f: lambda self, n: rebuilds.append(n) or f(self, n))(f) for name, f in cls.rebuilt.items()},
    )
    result = train_shards(
        sorted(str(p) for p in shards.glob("part-*.svm")),
        "projectron++",
        KernelSpec("rbf", 0.5),
        {"eta": 0.5},
        sync_every=60,
    )
    mixes = result.traffic["synchronisations"]
    # one per mix sent back to the three shards (none after the last), and the model file's own: not 3 per mix
    assert mixes >= 5 and len(rebuilds) == mixes


def test_budget_and_counters_after_each_synchronisation(shards):
    seen = []
    real = mixing.compress_to_budget

    def watched(learner, budget):
        out = real(learner, budget)
        seen.append((len(learner.support), len(out.support), out.counter("examples")))
        return out

    mixing.compress_to_budget = watched
    try:
        train_shards([str(shards / "part-*.svm")], "stoptron", KernelSpec("rbf", 0.5), {"budget": 15}, sync_every=100)
    finally:
        mixing.compress_to_budget = real
    # 100 examples per shard per round; the fourth round: 0, 50 and 100 (shards of 300, 350, 400 examples)
    assert [t for _, _, t in seen] == [300, 600, 900, 1050]
    assert all(after == min(before, 15) for before, after, _ in seen)
    assert any(before > 15 for before, _, _ in seen)  # the union did pass the budget


def test_memory_urls_give_the_model_of_the_files(shards, tmp_path):
    fsspec = pytest.importorskip("fsspec")
    for w in range(3):
        with fsspec.open(f"memory://budgetlearn-test/part-{w}.svm", "w") as f:
            f.write((shards / f"part-{w}.svm").read_text())
    spec = KernelSpec("rbf", 0.5)
    from_urls = train_shards(["memory://budgetlearn-test/part-*.svm"], "projectron++", spec, {}, sync_every=64)
    from_files = train_shards(
        [str(shards / f"part-{w}.svm") for w in range(3)], "projectron++", spec, {}, sync_every=64
    )
    assert from_urls.model.sharding["sources"] == [f"memory:///budgetlearn-test/part-{w}.svm" for w in range(3)]
    from_urls.model.sharding = from_files.model.sharding = None  # each names its own inputs; the rest is equal
    from_urls.model.save(tmp_path / "a.model")
    from_files.model.save(tmp_path / "b.model")
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert from_urls.source == (
        "3 shards: memory:///budgetlearn-test/part-0.svm … memory:///budgetlearn-test/part-2.svm"
    )


def test_a_name_that_exists_is_that_file_and_a_pattern_s_matches_are_listed(tmp_path):
    """`day[1].txt` beside `day1.txt` is the first file, not a pattern matching the second (which was
    read instead, silently); a name holding "://" that exists is a file, not a URL.  Only a name that
    no file has is a pattern, and the summary lists what it matched."""
    (tmp_path / "day[1].txt").write_text(lines(100, 1))
    (tmp_path / "day1.txt").write_text(lines(150, 2))
    (tmp_path / "x:").mkdir()
    (tmp_path / "x:" / "day2.txt").write_text(lines(80, 3))
    common = ["train", "-a", "perceptron", "--gamma", "0.5", "--json", "-q", "--backend", "serial"]

    def summary(*inputs):
        r = run(*common, *inputs, "-o", tmp_path / "m.model")
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)

    s = summary(tmp_path / "day[1].txt", f"{tmp_path}/x://day2.txt")
    assert s["examples"] == 100 + 80 and not any("matched" in n for n in s["notes"])
    s = summary(tmp_path / "day[12].txt")
    assert s["examples"] == 150 and f"{tmp_path}/day[12].txt matched 1 shard: {tmp_path}/day1.txt" in s["notes"]
    s = summary(tmp_path / "day*.txt")
    assert s["examples"] == 100 + 150
    assert f"{tmp_path}/day*.txt matched 2 shards: {tmp_path}/day1.txt, {tmp_path}/day[1].txt" in s["notes"]
    (tmp_path / "day[1].txt").unlink()  # no file of that name now: a pattern
    s = summary(tmp_path / "day[1].txt")
    assert s["examples"] == 150 and f"{tmp_path}/day[1].txt matched 1 shard: {tmp_path}/day1.txt" in s["notes"]


@pytest.mark.parametrize("backend", ["serial", "dask"])
def test_bad_line_in_a_shard_names_it_and_writes_nothing(shards, tmp_path, backend):
    if backend == "dask":
        pytest.importorskip("distributed")
    bad = tmp_path / "bad.svm"
    bad.write_text(lines(20, 5) + "+1 1:0.5 2:oops\n")
    out = tmp_path / "m.model"
    out.write_bytes(b"kept")
    r = run(
        "train",
        "-a",
        "perceptron",
        shards / "part-0.svm",
        bad,
        "-o",
        out,
        "--sync-every",
        "10",
        "--backend",
        backend,
        "--jobs",
        "2",
    )
    assert r.exit_code == 1
    assert r.output.splitlines() == [f"budgetlearn: error: {bad}:21: feature value is not a number (token '2:oops')"]
    assert out.read_bytes() == b"kept"


@pytest.mark.parametrize("algorithm", [["perceptron"], ["forgetron", "-B", "10"]], ids=lambda a: a[0])
def test_one_shard_learns_what_one_process_learns(shards, tmp_path, algorithm):
    """Mixing one shard is the identity: --backend serial on one input gives the one-process hypothesis
    (the Forgetron's damage Q included)."""
    common = ["train", "-a", *algorithm, "--hypothesis", "last", "--gamma", "0.5", "-q", shards / "part-0.svm"]
    assert run(*common, "-o", tmp_path / "one.model").exit_code == 0
    assert run(*common, "--backend", "serial", "--sync-every", "7", "-o", tmp_path / "sharded.model").exit_code == 0
    one, sharded = Model.load(tmp_path / "one.model").learner, Model.load(tmp_path / "sharded.model").learner
    for a, b in zip(one.support.to_csr(), sharded.support.to_csr()):
        assert a.tolist() == b.tolist()
    n = len(one.support)
    assert one.slot["alpha"][:n].tolist() == sharded.slot["alpha"][:n].tolist()
    assert one.counters.tolist() == sharded.counters.tolist()
    assert one.scalars.tolist() == sharded.scalars.tolist()
    np.testing.assert_allclose(sharded.averaged_alpha(), one.averaged_alpha(), rtol=1e-12)


def test_the_budget_perceptron_s_cached_scores_are_the_mixed_model_s(shards, monkeypatch):
    """CKS removes by the margins of cached scores f(x_j): every shard starts each round with the mixed
    model's, Kα (numpy's rbf here), not the scores its vectors had in the shard they came from."""
    checked = []
    real = Shard.step

    def step(self, n):
        learner = self.model.learner
        if len(learner.support):
            size = len(learner.support)
            X = dense_rows(learner.support.to_csr(), learner.n_features)
            np.testing.assert_allclose(
                learner.slot["fsv"][:size], rbf(X, X) @ learner.slot["alpha"][:size], rtol=1e-9, atol=1e-9
            )
            checked.append(size)
        return real(self, n)

    monkeypatch.setattr(Shard, "step", step)
    result = train_shards(
        sorted(str(p) for p in shards.glob("part-*.svm")),
        "budget-perceptron",
        KernelSpec("rbf", 0.5),
        {"budget": 20},
        sync_every=60,
    )
    assert len(checked) >= 12 and set(checked) == {20}  # every shard after every mix, at the budget
    assert len(result.model.learner.support) == 20


def test_one_projectron_shard_makes_the_one_process_decisions(shards, tmp_path):
    """One shard of Projectron++: every mix keeps the whole support set (it is one the rule grew), so
    the run makes the one-process decisions; the coefficients differ only in rounding, because each
    mix rebuilds the factor of K instead of growing it row by row."""
    common = ["train", "-a", "projectron++", "--eta", "0.5", "--gamma", "0.5", "-q", shards / "part-0.svm"]
    assert run(*common, "-o", tmp_path / "one.model").exit_code == 0
    assert run(*common, "--backend", "serial", "--sync-every", "7", "-o", tmp_path / "sharded.model").exit_code == 0
    one, sharded = Model.load(tmp_path / "one.model").learner, Model.load(tmp_path / "sharded.model").learner
    for a, b in zip(one.support.to_csr(), sharded.support.to_csr()):
        assert a.tolist() == b.tolist()
    assert one.counters.tolist() == sharded.counters.tolist()  # mistakes, margin updates, projections
    n = len(one.support)
    np.testing.assert_allclose(sharded.slot["alpha"][:n], one.slot["alpha"][:n], rtol=1e-9)


def test_the_forgetron_s_mixed_damage_is_the_shards_pooled_damage_per_mistake():
    """Q = (Σ Q_w)·M / Σ M_w keeps Q ≤ (15/32)M; adding what each shard's Q grew by since the mix would not."""
    forgetron = registry.get("forgetron")
    base_q, base_m = 4.0, 10  # the last mix: slack 15/32·10 − 4 = 0.6875
    shard_m = [12, 12]  # each shard made 2 mistakes since and spent all its slack: Q_w = 15/32·12
    shard_q = [15 / 32 * 12] * 2
    counters = np.zeros(4, np.int64)
    counters[MISTAKES] = base_m + sum(m - base_m for m in shard_m)  # 14, as mix adds counters up
    rows = [np.eye(4, dtype=np.int64)[MISTAKES] * m for m in shard_m]
    q = forgetron.mixing.scalars(forgetron, [np.array([x]) for x in shard_q], rows, counters)
    assert q.tolist() == [(shard_q[0] + shard_q[1]) * 14 / 24]  # 6.5625 = 15/32 · 14
    assert q[0] <= 15 / 32 * 14 < base_q + sum(x - base_q for x in shard_q)  # the summed growth: 7.25
    assert forgetron.mixing.scalars(forgetron, [np.array([2.5])], [rows[0]], rows[0]).tolist() == [
        2.5
    ]  # one shard: its own


def test_sharded_forgetrons_shrink_within_the_damage_bound_after_every_mix(shards, monkeypatch):
    forgetron = registry.get("forgetron")
    seen = []
    real = type(forgetron.mixing).scalars

    def watched(self, cls, shard_scalars, shard_counters, counters):
        q = real(self, cls, shard_scalars, shard_counters, counters)
        seen.append((q[0], int(counters[MISTAKES]), [float(s[0]) for s in shard_scalars]))
        return q

    monkeypatch.setattr(type(forgetron.mixing), "scalars", watched)
    learner = train_shards(
        [str(shards / "part-*.svm")], "forgetron", KernelSpec("rbf", 0.5), {"budget": 10}, sync_every=100
    ).model.learner
    assert len(seen) == 4 and len(learner.support) == 10
    assert all(0.0 < q <= 15 / 32 * m for q, m, _ in seen)
    # the shards shrank after the first mix: their damage grew past the mixed one
    assert any(max(shard) > seen[0][0] for _, _, shard in seen[1:])


def test_a_third_label_over_the_shards_names_the_shard_that_brings_it(shards, tmp_path):
    third = tmp_path / "third.svm"
    third.write_text(lines(40, 6).replace("-1 ", "2 "))  # labels +1 and 2: with the others', three values
    out = tmp_path / "m.model"
    r = run("train", "-a", "rbp", "-B", "5", shards / "part-0.svm", third, "-o", out)
    assert r.exit_code == 1
    assert r.output.startswith(
        f"budgetlearn: error: {third}: a third label value in binary training (labels so far: -1, +1)"
    )
    assert r.output.rstrip().endswith("(token '2')") and len(r.output.splitlines()) == 1
    assert not out.exists()


def test_shards_whose_one_label_first_blocks_fix_the_signs_differently_are_refused(tmp_path):
    """Labels 1 and 2: a shard whose first block holds both maps 1 to −1; one whose first block holds only
    1 maps it to +1 (labels.BinaryLabels).  The shards cannot be mixed, and the message says why."""
    both, ones_first = tmp_path / "a.svm", tmp_path / "b.svm"
    body = lines(40, 7).replace("-1 ", "1 ").replace("+1 ", "2 ")
    both.write_text(body)
    ones = [line for line in body.splitlines(True) if line.startswith("1 ")]
    twos = [line for line in body.splitlines(True) if line.startswith("2 ")]
    ones_first.write_text("".join(ones * (4096 // len(ones) + 1) + twos))  # the first block: 4,096 lines of 1
    r = run("train", "-a", "perceptron", both, ones_first, "-o", tmp_path / "m.model")
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"budgetlearn: error: {ones_first}: its label map contradicts the earlier "
        "shards' (a shard's first block held one label value): give every shard's "
        "first block both labels"
    ]
    assert not (tmp_path / "m.model").exists()


def test_a_scheduler_that_cannot_be_reached_is_one_line_not_a_hang(shards, tmp_path):
    pytest.importorskip("distributed")
    import socket

    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        out = tmp_path / "m.model"
        r = run(
            "train",
            "-a",
            "perceptron",
            shards / "part-0.svm",
            "--backend",
            "dask",
            "--scheduler",
            f"tcp://127.0.0.1:{port}",
            "-o",
            out,
        )
    assert r.exit_code == 1
    assert len(r.output.splitlines()) == 1
    assert r.output.startswith(f"budgetlearn: error: cannot reach the dask scheduler at tcp://127.0.0.1:{port}: ")
    assert not out.exists()


@pytest.mark.parametrize("sync", [[], ["--sync", "dynamic", "--divergence", "20"]], ids=["static", "dynamic"])
def test_a_lost_worker_s_shard_is_started_again_and_the_model_is_the_fault_free_one(tmp_path, sync):
    """A worker process of a LocalCluster is killed mid-run (SIGKILL, as a machine that goes away): its
    shards start again on a live worker from the last mixed model and their reading positions, and learn
    again the steps since it (under dynamic averaging, Δ = 20 here mixes at 42 of 101 checks)."""
    dd = pytest.importorskip("distributed")
    import logging
    import os
    import signal
    import threading
    import time

    for w in range(3):
        (tmp_path / f"part-{w}.svm").write_text(lines(3000, 10 + w))
    common = [
        "train",
        "-a",
        "rbp",
        "-B",
        "40",
        "--gamma",
        "0.5",
        str(tmp_path / "part-*.svm"),
        "--sync-every",
        "30",
        *sync,
    ]
    assert run(*common, "--backend", "serial", "-o", tmp_path / "serial.model").exit_code == 0
    with (
        dd.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        ) as cluster,
        dd.Client(cluster) as client,
    ):
        killed = []

        def kill_a_worker_once_the_shards_run():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                actors = client.run_on_scheduler(
                    lambda dask_scheduler: sum(
                        1 for ts in dask_scheduler.tasks.values() if ts.actor and ts.state == "memory"
                    )
                )
                if actors == 3:
                    time.sleep(0.5)  # a few synchronisations in
                    (pid,) = client.run(os.getpid, workers=[sorted(client.scheduler_info()["workers"])[0]]).values()
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_a_worker_once_the_shards_run)
        killer.start()
        r = run(*common, "--backend", "dask", "--scheduler", cluster.scheduler_address, "-o", tmp_path / "dask.model")
        killer.join()
    assert killed, "no worker was killed"
    assert r.exit_code == 0, r.output
    assert "after its worker was lost" in r.output  # the kill came mid-run
    assert (tmp_path / "dask.model").read_bytes() == (tmp_path / "serial.model").read_bytes()


@pytest.mark.parametrize(
    "algorithm,params",
    [
        ("rbp", {"budget": 12}),  # the last hypothesis of an evicting learner
        ("projectron++", {"eta": 0.5}),  # its running average, and the factor each shard rebuilds
        ("mc-perceptron", {}),  # a multiclass running average
        ("norma-novelty", {"budget": 12}),  # novelty: ρ, Σρ and the last rounds' examples, the last hypothesis
        ("fogd-novelty", {}),  # and the running average of a feature map's weights
        ("klms", {}),  # regression
        ("fogd-regression", {}),  # a feature map's weights and the error sums
    ],
)
def test_an_interrupted_sharded_run_resumes_from_its_checkpoint_to_the_uninterrupted_model(
    shards, class_shards, tmp_path, algorithm, params
):
    from budgetcli.io.libsvm import DataError  # noqa: F401  (the module the run reads with)

    whole, ck = tmp_path / "whole.model", tmp_path / "ck.model"
    options = [a for name, v in params.items() for a in ({"budget": "-B", "eta": "--eta"}[name], str(v))]
    task = registry.get(algorithm).tasks[0]
    common = ["-a", algorithm, "--task", task, *options, "--gamma", "0.5", "--sync-every", "40"]
    glob = str((class_shards if registry.get(algorithm).multiclass else shards) / "part-*.svm")
    r = run("train", *common, glob, "--backend", "serial", "--checkpoint-every", "150", "-o", whole)
    assert r.exit_code == 0, r.output
    plain = tmp_path / "plain.model"
    assert run("train", *common, glob, "--backend", "serial", "-o", plain).exit_code == 0
    assert whole.read_bytes() == plain.read_bytes()  # checkpoints change nothing

    def stop_after_the_first(model):  # as a run killed right after its first checkpoint
        model.save(ck, resume=True)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_shards(
            [glob],
            algorithm,
            KernelSpec("rbf", 0.5),
            params,
            sync_every=40,
            checkpoint_every=150,
            on_checkpoint=stop_after_the_first,
            task=task,
        )
    taken = Model.load(ck, resume=True)
    assert 0 < sum(taken.sharding["positions"]) < 600  # mid-run (the shards hold more than 850 examples)
    r = run("train", "--resume", ck, glob, "--backend", "serial", "-o", ck)
    assert r.exit_code == 0, r.output
    assert "after the checkpoint" in r.output

    assert ck.read_bytes() == whole.read_bytes()
    r = run("train", "--resume", ck, glob, "--backend", "serial", "--sync-every", "50", "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "the checkpoint was taken with --sync-every 40" in r.output


def test_one_shard_over_epochs_learns_what_one_process_learns_over_them(shards, tmp_path):
    """--epochs on a sharded run: every shard passes that many times over its input; with one shard it
    is `train --epochs` in one process: the same decisions and the same f.  (Not the same support set:
    a later pass adds an example's vector again, and the next mix merges it with the first.)"""
    common = ["train", "-a", "perceptron", "--gamma", "0.5", "--epochs", "3", "-q", shards / "part-0.svm"]
    assert run(*common, "-o", tmp_path / "one.model").exit_code == 0
    r = run(*common, "--backend", "serial", "--sync-every", "70", "-o", tmp_path / "sharded.model")
    assert r.exit_code == 0, r.output
    one, sharded = Model.load(tmp_path / "one.model").learner, Model.load(tmp_path / "sharded.model").learner
    assert one.counter("examples") == 3 * 300
    assert one.counters.tolist() == sharded.counters.tolist()  # examples, mistakes: the same decisions
    assert len(sharded.support) < len(one.support)
    chunk = read_all(shards / "part-1.svm")
    np.testing.assert_allclose(sharded.decision_function(chunk), one.decision_function(chunk), rtol=1e-12, atol=1e-12)


def test_an_interrupted_run_over_epochs_resumes_to_the_uninterrupted_model(shards, tmp_path):
    """The positions of a checkpoint count examples over the passes: a run stopped in its second pass
    resumes to the model of one never stopped, and the checkpoint keeps its --epochs."""
    glob = str(shards / "part-*.svm")
    whole, ck = tmp_path / "whole.model", tmp_path / "ck.model"
    args = [
        "-a",
        "rbp",
        "-B",
        "12",
        "--gamma",
        "0.5",
        "--sync-every",
        "40",
        "--epochs",
        "2",
        glob,
        "--backend",
        "serial",
    ]
    r = run("train", *args, "-o", whole)
    assert r.exit_code == 0, r.output
    assert "over 2 passes" in r.output
    assert Model.load(whole).learner.counter("examples") == 2 * (300 + 350 + 400)
    taken = []

    def stop_in_the_second_pass(model):
        if sum(model.sharding["positions"]) > 300 + 350 + 400:
            model.save(ck, resume=True)
            taken.append(model.sharding)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_shards(
            [glob],
            "rbp",
            KernelSpec("rbf", 0.5),
            {"budget": 12},
            sync_every=40,
            epochs=2,
            checkpoint_every=150,
            on_checkpoint=stop_in_the_second_pass,
        )
    assert taken[0]["epochs"] == 2 and max(taken[0]["positions"]) > 300  # a shard in its second pass
    r = run("train", "--resume", ck, glob, "--backend", "serial", "-o", ck)
    assert r.exit_code == 0, r.output

    assert ck.read_bytes() == whole.read_bytes()
    r = run("train", "--resume", whole, glob, "--backend", "serial", "--epochs", "3", "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "the checkpoint was taken with --epochs 2" in r.output


def test_a_checkpoint_s_sharding_from_anybody_is_checked(shards, tmp_path):
    from budgetcli.base import modelfile

    model = tmp_path / "m.model"
    assert (
        run("train", "-a", "perceptron", str(shards / "part-*.svm"), "--backend", "serial", "-o", model).exit_code == 0
    )
    header, arrays = modelfile.load(model)
    for bad in (
        {"sources": []},
        dict(header["sharding"], positions=[-1, 0, 0]),
        dict(header["sharding"], streams=[[2**64], [0], [0]]),
        dict(header["sharding"], divergence=-1.0),
        dict(header["sharding"], divergence="1"),
        dict(header["sharding"], epochs=1),
        dict(header["sharding"], epochs=2.0),
    ):
        modelfile.save(model, dict(header, sharding=bad), arrays)
        r = run("predict", model, shards / "part-0.svm")
        assert r.exit_code == 1 and "invalid model: sharding" in r.output, r.output


def test_a_sharded_model_resumed_on_one_input_forgets_the_shards_positions(shards, tmp_path):
    model, day2 = tmp_path / "m.model", tmp_path / "day2.svm"
    day2.write_text(lines(50, 9))
    assert (
        run("train", "-a", "perceptron", str(shards / "part-*.svm"), "--backend", "serial", "-o", model).exit_code == 0
    )
    assert Model.load(model).sharding is not None
    assert run("train", "--resume", model, day2, "-o", model).exit_code == 0
    assert Model.load(model).sharding is None


def rkhs_sqdist(Xf, alpha, Xr, beta, gamma):
    """‖Σ α_i k(x_i, ·) − Σ β_j k(z_j, ·)‖² for the rbf kernel, from the dense rows."""
    X, c = np.vstack([Xf, Xr]), np.concatenate([alpha, -beta])
    return c @ rbf(X, X, gamma) @ c


def test_a_shard_s_divergence_is_its_rkhs_distance_from_the_last_mixed_model(shards):
    shard = Shard(str(shards / "part-0.svm"), 0, "perceptron", Kernel("rbf", 0.5).to_dict(), {}, 0, False, 4096, True)

    def model():
        learner = shard.model.learner
        n = len(learner.support)
        return dense_rows(learner.support.to_csr(), 5), learner.slot["alpha"][:n].copy()

    first = shard.step(60)["divergence"]
    X, alpha = model()
    assert len(alpha) > 5
    assert first == pytest.approx(rkhs_sqdist(X, alpha, X[:0], alpha[:0], 0.5), rel=1e-9)  # from f = 0
    r = shard.report()
    shard.adopt(r["header"], r["arrays"], r["labels"])
    assert shard.divergence() <= 1e-9 * first  # the model it adopted is the reference
    Xr, beta = model()
    later = shard.step(60)["divergence"]
    X, alpha = model()
    assert later > 0.1 and later == pytest.approx(rkhs_sqdist(X, alpha, Xr, beta, 0.5), rel=1e-9)


def test_dynamic_averaging_mixes_when_a_shard_drifts_past_delta(shards):
    """Δ below any drift mixes at every check, as static averaging does (the same model); Δ above every
    drift only at the end; one between, at some checks."""

    def trained(divergence):
        return train_shards(
            [str(shards / "part-*.svm")],
            "rbp",
            KernelSpec("rbf", 0.5),
            {"budget": 20},
            sync_every=40,
            divergence=divergence,
        )

    static, tiny, huge, some = trained(None), trained(1e-9), trained(1e9), trained(8.0)
    # the largest shard holds 400 examples: 10 steps of 40, and an 11th that finds every shard at its end
    assert static.traffic["synchronisations"] == 10 and static.traffic["checks"] == 11
    assert tiny.traffic["synchronisations"] == 10
    for name, value in static.model.learner.state()[1].items():
        np.testing.assert_array_equal(tiny.model.learner.state()[1][name], value, err_msg=name)
    assert huge.traffic["synchronisations"] == 1 and huge.traffic["checks"] == 11
    assert 1 < some.traffic["synchronisations"] < 10
    assert some.traffic["bytes_in"] < static.traffic["bytes_in"]
    assert static.model.sharding.keys() == {"sources", "sync_every", "positions", "streams"}
    assert some.model.sharding["divergence"] == 8.0


def test_a_dynamic_run_resumes_from_its_checkpoint_to_the_uninterrupted_model(shards, tmp_path):
    whole, ck = tmp_path / "whole.model", tmp_path / "ck.model"
    common = [
        "-a",
        "rbp",
        "-B",
        "12",
        "--gamma",
        "0.5",
        "--sync-every",
        "20",
        "--sync",
        "dynamic",
        "--divergence",
        "4",
        "--backend",
        "serial",
    ]
    glob = str(shards / "part-*.svm")
    assert run("train", *common, glob, "-o", whole).exit_code == 0

    def stop_after_the_first(model):
        model.save(ck, resume=True)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_shards(
            [glob],
            "rbp",
            KernelSpec("rbf", 0.5),
            {"budget": 12},
            sync_every=20,
            divergence=4.0,
            checkpoint_every=150,
            on_checkpoint=stop_after_the_first,
        )
    assert Model.load(ck, resume=True).sharding["divergence"] == 4.0
    r = run("train", "--resume", ck, glob, "--backend", "serial", "-o", tmp_path / "x.model", "--sync", "static")
    assert r.exit_code == 2 and "the checkpoint was taken with --sync dynamic --divergence 4" in r.output
    r = run("train", "--resume", ck, glob, "--backend", "serial", "-o", ck)  # its own protocol
    assert r.exit_code == 0, r.output

    assert ck.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sync", "dynamic"], "--sync dynamic needs --divergence Δ"),
        (["--sync", "static", "--divergence", "1"], "--divergence is for --sync dynamic"),
        (["--divergence", "0"], "--divergence 0.0: give a positive number"),
    ],
)
def test_dynamic_averaging_settings_are_checked_before_reading(shards, tmp_path, args, message):
    r = run(
        "train",
        "-a",
        "rbp",
        "-B",
        "10",
        str(shards / "part-*.svm"),
        "--backend",
        "serial",
        *args,
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 2 and message in r.output, r.output
    assert not (tmp_path / "m.model").exists()


def test_sync_options_without_shards_are_a_usage_error(shards, tmp_path):
    r = run(
        "train",
        "-a",
        "rbp",
        "-B",
        "10",
        shards / "part-0.svm",
        "--sync",
        "dynamic",
        "--divergence",
        "1",
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 2 and "--sync and --divergence are for a sharded run" in r.output


# ---- multiclass learners ------------------------------------------------------------------------


def class_lines(n, seed):
    """Four classes (labels 1..4, first met in an order that depends on the seed) of a random stream."""
    X, _ = random_stream(n, 4, seed)
    labels = 1 + (X[:, 0] > 0) + 2 * (X[:, 1] > 0)
    return "".join(
        f"{int(lab)}" + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
        for row, lab in zip(X, labels)
    )


@pytest.fixture(scope="module")
def class_shards(tmp_path_factory):
    d = tmp_path_factory.mktemp("class_shards")
    for w in range(3):
        (d / f"part-{w}.svm").write_text(class_lines(250 + 40 * w, 20 + w))
    return d


def class_report(svs, values, coef, scale, average, learned):
    """A multiclass shard's report as Shard.report makes it (mc-perceptron, linear kernel)."""
    learner = registry.get("mc-perceptron")(Kernel("linear", 1.0, 0.0, 1))
    header, arrays = learner.state()
    indptr = np.cumsum([0] + [len(s) for s in svs])
    n, m = np.shape(coef)
    arrays.update(
        sv_indptr=indptr,
        sv_indices=np.array([j for s in svs for j, _ in s], np.int32),
        sv_values=np.array([v for s in svs for _, v in s]),
        coef=np.array(coef, float),
        scale=np.array([scale]),
        avg_base=np.zeros((n, m)),
        avg_offset=np.zeros((n, m)),
        counters=np.array([learned, 1, 0, 0], np.int64),
    )
    return {
        "header": header | {"n_features": 2, "n_classes": m},
        "arrays": arrays,
        "learned": learned,
        "average": np.array(average, float),
        "labels": {"kind": "multiclass", "values": values, "spellings": []},
    }


def test_a_multiclass_mix_puts_every_shard_s_classes_in_the_merged_order():
    x1, x2, x3 = [(0, 1.0)], [(1, 2.0)], [(0, 1.0), (1, 1.0)]
    a = class_report([x1, x2], [1.0, 2.0], [[1.0, -1.0], [0.0, 2.0]], 0.5, [[0.2, 0.0], [0.0, 0.4]], 1)
    b = class_report([x2, x3], [2.0, 3.0], [[4.0, 0.0], [1.0, 1.0]], 1.0, [[1.0, 0.0], [0.0, 2.0]], 3)
    labels = average.merged_labels([a, b], ["a", "b"])
    assert labels["values"] == [1.0, 2.0, 3.0]
    header, arrays = average.mix([a, b], np.zeros(4, np.int64), labels)
    assert header["n_classes"] == 3 and arrays["sv_indptr"].tolist() == [0, 1, 2, 4]
    # a's classes (1, 2) are columns 0 and 1, b's (2, 3) columns 1 and 2; shares 1/4 and 3/4; a's scale 0.5
    expected = [
        [0.25 * 0.5, -0.25 * 0.5, 0.0],
        [0.0, 0.25 * 0.5 * 2.0 + 0.75 * 4.0, 0.0],
        [0.0, 0.75 * 1.0, 0.75 * 1.0],
    ]
    np.testing.assert_allclose(arrays["coef"], expected, rtol=1e-15)
    assert arrays["scale"].tolist() == [1.0]
    learner = registry.get("mc-perceptron").from_state(header, arrays)
    np.testing.assert_allclose(learner.coefficients(), expected, rtol=1e-15)
    np.testing.assert_allclose(
        learner.averaged_coefficients(),
        [[0.05, 0.0, 0.0], [0.0, 0.25 * 0.4 + 0.75 * 1.0, 0.0], [0.0, 0.0, 1.5]],
        rtol=1e-12,
    )


@pytest.mark.parametrize("name", ["mc-pa", "pegasos", "mc-projectron++"])
def test_one_multiclass_shard_learns_what_one_process_learns(class_shards, tmp_path, name):
    """Mixing one shard is the identity, for the last hypothesis and for the running average (the mix
    restarts its sums at T·average, and they go on)."""
    common = ["train", "-a", name, "--gamma", "0.5", "--average", "-q", class_shards / "part-0.svm"]
    assert run(*common, "-o", tmp_path / "one.model").exit_code == 0
    assert run(*common, "--backend", "serial", "--sync-every", "60", "-o", tmp_path / "sharded.model").exit_code == 0
    chunk = read_all(class_shards / "part-1.svm")
    for resume in (True, False):  # the online learner, then the averaged hypothesis the model predicts with
        one, sharded = (Model.load(tmp_path / f, resume=resume).learner for f in ("one.model", "sharded.model"))
        assert one.counters.tolist() == sharded.counters.tolist()  # the same decisions
        expected = one.decision_function(chunk)
        # rounding relative to the scores' scale: a score near 0 is a cancellation of terms of that size
        # (mc-projectron++: a class score of 0.0016 among scores up to 1.4 differed by 2.7e-12 at numpy 2.4)
        np.testing.assert_allclose(
            sharded.decision_function(chunk), expected, rtol=1e-9, atol=1e-11 * np.abs(expected).max()
        )


@pytest.mark.parametrize(
    "settings",
    [["-a", "bpegasos", "-B", "30", "--maintenance", "merge"], ["-a", "mc-projectron++", "--eta", "0.5"]],
    ids=["bpegasos", "mc-projectron++"],
)
def test_multiclass_shards_on_serial_and_dask_write_the_same_model_file(class_shards, tmp_path, settings):
    pytest.importorskip("distributed")
    args = [
        "train",
        *settings,
        "--gamma",
        "0.5",
        "--sync-every",
        "50",
        "-q",
        str(class_shards / "part-*.svm"),
        "--backend",
    ]
    assert run(*args, "serial", "-o", tmp_path / "serial.model").exit_code == 0
    r = run(*args, "dask", "--jobs", "2", "-o", tmp_path / "dask.model")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "serial.model").read_bytes() == (tmp_path / "dask.model").read_bytes()
    model = Model.load(tmp_path / "serial.model")
    assert model.learner.counter("examples") == 250 + 290 + 330
    if "-B" in settings:
        assert len(model.learner.support) == 30  # the budget, after the last compression
    assert sorted(model.labels.values) == [1.0, 2.0, 3.0, 4.0]


def test_mc_projectron_plus_plus_mixes_each_class_s_support_set_apart(class_shards):
    """A support pair serves one class (mc-projectron++'s per-class sets, §5): the mix merges a vector
    only with the same vector of the same class, each class's members are the union's pairs of that
    class, and each class's Gram inverse is rebuilt from them."""
    cls = registry.get("mc-projectron++")
    kernel = Kernel("rbf", 0.5, 0.0, 1).to_dict()
    shards = [
        Shard(str(class_shards / f"part-{w}.svm"), w, cls.name, kernel, {"eta": 0.5}, 0, False, 4096) for w in range(2)
    ]
    for shard in shards:
        shard.step(10**6)
    reports = [shard.report() for shard in shards]
    labels = average.merged_labels(reports, ["a", "b"])
    pairs = []  # (vector, class value) of every shard's support pairs, in order of first sight
    for r in reports:
        a, values = r["arrays"], r["labels"]["values"]
        for c, k in enumerate(a["class_counts"].tolist()):
            for j in a["class_members"][c, :k]:
                lo, hi = a["sv_indptr"][j], a["sv_indptr"][j + 1]
                pair = (a["sv_indices"][lo:hi].tobytes(), a["sv_values"][lo:hi].tobytes(), values[c])
                pairs += [pair] if pair not in pairs else []
    header, arrays = average.mix(reports, np.zeros_like(reports[0]["arrays"]["counters"]), labels, None)
    learner = cls.from_state(header, arrays)
    n, m = len(learner.support), int(learner.n_classes[0])
    assert n == len(pairs) and "class_kinv" in learner.stale
    vectors = [
        (arrays["sv_indices"][lo:hi].tobytes(), arrays["sv_values"][lo:hi].tobytes())
        for lo, hi in zip(arrays["sv_indptr"][:-1], arrays["sv_indptr"][1:])
    ]
    assert len(set(vectors)) < n  # some x joined two classes (a mistake adds it to y and to the rival)
    coef = learner.coefficients()
    for c in range(m):
        members = learner.members[c, : learner.counts[c]]
        mine = np.zeros(n, bool)
        mine[members] = True
        assert np.all(coef[~mine, c] == 0.0) and np.all(np.delete(coef[members], c, axis=1) == 0.0)
        assert sorted((vectors[j], labels["values"][c]) for j in members) == sorted(
            ((i, v), value) for i, v, value in pairs if value == labels["values"][c]
        )
    learner._rebuild()
    K = learner.gram()
    for c in range(m):
        members = learner.members[c, : learner.counts[c]]
        np.testing.assert_allclose(
            learner.kinv[c, : len(members), : len(members)] @ K[np.ix_(members, members)],
            np.eye(len(members)),
            atol=1e-6,
        )


def test_the_sharded_average_is_the_average_over_every_example_of_every_shard(tmp_path):
    """A linear-kernel perceptron is a weight vector: the protocol simulated in numpy (each shard
    learns its next examples, the weights mixed by the shares, every example's hypothesis summed)
    gives the averaged hypothesis the sharded run must have, over three synchronisations."""
    data = [random_stream(n, 4, 30 + w) for w, n in enumerate((120, 80))]
    for w, (X, y) in enumerate(data):
        (tmp_path / f"s{w}.svm").write_text(
            "".join(
                ("+1" if lab > 0 else "-1") + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
                for row, lab in zip(X, y)
            )
        )
    r = run(
        "train",
        "-a",
        "perceptron",
        "--kernel",
        "linear",
        "--average",
        "--sync-every",
        "50",
        "-q",
        tmp_path / "s0.svm",
        tmp_path / "s1.svm",
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 0, r.output
    common, total, position = np.zeros(4), np.zeros(4), [0, 0]
    while any(p < len(y) for p, (_, y) in zip(position, data)):
        weights, learned = [], []
        for w, (X, y) in enumerate(data):
            v = common.copy()
            for t in range(position[w], min(position[w] + 50, len(y))):
                if y[t] * (v @ X[t]) <= 0:
                    v = v + y[t] * X[t]
                total += v  # the hypothesis after this example
            learned.append(min(50, len(y) - position[w]))
            position[w] += learned[-1]
            weights.append(v)
        common = sum(n * v for n, v in zip(learned, weights)) / sum(learned)
    model = Model.load(tmp_path / "m.model")  # a running-average model predicts with its average
    chunk = read_all(tmp_path / "s0.svm")
    np.testing.assert_allclose(
        model.learner.decision_function(chunk), data[0][0] @ (total / 200), rtol=1e-9, atol=1e-12
    )
    last = Model.load(tmp_path / "m.model", resume=True).learner
    np.testing.assert_allclose(last.decision_function(chunk), data[0][0] @ common, rtol=1e-9, atol=1e-12)


def test_the_sharded_multiclass_average_is_the_average_over_every_example_of_every_shard(tmp_path):
    """The multiclass protocol simulated in numpy (a linear-kernel mc-perceptron is one weight vector per
    class; a class joins with a zero prototype; the rival is the best other known class, ties to the
    first): the sharded run's averaged and last hypotheses are the simulation's."""
    data = []
    for w, n in enumerate((120, 80)):
        X, _ = random_stream(n, 4, 30 + w)
        y = np.minimum((X[:, 0] > 0) + 2 * (X[:, 1] > 0.3), 2)
        y[:3] = [0, 1, 2]  # every shard meets the classes in one order: its class numbers are the merged ones
        data.append((X, y))
        (tmp_path / f"s{w}.svm").write_text(
            "".join(
                f"{lab + 1}" + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
                for row, lab in zip(X, y)
            )
        )
    r = run(
        "train",
        "-a",
        "mc-perceptron",
        "--kernel",
        "linear",
        "--average",
        "--sync-every",
        "50",
        "-q",
        tmp_path / "s0.svm",
        tmp_path / "s1.svm",
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 0, r.output
    common, total, position, known = np.zeros((3, 4)), np.zeros((3, 4)), [0, 0], [0, 0]
    while any(p < len(y) for p, (_, y) in zip(position, data)):
        weights, learned = [], []
        for w, (X, y) in enumerate(data):
            V = common.copy()
            for t in range(position[w], min(position[w] + 50, len(y))):
                known[w] = max(known[w], y[t] + 1)
                f = V @ X[t]
                others = [i for i in range(known[w]) if i != y[t]]
                rival = min(others, key=lambda i: (-f[i], i)) if others else None
                if rival is not None and f[y[t]] <= f[rival]:
                    V[y[t]] += X[t]
                    V[rival] -= X[t]
                total += V  # the hypothesis after this example
            learned.append(min(50, len(y) - position[w]))
            position[w] += learned[-1]
            weights.append(V)
        common = sum(n * v for n, v in zip(learned, weights)) / sum(learned)
        known = [3, 3]  # the mixed model knows every shard's classes
    chunk = read_all(tmp_path / "s0.svm")
    averaged = Model.load(tmp_path / "m.model").learner
    np.testing.assert_allclose(averaged.decision_function(chunk), data[0][0] @ (total / 200).T, rtol=1e-9, atol=1e-12)
    last = Model.load(tmp_path / "m.model", resume=True).learner
    np.testing.assert_allclose(last.decision_function(chunk), data[0][0] @ common.T, rtol=1e-9, atol=1e-12)


def test_budgeted_pegasos_comes_back_to_its_budget_by_its_own_merging(class_shards):
    """bpegasos' union of the shards' support sets is brought back to B by its own maintenance: with
    --maintenance merge the compressed set holds merged points that none of the shards had."""
    seen = []
    mixer = type(registry.get("bpegasos").mixing)
    real = mixer.compress

    def watched(self, learner):
        indptr, idx, val = learner.support.to_csr()
        union = {(idx[a:b].tobytes(), val[a:b].tobytes()) for a, b in zip(indptr[:-1], indptr[1:])}
        out = real(self, learner)
        indptr, idx, val = out.support.to_csr()
        kept = {(idx[a:b].tobytes(), val[a:b].tobytes()) for a, b in zip(indptr[:-1], indptr[1:])}
        seen.append((len(union), len(kept), len(kept - union)))
        return out

    mixer.compress = watched
    try:
        train_shards(
            [str(class_shards / "part-*.svm")],
            "bpegasos",
            KernelSpec("rbf", 0.5),
            {"budget": 20, "maintenance": "merge"},
            sync_every=50,
        )
    finally:
        mixer.compress = real
    assert any(union > 20 for union, _, _ in seen)  # the union did pass the budget
    assert all(kept == min(union, 20) for union, kept, _ in seen)
    assert any(new > 0 for union, _, new in seen if union > 20)  # merged points, not a subset


def test_budgeted_pegasos_s_merged_points_get_the_coefficients_closest_to_the_mix(class_shards):
    """After its own merging has chosen the B points, their coefficients are the ridge least-squares
    fit of the whole mixed f (numpy's rbf and solve here), not the pairwise fits of the merges."""
    cls = registry.get("bpegasos")
    kernel = Kernel("rbf", 0.5, 0.0, 1).to_dict()
    shards = [
        Shard(
            str(class_shards / f"part-{w}.svm"),
            w,
            cls.name,
            kernel,
            cls.resolve_params({"budget": 20, "maintenance": "merge"}),
            0,
            False,
            4096,
        )
        for w in range(3)
    ]
    for shard in shards:
        shard.step(10**6)
    reports = [shard.report() for shard in shards]
    labels = average.merged_labels(reports, ["a", "b", "c"])
    mixed = cls.from_state(*average.mix(reports, np.zeros_like(reports[0]["arrays"]["counters"]), labels))

    def dense(learner):
        return dense_rows(learner.support.to_csr(), 4)

    U, f = dense(mixed), mixed.coefficients().copy()
    merged_only = cls.from_state(*mixed.state()).compress_to(20)
    small = cls.mixing.compress(mixed)
    Z = dense(small)
    assert len(U) > 20 and np.array_equal(Z, dense(merged_only))  # the points merging chose
    expected = np.linalg.solve(rbf(Z, Z) + mixing.MIX_RIDGE * np.eye(20), rbf(Z, U) @ f)  # k(z, z) = 1
    np.testing.assert_allclose(small.coefficients(), expected, rtol=1e-8, atol=1e-10)
    assert not np.allclose(merged_only.coefficients(), expected, rtol=1e-3)


def test_a_multiclass_shard_s_divergence_counts_every_class_a_new_one_included(tmp_path):
    """‖f − r‖² summed over the classes' prototypes, with a class first met after the mix having a zero
    prototype in r."""
    X, _ = random_stream(120, 4, 40)
    labels = np.where(np.arange(120) < 80, 1 + (X[:, 0] > 0), 3)  # class 3 first appears at line 81
    (tmp_path / "s.svm").write_text(
        "".join(
            f"{int(lab)}" + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
            for row, lab in zip(X, labels)
        )
    )
    shard = Shard(str(tmp_path / "s.svm"), 0, "mc-perceptron", Kernel("rbf", 0.5).to_dict(), {}, 0, False, 4096, True)

    def model():
        learner = shard.model.learner
        return dense_rows(learner.support.to_csr(), 5), learner.coefficients().copy()

    shard.step(60)
    r = shard.report()
    shard.adopt(r["header"], r["arrays"], r["labels"])
    Xr, Cr = model()
    assert Cr.shape[1] == 2
    drift = shard.step(60)["divergence"]
    Xf, Cf = model()
    assert Cf.shape[1] == 3  # the new class
    Cr = np.pad(Cr, ((0, 0), (0, 1)))
    expected = sum(rkhs_sqdist(Xf, Cf[:, c], Xr, Cr[:, c], 0.5) for c in range(3))
    assert drift > 0.1 and drift == pytest.approx(expected, rel=1e-9)


def test_sharded_forgetrons_learn_data_whose_identical_examples_have_opposite_labels(tmp_path):
    """A mix merges identical vectors, so one added with +1 and one with −1 may cancel to α = 0; the
    Forgetron then evicts it without shrinking (σ = 0), where its quadratic has no positive root."""
    rng = np.random.default_rng(0)
    points = ["1:1 3:1", "2:1 3:1", "1:1 4:1", "2:1 4:1"]
    for w in range(2):
        (tmp_path / f"part-{w}.svm").write_text(
            "".join(f"{rng.choice(['+1', '-1'])} {rng.choice(points)}\n" for _ in range(200))
        )
    r = run(
        "train",
        "-a",
        "forgetron",
        "-B",
        "3",
        "--gamma",
        "0.5",
        "--sync-every",
        "5",
        "-q",
        tmp_path / "part-*.svm",
        "--backend",
        "serial",
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 0, r.output
    model = Model.load(tmp_path / "m.model").learner
    assert len(model.support) <= 3 and model.counter("examples") == 400


def test_nogd_mixes_as_an_expansion_and_maps_the_mixed_landmarks(shards, tmp_path):
    """Sharded nogd: every mix's union back to B; once the shards have switched, the mixed model is in
    the linear phase with the Nyström map of the mixed landmarks, M K̂ Mᵀ = I_k on numpy's Gram matrix
    of them, its rank the one asked for."""
    from budgetcli.learning.algorithms.nystrom import LINEAR_PHASE, PHASE, RANK

    out = tmp_path / "m.model"
    args = ["-a", "nogd", "-B", "15", "--rank", "6", "--gamma", "0.5", "--sync-every", "100", "--backend", "serial"]
    args += ["--save-resume"]
    r = run("train", *args, "-q", shards / "part-*.svm", "-o", out)
    assert r.exit_code == 0, r.output
    learner = Model.load(out, resume=True).learner
    n, k = len(learner.support), int(learner.scalars[RANK])
    assert (n, k, learner.scalars[PHASE]) == (15, 6, LINEAR_PHASE)
    X = dense_rows(learner.support.to_csr(), 4)
    M = learner.slot["nystrom"][:k, :n]
    np.testing.assert_allclose(M @ rbf(X, X) @ M.T, np.eye(k), atol=1e-8)
    # a compact file leaves the map out, and a resumed run makes it again, the same bits
    compact = tmp_path / "compact.model"
    assert run("train", *args[:-1], "-q", shards / "part-*.svm", "-o", compact).exit_code == 0
    again = Model.load(compact, resume=True).learner
    assert "nystrom" in again.stale
    again.rebuild_stale()
    np.testing.assert_array_equal(again.slot["nystrom"][:k, :n], M)


@pytest.mark.parametrize("name", ["nogd", "mc-nogd"])
def test_serial_and_dask_write_the_same_nogd_model_file(shards, class_shards, tmp_path, name):
    pytest.importorskip("distributed")
    data = (class_shards if name == "mc-nogd" else shards) / "part-*.svm"
    args = ["train", "-a", name, "-B", "12", "--gamma", "0.5", "--sync-every", "80", "-q", data, "--backend"]
    assert run(*args, "serial", "-o", tmp_path / "serial.model").exit_code == 0
    r = run(*args, "dask", "--jobs", "2", "-o", tmp_path / "dask.model")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "serial.model").read_bytes() == (tmp_path / "dask.model").read_bytes()
    assert len(Model.load(tmp_path / "serial.model").learner.support) == 12


# ---- regression (issue #48) ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def regression_shards(tmp_path_factory):
    """Two shards of a noisy sinc stream, and a test part: real targets, 3 features."""
    d = tmp_path_factory.mktemp("regression-shards")
    rng = np.random.default_rng(7)
    for name, n in (("part-0.svm", 120), ("part-1.svm", 80), ("test.svm", 30)):
        X = rng.uniform(-2, 2, (n, 3))
        y = np.sinc(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(n)
        (d / name).write_text(
            "".join(
                f"{t:.17g}" + "".join(f" {j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n" for row, t in zip(X, y)
            )
        )
    return d


def predicted(path, data):
    from budgetcli import api

    return api.predictions(Model.load(path), str(data))


@pytest.mark.parametrize(
    "algorithm",
    [
        ["klms"],
        ["norma-epsilon"],
        ["bogd-regression", "-B", "500"],
        ["fogd-regression"],  # its weights averaged as fogd's, over the map every shard makes from the seed
        ["nogd-regression", "-B", "500"],  # still in phase one: an expansion over its landmarks
        ["krls"],
        ["swkrls", "-B", "500"],
        ["krlst", "-B", "500"],
    ],
    ids=lambda a: a[0],
)
def test_a_regression_mix_predicts_the_shares_average_of_the_shards_models(regression_shards, tmp_path, algorithm):
    """Mixed once (the shards' lengths within --sync-every, or a KRLS filter, mixed only at the end whatever
    --sync-every says), the model's prediction is (n₁/n) f₁(x) + (n₂/n) f₂(x) of the models each shard makes
    alone (the average of divide-and-conquer kernel ridge regression), with no compression under these
    budgets; the online error sums are the two runs' sums."""
    d = regression_shards
    common = ["train", "--task", "regression", "-a", *algorithm, "--gamma", "0.5", "-q"]
    for w in range(2):
        assert run(*common, d / f"part-{w}.svm", "-o", tmp_path / f"{w}.model").exit_code == 0
    every = "7" if algorithm[0].endswith("krls") or algorithm[0] == "krlst" else "1000"
    r = run(*common, d / "part-0.svm", d / "part-1.svm", "--sync-every", every, "-o", tmp_path / "mixed.model")
    assert r.exit_code == 0, r.output
    expected = 0.6 * predicted(tmp_path / "0.model", d / "test.svm") + 0.4 * predicted(
        tmp_path / "1.model", d / "test.svm"
    )
    np.testing.assert_allclose(predicted(tmp_path / "mixed.model", d / "test.svm"), expected, rtol=1e-9, atol=1e-9)
    one, two, mixed = (Model.load(tmp_path / f"{n}.model").learner for n in ("0", "1", "mixed"))
    np.testing.assert_allclose(mixed.scalars[:3], one.scalars[:3] + two.scalars[:3], rtol=1e-12)
    assert mixed.counter("examples") == 200


def test_norma_epsilon_s_mixed_tube_is_the_shares_mean(regression_shards, tmp_path):
    d = regression_shards
    common = [
        "train",
        "--task",
        "regression",
        "-a",
        "norma-epsilon",
        "--norma-loss",
        "nu",
        "--norma-nu",
        "0.3",
        "--gamma",
        "0.5",
        "-q",
    ]
    for w in range(2):
        assert run(*common, d / f"part-{w}.svm", "-o", tmp_path / f"{w}.model").exit_code == 0
    assert run(*common, d / "part-0.svm", d / "part-1.svm", "-o", tmp_path / "m.model").exit_code == 0
    tubes = [Model.load(tmp_path / f"{n}.model").learner.scalars[4] for n in ("0", "1", "m")]
    assert tubes[2] == pytest.approx(0.6 * tubes[0] + 0.4 * tubes[1], rel=1e-12) and tubes[0] != tubes[1]


def test_a_mixed_krls_filter_keeps_its_budget_and_is_refused_on_resume_in_one_line(regression_shards, tmp_path):
    d = regression_shards
    out = tmp_path / "m.model"
    r = run("train", "--task", "regression", "-a", "krlst", "-B", "20", "--gamma", "0.5", d / "part-0.svm",
            d / "part-1.svm", "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "mixed 2 shards once, at the end" in r.output and "not resumable" in r.output
    assert len(Model.load(out).learner.support) == 20
    line = (
        f"budgetlearn: error: {out}: a krlst model averaged from shards cannot be resumed: its state beside the "
        "coefficients is no average of the shards'; train again"
    )
    for more in ([d / "test.svm"], [d / "part-0.svm", d / "part-1.svm"]):
        again = tmp_path / "again.model"
        r = run("train", "--resume", out, *more, "-o", again)
        assert r.exit_code != 0 and r.output.splitlines() == [line] and not again.exists()
    # mixed once, at the end: nothing to checkpoint
    r = run("train", "--task", "regression", "-a", "krls", "--checkpoint-every", "50", d / "part-0.svm",
            d / "part-1.svm", "-o", tmp_path / "c.model")  # fmt: skip
    assert r.exit_code == 2 and not (tmp_path / "c.model").exists()
    assert r.output.splitlines() == [
        "budgetlearn: error: --checkpoint-every: krls's shards are mixed once, at the end, with nothing to checkpoint"
    ]
    # a klms mix is an expansion like any other: it goes on learning
    assert (
        run("train", "--task", "regression", "-a", "klms", d / "part-0.svm", d / "part-1.svm", "-o", out).exit_code == 0
    )
    assert run("train", "--resume", out, d / "test.svm", "-o", tmp_path / "again.model").exit_code == 0


@pytest.mark.parametrize(
    "algorithm,data,options",
    [("nogd-regression", "regression_shards/part", []),
     ("nogd-novelty", "novelty_shards/short", ["--nu", "0.5", "--learning-rate", "0.5"])],
)  # fmt: skip
def test_a_mix_of_switched_nogd_shards_is_in_the_linear_phase_with_its_task_s_numbers(
    request, tmp_path, algorithm, data, options
):
    """Both shards store B landmarks and switch to the Nyström map; their mix is in the linear phase, its map
    remade (rank > 0) from at most B landmarks, with its task's numbers before nogd's: the error sums the
    shards' sums (nogd-regression), ρ the shares' mean (nogd-novelty).  nogd's own mix wrote the phase at
    scalars[0], where the task's numbers are."""
    from budgetcli.learning.algorithms.nystrom import LINEAR_PHASE, PHASE, RANK

    fixture, stem = data.split("/")
    d = request.getfixturevalue(fixture)
    task = registry.get(algorithm).tasks[0]
    common = ["train", "--task", task, "-a", algorithm, "-B", "20", "--gamma", "0.5", *options, "-q"]
    parts = (d / f"{stem}-0.svm", d / f"{stem}-1.svm")
    for w in range(2):
        assert run(*common, parts[w], "-o", tmp_path / f"{w}.model").exit_code == 0
    r = run(*common, *parts, "--sync-every", "1000", "-o", tmp_path / "mixed.model")
    assert r.exit_code == 0, r.output
    one, two, mixed = (Model.load(tmp_path / f"{n}.model").learner for n in ("0", "1", "mixed"))
    at = registry.get(algorithm).constants["nystrom_at"]
    assert one.scalars[at + PHASE] == two.scalars[at + PHASE] == mixed.scalars[at + PHASE] == LINEAR_PHASE
    assert mixed.scalars[at + RANK] > 0 and len(mixed.support) <= 20
    if task == "regression":
        np.testing.assert_allclose(mixed.scalars[:3], one.scalars[:3] + two.scalars[:3], rtol=1e-12)
    else:
        assert mixed.scalars[RHO] == pytest.approx(0.6 * one.scalars[RHO] + 0.4 * two.scalars[RHO], rel=1e-12)
    assert mixed.counters.tolist() == (one.counters + two.counters).tolist()
    test = d / "test.svm"
    scores = (
        predicted(tmp_path / "mixed.model", test) if task == "regression" else mixed.hypothesis_scores(read_all(test))
    )
    assert np.isfinite(scores).all()


@pytest.mark.parametrize(
    "task,data", [("regression", "regression_shards/part"), ("novelty", "novelty_shards/short")]
)  # fmt: skip
def test_a_sharded_run_of_a_task_with_a_fixed_default_takes_it_without_a(request, tmp_path, task, data):
    """Regression's and novelty's default algorithm does not depend on the data (registry.task_default), so a
    sharded run needs no -a, as one process does not; classification's is chosen from one input's labels and
    stays refused in one line."""
    fixture, stem = data.split("/")
    d = request.getfixturevalue(fixture)
    out, named = tmp_path / "m.model", tmp_path / "named.model"
    parts = (d / f"{stem}-0.svm", d / f"{stem}-1.svm")
    assert run("train", "--task", task, *parts, "-o", out).exit_code == 0
    assert run("train", "--task", task, "-a", registry.DEFAULT[task], *parts, "-o", named).exit_code == 0
    assert Model.load(out).learner.name == registry.DEFAULT[task]
    assert out.read_bytes() == named.read_bytes()


def test_a_sharded_classification_run_without_a_is_refused_in_one_line(shards, tmp_path):
    out = tmp_path / "m.model"
    r = run("train", shards / "part-0.svm", shards / "part-1.svm", "-o", out)
    assert r.exit_code == 2 and not out.exists()
    assert r.output.splitlines() == [
        "budgetlearn: error: a sharded run needs -a NAME (classification's default is chosen from one input)"
        " (see 'main train --help')"
    ]


def test_a_regression_mix_is_compressed_onto_the_vectors_a_pivoted_cholesky_takes_first():
    """The farthest from the span of those taken first: of 0, 0.1 and 3 on a line, 0 (the tie to the lower
    index), then 3; 0.1 is projected onto them, and the mixed function at the kept points is unchanged."""
    from budgetcli.learning.algorithms.lms import pivoted_cholesky

    x = np.array([[0.0], [0.1], [3.0]])
    assert pivoted_cholesky(rbf(x, x), 2).tolist() == [0, 2]
    assert pivoted_cholesky(rbf(x, x), 3).tolist() == [0, 1, 2]
    learner = registry.get("klms")(Kernel("rbf", 0.5, 0.0, 1), budget=2)
    header, arrays = learner.state()
    arrays.update(
        sv_indptr=np.array([0, 1, 2, 3], np.int64),
        sv_indices=np.array([0, 0, 0], np.int32),
        sv_values=np.array([1e-300, 0.1, 3.0]),  # a stored zero would be no entry: 1e-300 is 0 to the kernel
        alpha=np.array([1.0, -2.0, 0.5]),
        avg_sum=np.zeros(3),
        avg_stamp=np.ones(3),
    )
    mixed = registry.get("klms").mixing.compress(registry.get("klms").from_state(header | {"n_features": 1}, arrays))
    assert dense_rows(mixed.support.to_csr(), 1)[:, 0].tolist() == [1e-300, 3.0]
    f = rbf(x, x) @ np.array([1.0, -2.0, 0.5])
    g = rbf(x[[0, 2]], x[[0, 2]]) @ mixed.slot["alpha"][:2]
    np.testing.assert_allclose(g, f[[0, 2]], rtol=1e-8)


# ---- novelty detection (issue #49) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def novelty_shards(tmp_path_factory):
    """Shards of 3-d Gaussian rows labelled 1 (normal, a label a novelty run ignores): two short ones (120 and
    80 rows) and three long ones (1,500 rows each); held-out rows, 1,000 normal and 50 novel (label -1, far
    out)."""
    d = tmp_path_factory.mktemp("novelty-shards")
    rng = np.random.default_rng(11)

    def write(name, X, labels):
        (d / name).write_text(
            "".join(
                f"{t:g}" + "".join(f" {j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n" for row, t in zip(X, labels)
            )
        )

    for name, n in (("short-0.svm", 120), ("short-1.svm", 80), *((f"long-{w}.svm", 1500) for w in range(3))):
        write(name, rng.standard_normal((n, 3)), np.ones(n))
    far = rng.uniform(3.0, 4.0, (50, 3)) * rng.choice([-1.0, 1.0], (50, 3))
    write("test.svm", np.vstack([rng.standard_normal((1000, 3)), far]), np.r_[np.ones(1000), -np.ones(50)])
    return d


def averaged(learner):
    """The learner as its averaged hypothesis (coefficients and ρ the means over its rounds): its own loop's."""
    learner.set_coefficients(learner.averaged_coefficients())
    return learner


@pytest.mark.parametrize("algorithm", ["norma-novelty", "fogd-novelty"])
def test_a_novelty_mix_is_the_shares_average_of_the_shards_models(novelty_shards, tmp_path, algorithm):
    """Mixed once (both shards within --sync-every), the model's f is (n₁/n) f₁ + (n₂/n) f₂ of the models each
    shard makes alone (no compression under the budget), its ρ their shares' mean, its averaged hypothesis
    (f and ρ) the shares' mean of theirs, its counts their sums, and the examples it keeps to refit ρ every
    row of both shards (fewer than RECENT), shard after shard."""
    d = novelty_shards
    common = ["train", "--task", "novelty", "-a", algorithm, "--gamma", "0.5", "--hypothesis", "last", "-q"]
    for w in range(2):
        assert run(*common, d / f"short-{w}.svm", "-o", tmp_path / f"{w}.model").exit_code == 0
    r = run(*common, d / "short-0.svm", d / "short-1.svm", "--sync-every", "1000", "-o", tmp_path / "mixed.model")
    assert r.exit_code == 0, r.output
    one, two, mixed = (Model.load(tmp_path / f"{n}.model").learner for n in ("0", "1", "mixed"))
    test = read_all(d / "test.svm")
    expected = 0.6 * one.hypothesis_scores(test) + 0.4 * two.hypothesis_scores(test)
    np.testing.assert_allclose(mixed.hypothesis_scores(test), expected, rtol=1e-9, atol=1e-12)
    rho, rho_sum = (np.array([m.scalars[i] for m in (one, two, mixed)]) for i in (RHO, RHO_SUM))
    assert rho[2] == pytest.approx(0.6 * rho[0] + 0.4 * rho[1], rel=1e-12) and rho[0] != rho[1]
    assert rho_sum[2] == pytest.approx(rho_sum[0] + rho_sum[1], rel=1e-12)  # T (n₁/n · Σρ₁/n₁ + ...): the sum
    assert mixed.counters.tolist() == (one.counters + two.counters).tolist()  # examples, flagged rounds
    assert mixed.counter("examples") == 200
    rows = concatenate([read_all(d / "short-0.svm"), read_all(d / "short-1.svm")]).csr
    for kept, row in zip(mixed.recent.csr, rows):
        np.testing.assert_array_equal(kept, row)
    means = [averaged(m) for m in (one, two, mixed)]
    expected = 0.6 * means[0].hypothesis_scores(test) + 0.4 * means[1].hypothesis_scores(test)
    np.testing.assert_allclose(means[2].hypothesis_scores(test), expected, rtol=1e-9, atol=1e-12)
    assert means[2].scalars[RHO] == pytest.approx(0.6 * means[0].scalars[RHO] + 0.4 * means[1].scalars[RHO])


def recent_report(values, learned):
    """A novelty shard's report as the mix of the last rounds' examples reads it: one row per value (feature
    1 holds it), and the rows it learned since the last mix."""
    n = len(values)
    arrays = {
        "recent_indptr": np.arange(n + 1, dtype=np.int64),
        "recent_indices": np.ones(n, np.int32),
        "recent_values": np.array(values, np.float64),
    }
    return {"arrays": arrays, "learned": learned}


def test_the_last_rounds_examples_of_a_mix_are_the_shards_in_proportion_to_their_shares():
    assert RECENT == 2000
    base = recent_report(range(2000), 0)  # the last mix's, which every shard went on from
    # more than RECENT learned since: the last 3/4 · 2000 of shard 0's, 1/4 · 2000 of shard 1's
    kept = mixed_recent([recent_report(range(10000, 12000), 3000), recent_report(range(20000, 22000), 1000)], base)
    assert kept.values.tolist() == list(range(10500, 12000)) + list(range(21500, 22000))
    # three equal shares of 2000: 667, 667, 666 (the largest remainders, ties to the first shard)
    shards = [recent_report(range(k * 10000, k * 10000 + 2000), 1000) for k in (1, 2, 3)]
    kept = mixed_recent(shards, base)
    assert [int((kept.values // 10000 == k).sum()) for k in (1, 2, 3)] == [667, 667, 666] and len(kept) == RECENT
    assert kept.values[:667].tolist() == list(range(11333, 12000))  # each shard's last rows
    # fewer learned since: all of them, after the last of the last mix's to make up 2000
    own = [list(range(10000, 10300)), list(range(20000, 20100))]
    shards = [recent_report(list(range(300, 2000)) + own[0], 300), recent_report(list(range(100, 2000)) + own[1], 100)]
    assert mixed_recent(shards, base).values.tolist() == list(range(400, 2000)) + own[0] + own[1]
    # the first mix: no last mix's rows; a shard that learned nothing adds none
    kept = mixed_recent([recent_report([1.0, 2.0], 2), recent_report([], 0), recent_report([3.0], 1)], None)
    assert kept.values.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("algorithm", ["norma-novelty", "fogd-novelty"])
def test_a_sharded_novelty_run_flags_about_nu(novelty_shards, tmp_path, algorithm):
    """Three shards of 1,500 normal rows mixed every 300 examples per shard, ν = 0.1: the fraction flagged
    online and the model's fraction of held-out normal rows within ν ± 0.02, and the far rows flagged
    (an AUC near 1).  The Python API (budgetcli.train with a Sharding) writes the CLI's model."""
    from budgetcli import api
    from budgetcli.learning import metrics

    d = novelty_shards
    parts = [str(d / f"long-{w}.svm") for w in range(3)]
    out = tmp_path / "m.model"
    r = run(
        "train", "--task", "novelty", "-a", algorithm, "--nu", "0.1", "--sync-every", "300", "-q", *parts, "-o", out
    )
    assert r.exit_code == 0, r.output
    model = Model.load(out)
    learner = model.learner
    assert learner.counter("examples") == 4500
    assert abs(learner.counter("margin_updates") / 4500 - 0.1) <= 0.02
    test = read_all(d / "test.svm")
    g = model.hypothesis_learner().decision_function(test)  # fogd-novelty's: the averaged hypothesis
    normal = test.labels == 1
    assert abs(np.mean(g[normal] <= 0) - 0.1) <= 0.02
    assert metrics.auc(g, normal) > 0.99
    spec = TrainSpec(algorithm, params={"nu": 0.1}, task="novelty", sharding=Sharding(tuple(parts), sync_every=300))
    np.testing.assert_array_equal(api.train(spec, None).hypothesis_learner().decision_function(test), g)
