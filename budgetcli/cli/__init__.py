"""The `budgetlearn` command: parses options, wires the pipeline stages together, prints.

Exit codes: 0 success; 1 bad data, bad model file, an output that cannot be written (standard
output included: a full disk, an I/O error) or a failed run (one line on stderr naming the file and
line); 2 bad usage (unknown option, bad parameter value); 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM).  A reader of standard output that goes away (`| head -1`) ends the command quietly with
exit 0, as a pipeline expects.  Results go to stdout, summaries and progress to stderr.

A module per command or family of commands, each thin (the work is the package's: pipeline, tune,
predict, export, ...), over `common` (what they share: option types, the options generated from the
declarations, a model loaded or one line):

    train_options    the options of train and online-to-batch, and their help (`-a NAME --help`)
    train_commands   train, online-to-batch, train -v K
    training         a training run: its spec from the options, inputs and outputs checked, the summary
    scoring          predict, eval, calibrate
    models           export, import, info, algorithms
    data             generate, scale, plot
    tuning           tune
    serve            serve (the server itself: serving/)
"""

from __future__ import annotations

import importlib

# every command, in the order `budgetlearn --help` lists them: its name, and the module and function that
# make it.  The group (entry.py) imports a command's module when that command is named, so `train` does not
# load tune's, export's or plot's modules (~5-10 ms of every short run).
WHERE = {
    "train": ("train_commands", "train"),
    "online-to-batch": ("train_commands", "online_to_batch"),
    "calibrate": ("scoring", "calibrate"),
    "predict": ("scoring", "predict"),
    "eval": ("scoring", "eval_"),
    "export": ("models", "export"),
    "import": ("models", "import_"),
    "info": ("models", "info"),
    "plot": ("data", "plot"),
    "tune": ("tuning", "tune"),
    "algorithms": ("models", "algorithms"),
    "generate": ("data", "generate"),
    "scale": ("data", "scale"),
    "serve": ("serve", "serve"),
}


def command(name: str):
    """The click command of this name (None for a name that is not one)."""
    if name not in WHERE:
        return None
    module, function = WHERE[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def commands() -> tuple:
    """Every command, in WHERE's order (the man pages, `budgetlearn --help`)."""
    return tuple(command(name) for name in WHERE)
