"""Shell completion through click: `_BUDGETLEARN_COMPLETE=bash_source budgetlearn` prints the script,
and the script's requests complete commands, options and option values."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.entry import main

ROOT = Path(__file__).resolve().parents[1]


def complete(env: dict) -> str:
    """What the `budgetlearn` entry point prints with these environment variables set."""
    r = CliRunner().invoke(main, [], prog_name="budgetlearn", env=env)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.parametrize(
    "shell,marker",
    [
        ("bash", "complete -o nosort -F _budgetlearn_completion budgetlearn"),
        ("zsh", "compdef _budgetlearn_completion budgetlearn"),
        ("fish", "complete --no-files --command budgetlearn"),
    ],
)
def test_the_completion_script_is_produced(shell, marker):
    assert marker in complete({"_BUDGETLEARN_COMPLETE": f"{shell}_source"})


def bash_words(line: str) -> list[str]:
    words = line.split(" ")
    out = complete({"_BUDGETLEARN_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})
    return [item.split(",", 1)[1] for item in out.splitlines()]


def test_completes_commands_options_and_algorithms():
    assert bash_words("budgetlearn tr") == ["train"]
    assert set(bash_words("budgetlearn ")) >= {"train", "predict", "eval", "export", "info", "plot", "scale"}
    assert "--restore-ranges" in bash_words("budgetlearn scale --re")
    assert "--curve-every" in bash_words("budgetlearn train --curve")
    assert bash_words("budgetlearn train -a projectron") == ["projectron", "projectron++", "projectron-alma2"]
    assert bash_words("budgetlearn export m.model --format ") == ["libsvm"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_bash_itself_completes_tr_to_train(tmp_path):
    script = complete({"_BUDGETLEARN_COMPLETE": "bash_source"})
    # an executable `budgetlearn` on PATH standing in for the installed script (same entry point)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "budgetlearn"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from budgetcli.entry import main\nsys.exit(main(prog_name='budgetlearn'))\n"
    )
    exe.chmod(0o755)
    (tmp_path / "t.sh").write_text(
        script
        + """
COMP_WORDS=(budgetlearn tr); COMP_CWORD=1
_budgetlearn_completion budgetlearn tr budgetlearn
printf '%s\\n' "${COMPREPLY[@]}"
"""
    )
    env = os.environ | {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(["bash", str(tmp_path / "t.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["train"]


def test_positional_paths_complete_as_files():
    """Every positional path is typed as one, so that bash, zsh and fish complete file names there (click
    answers `file` and the shell's own file completion lists them)."""

    def items(line):
        words = line.split(" ")
        env = {"_BUDGETLEARN_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
        return complete(env).splitlines()

    for line in (
        "budgetlearn train sam",
        "budgetlearn train -a rbp sam",
        "budgetlearn predict sam",
        "budgetlearn predict m.model sam",
        "budgetlearn eval m.model sam",
        "budgetlearn calibrate m.model sam",
        "budgetlearn info sam",
        "budgetlearn export sam",
        "budgetlearn import sam",
        "budgetlearn plot sam",
        "budgetlearn tune -a rbp sam",
        "budgetlearn online-to-batch sam",
    ):
        assert items(line) == ["file,sam"], line
