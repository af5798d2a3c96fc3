"""The shards of a run, in this process or as dask actors, restarted when a worker is lost."""

from __future__ import annotations

import contextlib
import logging
import sys
import time

from ...base.core import DataError
from .shard import Shard

RESTARTS = 3  # a shard's worker lost this many times in a row ends the run


class ShardPool:
    """The shards of a run: `Shard`s of this process (client None), or dask actors spread over the
    workers in turn.  The pool remembers what restarting a shard needs (module docstring): the last
    mixed model and, per shard, its reading position and random stream after its last round."""

    def __init__(self, client, shard_args: list[tuple], start: tuple | None = None):
        """`start`: (the model to go on from as (header, arrays, labels), each shard's reading position,
        each shard's random stream), or None for fresh shards."""
        self.client, self.args = client, shard_args
        self.epochs = shard_args[0][-1]  # passes of every shard over its input (Shard's last argument)
        self.where = [None] * len(shard_args)  # each actor's worker
        self.position = [0] * len(shard_args)  # examples each shard had learned at its last report
        self.rng = [None] * len(shard_args)  # each shard's random stream at its last report
        self.since = [[] for _ in shard_args]  # each shard's steps since its last report, to replay
        self.common = None  # (header, arrays, labels) of the last mix
        self.restarts = 0
        self.bytes_in = self.bytes_out = 0  # the arrays' bytes the shards sent, and were sent
        futures = [self._submit(w) for w in range(len(shard_args))]
        self.shards = [f if client is None else f.result() for f in futures]
        if start is not None:
            self.common, self.position, self.rng = start[0], list(start[1]), list(start[2])
            calls = [
                self._begin(w, "resume_at", self.position[w], self.common, self.rng[w]) for w in range(len(self.shards))
            ]
            for w, c in enumerate(calls):
                self._outcome(w, c, None)

    def sharding(self, sync_every: int, divergence: float | None) -> dict:
        """What a checkpoint holds to continue this run (Model.sharding); `divergence` only under dynamic
        averaging and `epochs` only above 1, so that a static one-pass run's checkpoint reads as before;
        the positions count examples over the passes."""
        out = {
            "sources": [a[0] for a in self.args],
            "sync_every": sync_every,
            "positions": list(self.position),
            "streams": [[int(v) for v in r] for r in self.rng],
        }
        if divergence is not None:
            out["divergence"] = divergence
        if self.epochs > 1:
            out["epochs"] = self.epochs
        return out

    def _submit(self, w: int):
        if self.client is None:
            return Shard(*self.args[w])
        workers = sorted(self.client.scheduler_info()["workers"])
        self.where[w] = workers[w % len(workers)]
        return self.client.submit(Shard, *self.args[w], actor=True, workers=[self.where[w]], pure=False)

    def step(self, n: int) -> list[dict]:
        """Every shard's next n examples, all at once on a cluster: what each learned (and its divergence)."""
        calls = [self._begin(w, "step", n) for w in range(len(self.shards))]
        checks = [self._outcome(w, c, "step", n) for w, c in enumerate(calls)]
        for w, c in enumerate(checks):
            self.since[w].append(n)
            self.bytes_in += 8 if c["divergence"] is not None else 0  # one float
        return checks

    def collect(self) -> list[dict]:
        """Every shard's report (`Shard.report`), in shard order."""
        calls = [self._begin(w, "report") for w in range(len(self.shards))]
        reports = [self._outcome(w, c, "report") for w, c in enumerate(calls)]
        for w, r in enumerate(reports):
            self.position[w] += r["learned"]
            self.rng[w] = r["arrays"]["rng_state"].copy()
            self.since[w] = []
            self.bytes_in += sum(a.nbytes for a in r["arrays"].values()) + r["average"].nbytes
        return reports

    def adopt(self, header: dict, arrays: dict, labels: dict) -> None:
        self.common = (header, arrays, labels)
        self.bytes_out += len(self.shards) * sum(a.nbytes for a in arrays.values())
        if self.client is None and len(self.shards) > 1:
            # One process simulates the cluster: every shard would rebuild the same state that is not sent
            # (Projectron++'s factor of the union, O(n³)) from the same arrays.  Shard 0 rebuilds it and the
            # others start from its result, which is what each of them would compute (the model files stay
            # those of a cluster, tests/test_distributed.py); traffic is counted as sent.
            self.shards[0].adopt(header, arrays, labels)
            first = self.shards[0].model.learner
            first.rebuild_stale()
            header, arrays = first.state()
            done = 1  # shard 0 holds the mix already
        else:
            done = 0
        calls = {w: self._begin(w, "adopt", header, arrays, labels) for w in range(done, len(self.shards))}
        for w, c in calls.items():
            self._outcome(w, c, None)  # a shard started again has adopted it already

    def _begin(self, w: int, method: str, *args):
        """shard w's method(*args): its result (this process), a future (dask), or the exception calling it
        raised (an actor whose worker is known to be lost refuses the call at once); see `_outcome`."""
        try:
            return getattr(self.shards[w], method)(*args)
        except Exception as exc:
            return exc

    def _outcome(self, w: int, call, method: str | None, *args):
        """The result of shard w's call; when its worker was lost, the shard is started again on a live
        worker where it was, and `method` (if any) called again."""
        for attempt in range(RESTARTS + 1):
            try:
                if attempt:  # start the shard again, from the last mix, its stream and its position,
                    self.shards[w] = self._submit(w).result()  # and learn its steps since then again
                    self.shards[w].resume_at(self.position[w], self.common, self.rng[w]).result()
                    for n in self.since[w]:
                        self.shards[w].step(n).result()
                    if method is None:
                        return None
                    call = getattr(self.shards[w], method)(*args)
                if isinstance(call, Exception):
                    raise call
                return call if self.client is None else call.result()
            except DataError:
                raise
            except Exception:
                if self.client is None or not self._lost(w):
                    raise
                if attempt == RESTARTS:
                    raise RuntimeError(
                        f"{self.args[w][0]}: the worker of this shard was lost {RESTARTS + 1} times "
                        "in a row; the run stops"
                    ) from None
            self.restarts += 1

    def _lost(self, w: int, wait: float = 10.0) -> bool:
        """True when shard w's worker has left the cluster (waiting up to `wait` s for the scheduler to
        notice a dead process)."""
        deadline = time.monotonic() + wait
        while self.where[w] in self.client.scheduler_info()["workers"]:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def close(self) -> None:
        for s in self.shards:
            with contextlib.suppress(Exception):  # a failed shard's reader is gone with it
                s.close() if self.client is None else s.close().result()


@contextlib.contextmanager
def cluster(backend: str, jobs: int, scheduler: str | None):
    """A dask.distributed Client on `scheduler`, or on a LocalCluster of `jobs` single-threaded worker
    processes started here; None for the serial backend."""
    if backend == "serial":
        if scheduler is not None:
            raise ValueError("--scheduler is for --backend dask")
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise RuntimeError("--backend dask needs dask.distributed: pip install 'budgetlearn[dask]'") from None
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            import dask

            # dask's statistical profiler samples every worker thread each 10 ms; with the learning loop
            # on the worker's one thread that cost 10–15% of its speed (bench/shards_speed.py).  On Linux
            # the workers are forked, not spawned: they start with this process's imports and its loaded
            # compiled code instead of importing dask, numpy and numba and loading the code again (1.5 s
            # of a 7.7 s run on two cores, a9a × 100 in two files).  The nannies fork from dask's event
            # loop thread while the main thread waits for the cluster; the script runs BLAS on one
            # thread (entry.run; OpenBLAS also stops its threads at a fork), and nothing here runs
            # OpenMP, which a fork would break.
            stack.enter_context(
                dask.config.set(
                    {
                        "distributed.worker.profile.enabled": False,
                        "distributed.worker.multiprocessing-method": "fork" if sys.platform == "linux" else "spawn",
                    }
                )
            )
            local = stack.enter_context(
                LocalCluster(
                    n_workers=max(jobs, 1),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
            )
            client = stack.enter_context(Client(local))
        else:
            try:
                client = stack.enter_context(Client(scheduler, timeout="10s"))
            except (OSError, TimeoutError) as exc:
                raise RuntimeError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from None
        yield client
