"""Compact model files (issue 17): the resume state only with --save-resume, rebuilt on --resume
otherwise; a prediction never reads it; arrays stored in the narrowest exact dtype."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.learning import algorithms
from budgetcli.base import modelfile, registry
from budgetcli.entry import main
from budgetcli.model.model import Model
from budgetcli.model.stored import narrowest

from .helpers import assert_same_state
from .test_cli import write_stream

REBUILDING = sorted(name for name, cls in algorithms.load_all().items() if cls.rebuilt)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def budget_args(name):
    params = {p.name for p in registry.get(name).params}
    return (
        (["-B", "20"] if "budget" in params else [])
        + (["--maintenance", "project"] if "maintenance" in params else [])
        + (["--task", registry.get(name).tasks[0]] if "classification" not in registry.get(name).tasks else [])
    )


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    d = tmp_path_factory.mktemp("days")
    full = d / "all.txt"
    write_stream(full, n=400, seed=5)
    lines = full.read_text().splitlines(keepends=True)
    (d / "day1.txt").write_text("".join(lines[:200]))
    (d / "day2.txt").write_text("".join(lines[200:]))
    multi = d / "multi.txt"
    multi.write_text(
        "".join(f"{1 + i % 3} 1:{(i % 7) / 7:.3f} 2:{(i % 5) / 5:.3f} 3:{(i % 11) / 11:.3f}\n" for i in range(400))
    )
    return d


def test_the_algorithms_with_a_resume_state():
    assert REBUILDING == [
        "ahpatron",
        "bpa-nn",
        "bpa-p",
        "bpegasos",
        "budget-perceptron",
        "fbkrls",
        "krls",
        "krlst",
        "lbsop",
        "mc-nogd",
        "mc-projectron++",
        "nogd",
        "nogd-novelty",
        "nogd-regression",
        "projectron",
        "projectron++",
        "projectron-alma2",
        "rbsop",
        "sop",
        "swkrls",
        "tighter-perceptron",
    ]


@pytest.mark.parametrize("name", REBUILDING)
def test_the_resume_state_is_written_only_with_save_resume(tmp_path, days, name):
    data = days / ("multi.txt" if registry.get(name).multiclass else "all.txt")
    compact, full = tmp_path / "c.model", tmp_path / "f.model"
    args = ["train", "-q", "-a", name, "--gamma", "0.5", *budget_args(name), data]
    assert run(*args, "-o", compact).exit_code == 0
    assert run(*args, "--save-resume", "-o", full).exit_code == 0
    header, _ = modelfile.load(full)
    cls = registry.get(name)
    with zipfile.ZipFile(compact) as c, zipfile.ZipFile(full) as f:
        # the kept matrices, and an evicting learner's archive of evicted vectors when it kept one
        assert set(cls.rebuilt) <= {n[:-4] for n in f.namelist()} - {n[:-4] for n in c.namelist()}
        assert {n[:-4] for n in f.namelist()} - {n[:-4] for n in c.namelist()} <= cls.resume_arrays(header)
    assert compact.stat().st_size < full.stat().st_size
    info = json.loads(run("info", "--json", compact).stdout)
    assert info["resume_state"].startswith("not saved: --resume rebuilds")
    assert json.loads(run("info", "--json", full).stdout)["resume_state"].startswith("saved")


@pytest.mark.parametrize("name", ["budget-perceptron", "tighter-perceptron", "ahpatron"])
def test_a_rebuilt_gram_matrix_resumes_bit_for_bit(tmp_path, days, name):
    """Their resume state is the Gram matrix of the support set, which the rebuild computes with the
    same kernel arithmetic as the loop did: resuming a compact model is exact for them."""
    args = ["-a", name, "--hypothesis", "last", "--gamma", "0.5", *budget_args(name), "-q"]  # the online learner
    one, nightly = tmp_path / "one.model", tmp_path / "nightly.model"
    assert run("train", *args, "--save-resume", days / "all.txt", "-o", one).exit_code == 0
    assert run("train", *args, days / "day1.txt", "-o", nightly).exit_code == 0
    r = run("train", "--resume", nightly, "--save-resume", "--json", "-q", days / "day2.txt", "-o", nightly)
    assert r.exit_code == 0, r.output
    (note,) = json.loads(r.stdout)["notes"]
    assert re.fullmatch(
        r"rebuilt (eval_block, )?gram from the \d+ support vectors, bit for bit \(the model was saved without "
        r"--save-resume\)",
        note,
    )
    a, b = Model.load(one, resume=True).learner, Model.load(nightly, resume=True).learner
    assert a.state()[0] == b.state()[0]
    assert_same_state(a.state()[1], b.state()[1])


@pytest.mark.parametrize("name", ["projectron++", "projectron-alma2", "sop", "rbsop", "mc-projectron++", "bpegasos"])
def test_a_rebuilt_inverse_is_an_inverse_of_the_support_sets_gram_matrix(tmp_path, days, name):
    """K⁻¹ (SOP: (aI + K)⁻¹; mc-projectron++: one K_c⁻¹ per class; projectron++: the inverse Cholesky
    factor W, K⁻¹ = WᵀW) made afresh from the support set by one Cholesky factorisation: accurate to rounding (|A K −
    I| ≤ 1e-13 cond(K), as the kept one is
    in tests/test_algorithms.py), and the kept one it replaces is an inverse of the same matrix."""
    data = days / ("multi.txt" if registry.get(name).multiclass else "all.txt")
    path = tmp_path / "m.model"
    assert (
        run(
            "train", "-q", "-a", name, "--gamma", "0.5", *budget_args(name), "--save-resume", data, "-o", path
        ).exit_code
        == 0
    )
    kept = Model.load(path, resume=True).learner
    rebuilt = Model.load(path).learner
    assert rebuilt.stale == set(kept.rebuilt)  # the compact load left it to rebuild
    rebuilt._rebuild()
    assert not rebuilt.stale
    K = kept.kernel_matrix(*kept.support.to_csr())
    if name in ("sop", "rbsop"):
        K += kept.hyper["sop_a"] * np.eye(len(K))
    if name == "mc-projectron++":
        pairs = []
        for c in range(int(kept.n_classes[0])):
            k = int(kept.counts[c])
            members = kept.members[c, :k]
            pairs.append((K[np.ix_(members, members)], rebuilt.kinv[c, :k, :k], kept.kinv[c, :k, :k]))
    else:
        (array,) = kept.rebuilt
        n = len(K)
        new, old = rebuilt.slot[array][:n, :n], kept.slot[array][:n, :n]
        if array == "kinv_factor":  # projectron++ keeps W = L⁻¹, lower triangular: K⁻¹ = WᵀW
            assert not np.triu(new, 1).any() and not np.triu(old, 1).any()
            new, old = new.T @ new, old.T @ old
        pairs = [(K, new, old)]
    assert sum(len(Kc) for Kc, _, _ in pairs) >= 10
    for Kc, new, old in pairs:
        identity = np.eye(len(Kc))
        assert np.abs(new @ Kc - identity).max() <= 1e-13 * np.linalg.cond(Kc)
        assert np.abs(old @ Kc - identity).max() < 1e-3


def test_the_summary_says_once_that_the_state_was_rebuilt(tmp_path, days):
    model = tmp_path / "m.model"
    assert run("train", "-q", "-a", "projectron", "--gamma", "0.5", days / "day1.txt", "-o", model).exit_code == 0
    r = run("train", "--resume", model, days / "day2.txt", "--epochs", "2", "-o", tmp_path / "next.model")
    assert r.exit_code == 0, r.output
    assert r.stderr.count("rebuilt kinv_factor from the") == 1
    r = run("train", "--resume", tmp_path / "next.model", "--save-resume", days / "day2.txt", "-o", model)
    assert "rebuilt" in r.stderr  # next.model was compact too
    r = run("train", "--resume", model, days / "day2.txt", "-o", tmp_path / "third.model")
    assert "note            rebuilt" not in r.stderr  # model was saved with --save-resume


def corrupt_member(path, member: str):
    """Flip bytes in the data of one member, keeping the zip's own CRC right (as a hostile writer
    would): only the model file's checksum can tell."""
    with zipfile.ZipFile(path) as z:
        contents = {info.filename: z.read(info) for info in z.infolist()}
    data = bytearray(contents[member + ".npy"])
    data[-8:] = bytes(8)
    contents[member + ".npy"] = bytes(data)
    with zipfile.ZipFile(path, "w") as z:
        for name, payload in contents.items():
            z.writestr(name, payload)


def test_prediction_never_reads_the_resume_state(tmp_path, days):
    path = tmp_path / "m.model"
    assert (
        run(
            "train", "-q", "-a", "projectron++", "--gamma", "0.5", "--save-resume", days / "all.txt", "-o", path
        ).exit_code
        == 0
    )
    before = run("predict", "--scores", path, days / "day2.txt").stdout
    corrupt_member(path, "kinv_factor")
    for command in (
        ["predict", "--scores", path, days / "day2.txt"],
        ["eval", path, days / "day2.txt"],
        ["info", path],
        ["export", path, "--format", "libsvm", "-o", tmp_path / "x.libsvm"],
    ):
        r = run(*command)
        assert r.exit_code == 0, (command, r.output)
    assert run("predict", "--scores", path, days / "day2.txt").stdout == before
    r = run("train", "--resume", path, days / "day2.txt", "-o", tmp_path / "next.model")
    assert r.exit_code == 1 and "checksum mismatch" in r.stderr


def test_a_member_the_checksum_names_must_be_there(tmp_path, days):
    path = tmp_path / "m.model"
    assert run("train", "-q", "-a", "projectron", "--save-resume", days / "all.txt", "-o", path).exit_code == 0
    with zipfile.ZipFile(path) as z:
        contents = {info.filename: z.read(info) for info in z.infolist() if info.filename != "kinv_factor.npy"}
    with zipfile.ZipFile(path, "w") as z:
        for name, payload in contents.items():
            z.writestr(name, payload)
    r = run("predict", path, days / "day2.txt")
    assert r.exit_code == 1 and "checksum mismatch" in r.stderr


def test_arrays_are_stored_in_the_narrowest_exact_dtype_and_load_to_the_same_state(tmp_path, days):
    path = tmp_path / "m.model"
    binary = tmp_path / "binary.txt"
    binary.write_text("".join(f"{1 if i % 3 else -1} {i % 5 + 1}:1 {i % 7 + 10}:1\n" for i in range(300)))
    assert run("train", "-q", "-a", "perceptron", binary, "-o", path).exit_code == 0
    _, arrays = modelfile.load(path)
    assert arrays["sv_indices"].dtype == np.uint8 and arrays["sv_values"].dtype == np.uint8  # one-hot data
    assert arrays["alpha"].dtype == np.int8  # ±1
    model = Model.load(path)
    learner = registry.get("perceptron").from_state(*model.learner.state())
    assert learner.slot["alpha"].dtype == np.float64 and learner.support.arrays.pool_val.dtype == np.float64
    assert_same_state(model.learner.state()[1], learner.state()[1])


@pytest.mark.parametrize(
    "values,dtype",
    [
        ([0.0, 1.0, 255.0], np.uint8),
        ([-1.0, 1.0], np.int8),
        ([0.5, 0.25], np.float32),
        ([0.1], np.float64),
        ([-0.0, 1.0], np.float32),
        ([70000.0], np.uint32),
        ([2.0**40], np.float32),
    ],
)
def test_narrowest_keeps_every_bit(values, dtype):
    a = np.array(values, np.float64)
    narrow = narrowest(a)
    assert narrow.dtype == dtype
    assert narrow.astype(np.float64).tobytes() == a.tobytes()


def test_a_learner_waiting_for_its_rebuild_saves_no_stale_state(tmp_path, days):
    """Loaded without its resume state, a learner's state() leaves that state out (never zeros in
    its place), so a copy of it rebuilds it too."""
    path = tmp_path / "m.model"
    assert run("train", "-q", "-a", "projectron", "--save-resume", days / "all.txt", "-o", path).exit_code == 0
    waiting = Model.load(path).learner
    header, arrays = waiting.state()
    assert "kinv_factor" not in arrays
    copy = registry.get("projectron").from_state(header, arrays)
    assert copy.stale == {"kinv_factor"}
