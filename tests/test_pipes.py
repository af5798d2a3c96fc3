"""Pipes and signals: a producer that dies mid-stream, `predict | head -1`, atomic -o outputs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.entry import main

from .test_cli import write_stream
from .test_crash_safety import budgetlearn

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CLI = f'"{sys.executable}" -m budgetcli'


@pytest.fixture
def trained(tmp_path):
    data = tmp_path / "train.txt"
    write_stream(data, n=300)
    model = tmp_path / "m.model"
    assert CliRunner().invoke(main, ["train", "-q", "-a", "perceptron", str(data), "-o", str(model)]).exit_code == 0
    return data, model


def shell(cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, **kw
    )


PRODUCER = r"""
import os, sys, time
out = sys.stdout.buffer
lines = open(sys.argv[1], "rb").read().splitlines(keepends=True)
for line in lines[:5000]:
    out.write(line)
out.write(lines[5000][: len(lines[5000]) // 2])  # half of line 5001, then die without a word
out.flush()
time.sleep(1.0)
os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("command", ["train -a perceptron - -o {out}", "predict {model} - -o {out}"])
def test_a_producer_killed_mid_line_is_an_error_naming_the_line(tmp_path, trained, command):
    data, model = trained
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 20)
    producer = tmp_path / "producer.py"
    producer.write_text(PRODUCER)
    out = tmp_path / "out"
    out.write_text("old content\n")
    p = shell(f'"{sys.executable}" "{producer}" "{big}" | {CLI} {command.format(out=out, model=model)}')
    assert p.returncode == 1
    assert p.stderr.startswith("budgetlearn: error: <stdin>:5001: input ended in the middle of a line")
    assert p.stderr.count("\n") == 1
    assert out.read_text() == "old content\n"  # neither a model nor predictions replaced it


def test_a_producer_killed_between_lines_gives_what_it_wrote(tmp_path, trained):
    """A stream cut exactly at a line end cannot be told from a complete one: the lines are used."""
    data, model = trained
    p = shell(f'(head -n 120 "{data}"; kill -9 $BASHPID) | {CLI} train -a perceptron --json -q - -o "{tmp_path}/m2"')
    assert p.returncode == 137  # pipefail reports the producer's death
    assert '"examples": 120' in p.stdout


def test_predict_into_head_1_exits_0_without_a_traceback(tmp_path, trained):
    data, model = trained
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 200)
    p = shell(f'{CLI} predict "{model}" "{big}" | head -1')
    assert p.returncode == 0
    assert p.stdout in ("-1\n", "+1\n")
    assert p.stderr == ""


def test_eval_into_head_1_exits_0(tmp_path, trained):
    data, model = trained
    p = shell(f'{CLI} eval --json "{model}" "{data}" | head -c 10')
    assert p.returncode == 0 and p.stdout == '{"examples'


def test_predictions_file_is_written_whole_or_not_at_all(tmp_path, trained):
    data, model = trained
    out = tmp_path / "pred.txt"
    r = CliRunner().invoke(main, ["predict", str(model), str(data), "-o", str(out)])
    assert r.exit_code == 0
    full = out.read_text()
    assert full.count("\n") == 300
    bad = tmp_path / "bad.txt"
    bad.write_text(data.read_text() * 20 + "+1 1:x\n")  # fails after 1 block of predictions was written
    r = CliRunner().invoke(main, ["predict", str(model), str(bad), "-o", str(out)])
    assert r.exit_code == 1 and f"{bad}:6001:" in r.stderr
    assert out.read_text() == full
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_predict_into_a_missing_directory_is_a_one_line_error(tmp_path, trained):
    data, model = trained
    r = CliRunner().invoke(main, ["predict", str(model), str(data), "-o", str(tmp_path / "no" / "pred.txt")])
    assert r.exit_code == 1
    assert r.stderr.startswith(f"budgetlearn: error: {tmp_path / 'no' / 'pred.txt'}: cannot write the predictions")
    assert r.stderr.count("\n") == 1


def test_ctrl_c_during_predict_leaves_the_old_predictions(tmp_path, trained):
    data, model = trained
    out = tmp_path / "pred.txt"
    out.write_text("old\n")
    p = budgetlearn("predict", model, "-", "-o", out, stdin=subprocess.PIPE)  # SIGINT as from a terminal
    p.stdin.write((data.read_text() * 20).encode())  # several blocks predicted; the producer then stalls
    p.stdin.flush()
    time.sleep(3.0)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert err.decode() == "budgetlearn: error: interrupted; no predictions file written\n"
    assert out.read_text() == "old\n"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".pred.txt")] == []


def test_generate_output_is_atomic_too(tmp_path):
    out = tmp_path / "g.txt"
    r = CliRunner().invoke(main, ["generate", "projectron-gaussians", "-n", "50", "-o", str(out)])
    assert r.exit_code == 0 and out.read_text().count("\n") == 50
    assert [n for n in os.listdir(tmp_path) if n != "g.txt"] == []


def test_a_stream_named_by_a_path_is_read_once(tmp_path, trained):
    """A FIFO (as /dev/stdin on a pipe) is a stream as `-` is: `--epochs 2` keeps it in memory (its
    second pass read nothing: 300 examples learnt for 600, silently); tune, which reads DATA and --test
    once per run, and a sharded run, which reads a shard more than once, refuse it in one line."""
    data, model = trained
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    p = budgetlearn("train", "-a", "perceptron", "--epochs", "2", "--json", "-q", fifo, "-o", tmp_path / "m2")
    with open(fifo, "wb") as w:
        w.write(data.read_bytes())
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and '"examples": 600' in out.decode(), err
    for args, message in (
        (
            ["tune", "-a", "perceptron", str(fifo)],
            f"tune reads DATA once per run: give a regular file, not {fifo} (a FIFO)",
        ),
        (
            ["tune", "-a", "perceptron", str(data), "--test", "-"],
            "tune reads --test once per run: give a regular file, not - (standard input)",
        ),
        (
            ["train", "-a", "perceptron", str(fifo), str(data), "-o", str(tmp_path / "s.model")],
            f"{fifo}: a shard is read more than once, and a FIFO can be read once: give a file",
        ),
    ):
        r = CliRunner().invoke(main, args)  # never opens the FIFO: no writer needed
        assert r.exit_code == 2 and r.stderr.startswith(f"budgetlearn: error: {message}"), r.stderr
        assert r.stderr.count("\n") == 1


def test_the_default_model_path_is_never_beside_a_stream_or_in_a_system_directory(tmp_path, trained, monkeypatch):
    """`train /dev/stdin < FILE` wrote /dev/stdin.model (a regular file on stdin is no stream, so only
    '-' needed -o); a FIFO's DATA.model likewise.  Now -o is required, in one line, before anything is
    read.  The system directory is simulated under tmp_path: no test writes in the real /dev."""
    from budgetcli.cli import training

    data, model = trained
    fake = tmp_path / "dev"
    fake.mkdir()
    (fake / "stdin").symlink_to(data)
    monkeypatch.setattr(training, "SYSTEM_DIRECTORIES", (str(fake),))
    r = CliRunner().invoke(main, ["train", "-a", "perceptron", str(fake / "stdin")], prog_name="budgetlearn")
    assert (r.exit_code, r.stderr) == (
        2,
        f"budgetlearn: error: -o/--output is required when DATA is in {fake} ({fake / 'stdin'}) "
        "(see 'budgetlearn train --help')\n",
    )
    assert sorted(p.name for p in fake.iterdir()) == ["stdin"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = CliRunner().invoke(main, ["online-to-batch", "-a", "perceptron", str(fifo)], prog_name="budgetlearn")
    assert (r.exit_code, r.stderr.splitlines()[0]) == (
        2,
        f"budgetlearn: error: -o/--output is required when DATA is a FIFO ({fifo}) "
        "(see 'budgetlearn online-to-batch --help')",
    )
