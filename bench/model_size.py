"""Model files (issue #17): bytes of every algorithm's default model against the same support set in
LIBSVM's text model format, and the cost of a first prediction in a fresh process.

    python bench/model_size.py [TRAIN_BINARY (default sample_data/a9a)] [TEST (sample_data/a9a.t)]
                               [--multiclass FILE (default $BUDGETLEARN_DATASETS/letter/letter.scale,
                                else a generated waveform stream)] [--lines 5000] [--example-rounds 5]

1. For every algorithm: `budgetlearn train` on the first --lines examples (binary learners on TRAIN,
   multiclass ones on the multiclass file; rbf kernel, γ = 0.04 / 0.5, B = 300, Projectron η = 0.1),
   the default (compact) model's bytes and the bytes of its support set written as LIBSVM's
   svm_save_model writes a model (coefficients with %.16g, features as index:%.8g; a multiclass model
   with m − 1 coefficient columns, as LIBSVM's one-vs-one layout has).  Target: ratio ≤ 1.2.  A model
   file has a fixed overhead of about 4 kB (zip and .npy headers, the JSON header with one checksum per
   array), which dominates a model of a few support vectors; the table prints it.
2. The README's first example, Projectron++ η = 0.1, γ = 0.04 on all of TRAIN: model bytes without and
   with --save-resume, LIBSVM text bytes, and `budgetlearn predict` of 10 lines of TEST in a fresh
   process: wall seconds to the output (medians of --example-rounds, interleaved) and peak RSS.
   Targets: ≤ 0.7 s and ≤ 150 MB for the default model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from budgetcli.learning import algorithms  # noqa: E402
from budgetcli.model.model import Model  # noqa: E402
from repro.common import dataset  # noqa: E402

RSS = (
    "import resource, sys\nfrom budgetcli.entry import main\n"
    "try:\n    main(sys.argv[1:], prog_name='budgetlearn')\nexcept SystemExit:\n    pass\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def budgetlearn(*args, capture_rss: bool = False) -> tuple[float, int | None]:
    """(wall seconds, peak RSS in KiB or None) of one `budgetlearn` process."""
    command = [sys.executable, "-c", RSS] if capture_rss else [sys.executable, "-m", "budgetcli"]
    t0 = time.perf_counter()
    r = subprocess.run(
        [*command, *map(str, args)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"budgetlearn {' '.join(map(str, args))} failed: {r.stderr}")
    return wall, int(r.stderr.strip().splitlines()[-1]) if capture_rss else None


def libsvm_text_bytes(model: Model) -> int:
    """Bytes of the model's support set as LIBSVM's svm_save_model writes a model file."""
    learner = model.learner
    n = len(learner.support)
    kernel = learner.kernel
    if learner.multiclass:
        m = int(learner.n_classes[0])
        coef = learner.coefficients()[:, : max(m - 1, 1)]
    else:
        m = 2
        coef = learner.slot["alpha"][:n, None]
    header = [
        "svm_type c_svc",
        f"kernel_type {kernel.kind}",
        f"gamma {kernel.gamma:.8g}",
        f"nr_class {m}",
        f"total_sv {n}",
        "rho " + " ".join(["0"] * (m * (m - 1) // 2)),
        "label " + " ".join(map(str, range(m))),
        "nr_sv " + " ".join(["0"] * m),
        "SV",
    ]
    size = sum(len(line) + 1 for line in header)
    indptr, indices, values = learner.support.to_csr()
    for i in range(n):
        line = "".join(f"{c:.16g} " for c in coef[i])
        line += "".join(
            f"{j + 1}:{v:.8g} "
            for j, v in zip(indices[indptr[i] : indptr[i + 1]].tolist(), values[indptr[i] : indptr[i + 1]].tolist())
        )
        size += len(line) + 1
    return size


def head(path: str, lines: int, out: str) -> str:
    with open(path) as f, open(out, "w") as g:
        for k, line in enumerate(f):
            if k >= lines:
                break
            g.write(line)
    return out


def settings(cls) -> list:
    params = {p.name for p in cls.params}
    args = ["--gamma", "0.5" if cls.multiclass else "0.04"]
    if "budget" in params:
        args += ["-B", "300"]
    if "eta" in params:  # projectron-alma2's η bounds ‖δ‖ on the scale of its step C/√k: 0.1 keeps 8 SVs
        args += ["--eta", "0.5" if cls.multiclass else "0.01" if "alma_c" in params else "0.1"]
    return args


def sizes(binary: str, multiclass: str, tmp: str) -> list[dict]:
    one = os.path.join(tmp, "one.model")
    budgetlearn("train", "-q", "-a", "perceptron", head(binary, 1, os.path.join(tmp, "one.txt")), "-o", one)
    print(f"fixed overhead: a perceptron model of one support vector takes {os.path.getsize(one):,} B")
    rows = []
    for name, cls in sorted(algorithms.load_all().items()):
        model = os.path.join(tmp, f"{name}.model")
        budgetlearn("train", "-q", "-a", name, *settings(cls), multiclass if cls.multiclass else binary, "-o", model)
        ours, text = os.path.getsize(model), libsvm_text_bytes(Model.load(model))
        rows.append(
            {
                "algorithm": name,
                "support": len(Model.load(model).learner.support),
                "bytes": ours,
                "libsvm_text": text,
                "ratio": ours / text,
            }
        )
        print(
            f"{name:<20} {rows[-1]['support']:>6,} SVs  {ours:>11,} B  LIBSVM text {text:>11,} B  "
            f"ratio {rows[-1]['ratio']:.2f}{'' if rows[-1]['ratio'] <= 1.2 else '  OVER 1.2'}",
            flush=True,
        )
    return rows


def example(train: str, test: str, tmp: str, rounds: int) -> dict:
    compact, full = os.path.join(tmp, "example.model"), os.path.join(tmp, "example-resume.model")
    args = ["-a", "projectron++", "--eta", "0.1", "--kernel", "rbf", "--gamma", "0.04", train]
    budgetlearn("train", "-q", *args, "-o", compact)
    budgetlearn("train", "-q", "--save-resume", *args, "-o", full)
    ten = head(test, 10, os.path.join(tmp, "ten.t"))
    times = {compact: [], full: []}
    rss = {}
    budgetlearn("predict", compact, ten)  # numba's cache is warm from training; this warms the page cache
    load = os.getloadavg()
    for _ in range(rounds):
        for path in (compact, full):
            wall, kib = budgetlearn("predict", path, ten, capture_rss=True)
            times[path].append(wall)
            rss[path] = max(rss.get(path, 0), kib)
    out = {
        "support": len(Model.load(compact).learner.support),
        "bytes": os.path.getsize(compact),
        "bytes_save_resume": os.path.getsize(full),
        "libsvm_text": libsvm_text_bytes(Model.load(compact)),
        "predict10_wall": statistics.median(times[compact]),
        "predict10_rss_mb": rss[compact] / 1024,
        "predict10_wall_save_resume": statistics.median(times[full]),
        "predict10_rss_mb_save_resume": rss[full] / 1024,
        "load": [load, os.getloadavg()],
    }
    print(
        f"\nREADME example (projectron++ η 0.1, γ 0.04, {out['support']:,} SVs): model {out['bytes']:,} B, with "
        f"--save-resume {out['bytes_save_resume']:,} B, LIBSVM text {out['libsvm_text']:,} B "
        f"(ratio {out['bytes'] / out['libsvm_text']:.2f})"
    )
    print(
        f"predict 10 lines, fresh process, median of {rounds}: {out['predict10_wall']:.2f} s wall, "
        f"{out['predict10_rss_mb']:.0f} MB peak RSS (targets 0.7 s, 150 MB); the --save-resume model: "
        f"{out['predict10_wall_save_resume']:.2f} s, {out['predict10_rss_mb_save_resume']:.0f} MB "
        f"(load average {load[0]:.2f} before, {out['load'][1][0]:.2f} after)"
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("test", nargs="?", default=str(dataset("a9a/a9a.t")))
    ap.add_argument("--multiclass", default=None)
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--example-rounds", type=int, default=5)
    ap.add_argument("--no-example", action="store_true", help="only the table of sizes")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        multiclass = args.multiclass
        if multiclass is None and os.environ.get("BUDGETLEARN_DATASETS"):
            multiclass = str(dataset("letter/letter.scale"))
        if multiclass is None:
            multiclass = os.path.join(tmp, "waveform.txt")
            budgetlearn("generate", "waveform", "-n", str(args.lines), "--seed", "1", "-o", multiclass)
            print("multiclass learners on a generated waveform stream (set BUDGETLEARN_DATASETS for letter)")
        binary = head(args.train, args.lines, os.path.join(tmp, "binary.txt"))
        multi = head(multiclass, args.lines, os.path.join(tmp, "multi.txt"))
        rows = sizes(binary, multi, tmp)
        worst = max(rows, key=lambda r: r["ratio"])
        print(
            f"largest ratio: {worst['ratio']:.2f} ({worst['algorithm']}); target ≤ 1.2: "
            f"{'met' if worst['ratio'] <= 1.2 else 'MISSED'}"
        )
        if not args.no_example:
            example(args.train, args.test, tmp, args.example_rounds)


if __name__ == "__main__":
    main()
