"""Resource bounds: every worker count and every large buffer is sized by the work, never by a flag or
a model file's header alone.

- Workers: `workers(requested, pieces)` is min(requested, pieces of work, cores): more processes than
  pieces have nothing to do, more than cores only contend (a 2,000-line `predict --jobs 1000` started
  ~970 processes).  The caller says so when a request is lowered.
- Scores: a multiclass block's score matrix is rows × classes doubles; `score_rows(classes)` cuts a
  block so that it holds at most SCORE_BLOCK_BYTES (a hostile 155 kB model declaring 65,536 classes
  made `predict` of 5,000 lines take 2.85 GB).
- Classes: a multiclass model keeps one coefficient per (support vector, class), so it grows as
  classes × vectors.  Training warns past WARN_CLASSES label values and stops past MAX_CLASSES (the
  most a model file may declare: statecheck.MAX_CLASSES) or when the coefficients would pass
  MAX_COEFFICIENTS.

docs/RELIABILITY.md ("Resource bounds") tables what each command may take.
"""

from __future__ import annotations

import os

SCORE_BLOCK_BYTES = 32 << 20  # one block of class scores
WARN_CLASSES = 1000  # a label count past which training says that the model grows as classes × vectors
MAX_COEFFICIENTS = 1 << 24  # support vectors × classes of a multiclass model (128 MiB of doubles per array)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_jobs(jobs) -> int:
    """The one rule of every --jobs (predict, tune, train's dask cluster) and of `Sharding(jobs=)`: a
    whole number ≥ 1, or -1 for one per core (`workers`); ValueError otherwise."""
    if type(jobs) is not int or not (jobs >= 1 or jobs == -1):
        raise ValueError(f"--jobs {jobs!r}: give a whole number ≥ 1, or -1 for one per core")
    return jobs


def workers(requested: int, pieces: int, piece: str = "piece of work") -> tuple[int, str | None]:
    """(worker processes to start, a note when that is fewer than requested): min(requested, pieces,
    cores), with -1 meaning one per core.  `piece` names what is divided, for the note."""
    n_cores = cores()
    wanted = n_cores if requested == -1 else requested
    n = max(1, min(wanted, pieces, n_cores))
    if n >= wanted:
        return n, None
    plural = "s" if pieces != 1 else ""
    why = f"{pieces:,} {piece}{plural}" if pieces < n_cores else f"{n_cores} core{'s' if n_cores != 1 else ''}"
    return n, f"--jobs {requested} lowered to {n} ({why})"


def score_rows(classes: int, rows: int) -> int:
    """How many of `rows` examples to score at once so that their class scores fit SCORE_BLOCK_BYTES."""
    return max(1, min(rows, SCORE_BLOCK_BYTES // (8 * max(classes, 1))))
