"""What the commands share: the option types, the options generated from the declarations (algorithm
and kernel parameters), a model loaded or one line, outputs checked against inputs."""

from __future__ import annotations

import errno
import math
import os
import zipfile

import click

from ..learning import algorithms
from ..base import bounds, registry
from ..base.exits import fail
from ..base.atomic import (
    SameFileError,
    refuse_same_files,
)
from ..base.core import DataError
from ..numerics.kernels import KERNEL_PARAMS
from ..model.model import Model
from ..base.modelfile import ModelFileError


ALGORITHMS = algorithms.load_all()
SEED = click.IntRange(min=0)  # numpy's generators (--shuffle, tune's permutations) take no negative seed


class AlgorithmName(click.ParamType):
    """An algorithm's name in any case; a typo gets "did you mean" (registry.canonical)."""

    name = "algorithm"

    def convert(self, value, param, ctx):
        try:
            return registry.canonical(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(n) for n in sorted(ALGORITHMS) if n.startswith(incomplete.lower())]


class Jobs(click.types.IntParamType):
    """A --jobs value, by the rule every edge checks (bounds.check_jobs)."""

    def convert(self, value, param, ctx):
        try:
            return bounds.check_jobs(super().convert(value, param, ctx))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


# positional paths: typed so that the shells complete them as files (click's Path, no check made here)
class FiniteFloat(click.types.FloatParamType):
    """A number option that must be finite: nan and inf are refused in one line (a label is never either)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE_FLOAT = FiniteFloat()
DATA_PATH = click.Path(allow_dash=True)
MODEL_PATH = click.Path()
WRITTEN = {"average": "running-average", "last": "online"}  # train --hypothesis: the spec's hypothesis


def _refuse_same_files(inputs, outputs, may_replace=()) -> None:
    """One line and exit 2, as `cp` refuses, when an output is an input or another output
    (atomic.refuse_same_files); checked before anything is opened for writing."""
    try:
        refuse_same_files(inputs, outputs, may_replace)
    except SameFileError as exc:
        fail(str(exc), 2)


def _console(**kwargs):
    """A rich console on stdout whose closed pipe ends the command as every other write does (rich's
    own handling exits 1)."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self):
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return StdoutConsole(**kwargs)


def _param_options(f):
    """One click option per algorithm parameter, generated from its one declaration (registry.PARAMS)."""
    for name in sorted(registry.params(), reverse=True):
        p = registry.PARAMS[name]
        by_default: dict = {}
        for algo, cls in sorted(ALGORITHMS.items()):
            for q in cls.params:
                if q.name == name:
                    by_default.setdefault(q.default_text or q.default, []).append(algo)
        defaults = "; ".join(
            f"{d:g} for {', '.join(algos)}" if isinstance(d, float) else f"{d} for {', '.join(algos)}"
            for d, algos in by_default.items()
        )
        f = click.option(*p.flags, name, type=p.type, default=None, help=f"{p.help}. Default: {defaults}.")(f)
    return f


def _kernel_options(f):
    """One click option per kernel parameter, from its one declaration (kernels.KERNEL_PARAMS)."""
    for p in reversed(KERNEL_PARAMS.values()):
        default = f"; default {p.default_text}" if p.default_text else ""
        f = click.option(
            *p.flags,
            p.name,
            type=click.Choice(p.choices) if p.choices else p.type,
            default=p.default,
            show_default=p.default is not None,
            help=p.help + default + ".",
        )(f)
    return f


def _given(ctx, name: str) -> bool:
    return ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT


def _scale(scale: bool, ranges_path: str | None):
    """TrainSpec.scale of --scale and --scale-ranges FILE (read here: a bad file is one line, exit 1)."""
    if ranges_path is None:
        return scale
    if scale:
        raise click.UsageError("--scale takes the data's ranges, --scale-ranges a file's; choose one")
    from ..model.ranges import read_ranges

    try:
        return read_ranges(ranges_path)
    except DataError as exc:
        fail(str(exc))


def _is_model(path: str) -> bool:
    if not os.path.isfile(path):  # never opens a FIFO or a device
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"PK" and zipfile.is_zipfile(f) and "__header__.npy" in zipfile.ZipFile(f).namelist()
    except OSError:
        return False


def _load(model_path, resume: bool = False, data: str | None = None) -> Model:
    """MODEL loaded, or one line; with `data`, the hint that the two were swapped when DATA is the model."""
    try:
        return Model.load(model_path, resume=resume)
    except ModelFileError as exc:
        ctx = click.get_current_context(silent=True)
        if data is not None and data != "-" and _is_model(data) and ctx is not None:
            fail(f"{exc}; the order is MODEL DATA: `budgetlearn {ctx.info_name} {data} {model_path}`", 2)
        fail(str(exc))
