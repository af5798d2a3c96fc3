"""The loops compiled at install (budgetcli/aot_build.py, _aot.py): every algorithm has its entry, the
compiled path writes the same model file, byte for byte, as the JIT, and a run on it never imports
numba, llvmlite or scipy.linalg (so a run that hits no entry would show: it would load numba), nor
numpy.ma (np.unique imports it since numpy 2, ~10 ms of a process: core.unique is used instead), nor
numpy.random while a run is no longer than the sample of examples it keeps (report.Reservoir draws
only past it; importing numpy.random costs ~10 ms).

Where the machine has a C compiler, the installed package must hold the extension, current (`pip install
.` builds it; an editable install of a working tree: `python -m budgetcli.aot_build build`); without one,
the tests of the compiled path are skipped and the JIT runs, as it does for users without a compiler.
Those tests run the installed package in child processes started outside the source tree (the tests
themselves import the tree's, which a plain `pip install .` leaves without the extension)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from budgetcli.numerics import _aot, _jit
from budgetcli import aot_build
from budgetcli.base import registry
from budgetcli.learning.algorithms import ALGORITHMS
from tests.helpers import SAMPLE_DATA

ENTRIES = json.loads(Path(aot_build.SIGNATURES).read_text())
NAMES = {name for name, _, _ in ENTRIES}

needs_extension = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler: the extension is not built"
)


def test_every_registered_loop_and_every_helper_predict_needs_has_an_entry():
    """A new algorithm whose loop was not harvested would silently run on the JIT: refused here."""
    for name, cls in registry.ALGORITHMS.items():
        # the stand-in, or numba's function once compiled code has run in this process (the JIT path)
        func = cls.loop.func if isinstance(cls.loop, _jit.Lazy) else cls.loop.py_func
        assert f"{func.__module__}:{func.__qualname__}" in NAMES, f"{name}: run `python -m budgetcli.aot_build harvest`"
    for helper in (
        "budgetcli.learning.learner:binary_scores",
        "budgetcli.learning.multiclass:multiclass_scores",
        "budgetcli.io.fastparse:parse_lines",
        "budgetcli.learning.learner:kernel_matrix",
    ):
        assert helper in NAMES


def test_type_keys_round_trip_through_numba_types():
    """The runtime's spelling of a type (no numba) and the build's (numba's types) are one."""
    for _, ret, args in ENTRIES:
        for key in [ret, *args]:
            assert aot_build.numba_key(aot_build.numba_type(key)) == key


def test_type_key_spells_values_as_numba_types_them():
    import numpy as np
    from numba import typeof

    from budgetcli.learning.records import Rows

    values = [
        np.zeros(3),
        np.zeros((2, 3)),
        np.zeros((3, 2))[:, 0],
        np.zeros((2, 3), order="F"),
        np.zeros(2, np.int32),
        np.frombuffer(b"ab", np.uint8),
        1,
        1.5,
        True,
        np.int32(3),
        np.float64(2.0),
        (1, 2.0),
        Rows(np.zeros(2, np.int64), np.zeros(1, np.int32), np.zeros(1), np.zeros(1), np.zeros(0), np.zeros(0)),
    ]
    for value in values:
        assert _aot.type_key(value) == _aot._frozen(aot_build.numba_key(typeof(value))), value


@needs_extension
def test_the_installed_package_holds_the_extension_current(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "budgetcli", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, BUDGETLEARN_JIT="0"),
    )
    assert out.stdout.splitlines()[1] == "loops: compiled at install (ahead of time)", out.stdout
    jit = subprocess.run(
        [sys.executable, "-m", "budgetcli", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, BUDGETLEARN_JIT="1"),
    )
    assert jit.stdout.splitlines()[1] == "loops: compiled just in time by numba (BUDGETLEARN_JIT is set)"


CHILD = """
import sys
from budgetcli.entry import run
sys.argv = ["budgetlearn"] + sys.argv[1:]
try:
    run()
except SystemExit as e:
    assert not e.code, e.code
loaded = [m for m in ("numba", "llvmlite", "scipy.linalg", "numpy.ma", "numpy.random") if m in sys.modules]
print("LOADED", ",".join(loaded), file=sys.stderr)
"""


def _run(args, jit: bool, cwd) -> list[str]:
    env = dict(os.environ, BUDGETLEARN_JIT="1" if jit else "0")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return [line for line in out.stderr.splitlines() if line.startswith("LOADED")][-1].split()[1:]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """2,000 lines of a9a (binary, above the size where the compiled reader runs) and a 3-class set."""
    tmp = tmp_path_factory.mktemp("aot")
    lines = (SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)[:2000]
    (tmp / "b").write_text("".join(lines))
    (tmp / "m").write_text("".join(f"{1 + i % 3}{line[line.index(' ') :]}" for i, line in enumerate(lines)))
    return tmp


@needs_extension
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_compiled_and_jit_runs_write_the_same_model_and_the_compiled_run_loads_no_numba(algorithm, data):
    cls = registry.get(algorithm)
    source = data / ("m" if cls.multiclass else "b")
    models = {}
    for jit in (False, True):
        models[jit] = data / f"{algorithm}-{jit}.model"
        task = ["--task", cls.tasks[0]]  # ±1 targets to a regression learner, ignored by a novelty learner
        loaded = _run(["train", "-q", "-a", algorithm, *task, source, "-o", models[jit]], jit, data)
        if not jit:
            assert loaded == [], f"the compiled run of {algorithm} loaded {loaded}: an entry is missing"
    assert models[False].read_bytes() == models[True].read_bytes()


@needs_extension
def test_predict_eval_and_online_to_batch_on_the_compiled_path_load_no_numba(data):
    model = data / "p.model"
    assert _run(["train", "-q", data / "b", "-o", model], False, data) == []
    for args in (
        ["predict", model, data / "b", "-o", data / "out"],
        ["eval", model, data / "b"],
        ["online-to-batch", "-q", "-a", "rbp", data / "b", "-o", data / "o.model"],
    ):
        assert _run(args, False, data) == [], args
    # a resumed Projectron++ rebuilds its inverse (not kept in the file) with scipy.linalg's Cholesky,
    # which imports numpy.ma and numpy.random itself
    resumed = _run(["train", "-q", "--resume", model, data / "b", "-o", model], False, data)
    assert resumed == ["scipy.linalg,numpy.ma,numpy.random"]


# ---- a damaged extension, a failed build: checked before loading, and said by --version ------------


def _package_copy(tmp_path) -> Path:
    """A copy of this tree's package, without compiled code or caches, in which an extension is put."""
    import budgetcli

    root = tmp_path / "copy"
    ignore = shutil.ignore_patterns("__pycache__", "_loops*")
    shutil.copytree(Path(budgetcli.__file__).parent, root / "budgetcli", ignore=ignore)
    return root


def _child(root, code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root), BUDGETLEARN_JIT="0")
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _version(root) -> str:
    out = _child(root, "import sys; sys.argv = ['budgetlearn', '--version']; from budgetcli.entry import run; run()")
    return out.stdout.splitlines()[1]


def _an_extension(root) -> Path:
    """The installed package's extension when there is one (a real shared object, as a user's install
    holds), else bytes standing in for one; with its record, as `aot_build.build` writes it."""
    import importlib.machinery
    import sysconfig

    built = sorted((Path(sysconfig.get_paths()["platlib"]) / "budgetcli").glob("_loops*.so"))
    extension = root / "budgetcli" / ("_loops" + importlib.machinery.EXTENSION_SUFFIXES[0])
    if built:
        shutil.copyfile(built[0], extension)
    else:
        extension.write_bytes(os.urandom(100_000))
    folder = str(root / "budgetcli")
    code = f"from budgetcli import aot_build; aot_build.write_record({folder!r}, {{}}, {str(extension)!r})"
    assert _child(root, code).returncode == 0
    return extension


LOOKUP = """
import sys
from budgetcli.numerics import _aot
print(_aot.lookup("budgetcli.learning.learner:binary_scores", ()), "budgetcli._loops" in sys.modules)
"""


def test_a_truncated_extension_is_not_loaded_and_version_says_so(tmp_path):
    """A truncated extension killed every command with SIGBUS while --version said "compiled at install"."""
    root = _package_copy(tmp_path)
    extension = _an_extension(root)
    whole = extension.read_bytes()
    extension.write_bytes(whole[: len(whole) // 2])
    assert _version(root) == (
        "loops: compiled just in time by numba (the compiled extension is damaged: "
        f"budgetcli/{extension.name} holds {len(whole) // 2:,} bytes, not the {len(whole):,} built)"
    )
    out = _child(root, LOOKUP)
    assert out.returncode == 0 and out.stdout.split() == ["None", "False"], out.stderr
    damaged = bytearray(whole)
    damaged[len(whole) // 3] ^= 0xFF  # the same size, another byte
    extension.write_bytes(bytes(damaged))
    assert _version(root).endswith(f"budgetcli/{extension.name} is not the file built (its sha256 differs))")


def test_a_failed_or_skipped_build_says_why(tmp_path):
    root = _package_copy(tmp_path)
    record = root / "budgetcli" / "_loops.json"
    assert (
        _version(root)
        == "loops: compiled just in time by numba (no extension was compiled at install: that needs a C compiler)"
    )
    record.write_text(json.dumps({"failed": "CompileError: command 'gcc' failed: No space left on device"}))
    assert _version(root) == (
        "loops: compiled just in time by numba (compiled at install failed: CompileError: command 'gcc' failed: "
        "No space left on device)"
    )
    record.write_text(json.dumps({"skipped": "BUDGETLEARN_NO_AOT was set at install"}))
    assert _version(root).endswith("(not compiled at install: BUDGETLEARN_NO_AOT was set at install)")
    record.write_text('{"cpu": "znv')  # a record cut short by a full disk
    assert _version(root).endswith("(compiled at install failed: its record, budgetcli/_loops.json, is damaged)")


@needs_extension
def test_threads_on_the_compiled_path_load_no_numba_and_write_the_one_thread_jit_model(data):
    """`--threads 2` runs its worker threads from the extension (which must release the GIL for them, or
    the run would hang) and writes the JIT's one-thread model byte for byte."""
    models = {}
    for threads, jit in ((1, True), (2, False)):
        models[threads] = data / f"threads-{threads}.model"
        args = ["train", "-q", "-a", "projectron", "--eta", "0.05", "--threads", threads, data / "b"]
        loaded = _run([*args, "-o", models[threads]], jit, data)
        if not jit:
            assert loaded == [], f"the compiled threaded run loaded {loaded}"
    assert models[1].read_bytes() == models[2].read_bytes()
