"""`train --average`: a model that predicts with the averaged hypothesis and still resumes the online
learner (issue: a good held-out model from the user's own commands)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from budgetcli.base import modelfile, registry
from budgetcli.base.core import gather_rows
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import MulticlassLabels
from budgetcli.learning.archive import compression_kernels
from budgetcli.learning.learner import NO_MATRIX, kernel_matrix
from budgetcli.model.model import Model
from budgetcli.numerics.support import DENSE_LIMIT, SupportSet

from .helpers import chunk_from_dense, random_stream
from .test_cli import run, write_stream

RBF = ("--gamma", "0.5")


@pytest.fixture
def days(tmp_path):
    """Two halves of one stream, and the whole of it, as files."""
    whole, day1, day2 = tmp_path / "whole.txt", tmp_path / "day1.txt", tmp_path / "day2.txt"
    write_stream(whole, n=400, seed=5)
    lines = whole.read_text().splitlines(keepends=True)
    day1.write_text("".join(lines[:230]))
    day2.write_text("".join(lines[230:]))
    return whole, day1, day2


def scores(model, data) -> np.ndarray:
    r = run("predict", "--scores", model, data)
    assert r.exit_code == 0, r.output
    return np.array([float(line.split()[1]) for line in r.output.splitlines()])


@pytest.mark.parametrize("algo", [("perceptron",), ("projectron++", "--eta", "0.3"), ("pa-i",)])
def test_without_evictions_the_model_predicts_online_to_batch_s_average(days, tmp_path, algo):
    whole, _, _ = days
    avg, batch, online = tmp_path / "avg.model", tmp_path / "batch.model", tmp_path / "online.model"
    assert run("train", "-a", *algo, *RBF, "--average", whole, "-o", avg).exit_code == 0
    assert run("online-to-batch", "-a", *algo, *RBF, whole, "-o", batch).exit_code == 0
    assert run("train", "--hypothesis", "last", "-a", *algo, *RBF, whole, "-o", online).exit_code == 0
    assert np.array_equal(scores(avg, whole), scores(batch, whole))
    assert not np.array_equal(scores(avg, whole), scores(online, whole))
    # the file holds the online state: loaded to resume, it is the plain train's learner
    resumed, plain = Model.load(avg, resume=True), Model.load(online, resume=True)
    assert resumed.hypothesis == "running-average"
    n = len(plain.learner.support)
    assert np.array_equal(resumed.learner.slot["alpha"][:n], plain.learner.slot["alpha"][:n])


def test_with_evictions_the_model_is_the_projected_average_within_the_budget(days, tmp_path):
    """Fewer evictions than a fold gathers (max(B, 64)): the model folds once, when it is written, which
    is online-to-batch's projected average.  (Past that, it folds as it goes: test_first_contact.)"""
    whole = tmp_path / "head.txt"
    whole.write_text("".join(days[0].read_text().splitlines(keepends=True)[:70]))
    avg, batch = tmp_path / "avg.model", tmp_path / "batch.model"
    r = run("train", "-a", "rbp", "-B", "10", *RBF, "--average", "-q", "--json", whole, "-o", avg)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["support_size"] == 10
    assert 10 + 10 < json.loads(r.output)["mistakes"] < 10 + 64  # evictions, fewer than a fold gathers
    assert (
        run(
            "online-to-batch", "--method", "projected-average", "-a", "rbp", "-B", "10", *RBF, whole, "-o", batch
        ).exit_code
        == 0
    )
    # the same projection; train folds Σ_t coefficient, online-to-batch (1/T) Σ_t coefficient, into it:
    # equal up to the rounding of that division
    np.testing.assert_allclose(scores(avg, whole), scores(batch, whole), rtol=1e-12, atol=1e-12)
    header, _ = modelfile.load(avg)
    assert header["hypothesis"] == "running-average"


@pytest.mark.parametrize("algo", [("perceptron",), ("projectron", "--eta", "0.3")])
def test_a_resumed_second_day_is_the_one_run_average(days, tmp_path, algo):
    whole, day1, day2 = days
    one, two = tmp_path / "one.model", tmp_path / "two.model"
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", whole, "-o", one).exit_code == 0
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", day1, "-o", two).exit_code == 0
    r = run("train", "--resume", two, "--save-resume", day2, "-o", two)  # stays a running average by itself
    assert r.exit_code == 0, r.output
    assert "averaged hypothesis" in r.output
    assert np.array_equal(scores(one, whole), scores(two, whole))


def test_an_evicting_learner_resumes_its_average(days, tmp_path):
    """The running average of a learner that evicts keeps an archive of the evicted vectors, folded onto
    the kept ones in the file it writes.  With --save-resume the file also holds the archive and the
    sums before the fold: the second day resumed from it ends with the one run's file, byte for byte.
    Without it, the archive is folded for good: the summary, `info` and the resumed run say that the
    resume is not exact, and its online learner is still the same."""
    whole, day1, day2 = days
    common = ["-a", "rbp", "-B", "10", *RBF, "--average", "-q", "--json"]
    one, two, compact = tmp_path / "one.model", tmp_path / "two.model", tmp_path / "compact.model"
    r = run("train", *common, "--save-resume", whole, "-o", one)
    assert r.exit_code == 0 and json.loads(r.output)["resume_exact"] is True, r.output
    assert run("train", *common, "--save-resume", day1, "-o", two).exit_code == 0
    assert len(Model.load(two, resume=True).learner.retired) > 10  # evicted vectors went through the file
    r = run("train", "--resume", two, "--save-resume", "-q", "--json", day2, "-o", two)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["notes"] == [] and json.loads(r.output)["support_size"] == 10
    assert two.read_bytes() == one.read_bytes()
    assert np.array_equal(scores(two, whole), scores(one, whole))

    r = run("train", *common, day1, "-o", compact)
    summary = json.loads(r.output)
    assert summary["resume_exact"] is False and "evicted vectors folded" in summary["resume_not_exact"]
    info = json.loads(run("info", "--json", compact).output)
    assert info["resume_exact"] is False and info["resume_not_exact"] == summary["resume_not_exact"]
    r = run("train", "--resume", compact, day2, "-o", compact)
    assert r.exit_code == 0, r.output
    (note,) = [line for line in r.stderr.splitlines() if line.startswith("note")]
    assert "evicted vectors folded" in note and "not bit for bit as, one run" in note
    a, b = Model.load(one, resume=True).learner, Model.load(compact, resume=True).learner
    assert a.counters.tolist() == b.counters.tolist()  # the online run is the same
    assert np.array_equal(a.slot["alpha"][:10], b.slot["alpha"][:10])


@pytest.mark.parametrize("algo", [("perceptron",), ("projectron++", "--eta", "0.3"), ("rbp", "-B", "10")])
@pytest.mark.parametrize("method", ["last", "average", "projected-average"])
def test_online_to_batch_resumed_from_the_online_model_is_the_one_run(days, tmp_path, algo, method):
    """online-to-batch --resume of the online model day 1 wrote (--save-resume; for an average, its
    running average) with day 2 makes the batch model of one online-to-batch run over both days: the
    same vectors and coefficients (the header's record of the run differs: day 1 was a train run)."""
    whole, day1, day2 = days
    one, online, two = tmp_path / "one.model", tmp_path / "online.model", tmp_path / "two.model"
    assert run("online-to-batch", "-a", *algo, *RBF, "--method", method, whole, "-o", one).exit_code == 0
    hypothesis = ["--hypothesis", "last"] if method == "last" else ["--average"]
    assert run("train", "-a", *algo, *RBF, *hypothesis, "--save-resume", day1, "-o", online).exit_code == 0
    r = run("online-to-batch", "--resume", online, "--method", method, "--json", "-q", day2, "-o", two)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["notes"] == []
    a, b = Model.load(one).learner.state()[1], Model.load(two).learner.state()[1]
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name
    assert np.array_equal(scores(one, whole), scores(two, whole))


def test_online_to_batch_says_when_a_compressed_archive_makes_its_average_inexact(tmp_path):
    """The running average keeps a compressed archive of evicted vectors, online-to-batch's average all
    of them: resumed from a running average whose archive was compressed, online-to-batch says in one
    note that its average is not one run's."""
    data, day1, day2 = tmp_path / "all.txt", tmp_path / "day1.txt", tmp_path / "day2.txt"
    write_stream(data, n=800, seed=5)
    lines = data.read_text().splitlines(keepends=True)
    day1.write_text("".join(lines[:600]))
    day2.write_text("".join(lines[600:]))
    online, batch = tmp_path / "online.model", tmp_path / "batch.model"
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--average", "--save-resume", day1, "-o", online).exit_code == 0
    assert Model.load(online, resume=True).learner.retired.compressions > 0
    r = run("online-to-batch", "--resume", online, "--json", "-q", day2, "-o", batch)
    assert r.exit_code == 0, r.output
    (note,) = json.loads(r.output)["notes"]
    assert "where online-to-batch keeps them all" in note and "not bit for bit as, one run" in note


def test_a_running_average_resumed_with_the_last_hypothesis_writes_the_last_one(days, tmp_path):
    """`train --resume AVG --hypothesis last`: the run no longer keeps what it evicts, and writes the
    online learner as the last hypothesis (it wrote a running average missing this run's evictions)."""
    whole, day1, day2 = days
    avg, last, one = tmp_path / "avg.model", tmp_path / "last.model", tmp_path / "one.model"
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--average", "--save-resume", day1, "-o", avg).exit_code == 0
    r = run("train", "--resume", avg, "--hypothesis", "last", "--save-resume", day2, "-o", last)
    assert r.exit_code == 0, r.output
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--hypothesis", "last", whole, "-o", one).exit_code == 0
    header, arrays = modelfile.load(last)
    assert header["hypothesis"] == "online" and not any(name.startswith("retired_") for name in arrays)
    assert np.array_equal(scores(last, whole), scores(one, whole))


def test_a_running_average_of_an_earlier_build_loads_and_says_its_resume_is_not_exact(days, tmp_path):
    """An evicting learner's running average written before the archive was resume state (no
    "evicted_folded" in its header: it folded the evicted vectors into the file, without saying how
    many) predicts as before, and `info` and a resume say that a resume from it is not exact."""
    whole, day1, day2 = days
    new, old = tmp_path / "new.model", tmp_path / "old.model"
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--average", "--save-resume", day1, "-o", new).exit_code == 0
    header, arrays = modelfile.load(new)
    for name in [n for n in arrays if n.startswith(("retired_", "unfolded_"))]:
        del arrays[name]
    del header["evicted_folded"]
    modelfile.save(old, header, arrays)  # the layout an earlier build wrote: the folded sums alone
    assert np.array_equal(scores(old, whole), scores(new, whole))
    info = json.loads(run("info", "--json", old).output)
    assert info["resume_exact"] is False and "an earlier build's file" in info["resume_not_exact"]
    assert json.loads(run("info", "--json", new).output)["resume_exact"] is True
    r = run("train", "--resume", old, "--json", "-q", day2, "-o", tmp_path / "next.model")
    assert r.exit_code == 0, r.output
    (note,) = json.loads(r.output)["notes"]
    assert "an earlier build's file" in note and "not bit for bit as, one run" in note


def test_refusals_say_why(days, tmp_path):
    whole, day1, _ = days
    out = tmp_path / "m.model"
    assert run("train", "--hypothesis", "last", "-a", "rbp", "-B", "10", *RBF, day1, "-o", out).exit_code == 0
    r = run("train", "--resume", out, "--average", whole, "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "evicted before this run were not kept" in r.output
    r = run("train", "-a", "rbp", "-B", "10", *RBF, "--average", day1, whole, "-o", tmp_path / "y.model")
    assert r.exit_code == 2 and "sharded run" in r.output


def test_info_and_the_summary_name_the_hypothesis(days, tmp_path):
    whole, _, _ = days
    avg, online = tmp_path / "avg.model", tmp_path / "online.model"
    r = run("train", "-a", "perceptron", *RBF, "--average", whole, "-o", avg)
    assert "(predicts with the averaged hypothesis" in r.output
    r = run("train", "--hypothesis", "last", "-a", "perceptron", *RBF, whole, "-o", online)
    assert "(predicts with the last hypothesis" in r.output
    assert "hypothesis      running-average: predicts with the averaged" in run("info", avg).output
    assert json.loads(run("info", "--json", avg).output)["hypothesis"] == "running-average"


# ---- multiclass learners: the average under the lazy scale (multiclass.py's docstring) ----------------

MULTICLASS = [
    ("mc-perceptron", {}),
    ("mc-pa", {}),
    ("mrbp", {"budget": 12}),
    ("mc-projectron++", {"eta": 0.5}),
    ("pegasos", {}),
    *[("bpegasos", {"budget": 12, "maintenance": m}) for m in ("random", "smallest", "project", "merge")],
]


def three_classes(n: int, seed: int):
    X, _ = random_stream(n, 4, seed)
    return X, np.argmax(X @ np.random.default_rng(seed).normal(size=(4, 3)), axis=1).astype(np.int64)


@pytest.mark.parametrize("name, params", MULTICLASS, ids=[f"{n}-{p.get('maintenance', '')}" for n, p in MULTICLASS])
def test_the_multiclass_average_is_the_mean_of_every_round_s_hypothesis(name, params):
    """The exact average (evicted vectors kept) scores every probe as the mean of f_1 .. f_T, each f_t
    scored after round t.  Equal up to rounding: the sums add the same terms in another order."""
    X, y = three_classes(240, 3)
    learner = registry.get(name)(Kernel("rbf", 0.5), seed=1, **params)
    learner.keep_retired = True
    probe = chunk_from_dense(X[:25], y[:25])
    total = np.zeros((25, 3))
    for t in range(len(y)):
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        f = learner.decision_function(probe)
        total[:, : f.shape[1]] += f
    mean = total / len(y)
    averaged = Model(learner, MulticlassLabels()).averaged(projected=False).learner.decision_function(probe)
    np.testing.assert_allclose(averaged, mean, rtol=1e-9, atol=1e-9 * np.abs(mean).max())
    assert not np.allclose(learner.decision_function(probe), mean)  # the last hypothesis is another


def write_classes(path, n, seed):
    X, y = three_classes(n, seed)
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{label + 1} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n")


@pytest.mark.parametrize("algo", [("mc-pa",), ("pegasos",), ("mc-projectron++", "--eta", "0.5")])
def test_a_multiclass_running_average_predicts_the_batch_average_and_resumes_it(tmp_path, algo):
    whole, day1, day2 = tmp_path / "whole.txt", tmp_path / "day1.txt", tmp_path / "day2.txt"
    write_classes(whole, 300, 4)
    lines = whole.read_text().splitlines(keepends=True)
    day1.write_text("".join(lines[:170]))
    day2.write_text("".join(lines[170:]))
    one, two, batch = tmp_path / "one.model", tmp_path / "two.model", tmp_path / "batch.model"
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", whole, "-o", one).exit_code == 0
    assert run("online-to-batch", "-a", *algo, *RBF, whole, "-o", batch).exit_code == 0
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", day1, "-o", two).exit_code == 0
    assert run("train", "--resume", two, "--save-resume", day2, "-o", two).exit_code == 0

    def class_scores(model):
        r = run("predict", "--scores", model, whole)
        assert r.exit_code == 0, r.output
        return np.array([[float(v) for v in line.split()[1:]] for line in r.output.splitlines()[1:]])

    assert np.array_equal(class_scores(one), class_scores(batch))
    assert np.array_equal(class_scores(one), class_scores(two))


def test_multiclass_evictions_are_projected_within_the_budget(tmp_path):
    data, avg, batch = tmp_path / "d.txt", tmp_path / "avg.model", tmp_path / "batch.model"
    write_classes(data, 60, 5)  # fewer evictions than a fold gathers: one fold, when the model is written
    r = run("train", "-a", "mrbp", "-B", "12", *RBF, "--average", "-q", "--json", data, "-o", avg)
    assert r.exit_code == 0 and json.loads(r.output)["support_size"] == 12
    assert 12 + 5 < json.loads(r.output)["mistakes"] < 12 + 64
    assert (
        run(
            "online-to-batch", "--method", "projected-average", "-a", "mrbp", "-B", "12", *RBF, data, "-o", batch
        ).exit_code
        == 0
    )
    a, b = (Model.load(m).learner for m in (avg, batch))
    probe = chunk_from_dense(*three_classes(30, 6))
    np.testing.assert_allclose(a.decision_function(probe), b.decision_function(probe), rtol=1e-12, atol=1e-12)


def test_a_plain_multiclass_model_stays_compact_and_cannot_start_an_average(tmp_path):
    data, plain, avg = tmp_path / "d.txt", tmp_path / "plain.model", tmp_path / "avg.model"
    write_classes(data, 120, 7)
    assert run("train", "--hypothesis", "last", "-a", "mc-pa", *RBF, data, "-o", plain).exit_code == 0
    assert run("train", "-a", "mc-pa", *RBF, "--average", data, "-o", avg).exit_code == 0
    _, arrays = modelfile.load(plain)
    assert not {"avg_base", "avg_offset", "avg_scalars"} & set(arrays)
    r = run("train", "--resume", plain, "--average", data, "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "does not hold the running sums" in r.output
    header, arrays = modelfile.load(plain)  # a file claiming an average it does not hold is refused
    header["hypothesis"] = "running-average"
    modelfile.save(plain, header, arrays)
    r = run("predict", plain, data)
    assert r.exit_code == 1 and "without avg_base, avg_offset, avg_scalars" in r.output


def test_running_sums_that_overflow_the_average_are_refused(days, tmp_path):
    whole, _, _ = days
    model = tmp_path / "avg.model"
    assert run("train", "-a", "perceptron", *RBF, "--average", whole, "-o", model).exit_code == 0
    header, arrays = modelfile.load(model)
    arrays["avg_sum"] = np.full(len(arrays["avg_sum"]), 1.7e308)
    arrays["alpha"] = np.full(len(arrays["alpha"]), 1.7e308)
    modelfile.save(model, header, arrays)
    r = run("predict", model, whole)
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"budgetlearn: error: {model}: invalid model: its averaged coefficients are not finite"
    ]


def test_the_archive_of_evicted_vectors_is_compressed_onto_its_weightiest_members():
    """compress_retired against numpy: of the first 2·keep evicted vectors, the `keep` with the largest
    |Σα| stay (rbf: k(x, x) = 1), each gaining the least-squares projection of the others' part onto
    their span; then the survivors and the next `keep` vectors are compressed again, until fewer than
    2·keep are left, and the vectors after the last compression wait for the next."""
    X, y = random_stream(400, 4, 21)
    learner = registry.get("rbp")(Kernel("rbf", 0.5), budget=8)
    learner.keep_retired = True  # as a running average sets it; no compression while learning (fold_every 0)
    learner.learn(chunk_from_dense(X, y), y)
    retired = [(i.copy(), v.copy(), float(c)) for i, v, c in learner.retired]
    assert len(retired) > 40
    dense = np.zeros((len(retired), 4))
    for r, (i, v, _) in enumerate(retired):
        dense[r, i - 1] = v  # feature index j: column j − 1
    K = np.exp(-0.5 * ((dense[:, None, :] - dense[None, :, :]) ** 2).sum(-1))
    order = list(range(len(retired)))  # the archive, as positions in `retired`
    sums = {r: c for r, (_, _, c) in enumerate(retired)}
    while len(order) >= 20:
        head = np.array(order[:20])
        s = np.array([sums[r] for r in head])
        keep = np.sort(np.argsort(-np.abs(s), kind="stable")[:10])
        gone = np.setdiff1d(np.arange(20), keep)
        gram = K[np.ix_(head[keep], head[keep])]
        ridge = 1e-10 * np.trace(gram) / len(keep)
        merged = s[keep] + np.linalg.solve(gram + ridge * np.eye(10), K[np.ix_(head[keep], head[gone])] @ s[gone])
        sums.update(zip(head[keep].tolist(), merged))
        order = head[keep].tolist() + order[20:]
    assert len(retired) - len(order) >= 30  # compressed several times
    learner.compress_retired(10)
    assert len(learner.retired) == len(order)
    assert [v.tolist() for _, v, _ in learner.retired] == [retired[r][1].tolist() for r in order]
    np.testing.assert_allclose(
        [c for _, _, c in learner.retired[:10]], [sums[r] for r in order[:10]], rtol=1e-8, atol=1e-10
    )
    assert [c for _, _, c in learner.retired[10:]] == [retired[r][2] for r in order[10:]]


@pytest.mark.parametrize(
    "kernel", [Kernel("rbf", 0.3), Kernel("rbf", 0.3, exp="vectorised"), Kernel("poly", 0.5, 1.0, 2), Kernel("linear")]
)
@pytest.mark.parametrize("widest", [40, 400_000])  # a dense copy of the survivors, or past DENSE_LIMIT
@pytest.mark.parametrize("reuse", [False, True])
def test_a_compression_s_kernel_values_are_kernel_row_s_bits(kernel, widest, reuse):
    """compression_kernels against kernel_matrix, the loops' own arithmetic (a dense and a sparse
    support set): every value it computes is the same bits, in gram (survivors × survivors) and cross
    (the others × survivors), whichever path it takes; with a known matrix of the first `keep` rows,
    the values among those are read from it and nothing else is."""
    rng = np.random.default_rng(7)
    keep, head = 24, 48
    lengths = rng.integers(0, 30, head)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(np.arange(1, widest), k, replace=False)) for k in lengths])
    indices = indices.astype(np.int32)
    values = rng.standard_normal(indptr[-1])
    sq = np.bincount(np.repeat(np.arange(head), lengths), weights=values * values, minlength=head)
    ends = [0, keep - 1, keep, head - 1]  # the first and last carried over, the first and last new
    others = rng.choice(np.setdiff1d(np.arange(head), ends), keep - len(ends), replace=False)
    kept = np.sort(np.concatenate([ends, others]))
    gone = np.setdiff1d(np.arange(head), kept)
    known = -1.0 - np.arange(keep * keep, dtype=float).reshape(keep, keep) if reuse else NO_MATRIX
    scratch = np.zeros(widest + 1)
    gram, cross = np.full((keep, keep), np.nan), np.full((len(gone), keep), np.nan)
    compression_kernels(kernel.args(), indptr, indices, values, sq, kept, gone, known, keep, scratch, gram, cross)
    assert not scratch.any()
    assert (scratch.shape[0] * keep > DENSE_LIMIT) == (widest > 40)

    def rows(which):
        return gather_rows(indptr[which], lengths[which], indices, values)

    for dense in (True, False):
        S = SupportSet.from_csr(*rows(kept), dense=dense)
        assert S.keeps_dense == (dense and widest == 40)
        expected = np.zeros((head, keep))
        kernel_matrix(S.arrays, kernel.args(), *rows(np.arange(head)), scratch, expected)
        if reuse:  # rows and survivors both among the first `keep`: read from known
            carried = np.flatnonzero(kept < keep)
            expected[np.ix_(np.arange(keep), carried)] = known[:, kept[carried]]
        assert gram.tobytes() == expected[kept].tobytes()
        assert cross.tobytes() == expected[gone].tobytes()


@pytest.mark.parametrize("algorithm", ["mrbp", "bpegasos"])
def test_the_archive_takes_classes_that_arrive_after_evictions_began(algorithm):
    """A multiclass running average whose stream brings new classes after vectors were evicted: the
    archive's summed coefficients are rows over the classes known when each vector left, so later
    rows are wider (the class columns start at 4 and double).  The narrower rows count as zero for
    the new classes; the archive compresses across both (this raised a ValueError on mixed widths),
    and where the stream is cut into chunks changes nothing."""
    rng = np.random.default_rng(3)
    n, d = 900, 6
    X = rng.standard_normal((n, d))
    y = np.concatenate([rng.integers(0, 2, 300), rng.integers(0, 9, n - 300)])  # classes 2–8 after 300
    X[np.arange(n), y % d] += 2.0

    def archive(pieces):
        learner = registry.get(algorithm)(Kernel("rbf", 0.5), budget=8)
        learner.keep_retired, learner.archive_keep = True, 10
        for part in np.array_split(np.arange(n), pieces):
            learner.learn(chunk_from_dense(X[part], y[part]), y[part])
        return learner

    whole, cut = archive(1), archive(7)
    assert whole.coef.shape[1] >= 9 and 10 <= len(whole.retired) < 20
    sums = whole.retired.sums()
    assert sums.shape == (len(whole.retired), whole.coef.shape[1]) and np.abs(sums[:, 4:9]).max() > 0
    assert [v.tolist() for _, v, _ in cut.retired] == [v.tolist() for _, v, _ in whole.retired]
    np.testing.assert_array_equal(cut.retired.sums()[:, :9], sums[:, :9])
    assert not cut.retired.sums()[:, 9:].any() and not sums[:, 9:].any()
    np.testing.assert_array_equal(cut.averaged_coefficients(), whole.averaged_coefficients())
