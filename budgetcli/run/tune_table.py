"""tune's table as it is shown and written (tune.py makes its rows): the printed cells and their headings, the
CSV columns, and how a setting is described.  A row's figures are its task's (learning/task TUNE), in the
order of tune.Row.figures."""

from __future__ import annotations

import json

from ..base.atomic import output_file

PERCENT, PLAIN, AUC = (100, "{:.2f} ± {:.2f}"), (1, "{:.4g} ± {:.2g}"), (1, "{:.4f} ± {:.4f}")
# a figure's heading in the printed table, the factor it is shown with, and its format (mean ± std)
SHOWN = {
    "cv_accuracy": ("cv accuracy %", *PERCENT),
    "online_mistake_rate": ("online error %", *PERCENT),
    "test_accuracy": ("test accuracy %", *PERCENT),
    "cv_mse": ("cv MSE", *PLAIN),
    "online_mse": ("online MSE", *PLAIN),
    "test_mse": ("test MSE", *PLAIN),
    "online_flagged_fraction": ("online flagged % (ν %)", *PERCENT),
    "test_auc": ("test AUC", *AUC),
    "support_size": ("support size", 1, "{:.1f} ± {:.1f}"),
}


def describe(setting: dict) -> str:
    return (
        " ".join(
            f"{k.rstrip('_')}={v:g}" if isinstance(v, float) else f"{k.rstrip('_')}={v}" for k, v in setting.items()
        )
        or "(defaults)"
    )


def csv_columns(row) -> list[str]:
    """The table's columns after the grid's: rank, setting, runs, epochs, mean and std of each of the
    row's figures (a classification's: cv_accuracy, online_mistake_rate, support_size, test_accuracy,
    seconds; a regression's MSEs in place of the accuracies and mistakes; a novelty detector's online
    flagged fraction and test AUC), learned_nothing, warnings."""
    figures = [f"{key}_{stat}" for key in row.figures() for stat in ("mean", "std")]
    return ["rank", "setting", "runs", "epochs", *figures, "learned_nothing", "warnings"]


def write_csv(path: str, rows: list, grid_columns: list[str], epochs: int) -> None:
    """One line per setting, a column per grid name plus the table's (`csv_columns`; `epochs`: passes per
    run; `warnings`: a JSON list of strings); written as every output is (atomic.output_file), so a
    failure never leaves half a file."""
    columns = csv_columns(rows[0])
    with output_file(path) as f:
        import csv  # here: every command imports tune, few write a table

        w = csv.writer(f)
        w.writerow(grid_columns + columns)
        for rank, row in enumerate(rows, 1):
            d = row.to_dict()
            d["rank"], d["setting"], d["epochs"], d["warnings"] = (
                rank,
                describe(row.setting),
                epochs,
                json.dumps(row.warnings),
            )
            w.writerow([row.setting[c] for c in grid_columns] + ["" if d[c] is None else d[c] for c in columns])


def format_table(rows: list) -> tuple[list[str], list[list[str]], list[str]]:
    """The printed table's headings, its cells (rank, setting, mean ± std of each figure, seconds, notes) and
    the legend of the notes: a setting that learned nothing is marked "nothing learned", and each distinct
    warning gets a number [n] that its settings show.  The cross-validated figure has a column only when
    the runs have it; a figure missing from a row (no --test) is shown "–"; the flagged fraction is shown
    beside ν."""
    figures = rows[0].figures()
    keys = [k for k in figures if k != "seconds" and not (k.startswith("cv_") and rows[0].stats(k)[0] is None)]
    out, legend = [], []
    for rank, row in enumerate(rows, 1):
        cells = []
        for key in keys:
            _, scale, form = SHOWN[key]
            mean, std = row.stats(key)
            cells.append("–" if mean is None else form.format(scale * mean, scale * std))
            if key == "online_flagged_fraction":
                cells[-1] += f" ({100 * row.stats('nu')[0]:g})"
        notes = ["nothing learned"] if row.learned_nothing else []
        for w in row.warnings:
            if w not in legend:
                legend.append(w)
            notes.append(f"[{legend.index(w) + 1}]")
        out.append([str(rank), describe(row.setting), *cells, f"{row.stats('seconds')[0]:.2f}", " ".join(notes)])
    header = ["rank", "setting", *(SHOWN[k][0] for k in keys), "seconds", "notes"]
    return header, out, [f"[{n}] {w}" for n, w in enumerate(legend, 1)]
