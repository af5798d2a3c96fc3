"""FOGD and NOGD against scikit-learn's kernel approximations with a linear SVM learned in one pass
(issue #33): `RBFSampler` + `SGDClassifier` beside `fogd`, `Nystroem` + `SGDClassifier` beside `nogd`,
train + test as fresh processes on both sides, interleaved round after round.

    python bench/feature_maps.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)] [--runs 5]
                                 [--gamma 0.01] [-D 400] [-B 100]

On data with more than two labels (letter), mc-fogd and mc-nogd against the same pipelines (SGD one-vs-all).

Ours: `budgetlearn train -a fogd -D D --gamma G TRAIN -o M` then `budgetlearn eval M TEST` (the default
hypothesis, averaged); `-a nogd -B B` likewise.  The peers: one script each, in a fresh process, that
loads both files, fits the map (RBFSampler with 2D components, the feature dimension of our D cos/sin
pairs; Nystroem with B components on the first B rows, as NOGD's landmarks are its first margin errors),
and makes one pass of SGDClassifier(loss="hinge") over TRAIN in blocks of 1,000, then scores TEST.
Targets: equal or better accuracy at ≤ 0.5× the peer's wall time (train + test against the script).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from loops import fmt_load  # noqa: E402
from peers import interleaved  # noqa: E402

PEER = """
import sys
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import SGDClassifier

train, test, kind, gamma, size = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
X, y = load_svmlight_file(train)
Xt, yt = load_svmlight_file(test, n_features=X.shape[1])
if kind == "rbf-sampler":
    m = RBFSampler(gamma=gamma, n_components=size, random_state=0).fit(X)
else:
    m = Nystroem(gamma=gamma, n_components=size, random_state=0).fit(X[:size])
clf = SGDClassifier(loss="hinge", random_state=0)  # one-vs-all for more than two classes
classes = np.unique(y)
for a in range(0, X.shape[0], 1000):
    clf.partial_fit(m.transform(X[a:a + 1000]), y[a:a + 1000], classes=classes)
print(100 * float(np.mean(clf.predict(m.transform(Xt)) == yt)))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=os.path.join(ROOT, "sample_data", "a9a"))
    ap.add_argument("test", nargs="?", default=os.path.join(ROOT, "sample_data", "a9a.t"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.01)
    ap.add_argument("-D", type=int, default=400, help="FOGD's components (the sampler gets 2D)")
    ap.add_argument("-B", type=int, default=100, help="NOGD's landmarks (Nystroem's components)")
    args = ap.parse_args()
    py, tmp = sys.executable, tempfile.mkdtemp()
    with open(args.train) as f:
        multiclass = len({line.split(None, 1)[0] for line in f if line.strip()}) > 2
    prefix = "mc-" if multiclass else ""  # the multiclass forms against SGD's one-vs-all
    pairs = {
        f"{prefix}fogd": (["-D", args.D], ["rbf-sampler", 2 * args.D]),
        f"{prefix}nogd": (["-B", args.B], ["nystroem", args.B]),
    }
    cmds = {}
    for name, (ours, (kind, size)) in pairs.items():
        model = os.path.join(tmp, f"{name}.model")
        ours = [py, "-m", "budgetcli", "train", "-a", name, *map(str, ours), "--gamma", str(args.gamma), "-q"]
        cmds[f"{name} train"] = [*ours, args.train, "-o", model]
        cmds[f"{name} eval"] = [py, "-m", "budgetcli", "eval", model, args.test]
        cmds[f"{kind}"] = [py, "-c", PEER, args.train, args.test, kind, str(args.gamma), str(size)]
    print("load average before: " + fmt_load(os.getloadavg()))
    runs = interleaved(cmds, args.runs, ROOT)
    print("load average after:  " + fmt_load(os.getloadavg()))
    for k, ps in runs.items():
        print(
            f"{k:18s} wall {statistics.median(p.wall for p in ps):6.3f} s  CPU "
            f"{statistics.median(p.cpu for p in ps):6.3f} s  peak RSS {statistics.median(p.rss for p in ps):6.1f} MB"
        )
    for name, (_, (kind, size)) in pairs.items():
        ours = float(runs[f"{name} eval"][-1].out.split("accuracy")[1].split()[0].rstrip("%"))
        theirs = float(runs[kind][-1].out.strip().splitlines()[-1])
        ratio = statistics.median(
            (t.wall + e.wall) / p.wall for t, e, p in zip(runs[f"{name} train"], runs[f"{name} eval"], runs[kind])
        )
        verdict = "met" if ratio <= 0.5 and ours >= theirs else "NOT MET"
        print(
            f"{name} {ours:.2f}% against {kind}({size}) + SGD {theirs:.2f}%: train + eval ÷ the peer, wall "
            f"{ratio:.2f} (target ≤ 0.5 at equal or better accuracy: {verdict})"
        )


if __name__ == "__main__":
    main()
