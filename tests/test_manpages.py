"""man/ is generated from the click definitions: every option of every command is in its page with
the help text we wrote, and groff renders each page without warnings.

(The pages are not compared byte for byte with a fresh generation: click's own formatting of
defaults and usage differs between click releases, and CI may install a newer one.)"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import click
import pytest

from budgetcli.cli import commands
from budgetcli.manpage import _esc

MAN = Path(__file__).resolve().parent.parent / "man"
COMMANDS = {command.name: command for command in commands()}


def test_every_command_has_a_page():
    names = {p.name for p in MAN.glob("*.1")}
    assert names == {"budgetlearn.1"} | {f"budgetlearn-{c}.1" for c in COMMANDS}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_page_lists_every_option_with_its_help(command):
    page = (MAN / f"budgetlearn-{command}.1").read_text()
    page_text = " ".join(page.split())
    for param in COMMANDS[command].params:
        if not isinstance(param, click.Option):
            continue
        for flag in param.opts:
            assert _esc(flag) in page, (
                f"{flag} missing from man/budgetlearn-{command}.1: python -m budgetcli.manpage man/"
            )
        if param.help:
            assert " ".join(_esc(param.help).split()) in page_text, f"help of {param.opts[0]} is stale"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_man_pages_render_without_warnings():
    for page in MAN.glob("*.1"):
        p = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True)
        assert p.returncode == 0 and p.stderr == "", (page.name, p.stderr)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_page_has_examples_whose_options_exist(command):
    """Each page's EXAMPLES (manpage.EXAMPLES) is in the page, and each budgetlearn command in it parses:
    a renamed option or a misspelt value would fail here."""
    import shlex

    from budgetcli.manpage import EXAMPLES

    page = (MAN / f"budgetlearn-{command}.1").read_text()
    assert ".SH EXAMPLES" in page
    for _, text in EXAMPLES[command]:
        for line in text.splitlines():
            (segment,) = [s for s in line.split("|") if s.strip().startswith("budgetlearn")]
            words = shlex.split(segment)
            assert _esc(line) in page
            cmd = COMMANDS[words[1]]
            args = words[2:]
            cmd.make_context(words[1], args[: args.index(">")] if ">" in args else args)
