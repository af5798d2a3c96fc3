"""Every `sh` and `python` block of README.md and docs/*.md runs as written from a fresh clone, and the
figures written beside its commands are what the commands give.

Each block runs in its own copy of the repository, with HOME an empty directory and `budgetlearn` (the
same entry point as the installed script, on this checkout's code) first on PATH, and must exit 0
without a traceback and write every file it names as an output.  A block right below
`<!-- not run by tests: REASON -->` is skipped with that reason; the two set-up commands are such
blocks, and .ci/run must run them verbatim.

Figures: a `budgetlearn` command with an accuracy in its comment (`# 85.03%`, `# accuracy 85.03%`,
`# best.model: 84.19%`) is followed, as the block runs, by `budgetlearn eval` of the model it names
(`eval`'s MODEL, else the model the comment names, else the command's `-o` / `--save-best`) on
sample_data/a9a.t (or on the data `eval` names), and the printed accuracy must round to the figure.
A Python `print(...)  # VALUE` must print VALUE.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from budgetcli import manpage

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
CI_RUN = ROOT / ".ci" / "run"
TEST_DATA = "sample_data/a9a.t"  # what a figure beside a command is measured on, unless `eval` names another

MARKER = re.compile(r"^<!-- not run by tests: (.+) -->$")
SETUP = "set-up command"  # how the marker of the set-up commands begins
FENCE = re.compile(r"^```(\w*)$")
RUN = {"sh": ["bash", "-e", "-o", "pipefail", "-c"], "python": [sys.executable, "-c"]}
SHOWN = {"text"}  # output or listings, never run
# Files a command line writes: `-o FILE`, `> FILE`, `--csv FILE`, `--save-best FILE`, `--curve FILE`.
OUTPUT = re.compile(r"(?:^|\s)(?:-o|--csv|--save-best|--curve)\s+([^\s|;&]+)|>\s*([^\s|;&]+)")
FIGURE = re.compile(r"(\d+\.\d+)%")
NAMED = re.compile(r"([\w.-]+\.model): (\d+\.\d+)%")
# Not copied: caches, virtual environments, and the package itself. Blocks import this checkout's
# budgetcli through PYTHONPATH; a copy of it in the working directory would be imported instead by
# `python -c` and compile numba's cache afresh.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", ".ci-venv", "__pycache__", "*.egg-info", "build", ".pytest_cache", ".hypothesis", "budgetcli"
)


@dataclass
class Block:
    doc: str  # the file's path from the root
    line: int  # of the opening fence
    lang: str
    code: str
    skip: str | None  # the reason of a `not run by tests` marker on the line above

    @property
    def outputs(self) -> list[str]:
        if self.lang != "sh":
            return []
        names = [a or b for line in self.code.splitlines() for a, b in OUTPUT.findall(line.split(" #")[0])]
        return [n for n in names if n != "-" and not n.startswith("/dev/")]

    def checked(self) -> tuple[str, list[tuple[str, float]]]:
        """The code with an `eval` after every command that states an accuracy, and those checks:
        (the JSON file the eval writes, the accuracy in percent the doc states)."""
        if self.lang != "sh":
            return self.code, []
        out, checks = [], []
        for line in self.code.replace("\\\n", " ").splitlines():
            out.append(line)
            command, _, comment = line.partition(" #")
            figure = FIGURE.search(comment)
            if not command.startswith("budgetlearn ") or figure is None:
                continue
            model, data, stated = _measured(shlex.split(command.split("|")[0].split(">")[0]), comment, figure)
            result = f".figure-{len(checks)}.json"
            out.append(f"budgetlearn eval --json {shlex.quote(model)} {shlex.quote(data)} > {result}")
            checks.append((result, stated))
        return "\n".join(out) + "\n", checks


def _measured(args: list[str], comment: str, figure) -> tuple[str, str, float]:
    """(model, data, stated accuracy) of a command whose comment states an accuracy."""
    named = NAMED.search(comment)
    if args[1] == "eval":
        positional = [a for a in args[2:] if not a.startswith("-")]
        return positional[0], positional[1], float(figure.group(1))
    if named:
        return named.group(1), TEST_DATA, float(named.group(2))
    for flag in ("-o", "--save-best"):
        if flag in args:
            return args[args.index(flag) + 1], TEST_DATA, float(figure.group(1))
    raise AssertionError(f"a figure beside {' '.join(args)!r} names no model")


def blocks(path: Path, root: Path = ROOT) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    lines, found, i = text.splitlines(), [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = lines.index("```", i + 1)
            marker = MARKER.match(lines[i - 1]) if i else None
            found.append(
                Block(
                    str(path.relative_to(root)),
                    i + 1,
                    fence.group(1),
                    "\n".join(lines[i + 1 : end]) + "\n",
                    marker and marker.group(1),
                )
            )
            i = end
        i += 1
    return found


BLOCKS = [b for doc in DOCS for b in blocks(doc)]
RUNNABLE = [b for b in BLOCKS if b.lang in RUN]


def test_every_block_is_run_or_shown():
    """A block in another language (```bash, ```console) would silently escape the test below."""
    assert {b.lang for b in BLOCKS} <= set(RUN) | SHOWN, [
        (b.doc, b.line, b.lang) for b in BLOCKS if b.lang not in set(RUN) | SHOWN
    ]
    assert RUNNABLE


def test_the_parser_honours_only_a_marker_right_above_a_block(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "<!-- not run by tests: slow -->\n```sh\nsleep 99\n```\n\n<!-- not run by tests: stray -->\n\n"
        "```sh\ntrue > a.txt  # -o not-this\nbudgetlearn x -o m.model --curve c.csv | head > -\n```\n"
        "```text\nout\n```\n"
    )
    slow, plain, shown = blocks(doc, tmp_path)
    assert (slow.line, slow.skip, slow.code) == (2, "slow", "sleep 99\n")
    assert plain.skip is None and plain.outputs == ["a.txt", "m.model", "c.csv"]
    assert shown.lang == "text"


def test_the_figures_beside_commands_are_found():
    block = Block(
        "x.md",
        1,
        "sh",
        "budgetlearn train -a rbp sample_data/a9a -o r.model   # 84.23%\n"
        "budgetlearn eval r.model other.t        # accuracy 80.00%; the rest\n"
        "budgetlearn predict --jobs 2 best.model t > p   # best.model: 84.19%\n",
        None,
    )
    code, checks = block.checked()
    assert [stated for _, stated in checks] == [84.23, 80.0, 84.19]
    assert "budgetlearn eval --json r.model sample_data/a9a.t > .figure-0.json" in code
    assert "budgetlearn eval --json r.model other.t > .figure-1.json" in code
    assert "budgetlearn eval --json best.model sample_data/a9a.t > .figure-2.json" in code
    with pytest.raises(AssertionError, match="names no model"):  # `info` writes no model and names none
        Block("x.md", 1, "sh", "budgetlearn info r.model  # 99.9%\n", None).checked()


def test_ci_runs_the_two_set_up_commands_verbatim():
    setup = [b.code.strip() for b in BLOCKS if b.skip and b.skip.startswith(SETUP)]
    assert len(setup) == 2 and setup[0].startswith("pip install '.[test]'") and "pytest" in setup[1]
    assert [line for line in CI_RUN.read_text().splitlines() if line in setup] == setup


def test_the_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_algorithm_tables_are_the_declarations():
    text = (ROOT / "docs" / "ALGORITHMS.md").read_text(encoding="utf-8")
    for multiclass in (False, True):
        begin, end = manpage.table_markers(multiclass)
        assert text[text.index(begin) + len(begin) : text.index(end)].strip() == manpage.algorithm_table(multiclass), (
            "docs/ALGORITHMS.md is stale: python -m budgetcli.manpage man/ docs/ALGORITHMS.md"
        )


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"{b.doc}:{b.line}-{b.lang}" for b in RUNNABLE])
def test_block_runs_as_written(block, tmp_path):
    where = f"{block.doc} line {block.line}"
    if block.skip:
        pytest.skip(f"{where}: {block.skip}")
    work, home, bin_dir = tmp_path / "clone", tmp_path / "home", tmp_path / "bin"
    shutil.copytree(ROOT, work, ignore=NOT_COPIED)
    home.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "budgetlearn"  # what pip writes for [project.scripts]; dask's workers need the guard
    shim.write_text(
        f"#!{sys.executable}\nimport sys\nfrom budgetcli.entry import run\n"
        "if __name__ == '__main__':\n    sys.exit(run())\n"
    )
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "BUDGETLEARN_"))}
    env |= {
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    before = {name: _identity(work / name) for name in block.outputs}
    code, checks = block.checked()
    r = subprocess.run([*RUN[block.lang], code], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{where}: exit {r.returncode}\n{r.stderr[-4000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-4000:]
    for name, old in before.items():
        path = work / name
        assert path.is_file() and path.stat().st_size > 0, f"{where}: {name} not written"
        assert _identity(path) != old, f"{where}: {name} was there before and not rewritten"
    for result, stated in checks:
        measured = 100 * json.loads((work / result).read_text())["accuracy"]
        assert round(measured, 2) == stated, f"{where}: the doc says {stated}%, the model scores {measured:.4f}%"
    if block.lang == "python":
        printed = [
            line.split("#", 1)[1].strip()
            for line in block.code.splitlines()
            if line.lstrip().startswith("print(") and "#" in line
        ]
        assert r.stdout.splitlines()[: len(printed)] == printed, f"{where}: printed {r.stdout!r}"


def _identity(path: Path):
    """(inode, mtime) of a file, None when absent: an atomic rewrite changes both."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns
