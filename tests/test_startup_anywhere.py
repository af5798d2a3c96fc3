"""Every command starts wherever the package is installed (docs/RELIABILITY.md, "Start-up anywhere").

numba caches compiled code in NUMBA_CACHE_DIR, beside the sources or in ~/.cache; when none of them
is writable, budgetcli.numerics._jit caches it in TMPDIR/budgetlearn-numba-UID (mode 0700), and compiles
without a cache, after one note, when that directory is not ours alone.  The commands run on a copy
of the package in a child process.  For any user, root included, numba's three places are made
unusable by putting them under regular files; the realistic setting, a read-only copy run by uid
65534 without a writable home, needs root to switch to that uid.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
NOTE = (
    "budgetlearn: note: compiled code is not cached (no writable cache directory of this user's own; "
    "set NUMBA_CACHE_DIR to one): each run compiles it again\n"
)
TRAIN = ["train", "-a", "perceptron", "--kernel", "poly", "-q"]  # poly: predict runs compiled code, not fewscores


def run(env: dict, cwd: Path, *args: str, uid: int | None = None) -> subprocess.CompletedProcess:
    as_user = {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}
    return subprocess.run(
        [sys.executable, "-m", "budgetcli", *args], env=env, cwd=cwd, capture_output=True, text=True, **as_user
    )


def run_normally(*args: str) -> subprocess.CompletedProcess:
    return run(dict(os.environ), PROJECT_ROOT, *args)


def cache_files(path: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in path.rglob("*") if p.is_file()}


class Setting:
    """A copy of the package (ro/), a TMPDIR like /tmp and a data directory anyone can write, which is
    the commands' working directory; the child's environment names nothing else."""

    def __init__(self, base: Path, uid: int | None = None):
        self.base, self.uid = base, uid
        self.ro, self.tmp, self.data = base / "ro", base / "tmp", base / "data"
        shutil.copytree(PROJECT_ROOT / "budgetcli", self.ro / "budgetcli", ignore=shutil.ignore_patterns("__pycache__"))
        for path, mode in ((self.tmp, 0o1777), (self.data, 0o777)):
            path.mkdir()
            path.chmod(mode)  # not mkdir's mode, which the umask cuts
        self.train = self.data / "small.train"
        with open(PROJECT_ROOT / "sample_data" / "synthetic.train") as src:
            self.train.write_text("".join(src.readlines()[:300]))
        # PYTHONPATH: the copy first; a PYTHONPATH the tests run with (their numba) after it.
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "BUDGETLEARN_JIT": "1",  # the JIT path's cache (the extension compiled at install has none)
            "TMPDIR": str(self.tmp),
            "PYTHONPATH": os.pathsep.join([str(self.ro), *filter(None, [os.environ.get("PYTHONPATH")])]),
        }
        self.own_cache = self.tmp / f"budgetlearn-numba-{os.getuid() if uid is None else uid}"

    def run(self, *args: str, **env) -> subprocess.CompletedProcess:
        return run({**self.env, **env}, self.data, *args, uid=self.uid)


@pytest.fixture
def blocked(tmp_path):
    """NUMBA_CACHE_DIR, the __pycache__ beside the sources and ~/.cache lie under regular files, in which
    no one, root included, can make a directory."""
    s = Setting(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    for package in (s.ro / "budgetcli", *(p for p in (s.ro / "budgetcli").rglob("*") if p.is_dir())):
        (package / "__pycache__").write_text("")
    s.env.update(HOME=str(blocker), NUMBA_CACHE_DIR=str(blocker / "cache"))
    return s


def test_with_no_writable_numba_cache_place_our_own_is_used(blocked):
    s = blocked
    version = s.run("--version")
    assert (version.returncode, version.stderr) == (0, "")
    assert version.stdout.startswith("budgetlearn, version ")
    train = s.run(*TRAIN, str(s.train), "-o", "m.model")
    assert (train.returncode, train.stderr) == (0, "")
    first = s.run("predict", "m.model", str(s.train))
    assert (first.returncode, first.stderr) == (0, "")

    st = s.own_cache.lstat()
    assert (stat.S_ISDIR(st.st_mode), st.st_uid, stat.S_IMODE(st.st_mode)) == (True, os.getuid(), 0o700)
    cached = cache_files(s.own_cache)
    assert any(p.name.startswith("learner.binary_scores") and p.suffix == ".nbi" for p in cached)
    second = s.run("predict", "m.model", str(s.train))
    assert (second.returncode, second.stderr, second.stdout) == (0, "", first.stdout)
    assert cache_files(s.own_cache) == cached  # loaded from the cache, nothing compiled again

    # The same model and predictions as from the project's tree in the normal setting.
    assert run_normally(*TRAIN, str(s.train), "-o", str(s.base / "normal.model")).returncode == 0
    assert (s.data / "m.model").read_bytes() == (s.base / "normal.model").read_bytes()
    assert run_normally("predict", str(s.data / "m.model"), str(s.train)).stdout == first.stdout


def test_a_writable_numba_cache_dir_is_used(blocked):
    s = blocked
    mine = s.data / "mine"
    p = s.run(*TRAIN, str(s.train), "-o", "m.model", NUMBA_CACHE_DIR=str(mine))
    assert (p.returncode, p.stderr) == (0, "")
    assert any(p.suffix == ".nbi" for p in cache_files(mine))
    assert not s.own_cache.exists()


@pytest.mark.parametrize("kind", ["other owner", "group-writable", "world-writable", "symlink"])
def test_a_cache_dir_not_ours_alone_is_not_used(blocked, kind):
    s = blocked
    if kind == "symlink":  # to a directory of ours: whoever could plant the link could swap its target
        planted = s.tmp / "target"
        planted.mkdir(mode=0o700)
        s.own_cache.symlink_to(planted)
    else:
        planted = s.own_cache
        planted.mkdir()
        planted.chmod({"other owner": 0o700, "group-writable": 0o770, "world-writable": 0o777}[kind])
    if kind == "other owner":
        try:
            os.chown(planted, os.getuid() ^ 1, -1)
        except PermissionError:
            pytest.skip("needs root, to give a directory to another uid")
    p = s.run(*TRAIN, str(s.train), "-o", "m.model")  # runs compiled code
    assert (p.returncode, p.stderr) == (0, NOTE)
    assert not any(planted.iterdir())


def test_without_a_cache_dir_of_our_own_code_is_compiled_each_run_after_one_note(blocked):
    s = blocked
    s.own_cache.mkdir()
    s.own_cache.chmod(0o777)
    train = s.run(*TRAIN, str(s.train), "-o", "m.model")
    assert (train.returncode, train.stderr) == (0, NOTE)  # once, for the many functions compiled
    predict = s.run("predict", "m.model", str(s.train))
    assert (predict.returncode, predict.stderr) == (0, NOTE)
    assert predict.stdout == run_normally("predict", str(s.data / "m.model"), str(s.train)).stdout
    assert not any(s.own_cache.iterdir())


@pytest.fixture
def as_nobody():
    """A Setting whose commands run as uid 65534, its copy of the package read-only and its home not
    writable; skips when the tests cannot switch to that uid or it cannot run this interpreter."""
    if os.geteuid() != 0:
        pytest.skip(f"needs root, to run the commands as the unprivileged uid {NOBODY}")
    # Not tmp_path: it lies under a 0700 directory of root's that uid 65534 cannot enter.
    with tempfile.TemporaryDirectory(prefix="budgetlearn-anywhere-") as base:
        os.chmod(base, 0o755)
        s = Setting(Path(base), NOBODY)
        try:
            probe = subprocess.run(
                [sys.executable, "-c", "import numba"],
                env=s.env,
                cwd=base,
                capture_output=True,
                text=True,
                user=NOBODY,
                group=NOBODY,
                extra_groups=[],
            )
        except PermissionError as e:
            pytest.skip(f"uid {NOBODY} cannot run {sys.executable}: {e}")
        if probe.returncode != 0:
            pytest.skip(f"uid {NOBODY} cannot run {sys.executable}: {probe.stderr.strip()[-200:]}")
        home = s.base / "home"
        home.mkdir(mode=0o755)
        s.env["HOME"] = str(home)
        for path in (s.ro, *s.ro.rglob("*")):
            path.chmod(path.stat().st_mode & ~0o222)
        yield s


def test_a_read_only_install_runs_for_a_user_without_a_home(as_nobody):
    s = as_nobody
    version = s.run("--version")
    assert (version.returncode, version.stderr) == (0, "")
    train = s.run(*TRAIN, str(s.train), "-o", "m.model")
    assert (train.returncode, train.stderr) == (0, "")
    predict = s.run("predict", "m.model", str(s.train))
    assert (predict.returncode, predict.stderr) == (0, "")
    assert predict.stdout == run_normally("predict", str(s.data / "m.model"), str(s.train)).stdout
    st = s.own_cache.lstat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, 0o700)
    assert any(p.suffix == ".nbi" for p in cache_files(s.own_cache))


def test_commands_that_run_no_compiled_code_do_not_load_numba(tmp_path):
    """On the JIT path, numba is imported at the first call of compiled code (`_jit.Lazy`): not by --version, info, or a
    predict of a few lines with the rbf kernel (numpy's fewscores.py); a train does load it.  The
    installed script's group (entry.py) loads the subcommands, numpy among them, only when one is named."""
    data = tmp_path / "small.train"
    with open(PROJECT_ROOT / "sample_data" / "synthetic.train") as src:
        data.write_text("".join(src.readlines()[:40]))
    model = tmp_path / "m.model"
    child = (
        "import sys\nfrom budgetcli.entry import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
        "    assert not e.code, e.code\nprint('numba' in sys.modules, 'numpy' in sys.modules, "
        "'scipy.linalg' in sys.modules, file=sys.stderr)\n"
    )

    def loaded(*args):
        p = subprocess.run(
            [sys.executable, "-c", child, *args],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            env=os.environ | {"BUDGETLEARN_JIT": "1"},
        )  # the JIT path (test_aot.py: the other)
        assert p.returncode == 0, p.stderr
        return p.stderr.strip().splitlines()[-1]

    def loads_numba(*args):
        return loaded(*args).split()[0] == "True"

    assert loaded("--version") == "False False False"

    # compiled code ran, without numba's eager check that scipy's BLAS imports (_jit._defer_blas_check)
    assert loaded("train", "-a", "perceptron", "--gamma", "1", "-q", str(data), "-o", str(model)) == "True True False"
    assert not loads_numba("--version")
    assert not loads_numba("info", str(model))
    assert not loads_numba("predict", str(model), str(data))


@pytest.mark.parametrize("given, threads", [({}, 1), ({"OPENBLAS_NUM_THREADS": "2"}, 2)], ids=["unset", "user's"])
def test_the_script_runs_blas_on_one_thread_unless_the_user_says_otherwise(given, threads):
    """entry.run: numpy's BLAS on one thread (its idle threads spin, and a sharded run's arithmetic must not
    depend on where it runs); a thread count the user set is kept."""
    pytest.importorskip("threadpoolctl")
    if (os.cpu_count() or 1) < 2 and threads > 1:
        pytest.skip("one core: BLAS runs one thread whatever is asked")
    child = (
        "from budgetcli import entry\nentry.main = lambda **kw: None\nentry.run()\nimport numpy, threadpoolctl\n"
        "print(max(i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))\n"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
    p = subprocess.run([sys.executable, "-c", child], cwd=PROJECT_ROOT, capture_output=True, text=True, env=env | given)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) == threads


def test_numba_s_blas_check_is_deferred_not_lost(tmp_path):
    """After the package's compiled code has run, a numba function that calls BLAS still compiles and
    computes (numba checks scipy's BLAS when it compiles np.dot)."""
    child = (
        "import numpy as np, numba, sys\nfrom budgetcli.numerics import _jit\n_jit.compile_all()\n"
        "assert 'scipy.linalg' not in sys.modules\n"
        "dot = numba.njit(lambda a, b: np.dot(a, b))\n"
        "print(dot(np.arange(3.0), np.array([1.0, 2.0, 4.0])))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", child],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=os.environ | {"NUMBA_CACHE_DIR": str(tmp_path)},
    )
    assert p.returncode == 0, p.stderr
    assert float(p.stdout) == 10.0
