"""Man pages generated from the click definitions, so they never drift from --help, and the
algorithm tables of docs/ALGORITHMS.md generated from the learners' declarations.

    python -m budgetcli.manpage man/ [docs/ALGORITHMS.md]   # rewrites man/budgetlearn.1,
                                # man/budgetlearn-COMMAND.1 and the tables between the markers
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from . import __version__  # noqa: F401
from .learning import algorithms  # noqa: F401  (registers every algorithm: the tables list them all)
from .cli import commands
from .entry import main as cli_main
from .base.registry import ALGORITHMS

EXIT_STATUS = [
    ("0", "success; also when the reader of standard output went away (| head -1): the command stops quietly"),
    (
        "1",
        "bad data (FILE:LINE named), bad model file, or an output that could not be written (a file, a "
        "device, or standard output: a full disk, an I/O error); one line on stderr",
    ),
    ("2", "usage error"),
    ("130", "interrupted (Ctrl-C); no model written"),
    ("143", "terminated (SIGTERM); no model written"),
]
ENVIRONMENT = [
    (
        "NUMBA_CACHE_DIR",
        "where compiled code is cached; by default numba's choice, else a directory of "
        "this user's own under the temporary directory (budgetlearn-numba-UID)",
    ),
    (
        "OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS",
        "numpy's BLAS threads; budgetlearn sets each to 1 when unset (its loops are single-threaded, idle "
        "BLAS threads spin, and a sharded run must compute alike in the driver and on dask's workers, "
        "which run BLAS on one thread)",
    ),
]


# Each page's EXAMPLES: (what it does, the command), runnable from a clone (sample_data/).
EXAMPLES = {
    "train": [
        (
            "Train with the defaults (projectron++ for two labels) and write sample_data/a9a.model",
            "budgetlearn train sample_data/a9a",
        ),
        (
            "Choose the algorithm, its budget and the kernel width",
            "budgetlearn train -a rbp -B 200 --gamma 0.05 sample_data/a9a -o rbp.model",
        ),
        (
            "Read compressed data from a pipe, continue a model every night",
            "zcat day.svm.gz | budgetlearn train --resume m.model - -o m.model",
        ),
        (
            "One model over several shards mixed every 10,000 examples",
            "budgetlearn train -a perceptron part-*.svm -o m.model",
        ),
        (
            "Scale every feature onto [-1, 1] as svm-scale does, inside the model",
            "budgetlearn train --scale sample_data/a9a -o scaled.model",
        ),
        ("5-fold cross-validation, as svm-train -v 5 (no model written)", "budgetlearn train -v 5 sample_data/a9a"),
        (
            "Weigh an update on the +1 class three times, as svm-train -w1 3 (more recall of +1)",
            "budgetlearn train -w1 3 sample_data/a9a -o weighted.model",
        ),
    ],
    "online-to-batch": [
        (
            "The exact average of the hypotheses, projected back within the budget",
            "budgetlearn online-to-batch -a rbp --method projected-average sample_data/a9a -o avg.model",
        ),
    ],
    "calibrate": [
        (
            "Fit probabilities on a held-out file, then write them as svm-predict -b 1 does",
            "budgetlearn calibrate a9a.model held_out.svm -o a9a.model\n"
            "budgetlearn predict --proba a9a.model sample_data/a9a.t",
        ),
    ],
    "predict": [
        ("One label per line", "budgetlearn predict sample_data/a9a.model sample_data/a9a.t -o a9a.pred"),
        ("Labels and scores on two cores", "budgetlearn predict --scores -j 2 m.model big.svm > scores.txt"),
        (
            "The +1 label wherever the score passes -0.5 (more recall of +1, less precision)",
            "budgetlearn predict --threshold -0.5 sample_data/a9a.model sample_data/a9a.t",
        ),
    ],
    "eval": [
        ("Accuracy, per-class table, AUC", "budgetlearn eval sample_data/a9a.model sample_data/a9a.t"),
        ("The same as JSON", "budgetlearn eval --json m.model test.svm | jq .accuracy"),
    ],
    "export": [("A LIBSVM model svm-predict reads", "budgetlearn export m.model -o m.libsvm")],
    "import": [
        (
            "Go on learning from a LIBSVM model",
            "budgetlearn import svm.model -o m.model\nbudgetlearn train --resume m.model more.svm -o m.model",
        ),
    ],
    "info": [("What a model holds", "budgetlearn info sample_data/a9a.model")],
    "plot": [
        (
            "Two learning curves in one figure",
            "budgetlearn train -a rbp --curve rbp.csv sample_data/a9a -o rbp.model\n"
            "budgetlearn train -a projectron++ --curve pp.csv sample_data/a9a -o pp.model\n"
            "budgetlearn plot rbp.csv pp.csv -o curves.png",
        ),
    ],
    "tune": [
        (
            "Rank γ and B by held-out accuracy",
            "budgetlearn tune -a rbp --grid gamma=0.01,0.05,0.1 --grid budget=100,400 sample_data/a9a",
        ),
        (
            "Rank γ by 5-fold cross-validation over grid.py's range, and print the best train command",
            "budgetlearn tune -a projectron++ --grid 'gamma=2**-7..2**-3' --folds 5 sample_data/a9a",
        ),
    ],
    "algorithms": [("The names, parameters and papers", "budgetlearn algorithms | less")],
    "generate": [
        (
            "A drifting stream of the Shifting Perceptron's paper",
            "budgetlearn generate shifting-7 -n 20000 -o drift.svm",
        )
    ],
    "scale": [
        (
            "Scale the training set onto [-1, 1], save its ranges, and scale the test set by them (as svm-scale)",
            "budgetlearn scale -s a9a.range sample_data/a9a > a9a.scale\n"
            "budgetlearn scale -r a9a.range sample_data/a9a.t > a9a.t.scale",
        ),
        (
            "Non-negative sparse features onto [0, 1], zeros kept zero",
            "budgetlearn scale -l 0 sample_data/a9a -o a9a.scale",
        ),
    ],
    "serve": [
        (
            "Learn and answer a stream on standard input, progressive predictions on standard output",
            "cat sample_data/a9a | budgetlearn serve -a rbp --budget 300 --gamma 0.5 --save live.model > answers.txt",
        ),
        (
            "Serve on 127.0.0.1:7070, checkpointing every 10,000 examples and every minute",
            "budgetlearn serve --model live.model --save live.model --port 7070 --checkpoint-every 10000 "
            "--checkpoint-seconds 60",
        ),
        (
            "Answer from a model without learning, on a Unix socket",
            "budgetlearn serve --model live.model --readonly --socket ./budgetlearn.sock",
        ),
    ],
}


def _esc(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # groff reads ASCII: γ, σ, ‖ ... become its Unicode escapes \[uXXXX]
    for char, ascii_text in (("\u2016", "||"), ("\u2082", "2")):  # glyphs groff lacks: ‖ and ₂
        text = text.replace(char, ascii_text)
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def _paragraphs(help_text: str | None) -> str:
    paragraphs = inspect.cleandoc(click.unstyle(help_text or "")).split("\n\n")
    return "\n.PP\n".join(_esc(" ".join(p.split())) for p in paragraphs)


def _header(name: str, summary: str) -> list[str]:
    return [
        f'.TH {name.upper()} 1 "" "budgetlearn {__version__}" "User Commands"',
        ".SH NAME",
        f"{_esc(name)} \\- {_esc(summary)}",
    ]


def command_page(name: str, cmd: click.Command) -> str:
    # a child of the group's context, so it inherits the group's settings (-h as well as --help)
    ctx = click.Context(cmd, info_name=name, parent=click.Context(cli_main, info_name="budgetlearn"))
    lines = _header(f"budgetlearn-{name}", cmd.get_short_help_str(limit=200))
    lines += [
        ".SH SYNOPSIS",
        f".B budgetlearn {name}",
        _esc(" ".join(cmd.collect_usage_pieces(ctx))),
        ".SH DESCRIPTION",
        _paragraphs(cmd.help),
        ".SH OPTIONS",
    ]
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
        if record is None:
            continue
        flags, text = record
        lines += [".TP", f".B {_esc(flags)}", _esc(text)]
    lines += [".SH EXAMPLES"]
    for what, command in EXAMPLES[name]:
        lines += [".PP", _esc(what) + ":", ".PP", ".nf", ".RS", _esc(command), ".RE", ".fi"]
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_STATUS:
        lines += [".TP", f".B {code}", _esc(meaning)]
    lines += [".SH SEE ALSO", ".BR budgetlearn (1)"]
    return "\n".join(lines) + "\n"


def main_page() -> str:
    lines = _header("budgetlearn", "budgeted online kernel learning")
    lines += [
        ".SH SYNOPSIS",
        ".B budgetlearn",
        "COMMAND [OPTIONS] [ARGS]...",
        ".SH DESCRIPTION",
        _paragraphs(cli_main.help),
        ".SH COMMANDS",
    ]
    for name, cmd in sorted(_commands().items()):
        lines += [".TP", f".BR budgetlearn\\-{_esc(name)} (1)", _esc(cmd.get_short_help_str(limit=200))]
    lines += [".SH EXAMPLES"]
    for what, command in (EXAMPLES["train"][0], EXAMPLES["eval"][0], EXAMPLES["predict"][0]):
        lines += [".PP", _esc(what) + ":", ".PP", ".nf", ".RS", _esc(command), ".RE", ".fi"]
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_STATUS:
        lines += [".TP", f".B {code}", _esc(meaning)]
    lines += [".SH ENVIRONMENT"]
    for name, meaning in ENVIRONMENT:
        lines += [".TP", f".B {_esc(name)}", _esc(meaning)]
    return "\n".join(lines) + "\n"


def table_markers(multiclass: bool) -> tuple[str, str]:
    kind = "multiclass" if multiclass else "binary"
    return (
        f"<!-- {kind} algorithms: generated by python -m budgetcli.manpage from the learners' declarations -->",
        f"<!-- end of {kind} algorithms -->",
    )


def algorithm_table(multiclass: bool) -> str:
    """docs/ALGORITHMS.md's table of the binary or the multiclass algorithms: name, summary, parameters with
    their defaults, how it takes an example's weight w (`train -w`, sample weights), paper."""
    rows = ["| name | what it does | parameters | weight w | paper |", "|---|---|---|---|---|"]
    for name, cls in sorted(ALGORITHMS.items()):
        if cls.multiclass != multiclass:
            continue
        params = ", ".join(f"`{p.flags[0]}` ({p.default_text or _number(p.default)})" for p in cls.params) or "–"
        summary = cls.summary.replace("|", "\\|")
        rows.append(f"| `{name}` | {summary} | {params} | {cls.weighting or 'refused'} | {cls.paper} |")
    return "\n".join(rows)


def _number(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def rewrite_tables(readme: Path) -> None:
    text = readme.read_text(encoding="utf-8")
    for multiclass in (False, True):
        begin, end = table_markers(multiclass)
        start, stop = text.index(begin) + len(begin), text.index(end)
        text = text[:start] + "\n" + algorithm_table(multiclass) + "\n" + text[stop:]
    readme.write_text(text, encoding="utf-8")


def _commands() -> dict:
    return {cmd.name: cmd for cmd in commands()}


def pages() -> dict[str, str]:
    out = {"budgetlearn.1": main_page()}
    for name, cmd in _commands().items():
        out[f"budgetlearn-{name}.1"] = command_page(name, cmd)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "man")
    target.mkdir(exist_ok=True)
    for fname, text in pages().items():
        (target / fname).write_text(text)
    if len(sys.argv) > 2:
        rewrite_tables(Path(sys.argv[2]))
