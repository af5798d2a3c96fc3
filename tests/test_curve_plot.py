"""`train --curve` rows and `budgetlearn plot`."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.entry import main
from budgetcli.model.model import Model

from .helpers import assert_same_state, random_stream


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_lines(path, X, y):
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            f.write(
                ("+1" if lab > 0 else "-1")
                + " "
                + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v)
                + "\n"
            )
    return path


@pytest.fixture
def stream(tmp_path):
    X, y = random_stream(300, 4, 11)
    return X, y, write_lines(tmp_path / "d.txt", X, y)


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))  # after what ran


@pytest.mark.parametrize("algorithm", ["projectron++", "rbp"])
def test_curve_rows_are_the_model_after_t_examples(tmp_path, stream, algorithm):
    X, y, data = stream
    curve, model = tmp_path / "c.csv", tmp_path / "m.model"
    r = run(
        "train",
        "-a",
        algorithm,
        "-B" if algorithm == "rbp" else "--eta",
        "20" if algorithm == "rbp" else "0.3",
        "--gamma",
        "0.5",
        "-q",
        "--curve",
        curve,
        "--curve-every",
        70,
        data,
        "-o",
        model,
    )
    assert r.exit_code == 0, r.output
    rows = read_rows(curve)
    assert list(rows[0]) == ["t", "mistakes", "online_rate", "support_size", "seconds"]
    assert [int(r["t"]) for r in rows] == [70, 140, 210, 280, 300]  # every k, and the end
    for row in rows[:2]:  # a row mid-chunk is the model trained on the first t examples alone
        t = int(row["t"])
        part = write_lines(tmp_path / f"first{t}.txt", X[:t], y[:t])
        assert (
            run(
                "train",
                "-a",
                algorithm,
                "-B" if algorithm == "rbp" else "--eta",
                "20" if algorithm == "rbp" else "0.3",
                "--gamma",
                "0.5",
                "-q",
                part,
                "-o",
                tmp_path / "p.model",
            ).exit_code
            == 0
        )
        p = Model.load(tmp_path / "p.model").learner
        assert int(row["mistakes"]) == p.counter("mistakes")
        assert int(row["support_size"]) == len(p.support)
        assert float(row["online_rate"]) == pytest.approx(p.counter("mistakes") / t, rel=1e-5)
    final = Model.load(model).learner
    assert int(rows[-1]["mistakes"]) == final.counter("mistakes") and int(rows[-1]["support_size"]) == len(
        final.support
    )
    seconds = [float(r["seconds"]) for r in rows]
    assert seconds == sorted(seconds)
    # logging the curve does not change the model
    assert (
        run(
            "train",
            "-a",
            algorithm,
            "-B" if algorithm == "rbp" else "--eta",
            "20" if algorithm == "rbp" else "0.3",
            "--gamma",
            "0.5",
            "-q",
            data,
            "-o",
            tmp_path / "plain.model",
        ).exit_code
        == 0
    )
    h1, a1 = final.state()
    h2, a2 = Model.load(tmp_path / "plain.model").learner.state()
    assert h1 == h2
    assert_same_state(a1, a2)


def test_curve_continues_the_count_on_resume(tmp_path, stream):
    _, _, data = stream
    model, curve = tmp_path / "m.model", tmp_path / "c.csv"
    assert run("train", "-a", "perceptron", "-q", data, "-o", model).exit_code == 0
    assert (
        run("train", "--resume", model, "-q", "--curve", curve, "--curve-every", 250, data, "-o", model).exit_code == 0
    )
    assert [int(r["t"]) for r in read_rows(curve)] == [500, 600]


def test_curve_every_needs_curve(stream):
    r = run("train", "-a", "perceptron", "--curve-every", 10, stream[2], "-o", "x.model")
    assert r.exit_code == 2 and "--curve" in r.output


def _pixels(path):
    image = pytest.importorskip("matplotlib.image")
    return image.imread(str(path))  # float RGBA in [0, 1], shape (height, width, 4)


def _has_colour(pixels, hex_colour, tol=0.02):
    rgb = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return int(np.sum(np.all(np.abs(pixels[..., :3] - rgb) < tol, axis=-1)))


def test_plot_writes_a_png_of_the_curves(tmp_path, stream):
    pytest.importorskip("matplotlib")
    _, _, data = stream
    # rbp with B = 20 < mistakes: its lines differ from the perceptron's (with B ≥ mistakes they coincide)
    for name, algo in (("a", ["perceptron"]), ("b", ["rbp", "-B", "20"])):
        assert (
            run(
                "train",
                "-a",
                *algo,
                "-q",
                "--curve",
                tmp_path / f"{name}.csv",
                "--curve-every",
                20,
                data,
                "-o",
                tmp_path / f"{name}.model",
            ).exit_code
            == 0
        )
    png = tmp_path / "curve.png"
    r = run("plot", tmp_path / "a.csv", tmp_path / "b.csv", "-o", png, "--title", "test")
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    px = _pixels(png)
    assert px.shape == (600, 800, 4)  # 8 x 6 inches at 100 dpi
    non_white = np.mean(np.any(px[..., :3] < 0.95, axis=-1))
    assert 0.01 < non_white < 0.5
    top, bottom = px[:300], px[300:]
    # matplotlib's first two line colours: one line per file in each panel
    for colour in ("#1f77b4", "#ff7f0e"):
        assert _has_colour(top, colour) > 100 and _has_colour(bottom, colour) > 100
    small = tmp_path / "small.png"
    assert run("plot", tmp_path / "a.csv", "-o", small, "--size", 4, 3).exit_code == 0
    assert _pixels(small).shape == (300, 400, 4)


def test_plot_names_the_bad_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,mistakes,online_rate,support_size,seconds\n10,2,0.2,2,0.1\n20,x,0.2,3,0.2\n")
    r = run("plot", bad, "-o", tmp_path / "x.png")
    assert r.exit_code == 1 and f"{bad}:3" in r.stderr
    assert not (tmp_path / "x.png").exists()
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    r = run("plot", other, "-o", tmp_path / "x.png")
    assert r.exit_code == 1 and "not a budgetlearn curve" in r.stderr


def test_unwritable_curve_fails_before_training_and_writes_no_model(tmp_path, stream):
    model = tmp_path / "m.model"
    r = run("train", "-a", "perceptron", "--curve", tmp_path / "missing" / "c.csv", stream[2], "-o", model)
    assert r.exit_code == 1 and "cannot write the curve" in r.stderr and str(tmp_path / "missing") in r.stderr
    assert not model.exists()


def test_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    curve = tmp_path / "c.csv"
    curve.write_text("t,mistakes,online_rate,support_size,seconds\n10,2,0.2,2,0.1\n")
    monkeypatch.setitem(__import__("sys").modules, "matplotlib.backends.backend_agg", None)  # import fails
    r = run("plot", curve, "-o", tmp_path / "x.png")
    assert r.exit_code == 1 and "budgetlearn[plot]" in r.stderr
    assert not (tmp_path / "x.png").exists()


def test_the_curve_records_what_ran_and_plot_fits_its_axes(tmp_path, stream):
    """The curve's first line names the algorithm and its settings (the default one too), which the
    legend shows, one file or several; |S| goes on a log axis when the runs differ by more than 10×;
    the error axis is not squeezed by the first rows' near-100% errors."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from budgetcli.run.curve import read_curve
    from budgetcli.plot import draw

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    data = stream[2]
    args = ["train", "-q", "--gamma", "0.5", "--curve", a, "--curve-every", "10", data, "-o", tmp_path / "a.model"]
    assert run(*args).exit_code == 0
    args = ["train", "-a", "rbp", "-B", "3", "-q", "--gamma", "0.5", "--curve", b, "--curve-every", "10"]
    assert run(*args, data, "-o", tmp_path / "b.model").exit_code == 0
    assert a.read_text().splitlines()[0] == "# projectron++ (eta=0.1, margin_step=fig5), kernel rbf (γ=0.5, σ=1)"
    curves = [read_curve(a), read_curve(b)]
    assert curves[1]["description"] == "rbp (budget=3), kernel rbf (γ=0.5, σ=1)"
    fig = Figure()
    draw(fig, [a], curves[:1])
    err, size = fig.axes
    assert [t.get_text() for t in err.get_legend().get_texts()] == [curves[0]["description"]]  # one file: a legend
    later = curves[0]["online_rate"][curves[0]["t"] >= 0.02 * curves[0]["t"].max()]
    assert err.get_ylim()[1] == pytest.approx(min(100, 110 * later.max()))
    fig = Figure()
    draw(fig, [a, b], curves)
    assert curves[0]["support_size"].max() > 10 * 3  # projectron++ kept more than 10× rbp's 3
    assert fig.axes[1].get_yscale() == "log"
    fig = Figure()
    draw(fig, [b], curves[1:])
    assert fig.axes[1].get_yscale() == "linear"


def test_every_image_format_is_written_or_refused_in_one_line(tmp_path, monkeypatch):
    """Each extension matplotlib lists is written (stderr silent: no PostScript warning about
    transparency either), or refused in one line naming the file; .pgf without a TeX system on the
    PATH made a traceback."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    curve = tmp_path / "c.csv"
    curve.write_text("t,mistakes,online_rate,support_size,seconds\n10,2,0.2,2,0.1\n20,3,0.15,3,0.2\n")
    monkeypatch.setenv("PATH", str(tmp_path))  # no xelatex, no lualatex, no ghostscript: pgf cannot be written
    refused = []
    for fmt in sorted(FigureCanvasAgg(Figure()).get_supported_filetypes()):
        image = tmp_path / f"c.{fmt}"
        r = run("plot", curve, "-o", image)
        if r.exit_code == 0:
            assert r.stderr == "" and image.stat().st_size > 0, (fmt, r.stderr)
        else:
            assert r.exit_code == 1 and r.stderr.count("\n") == 1, (fmt, r.stderr)
            assert r.stderr.startswith(f"budgetlearn: error: {image}: matplotlib cannot write .{fmt} here (")
            assert not image.exists()
            refused.append(fmt)
    assert "pgf" in refused and "png" not in refused
