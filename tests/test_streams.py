"""The regression streams of `budgetlearn generate` (budgetcli/run/synthetic.py): each is the construction its
docstring names, checked against that construction written out here, and each file trains as a regression."""

from __future__ import annotations

import numpy as np
import pytest

from click.testing import CliRunner

from budgetcli.run import synthetic
from budgetcli.entry import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_friedman1_is_friedmans_function_plus_unit_noise():
    X, y = synthetic.friedman1(20_000, seed=3)
    assert X.shape == (20_000, 10) and X.min() >= 0 and X.max() < 1
    clean = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    residual = y - clean
    assert abs(residual.mean()) < 0.03 and abs(residual.std() - 1.0) < 0.02


def test_sinc_variance_constant_and_the_20_db_noise():
    draws = np.random.default_rng(0).standard_normal(2_000_000)
    assert synthetic.SINC_VARIANCE == pytest.approx(np.sinc(draws).var(), rel=5e-3)
    X, y = synthetic.sinc(200_000, seed=1)
    noise = y - np.sinc(X[:, 0])
    assert noise.var() / synthetic.SINC_VARIANCE == pytest.approx(0.01, rel=0.02)


def _mackey_glass_step_by_step(samples: int, start: float) -> np.ndarray:
    """The exponential Euler rule one step at a time: x ← e^(−0.1h) x + (1 − e^(−0.1h))/0.1 · g(x(t − τ))."""
    h, delay, every = 0.1, 300, 60
    a = np.exp(-0.1 * h)
    x = [start] * (delay + 1)  # the constant history, then x(0)
    while len(x) < delay + 1 + (samples - 1) * every:
        d = x[-1 - delay]
        x.append(a * x[-1] + (1 - a) / 0.1 * 0.2 * d / (1 + d**10))
    return np.array(x[delay::every][:samples])


def test_mackey_glass_series_is_the_step_by_step_rule_and_its_lines_are_lagged_values():
    series = synthetic.mackey_glass_series(120)
    # the same rule summed in another order: rounding differences of 1e-14, which the chaotic series
    # grows (1e-13 by sample 100); a wrong rule differs by more than 1e-3 within ten samples
    np.testing.assert_allclose(series[:60], _mackey_glass_step_by_step(60, 0.89), rtol=0, atol=1e-13)
    assert series[0] == 0.89
    long = synthetic.mackey_glass_series(5000)
    assert 0.15 < long.min() and long.max() < 1.45 and abs(long.mean() - 0.9) < 0.05  # mg30.dat's range
    X, y = synthetic.mackey_glass(50)
    np.testing.assert_array_equal(y, series[1:51])
    for t in (0, 3, 9, 10, 49):
        want = [series[t - j] if t - j >= 0 else 0.0 for j in range(10)]
        np.testing.assert_array_equal(X[t], want)
    assert synthetic.mackey_glass(2)[0].shape == (2, 10)
    assert synthetic.mackey_glass_series(10, seed=4)[0] != 0.89  # another seed, another history


def test_channel_switch_is_a_wiener_system_whose_channel_changes_after_a_third():
    n = 1500
    X, clean, channels = synthetic.channel_switch(n, seed=5, clean=True)
    assert channels.shape == (2, 5) and (channels[:, 0] == 1).all() and not np.allclose(*channels)
    inputs = np.concatenate([X[0, ::-1], X[1:, 0]])  # x_{1−L+1} .. x_n
    for t in (0, 7, n - 1):
        np.testing.assert_array_equal(X[t], inputs[t : t + 5][::-1])
    np.testing.assert_allclose(clean[:500], np.tanh(X[:500] @ channels[0]), atol=1e-15)
    np.testing.assert_allclose(clean[500:], np.tanh(X[500:] @ channels[1]), atol=1e-15)
    X2, noisy = synthetic.channel_switch(n, seed=5)
    np.testing.assert_array_equal(X2, X)
    assert (noisy - clean).var() / clean.var() == pytest.approx(0.01, rel=0.15)


@pytest.mark.parametrize("stream", synthetic.REGRESSION_STREAMS)
def test_a_generated_stream_trains_as_a_regression_and_only_as_one(tmp_path, stream):
    data = str(tmp_path / "d.txt")
    assert run("generate", stream, "-n", "300", "--seed", "2", "-o", data).exit_code == 0
    lines = open(data).read().splitlines()
    assert len(lines) == 300
    targets = [float(line.split()[0]) for line in lines]
    assert all(round(v, 6) == v for v in targets) and len(set(targets)) > 250
    refused = run("train", data, "-o", str(tmp_path / "c.model"))
    assert refused.exit_code == 1 and "--task regression" in refused.output
    assert run("train", "--task", "regression", "-a", "klms", data, "-o", str(tmp_path / "r.model")).exit_code == 0
