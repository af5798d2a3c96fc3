"""Model files from anybody: every way a hostile or damaged file is refused, and a fuzz test.

The checksum is not keyed: an attacker edits a file and recomputes it (modelfile.save does, so the
cases below are written with it).  CASES is the table of docs/MALFORMED.md's "Model files"
section (`test_the_doc_lists_exactly_these_cases`; `python -m tests.test_model_untrusted` rewrites
it); each case runs through every command that loads a model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetcli.learning import algorithms
from budgetcli.base import modelfile, registry
from budgetcli.model import scaling
from budgetcli.entry import main
from budgetcli.io.libsvm import DataError, read_all
from budgetcli.model.model import Model
from budgetcli.base.modelfile import ModelFileError
from budgetcli.run.pipeline import chunk_scores

from . import doctables
from .helpers import label_map
from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DOC = PROJECT_ROOT / "docs" / "MALFORMED.md"
BEGIN, END = "<!-- model table generated from tests/test_model_untrusted.py: begin -->", "<!-- end of model table -->"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A data file and a trained model of each kind the cases edit."""
    d = tmp_path_factory.mktemp("untrusted")
    data = d / "train.txt"
    write_stream(data, n=200)
    multi = d / "multi.txt"
    multi.write_text("".join(f"{1 + i % 3} 1:{(i % 7) / 7:.3f} 2:{(i % 5) / 5:.3f}\n" for i in range(150)))
    models = {}
    for name, args in {  # online models (the cases edit what predicts); "averaged": train's default
        "perceptron": ["-a", "perceptron", "--hypothesis", "last", data],
        "rbp": ["-a", "rbp", "-B", "10", "--hypothesis", "last", data],
        "mc-projectron++": ["-a", "mc-projectron++", "--eta", "0.5", "--hypothesis", "last", multi],
        "averaged": ["-a", "perceptron", data],
        # an evicting learner's running average with its archive of evicted vectors (resume state)
        "archive": ["-a", "rbp", "-B", "10", "--average", "--save-resume", data],
        "scaled": ["-a", "perceptron", "--scale", "--hypothesis", "last", data],
    }.items():
        models[name] = d / f"{name}.model"
        r = CliRunner().invoke(main, ["train", "-q", *map(str, args), "-o", str(models[name])])
        assert r.exit_code == 0, r.output
    return {"data": data, "dir": d, **models}


def edited(source: Path, target: Path, edit: Callable[[dict, dict], None]) -> Path:
    """`source` with its header and arrays changed by `edit`, saved with a valid checksum.  The arrays
    are edited in the dtypes the learner uses (a file may store them narrower: Model.save)."""
    header, arrays = modelfile.load(source)
    members = {name: modelfile.Member((a.shape, a.dtype)) for name, a in arrays.items()}
    expected = registry.get(header["algorithm"]).saved_arrays(header, members) | scaling.saved_arrays(header, members)
    arrays = {name: a.astype(expected[name][1]) for name, a in arrays.items()}
    edit(header, arrays)
    modelfile.save(target, header, arrays)
    return target


def zip_bomb(source: Path, target: Path, inflated: int = 1 << 30) -> Path:
    """`source` with its alpha replaced by a deflated member of `inflated` bytes of zeros (a few MB
    on disk); the checksum is left as it was: the bound refuses the file before it matters."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            if info.filename != "alpha.npy":
                zout.writestr(info, zin.read(info))
                continue
            header = np.lib.format.header_data_from_array_1_0(np.zeros(0))
            header["shape"] = (inflated // 8,)
            bomb = zipfile.ZipInfo("alpha.npy")
            bomb.compress_type = zipfile.ZIP_DEFLATED
            with zout.open(bomb, "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(member, header)
                block = bytes(1 << 24)
                for _ in range(inflated // len(block)):
                    member.write(block)
    return target


def _set(where: str, key, value):
    def edit(header, arrays):
        if where == "header":
            header[key] = value
        elif where == "kernel":
            header["kernel"][key] = value
        elif where == "params":
            header["params"][key] = value
        else:
            arrays[where][key] = value

    return edit


def _with(name: str, make):
    def edit(header, arrays):
        arrays[name] = make(arrays[name]) if name in arrays else make(None)

    return edit


def _counters(header, arrays):
    arrays["counters"][1] = arrays["counters"][0] + 1  # more mistakes than examples


@dataclass(frozen=True)
class Case:
    name: str
    model: str  # which trained model is edited
    edit: object  # (header, arrays) -> None, or "bomb"
    message: str  # after "budgetlearn: error: FILE: "; N stands for a number that depends on the model
    # an edit of the resume state's content, which only `train --resume` reads (the other commands skip
    # it, checksum and all: they run as on the file before the edit)
    resume_only: bool = False


CASES = [
    Case(
        "a zip bomb: one member inflating to 1 GiB",
        "perceptron",
        "bomb",
        "invalid model: its arrays would take N bytes, more than the bound of 8 × the file's N bytes + 64 MiB",
    ),
    Case(
        "a support-vector index of 2³¹ − 1",
        "perceptron",
        _set("sv_indices", 0, 2**31 - 1),
        "invalid model: sv_indices[0] = 2147483647 is outside 0..4 (n_features 5)",
    ),
    Case(
        "a negative index",
        "perceptron",
        _set("sv_indices", 1, -5),
        "invalid model: sv_indices[1] = -5 is outside 0..4 (n_features 5)",
    ),
    Case(
        "indices not increasing within a vector",
        "perceptron",
        lambda h, a: a["sv_indices"].__setitem__(slice(0, 2), [2, 1]),
        "invalid model: sv_indices[1] = 1 does not increase within its vector (after 2)",
    ),
    Case(
        "a NaN coefficient",
        "perceptron",
        _set("alpha", 0, np.nan),
        "invalid model: alpha holds nan (entry 0): every number must be finite",
    ),
    Case(
        "an infinite support-vector value",
        "perceptron",
        _set("sv_values", 2, np.inf),
        "invalid model: sv_values holds inf (entry 2): every number must be finite",
    ),
    Case(
        "a decreasing indptr",
        "perceptron",
        _set("sv_indptr", 2, 0),
        "invalid model: sv_indptr[2] = 0 is below sv_indptr[1] = N",
    ),
    Case(
        "indptr not starting at 0", "perceptron", _set("sv_indptr", 0, 1), "invalid model: sv_indptr[0] = 1, must be 0"
    ),
    Case(
        "a huge n_features",
        "perceptron",
        _set("header", "n_features", 10**15),
        "invalid model: n_features = 1000000000000000 is not an integer in 0..2147483648",
    ),
    Case(
        "a coefficient array of the wrong length",
        "perceptron",
        _with("alpha", lambda a: np.append(a, 1.0)),
        "invalid model: array 'alpha' is float64 of shape (N,); a perceptron model with these sizes saves float64 "
        "of shape N",
    ),
    Case(
        "an array the algorithm does not save",
        "perceptron",
        _with("extra", lambda a: np.zeros(3)),
        "invalid model: array 'extra' is not part of a perceptron model",
    ),
    Case(
        "more mistakes than examples",
        "perceptron",
        _counters,
        "invalid model: counter mistakes = N exceeds examples = N",
    ),
    Case(
        "a kernel coef0 of NaN",
        "perceptron",
        _set("kernel", "coef0", float("nan")),
        "invalid model: kernel coef0 = nan is not a finite number",
    ),
    Case(
        "a kernel exp that is neither of the two",
        "rbp",
        _set("kernel", "exp", "fast"),
        "invalid model: kernel exp = 'fast' is not one of vectorised, libm of an rbf kernel",
    ),
    Case(
        "more support vectors than the budget",
        "rbp",
        _set("params", "budget", 5),
        "invalid model: 10 support vectors, more than the budget 5",
    ),
    Case(
        "a class member that is no support vector",
        "mc-projectron++",
        _set("class_members", (0, 0), 10**6),
        "invalid model: class_members[0, 0] = 1000000 is not a support vector (0..N)",
    ),
    Case(
        "an evicted vector's index outside the features",
        "archive",
        _set("retired_indices", 0, 10**6),
        "invalid model: retired_indices[0] = 1000000 is outside 0..4 (n_features 5)",
        resume_only=True,
    ),
    Case(
        "an archive of evicted vectors without its summed coefficients",
        "archive",
        lambda h, a: a.pop("retired_sums"),
        "invalid model: the archive of evicted vectors lacks retired_sums",
        resume_only=True,
    ),
    Case(
        "more evicted vectors than a running average keeps",
        "archive",
        lambda h, a: a.update(
            retired_indptr=np.zeros(200, np.int64),
            retired_indices=np.zeros(0, np.int32),
            retired_values=np.zeros(0),
            retired_sums=np.zeros(199),
        ),
        "invalid model: the archive holds 199 evicted vectors, not 1 to 127 (2·max(B, 64) − 1)",
        resume_only=True,
    ),
    Case(
        "an archive's sums of another length than its vectors",
        "archive",
        _with("retired_sums", lambda a: a[:-1]),
        "invalid model: array 'retired_sums' is float64 of shape (N,); a rbp model with these sizes saves float64 "
        "of shape N",
    ),
    Case(
        "an archive of evicted vectors in a model of the last hypothesis",
        "archive",
        _set("header", "hypothesis", "online"),
        "invalid model: an archive of evicted vectors in a model that does not predict with the running average",
        resume_only=True,
    ),
    Case(
        "a negative count of vectors folded into the average",
        "archive",
        _set("header", "evicted_folded", -1),
        "invalid model: evicted_folded = -1 is not a count of vectors",
    ),
    Case(
        "scaling ranges whose indices do not increase",
        "scaled",
        _set("scale_indices", 0, 2**31 - 1),
        "invalid model: scaling indices are not increasing feature indices in 0..2147483647",
    ),
    Case(
        "a scaling range with min = max",
        "scaled",
        lambda h, a: (a["scale_min"].__setitem__(0, 0.5), a["scale_max"].__setitem__(0, 0.5)),
        "invalid model: the range [0.5, 0.5] of feature 1 is not one with min < max",
    ),
    Case(
        "a scaling range of NaN",
        "scaled",
        _set("scale_min", 1, np.nan),
        "invalid model: the range of feature 2 is not finite",
    ),
    Case(
        "a scaling interval with upper below lower",
        "scaled",
        lambda h, a: h["scaling"].__setitem__("upper", -2.0),
        "invalid model: scaling interval [-1, -2] is not finite with upper > lower",
    ),
    Case(
        "scaling arrays of different lengths",
        "scaled",
        _with("scale_max", lambda a: np.append(a, 9.0)),
        "invalid model: array 'scale_max' is float64 of shape (N,); a perceptron model with these sizes saves "
        "float64 of shape N",
    ),
    Case(
        "scaling arrays without the scaling",
        "scaled",
        lambda h, a: h.pop("scaling"),
        "invalid model: array 'scale_indices' is not part of a perceptron model",
    ),
    Case(
        "a scaling without its arrays",
        "scaled",
        lambda h, a: [a.pop(name) for name in scaling.ARRAYS],
        "invalid model: no array 'scale_indices', or not a vector",
    ),
    Case(
        "fewer labels than classes",
        "mc-projectron++",
        lambda h, a: h["labels"].__setitem__("values", h["labels"]["values"][:2]),
        "invalid model: labels: 2 label values for 3 classes",
    ),
]


def _make(case: Case, files, where: Path) -> Path:
    source = files[case.model]
    if case.edit == "bomb":
        return zip_bomb(source, where / "bad.model")
    return edited(source, where / "bad.model", case.edit)


def _matches(message: str, pattern: str) -> bool:
    import re

    return re.fullmatch(re.escape(pattern).replace("N", "[0-9,]+"), message) is not None


COMMANDS = {
    "info": ["info", "MODEL"],
    "predict": ["predict", "MODEL", "DATA"],
    "eval": ["eval", "MODEL", "DATA"],
    "export": ["export", "MODEL", "-o", "OUT"],
    "train --resume": ["train", "--resume", "MODEL", "DATA", "-o", "OUT"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_is_refused_in_one_line_by_every_command(tmp_path, files, case, command):
    bad = _make(case, files, tmp_path)
    data = files["data"] if case.model != "mc-projectron++" else files["dir"] / "multi.txt"
    args = [{"MODEL": str(bad), "DATA": str(data), "OUT": str(tmp_path / "out")}.get(a, a) for a in COMMANDS[command]]
    r = CliRunner().invoke(main, args)
    if case.resume_only and command != "train --resume":
        assert r.exit_code == 0, r.output
        return
    assert r.exit_code == 1, r.output
    prefix = f"budgetlearn: error: {bad}: "
    assert r.stderr.startswith(prefix) and r.stderr.count("\n") == 1, r.stderr
    assert _matches(r.stderr[len(prefix) : -1], case.message), r.stderr
    assert not (tmp_path / "out").exists()


def test_the_zip_bomb_costs_no_memory(tmp_path, files):
    """A 1 GiB member: before the bound, `info` inflated it (4.3 GB RSS for 2 GiB); now it is refused
    from the member's header.  Peak RSS of the whole process is compared with `info` of the model
    it was made from."""
    bomb = zip_bomb(files["perceptron"], tmp_path / "bomb.model")
    assert bomb.stat().st_size < 8 << 20

    def peak_kb(model) -> int:
        p = subprocess.Popen(
            [sys.executable, "-m", "budgetcli", "info", str(model)],
            cwd=PROJECT_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        return p.returncode, usage.ru_maxrss

    (good_code, good_kb), (bomb_code, bomb_kb) = peak_kb(files["perceptron"]), peak_kb(bomb)
    assert (good_code, bomb_code) == (0, 1)
    assert bomb_kb < good_kb + 64 * 1024, (good_kb, bomb_kb)  # not a trace of the 1 GiB


def test_a_model_whose_scores_overflow_never_predicts_nan(tmp_path, files):
    """Finite numbers can still overflow together (coefficients of 1e308): the prediction is
    refused with the data's line, never written as nan."""

    def edit(header, arrays):
        arrays["alpha"][:] = 1e308  # finite, but their sum is not

    bad = edited(files["perceptron"], tmp_path / "big.model", edit)
    r = CliRunner().invoke(main, ["predict", str(bad), str(files["data"])])
    assert r.exit_code == 1
    assert r.stderr == (
        f"budgetlearn: error: {files['data']}:1: the model's score of this example is not a finite "
        "number (its numbers or the model's overflow)\n"
    )
    assert "nan" not in r.stdout
    # an averaged model's coefficients overflow when it is loaded: refused in one line before any prediction
    bad = edited(files["averaged"], tmp_path / "big-avg.model", edit)
    r = CliRunner().invoke(main, ["predict", str(bad), str(files["data"])])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == f"budgetlearn: error: {bad}: invalid model: its averaged coefficients are not finite\n"


def test_an_inconsistent_inverse_stops_a_resume_in_one_line(tmp_path, files):
    data = files["data"]
    model = tmp_path / "sop.model"
    assert (
        CliRunner()
        .invoke(main, ["train", "-q", "-a", "rbsop", "-B", "8", "--save-resume", str(data), "-o", str(model)])
        .exit_code
        == 0
    )

    def edit(header, arrays):
        arrays["ainv"][:] = 0.0  # finite, and no inverse of anything: the downdate divides by its diagonal

    bad = edited(model, tmp_path / "bad.model", edit)
    r = CliRunner().invoke(main, ["train", "--resume", str(bad), str(data), "-o", str(tmp_path / "out.model")])
    assert r.exit_code == 1
    assert (
        r.stderr.startswith(
            f"budgetlearn: error: {bad}: cannot go on from this model: its saved state is "
            "inconsistent (ZeroDivisionError"
        )
        and r.stderr.count("\n") == 1
    ), r.stderr
    assert not (tmp_path / "out.model").exists()


# ---- the fuzz test ------------------------------------------------------------------------------


def _trained(algorithm: str, data: Path):
    cls = registry.get(algorithm)
    chunk = read_all(data)
    params = {"budget": 8} if "budget" in {p.name for p in cls.params} else {}
    if "maintenance" in {p.name for p in cls.params}:
        params["maintenance"] = "project"
    from budgetcli.numerics.kernels import Kernel

    learner = cls(Kernel("rbf", 0.5), seed=1, **params)
    learner.keep_evicted("running-average")  # an evicting learner's archive is saved too
    labels = label_map(cls)
    learner.learn(chunk, labels.encode(chunk, "t"))
    return Model(learner, labels, "running-average"), chunk


HOSTILE = [
    -1,
    0,
    1,
    2**31 - 1,
    2**31,
    2**63 - 1,
    -(2**63),
    1e308,
    -1e308,
    float("nan"),
    float("inf"),
    0.5,
    "x",
    None,
    [],
    {},
]


@st.composite
def mutations(draw, header, arrays):
    """One hostile edit of a saved state: a flipped byte in an array, an array resized, retyped or
    dropped, a header field set to a hostile value."""
    kind = draw(st.sampled_from(["flip", "flip", "flip", "resize", "retype", "drop", "header", "nested"]))
    names = sorted(arrays)
    if kind == "flip":
        name = draw(st.sampled_from([n for n in names if arrays[n].nbytes] or names))
        raw = bytearray(arrays[name].tobytes())
        if raw:
            raw[draw(st.integers(0, len(raw) - 1))] ^= draw(st.integers(1, 255))
        return kind, name, np.frombuffer(bytes(raw), arrays[name].dtype).reshape(arrays[name].shape)
    if kind == "resize":
        name = draw(st.sampled_from(names))
        flat = arrays[name].ravel()
        size = draw(st.integers(0, flat.size + 3))
        return kind, name, np.resize(flat, size)
    if kind == "retype":
        name = draw(st.sampled_from(names))
        return kind, name, arrays[name].astype(draw(st.sampled_from([np.int32, np.float32, np.int64, np.uint8])))
    if kind == "drop":
        return kind, draw(st.sampled_from(names)), None
    if kind == "header":
        return kind, draw(st.sampled_from(sorted(header))), draw(st.sampled_from(HOSTILE))
    section = draw(
        st.sampled_from([k for k in ("kernel", "params", "counters", "labels") if isinstance(header.get(k), dict)])
    )
    keys = sorted(header[section]) or ["x"]
    return kind, (section, draw(st.sampled_from(keys))), draw(st.sampled_from(HOSTILE))


def _apply(header, arrays, mutation):
    kind, name, value = mutation
    if kind in ("flip", "resize", "retype"):
        arrays[name] = value
    elif kind == "drop":
        del arrays[name]
    elif kind == "header":
        header[name] = value
    else:
        header[name[0]][name[1]] = value


@pytest.mark.parametrize("algorithm", sorted(algorithms.load_all()))
def test_fuzz_only_the_documented_error_never_a_crash_or_a_nan(tmp_path_factory, files, algorithm):
    """Mutations of a real model of every algorithm, saved with a valid checksum: loading gives the
    model or a one-line ModelFileError naming the file; a model that loads predicts finite scores
    (or refuses the line) and can go on learning without a crash."""
    data = files["dir"] / "multi.txt" if registry.get(algorithm).multiclass else files["data"]
    model, chunk = _trained(algorithm, data)
    where = tmp_path_factory.mktemp("fuzz")
    path = where / "m.model"
    model.save(path, resume=True)  # every array a model file may hold
    header, arrays = modelfile.load(path)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.data())
    def check(draw):
        h, a = json.loads(json.dumps(header)), {k: v.copy() for k, v in arrays.items()}
        _apply(h, a, draw.draw(mutations(h, a)))
        try:
            modelfile.save(path, h, a)
        except (TypeError, ValueError):  # a header JSON cannot hold: no such file can exist
            return
        try:
            loaded = Model.load(path, resume=True)
        except ModelFileError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
            return
        try:
            chunk_scores(loaded, chunk, "data")
        except DataError as exc:
            assert "not a finite number" in str(exc)
        if loaded.hypothesis in ("online", "running-average", "last"):
            try:
                y = loaded.labels.encode(chunk, "data")
            except DataError as exc:  # the edited label map meets the data's labels: the resume's own error
                assert "third label value" in str(exc)
                return
            try:
                loaded.learner.learn(chunk, y)
            except ArithmeticError:
                # a kept inverse that is finite but not the inverse of its support set is not found at
                # load (that would cost O(|S|³)); `train --resume` reports the division by zero it meets
                # in one line (test_an_inconsistent_inverse_stops_a_resume_in_one_line)
                pass

    check()


# ---- the doc table --------------------------------------------------------------------------------


def render_table() -> str:
    rows = [
        "| # | case | `budgetlearn info`, `predict`, `eval`, `export`, `train --resume`: stderr (N: a number) | exit |",
        "|---:|---|---|---:|",
    ]
    for i, c in enumerate(CASES, 1):
        name = c.name + (" (resume state: only `train --resume` reads it)" if c.resume_only else "")
        rows.append(f"| {i} | {name} | `budgetlearn: error: FILE: {c.message}` | 1 |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_model_untrusted")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
