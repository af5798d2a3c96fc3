"""budgetlearn: budgeted online kernel learning.

The Python API (api.py): `TrainSpec`, `KernelSpec`, `Sharding`, `train`, `load`, `predictions`, `accuracy`,
`evaluate`, `calibrate`, `Model`, loaded on first use, so that `import budgetcli` (and `budgetlearn
--version`) stays light.
"""

__version__ = "0.1.0"

_API = {
    "TrainSpec": "model.spec",
    "Sharding": "model.spec",
    "KernelSpec": "base.core",
    "DataError": "base.core",
    "Model": "model.model",
    "train": "api",
    "load": "api",
    "predictions": "api",
    "accuracy": "api",
    "evaluate": "api",
    "calibrate": "api",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'budgetcli' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_API[name]}", __name__), name)
