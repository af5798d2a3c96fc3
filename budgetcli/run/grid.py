"""A `tune --grid`: its names and value lists, with ranges as LIBSVM's grid.py takes them, its settings, and
the `train` command of a setting.

Values are separated by commas; each is a number, a power `B**E`, or a range:
- `B**E1..B**E2` — the powers B**E1, B**E(1+1), …, B**E2 (`2**-5..2**3`, `10**-4..10**0`), as grid.py's
  `-log2c begin,end,step`; `B**E1..B**E2:S` steps the exponent by S (`2**-15..2**3:2`);
- `A..Z:S` — A, A + S, …, up to Z (`100..500:100`; for a whole-number parameter S may be left out: 1).
A range may run downwards (`2**3..2**-5:-2`).  Powers are computed as float(B) ** E, so `2**-5` is 0.03125
and `10**-4` is 1e-04 exactly as Python writes it.
"""

from __future__ import annotations

import itertools
import math

from ..base import registry
from ..numerics.kernels import KERNEL_PARAMS

MAX_VALUES = 10_000  # a range longer than this is a typo, not a grid
# kernel settings a grid may vary, with their types; the rest are the algorithms' parameters
KERNEL_GRID = {p.name: p.type for p in KERNEL_PARAMS.values() if not p.choices}  # all but --kernel


def grid_names(algorithm: str) -> dict[str, tuple[str, type]]:
    """Names a --grid may use for `algorithm` -> (canonical name, type): the canonical name, the
    long flag without dashes and the short flag (`budget`, `B`; `lambda_`, `lambda`; `eval-size`)."""
    names = {k: (k, t) for k, t in KERNEL_GRID.items()}
    for p in registry.get(algorithm).params:
        for alias in (p.name, p.name.rstrip("_"), p.name.replace("_", "-"), *(f.lstrip("-") for f in p.flags)):
            names[alias] = (p.name, p.type)
    return names


def parse_grid(specs: list[str], algorithm: str) -> list[tuple[str, list]]:
    """['eta=0.05,0.1', 'gamma=0.01'] -> [('eta', [0.05, 0.1]), ('gamma', [0.01])]; ValueError on
    an unknown name, a repeated name, a bad or repeated value."""
    names = grid_names(algorithm)
    out: list[tuple[str, list]] = []
    for spec in specs:
        name, eq, values = spec.partition("=")
        name = name.strip()
        if not eq or not values.strip():
            raise ValueError(f"--grid {spec!r}: expected NAME=V1,V2,...")
        if name not in names:
            known = sorted(set(k for k in names if not k.endswith("_")))
            raise ValueError(f"--grid {spec!r}: {algorithm} has no parameter {name!r} (grid names: {', '.join(known)})")
        canonical, typ = names[name]
        if canonical in (n for n, _ in out):
            raise ValueError(f"--grid: {name} given twice")
        parsed = []
        for text in values.split(","):
            try:
                expanded = expand(text, typ, name)  # a value, or a range (2**-5..2**3)
            except ValueError as exc:
                raise ValueError(f"--grid {spec!r}: {exc}") from None
            for v in expanded:
                if v in parsed:
                    raise ValueError(f"--grid {spec!r}: value {v:g} given twice")
                parsed.append(v)
        out.append((canonical, parsed))
    return out


def settings_of(grid: list[tuple[str, list]]) -> list[dict]:
    """The grid's points, the last --grid varying fastest."""
    names = [n for n, _ in grid]
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in grid))]


def expand(text: str, typ: type, name: str) -> list:
    """The values of one comma-separated item (`typ`: the parameter's type); ValueError naming the item."""
    item = text.strip()
    if ".." not in item:
        return [_value(item, typ)]
    first, _, rest = item.partition("..")
    last, colon, step_text = rest.partition(":")
    base, power = _power(first), _power(last)
    if (base is None) != (power is None) or (base and base[0] != power[0]):
        raise ValueError(f"{item!r}: a range is B**E1..B**E2[:S] (one base B) or A..Z[:S]")
    if base is not None:
        step = _number(step_text, int) if colon else (1 if power[1] >= base[1] else -1)
        exponents = _steps(base[1], power[1], step, item)
        return [_typed(float(base[0]) ** e, typ, item) for e in exponents]
    start, stop = _number(first, typ), _number(last, typ)
    if not colon and typ is not int:
        raise ValueError(f"{item!r}: give the step of a range of {name} values (A..Z:S)")
    step = _number(step_text, typ) if colon else (1 if stop >= start else -1)
    return [_typed(v, typ, item) for v in _steps(start, stop, step, item)]


def _steps(start, stop, step, item: str) -> list:
    if step == 0 or (stop - start) * step < 0:
        raise ValueError(f"{item!r}: the step {step:g} does not lead from {start:g} to {stop:g}")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_VALUES:
        raise ValueError(f"{item!r}: {count:,} values, more than {MAX_VALUES:,}")
    values = [start + i * step for i in range(count)]
    return [v if isinstance(v, int) else float(f"{v:.12g}") for v in values]  # 0.1 + 2·0.1 is 0.3


def _power(text: str) -> tuple | None:
    """(B, E) of `B**E` (E a whole number), else None."""
    if "**" not in text:
        return None
    base, _, exponent = text.partition("**")
    try:
        return float(base), int(exponent)
    except ValueError:
        raise ValueError(f"{text!r} is not a power B**E (E a whole number)") from None


def _number(text: str, typ: type):
    try:
        v = typ(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a valid {typ.__name__}") from None
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{text.strip()!r} is not a finite number")
    return v


def _value(text: str, typ: type):
    power = _power(text)
    if power is None:
        return _number(text, typ)
    return _typed(float(power[0]) ** power[1], typ, text)


def _typed(v: float, typ: type, item: str):
    if typ is int:
        if not float(v).is_integer():
            raise ValueError(f"{item!r}: {v:g} is not a whole number")
        return int(v)
    if typ is float and not math.isfinite(v):
        raise ValueError(f"{item!r}: {v} is not a finite number")
    return typ(v)


def train_command(algorithm: str, kernel: dict, params: dict, data: str, more: tuple = ()) -> str:
    """`budgetlearn train -a NAME OPTIONS... DATA`: the command whose model a setting is (kernel options
    and parameters by their long flags, as `budgetlearn train --help` lists them), with `more` options."""
    import shlex

    words = ["budgetlearn", "train", "-a", algorithm]
    for name, value in list(kernel.items()) + list(params.items()):
        flags = KERNEL_PARAMS[name].flags if name in KERNEL_PARAMS else registry.PARAMS[name].flags
        flag = next((f for f in flags if f.startswith("--")), flags[0])
        words += [flag, repr(value) if isinstance(value, float) else str(value)]
    return " ".join(shlex.quote(w) for w in words + list(more) + [data])
