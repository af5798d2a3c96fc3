"""What `tune` prints: its table (rich) or its JSON, and the `train` command of the best setting."""

from __future__ import annotations

import json

import click

from ..base.core import KernelSpec
from ..run import grid as grid_, tune as tune_
from ..run.tune_table import format_table
from .common import _console


def print_json(algorithm, sort, permutations, run, rows, best: str) -> None:
    click.echo(
        json.dumps(
            {
                "algorithm": algorithm,
                "sort": sort,
                "permutations": permutations,
                "seed": run.seed,
                "epochs": run.epochs,
                "rows": [r.to_dict() for r in rows],
                "best": best,
            }
        )
    )


def print_table(algorithm, sort, rows, epochs, best: str) -> None:
    from rich.table import Table

    table = Table(
        title=f"{algorithm}, {len(rows[0].runs)} run(s) per setting of {epochs} pass(es), sorted by {sort}",
        title_justify="left",
    )
    header, cells, legend = format_table(rows)
    for col in header:
        table.add_column(col, justify="left" if col in ("setting", "notes") else "right")
    for row in cells:
        table.add_row(*row)
    console = _console(highlight=False)
    wide = len(header) > 7 or rows[0].runs[0].task_name != "classification"
    console.width = max(120 if wide else 100, console.width)
    console.print(table)
    click.echo(f"best: {best}")
    if any(r.learned_nothing for r in rows):
        click.echo("nothing learned: a run ended with f = 0 (0 support vectors); such settings rank last")
    for line in legend:  # whole lines, never wrapped
        click.echo(line)


def best_command(run, kernel, params, top, sort, data, folds) -> str:
    """The `budgetlearn train` command whose model the table's best setting is: with --folds the model its
    cross-validation estimates (train -v K of the same command prints its accuracy); else its best run's
    (`--shuffle --seed S` for a permuted run), as --save-best saves it."""
    from ..run.grid import train_command

    setting_kernel = {k: v for k, v in top.setting.items() if k in grid_.KERNEL_GRID}
    default = KernelSpec().params()
    given_kernel = {k: v for k, v in kernel.params().items() if v != default[k] and v is not None}
    more = ["--task", run.task] if run.task in ("regression", "novelty") else []
    more += [] if run.epochs == 1 else ["--epochs", str(run.epochs)]
    more += ["--hypothesis", run.hypothesis] if run.hypothesis else []
    more += ["--scale"] if run.scale else ["--scale-ranges", run.scale_ranges] if run.scale_ranges else []
    best = None if folds else tune_.best_run(top, sort)
    if best is not None and best.permutation >= 0:
        more += ["--shuffle", "--seed", str(best.seed)]
    elif run.seed:
        more += ["--seed", str(run.seed)]
    setting_params = {k: v for k, v in top.setting.items() if k not in grid_.KERNEL_GRID}
    return train_command(run.algorithm, given_kernel | setting_kernel, params | setting_params, data, tuple(more))
