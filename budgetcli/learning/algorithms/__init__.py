"""One module per algorithm or small family; each registers its learners in budgetcli.base.registry.
Importing this package imports them all, in the order of their names (the modules beside this file:
a listing of the directory, where pkgutil's walk of the package took ~2 ms of every process)."""

from __future__ import annotations

import importlib
import os

from ...base import registry

for _name in sorted(os.listdir(__path__[0])):
    if _name.endswith(".py") and _name != "__init__.py":
        importlib.import_module(f"{__name__}.{_name[:-3]}")

ALGORITHMS = registry.ALGORITHMS  # every algorithm, by name


def load_all() -> dict[str, type]:
    """Every algorithm, by name (registered when this package was imported)."""
    return ALGORITHMS
