"""What an ahead-of-time compiled path would save at start-up (issue #19, "a light start-up"), measured
on one algorithm: RBP.

    python bench/aot_startup.py [TRAIN (default sample_data/a9a)] [--runs 9]

A prototype, not a product path: it compiles the project's own compiled functions that a `train -a rbp`
run calls (the learning loop `perceptron_range`, the reader's `parse_lines`, and `kernel_matrix`,
which the kernel warnings use) ahead of time with `numba.pycc` into an extension module in a temporary
directory, with the argument types a JIT run gives them.  Then it times, as whole processes, warm,
interleaved round after round (medians; wall, CPU = user + system, and peak RSS: bench/peers.py's measure):

- (jit) `python -m budgetcli train -a rbp -B 300 --gamma 0.01 FILE -o ...` as shipped;
- (aot) the same `cli.main` with those three functions taken from the extension module, and every JIT
  function refused (so numba is never imported: the child checks that numba, llvmlite and scipy are
  not in sys.modules when it exits),

on the first 1,000 lines of TRAIN and on the whole of it, and checks that both write byte-identical
model files (the same decisions, the same random draws).  numba.pycc is "pending deprecation" since
numba 0.57, with no removal release named; the figures say what moving the loops out of the JIT is
worth, not how it should be done.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from peers import interleaved  # noqa: E402  (bench/peers.py: wall, CPU and the child's own peak RSS)

ARGS = ["train", "-a", "rbp", "-B", "300", "--gamma", "0.01"]

BUILD = """
import sys
import numpy as np
from numba import typeof, types
from numba.pycc import CC
from budgetcli import _jit, learner as L
from budgetcli.algorithms import perceptron
from budgetcli.io import fastparse
from budgetcli.kernels import Kernel
from budgetcli.registry import get
from budgetcli.support import SupportSet

_jit.compile_all()
rbp = get("rbp")(Kernel("rbf", 0.01), seed=0, budget=300)
rbp.support.cover(1)
rbp._ensure_scratch(1)
S, K, book, st, h = rbp.loop_args()
rows = L.Rows(np.zeros(2, np.int64), np.zeros(1, np.int32), np.zeros(1), np.zeros(1))
i64, f64, i32, u8 = (typeof(np.zeros(1, t)) for t in (np.int64, np.float64, np.int32, np.uint8))
cc = CC("rbp_aot")
cc.output_dir = sys.argv[1]
cc.export("perceptron_range", types.int64(typeof(S), typeof(K), typeof(rows), types.int64, typeof(book),
                                                 typeof(st), typeof(h)))(perceptron.perceptron_range.py_func)
cc.export("parse_lines", types.UniTuple(types.int64, 5)(
    typeof(np.frombuffer(b"ab", np.uint8)), *[types.int64] * 5, i64, f64, i64, i64, u8, i32, f64,
    typeof(np.zeros((1, 3), np.int64))))(fastparse.parse_lines.py_func)
S2 = SupportSet.from_csr(np.array([0, 1]), np.array([0], np.int32), np.array([1.0])).arrays
cc.export("kernel_matrix", types.none(typeof(S2), typeof(K), i64, i32, f64, f64, typeof(np.zeros((1, 1)))))(
    L.kernel_matrix.py_func)
cc.compile()
"""

RUN_AOT = """
import sys
sys.path.insert(0, sys.argv.pop(1))
import rbp_aot
from budgetcli import _jit, cli, pipeline
from budgetcli.io import libsvm
from budgetcli.algorithms.perceptron import RandomizedBudgetPerceptron

def refuse():
    raise RuntimeError("a JIT-compiled function was called")

_jit.compile_all = refuse
libsvm.parse_lines = rbp_aot.parse_lines
pipeline.kernel_matrix = rbp_aot.kernel_matrix
RandomizedBudgetPerceptron.loop = staticmethod(rbp_aot.perceptron_range)
try:
    cli.main(sys.argv[1:], prog_name="budgetlearn")
except SystemExit as exc:
    assert not exc.code, exc.code
loaded = [m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite", "scipy")]
assert not loaded, loaded
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=os.path.join(ROOT, "sample_data", "a9a"))
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", BUILD, tmp], check=True, cwd=ROOT)
        short = os.path.join(tmp, "first-1000")
        with open(args.train, "rb") as f, open(short, "wb") as out:
            out.writelines(line for _, line in zip(range(1000), f))
        cmds = {}
        for i, (tag, data) in enumerate((("1,000 lines", short), ("whole file", args.train))):
            cmds[f"jit, {tag}"] = [sys.executable, "-m", "budgetcli", *ARGS, data, "-o", os.path.join(tmp, f"jit{i}")]
            cmds[f"aot, {tag}"] = [sys.executable, "-c", RUN_AOT, tmp, *ARGS, data, "-o", os.path.join(tmp, f"aot{i}")]
        print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        runs = {k: [(p.wall, p.cpu, p.rss) for p in ps] for k, ps in interleaved(cmds, args.runs, ROOT).items()}
        print("load average after:  " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        same = [
            open(os.path.join(tmp, f"jit{i}"), "rb").read() == open(os.path.join(tmp, f"aot{i}"), "rb").read()
            for i in (0, 1)
        ]
    print(f"{'command':22s} {'wall':>7s} {'CPU':>7s} {'peak RSS':>9s}   (medians of {args.runs})")
    for k, v in runs.items():
        wall, cpu, rss = (statistics.median(x) for x in zip(*v))
        print(f"{k:22s} {wall:6.3f}s {cpu:6.3f}s {rss:7.1f}MB")
    for tag in ("1,000 lines", "whole file"):
        saved = statistics.median(a[0] - b[0] for a, b in zip(runs[f"jit, {tag}"], runs[f"aot, {tag}"]))
        print(f"saved by the AOT path, {tag}: {saved:.3f} s wall (paired median)")
    print("model files byte-identical (1,000 lines, whole file): " + ", ".join(map(str, same)))


if __name__ == "__main__":
    main()
