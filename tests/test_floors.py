"""The package is built in floors, each a folder, bottom to top: no module imports from a floor above its own
(docs/DEVELOPING.md draws them).  Every import counts, a function's own included: an import put off to the
first call is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "budgetcli"

# bottom to top; the package's root (api, sklearn, river, entry, cli/, serving/, ...) is the top floor, the edges
FLOORS = ("base", "numerics", "learning", "io", "model", "run")
EDGES = len(FLOORS)


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(module: str) -> int:
    parts = module.split(".")
    return FLOORS.index(parts[1]) if len(parts) > 1 and parts[1] in FLOORS else EDGES


def imported(path: Path, package: Path, modules: set[str]):
    """(line, module) for every module of the package that the file at `path` imports, anywhere in it."""
    name = module_name(path, package)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, node.module] if node.module else base)
            # `from . import x` names a module x when there is one, else a value of the package
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] == package.name and target != package.name:  # the root's __init__: the version
                yield node.lineno, target


def upward_imports(package: Path = PACKAGE) -> list[str]:
    files = sorted(package.rglob("*.py"))
    modules = {module_name(p, package) for p in files}
    return [
        f"{path.relative_to(package.parent)}:{line} imports {target} from a floor above its own"
        for path in files
        for line, target in imported(path, package, modules)
        if floor(target) > floor(module_name(path, package))
    ]


def test_every_module_lives_on_a_floor_or_at_the_edges():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert set(FLOORS) <= folders
    assert folders - set(FLOORS) == {"cli", "serving", "sklearn", "river"}  # the edges' folders, beside api, ...


def test_no_module_imports_from_a_floor_above_its_own():
    assert upward_imports() == []


def test_an_upward_import_is_caught(tmp_path):
    """A copy of the package's folders with one upward import planted, at the bottom and inside a function."""
    package = tmp_path / "budgetcli"
    for floor_name in FLOORS:
        (package / floor_name).mkdir(parents=True)
        (package / floor_name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("__version__ = '0'\n")
    (package / "api.py").write_text("from .run import session\n")
    (package / "run" / "session.py").write_text("from ..learning import learner\nfrom .. import __version__\n")
    (package / "learning" / "learner.py").write_text("def f():\n    from ..model.spec import TrainSpec\n")
    (package / "model" / "spec.py").write_text("")
    (package / "base" / "core.py").write_text("import budgetcli.api\n")
    assert upward_imports(package) == [
        "budgetcli/base/core.py:1 imports budgetcli.api from a floor above its own",
        "budgetcli/learning/learner.py:2 imports budgetcli.model.spec from a floor above its own",
    ]
