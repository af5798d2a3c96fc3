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

from .train_commands import online_to_batch, train
from .scoring import calibrate, eval_, predict
from .models import algorithms, export, import_, info
from .data import generate, plot, scale
from .tuning import tune
from .serve import serve

COMMANDS = (
    train,
    online_to_batch,
    calibrate,
    predict,
    eval_,
    export,
    import_,
    info,
    plot,
    tune,
    algorithms,
    generate,
    scale,
    serve,
)
