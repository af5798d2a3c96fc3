"""budgetcli.river.BudgetAnomalyDetector (issue #49): River's own estimator checks for anomaly detectors,
River's anomaly API (score_one higher for what looks novel, usable inside anomaly.QuantileFilter), and
agreement with `budgetlearn train --task novelty` and `predict --scores` on every row."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

pytest.importorskip("river")
pd = pytest.importorskip("pandas")
from river import anomaly, checks  # noqa: E402

from budgetcli.model.model import Model  # noqa: E402
from budgetcli.river import BudgetAnomalyDetector, BudgetRegressor  # noqa: E402

from .test_river import assert_same_learner, cli_model, run, write_libsvm  # noqa: E402

CONFIGS = {f"detector-{i}": config for i, config in enumerate(BudgetAnomalyDetector._unit_test_params())}


def river_checks():
    """(config, check) for every check River's check_estimator runs on an anomaly detector (among them
    check_roc_auc: the prequential scores rank the anomalies above the normal points).  River runs its
    data set checks on its CreditCard set, which it downloads: here they run on `stand_in`, a stream of the
    same kind (30 numeric features, 2% anomalies, label True), made here."""
    for name, config in CONFIGS.items():
        for i, check in enumerate(checks.yield_checks(BudgetAnomalyDetector(**config))):
            if isinstance(check, functools.partial) and "dataset" in check.keywords:
                scale = 10 if check.__name__ == "check_bounded_memory_growth" else 1  # River's long stream
                check = functools.update_wrapper(functools.partial(check.func, dataset=stand_in(scale)), check.func)
            yield pytest.param(config, check, id=f"{name}-{check.__name__}-{i}")


def stand_in(scale: int) -> list[tuple[dict, bool]]:
    """1,000 × scale rows of 30 features (named V1..V30, as CreditCard's), N(0, 1), 2% of them anomalies
    moved 3 away on every feature, each with its label (True: an anomaly)."""
    rng = np.random.default_rng(scale)
    X = rng.standard_normal((1000 * scale, 30))
    anomalous = rng.random(len(X)) < 0.02
    X[anomalous] += 3.0
    return [({f"V{j + 1}": float(v) for j, v in enumerate(x)}, bool(a)) for x, a in zip(X, anomalous)]


@pytest.mark.parametrize("config,check", list(river_checks()))
def test_river_checks(config, check):
    pytest.importorskip("sklearn")  # river.checks imports scikit-learn for its data sets and AUC
    random.seed(0)
    check(BudgetAnomalyDetector(**config).clone())


def rows(n: int, seed: int, novel: float = 0.0) -> tuple[list[dict], np.ndarray]:
    """Points of a 3-d Gaussian as River dicts (features 'a', 'b', 'c'), a fraction `novel` moved far off."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    far = rng.random(n) < novel
    X[far] += 4.0
    return [dict(zip("abc", map(float, x))) for x in X], far


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"rho_fit": "recent"},
        {"average": False, "budget": 40},
        {"algorithm": "fogd-novelty", "components": 50},
        {"algorithm": "nogd-novelty", "budget": 40},  # switches to its Nyström map within the stream
    ],
)
def test_the_detector_is_budgetlearn_train_and_predict_scores(tmp_path, params):
    """learn_one over a stream is `budgetlearn train --task novelty` on its file (the same learner, its
    flagged rounds those the train summary counts); score_one is minus `predict --scores` of the file
    `save` writes, on every row, and > 0 exactly where predict writes -1; learn_many is learn_one; train
    --resume of the saved file goes on as the loaded detector does."""
    stream, _ = rows(600, 1)
    rest, far = rows(200, 2, novel=0.2)
    detector = BudgetAnomalyDetector(gamma=0.5, **params)
    for x in stream:
        detector.learn_one(x)
    options = ["--task", "novelty", "--gamma", "0.5", "--rho-fit", params.get("rho_fit", "learnt")]
    options += ["--hypothesis", "last"] if params.get("average") is False else []
    options += ["-B", "40"] if "budget" in params else []
    options += ["-a", params["algorithm"]] if "algorithm" in params else []
    options += ["-D", "50"] if "components" in params else []
    summary, cli = cli_model(tmp_path, [(x, 0) for x in stream], detector.features, str, *options)
    assert_same_learner(detector.learner, cli.learner)
    assert summary["online_flagged"] == detector.learner.counter("margin_updates") > 0
    path = tmp_path / "d.model"
    detector.save(path)
    write_libsvm(tmp_path / "rest.txt", [(x, int(f)) for x, f in zip(rest, far)], detector.features, str)
    r = run("predict", "--scores", path, tmp_path / "rest.txt")
    assert r.exit_code == 0, r.output
    said = [line.split() for line in r.stdout.splitlines()]
    scores = [detector.score_one(x) for x in rest]
    assert [f"{-s:.10g}" for s in scores] == [g for _, g in said]
    assert ["-1" if s > 0 else "1" for s in scores] == [p for p, _ in said]
    assert {p for p, _ in said} == {"1", "-1"}
    same = r.stdout == run("predict", "--scores", tmp_path / "cli.model", tmp_path / "rest.txt").stdout
    assert same  # the CLI's own model of the stream
    frame = BudgetAnomalyDetector(gamma=0.5, **params)
    frame.learn_many(pd.DataFrame(stream))
    assert_same_learner(frame.learner, detector.learner)
    assert frame.score_many(pd.DataFrame(rest)).tolist() == scores
    loaded = BudgetAnomalyDetector.load(path)
    r = run("train", "--resume", path, tmp_path / "rest.txt", "-o", tmp_path / "resumed.model", "-q", "--save-resume")
    assert r.exit_code == 0, r.output
    for x in rest:
        loaded.learn_one(x)
    assert_same_learner(loaded.learner, Model.load(tmp_path / "resumed.model", resume=True).learner)


def test_inside_river_s_quantile_filter(tmp_path):
    """anomaly.QuantileFilter(detector, q) thresholds the detector's scores at their running q-quantile:
    on a stream with 2% far points it flags most of them and few normal ones (prequentially, as River
    evaluates), and a score of 0 before any learning is River's convention."""
    assert BudgetAnomalyDetector().score_one({"a": 1.0}) == 0.0
    stream, far = rows(3000, 3, novel=0.02)
    model = anomaly.QuantileFilter(BudgetAnomalyDetector(gamma=0.5), q=0.97)
    flagged = []
    for x in stream:
        flagged.append(model.classify(model.score_one(x)))
        model.learn_one(x)
    flagged = np.array(flagged[500:])
    far = far[500:]
    assert flagged[far].mean() > 0.8 and flagged[~far].mean() < 0.05


def test_refusals_name_the_class(tmp_path):
    with pytest.raises(ValueError, match="perceptron learns classification, not novelty"):
        BudgetAnomalyDetector("perceptron")
    with pytest.raises(ValueError, match="nu"):
        BudgetAnomalyDetector(nu=0.0)
    detector = BudgetAnomalyDetector()
    detector.learn_one({"a": 1.0})
    detector.save(tmp_path / "d.model")
    with pytest.raises(ValueError, match="BudgetRegressor takes a regression model; this one is a novelty model"):
        BudgetRegressor.load(tmp_path / "d.model")
    with pytest.raises(ValueError, match="BudgetAnomalyDetector takes a novelty model; this one is a regression"):
        regressor = BudgetRegressor()
        regressor.learn_one({"a": 1.0}, 2.0)
        regressor.save(tmp_path / "r.model")
        BudgetAnomalyDetector.load(tmp_path / "r.model")
