"""The malformed-input table: every row of docs/MALFORMED.md, driven through `budgetlearn train`.

CASES below is the one source of truth: each case is run as written (exit code, the exact stderr
line, an existing model left byte for byte untouched on error, and what --skip-bad-lines does), and
`test_the_doc_lists_exactly_these_cases` checks that docs/MALFORMED.md holds the table rendered from
CASES.  After changing CASES, rewrite the table with

    python -m tests.test_malformed
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.entry import main
from budgetcli.model.model import Model

from . import doctables

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC = PROJECT_ROOT / "docs" / "MALFORMED.md"
BEGIN, END = "<!-- table generated from tests/test_malformed.py: begin -->", "<!-- end of table -->"

BEFORE = b"+1 1:0.5 2:1\n-1 1:-1 3:0.25\n"  # lines 1 and 2
AFTER = b"+1 2:0.75\n"  # line 4
TEN_MB_LINE = b"+1 " + b" ".join(b"%d:0.5" % i for i in range(1, 1_000_001))


def _truncated_gzip() -> bytes:
    whole = gzip.compress(BEFORE * 3000, mtime=0)
    return whole[: len(whole) // 2]


@dataclass(frozen=True)
class Case:
    name: str
    shown: str  # the input as the table shows it
    content: bytes  # the whole file (or stdin)
    exit: int
    message: str  # the stderr line after "budgetlearn: error: " (FILE = the data path); "" when accepted
    examples: int | None = None  # accepted: examples learned
    skip: str = "skipped"  # with --skip-bad-lines: "skipped" (1 line, 3 examples), "same", or "accepted"
    suffix: str = ".txt"
    stdin: bool = False


def line3(line: bytes) -> bytes:
    return BEFORE + line + b"\n" + AFTER


CASES = [
    Case("non-numeric label", "`abc 1:1`", line3(b"abc 1:1"), 1, "FILE:3: label is not a number (token 'abc')"),
    Case(
        "non-numeric value (decimal comma)",
        "`+1 1:1,5`",
        line3(b"+1 1:1,5"),
        1,
        "FILE:3: feature value is not a number (token '1:1,5')",
    ),
    Case("`3:abc`", "`+1 3:abc`", line3(b"+1 3:abc"), 1, "FILE:3: feature value is not a number (token '3:abc')"),
    Case(
        "negative index",
        "`+1 -2:1`",
        line3(b"+1 -2:1"),
        1,
        "FILE:3: feature index must be a whole number ≥ 0 (token '-2:1')",
    ),
    Case(
        "descending indices",
        "`+1 5:1 3:1`",
        line3(b"+1 5:1 3:1"),
        1,
        "FILE:3: feature indices must be strictly increasing (3 after 5) (token '3:1')",
    ),
    Case("duplicate index", "`+1 3:1 3:2`", line3(b"+1 3:1 3:2"), 1, "FILE:3: duplicate feature index 3 (token '3:2')"),
    Case("index without value", "`+1 3:`", line3(b"+1 3:"), 1, "FILE:3: missing feature value after ':' (token '3:')"),
    Case("value without index", "`+1 :3`", line3(b"+1 :3"), 1, "FILE:3: missing feature index before ':' (token ':3')"),
    Case(
        "NaN label",
        "`nan 1:1`",
        line3(b"nan 1:1"),
        1,
        "FILE:3: label is not finite (NaN, infinity or overflow) (token 'nan')",
    ),
    Case(
        "NaN value",
        "`+1 1:nan`",
        line3(b"+1 1:nan"),
        1,
        "FILE:3: feature value is not finite (NaN, infinity or overflow) (token '1:nan')",
    ),
    Case(
        "+inf value",
        "`+1 1:inf`",
        line3(b"+1 1:inf"),
        1,
        "FILE:3: feature value is not finite (NaN, infinity or overflow) (token '1:inf')",
    ),
    Case(
        "-inf value",
        "`+1 1:-inf`",
        line3(b"+1 1:-inf"),
        1,
        "FILE:3: feature value is not finite (NaN, infinity or overflow) (token '1:-inf')",
    ),
    Case(
        "overflow `1e400`",
        "`+1 1:1e400`",
        line3(b"+1 1:1e400"),
        1,
        "FILE:3: feature value is not finite (NaN, infinity or overflow) (token '1:1e400')",
    ),
    Case(
        "index above 2³¹",
        "`+1 2147483648:1`",
        line3(b"+1 2147483648:1"),
        1,
        "FILE:3: feature index exceeds 2147483647 (token '2147483648:1')",
    ),
    Case(
        "binary garbage",
        "bytes `00 ff fe 01`",
        line3(b"\x00\xff\xfe\x01"),
        1,
        "FILE:3: not valid text (invalid UTF-8) (token '\\x00\\\\xff\\\\xfe\\x01')",
    ),
    Case(
        "UTF-8 BOM after line 1",
        "`EF BB BF` + `+1 1:1`",
        line3(b"\xef\xbb\xbf+1 1:1"),
        1,
        "FILE:3: not valid text (control or non-ASCII character) (token '\\ufeff+1')",
    ),
    Case("label only", "`+1`", line3(b"+1"), 0, "", examples=4, skip="accepted"),
    # a feature as svm-train reads it, and as scikit-learn's dump_svmlight_file writes by default
    Case("index 0", "`+1 0:1`", line3(b"+1 0:1"), 0, "", examples=4, skip="accepted"),
    Case("tabs", "`+1<TAB>1:0.5<TAB>2:1`", line3(b"+1\t1:0.5\t2:1"), 0, "", examples=4, skip="accepted"),
    Case(
        "CRLF line ends",
        "every line ends `\\r\\n`",
        line3(b"+1 1:1").replace(b"\n", b"\r\n"),
        0,
        "",
        examples=4,
        skip="accepted",
    ),
    Case(
        "UTF-8 BOM at the start",
        "file starts `EF BB BF`",
        b"\xef\xbb\xbf" + line3(b"+1 1:1"),
        0,
        "",
        examples=4,
        skip="accepted",
    ),
    Case(
        "comment, qid, blank line",
        "`+1 qid:3 1:1 # note`, then an empty line",
        line3(b"+1 qid:3 1:1 # note\n"),
        0,
        "",
        examples=4,
        skip="accepted",
    ),
    Case(
        "10 MB single line",
        "`+1 1:0.5 2:0.5 … 1000000:0.5` (11 MB)",
        line3(TEN_MB_LINE),
        0,
        "",
        examples=4,
        skip="accepted",
    ),
    Case(
        "a line past 16 MiB (a source that sends no newline)",
        "`+1 1:1` and 17 MiB of spaces",
        line3(b"+1 1:1" + b" " * (17 << 20)),
        1,
        "FILE:3: the line is longer than 16,777,216 bytes, the most a line may hold",
    ),
    Case(
        "third label in binary training",
        "`2 1:1` after labels ±1",
        line3(b"2 1:1"),
        1,
        "FILE:3: a third label value in binary training (labels so far: +1, -1); this algorithm is "
        "binary-only, the multiclass ones are: bpegasos, mc-fogd, mc-nogd, mc-pa, mc-perceptron, mc-projectron++, "
        "mrbp, pegasos (token '2')",
        skip="same",
    ),
    Case("empty file", "0 bytes", b"", 1, "FILE: no examples to train on", skip="same"),
    Case(
        "only comments and blank lines",
        "`# nothing`, empty line",
        b"# nothing\n\n",
        1,
        "FILE: no examples to train on",
        skip="same",
    ),
    Case(
        "truncated .gz",
        "first half of a gzip file",
        _truncated_gzip(),
        1,
        "FILE:2416: truncated or corrupt compressed data "
        "(Compressed file ended before the end-of-stream marker was reached)",
        skip="same",
        suffix=".gz",
    ),
    Case(
        "stdin cut mid-line",
        "`… \\n+1 2:0.` then EOF (producer died)",
        BEFORE + b"+1 2:0.",
        1,
        "<stdin>:3: input ended in the middle of a line (no newline at the end): its producer may have "
        "stopped early (token '2:0.')",
        stdin=True,
        skip="accepted2",
    ),
]


def _run(case: Case, tmp_path: Path, *extra: str):
    target = tmp_path / "m.model"
    data = tmp_path / ("data" + case.suffix)
    if case.stdin:
        args, stdin = ["-"], case.content
    else:
        data.write_bytes(case.content)
        args, stdin = [str(data)], None
    r = CliRunner().invoke(main, ["train", "-a", "perceptron", "--json", *extra, *args, "-o", str(target)], input=stdin)
    return r, data, target


@pytest.fixture
def old_model(tmp_path):
    target = tmp_path / "m.model"
    good = tmp_path / "good.txt"
    good.write_bytes(BEFORE + AFTER)
    assert CliRunner().invoke(main, ["train", "-q", "-a", "lbp", str(good), "-o", str(target)]).exit_code == 0
    return target.read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_behaves_as_the_table_says(tmp_path, old_model, case):
    r, data, target = _run(case, tmp_path)
    assert r.exit_code == case.exit, r.output
    leftovers = sorted(p.name for p in tmp_path.glob(".m.model.*"))
    assert leftovers == []
    if case.exit:
        assert r.stderr == f"budgetlearn: error: {case.message.replace('FILE', str(data))}\n"
        assert target.read_bytes() == old_model  # an existing model is left untouched
        assert r.stdout == ""
    else:
        assert r.stderr.startswith("perceptron")  # the summary, no error
        assert json.loads(r.stdout)["examples"] == case.examples == Model.load(target).learner.counter("examples")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_with_skip_bad_lines(tmp_path, old_model, case):
    r, data, target = _run(case, tmp_path, "--skip-bad-lines")
    if case.skip == "same":  # not a bad line: a whole-source problem, still an error
        assert r.exit_code == case.exit == 1
        assert r.stderr == f"budgetlearn: error: {case.message.replace('FILE', str(data))}\n"
        assert target.read_bytes() == old_model
        return
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    expected = {"skipped": (1, 3), "accepted": (0, case.examples), "accepted2": (1, 2)}[case.skip]
    assert (summary["skipped_lines"], summary["examples"]) == expected
    if expected[0]:
        first = case.message.replace("FILE", str(data))
        assert f"skipped         1 malformed lines (first: {first})" in r.stderr


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    skip_text = {
        "skipped": "line skipped, counted, reported; exit 0",
        "accepted": "accepted the same, 0 skipped",
        "same": "the same error, exit 1",
        "accepted2": "cut line skipped, counted, reported; exit 0",
    }
    rows = [
        "| # | case | input (line 3 of 4 unless said) | behaviour: stderr (FILE = the data path) | exit "
        "| with `--skip-bad-lines` |",
        "|---:|---|---|---|---:|---|",
    ]
    for i, c in enumerate(CASES, 1):
        behaviour = f"`budgetlearn: error: {c.message}`" if c.exit else f"accepted: {c.examples} examples"
        rows.append(
            f"| {i} | {_cell(c.name)} | {_cell(c.shown)} | {_cell(behaviour)} | {c.exit} | {skip_text[c.skip]} |"
        )
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_malformed")
    assert len(CASES) >= 20


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
