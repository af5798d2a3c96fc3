"""Man pages generated from the click definitions, so they never drift from --help.

    python -m budgetcli.manpage man/      # rewrites man/budgetlearn.1 and man/budgetlearn-COMMAND.1
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from . import __version__
from .cli import main as cli_main

EXIT_STATUS = [("0", "success; also when the reader of standard output went away (| head -1): the command stops "
                     "quietly"),
               ("1", "bad data (FILE:LINE named), bad model file, or an output that could not be written (a file, a "
                     "device, or standard output: a full disk, an I/O error); one line on stderr"),
               ("2", "usage error"), ("130", "interrupted (Ctrl-C); no model written"),
               ("143", "terminated (SIGTERM); no model written")]


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
    return [f'.TH {name.upper()} 1 "" "budgetlearn {__version__}" "User Commands"', ".SH NAME",
            f"{_esc(name)} \\- {_esc(summary)}"]


def command_page(name: str, cmd: click.Command) -> str:
    # a child of the group's context, so it inherits the group's settings (-h as well as --help)
    ctx = click.Context(cmd, info_name=name, parent=click.Context(cli_main, info_name="budgetlearn"))
    lines = _header(f"budgetlearn-{name}", cmd.get_short_help_str(limit=200))
    lines += [".SH SYNOPSIS", f".B budgetlearn {name}", _esc(" ".join(cmd.collect_usage_pieces(ctx))),
              ".SH DESCRIPTION", _paragraphs(cmd.help), ".SH OPTIONS"]
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
        if record is None:
            continue
        flags, text = record
        lines += [".TP", f".B {_esc(flags)}", _esc(text)]
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_STATUS:
        lines += [".TP", f".B {code}", _esc(meaning)]
    lines += [".SH SEE ALSO", ".BR budgetlearn (1)"]
    return "\n".join(lines) + "\n"


def main_page() -> str:
    lines = _header("budgetlearn", "budgeted online kernel learning")
    lines += [".SH SYNOPSIS", ".B budgetlearn", "COMMAND [OPTIONS] [ARGS]...", ".SH DESCRIPTION",
              _paragraphs(cli_main.help), ".SH COMMANDS"]
    for name, cmd in sorted(cli_main.commands.items()):
        lines += [".TP", f".BR budgetlearn\\-{_esc(name)} (1)", _esc(cmd.get_short_help_str(limit=200))]
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_STATUS:
        lines += [".TP", f".B {code}", _esc(meaning)]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    out = {"budgetlearn.1": main_page()}
    for name, cmd in cli_main.commands.items():
        out[f"budgetlearn-{name}.1"] = command_page(name, cmd)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "man")
    target.mkdir(exist_ok=True)
    for fname, text in pages().items():
        (target / fname).write_text(text)
