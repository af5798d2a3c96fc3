"""Tests for budgetcli.io.libsvm: the streaming LIBSVM reader and writer."""

import bz2
import gzip
import io
import lzma
import os
import pickle
import threading
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetcli.io.inputs import MAX_LINE_BYTES, bounded_lines, open_binary
from budgetcli.io.libsvm import MAX_INDEX, Chunk, DataError, LibsvmReader, read_all, write_libsvm

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def write_bytes(tmp_path, content: bytes, name="data.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def read_bytes(content: bytes, **kw) -> Chunk:
    return read_all(io.BytesIO(content), **kw)


def rows(chunk):
    """The examples of a chunk as [(label, {file index: value})]."""
    out = []
    for i in range(len(chunk)):
        idx, val = chunk.row(i)
        out.append((chunk.labels[i], dict(zip(idx.tolist(), val.tolist()))))
    return out


# --------------------------------------------------------------------------- accepted input


def test_basic_file_layout_and_dtypes(tmp_path):
    path = write_bytes(tmp_path, b"+1 1:0.5 3:2\n-1 2:1e-3\n")
    chunk = read_all(path)
    assert len(chunk) == 2
    assert chunk.indptr.dtype == np.int64 and chunk.indptr.tolist() == [0, 2, 3]
    assert chunk.indices.dtype == np.int32 and chunk.indices.tolist() == [1, 3, 2]
    assert chunk.values.dtype == np.float64 and chunk.values.tolist() == [0.5, 2.0, 1e-3]
    assert chunk.labels.tolist() == [1.0, -1.0]
    assert chunk.line_numbers.dtype == np.int64 and chunk.line_numbers.tolist() == [1, 2]
    assert chunk.n_features == 4  # largest index + 1
    assert chunk.feature_count == 3  # largest index (no index 0)
    # feature index j in column j - 1
    np.testing.assert_array_equal(chunk.to_dense(3), [[0.5, 0, 2], [0, 1e-3, 0]])
    np.testing.assert_array_equal(chunk.to_dense(4), [[0.5, 0, 2, 0], [0, 1e-3, 0, 0]])


def test_blank_whitespace_and_comment_lines_are_skipped_but_counted():
    content = (
        b"\n"  # 1
        b"   \t  \n"  # 2
        b"# a comment\n"  # 3
        b"   # indented comment\n"  # 4
        b"1 2:3 # trailing comment with 1:2 and caf\xc3\xa9\n"  # 5
        b"\n"  # 6
        b"-1 1:1#no space before the comment\n"  # 7
    )
    chunk = read_bytes(content)
    assert chunk.line_numbers.tolist() == [5, 7]
    assert rows(chunk) == [(1.0, {2: 3.0}), (-1.0, {1: 1.0})]


def test_qid_is_ignored_after_label_and_elsewhere():
    chunk = read_bytes(b"2 qid:7 1:1 4:2\n1 qid:7 3:5 qid:8 5:1\n")
    assert rows(chunk) == [(2.0, {1: 1.0, 4: 2.0}), (1.0, {3: 5.0, 5: 1.0})]


def test_tabs_runs_of_spaces_crlf_and_bom():
    content = b"\xef\xbb\xbf1\t2:1  \t 5:2   \r\n\t-1   1:4\r\n"
    chunk = read_bytes(content)
    assert rows(chunk) == [(1.0, {2: 1.0, 5: 2.0}), (-1.0, {1: 4.0})]
    assert chunk.label_spellings[1.0] == "1"


def test_label_alone_is_an_all_zero_example():
    chunk = read_bytes(b"1\n-1 2:1\n0\n")
    assert chunk.indptr.tolist() == [0, 0, 1, 1]
    np.testing.assert_array_equal(chunk.to_dense(2), [[0, 0], [0, 1], [0, 0]])
    assert chunk.n_features == 3 and chunk.feature_count == 2


def test_no_features_at_all_gives_n_features_zero():
    chunk = read_bytes(b"1\n-1\n")
    assert len(chunk) == 2 and chunk.n_features == 0 and chunk.feature_count == 0


@pytest.mark.parametrize(
    "spelling, value",
    [
        ("+1", 1.0),
        ("-1", -1.0),
        ("1", 1.0),
        ("0", 0.0),
        ("2", 2.0),
        ("+1.0", 1.0),
        ("1e0", 1.0),
        ("-2.5E-1", -0.25),
        (".5", 0.5),
    ],
)
def test_label_spellings(spelling, value):
    chunk = read_bytes(f"{spelling} 1:1\n".encode())
    assert chunk.labels.tolist() == [value]
    assert chunk.label_spellings == {value: spelling}


def test_label_spellings_keep_the_first_spelling_per_chunk():
    chunks = list(LibsvmReader(io.BytesIO(b"+1\n1\n-1\n1.0\n-1.0\n"), block_lines=3))
    assert chunks[0].label_spellings == {1.0: "+1", -1.0: "-1"}
    assert chunks[1].label_spellings == {1.0: "1.0", -1.0: "-1.0"}


def test_very_long_line():
    n = 1_000_000
    idx = np.arange(1, 2 * n, 2)
    line = "1 " + " ".join(f"{i}:0.{i % 97 + 1}" for i in idx.tolist()) + "\n"
    assert len(line) > 10_000_000
    chunk = read_bytes(line.encode())
    assert len(chunk) == 1 and len(chunk.indices) == n
    np.testing.assert_array_equal(chunk.indices, idx)
    assert chunk.values[-1] == float(f"0.{idx[-1] % 97 + 1}")


def test_largest_index_is_accepted():
    chunk = read_bytes(f"1 {MAX_INDEX}:1\n".encode())
    assert chunk.indices.dtype == np.int32 and chunk.indices.tolist() == [MAX_INDEX]
    assert chunk.n_features == MAX_INDEX + 1 and chunk.feature_count == MAX_INDEX


@pytest.mark.parametrize("spelling", ["0", "00", "0000000000000"])
def test_index_0_is_read_as_a_feature(spelling):
    # as svm-train reads it, and as scikit-learn's zero-based dump_svmlight_file writes it
    chunk = read_bytes(f"1 {spelling}:1.5 2:3\n-1 1:2\n-1 0:4 1:5\n".encode())
    assert chunk.indices.tolist() == [0, 2, 1, 0, 1]
    assert rows(chunk) == [(1.0, {0: 1.5, 2: 3.0}), (-1.0, {1: 2.0}), (-1.0, {0: 4.0, 1: 5.0})]
    assert chunk.n_features == 3  # largest index + 1
    assert chunk.feature_count == 3  # largest index, + 1 for index 0
    with pytest.raises(ValueError, match="index 0"):
        chunk.to_dense(3)  # index 0 has no column (column j is index j + 1)


def test_feature_count_adds_one_for_index_0_only_when_it_occurs():
    assert read_bytes(b"1 0:1\n").feature_count == 1
    assert read_bytes(b"1 1:1\n").feature_count == 1
    assert read_bytes(b"1 0:1 5:1\n").feature_count == 6
    assert read_bytes(b"1 5:1\n-1 0:1\n").feature_count == 6
    assert read_bytes(b"1 5:1\n").feature_count == 5


def test_empty_file_gives_no_chunks(tmp_path):
    path = write_bytes(tmp_path, b"")
    with LibsvmReader(path) as reader:
        assert list(reader) == []
        assert reader.n_examples == 0
    only_comments = write_bytes(tmp_path, b"# nothing\n\n", "comments.txt")
    assert list(LibsvmReader(only_comments)) == []
    assert len(read_all(path)) == 0 and read_all(path).indptr.tolist() == [0]


def test_chunks_follow_block_lines_and_count_examples_not_lines():
    content = b"".join(b"# c\n\n%d %d:1\n" % (i, i + 1) for i in range(10))
    reader = LibsvmReader(io.BytesIO(content), block_lines=4)
    chunks = list(reader)
    assert [len(c) for c in chunks] == [4, 4, 2]
    assert reader.n_examples == 10
    assert np.concatenate([c.labels for c in chunks]).tolist() == list(range(10))
    assert chunks[1].line_numbers.tolist() == [15, 18, 21, 24]
    assert chunks[2].indices.tolist() == [9, 10]


def test_reader_streams_chunks_before_reading_the_rest():
    content = b"1 1:1\n" * 5 + b"1 1:x\n"
    it = iter(LibsvmReader(io.BytesIO(content), block_lines=5))
    assert len(next(it)) == 5  # the bad line 6 has not been reached yet
    with pytest.raises(DataError) as info:
        next(it)
    assert info.value.line == 6


def test_reader_iterates_only_once():
    reader = LibsvmReader(io.BytesIO(b"1 1:1\n"))
    assert len(list(reader)) == 1
    with pytest.raises(RuntimeError):
        list(reader)


def test_block_lines_must_be_positive():
    with pytest.raises(ValueError):
        LibsvmReader(io.BytesIO(b""), block_lines=0)


def test_row_returns_views_and_to_dense_checks_width():
    chunk = read_bytes(b"1 2:1 4:2\n")
    idx, val = chunk.row(0)
    assert idx.base is not None and val.base is not None
    assert idx.tolist() == [2, 4] and val.tolist() == [1.0, 2.0]
    assert chunk.n_features == 5
    np.testing.assert_array_equal(chunk.to_dense(4), [[0, 1, 0, 2]])  # index j in column j - 1
    with pytest.raises(ValueError, match="too small"):
        chunk.to_dense(3)


# --------------------------------------------------------------------------- sources


def test_file_object_source_uses_its_name_and_stays_open(tmp_path):
    path = write_bytes(tmp_path, b"1 1:1\n")
    with open(path, "rb") as f:
        reader = LibsvmReader(f)
        assert reader.source_name == str(path)
        assert sum(len(c) for c in reader) == 1
        reader.close()
        assert not f.closed  # the caller's file is not the reader's to close
    assert LibsvmReader(io.BytesIO(b"")).source_name == "<stream>"


def test_pathlike_and_str_sources(tmp_path):
    path = write_bytes(tmp_path, b"1 1:1\n")
    assert read_all(path).labels.tolist() == [1.0]
    assert read_all(str(path)).labels.tolist() == [1.0]
    reader = LibsvmReader(path)
    assert reader.source_name == str(path)
    list(reader)
    assert reader._file.closed  # files the reader opened are closed after iterating


def test_missing_file_raises_data_error(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(DataError) as info:
        open_binary(missing)
    err = info.value
    assert (err.source, err.line, err.token) == (str(missing), 0, None)
    assert err.reason.startswith("cannot open: ") and "No such file" in err.reason
    with pytest.raises(DataError):
        LibsvmReader(str(tmp_path / "nope.gz"))


def test_stdin_via_subprocess():
    code = (
        "from budgetcli.io.libsvm import LibsvmReader\n"
        "r = LibsvmReader('-')\n"
        "chunks = list(r)\n"
        "print(r.source_name, r.n_examples, chunks[0].labels.tolist())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=b"1 1:1\n\n-1 2:2\n",
        capture_output=True,
        cwd=PROJECT_ROOT,
        check=True,
    )
    assert proc.stdout.decode().split() == ["<stdin>", "2", "[1.0,", "-1.0]"]


def test_stdin_error_names_stdin():
    code = "from budgetcli.io.libsvm import read_all\nread_all('-')\n"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=b"1 1:1\n1 -2:1\n",
        capture_output=True,
        cwd=PROJECT_ROOT,
    )
    assert proc.returncode != 0
    assert "<stdin>:2: feature index must be a whole number" in proc.stderr.decode()


COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("ext", sorted(COMPRESSORS))
def test_compressed_round_trip(tmp_path, ext):
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(50, 7)) * (rng.random((50, 7)) < 0.4)
    labels = rng.choice([-1.0, 1.0], size=50)
    indptr = np.concatenate(([0], np.cumsum((dense != 0).sum(axis=1))))
    indices = np.nonzero(dense)[1] + 1  # column j is feature index j + 1, as to_dense reads it back
    text = io.StringIO()
    write_libsvm(text, indptr, indices, dense[dense != 0], labels)
    path = write_bytes(tmp_path, COMPRESSORS[ext](text.getvalue().encode()), f"d.{ext}")
    chunk = read_all(path, block_lines=7)
    np.testing.assert_array_equal(chunk.to_dense(7), dense)
    np.testing.assert_array_equal(chunk.labels, labels)


@pytest.mark.parametrize("ext", sorted(COMPRESSORS))
@pytest.mark.parametrize("skip", [False, True])
def test_truncated_compressed_file(tmp_path, ext, skip):
    text = b"".join(b"%d 1:%d 2:0.5\n" % (i % 2, i) for i in range(5000))
    data = COMPRESSORS[ext](text)
    path = write_bytes(tmp_path, data[: len(data) // 2], f"cut.{ext}")
    reader = LibsvmReader(path, block_lines=100, skip_bad_lines=skip)
    seen = 0
    with pytest.raises(DataError) as info:
        for chunk in reader:
            seen = int(chunk.line_numbers[-1])
    err = info.value
    assert err.source == str(path)
    assert "truncated or corrupt compressed data" in err.reason
    assert 0 <= seen <= err.line < 5000
    assert str(err).startswith(f"{path}:{err.line}: " if err.line else f"{path}: ")


def test_not_actually_gzip(tmp_path):
    path = write_bytes(tmp_path, b"1 1:1\n", "plain.gz")
    with pytest.raises(DataError) as info:
        read_all(path)
    assert info.value.line == 0 and "corrupt compressed" in info.value.reason


# --------------------------------------------------------------------------- what is handed over, and when


def _lines(n, start=0):
    return b"".join(b"%d 1:%d\n" % (1 if i % 2 else -1, i + 1) for i in range(start, start + n))


@pytest.mark.parametrize("bad", [b"+1 1:x\n", b"+1 1:1"])  # a malformed line; a stream cut inside its last line
def test_the_lines_before_a_bad_one_are_handed_over_before_the_error(bad):
    """1,000 good lines and a bad line 1001 in one block: the 1,000 come as a chunk, then the error
    (they were dropped with the block, so `--checkpoint-every 300` wrote no checkpoint)."""
    reader = LibsvmReader(io.BufferedReader(io.BytesIO(_lines(1000) + bad)), block_lines=4096)
    reader._needs_final_newline = True  # as a pipe: a last line without newline was cut
    it = iter(reader)
    first = next(it)
    assert first.line_numbers.tolist() == list(range(1, 1001))
    with pytest.raises(DataError) as info:
        next(it)
    assert info.value.line == 1001


def _pipe_reader(**kw):
    r, w = os.pipe()
    return LibsvmReader(os.fdopen(r, "rb"), block_lines=100, **kw), w


def _next_within(it, seconds):
    """next(it) if it comes within `seconds`, else None (it is still waiting for input)."""
    got = []
    thread = threading.Thread(target=lambda: got.append(next(it)), daemon=True)
    thread.start()
    thread.join(seconds)
    return got[0] if got else None


def test_a_stream_that_pauses_hands_over_the_lines_it_has():
    """A pipe that has sent 30 lines and then nothing: the 30 come as a chunk at once, not when 100
    are there; then the next lines as they come.  A new model's first block (first_block_whole) still
    waits for its 100 lines, or the end."""
    reader, w = _pipe_reader()
    it = iter(reader)
    os.write(w, _lines(30))
    chunk = _next_within(it, 30)
    assert chunk is not None and chunk.line_numbers.tolist() == list(range(1, 31))
    os.write(w, _lines(5, 30))
    assert _next_within(it, 30).line_numbers.tolist() == list(range(31, 36))
    os.close(w)
    assert next(it, None) is None

    reader, w = _pipe_reader(first_block_whole=True)
    it = iter(reader)
    os.write(w, _lines(30))
    got = []
    waiting = threading.Thread(target=lambda: got.append(next(it)), daemon=True)
    waiting.start()
    waiting.join(1.0)
    assert not got  # it waits for the block
    os.write(w, _lines(80, 30))  # 110 lines: the first block of 100, then the 10 it has
    os.close(w)
    waiting.join(30)
    assert [len(got[0]), len(next(it))] == [100, 10]


def test_a_file_is_never_polled(tmp_path):
    reader = LibsvmReader(write_bytes(tmp_path, _lines(10)))
    assert reader._poll is None
    assert LibsvmReader(io.BytesIO(_lines(3)))._poll is None


def test_a_line_past_the_bound_is_an_error_naming_it_read_in_bounded_memory():
    """A source that never sends a newline grew the reader's memory until the machine ran out: past
    max_line_bytes the line is refused (after the lines before it), or skipped to its newline."""
    long = b"+1 1:1".ljust(401)  # one byte past the bound
    content = _lines(3) + long + b"\n" + _lines(2, 3)
    reader = LibsvmReader(io.BytesIO(content), max_line_bytes=400)
    it = iter(reader)
    assert len(next(it)) == 3
    with pytest.raises(DataError) as info:
        next(it)
    assert (info.value.line, info.value.reason) == (
        4,
        "the line is longer than 400 bytes, the most a line may hold",
    )
    assert str(info.value).startswith("<stream>:4: the line is longer than 400 bytes")
    for size in (1, 7, 400, 1 << 20):  # however the reads cut it
        skipping = LibsvmReader(io.BufferedReader(io.BytesIO(content), 8), max_line_bytes=400, skip_bad_lines=True)
        skipping._file.read1 = lambda n, read=skipping._file.read: read(min(n, size))
        chunk = read_all_of(skipping)
        assert chunk.line_numbers.tolist() == [1, 2, 3, 5, 6] and skipping.n_skipped == 1
    assert len(read_bytes(_lines(3) + long[:400] + b"\r\n", max_line_bytes=401)) == 4  # at the bound: a line


def read_all_of(reader):
    from budgetcli.io.libsvm import concatenate

    return concatenate(list(reader))


def test_the_views_of_a_file_bound_their_lines_too(tmp_path):
    """bounded_lines (predict --jobs' byte ranges, tune's permuted lines) never holds more than the
    bound + 1 bytes of a line, and counts the bytes of a cut one, so that the next line is found."""
    path = write_bytes(tmp_path, b"1 1:1\n" + b"9" * 50 + b"\n-1 2:1\n" + b"8" * 30)
    with open(path, "rb") as f:
        got = list(bounded_lines(f, limit=10))
    assert got == [(b"1 1:1\n", 6), (b"9" * 11, 51), (b"-1 2:1\n", 7), (b"8" * 11, 30)]
    assert MAX_LINE_BYTES == 16 << 20


# --------------------------------------------------------------------------- errors

BAD_LINES = [
    # (line, offending token, words expected in the reason)
    (b"abc 1:2", "abc", "label is not a number"),
    (b"1 3:abc", "3:abc", "feature value is not a number"),
    (b"1 3:", "3:", "missing feature value"),
    (b"1 :3", ":3", "missing feature index"),
    (b"1 3", "3", "expected index:value"),
    (b"1 -2:1", "-2:1", "whole number"),
    (b"1 1.5:2", "1.5:2", "whole number"),
    (b"1 +3:2", "+3:2", "whole number"),
    (b"1 0:1 0:2", "0:2", "duplicate feature index 0"),
    (b"1 1:1 0:2", "0:2", "strictly increasing (0 after 1)"),
    (b"1 5:1 3:1", "3:1", "strictly increasing (3 after 5)"),
    (b"1 3:1 3:2", "3:2", "duplicate feature index 3"),
    (b"nan 1:1", "nan", "label is not finite"),
    (b"inf 1:1", "inf", "label is not finite"),
    (b"-inf 1:1", "-inf", "label is not finite"),
    (b"1e400 1:1", "1e400", "label is not finite"),
    (b"1 1:nan", "1:nan", "feature value is not finite"),
    (b"1 1:inf", "1:inf", "feature value is not finite"),
    (b"1 1:-inf", "1:-inf", "feature value is not finite"),
    (b"1 1:1e400", "1:1e400", "feature value is not finite"),
    (b"1 1:-1e400", "1:-1e400", "feature value is not finite"),
    (b"1 2147483648:1", "2147483648:1", "exceeds 2147483647"),
    (b"1 99999999999999999999999:1", "99999999999999999999999:1", "exceeds"),
    (b"1 " + b"9" * 5000 + b":1", "9" * 40, "exceeds"),
    (b"1 1:1_0", "1:1_0", "not a number"),
    (b"1.2.3 1:1", "1.2.3", "label is not a number"),
    (b"1 1:--1", "1:--1", "not a number"),
    (b"1 1:2:3", "1:2:3", "not a number"),
    (b"1 qid:x 1:1", "qid:x", "qid"),
    (b"\x00\xff\xfe 1:1", "\x00\\xff\\xfe", "not valid text"),
    (b"1 1:1\x00", "1:1\x00", "not valid text"),
    (b"1 1:\xef\xbc\x91", "1:\uff11", "not valid text"),
    (b"1\x0c1:1", "1\x0c1:1", "not valid text"),
    (b"1 1:1 # caf\xe9", "caf\\xe9", "invalid UTF-8"),
]


@pytest.mark.parametrize("line, token, reason", BAD_LINES)
def test_bad_line_raises_with_line_token_and_reason(tmp_path, line, token, reason):
    path = write_bytes(tmp_path, b"# header\n\n1 1:1\n" + line + b"\n-1 2:1\n")
    with pytest.raises(DataError) as info:
        read_all(path)
    err = info.value
    assert err.source == str(path)
    assert err.line == 4
    assert err.token == token[:40]
    assert reason in err.reason
    assert str(err) == f"{path}:4: {err.reason} (token {err.token!r})"


@pytest.mark.parametrize("line, token, reason", BAD_LINES)
def test_bad_line_is_skipped_with_skip_bad_lines(line, token, reason):
    reader = LibsvmReader(io.BytesIO(b"1 1:1\n" + line + b"\n-1 2:1\n"), skip_bad_lines=True)
    chunk = next(iter(reader))
    assert rows(chunk) == [(1.0, {1: 1.0}), (-1.0, {2: 1.0})]
    assert chunk.line_numbers.tolist() == [1, 3]
    assert reader.n_skipped == 1
    assert [(e.line, e.token) for e in reader.skipped] == [(2, token[:40])]


def test_bom_only_allowed_at_start_of_file():
    with pytest.raises(DataError) as info:
        read_bytes(b"1 1:1\n\xef\xbb\xbf1 1:1\n")
    assert info.value.line == 2 and "not valid text" in info.value.reason


def test_first_bad_line_in_file_order_is_reported():
    # Line 2 is caught by the per-block checks, line 3 while reading it:
    # the error must still be about line 2.
    with pytest.raises(DataError) as info:
        read_bytes(b"1 1:1\n1 5:1 3:1\nabc\n")
    assert info.value.line == 2


def test_skip_bad_lines_keeps_first_ten_in_order_and_counts_all():
    lines = []
    for i in range(30):
        lines.append(b"1 1:1" if i % 2 else (b"1 2:1 1:1" if i % 4 else b"x 1:1"))
    reader = LibsvmReader(io.BytesIO(b"\n".join(lines)), block_lines=4, skip_bad_lines=True)
    chunks = list(reader)
    assert reader.n_skipped == 15
    assert reader.n_examples == 15 == sum(len(c) for c in chunks)
    assert all(len(c) for c in chunks)
    assert [e.line for e in reader.skipped] == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert {e.token for e in reader.skipped} == {"x", "1:1"}


def test_skipped_block_checked_rows_are_dropped_from_spellings():
    reader = LibsvmReader(io.BytesIO(b"+1 2:1 1:1\n1 1:1\n"), skip_bad_lines=True)
    (chunk,) = list(reader)
    assert chunk.label_spellings == {1.0: "1"}
    assert chunk.indptr.tolist() == [0, 1]


def test_data_error_format_and_pickle():
    err = DataError("f.txt", 3, "x" * 100, "bad thing")
    assert err.token == "x" * 40
    assert str(err) == f"f.txt:3: bad thing (token {'x' * 40!r})"
    assert str(DataError("f.txt", 0, None, "cannot open: gone")) == "f.txt: cannot open: gone"
    assert isinstance(err, ValueError)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.source, copy.line, copy.token, copy.reason, str(copy)) == (
        err.source,
        err.line,
        err.token,
        err.reason,
        str(err),
    )


# --------------------------------------------------------------------------- writer


def test_writer_format_and_label_strings():
    out = io.StringIO()
    write_libsvm(out, [0, 2, 2], [1, 5], [0.1, -2.0], [1.0, -1.0])
    assert out.getvalue() == "1 1:0.1 5:-2.0\n-1\n"
    out = io.StringIO()
    write_libsvm(out, [0, 2, 2], [0, 4], [0.1, -2.0], [1.0, -1.0])  # the indices as given, 0 too
    assert out.getvalue() == "1 0:0.1 4:-2.0\n-1\n"
    out = io.StringIO()
    write_libsvm(out, [0, 1, 1], [3], [3.0], [1.0, -1.0], label_strings=["+1", "neg"])
    assert out.getvalue() == "+1 3:3.0\nneg\n"


def test_writer_rejects_bad_input():
    with pytest.raises(ValueError):
        write_libsvm(io.StringIO(), [0, 1], [0], [np.nan], [1.0])
    with pytest.raises(ValueError):
        write_libsvm(io.StringIO(), [0, 1], [0], [1.0], [1.0], label_strings=["a", "b"])


# --------------------------------------------------------------------------- properties

finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def csr_data(draw):
    n = draw(st.integers(0, 12))
    index_pool = st.one_of(st.integers(0, 40), st.integers(0, MAX_INDEX))
    row_indices = [sorted(draw(st.sets(index_pool, max_size=6))) for _ in range(n)]
    indptr = np.cumsum([0] + [len(r) for r in row_indices]).astype(np.int64)
    indices = np.array([i for r in row_indices for i in r], dtype=np.int64)
    values = np.array(draw(st.lists(finite, min_size=len(indices), max_size=len(indices))))
    labels = np.array(draw(st.lists(finite, min_size=n, max_size=n)))
    return indptr, indices, values, labels


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(csr_data())
def test_write_then_read_is_bit_identical(data):
    indptr, indices, values, labels = data
    out = io.StringIO()
    write_libsvm(out, indptr, indices, values, labels)
    for block_lines in (1, 3, 4096):
        chunk = read_bytes(out.getvalue().encode(), block_lines=block_lines)
        assert chunk.indptr.tolist() == indptr.tolist()
        assert chunk.indices.tolist() == indices.tolist()
        # Bit-identical, so -0.0 and 0.0 must differ too.
        assert chunk.values.view(np.int64).tolist() == values.view(np.int64).tolist()
        assert chunk.labels.view(np.int64).tolist() == labels.view(np.int64).tolist()
        assert chunk.line_numbers.tolist() == list(range(1, len(labels) + 1))


def outcome(content: bytes):
    """What reading content gives: the rows, or the (line, token, reason) of the error."""
    try:
        chunk = read_bytes(content, block_lines=2)
    except DataError as err:
        return ("error", err.line, err.token, err.reason)
    return ("ok", rows(chunk), chunk.line_numbers.tolist())


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_data_error(content):
    result = outcome(content)
    assert result[0] in ("ok", "error")
    skipping = LibsvmReader(io.BytesIO(content), skip_bad_lines=True)
    n_read = sum(len(c) for c in skipping)
    assert n_read == skipping.n_examples and skipping.n_skipped >= (result[0] == "error")


# Lines built from the characters that matter, so that both valid and subtly
# invalid lines come up often.
line_text = st.text(alphabet="0123456789+-.eE: \tqidnaf_#", max_size=30)


@settings(max_examples=400)
@given(st.lists(line_text, min_size=1, max_size=5))
def test_fast_and_strict_parsing_agree(lines):
    # A trailing comment sends every line through the strict parser; the
    # result must be the same as for the bare lines (mostly the fast path).
    bare = "\n".join(lines).encode()
    commented = "\n".join(line + " #" for line in lines).encode()
    assert outcome(bare) == outcome(commented)
