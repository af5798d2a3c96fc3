"""Every `sh` and `python` block of README.md runs as written from a fresh clone.

Each block runs in its own copy of the repository, with HOME an empty directory and `budgetlearn` (the
same entry point as the installed script, on this checkout's code) first on PATH, and must exit 0
without a traceback and write every file it names as an output.  A block right below
`<!-- not run by tests: REASON -->` is skipped with that reason; the two set-up commands are such
blocks, and .ci/run must run them verbatim.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"

MARKER = re.compile(r"^<!-- not run by tests: (.+) -->$")
SETUP = "set-up command"  # how the marker of the set-up commands begins
FENCE = re.compile(r"^```(\w*)$")
RUN = {"sh": ["bash", "-e", "-o", "pipefail", "-c"], "python": [sys.executable, "-c"]}
SHOWN = {"text"}  # output, never run
# Files a command line writes: `-o FILE`, `> FILE`, `--csv FILE`, `--save-best FILE`, `--curve FILE`.
OUTPUT = re.compile(r"(?:^|\s)(?:-o|--csv|--save-best|--curve)\s+([^\s|;&]+)|>\s*([^\s|;&]+)")
# Not copied: caches, virtual environments, and the package itself. Blocks import this checkout's
# budgetcli through PYTHONPATH; a copy of it in the working directory would be imported instead by
# `python -c` and compile numba's cache afresh.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "__pycache__", "*.egg-info", "build",
                                    ".pytest_cache", ".hypothesis", "budgetcli")


@dataclass
class Block:
    line: int  # of the opening fence in README.md
    lang: str
    code: str
    skip: str | None  # the reason of a `not run by tests` marker on the line above

    @property
    def outputs(self) -> list[str]:
        if self.lang != "sh":
            return []
        names = [a or b for line in self.code.splitlines() for a, b in OUTPUT.findall(line.split(" #")[0])]
        return [n for n in names if n != "-" and not n.startswith("/dev/")]


def blocks(text: str) -> list[Block]:
    lines, found, i = text.splitlines(), [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = lines.index("```", i + 1)
            marker = MARKER.match(lines[i - 1]) if i else None
            found.append(Block(i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n", marker and marker.group(1)))
            i = end
        i += 1
    return found


BLOCKS = blocks(README.read_text(encoding="utf-8"))
RUNNABLE = [b for b in BLOCKS if b.lang in RUN]


def test_every_block_is_run_or_shown():
    """A block in another language (```bash, ```console) would silently escape the test below."""
    assert {b.lang for b in BLOCKS} <= set(RUN) | SHOWN, [(b.line, b.lang) for b in BLOCKS]
    assert RUNNABLE


def test_the_parser_honours_only_a_marker_right_above_a_block():
    text = ("<!-- not run by tests: slow -->\n```sh\nsleep 99\n```\n\n<!-- not run by tests: stray -->\n\n"
            "```sh\ntrue > a.txt  # -o not-this\nbudgetlearn x -o m.model --curve c.csv | head > -\n```\n"
            "```text\nout\n```\n")
    slow, plain, shown = blocks(text)
    assert (slow.line, slow.skip, slow.code) == (2, "slow", "sleep 99\n")
    assert plain.skip is None and plain.outputs == ["a.txt", "m.model", "c.csv"]
    assert shown.lang == "text"


def test_ci_runs_the_two_set_up_commands_verbatim():
    setup = [b.code.strip() for b in BLOCKS if b.skip and b.skip.startswith(SETUP)]
    assert len(setup) == 2 and setup[0].startswith("pip install '.[test]'") and "pytest" in setup[1]
    assert [line for line in CI_RUN.read_text().splitlines() if line in setup] == setup


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"line{b.line}-{b.lang}" for b in RUNNABLE])
def test_readme_block_runs_as_written(block, tmp_path):
    if block.skip:
        pytest.skip(f"README.md line {block.line}: {block.skip}")
    work, home, bin_dir = tmp_path / "clone", tmp_path / "home", tmp_path / "bin"
    shutil.copytree(ROOT, work, ignore=NOT_COPIED)
    home.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "budgetlearn"  # what pip writes for [project.scripts]; dask's workers need the guard
    shim.write_text(f"#!{sys.executable}\nimport sys\nfrom budgetcli.cli import main\n"
                    "if __name__ == '__main__':\n    sys.exit(main())\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "BUDGETLEARN_"))}
    env |= {"HOME": str(home), "PYTHONPATH": str(ROOT),
            "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    before = {name: _identity(work / name) for name in block.outputs}
    r = subprocess.run([*RUN[block.lang], block.code], cwd=work, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"README.md line {block.line}: exit {r.returncode}\n{r.stderr[-4000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-4000:]
    for name, old in before.items():
        path = work / name
        assert path.is_file() and path.stat().st_size > 0, f"README.md line {block.line}: {name} not written"
        assert _identity(path) != old, f"README.md line {block.line}: {name} was there before and not rewritten"


def _identity(path: Path):
    """(inode, mtime) of a file, None when absent: an atomic rewrite changes both."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns
