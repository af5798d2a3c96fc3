"""metrics: the numpy tie-averaged ranks agree with scipy.stats.rankdata, AUC with a pairwise count."""

import numpy as np
import pytest
from scipy.stats import rankdata

from budgetcli.learning import metrics


@pytest.mark.parametrize("seed", range(5))
def test_average_ranks_match_scipy_with_many_ties(seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 7, size=200).astype(float)  # many ties
    assert np.array_equal(metrics.average_ranks(values), rankdata(values))


def test_average_ranks_small_hand_example():
    assert metrics.average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]


@pytest.mark.parametrize("seed", range(3))
def test_auc_equals_pairwise_probability(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=150), 1)  # rounded: ties count one half
    positive = rng.random(150) < 0.4
    p, n = scores[positive], scores[~positive]
    pairwise = (np.sum(p[:, None] > n[None, :]) + 0.5 * np.sum(p[:, None] == n[None, :])) / (p.size * n.size)
    assert metrics.auc(scores, positive) == pytest.approx(pairwise, abs=1e-12)


def test_auc_none_with_one_class():
    assert metrics.auc(np.array([0.1, 0.2]), np.array([True, True])) is None


def test_metrics_module_does_not_import_scipy_stats():
    import subprocess
    import sys

    code = "import sys, budgetcli.learning.metrics; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_core_unique_is_numpy_s_unique_on_numbers():
    """core.unique (np.unique without its numpy.ma import) gives np.unique's values, inverse and counts."""
    from budgetcli.base.core import unique

    rng = np.random.default_rng(3)
    for _ in range(200):
        a = rng.integers(-3, 5, rng.integers(0, 30)).astype(rng.choice([np.float64, np.int64, np.int32]))
        expected = np.unique(a, return_inverse=True, return_counts=True)
        got = unique(a, return_inverse=True, return_counts=True)
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(e.ravel(), g)
        np.testing.assert_array_equal(unique(a), expected[0])
