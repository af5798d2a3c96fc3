"""`budgetlearn plot`: online error rate (a regression's online mean squared error) and support size against
examples, from `train --curve` CSVs.

matplotlib is an optional extra (`pip install 'budgetlearn[plot]'`); it is imported only here, and
drawn through its Agg canvas directly (no pyplot), so no display or global state is involved.
"""

from __future__ import annotations

import io
import os

from .base.atomic import output_file, refusal
from .run.curve import read_curve


class PlotError(ValueError):
    pass


def _error_top(curves) -> float:
    """The top of the error axis: 10% above the highest online error once each run is past its first
    2% of examples (its first rows, where a few mistakes are a large share, would squeeze the rest)."""
    top = 0.0
    for c in curves:
        t, rate = c["t"], _error(c)
        later = rate[t >= 0.02 * t.max()] if len(t) else rate
        top = max(top, float(later.max()) if len(later) else 0.0)
    if curves and curves[0]["task"].name == "regression":
        return 1.1 * top if top > 0 else 1.0
    return min(100.0, 1.1 * top) if top > 0 else 1.0


def _error(c):
    """A curve's online error as its task draws it (learning/task CURVE_AXIS): a classification's in %."""
    return c["task"].CURVE_AXIS[1] * c[c["task"].CURVE[1]]


def plot_curves(
    paths, output, labels=None, title: str | None = None, width: float = 8.0, height: float = 6.0, dpi: int = 100
) -> None:
    """Draw each curve file as one line in two panels (online error %, |S|) and save to `output`
    (format from its extension: .png, .svg, .pdf).  One curve per file, labelled by `labels` or by
    the curve's own description of what ran (its first line), or the file name.  The error axis spans
    the curves past their first examples (where every online error is near 100%); the |S| axis is
    logarithmic when the runs' support sizes differ by more than 10×."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError("plotting needs matplotlib: pip install 'budgetlearn[plot]'") from None
    refused = refusal(output)  # a path no output may go to, said before the rest
    if refused is not None:
        raise refused
    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    formats = fig.canvas.get_supported_filetypes()
    fmt = os.path.splitext(output)[1].lstrip(".").lower()
    if fmt not in formats:
        raise PlotError(
            f"{output}: cannot tell the image format from the extension "
            f"{'.' + fmt if fmt else '(none)'}; use one of {', '.join('.' + f for f in sorted(formats))}"
        )
    if labels is not None and len(labels) != len(paths):
        raise PlotError(f"{len(labels)} --label for {len(paths)} curve files")
    curves = []
    for path in paths:
        try:
            curves.append(read_curve(path))
        except OSError as exc:
            raise PlotError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise PlotError(str(exc)) from None
    tasks = {c["task"].name for c in curves}
    if len(tasks) > 1:
        raise PlotError(
            "a classification's curve (online error %) and a regression's (online MSE) have no axis in common; "
            "plot them apart"
        )
    draw(fig, paths, curves, labels)
    if title:
        fig.suptitle(title)
    # drawn before the output is opened: what matplotlib cannot typeset or write leaves it alone
    try:
        fig.canvas.draw()  # every text laid out by Agg, whatever the format
    except ValueError as exc:
        raise PlotError(
            f"matplotlib cannot typeset a --title or --label ({_first_line(exc)}); $ starts its math mode: "
            r"write \$ for a dollar sign"
        ) from None
    image = io.BytesIO()
    try:
        fig.savefig(image, format=fmt, dpi=dpi)
    except Exception as exc:  # a format that needs what is not installed (.pgf: a TeX system), or fails otherwise
        raise PlotError(f"{output}: matplotlib cannot write .{fmt} here ({_first_line(exc)})") from None
    with output_file(output, binary=True) as f:  # a file object: savefig would replace a device node
        f.write(image.getvalue())


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def draw(fig, paths, curves, labels=None) -> None:
    """The two panels of `curves` (read_curve's) on `fig`, one line and one legend entry per file."""
    err, size = fig.subplots(2, 1, sharex=True)
    for path, label, c in zip(paths, labels or [None] * len(paths), curves):
        # a file name or a description is text, never matplotlib's math mode ($...$): dollars are escaped
        shown = c["description"] or os.path.splitext(os.path.basename(path))[0]
        name = label or shown.replace("$", r"\$")
        err.plot(c["t"], _error(c), label=name)
        size.plot(c["t"], c["support_size"], label=name)
    err.set_ylabel(curves[0]["task"].CURVE_AXIS[0] if curves else "online error (%)")
    size.set_ylabel("support vectors |S|")
    size.set_xlabel("examples t")
    for ax in (err, size):
        ax.grid(True, color="0.85")  # opaque: PostScript (.eps, .ps) warns about transparency
    err.set_ylim(0, _error_top(curves))  # from zero, so that the size of a change is not exaggerated
    sizes = [float(c["support_size"].max()) for c in curves if c["support_size"].max() > 0]
    if sizes and max(sizes) > 10 * min(sizes):
        size.set_yscale("log")
    else:
        size.set_ylim(bottom=0)
    err.legend(fontsize="small", framealpha=1)  # opaque, as the grid
