"""Ahead-of-time compilation of the package's compiled functions (`pip install .` runs `build`).

The loops are numba functions (`_jit.njit`).  Compiled just in time, each process pays for numba's
import and for loading cached machine code (~0.5 s), and the first run of an algorithm compiles it
(seconds).  `build` compiles, with numba's `pycc`, every function that Python code calls, for every
argument type a run gives it, into one extension module, `budgetcli._loops`, beside a record of what it
holds (`_loops.json`: the sources it was built from, by hash); `_aot` calls into it when the argument
types match an entry, and leaves everything else to the JIT (`_jit`), which stays the fallback: no C
compiler, a numba without `pycc`, a source changed since the build, or `BUDGETLEARN_JIT=1`.

Which (function, argument types) pairs to compile is `aot_signatures.json`, harvested from a run of
every command over every algorithm (`python -m budgetcli.aot_build harvest`, run again when a loop or
its arguments change; a contract test fails when an algorithm's run would miss an entry).  Types are
written in a small JSON form (`type_key` below and in `_aot`), so that the runtime can match them without
numba.

    python -m budgetcli.aot_build harvest           # rewrite budgetcli/aot_signatures.json
    python -m budgetcli.aot_build build [OUTDIR]    # compile budgetcli/_loops.* (default: in place)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SIGNATURES = os.path.join(HERE, "aot_signatures.json")
MODULE = "_loops"  # budgetcli._loops


def numba_key(t) -> list:
    """A numba type in the JSON form `_aot.type_key` gives a Python value (None: not exportable)."""
    from numba.core import types

    if isinstance(t, types.Array):
        return ["a", str(t.dtype), t.ndim, t.layout, not t.mutable, bool(t.aligned)]
    if isinstance(t, types.Boolean):
        return ["s", "bool"]
    if isinstance(t, (types.Integer, types.Float)):
        return ["s", str(t)]
    if isinstance(t, types.NoneType):
        return ["n"]
    if isinstance(t, types.BaseTuple):
        members = [numba_key(m) for m in t.types]
        if any(m is None for m in members):
            return None
        cls = getattr(t, "instance_class", None)
        name = None if cls in (None, tuple) else f"{cls.__module__}:{cls.__qualname__}"
        return ["t", name, members]
    return None


def numba_type(key):
    """The numba type a JSON key names (inverse of `numba_key`)."""
    import importlib

    from numba.core import types

    kind = key[0]
    if kind == "a":
        _, dtype, ndim, layout, readonly, aligned = key
        return types.Array(_scalar(dtype), ndim, layout, readonly=readonly, aligned=aligned)
    if kind == "s":
        return _scalar(key[1])
    if kind == "n":
        return types.none
    if kind == "t":
        cls = None
        if key[1] is not None:
            module, qualname = key[1].split(":")
            cls = getattr(importlib.import_module(module), qualname)
        return types.BaseTuple.from_types([numba_type(m) for m in key[2]], cls)
    raise ValueError(f"unknown type key {key!r}")


def _scalar(name: str):
    from numba.core import types

    return types.boolean if name == "bool" else getattr(types, name)


def source_hashes() -> dict[str, str]:
    """sha256 of every module of the package that the compiled functions' modules import (compiled code
    keeps the values of the globals it reads, constants of other modules among them) and of the
    signatures file: the extension is used only while these are as they were when it was built (`_aot`)."""
    _import_all()
    files = {SIGNATURES}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == __package__ and name != __name__ and getattr(module, "__file__", None):
            if module.__file__.endswith(".py"):
                files.add(os.path.abspath(module.__file__))
    return {os.path.relpath(f, HERE): _sha256(f) for f in sorted(files)}


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _import_all() -> None:
    """Import every module that defines compiled functions (each registers them with `_jit` as it is
    imported): the ones that import `_jit`, found in the source, so that a build needs no more than
    numpy and numba (`pyproject.toml`'s build requirements)."""
    import importlib

    for folder, _, files in sorted(os.walk(HERE)):
        for file in sorted(files):
            if file.endswith(".py") and file != "_jit.py":
                with open(os.path.join(folder, file), encoding="utf-8") as f:
                    if "_jit import njit" in f.read():
                        relative = os.path.relpath(os.path.join(folder, file[:-3]), os.path.dirname(HERE))
                        importlib.import_module(relative.replace(os.sep, "."))


# ----------------------------------------------------------------------------------------- harvest


def harvest() -> list:
    """Every (function, argument types) pair the commands call from Python, run over every algorithm:
    the workload runs twice, in fresh processes, so that the second loads every function from numba's
    cache, where a function compiled for a caller does not show as a signature of its own."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, BUDGETLEARN_JIT="1")
        code = "from budgetcli.aot_build import _workload_signatures as w; w()"
        subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def _workload_signatures() -> None:
    from .numerics import _jit

    with tempfile.TemporaryDirectory() as tmp:
        _workload(tmp)
    entries = []
    for stand_in in _jit._lazy:
        if stand_in.compiled is None or stand_in.options.get("inline"):
            continue
        name = f"{stand_in.func.__module__}:{stand_in.func.__qualname__}"
        for sig in stand_in.compiled.signatures:
            keys = [numba_key(t) for t in sig]
            ret = numba_key(stand_in.compiled.overloads[sig].signature.return_type)
            if ret is not None and all(k is not None for k in keys):
                entries.append([name, ret, keys])
    entries.sort(key=json.dumps)
    print(json.dumps(entries))


def _workload(tmp: str) -> None:
    """Run every command a user runs, over every algorithm, on small binary and multiclass sets (large
    enough for the compiled reader)."""
    import numpy as np
    from click.testing import CliRunner

    from .base import registry
    from .entry import main

    rng = np.random.default_rng(0)
    for name, classes in (("b", ["+1", "-1"]), ("m", ["1", "2", "3"])):
        with open(os.path.join(tmp, name), "w") as f:
            for i in range(1500):
                features = sorted(rng.choice(40, 6, replace=False) + 1)
                f.write(f"{classes[i % len(classes)]} " + " ".join(f"{j}:{rng.normal():.4f}" for j in features) + "\n")
    runner = CliRunner()

    def run(*args: str) -> None:
        result = runner.invoke(main, list(args))
        if result.exit_code:
            raise RuntimeError(f"budgetlearn {' '.join(args)}: {result.output}")

    def at(name: str) -> str:
        return os.path.join(tmp, name)

    import budgetcli.learning.algorithms  # noqa: F401  (registers them)

    for algorithm, cls in sorted(registry.ALGORITHMS.items()):
        data = at("m") if cls.multiclass else at("b")
        model = at(algorithm + ".model")
        task = ("--task", cls.tasks[0])  # the binary set's ±1 are a regression learner's real targets
        for hypothesis in ("average", "last"):
            run("train", "-q", "-a", algorithm, *task, "--hypothesis", hypothesis, data, "-o", model)
        curve = ("--curve", at("c.csv")) if "classification" in cls.tasks else ()  # a curve counts mistakes
        run("train", "-q", "-a", algorithm, *task, "--epochs", "2", *curve, data, "-o", model)
        run("train", "-q", "--resume", model, data, "-o", model)
        run("predict", model, data, "-o", at("p"))
        run("eval", model, data)
        if "classification" in cls.tasks:  # probabilities are of classes
            run("calibrate", model, data, "-o", at("cal.model"))
            run("predict", "--proba", at("cal.model"), data, "-o", at("p"))
        run("online-to-batch", "-q", "-a", algorithm, *task, data, "-o", model)
    for kernel in ("linear", "poly"):
        run("train", "-q", "-a", "projectron++", "--kernel", kernel, at("b"), "-o", at("k.model"))
    run("train", "-q", "-a", "projectron++", "--threads", "2", at("b"), "-o", at("k.model"))  # sync.Workers
    run("tune", "-a", "rbp", "--grid", "B=10,20", at("b"), "--csv", at("t.csv"))
    run("train", "-q", "-a", "perceptron", at("b"), at("b"), "-o", at("s.model"))
    run("export", at("k.model"), "-o", at("k.svm"))


# ------------------------------------------------------------------------------------------- build


def build(outdir: str = HERE) -> str:
    """Compile every harvested entry into `outdir/_loops.*` and write `outdir/_loops.json`; returns the
    extension's path.  Raises when numba's pycc or a C compiler is missing (the caller decides)."""
    from numba.pycc import CC

    from .numerics import _jit

    _import_all()
    _jit.compile_all()  # compiled callers call compiled callees through their modules' globals
    functions = {f"{s.func.__module__}:{s.func.__qualname__}": s.func for s in _jit._lazy}
    with open(SIGNATURES) as f:
        entries = json.load(f)
    cc = CC(MODULE)
    cc.output_dir = outdir
    cc.verbose = False
    cc.target_cpu = _host_cpu()  # the JIT's CPU: the same instructions, the same results bit for bit
    for i, (name, ret, args) in enumerate(entries):
        signature = numba_type(ret)(*[numba_type(a) for a in args])
        cc.export(f"e{i}", signature)(functions[name])
    with _releasing_the_gil({s.func for s in _jit._lazy if s.options.get("nogil")}):
        cc.compile()
    import numba

    extension = os.path.join(outdir, cc.output_file)
    write_record(outdir, {"numba": numba.__version__, "cpu": cc.target_cpu, "entries": len(entries)}, extension)
    return extension


def write_record(outdir: str, record: dict, extension: str | None = None) -> None:
    """Write `outdir/_loops.json`: `record`, the hashes of the sources (`source_hashes`) and, for a built
    `extension`, its file name, size and sha256, which `_aot` checks before loading it (a file truncated
    at install or damaged since would kill the process with SIGBUS).  A build that failed or was skipped
    records why instead (`{"failed": REASON}`, `{"skipped": REASON}`: setup.py), for `--version`."""
    record = dict(record)
    if extension is not None:
        record["sources"] = source_hashes()
        record["extension"] = {
            "file": os.path.basename(extension),
            "bytes": os.path.getsize(extension),
            "sha256": _sha256(extension),
        }
    with open(os.path.join(outdir, MODULE + ".json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)


@contextlib.contextmanager
def _releasing_the_gil(functions: set):
    """pycc compiles every entry with the same flags, which hold the GIL; an entry of a function decorated
    with nogil=True (a worker thread's, sync.py) must release it, as the JIT's does, or the other threads
    wait for it.  So, while the extension is compiled, numba's compile_extra as pycc calls it sets the
    flag for those functions."""
    from numba.pycc import compiler

    original = compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, locals, **kw):
        if func in functions:
            flags = flags.copy()
            flags.release_gil = True
        return original(typingctx, targetctx, func, args, return_type, flags, locals, **kw)

    compiler.compile_extra = compile_extra
    try:
        yield
    finally:
        compiler.compile_extra = original


def _host_cpu() -> str:
    from llvmlite import binding

    return binding.get_host_cpu_name()


def main(argv: list[str]) -> None:
    if argv[:1] == ["harvest"]:
        entries = harvest()
        with open(SIGNATURES, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")
        print(f"{len(entries)} entries written to {SIGNATURES}")
    elif argv[:1] == ["build"]:
        print(build(argv[1] if len(argv) > 1 else HERE))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
