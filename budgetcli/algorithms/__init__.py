"""One module per algorithm or small family; each registers its learners in budgetcli.registry.
Importing this package imports them all (once per process: a walk of the package is not free)."""

from __future__ import annotations

import importlib
import pkgutil

from .. import registry

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

ALGORITHMS = registry.ALGORITHMS  # every algorithm, by name


def load_all() -> dict[str, type]:
    """Every algorithm, by name (registered when this package was imported)."""
    return ALGORITHMS
