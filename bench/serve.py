"""`budgetlearn serve` against its targets (issue #50): throughput on one connection against `train` over the
same file, answer latency with many clients at a fixed rate, resident memory as the examples grow.

    python bench/serve.py [--data sample_data/a9a] [--budget 300] [--gamma 0.05] [--runs 3]
                          [--clients 8] [--rate 1000] [--seconds 10] [--memory 100000 1000000]

1. Throughput, RBP with budget B, whole processes, interleaved round after round (the machine is shared: the
   load average is printed before and after): `train -a rbp` over DATA; `serve` over DATA on standard input;
   `predict --server` sending DATA over one TCP connection to a learning server started before (its start-up
   not counted; every round a fresh server).  Examples per second are DATA's lines over the median wall time;
   target: serve at least 80% of train's.
2. Latency: a learning server, CLIENTS connections each sending one line of DATA at a time at RATE/CLIENTS
   lines per second for SECONDS, each answer's round trip timed; target: p99 ≤ 50 ms at 1,000 lines/s.
3. Memory: DATA's lines sent again and again to `serve` on standard input; its resident set size
   (/proc/PID/status VmRSS) when the answers reach each count of --memory; target: the last within 10% of
   the first (the issue asks 10 million against 100,000).
"""

from __future__ import annotations

import argparse
import os
import re
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)
CLI = [sys.executable, "-m", "budgetcli"]


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def settings(args) -> list[str]:
    return ["-a", "rbp", "--budget", str(args.budget), "--gamma", str(args.gamma)]


def start_server(args, *extra) -> tuple[subprocess.Popen, tuple]:
    server = subprocess.Popen(
        [*CLI, "serve", *settings(args), "--port", "0", *extra], env=ENV, stderr=subprocess.PIPE, cwd=ROOT
    )
    ready, _, _ = select.select([server.stderr], [], [], 120)
    line = server.stderr.readline().decode() if ready else ""
    found = re.search(r"serving on (\S+):(\d+)", line)
    if not found:
        server.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return server, (found.group(1), int(found.group(2)))


def timed(command: list[str], stdin=None) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=ENV, cwd=ROOT, stdin=stdin, stdout=subprocess.DEVNULL, check=True, timeout=3600)
    return time.perf_counter() - started


def throughput(args, lines: int) -> None:
    print(f"1. throughput: RBP B={args.budget}, gamma {args.gamma}, {lines:,} lines of {args.data}; load {load()}")
    walls: dict[str, list[float]] = {"train": [], "serve (stdin)": [], "serve (one TCP connection)": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            walls["train"].append(timed([*CLI, "train", *settings(args), "-q", "-o", f"{tmp}/t.model", args.data]))
            with open(os.path.join(ROOT, args.data), "rb") as data:
                walls["serve (stdin)"].append(timed([*CLI, "serve", *settings(args)], stdin=data))
            server, (host, port) = start_server(args)
            try:
                walls["serve (one TCP connection)"].append(
                    timed([*CLI, "predict", "--server", f"{host}:{port}", args.data, "-o", f"{tmp}/answers"])
                )
            finally:
                server.terminate()
                server.wait(60)
    base = lines / statistics.median(walls["train"])
    for name, w in walls.items():
        rate = lines / statistics.median(w)
        print(f"   {name:28} median {statistics.median(w):6.2f} s  {rate:9,.0f} examples/s  {rate / base:5.2f}× train")
    print(f"   load after: {load()}")


def latency(args, data_lines: list[bytes]) -> None:
    print(f"2. latency: {args.clients} clients, {args.rate:,} lines/s in all, {args.seconds:g} s; load {load()}")
    server, address = start_server(args)
    times: list[float] = []
    lock = threading.Lock()
    interval = args.clients / args.rate

    def client(k: int) -> None:
        with socket.create_connection(address, timeout=30) as sock:
            answers = sock.makefile("rb")
            mine, due, end = data_lines[k :: args.clients], time.perf_counter(), time.perf_counter() + args.seconds
            for i in range(10**9):
                if time.perf_counter() >= end:
                    break
                due += interval
                pause = due - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
                sent = time.perf_counter()
                sock.sendall(mine[i % len(mine)])
                answers.readline()
                with lock:
                    times.append(time.perf_counter() - sent)

    try:
        threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.terminate()
        server.wait(60)
    times.sort()
    p = lambda q: 1000 * times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print(
        f"   {len(times):,} answers ({len(times) / args.seconds:,.0f}/s): p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, "
        f"max {1000 * times[-1]:.2f} ms; load after: {load()}"
    )


def memory(args, data_lines: list[bytes]) -> None:
    marks = sorted(args.memory)
    print(f"3. memory: serve on standard input, RSS at {', '.join(f'{m:,}' for m in marks)} examples; load {load()}")
    server = subprocess.Popen(
        [*CLI, "serve", *settings(args)], env=ENV, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )

    def feed():
        try:
            sent = 0
            while sent < marks[-1]:
                block = data_lines[: marks[-1] - sent]
                server.stdin.write(b"".join(block))
                sent += len(block)
            server.stdin.close()
        except BrokenPipeError:
            pass

    threading.Thread(target=feed, daemon=True).start()
    started, answered, at = time.perf_counter(), 0, 0
    for _ in server.stdout:
        answered += 1
        if at < len(marks) and answered == marks[at]:
            with open(f"/proc/{server.pid}/status") as status:
                rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
            print(f"   {answered:>12,} examples  RSS {rss / 1024:8.1f} MB  ({time.perf_counter() - started:.0f} s)")
            at += 1
    server.wait(60)
    print(f"   load after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="sample_data/a9a")
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--gamma", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--memory", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--only", choices=["throughput", "latency", "memory"], default=None)
    args = parser.parse_args()
    with open(os.path.join(ROOT, args.data), "rb") as f:
        data_lines = [line for line in f if line.strip()]
    if args.only in (None, "throughput"):
        throughput(args, len(data_lines))
    if args.only in (None, "latency"):
        latency(args, data_lines)
    if args.only in (None, "memory"):
        memory(args, data_lines)


if __name__ == "__main__":
    main()
