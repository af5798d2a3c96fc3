"""`train --threads N` (issue #51): the Projectron's factor products on N threads (projection.py, sync.py)
write the same model, byte for byte, whatever N, and the one-thread model of before."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from budgetcli.numerics import _jit, sync
from budgetcli.model.spec import TrainSpec

from .helpers import SAMPLE_DATA


@pytest.fixture(scope="module")
def compiled():
    _jit.compile_all()
    from budgetcli.numerics import projection

    return projection


def plain_solve(w, z, n):
    """d_j = Σ_{i ≥ j} W_ij z_i, the terms in the order of i, a multiply then an add each, from +0.0."""
    d = np.zeros(n)
    for i in range(n):
        for j in range(i + 1):
            d[j] += float(w[i, j]) * float(z[i])
    return d


@pytest.mark.parametrize("n", [1, 5, 37, 64])
def test_d_by_blocks_of_columns_is_the_plain_sum_bit_for_bit(compiled, n):
    """`solve_columns` over any cut of the columns gives each d_j the one-thread terms in their order."""
    rng = np.random.default_rng(n)
    w = np.tril(rng.standard_normal((n + 2, n + 2)))
    z = rng.standard_normal(n + 2)
    expected = plain_solve(w, z, n)
    for cuts in ([0, n], [0, n // 3, n // 2, n], sorted({0, n, *rng.integers(0, n + 1, 5).tolist()})):
        d = np.full(n + 2, np.nan)
        for lo, hi in zip(cuts, cuts[1:]):
            compiled.solve_columns(w, z, d, n, lo, hi)
        assert np.array_equal(d[:n], expected), cuts


@pytest.mark.parametrize("workers", [1, 2])
def test_the_threaded_products_are_the_one_thread_ones_bit_for_bit(compiled, workers):
    """z = Wk_t, ‖δ‖², and d = Wᵀz on 1 + workers threads against one thread and the plain sums, at sizes
    below and above THREADED_FROM (and one not a multiple of the blocks or of four rows)."""
    p = compiled
    rng = np.random.default_rng(7)
    capacity = 700
    w = np.tril(rng.standard_normal((capacity, capacity)))
    krow = rng.standard_normal(capacity)
    z, d, own = np.zeros(capacity), np.zeros(capacity), np.zeros((workers, capacity))
    control = np.zeros(sync.CONTROL, np.int64)
    with sync.Workers(workers, p.factor_worker, (w, krow, z, own), control):
        for n in (3, p.THREADED_FROM - 1, p.THREADED_FROM, 517, capacity):
            z1, d1 = np.zeros(capacity), np.zeros(capacity)
            one = p.factor_project_solve(w, krow, z1, d1, n, 1.0)
            assert p.threaded_project(w, krow, z, n, 1.0, own, control) == one
            assert np.array_equal(z[:n], z1[:n])
            d[:] = np.nan
            p.threaded_solve(w, z, d, n, own, control)
            assert np.array_equal(d[:n], d1[:n])
            z[:], d[:] = np.nan, np.nan
            assert p.threaded_project_solve(w, krow, z, d, n, 1.0, own, control) == one
            assert np.array_equal(z[:n], z1[:n]) and np.array_equal(d[:n], d1[:n])
        assert np.array_equal(d[:capacity], plain_solve(w, z, capacity))
    assert control[sync.GENERATION] == sync.STOP


def test_a_worker_does_the_blocks_into_its_own_array_bit_for_bit(compiled):
    """A job the main thread posts and leaves to the worker (it claims no block of it): every block done
    by worker 1, in its row of `own`, z's and d's one-thread bits."""
    import time

    p = compiled
    rng = np.random.default_rng(9)
    n = 600
    w = np.tril(rng.standard_normal((n, n)))
    krow = rng.standard_normal(n)
    z1, d1 = np.zeros(n), np.zeros(n)
    p.factor_project_solve(w, krow, z1, d1, n, 1.0)
    z, own = z1.copy(), np.full((1, n), np.nan)
    control = np.zeros(sync.CONTROL, np.int64)
    with sync.Workers(1, p.factor_worker, (w, krow, z, own), control):
        for kind, expected in ((p.Z_JOB, z1), (p.D_JOB, d1)):
            generation = sync.post(control, kind, n)
            done = control[sync.DONE : sync.DONE + p.BLOCKS]
            while (done >> sync.THREAD_BITS != generation).any():
                time.sleep(1e-3)
            assert (done & ((1 << sync.THREAD_BITS) - 1) == 1).all()
            assert np.array_equal(own[0], expected)


def test_blocks_a_worker_never_does_are_done_by_the_main_thread(compiled):
    """A job whose worker is not running (here: never started, as a descheduled one on a busy machine):
    the main thread claims what is left and does again the blocks it waits for in vain, the same bits."""
    p = compiled
    rng = np.random.default_rng(8)
    n = 400
    w = np.tril(rng.standard_normal((n, n)))
    krow = rng.standard_normal(n)
    z, z1, d1, own = np.full(n, np.nan), np.zeros(n), np.zeros(n), np.full((1, n), np.nan)
    control = np.zeros(sync.CONTROL, np.int64)
    p.factor_project_solve(w, krow, z1, d1, n, 1.0)
    for kind, out, expected in ((p.Z_JOB, z, z1), (p.D_JOB, np.full(n, np.nan), d1)):
        generation = sync.post(control, kind, n)
        assert sync.claim(control, generation, p.BLOCKS) == 0  # a worker claims block 0, then stalls
        p.finish_job(w, krow, z, out, own, control, kind, n, generation)
        assert np.array_equal(out, expected)
        assert control[sync.DONE] == generation << sync.THREAD_BITS  # block 0: done by the main thread
        assert np.isnan(own).all()  # nothing gathered from the stalled worker's array


def budgetlearn(*args, cwd):
    return subprocess.run([sys.executable, "-m", "budgetcli", *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    """2,500 lines of a9a: projectron++ at its defaults passes THREADED_FROM support vectors on them."""
    path = tmp_path_factory.mktemp("threads") / "a9a.2500"
    path.write_text("".join((SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)[:2500]))
    return path


@pytest.mark.parametrize(
    "options",
    [
        ["-a", "projectron++"],
        ["-a", "projectron++", "--margin-step", "projectron", "--save-resume"],
        ["-a", "projectron", "--eta", "0.05"],
    ],
)
def test_every_number_of_threads_writes_the_one_thread_model_byte_for_byte(tmp_path, lines, options):
    models = {}
    for threads in (None, 1, 2, 3):
        models[threads] = tmp_path / f"{threads}.model"
        given = [] if threads is None else ["--threads", threads]
        out = budgetlearn("train", "-q", *options, *given, lines, "-o", models[threads], cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    for threads in (1, 2, 3):
        assert models[threads].read_bytes() == models[None].read_bytes(), threads


def test_the_threads_run_past_threaded_from(lines, tmp_path):
    """The runs above are long enough for the threads to take part (|S| passes THREADED_FROM)."""
    from budgetcli.model.model import Model
    from budgetcli.numerics.projection import THREADED_FROM

    model = tmp_path / "m.model"
    assert (
        budgetlearn("train", "-q", "-a", "projectron", "--eta", "0.05", lines, "-o", model, cwd=tmp_path).returncode
        == 0
    )
    assert len(Model.load(model).learner.support) > THREADED_FROM


def test_a_failing_run_stops_its_threads_and_writes_nothing(tmp_path, lines):
    """An example whose numbers overflow, past THREADED_FROM vectors: the loop raises on the main thread,
    the workers are told to stop and joined, and the run ends with its one-line error."""
    data = tmp_path / "bad"
    data.write_text(lines.read_text() + "+1 3:1e200\n")
    out = budgetlearn(
        "train", "-a", "projectron", "--eta", "0.05", "--threads", "2", data, "-o", tmp_path / "m", cwd=tmp_path
    )
    assert out.returncode == 1 and "bad:2501: training stopped" in out.stderr and not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["-a", "rbp", "--threads", "2"], "rbp runs on one thread (the threaded ones: projectron, projectron++)"),
        (["-a", "projectron++", "--threads", "0"], "0 is not in the range"),
        (["-a", "projectron++", "--threads", "2", "--backend", "serial"], "one process, not a sharded one"),
    ],
)
def test_threads_are_refused_where_they_do_nothing(tmp_path, lines, args, message):
    out = budgetlearn("train", *args, lines, "-o", tmp_path / "m", cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (tmp_path / "m").exists()


def test_the_python_api_takes_threads_and_writes_the_same_model(lines):
    from budgetcli import api

    models = [api.train(TrainSpec("projectron++", threads=t), str(lines)) for t in (1, 2)]
    states = [m.learner.state() for m in models]
    assert states[0][0] == states[1][0]
    for name, array in states[0][1].items():
        assert np.array_equal(array, states[1][1][name]), name
    assert "threads" not in TrainSpec("projectron++", threads=2).to_dict()
    with pytest.raises(ValueError, match="runs on one thread"):
        TrainSpec("rbp", threads=2)
