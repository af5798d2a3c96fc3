"""Crash safety: kill -9 during a save, Ctrl-C / SIGTERM during training, --checkpoint-every,
two trainings writing the same file.  Real processes, real signals."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.learning import algorithms
from budgetcli.run import pipeline
from budgetcli.entry import main
from budgetcli.base.core import KernelSpec
from budgetcli.model.model import Model
from budgetcli.model.spec import TrainSpec

from .helpers import assert_same_state
from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parents[1]
ALGORITHMS = algorithms.load_all()


# `budgetlearn` with every write of an output file followed by a sleep of argv[1] seconds, so that a
# test can kill -9 it in the middle of a save.
SLOW_SAVE = """
import sys, time
from budgetcli.base import atomic

class Slow:
    def __init__(self, f):
        self._f = f
    def write(self, data):
        n = self._f.write(data)
        self._f.flush()
        time.sleep(float(sys.argv[1]))
        return n
    def __getattr__(self, name):
        return getattr(self._f, name)

plain = atomic._written
atomic._written = lambda raw, binary: plain(Slow(raw), binary)
from budgetcli.entry import main
main(sys.argv[2:], prog_name="budgetlearn")
"""


def budgetlearn(*args, slow_save: float = 0.0, **kw) -> subprocess.Popen:
    command = ["-c", SLOW_SAVE, str(slow_save)] if slow_save else ["-m", "budgetcli"]
    # As from a terminal: a test runner started in the background (a CI job, `cmd &`) may pass on
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler at all.
    return subprocess.Popen(
        [sys.executable, *command, *map(str, args)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **kw,
    )


def temp_files(directory: Path, target: Path) -> list[Path]:
    return sorted(directory.glob(f".{target.name}.*.tmp"))


def wait_for(condition, timeout=60.0, every=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False


def checkpoint_at(target: Path, examples: int):
    """For wait_for: the target holds the checkpoint after `examples` examples (a complete file)."""

    def held() -> bool:
        try:
            return Model.load(target).learner.counter("examples") == examples
        except ValueError:
            return False

    return held


def train_in_process(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture
def old_and_new(tmp_path):
    """A target holding an old model, and the bytes the new training run writes."""
    data = tmp_path / "train.txt"
    write_stream(data, n=1500, seed=4)
    target = tmp_path / "m.model"
    train_in_process("train", "-q", "-a", "lbp", "-B", "7", data, "-o", target)
    reference = tmp_path / "reference.model"
    train_in_process("train", "-q", "-a", "perceptron", data, "-o", reference)
    return data, target, target.read_bytes(), reference.read_bytes()


def test_kill_9_at_random_moments_of_a_save_never_leaves_a_partial_model(tmp_path, old_and_new):
    data, target, old, new = old_and_new
    rng = random.Random(9)
    killed_mid_save = 0
    for attempt in range(4):
        target.write_bytes(old)
        for stale in temp_files(tmp_path, target):
            stale.unlink()
        p = budgetlearn("train", "-q", "-a", "perceptron", data, "-o", target, slow_save=0.01)
        # the save has started when its temporary file appears; it then takes ~1 s (~100 slowed writes)
        assert wait_for(lambda: temp_files(tmp_path, target) or p.poll() is not None), "no save seen"
        time.sleep(rng.uniform(0.0, 0.8))
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        content = target.read_bytes()
        assert content in (old, new), f"attempt {attempt}: the target holds neither model"
        Model.load(target)  # and it loads
        if p.returncode == -signal.SIGKILL and content == old:
            killed_mid_save += 1
            assert temp_files(tmp_path, target), "killed mid-save, so the partial file must be a temp file"
    assert killed_mid_save >= 2, "the kills should mostly land inside the slowed save"


def test_kill_9_without_an_old_model_leaves_no_file_at_the_target(tmp_path, old_and_new):
    data, target, old, new = old_and_new
    target.unlink()
    p = budgetlearn("train", "-q", "-a", "perceptron", data, "-o", target, slow_save=0.01)
    assert wait_for(lambda: temp_files(tmp_path, target))
    time.sleep(0.3)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    assert not target.exists()


def feed(p: subprocess.Popen, path: Path, lines: int) -> None:
    with open(path, "rb") as f:
        for _ in range(lines):
            p.stdin.write(f.readline())
    p.stdin.flush()


@pytest.mark.parametrize(
    "signum, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")]
)
def test_signal_during_training_leaves_the_target_untouched(tmp_path, old_and_new, signum, code, word):
    data, target, old, new = old_and_new
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 4)  # 6,000 lines: more than one 4,096-line block
    p = budgetlearn("train", "-a", "perceptron", "-", "-o", target, stdin=subprocess.PIPE)
    feed(p, big, 5000)  # the first block is learned; the producer then stalls mid-stream
    time.sleep(3.0)
    p.send_signal(signum)
    out, err = p.communicate(timeout=60)
    assert p.returncode == code
    assert err.decode().strip().splitlines() == [f"budgetlearn: error: {word}; no model written"]
    assert target.read_bytes() == old
    assert not temp_files(tmp_path, target)


def test_ctrl_c_with_checkpoints_leaves_the_last_complete_checkpoint(tmp_path, old_and_new):
    data, target, old, new = old_and_new
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 4)
    p = budgetlearn("train", "-a", "perceptron", "--checkpoint-every", "1000", "-", "-o", target, stdin=subprocess.PIPE)
    # block 1 (4,096 lines) is learned, then the 904 lines the stalled stream holds (the reader hands
    # them over when the input pauses): checkpoints after 1,000 .. 5,000 examples
    feed(p, big, 5000)
    assert wait_for(checkpoint_at(target, 5000))
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert "interrupted" in err.decode() and "holds the checkpoint after 5,000 examples" in err.decode()
    # the checkpoint is the model of the first 5,000 lines, byte for byte
    first = tmp_path / "first5000.txt"
    first.write_text("".join(big.read_text().splitlines(keepends=True)[:5000]))
    reference = tmp_path / "ref.model"
    train_in_process("train", "-q", "-a", "perceptron", first, "-o", reference)
    assert_same_state(Model.load(reference).learner.state()[1], Model.load(target).learner.state()[1])
    assert not temp_files(tmp_path, target)


def test_two_trainings_writing_one_target_end_with_one_complete_model(tmp_path, old_and_new):
    data, target, old, new = old_and_new
    other = tmp_path / "other.txt"
    write_stream(other, n=1500, seed=5)
    reference = tmp_path / "other.model"
    train_in_process("train", "-q", "-a", "perceptron", other, "-o", reference)
    other_bytes = reference.read_bytes()
    target.unlink()
    for round_ in range(2):
        # slowed saves (~1 s each) that overlap in time
        a = budgetlearn("train", "-q", "-a", "perceptron", data, "-o", target, slow_save=0.01)
        b = budgetlearn("train", "-q", "-a", "perceptron", other, "-o", target, slow_save=0.01)
        assert wait_for(lambda: len(temp_files(tmp_path, target)) == 2 or a.poll() is not None), (
            "the two saves should overlap"
        )
        for p in (a, b):
            p.communicate(timeout=120)
            assert p.returncode == 0
        assert target.read_bytes() in (new, other_bytes)
        assert not temp_files(tmp_path, target)


# ---------------------------------------------------------------------------- --checkpoint-every


@pytest.mark.parametrize("hypothesis", ["online", None])
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_checkpoint_is_the_model_of_the_examples_before_it(tmp_path, algorithm, hypothesis):
    data = tmp_path / "d.txt"
    write_stream(data, n=230, seed=2)
    lines = data.read_text().splitlines(keepends=True)
    saved = []
    cls = ALGORITHMS[algorithm]
    params = {"budget": 5} if "budget" in {p.name for p in cls.params} else {}
    spec = TrainSpec(algorithm, KernelSpec("rbf", 0.5), params, hypothesis=hypothesis, task=cls.tasks[0])
    result = pipeline.train(
        replace(spec, block_lines=64, checkpoint_every=50),
        data,
        watch=pipeline.Watch(on_checkpoint=lambda m: saved.append(m.learner.state())),
    )
    assert [h["counters"]["examples"] for h, _ in saved] == [50, 100, 150, 200]
    for k, (header, arrays) in enumerate(saved, 1):
        head = tmp_path / f"head{k}.txt"
        head.write_text("".join(lines[: 50 * k]))
        expected = pipeline.train(spec, head).model.learner.state()
        assert header == expected[0]
        assert_same_state(expected[1], arrays)
    # checkpointing does not change the final model (a running average's archive of evicted vectors included)
    plain = pipeline.train(spec, data).model.learner.state()
    final = result.model.learner.state()
    assert plain[0] == final[0]
    assert_same_state(plain[1], final[1])


@pytest.mark.parametrize("good", [1000, 5000])  # in the first block; in the second, after one learnt
def test_checkpoint_then_data_error_names_the_checkpoint(tmp_path, good):
    """A file of `good` lines and a bad line after them: the lines before the bad one are learnt and
    checkpointed (they were dropped with their block: 1,000 lines and --checkpoint-every 300 left no
    checkpoint, though the file "holds the last complete checkpoint")."""
    data = tmp_path / "d.txt"
    write_stream(data, n=500, seed=1)
    data.write_text(data.read_text() * (good // 500) + "+1 1:x\n")
    target = tmp_path / "m.model"
    every = good * 3 // 10  # 300, 1,500: the last checkpoint after 900, 4,500 examples
    r = CliRunner().invoke(
        main, ["train", "-a", "perceptron", "--checkpoint-every", str(every), str(data), "-o", str(target)]
    )
    assert r.exit_code == 1
    assert r.stderr.startswith(f"budgetlearn: error: {data}:{good + 1}: feature value is not a number")
    assert r.stderr.endswith(f"({target} holds the checkpoint after {3 * every:,} examples)\n")
    head = tmp_path / "head.txt"
    head.write_text("".join(data.read_text().splitlines(keepends=True)[: 3 * every]))
    reference = tmp_path / "ref.model"
    train_in_process("train", "-q", "-a", "perceptron", head, "-o", reference)
    assert_same_state(Model.load(reference).learner.state()[1], Model.load(target).learner.state()[1])


def _pipe_drained(fd) -> bool:
    """Nothing left unread in the pipe or FIFO behind `fd` (FIONREAD: bytes in its buffer)."""
    import fcntl
    import struct
    import termios

    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0] == 0


@pytest.mark.parametrize("resumed", [False, True], ids=["new model", "--resume"])
def test_a_slow_fifo_then_sigterm_keeps_the_checkpoints_of_what_it_sent(tmp_path, resumed):
    """A FIFO fed 1,000 lines, then silent, and SIGTERM (a cron job's timeout): with --checkpoint-every
    300 the file holds the model of the first 900 lines (there was no checkpoint, "no model written",
    the lines gone).  A resumed run's checkpoints are written as the lines come (when the input
    pauses); a new model's first block, which decides its defaults, waits for 4,096 lines or the end,
    so its lines are learnt when SIGTERM ends the input."""
    lines = tmp_path / "d.txt"
    write_stream(lines, n=1000, seed=3)
    target = tmp_path / "m.model"
    before = 0
    command = ["train", "-a", "perceptron", "--checkpoint-every", "300"]
    if resumed:
        start = tmp_path / "start.txt"
        write_stream(start, n=200, seed=8)
        train_in_process("train", "-q", "-a", "perceptron", start, "-o", target)
        before, command = 200, ["train", "--resume", target, "--checkpoint-every", "300"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    p = budgetlearn(*command, fifo, "-o", target)
    with open(fifo, "wb") as w:  # opened once the command opens its end
        w.write(lines.read_bytes())
        w.flush()
        assert wait_for(lambda: _pipe_drained(w.fileno()))
        if resumed:
            assert wait_for(checkpoint_at(target, before + 900))  # before any signal
        else:
            time.sleep(2.0)  # it now waits for more in read()
            assert not target.exists()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 143
    assert err.decode() == (
        f"budgetlearn: error: terminated (SIGTERM); {target} holds the checkpoint after {before + 900:,} examples\n"
    )
    head = tmp_path / "head.txt"
    head.write_text("".join(lines.read_text().splitlines(keepends=True)[:900]))
    reference = tmp_path / "ref.model"
    if resumed:
        train_in_process("train", "-q", "-a", "perceptron", start, "-o", reference)
        train_in_process("train", "-q", "--resume", reference, head, "-o", reference)
    else:
        train_in_process("train", "-q", "-a", "perceptron", head, "-o", reference)
    assert_same_state(Model.load(reference).learner.state()[1], Model.load(target).learner.state()[1])
    assert not temp_files(tmp_path, target)


def test_resume_from_a_checkpoint_ends_with_the_model_of_one_run(tmp_path):
    data = tmp_path / "d.txt"
    write_stream(data, n=400, seed=6)
    lines = data.read_text().splitlines(keepends=True)
    (tmp_path / "b.txt").write_text("".join(lines[200:]))
    checkpoint = tmp_path / "ckpt.model"
    head = tmp_path / "head.txt"
    head.write_text("".join(lines[:200]))
    # what a run over the whole file interrupted after 250 examples leaves: the checkpoint of the first 200,
    # with its resume state (the final save of this shorter run keeps it too, by --save-resume)
    train_in_process(
        "train", "-q", "-a", "projectron++", "--checkpoint-every", "200", "--save-resume", head, "-o", checkpoint
    )
    assert Model.load(checkpoint).learner.counter("examples") == 200
    train_in_process("train", "-q", "--resume", checkpoint, "--save-resume", tmp_path / "b.txt", "-o", checkpoint)
    whole = tmp_path / "whole.model"
    train_in_process("train", "-q", "-a", "projectron++", "--save-resume", data, "-o", whole)
    whole, resumed = Model.load(whole, resume=True).learner, Model.load(checkpoint, resume=True).learner
    assert whole.state()[0] == resumed.state()[0]
    assert_same_state(whole.state()[1], resumed.state()[1])


@pytest.mark.parametrize(
    "algorithm",
    [
        ("forgetron", "-B", "8"),  # the running average's archive of evicted vectors
        ("projectron++", "--eta", "0.5"),  # the kept inverse factor
        ("spa",),  # the decay of every coefficient at a mistake
    ],
    ids=lambda a: a[0],
)
def test_kill_9_after_a_checkpoint_then_resume_with_the_rest_is_one_run(tmp_path, algorithm):
    """A training process killed with SIGKILL (no handler runs) after a checkpoint: `train --resume` from
    the checkpoint with the rest of the stream writes the file of one uninterrupted run, byte for byte."""
    data = tmp_path / "train.txt"
    write_stream(data, n=1250, seed=7)
    big = tmp_path / "big.txt"
    big.write_text(data.read_text() * 4)
    lines = big.read_text().splitlines(keepends=True)
    target = tmp_path / "m.model"
    common = ["-a", *algorithm, "--gamma", "0.5", "--average"]
    p = budgetlearn("train", *common, "--checkpoint-every", "300", "-", "-o", target, stdin=subprocess.PIPE)
    # block 1 (4,096 lines) is learned, then the 904 the stalled stream holds (handed over when it
    # pauses): checkpoints after 300 .. 4,800 examples; then it waits
    feed(p, big, 5000)
    assert wait_for(checkpoint_at(target, 4800))
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    assert p.returncode == -signal.SIGKILL
    rest = tmp_path / "rest.txt"
    rest.write_text("".join(lines[4800:]))
    r = train_in_process("train", "--resume", target, "--save-resume", "--json", "-q", rest, "-o", target)
    assert json.loads(r.stdout)["notes"] == []  # nothing rebuilt, nothing folded: the checkpoint holds it all
    one = tmp_path / "one.model"
    train_in_process("train", *common, "--save-resume", "-q", big, "-o", one)
    assert target.read_bytes() == one.read_bytes()
    if algorithm[0] == "forgetron":
        assert Model.load(one, resume=True).learner.retired.compressions > 0


def test_checkpoint_every_must_be_positive(tmp_path):
    data = tmp_path / "d.txt"
    write_stream(data, n=10)
    r = CliRunner().invoke(main, ["train", "-a", "perceptron", "--checkpoint-every", "0", str(data)])
    assert r.exit_code == 2 and not (tmp_path / "d.txt.model").exists()


# ---------------------------------------------------------------------------- an empty day


@pytest.mark.parametrize("day", ["empty file", "comments only", "empty stdin"])
def test_an_empty_day_leaves_the_resumed_model_as_it_was(tmp_path, day):
    """A cron job's day without examples: `train --resume M DAY -o M` ended in a traceback; it exits 0
    and leaves M as it was (byte for byte, its calibration and its time included), the summary saying
    so; another -o gets the model as the run leaves it; online-to-batch --resume writes the batch model
    of it; the Python API returns the model itself; a new model has nothing to go on with: one line."""
    data = tmp_path / "d.txt"
    write_stream(data, n=300, seed=2)
    model = tmp_path / "m.model"
    train_in_process("train", "-q", "-a", "perceptron", data, "-o", model)
    train_in_process("calibrate", model, data, "-o", model)
    os.utime(model, ns=(10**18, 10**18))
    before = model.read_bytes()
    source = tmp_path / "day.txt"
    source.write_text("" if day == "empty file" else "# nothing today\n\n")
    given, stdin = (str(source), None) if day != "empty stdin" else ("-", subprocess.DEVNULL)

    p = budgetlearn("train", "--resume", model, given, "-o", model, stdin=stdin)
    out, err = p.communicate(timeout=120)
    shown = "<stdin>" if given == "-" else given
    assert p.returncode == 0, err
    assert f"note            {shown} holds no examples: the model learned nothing new; {model} left as it was" in (
        err.decode()
    )
    assert model.read_bytes() == before and os.stat(model).st_mtime_ns == 10**18
    other = tmp_path / "other.model"
    p = budgetlearn("train", "--resume", model, given, "-o", other, "--json", "-q", stdin=stdin)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and json.loads(out)["examples"] == 300, err
    assert Model.load(other).calibration == Model.load(model).calibration  # nothing learnt: still calibrated
    p = budgetlearn("online-to-batch", "--resume", model, given, "-o", other, stdin=stdin)
    assert p.wait(timeout=120) == 0 and Model.load(other).hypothesis == "average"
    p = budgetlearn("train", "-a", "perceptron", given, "-o", other, stdin=stdin)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, err.decode()) == (1, f"budgetlearn: error: {shown}: no examples to train on\n")

    import budgetcli

    resumed = budgetcli.load(model)
    if given != "-":
        assert budgetcli.train(TrainSpec("perceptron"), given, resume=resumed) is resumed
        with pytest.raises(ValueError, match="no examples to train on"):
            budgetcli.train(TrainSpec("perceptron"), given)


# ---------------------------------------------------------------------------- two runs continuing one model


@pytest.mark.parametrize("overlap", [False, True], ids=["one after the other", "saves at once"])
def test_two_resumes_of_one_model_at_once_never_lose_a_run_silently(tmp_path, overlap):
    """`train --resume M DAY -o M` twice at once: both exited 0, the one that ended last overwriting
    the other's day.  Now a run writes M back only while M is the file it read: of two runs that read
    the same M, one writes it and the other is refused in one line (exit 1), its day not lost silently.
    Each run reads its day from a FIFO, so both have read M before either writes it; then the first
    ends before the second is fed, or both are fed at once and their (slowed) saves overlap."""
    model = tmp_path / "m.model"
    start = tmp_path / "start.txt"
    write_stream(start, n=300, seed=1)
    train_in_process("train", "-q", "-a", "perceptron", start, "-o", model)
    days, expected = [], []
    for k in range(2):
        day = tmp_path / f"day{k}.txt"
        write_stream(day, n=200, seed=10 + k)
        reference = tmp_path / f"ref{k}.model"
        reference.write_bytes(model.read_bytes())
        train_in_process("train", "-q", "--resume", reference, day, "-o", reference)
        days.append(day)
        expected.append(reference.read_bytes())
    runs, fifos = [], []
    for k in range(2):
        fifo = tmp_path / f"fifo{k}"
        os.mkfifo(fifo)
        runs.append(budgetlearn("train", "-q", "--resume", model, fifo, "-o", model, slow_save=0.01 if overlap else 0))
        fifos.append(open(fifo, "wb"))  # returns once the run opens its data: it has read M
    if overlap:
        for k in range(2):
            fifos[k].write(days[k].read_bytes())
            fifos[k].close()
    results = []
    for k in range(2):
        if not overlap:
            fifos[k].write(days[k].read_bytes())
            fifos[k].close()
        out, err = runs[k].communicate(timeout=120)
        results.append((runs[k].returncode, err.decode()))
    assert sorted(code for code, _ in results) == [0, 1], results
    winner = [code for code, _ in results].index(0)
    assert model.read_bytes() == expected[winner]
    assert results[1 - winner][1] == (
        f"budgetlearn: error: {model}: cannot write the model: it changed since this run read it (another run "
        "wrote it), so it is not overwritten: this run's data is not in it; continue from it again\n"
    )
    assert not temp_files(tmp_path, model)
    if not overlap:
        assert winner == 0  # the second, fed after the first had written M, is the one refused


def test_the_python_api_writes_a_loaded_model_back_only_while_its_file_is_unchanged(tmp_path):
    import budgetcli
    from budgetcli.base.atomic import ChangedSinceRead

    data = tmp_path / "d.txt"
    write_stream(data, n=200, seed=3)
    path = tmp_path / "m.model"
    train_in_process("train", "-q", "-a", "perceptron", data, "-o", path)
    mine, theirs = budgetcli.load(path), budgetcli.load(path)
    theirs.save(path)  # another run wrote it meanwhile
    written = path.read_bytes()
    with pytest.raises(ChangedSinceRead):
        budgetcli.train(TrainSpec("perceptron"), data, resume=mine).save(path)
    assert path.read_bytes() == written
    budgetcli.load(path).save(tmp_path / "elsewhere.model")  # another path: no such check
    again = budgetcli.load(path)
    again.save(path)
    again.save(path)  # its own writes are what it expects next
