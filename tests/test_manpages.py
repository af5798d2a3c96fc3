"""man/ holds exactly what the click definitions generate, and groff renders it without warnings."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from budgetcli.manpage import pages

MAN = Path(__file__).resolve().parent.parent / "man"


def test_man_pages_are_generated_from_the_cli():
    expected = pages()
    assert sorted(p.name for p in MAN.glob("*.1")) == sorted(expected)
    for name, text in expected.items():
        assert (MAN / name).read_text() == text, f"man/{name} is stale: run python -m budgetcli.manpage man/"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_man_pages_render_without_warnings():
    for page in MAN.glob("*.1"):
        p = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True)
        assert p.returncode == 0 and p.stderr == "", (page.name, p.stderr)
