"""What `train` shows on stderr while it runs: Vowpal Wabbit's progress table, and a live line.

With `--progress` (the default when stderr is a terminal) a row comes at 1, 2, 4, 8, ... examples
of this run, as VW's progressive validation table does::

    mistakes  since      examples   support     done       ETA
    so far    last row              vectors
    0.000000  0.000000          1         1     0.0%   0:00:03

- mistakes so far: online mistakes / examples of this run (each example is predicted before it is
  learned, so this is VW's "average loss" with the 0-1 loss);
- since last row: the same over the examples since the previous row;
- examples, support vectors: examples of this run, |S| now;
- done, ETA: the share of this run's input read (all passes), and the time left (`time_left`):
  blank when the input's size is unknown (standard input, a pipe, a compressed file).

On a terminal a live line (rich, redrawn in place) shows the latest counts below the rows; it is
gone when the run ends.  Elsewhere only the rows are written, as plain lines: never a carriage
return.  `--no-progress` (or `-q`) shows neither.
"""

from __future__ import annotations

import math
import time

HEADER = (
    f"{'mistakes':<9} {'since':<9} {'examples':>10} {'support':>9} {'done':>8} {'ETA':>9}\n"
    f"{'so far':<9} {'last row':<9} {'':>10} {'vectors':>9}"
)


def time_left(elapsed: float, share: float, growth: float) -> float:
    """Seconds left when `share` of the input took `elapsed` seconds.  An example costs about |S|
    kernel evaluations, and |S| grows as t^g (`growth`, clipped to [0, 1]: 0 for a full budget, 1 for
    a learner adding a vector per mistake), so the time so far is ∝ t^(1+g) and the time left is
    elapsed × ((1/share)^(1+g) − 1): at half the input, 1× the time so far for a budgeted learner,
    3× for one whose support grows in proportion."""
    g = min(max(growth, 0.0), 1.0)
    return elapsed * ((1.0 / share) ** (1.0 + g) - 1.0)


class Progress:
    """The rows (`rows`) and the live line (`live`, on a terminal); `start`, `locate` and `row` are
    called by pipeline.train, `update` after every chunk."""

    def __init__(self, rows: bool, live: bool):
        self.rows, self.live = rows, live
        self._live = None
        self._started = time.perf_counter()
        self._origin = (0, 0)  # the model's (examples, mistakes) when this run started
        self._last = (0, 0)  # this run's (examples, mistakes) at the previous row
        self._growth = (0, 0)  # (model's examples, |S|) at the previous row: the support's growth rate
        self._chunk = (0, 1, 0.0, None)  # examples before the chunk, its length, done before it and after it

    def __enter__(self):
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live("", console=Console(stderr=True), transient=True, refresh_per_second=4)
            self._live.__enter__()
        if self.rows:
            self._print(HEADER)
        return self

    def __exit__(self, *exc):
        if self._live is not None:
            self._live.__exit__(*exc)

    def _print(self, text: str) -> None:
        if self._live is not None:  # above the live line
            self._live.console.print(text, highlight=False, markup=False)
        else:
            import click

            click.echo(text, err=True)

    def start(self, learner) -> None:
        self._origin = (learner.counter("examples"), learner.counter("mistakes"))
        self._started = time.perf_counter()

    def locate(self, examples_before: int, length: int, done_before: float, done_after: float | None) -> None:
        """The next chunk: its first example follows `examples_before` of the model's; the input read
        is `done_before` of the whole before it and `done_after` after it (None: size unknown)."""
        self._chunk = (examples_before, max(length, 1), done_before, done_after)

    def row(self, model) -> None:
        if not self.rows:
            return
        learner = model.learner
        t = learner.counter("examples") - self._origin[0]
        m = learner.counter("mistakes") - self._origin[1]
        since_t, since_m = t - self._last[0], m - self._last[1]
        self._last = (t, m)
        first, length, before, after = self._chunk
        done = eta = ""
        total, size = learner.counter("examples"), learner.support_size()
        (t0, s0), self._growth = self._growth, (total, size)
        growth = math.log(size / s0) / math.log(total / t0) if min(t0, s0) > 0 and total > t0 else 0.0
        if after is not None:
            share = before + (after - before) * (total - first) / length
            done = f"{100 * share:.1f}%"
            if share > 0:
                left = time_left(time.perf_counter() - self._started, share, growth)
                eta = f"{int(left) // 3600}:{int(left) % 3600 // 60:02d}:{int(left) % 60:02d}"
        self._print(
            f"{m / t:<9.6f} {since_m / since_t:<9.6f} {t:>10,} {learner.support_size():>9,} {done:>8} {eta:>9}".rstrip()
        )

    def update(self, model) -> None:
        if self._live is not None:
            ln = model.learner
            t, m = ln.counter("examples"), ln.counter("mistakes")
            self._live.update(
                f"{t:,} examples, {100 * m / max(t, 1):.2f}% online mistakes, {ln.support_size():,} support vectors"
            )
