"""The compiled LIBSVM parser (budgetcli.io.fastparse) against the strict Python one.

The reader parses an input of at least `_SMALL_INPUT` bytes with the compiled `parse_lines`, which
hands every line it does not take to `parse_line`; a smaller input goes to `parse_line` alone.
Both ways must give the same chunks to the last bit, the same errors, the same skipped lines."""

from __future__ import annotations

import io
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetcli.io import inputs, libsvm
from budgetcli.io.fastparse import DONE, FULL, PUNT, parse_lines
from budgetcli.io.libsvm import MAX_INDEX, DataError, LibsvmReader
from budgetcli.io.lines import Block, parse_line

from .test_reader import BAD_LINES


def compiled_only():
    return mock.patch.object(libsvm, "_SMALL_INPUT", 0)


def python_only():
    return mock.patch.object(libsvm, "parse_lines", _no_compiled_call)


def _no_compiled_call(*args):
    raise AssertionError("the compiled parser was called")


def outcome(source, block_lines=4096, skip=False, labels=True):
    """Everything a reading gives: each chunk bit for bit, then the error if any, and the skipped lines."""
    reader = LibsvmReader(source, block_lines=block_lines, skip_bad_lines=skip, labels=labels)
    got = []
    try:
        for c in reader:
            got.append(
                (
                    c.indptr.tolist(),
                    c.indices.tolist(),
                    c.values.view(np.int64).tolist(),
                    c.labels.view(np.int64).tolist(),
                    c.line_numbers.tolist(),
                    [(repr(k), v) for k, v in c.label_spellings.items()],
                )
            )
    except DataError as err:
        got.append(("error", err.line, err.token, err.reason))
    return got, reader.n_skipped, [(e.line, e.token, e.reason) for e in reader.skipped]


def both_ways(content: bytes, **kw):
    with compiled_only():
        compiled = outcome(io.BytesIO(content), **kw)
    with python_only():
        python = outcome(io.BytesIO(content), **kw)
    return compiled, python


def parse_one(line: bytes, labelled: bool = True):
    """parse_lines on one line: (status, None) for a blank or refused line, else
    (status, (label token, label, the file's indices, values)), as `parse_line` gives them."""
    block = Block(1)
    block.reserve(len(line), len(line))
    status, pos, lineno, n, n_deferred = parse_lines(
        np.frombuffer(line, np.uint8), 0, len(line), 0, 0, 1, labelled, *block.arrays()
    )
    for entry, start, stop in block.deferred[:n_deferred].tolist():
        block.values[entry] = float(line[start:stop])
    if status == PUNT or n == 0:
        return status, None
    assert n == 1 and lineno == 1 and pos == len(line)
    e = block.indptr[1]
    return status, (
        block.label_text[: block.label_ptr[1]].tobytes(),
        block.labels[0],
        block.indices[:e].tolist(),
        block.values[:e].tolist(),
    )


def bits(x: float) -> int:
    return int(np.float64(x).view(np.int64))


# --------------------------------------------------------------------------- generated lines


@st.composite
def number(draw) -> str:
    """A number in one of many spellings; now and then a long one, or not a number."""
    sign = draw(st.sampled_from(["", "", "+", "-"]))
    kind = draw(st.integers(0, 39))
    if kind == 0:
        return draw(
            st.sampled_from(
                [
                    "inf",
                    "nan",
                    "-inf",
                    "Infinity",
                    "1_0",
                    "0x10",
                    "",
                    ".",
                    "e5",
                    "1e",
                    "1e+",
                    "1.2.3",
                    "--1",
                    "1,5",
                    "１",
                    "1e400",
                    "1e-400",
                    "0." + "0" * 25 + "1",
                    "0." + "0" * 100 + "1e120",
                    "0." + "0" * 30 + "1e400",
                    "1" * 41,
                ]
            )
        )
    if kind <= 2:
        return sign + repr(draw(st.floats(allow_nan=False, allow_infinity=False)))
    size = 20 if kind <= 5 else 6  # long significands too (beyond 2^53: Python's)
    whole = draw(st.text("0123456789", max_size=size))
    point = draw(st.sampled_from(["", ".", "."]))
    fraction = draw(st.text("0123456789", min_size=0 if whole else 1, max_size=size)) if point or not whole else ""
    text = whole + point + fraction  # '5', '.5', '5.', '007.50'
    if draw(st.booleans()):
        text += (
            draw(st.sampled_from("eE"))
            + draw(st.sampled_from(["", "+", "-"]))
            + draw(st.text("0123456789", min_size=1, max_size=2))
        )
    return sign + text


@st.composite
def index(draw, previous: int) -> tuple[int, str]:
    kind = draw(st.integers(0, 19))
    if kind == 0:  # out of order, a repeat, or not an index
        value = draw(st.integers(0, previous + 1))
        return value, draw(st.sampled_from([str(value), "-1", "x", "qid", ""]))
    value = previous + draw(st.integers(1, 5)) if kind > 1 else draw(st.integers(previous + 1, MAX_INDEX + 2))
    return value, "0" * draw(st.sampled_from([0, 0, 0, 1, 12])) + str(value)


@st.composite
def line(draw) -> str:
    if draw(st.integers(0, 20)) == 0:
        return draw(
            st.sampled_from(
                ["", "  \t", "# comment", "\ufeff+1 1:1", "+1 qid:3 2:1", "1 1:1 # note", "1\x0b1:1", "\x00\xff"]
            )
        )
    tokens = [draw(number())]
    previous = -1  # index 0 is a feature: the first index may be 0
    for _ in range(draw(st.integers(0, 6))):
        if previous > MAX_INDEX:
            break
        previous, text = draw(index(previous))
        tokens.append(f"{text}:{draw(number())}")
    sep = draw(st.sampled_from([" ", "\t", "  ", " \t "]))
    return draw(st.sampled_from(["", " ", "\t"])) + sep.join(tokens) + draw(st.sampled_from(["", "", " ", "\r"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line())
def test_a_line_the_compiled_parser_takes_is_what_the_strict_parser_gives(text):
    raw = text.encode("utf-8", "surrogateescape") + b"\n"
    status, row = parse_one(raw)
    if status == PUNT:
        return
    try:
        strict = parse_line(raw, 1, "f")
    except DataError as err:
        raise AssertionError(f"the compiled parser took a line the strict one refuses: {err}") from None
    if row is None:
        assert status == DONE and strict is None  # blank
        return
    assert status == FULL
    token, label, indices, values = row
    assert (token, bits(label), indices, [bits(v) for v in values]) == (
        strict[0],
        bits(strict[1]),
        strict[2],
        [bits(v) for v in strict[3]],
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(line(), min_size=1, max_size=12),
    st.sampled_from([b"\n", b"\r\n"]),
    st.booleans(),
    st.sampled_from([1, 2, 3, 4096]),
    st.booleans(),
)
def test_compiled_and_python_readings_agree(lines, newline, final_newline, block_lines, skip):
    content = newline.join(text.encode("utf-8", "surrogateescape") for text in lines)
    if final_newline:
        content += newline
    compiled, python = both_ways(content, block_lines=block_lines, skip=skip)
    assert compiled == python


# --------------------------------------------------------------------------- what the compiled parser takes


@pytest.mark.parametrize(
    "spelling",
    [
        "1",
        "+1",
        "-1",
        "0",
        "-0",
        "+0.0",
        "-0.0",
        "007",
        "1.",
        ".5",
        "-.5",
        "5.000",
        "0.1",
        "0.299999999999999",
        "1e5",
        "1E+05",
        "2.5e-3",
        "123456789012345.6",
        "9007199254740992",
        "1e22",
        "1e-22",
        "4.5e-20",
        "0.000000000000000000001",
        "9007199254740.992e-5",
    ],
)
def test_the_compiled_parser_takes_exact_fast_path_numbers(spelling):
    status, (token, label, indices, values) = parse_one(f"{spelling} 3:{spelling} 0010:1\n".encode())
    assert status == FULL
    assert token == spelling.encode() and bits(label) == bits(float(spelling))
    assert indices == [3, 10] and [bits(v) for v in values] == [bits(float(spelling)), bits(1.0)]


@pytest.mark.parametrize(
    "spelling",
    [
        "9007199254740993",
        "12345678901234567",
        "0.30000000000000004",
        "-2.2250738585072014e-8",
        "1e23",
        "1e-23",
        "0.1e24",
        "1e99",
        "1e-99",
        "0." + "0" * 30 + "1",
        "1" * 40,
    ],
)
def test_values_outside_the_fast_path_are_left_to_float(spelling):
    status, (token, label, indices, values) = parse_one(f"1 3:{spelling} 4:0.5\n".encode())
    assert status == FULL and indices == [3, 4]
    assert [bits(v) for v in values] == [bits(float(spelling)), bits(0.5)]
    assert parse_one(f"{spelling} 1:1\n".encode())[0] == PUNT  # a label is taken on the fast path only


@pytest.mark.parametrize(
    "spelling",
    [
        "1e100",
        "1e-100",
        "1" * 41,
        "0." + "0" * 40 + "1",
        "0." + "0" * 100 + "1e120",
        "1e400",
        "inf",
        "nan",
        "1_0",
        "0x10",
    ],
)
def test_larger_numbers_and_non_decimals_go_to_python(spelling):
    assert parse_one(f"1 1:{spelling}\n".encode())[0] == PUNT
    assert parse_one(f"{spelling} 1:1\n".encode())[0] == PUNT


@pytest.mark.parametrize(
    "line",
    [
        b"# comment\n",
        b"1 1:1 # note\n",
        b"1 qid:2 1:1\n",
        b"\xef\xbb\xbf1 1:1\n",
        b"1 1:1\r \n",
        b"1 0:1 0:2\n",
        b"1 00:1 0:2\n",
        b"1 1:1 0:2\n",
        b"1 2:1 1:1\n",
        b"1 1:1 1:2\n",
        b"1 2147483648:1\n",
        b"1 -1:1\n",
        b"1 1:\n",
        b"1 :1\n",
        b"1 :1 2:1\n",
        b"1 0:1 :1\n",
        b"1 1\n",
        b"1\x0b1:1\n",
        b"1 1:1:1\n",
    ],
)
def test_unusual_and_bad_lines_go_to_python(line):
    assert parse_one(line)[0] == PUNT


@pytest.mark.parametrize(
    "line, indices",
    [
        (b"1 0:1.5 2:3\n", [0, 2]),
        (b"1 00:1.5 2:3\n", [0, 2]),
        (b"1 0000000000000:1.5 2:3\n", [0, 2]),
        (b"1 0:1.5 1:3\n", [0, 1]),
    ],
)
def test_the_compiled_parser_takes_index_0_as_a_feature(line, indices):
    # as svm-train reads it, and as scikit-learn's zero-based dump_svmlight_file writes it
    status, row = parse_one(line)
    assert status == FULL and row == (b"1", 1.0, indices, [1.5, 3.0])
    assert parse_line(line, 1, "f") == row


@pytest.mark.parametrize("line", [b"1:0.5 3:2\n", b" \t0:1\t4:-2e3\n", b"007:1 8:.25\r\n", b"5:1"])
def test_a_line_without_a_label_stays_compiled_where_labels_are_optional(line):
    # the novelty task's lines and predict's: before, every such line went to parse_line, at half the speed
    status, row = parse_one(line, labelled=False)
    token, label, indices, values = parse_line(line, 1, "f", False)
    assert status == FULL and row[0] == token == b"" and np.isnan(row[1]) and np.isnan(label)
    assert row[2:] == (indices, values)
    assert parse_one(line, labelled=True) == (PUNT, None)  # where a label is required, parse_line refuses it


@pytest.mark.parametrize("line", [b"qid:3 1:1\n", b"3:1 2:1\n", b"1: 2:3\n", b"1:1 x\n", b":1 2:1\n"])
def test_unusual_lines_without_a_label_still_go_to_python(line):
    assert parse_one(line, labelled=False)[0] == PUNT


def test_labelled_and_unlabelled_lines_read_the_same_both_ways_where_labels_are_optional():
    content = b"1:1 2:2\n-1 1:0.5\n\n3:1e-3 9:4\nqid:2 1:1\n+1 0:7\n 4:1\n"
    for block_lines in (1, 2, 4096):
        compiled, python = both_ways(content, block_lines=block_lines, labels=False)
        assert compiled == python and all(got[0] != "error" for got in compiled[0])


def test_the_compiled_parser_takes_the_largest_index():
    line = f"1 0:1 {MAX_INDEX}:2\n".encode()
    status, row = parse_one(line)
    assert status == FULL and row == (b"1", 1.0, [0, MAX_INDEX], [1.0, 2.0])
    assert parse_line(line, 1, "f") == row
    block = Block(1)
    block.reserve(len(line), len(line))
    parse_lines(np.frombuffer(line, np.uint8), 0, len(line), 0, 0, 1, True, *block.arrays())
    assert block.indices.dtype == np.int32 and block.indices[1] == MAX_INDEX  # stored as is


def test_crlf_blank_lines_and_a_missing_final_newline_stay_compiled():
    content = b"1 1:1\r\n \t\r\n\n-1 2:0.5\r\r\n+1"
    block = Block(8)
    status, pos, lineno, n, n_deferred = parse_lines(
        np.frombuffer(content, np.uint8), 0, len(content), 0, 0, 8, True, *block.arrays()
    )
    assert (status, pos, lineno, n, n_deferred) == (DONE, len(content), 5, 3, 0)
    assert block.line_numbers[:3].tolist() == [1, 4, 5]
    assert block.label_text[: block.label_ptr[3]].tobytes() == b"1-1+1"


# --------------------------------------------------------------------------- the reader around it


@pytest.mark.parametrize("bad, token, reason", BAD_LINES)
@pytest.mark.parametrize("skip", [False, True])
def test_bad_lines_between_compiled_ones_keep_their_error(bad, token, reason, skip):
    good = b"".join(b"%d 1:0.5 %d:1\n" % (i % 2, i + 2) for i in range(50))
    compiled, python = both_ways(good + bad + b"\n" + good, block_lines=16, skip=skip)
    assert compiled == python
    errors = [compiled[0][-1][1:]] if not skip else compiled[2]
    assert errors[0][0] == 51 and errors[0][1] == token[:40] and reason in errors[0][2]


@pytest.mark.parametrize("skip", [False, True])
def test_index_0_between_compiled_lines_is_read_the_same_both_ways(skip):
    good = b"".join(b"%d 1:0.5 %d:1\n" % (i % 2, i + 2) for i in range(50))
    zero = b"1 0:2.5 3:1\n-1 00:-1\n"
    compiled, python = both_ways(good + zero + good, block_lines=16, skip=skip)
    assert compiled == python and compiled[1] == 0  # nothing skipped
    (chunks, _, _) = compiled
    indices = [i for c in chunks for i in c[1]]
    lines = [n for c in chunks for n in c[4]]
    assert len(lines) == 102 and lines[50:52] == [51, 52]
    assert indices[:2] == [1, 2]  # line 1: '0 1:0.5 2:1'
    assert indices[98:103] == [1, 51, 0, 3, 0]  # lines 50 ('1 1:0.5 51:1'), 51 and 52


class Pieces:
    """A file object whose read1 gives the content in the given pieces."""

    def __init__(self, pieces, stream=False):
        self._pieces, self._stream = list(pieces), stream

    def read1(self, size):
        return self._pieces.pop(0) if self._pieces else b""

    def seekable(self):
        return not self._stream


SPLIT_CONTENT = b"+1 1:0.5 3:1e-3\r\n# comment\r\n-1 2:12345678901234567 10:.5\r\n\r\n2 qid:1 1:-0.25 7:1.\r\n1 1:1\r\n"


@pytest.mark.parametrize("stream", [False, True])
def test_a_line_split_across_two_reads_changes_nothing(stream):
    with compiled_only():
        whole = outcome(Pieces([SPLIT_CONTENT], stream), block_lines=2)
        for cut in range(1, len(SPLIT_CONTENT)):  # inside numbers, inside '\r\n', at line ends
            assert outcome(Pieces([SPLIT_CONTENT[:cut], SPLIT_CONTENT[cut:]], stream), block_lines=2) == whole
        with mock.patch.object(inputs, "READ_SIZE", 3):
            assert outcome(io.BytesIO(SPLIT_CONTENT), block_lines=2) == whole
    assert whole == both_ways(SPLIT_CONTENT, block_lines=2)[1]
    assert len(whole[0]) == 2 and whole[0][1][4] == [5, 6]  # chunks of 2 examples, lines 5 and 6 in the second


@pytest.mark.parametrize("cut", [2, 9, 15])
def test_a_stream_cut_inside_its_last_line_is_refused_on_the_compiled_path(cut):
    content = b"1 1:1\n" * 20 + b"-1 2:0.5 3:1.25"[:cut]
    with compiled_only():
        got, _, _ = outcome(Pieces([content[:50], content[50:]], stream=True))
    assert [chunk[4] for chunk in got[:-1]] == [list(range(1, 21))]  # the 20 lines before it are handed over
    assert got[-1] == (
        "error",
        21,
        content.split()[-1].decode(),
        "input ended in the middle of a line (no newline at the end): its producer may have stopped early",
    )


def test_rows_larger_than_the_arrays_grow_them():
    long_line = b"-12.5 " + b" ".join(b"%d:%d.5" % (i, i) for i in range(1, 3000)) + b"\n"
    content = b"1 1:1\n" + long_line + b"+1.000 5:1\n" * 3
    compiled, python = both_ways(content, block_lines=1)
    assert compiled == python
    assert len(compiled[0]) == 5 and len(compiled[0][1][1]) == 2999


def test_an_iterable_of_lines_is_parsed_as_lines_even_without_a_newline():
    # permuted lines of a file without a final newline: that line is not the last one read
    lines = [b"-1 2:1", b"1 1:1\n", b"1 3:1"]
    with compiled_only():
        (chunk,), _, _ = outcome(lines)
    assert chunk[0] == [0, 1, 2, 3] and chunk[1] == [2, 1, 3] and chunk[4] == [1, 2, 3]


def test_a_small_input_is_not_parsed_by_the_compiled_parser(tmp_path):
    path = tmp_path / "ten.txt"
    path.write_bytes(b"1 1:0.5 2:1\n" * 10)
    with python_only():
        assert len(libsvm.read_all(path)) == 10
    path.write_bytes(b"1 1:0.5 2:1\n" * (libsvm._SMALL_INPUT // 12 + 1))
    with python_only(), pytest.raises(AssertionError, match="compiled parser was called"):
        libsvm.read_all(path)


@pytest.mark.parametrize("block_lines", [4097, 8193, 20_000])
def test_blocks_larger_than_the_first_arrays_are_read_whole(block_lines):
    """A block of more rows than the reader's first arrays (4,096) grows them as it fills: every row
    array grows with the others, and the compiled parser checks each (it does not bounds-check; a
    row array left behind by the others was once written past its end)."""
    rng = np.random.default_rng(3)
    content = b"".join(b"%+d 1:%d 3:%.3f 7:%d\n" % (1 - 2 * (i % 2), i, rng.random(), i % 5 + 1) for i in range(25_000))
    with compiled_only():
        compiled = outcome(io.BytesIO(content), block_lines=block_lines)
    with mock.patch.object(libsvm, "_SMALL_INPUT", 1 << 40), python_only():  # the strict parser throughout
        python = outcome(io.BytesIO(content), block_lines=block_lines)
    assert compiled == python
    chunks = compiled[0]
    assert [len(c[4]) for c in chunks] == [min(block_lines, 25_000 - a) for a in range(0, 25_000, block_lines)]
    assert [n for c in chunks for n in c[4]] == list(range(1, 25_001))
