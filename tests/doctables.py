"""Tables in docs/ that a test renders from its own cases: the page must hold exactly the rendered
table between its markers (a stale page fails the test), and `python -m tests.test_NAME` rewrites it."""

from __future__ import annotations

import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def assert_fresh(doc: Path, begin: str, end: str, rendered: str, module: str) -> None:
    text = doc.read_text(encoding="utf-8")
    table = text[text.index(begin) + len(begin) : text.index(end)].strip()
    assert table == rendered, f"{doc.relative_to(PROJECT_ROOT)} is stale: run python -m {module}"


def rewrite(doc: Path, begin: str, end: str, rendered: str) -> None:
    text = doc.read_text(encoding="utf-8")
    start, stop = text.index(begin) + len(begin), text.index(end)
    doc.write_text(text[:start] + "\n" + rendered + "\n" + text[stop:], encoding="utf-8")
    print(f"rewrote the table in {doc.relative_to(PROJECT_ROOT)}", file=sys.stderr)
