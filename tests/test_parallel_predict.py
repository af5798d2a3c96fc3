"""`predict --jobs N`: byte ranges at line boundaries, the same output as the serial run, and bad
lines reported with the line number of the whole file."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from budgetcli.base import bounds
from budgetcli.run import predictions
from budgetcli.entry import main
from budgetcli.io.libsvm import LibsvmReader

from .helpers import random_stream


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def lines_of(n, seed):
    X, y = random_stream(n, 4, seed)
    return [
        ("+1" if lab > 0 else "-1") + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
        for row, lab in zip(X, y)
    ]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("pp")
    (d / "train.txt").write_text("".join(lines_of(200, 0)))
    r = run("train", "-a", "projectron", "--eta", 0.2, "--gamma", 0.5, "-q", d / "train.txt", "-o", d / "m.model")
    assert r.exit_code == 0, r.output
    return d / "m.model"


@pytest.fixture
def small_ranges(monkeypatch):
    """Ranges of ~2 kB, so a small test file is split into many ranges (and worth a worker each)."""
    monkeypatch.setattr(predictions, "RANGE_BYTES", 2000)
    monkeypatch.setattr(predictions, "MIN_RANGE_BYTES", 2000)
    monkeypatch.setattr(bounds, "cores", lambda: 2)  # --jobs 2 stays 2 on a one-core machine too


def test_line_ranges_cover_the_file_and_start_at_line_starts(tmp_path):
    cases = {
        "plain": "".join(lines_of(50, 1)),
        "no final newline": "".join(lines_of(50, 2)).rstrip("\n"),
        "one long line": "+1 " + " ".join(f"{i}:1" for i in range(1, 2000)) + "\n-1 1:1\n",
        "crlf and blanks": "\r\n".join(["+1 1:1", "", "# c", "-1 2:1"] * 20),
        "empty": "",
    }
    for name, text in cases.items():
        path = tmp_path / "f.txt"
        path.write_bytes(text.encode())
        data = text.encode()
        for parts in (1, 2, 3, 7, 64, 10_000):
            ranges = predictions.line_ranges(path, parts)
            assert b"".join(data[a:b] for a, b in ranges) == data, (name, parts)
            assert all(a == 0 or data[a - 1 : a] == b"\n" for a, _ in ranges), (name, parts)
            assert len(ranges) <= parts
            if data.count(b"\n") >= 10 and parts <= 7 and name != "one long line":
                assert len(ranges) == parts, (name, parts)  # the split is used, not one range
            lines = [line for a, b in ranges for line in predictions.RangeLines(path, a, b)]
            assert lines == data.splitlines(keepends=True), (name, parts)


def test_reader_numbers_lines_from_first_line(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("+1 1:1\n-1 2:1\n+1 3:x\n")
    reader = LibsvmReader(predictions.RangeLines(path, 7, 21), first_line=41)
    with pytest.raises(ValueError, match=rf"^{path}:42: feature value is not a number"):
        list(reader)


@pytest.mark.parametrize("flags", [[], ["--scores"]])
def test_parallel_output_is_the_serial_output(model, tmp_path, small_ranges, flags):
    # comments, blanks, CRLF, qid and a BOM on line 1 exercise the reader's slow path in every range
    body = lines_of(600, 3)
    for i in range(0, 600, 37):
        body[i] = body[i].replace("\n", "\r\n")
        body.insert(i + 1, "# a comment\n\n")
    body[5] = body[5].replace(" ", " qid:3 ", 1)
    path = tmp_path / "test.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(body).encode())
    assert len(predictions.line_ranges(path, 2 + path.stat().st_size // predictions.RANGE_BYTES)) > 10
    serial = run("predict", *flags, model, path)
    parallel = run("predict", *flags, "--jobs", 2, model, path)
    assert serial.exit_code == parallel.exit_code == 0, parallel.output
    assert parallel.stdout == serial.stdout
    assert len(serial.stdout.splitlines()) == 600


def test_a_file_without_final_newline_predicts_in_parallel_as_serially(model, tmp_path, small_ranges):
    # the last range ends without a newline: a regular file's own ending, not a stream cut mid-line
    path = tmp_path / "test.txt"
    path.write_text("".join(lines_of(300, 5)).rstrip("\n"))
    serial = run("predict", model, path)
    parallel = run("predict", "--jobs", 2, model, path)
    assert serial.exit_code == parallel.exit_code == 0, parallel.output
    assert parallel.stdout == serial.stdout and len(serial.stdout.splitlines()) == 300


def test_first_bad_line_of_the_file_is_reported_with_its_line_number(model, tmp_path, small_ranges):
    body = lines_of(600, 4)
    body[450] = "+1 1:0.5 1:0.7\n"  # a later range fails too, and may finish first
    body[333] = "+1 2:zz\n"
    path = tmp_path / "bad.txt"
    path.write_text("".join(body))
    serial = run("predict", model, path)
    parallel = run("predict", "--jobs", 2, model, path)
    assert serial.exit_code == parallel.exit_code == 1
    assert (
        parallel.stderr == serial.stderr == f"budgetlearn: error: {path}:334: feature value is not a number "
        "(token '2:zz')\n"
    )
    skipped_serial = run("predict", "--skip-bad-lines", model, path)
    skipped_parallel = run("predict", "--skip-bad-lines", "--jobs", 2, model, path)
    assert skipped_parallel.exit_code == 0
    assert skipped_parallel.stdout == skipped_serial.stdout
    assert len(skipped_parallel.stdout.splitlines()) == 598


def test_compressed_files_and_stdin_fall_back_to_serial(model, tmp_path):
    text = "".join(lines_of(100, 5))
    plain = tmp_path / "t.txt"
    plain.write_text(text)
    packed = tmp_path / "t.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert (
        predictions.splittable(str(plain))
        and not predictions.splittable(str(packed))
        and not predictions.splittable("-")
    )
    expected = run("predict", model, plain).stdout
    assert run("predict", "--jobs", 2, model, packed).stdout == expected
    assert run("predict", "--jobs", 2, model, "-", input=text).stdout == expected


def test_jobs_zero_is_a_usage_error(model, tmp_path):
    r = run("predict", "--jobs", 0, model, tmp_path / "nothing.txt")
    assert r.exit_code == 2 and "--jobs" in r.output


def test_a_line_past_the_bound_is_refused_in_parallel_as_serially(model, tmp_path, monkeypatch):
    """The byte ranges (and the search for their line starts) read a line of more than 16 MiB in
    bounded pieces: the same error as the serial run, or with --skip-bad-lines the same predictions
    (a range's reader read such a line whole, and so did the search for where a range starts)."""
    monkeypatch.setattr(bounds, "cores", lambda: 2)
    path = tmp_path / "long.txt"
    with open(path, "w") as f:
        f.write("".join(lines_of(300, 6)) + "+1 1:1" + " " * (17 << 20) + "\n" + "".join(lines_of(300, 7)))
    assert len(predictions.line_ranges(path, 2)) == 2
    serial = run("predict", model, path)
    parallel = run("predict", "--jobs", 2, model, path)
    assert serial.exit_code == parallel.exit_code == 1
    assert (
        parallel.stderr
        == serial.stderr
        == (f"budgetlearn: error: {path}:301: the line is longer than 16,777,216 bytes, the most a line may hold\n")
    )
    skipped_serial = run("predict", "--skip-bad-lines", model, path)
    skipped_parallel = run("predict", "--skip-bad-lines", "--jobs", 2, model, path)
    assert skipped_parallel.exit_code == 0 and skipped_parallel.stdout == skipped_serial.stdout
    assert len(skipped_parallel.stdout.splitlines()) == 600
