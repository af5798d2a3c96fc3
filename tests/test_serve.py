"""`budgetlearn serve` (budgetcli/serving/): its answers are the progressive predictions `train` counts, its model
is `train --save-resume`'s byte for byte however lines are batched, and it is durable (checkpoints, SIGHUP,
kill -9 then replay) and bounded (error lines, long lines, idle and extra clients) on every transport.

Every server runs as a process on 127.0.0.1 (an ephemeral port) or a Unix socket in a temporary directory;
every socket and process wait has a timeout."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from budgetcli.run import pipeline
from budgetcli.base.core import KernelSpec
from budgetcli.io.libsvm import read_all
from budgetcli.model.model import Model
from budgetcli.model.spec import TrainSpec

from .helpers import random_stream

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
WAIT = 60  # seconds any one wait may take (a first run compiles the loops)
N = 60

RBP = ["-a", "rbp", "--budget", "12", "--gamma", "0.5", "--seed", "3"]
SETTINGS = {
    "binary": RBP,
    "multiclass": ["-a", "mc-perceptron", "--gamma", "0.5"],
    "regression": ["--task", "regression", "-a", "qklms", "--gamma", "0.5"],
    # ρ as the learner moves it: the online hypothesis's own threshold (the default refits it for the file)
    "novelty": ["--task", "novelty", "-a", "norma-novelty", "--gamma", "0.5", "--nu", "0.3", "--rho-fit", "learnt"],
}


def stream_lines(task: str, n: int = N) -> list[str]:
    X, y = random_stream(n, 4, 11)
    if task == "multiclass":
        y = np.argmax(X[:, :3], axis=1) + 1.0
    elif task == "regression":
        y = np.round(np.sin(X[:, 0]) + X[:, 1], 3)
    return [f"{v:g} " + " ".join(f"{j + 1}:{a:.4f}" for j, a in enumerate(x) if a) for x, v in zip(X, y)]


def budgetlearn(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "budgetcli", *map(str, args)], env=ENV, capture_output=True, timeout=WAIT, **kwargs
    )


def serve_stdin(text: str, *args) -> subprocess.CompletedProcess:
    return budgetlearn("serve", *args, input=text.encode())


class Server:
    """A `budgetlearn serve --port 0` process (or --socket), its address read from its first stderr line."""

    def __init__(self, *args, unix: str | None = None):
        where = ["--socket", unix] if unix else ["--port", "0"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "budgetcli", "serve", *map(str, args), *where],
            env=ENV,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        line = self._stderr_line()
        found = re.search(r"serving on (\S+)", line)
        assert found, line
        self.unix = unix
        if not unix:
            host, port = found.group(1).rsplit(":", 1)
            self.address = (host, int(port))

    def _stderr_line(self) -> str:
        ready, _, _ = select.select([self.process.stderr], [], [], WAIT)
        assert ready, "the server said nothing"
        return self.process.stderr.readline().decode()

    def connect(self) -> "Client":
        if self.unix:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(WAIT)
            sock.connect(self.unix)
        else:
            sock = socket.create_connection(self.address, timeout=WAIT)
        return Client(sock)

    def stop(self, sig=signal.SIGTERM) -> tuple[int, str]:
        self.process.send_signal(sig)
        try:
            _, err = self.process.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        return self.process.returncode, err.decode()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)


class Client:
    def __init__(self, sock: socket.socket):
        self.sock, self.file = sock, sock.makefile("rb")

    def ask(self, lines: list[str]) -> list[str]:
        """Send the lines at once; their answers."""
        self.sock.sendall("".join(line + "\n" for line in lines).encode())
        return [self.file.readline().decode().rstrip("\n") for _ in lines]

    def close(self):
        self.file.close()
        self.sock.close()


@pytest.fixture
def servers():
    started = []

    def start(*args, **kwargs) -> Server:
        server = Server(*args, **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


def train_model(tmp_path, lines: list[str], settings: list[str], name: str = "train") -> bytes:
    data = tmp_path / f"{name}.txt"
    data.write_text("".join(line + "\n" for line in lines))
    out = budgetlearn("train", *settings, "--save-resume", "-q", "-o", tmp_path / f"{name}.model", data)
    assert out.returncode == 0, out.stderr
    return (tmp_path / f"{name}.model").read_bytes()


# ---- what is answered and learnt ---------------------------------------------------------------------
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression", "novelty"])
def test_answers_are_the_predictions_before_learning_and_the_model_is_train_s(tmp_path, task):
    """Answer k is what the model trained on lines 1..k-1 predicts for line k (the online hypothesis, as
    `train` counts its online mistakes), and the model saved is `train --save-resume`'s, byte for byte."""
    lines = stream_lines(task)
    out = serve_stdin("".join(line + "\n" for line in lines), *SETTINGS[task], "--save", tmp_path / "served.model")
    assert out.returncode == 0, out.stderr
    answers = out.stdout.decode().splitlines()
    assert len(answers) == N
    assert (tmp_path / "served.model").read_bytes() == train_model(tmp_path, lines, SETTINGS[task])
    args = dict(zip(SETTINGS[task][::2], SETTINGS[task][1::2]))
    spec = TrainSpec(
        args["-a"],
        KernelSpec("rbf", 0.5),
        {"budget": 12} if task == "binary" else {"nu": 0.3, "rho_fit": "learnt"} if task == "novelty" else {},
        seed=int(args.get("--seed", 0)),
        hypothesis="online",
        task=args.get("--task"),
    )
    data = tmp_path / "prefix.txt"
    for k in range(1, N):
        data.write_text("".join(line + "\n" for line in lines[:k]))
        model = pipeline.train(spec, data).model
        data.write_text(lines[k] + "\n")
        expected = model.predicted(model.scorer().decision_function(read_all(data)))[0]
        assert float(answers[k]) == pytest.approx(expected, rel=1e-9, abs=1e-12), k
    if (
        task == "binary"
    ):  # y·f ≤ 0 is the binary learners' mistake (multiclass.py counts a class's first rounds its way)
        wrong = sum(a != line.split()[0] for a, line in zip(answers, lines))
        summary = budgetlearn("train", *RBP, "--json", "-q", "-o", tmp_path / "m", tmp_path / "train.txt")
        assert wrong == json.loads(summary.stdout)["mistakes"] > 0


@pytest.mark.parametrize("first", ["1", "2"])
def test_labels_1_and_2_make_train_s_model_whichever_comes_first(tmp_path, first):
    """`train` gives the larger of a binary model's labels +1 when its first block holds both; line by line the
    first label takes its sign alone (1 > 0: +1).  With 1 first, serve learns its first rows again once 2 comes,
    so the model is `train`'s either way, and its wrong answers are `train`'s online mistakes."""
    lines = stream_lines("binary")
    one = lines[0].split()[0]
    spelt = {True: first, False: "2" if first == "1" else "1"}  # the first line's label is `first`
    lines = [spelt[line.split()[0] == one] + line[line.index(" ") :] for line in lines]
    out = serve_stdin("".join(line + "\n" for line in lines), *RBP, "--save", tmp_path / "served.model")
    assert out.returncode == 0, out.stderr
    answers = out.stdout.decode().splitlines()
    assert (tmp_path / "served.model").read_bytes() == train_model(tmp_path, lines, RBP)
    summary = budgetlearn("train", *RBP, "--json", "-q", "-o", tmp_path / "m", tmp_path / "train.txt")
    wrong = sum(a != line.split()[0] for a, line in zip(answers, lines))
    assert wrong == json.loads(summary.stdout)["mistakes"] > 0


def test_novelty_answers_are_the_rounds_train_flags_online(tmp_path):
    """With the default --rho-fit (the file's ρ refitted to recent scores), a novelty answer is still the
    online round's verdict, f(x) − ρ_t as the learner moves ρ: its −1 answers are the rounds `train`
    flags online, and the model saved is `train --save-resume`'s."""
    settings = ["--task", "novelty", "-a", "norma-novelty", "--gamma", "0.5", "--nu", "0.3"]
    lines = stream_lines("binary")
    out = serve_stdin("".join(line + "\n" for line in lines), *settings, "--save", tmp_path / "served.model")
    assert out.returncode == 0, out.stderr
    answers = out.stdout.decode().splitlines()
    assert set(answers) == {"1", "-1"}
    assert (tmp_path / "served.model").read_bytes() == train_model(tmp_path, lines, settings)
    summary = budgetlearn("train", *settings, "--json", "-q", "-o", tmp_path / "m", tmp_path / "train.txt")
    assert answers.count("-1") == json.loads(summary.stdout)["online_flagged"]


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_how_lines_are_batched_changes_no_answer_and_no_model(tmp_path, servers, task):
    """All lines at once on standard input, then over TCP in runs of 1, 1, 7, 1 and 13 lines: the
    same answers, the same model file."""
    lines = stream_lines(task)
    settings = [*SETTINGS[task], "--scores"]  # multiclass: the scores of the classes met before each line
    whole = serve_stdin("".join(line + "\n" for line in lines), *settings, "--save", tmp_path / "whole.model")
    assert whole.returncode == 0, whole.stderr
    server = servers(*settings, "--save", tmp_path / "pieces.model")
    client = server.connect()
    answers, at, sizes = [], 0, [1, 1, 7, 1, 13]
    while at < N:
        size = sizes[len(answers) % len(sizes)]
        answers += client.ask(lines[at : at + size])
        at += size
    client.close()
    code, err = server.stop()
    assert code == 143, err
    assert answers == whole.stdout.decode().splitlines()
    assert (tmp_path / "pieces.model").read_bytes() == (tmp_path / "whole.model").read_bytes()


def test_a_bad_line_gets_its_error_and_the_stream_goes_on(tmp_path):
    lines = stream_lines("binary", 20)
    bad = (
        lines[:5]
        + ["1 2:x 3:1"]  # malformed: line 6
        + lines[5:11]
        + ["5 1:1"]  # a third label for a binary model: line 13
        + ["1 " + "1:1 " * 30]  # longer than --max-line: line 14
        + ["", "# a comment", "2:0.5 3:1"]  # blank, comment, unlabelled (predicted only)
        + lines[11:12]
        + ["1 1:1 1:2"]  # duplicate index
        + lines[12:]
    )
    out = serve_stdin("".join(line + "\n" for line in bad), *RBP, "--max-line", "80", "--save", tmp_path / "s.model")
    assert out.returncode == 0, out.stderr
    answers = out.stdout.decode().splitlines()
    assert len(answers) == len(bad)
    assert answers[5].startswith("error: <stdin>:6: feature value is not a number")
    assert answers[12].startswith("error: <stdin>:13: a third label value in binary training")
    assert answers[13] == "error: <stdin>:14: the line is longer than 80 bytes, the most a line may hold"
    assert answers[14:16] == ["", ""]
    assert answers[16] in ("1", "-1")
    assert answers[18].startswith("error: <stdin>:19: duplicate feature index 1")
    errors = [a for a in answers if a.startswith("error")]
    assert len(errors) == 4
    assert (tmp_path / "s.model").read_bytes() == train_model(tmp_path, lines, RBP)  # every good line, no other


def test_an_unlabelled_line_before_anything_is_learnt_and_a_line_cut_at_the_end(tmp_path):
    out = serve_stdin("1:1 2:1\n1 1:1\n-1 2:1\n1 1:0.5 2:", *RBP, "--save", tmp_path / "s.model")
    answers = out.stdout.decode().splitlines()
    assert answers[0] == "error: the model has learnt nothing yet: send a labelled line first"
    assert answers[3].startswith("error: <stdin>:4: input ended in the middle of a line")
    assert Model.load(tmp_path / "s.model").learner.counter("examples") == 2


def test_readonly_answers_predict_s_answers_and_learns_nothing(tmp_path):
    lines = stream_lines("binary")
    train_model(tmp_path, lines, RBP)
    model = tmp_path / "train.model"
    before = model.read_bytes()
    queries = "".join(line + "\n" for line in lines[:20]) + "1:0.3 2:-1\n"
    out = serve_stdin(queries, "--model", model, "--readonly", "--scores")
    (tmp_path / "q.txt").write_text(queries)
    expected = budgetlearn("predict", model, tmp_path / "q.txt", "--scores")
    assert out.returncode == 0 and expected.returncode == 0, out.stderr
    assert out.stdout == expected.stdout
    assert model.read_bytes() == before


# ---- durable ---------------------------------------------------------------------------------------
def test_kill_9_then_restart_from_the_checkpoint_and_replay_gives_the_uninterrupted_model(tmp_path, servers):
    lines = stream_lines("binary")
    checkpoint = tmp_path / "ck.model"
    server = servers(*RBP, "--save", checkpoint, "--checkpoint-every", "20")
    client = server.connect()
    for line in lines[:47]:
        client.ask([line])
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=WAIT)
    client.close()
    count = Model.load(checkpoint, resume=True).learner.counter("examples")
    assert count == 40  # the last checkpoint: what came after it is what a kill -9 loses
    server = servers("--model", checkpoint, "--save", checkpoint)
    client = server.connect()
    client.ask(lines[count:])
    code, _ = server.stop(signal.SIGINT)
    assert code == 130
    assert checkpoint.read_bytes() == train_model(tmp_path, lines, RBP)


def test_sighup_writes_a_checkpoint_and_serving_goes_on(tmp_path, servers):
    lines = stream_lines("binary")
    saved = tmp_path / "s.model"
    server = servers(*RBP, "--save", saved)
    client = server.connect()
    client.ask(lines[:10])
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + WAIT
    while not saved.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Model.load(saved).learner.counter("examples") == 10
    assert client.ask(lines[10:]) and server.process.poll() is None
    code, err = server.stop()
    assert code == 143 and f"{saved} holds the checkpoint after {N} examples" in err
    assert saved.read_bytes() == train_model(tmp_path, lines, RBP)


def test_checkpoint_seconds(tmp_path, servers):
    saved = tmp_path / "s.model"
    server = servers(*RBP, "--save", saved, "--checkpoint-seconds", "0.2")
    client = server.connect()
    client.ask(stream_lines("binary")[:5])
    deadline = time.monotonic() + WAIT
    while not saved.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Model.load(saved).learner.counter("examples") == 5


# ---- many clients, transports, bounds ----------------------------------------------------------------
def test_many_clients_at_once_learn_in_one_order_each_answer_from_the_model_then(tmp_path, servers):
    """Four clients send their lines at once, line by line: the model learns all of them, and the answers
    that were wrong are exactly the online mistakes the learner counted (each answer came from the model as
    it stood when its line was learnt)."""
    lines = stream_lines("binary", 200)
    saved = tmp_path / "s.model"
    server = servers(*RBP, "--save", saved)
    wrong = []

    def client_run(part):
        client = server.connect()
        for line in part:
            (answer,) = client.ask([line])
            wrong.append(answer != line.split()[0])
        client.close()

    threads = [threading.Thread(target=client_run, args=(lines[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    server.stop()
    learner = Model.load(saved).learner
    assert learner.counter("examples") == 200 and len(wrong) == 200
    assert sum(wrong) == learner.counter("mistakes") > 0


def test_max_clients_idle_timeout_and_a_client_gone_mid_line(tmp_path, servers):
    lines = stream_lines("binary", 10)
    saved = tmp_path / "s.model"
    server = servers(*RBP, "--save", saved, "--max-clients", "2", "--idle-timeout", "2")
    first, second = server.connect(), server.connect()
    extra = server.connect()  # accepted after the two others (in the order they connected)
    assert extra.file.readline() == b"error: too many clients (at most 2); try again later\n"
    extra.close()
    first.ask(lines[:5])
    first.sock.sendall(b"1 1:0.5 2:0.25")  # and gone mid-line (a whole example, but for its newline): not learnt
    first.close()
    second.ask(lines[5:])
    started = time.monotonic()
    assert second.file.readline() == b""  # closed for idling
    assert 1.0 < time.monotonic() - started < WAIT
    server.stop()
    assert saved.read_bytes() == train_model(tmp_path, lines, RBP)


def test_a_unix_socket_replaces_only_a_dead_socket_and_is_removed_at_the_end(tmp_path, servers):
    path = tmp_path / "serve.sock"
    path.write_text("precious")
    refused = budgetlearn("serve", *RBP, "--socket", path)
    assert refused.returncode == 1 and "exists and is not a socket; not replaced" in refused.stderr.decode()
    assert path.read_text() == "precious"
    path.unlink()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # a socket file nobody listens at
    server = servers(*RBP, unix=str(path))
    busy = budgetlearn("serve", *RBP, "--socket", path)
    assert busy.returncode == 1 and "another server listens" in busy.stderr.decode()
    client = server.connect()
    first, *rest = client.ask(stream_lines("binary", 3))
    assert first == "?" and all(a in ("1", "-1") for a in rest)  # "?": no label known yet
    client.close()
    server.stop()
    assert not path.exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--gamma", "1"], "serve a new model with -a NAME"),
        (["-a", "rbp"], "serve a new model with --gamma or --sigma"),
        (["-a", "rbp", "--gamma", "1", "--scale"], "--scale-ranges"),
        (["--readonly"], "--readonly serves a model"),
        (["-a", "rbp", "--gamma", "1", "--checkpoint-every", "5"], "need --save FILE"),
    ],
)
def test_settings_a_first_batch_would_decide_are_refused(args, message):
    out = serve_stdin("", *args)
    assert out.returncode == 2 and message in out.stderr.decode()


def test_save_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = serve_stdin("", *RBP, "--save", fifo)
    assert out.returncode == 2 and "--save needs a regular file" in out.stderr.decode()


def test_predict_server_sends_a_file_and_writes_the_answers(tmp_path, servers):
    lines = stream_lines("binary")
    train_model(tmp_path, lines, RBP)
    queries = tmp_path / "q.txt"
    queries.write_text("".join(line + "\n" for line in lines[:30]) + "1:0.3 2:-1")  # no final newline
    server = servers("--model", tmp_path / "train.model", "--readonly", unix=str(tmp_path / "s.sock"))
    out = budgetlearn("predict", "--server", tmp_path / "s.sock", queries, "-o", tmp_path / "answers.txt")
    expected = budgetlearn("predict", tmp_path / "train.model", queries)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "answers.txt").read_bytes() == expected.stdout
    queries.write_text("1 1:x\n")
    bad = budgetlearn("predict", "--server", tmp_path / "s.sock", queries)
    assert bad.returncode == 1 and bad.stdout.decode().startswith("error: <client 2 unix>:1: feature value")
    assert "1 of 1 lines were answered with an error" in bad.stderr.decode()
    server.stop()
    gone = budgetlearn("predict", "--server", tmp_path / "s.sock", queries)
    assert gone.returncode == 1 and "cannot connect" in gone.stderr.decode()


def test_an_example_whose_numbers_overflow_is_refused_and_learning_goes_on(tmp_path):
    lines = stream_lines("binary", 10)
    text = "".join(line + "\n" for line in lines[:4]) + "1 1:1e200\n" + "".join(line + "\n" for line in lines[4:])
    out = serve_stdin(text, *RBP, "--save", tmp_path / "s.model")
    assert out.returncode == 0, out.stderr
    answers = out.stdout.decode().splitlines()
    assert answers[4] == (
        "error: <stdin>:5: not learnt: the example's squared norm ‖x‖² is not a finite number: "
        "a feature value is too large (scale the features)"
    )
    assert (tmp_path / "s.model").read_bytes() == train_model(tmp_path, lines, RBP)


@pytest.mark.parametrize("kind", ["a pipe whose reader is gone", "a terminal whose other side is gone"])
def test_a_standard_output_that_fails(tmp_path, kind):
    """As every command: a closed pipe stops the server quietly (exit 0), an I/O error with one line (exit 1);
    what was learnt is checkpointed either way."""
    if kind.startswith("a pipe"):
        read_end, end = os.pipe()
        os.close(read_end)
    else:
        controller, end = os.openpty()
        os.close(controller)  # every write: EIO
    try:
        out = subprocess.run(
            [sys.executable, "-m", "budgetcli", "serve", *RBP, "--save", tmp_path / "s.model"],
            input=b"1 1:1\n-1 1:-1\n",
            stdout=end,
            stderr=subprocess.PIPE,
            env=ENV,
            timeout=WAIT,
        )
    finally:
        os.close(end)
    if kind.startswith("a pipe"):
        assert (out.returncode, out.stderr) == (0, b"")
    else:
        expected = b"budgetlearn: error: standard output: cannot write the answers: Input/output error\n"
        assert (out.returncode, out.stderr) == (1, expected)
    assert Model.load(tmp_path / "s.model").learner.counter("examples") == 2
