"""Property-based fuzzing of the reader with near-valid input: valid lines with one mutation
(a byte inserted, deleted or replaced, a token duplicated or swapped, the line cut short).

Whatever the input, reading raises nothing but DataError; what is accepted round-trips bit for bit
through the writer; a stream (not seekable) differs from a file only in refusing a cut last line.
(Random bytes and fast/strict parser agreement are in test_reader.py.)"""

from __future__ import annotations

import io

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetcli.io.libsvm import DataError, LibsvmReader, read_all, write_libsvm

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def valid_line(draw) -> bytes:
    label = draw(st.sampled_from(["+1", "-1", "1", "0", "2"]) | finite.map(repr))
    indices = sorted(draw(st.sets(st.integers(0, 60), max_size=6)))  # index 0 is a feature
    values = [draw(finite | st.integers(-5, 5).map(float)) for _ in indices]
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    return sep.join([label] + [f"{i}:{v!r}" for i, v in zip(indices, values)]).encode()


@st.composite
def mutated(draw, line: bytes) -> bytes:
    op = draw(st.sampled_from(["insert", "delete", "replace", "dup_token", "swap_tokens", "cut", "none"]))
    pos = draw(st.integers(0, max(len(line) - 1, 0)))
    byte = bytes([draw(st.integers(0, 255) | st.sampled_from(list(b":.-+eE \t#0123456789")))])
    tokens = line.split()
    if op == "insert":
        return line[:pos] + byte + line[pos:]
    if op == "delete":
        return line[:pos] + line[pos + 1 :]
    if op == "replace":
        return line[:pos] + byte + line[pos + 1 :]
    if op == "dup_token" and len(tokens) > 1:
        k = draw(st.integers(1, len(tokens) - 1))
        return b" ".join(tokens[: k + 1] + tokens[k:])
    if op == "swap_tokens" and len(tokens) > 2:
        k = draw(st.integers(1, len(tokens) - 2))
        return b" ".join(tokens[:k] + [tokens[k + 1], tokens[k]] + tokens[k + 2 :])
    if op == "cut":
        return line[:pos]
    return line


@st.composite
def near_valid_file(draw) -> bytes:
    lines = [draw(mutated(draw(valid_line()))) for _ in range(draw(st.integers(1, 6)))]
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    return end.join(lines) + draw(st.sampled_from([end, b""]))


class Pipe(io.RawIOBase):
    """A non-seekable byte stream, as a pipe or a socket is."""

    def __init__(self, content: bytes):
        self._inner = io.BytesIO(content)

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, buffer):
        data = self._inner.read(min(len(buffer), 7))  # small reads, as a slow producer gives
        buffer[: len(data)] = data
        return len(data)


def outcome(source):
    try:
        chunk = read_all(source, block_lines=2)
    except DataError as err:
        return "error", err.line, err.reason
    return "ok", chunk


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid_file())
def test_near_valid_input_raises_only_data_error_and_accepted_input_round_trips(content):
    result = outcome(io.BytesIO(content))
    if result[0] == "error":
        assert result[1] >= 1  # always names a line of the input
        return
    chunk = result[1]
    out = io.StringIO()
    write_libsvm(out, chunk.indptr, chunk.indices, chunk.values, chunk.labels)
    again = read_all(io.BytesIO(out.getvalue().encode()))
    assert again.indptr.tolist() == chunk.indptr.tolist()
    assert again.indices.tolist() == chunk.indices.tolist()
    assert again.values.view(np.int64).tolist() == chunk.values.view(np.int64).tolist()
    assert again.labels.view(np.int64).tolist() == chunk.labels.view(np.int64).tolist()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid_file())
def test_a_stream_refuses_only_a_cut_last_line(content):
    as_file = outcome(io.BytesIO(content))
    as_stream = outcome(io.BufferedReader(Pipe(content)))
    last = content.rsplit(b"\n", 1)[-1]
    cut = bool(last.partition(b"#")[0].strip())  # the stream ended inside a line holding data
    if as_file[0] == "error" or not cut:
        assert as_stream[:1] == as_file[:1] and (as_file[0] == "ok" or as_stream == as_file)
    else:
        assert as_stream[0] == "error"
        assert as_stream[1] == content.count(b"\n") + 1
        assert "input ended in the middle of a line" in as_stream[2]


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_random_bytes_on_a_stream_raise_only_data_error(content):
    reader = LibsvmReader(io.BufferedReader(Pipe(content)), block_lines=3, skip_bad_lines=True)
    n = sum(len(c) for c in reader)  # skipping: never raises for a bad line
    assert n == reader.n_examples
