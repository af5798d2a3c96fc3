import io
import json
import os
import pickle
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from budgetcli.base import modelfile
from budgetcli.base.modelfile import FORMAT_NAME, FORMAT_VERSION, ModelFileError, load, save

MARKER = b"\xde\xad\xbe\xefBUDGETLEARN-DATA-MARKER\xca\xfe"


def assert_same_arrays(got, expected):
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        have = got[name]
        assert isinstance(have, np.ndarray)
        assert have.dtype == want.dtype, name
        assert have.shape == want.shape, name
        assert have.tobytes() == want.tobytes(), name  # bit-exact, NaN payloads included


def assert_one_line_error(excinfo, path, *fragments):
    message = str(excinfo.value)
    assert "\n" not in message and "\r" not in message
    assert message.startswith(f"{path}: ")
    for fragment in fragments:
        assert fragment in message


def small_model():
    header = {
        "algorithm": "projectron++",
        "budget": 4,
        "eta": 0.5,
        "kernel": {"name": "rbf", "gamma": 0.1},
        "classes": [-1, 1],
        "notes": None,
        "shuffle": True,
        "name": "caf\u00e9",
    }
    arrays = {
        "support": np.arange(12, dtype=np.float64).reshape(4, 3),
        "alpha": np.array([0.5, -1.25, np.nan, np.inf]),
        "index": np.array([3, 1, 4, 1], dtype=np.int64),
        "marker": np.frombuffer(MARKER, dtype=np.uint8).copy(),
    }
    return header, arrays


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "m.model"
    header, arrays = small_model()
    save(path, header, arrays)
    return path


def write_container(path, container, arrays=None):
    """Write an npz with an arbitrary __header__ container, bypassing save()."""
    raw = np.frombuffer(json.dumps(container).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez(f, __header__=raw, **(arrays or {}))


def read_container(path):
    with np.load(path) as npz:
        return json.loads(npz["__header__"].tobytes().decode("utf-8"))


def npy_bytes(array, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def rewrite_zip(src, dst, replace=None, drop=()):
    """Copy an npz, replacing or dropping members (with valid zip CRCs)."""
    replace = dict(replace or {})
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if info.filename in drop:
                continue
            zout.writestr(info.filename, replace.pop(info.filename, None) or zin.read(info.filename))
        for name, data in replace.items():
            zout.writestr(name, data)


# --- round trip -------------------------------------------------------------------------


def test_round_trip_is_exact(tmp_path):
    header, arrays = small_model()
    arrays.update(
        {
            "empty": np.array([], dtype=np.float64),
            "empty_2d": np.zeros((0, 5), dtype=np.int32),
            "matrix_f_order": np.asfortranarray(np.arange(6, dtype=np.uint64).reshape(2, 3) * 2**61),
            "scalar": np.array(7, dtype=np.int32),
            "big_endian": np.array([1.5, -2.0], dtype=">f8"),
            "flags": np.array([True, False]),
            "neg_zero": np.array([-0.0, 0.0]),
        }
    )
    path = tmp_path / "m.model"
    save(path, header, arrays)
    got_header, got_arrays = load(path)
    assert got_header == header
    assert_same_arrays(got_arrays, arrays)


def test_load_strips_container_keys(model_path):
    header, _ = load(model_path)
    assert set(header) == set(small_model()[0])
    container = read_container(model_path)
    assert container["format"] == FORMAT_NAME
    assert container["version"] == FORMAT_VERSION
    assert container["checksum"].startswith("sha256:") and len(container["checksum"]) == 7 + 64


def test_accepts_str_and_pathlike_and_overwrites(tmp_path):
    path = tmp_path / "m.model"
    save(str(path), {"v": 1}, {"a": np.zeros(3)})
    save(path, {"v": 2}, {"b": np.ones(2)})
    header, arrays = load(str(path))
    assert header == {"v": 2}
    assert_same_arrays(arrays, {"b": np.ones(2)})


def test_relative_path_in_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save("m.model", {"x": 1}, {"a": np.arange(3)})
    assert load("m.model")[0] == {"x": 1}
    assert os.listdir(tmp_path) == ["m.model"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=10,
)
numeric_arrays = hnp.arrays(
    dtype=st.sampled_from([np.int32, np.int64, np.uint64, np.float64, np.uint8, np.bool_, np.float32, np.complex128]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)


@settings(max_examples=60, deadline=None)
@given(
    header=st.dictionaries(st.text(), json_values, max_size=4),
    arrays=st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,10}", fullmatch=True).filter(
            lambda n: n not in ("__header__", "file", "allow_pickle")
        ),
        numeric_arrays,
        max_size=4,
    ),
)
def test_round_trip_property(header, arrays):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.model")
        save(path, header, arrays)
        got_header, got_arrays = load(path)
        assert os.listdir(d) == ["m.model"]
    assert got_header == header
    assert_same_arrays(got_arrays, arrays)


# --- save refuses what it cannot store ------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        np.array([{"a": 1}, None], dtype=object),
        np.array(["text"]),
        np.array([b"bytes"]),
        np.zeros(2, dtype=[("x", "f8"), ("y", "i4")]),
    ],
)
def test_save_refuses_non_numeric_arrays(tmp_path, bad):
    with pytest.raises(TypeError):
        save(tmp_path / "m.model", {}, {"a": bad})
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["__header__", "file", "allow_pickle", "", "a\0b", 3])
def test_save_refuses_reserved_or_empty_names(tmp_path, name):
    with pytest.raises((ValueError, TypeError)):
        save(tmp_path / "m.model", {}, {name: np.zeros(1)})
    assert os.listdir(tmp_path) == []


def test_save_refuses_non_json_header(tmp_path):
    with pytest.raises(TypeError):
        save(tmp_path / "m.model", {"gamma": np.float32(0.5)}, {})
    with pytest.raises(TypeError):
        save(tmp_path / "m.model", ["not", "a", "dict"], {})
    assert os.listdir(tmp_path) == []


# --- atomic writes ----------------------------------------------------------------------------


def test_no_temp_file_after_success_and_umask_permissions(tmp_path):
    old_umask = os.umask(0o027)
    try:
        save(tmp_path / "m.model", {}, {"a": np.zeros(2)})
    finally:
        os.umask(old_umask)
    assert os.listdir(tmp_path) == ["m.model"]
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(tmp_path / "m.model").st_mode) == 0o640


def _failing_write(real_write):
    def write(file, *args, **kwargs):
        real_write(file, *args, **kwargs)  # the temp file really holds (partial) data
        file.truncate(100)
        raise OSError(28, "No space left on device")

    return write


@pytest.mark.parametrize("break_what", ["savez", "fsync", "replace", "interrupt"])
def test_failed_save_leaves_old_file_untouched(model_path, monkeypatch, break_what):
    before = model_path.read_bytes()
    if break_what == "savez":
        monkeypatch.setattr(modelfile, "_write_zip", _failing_write(modelfile._write_zip))
    elif break_what == "fsync":
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(5, "I/O error")))
    elif break_what == "replace":
        monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(PermissionError(13, "denied")))
    else:
        monkeypatch.setattr(modelfile, "_write_zip", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))

    expected = KeyboardInterrupt if break_what == "interrupt" else OSError
    with pytest.raises(expected):
        save(model_path, {"new": True}, {"a": np.ones(5)})
    monkeypatch.undo()
    assert model_path.read_bytes() == before
    assert os.listdir(model_path.parent) == ["m.model"]
    assert load(model_path)[0] == small_model()[0]


def test_directory_fsync_failure_is_ignored(tmp_path, monkeypatch):
    real_open = os.open

    def no_directories(path, flags, *args):
        if os.path.isdir(path):
            raise PermissionError(13, "cannot open a directory")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_directories)
    save(tmp_path / "m.model", {"ok": 1}, {})
    monkeypatch.undo()
    assert load(tmp_path / "m.model") == ({"ok": 1}, {})


def test_save_into_missing_directory_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        save(tmp_path / "nope" / "m.model", {}, {})
    assert os.listdir(tmp_path) == []


# --- damaged files --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cut",
    [
        lambda n: 0,
        lambda n: 10,
        lambda n: n // 2,
        lambda n: n - 22,
        lambda n: n - 1,
    ],
    ids=["empty", "10-bytes", "half", "no-end-record", "last-byte-missing"],
)
def test_truncated_file(model_path, cut):
    data = model_path.read_bytes()
    model_path.write_bytes(data[: cut(len(data))])
    with pytest.raises(ModelFileError) as excinfo:
        load(model_path)
    assert_one_line_error(excinfo, model_path)


def test_flipped_byte_in_array_data(model_path):
    data = bytearray(model_path.read_bytes())
    offset = data.find(MARKER)
    assert offset > 0 and data.find(MARKER, offset + 1) == -1
    data[offset + 5] ^= 0x01
    model_path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError) as excinfo:
        load(model_path)
    assert_one_line_error(excinfo, model_path, "truncated or corrupt")


def test_checksum_catches_changes_the_zip_layer_accepts(model_path, tmp_path):
    # Rewritten archives have valid zip CRCs: only the SHA-256 can notice.
    tampered = tmp_path / "t.model"
    changed = np.frombuffer(MARKER, dtype=np.uint8).copy()
    changed[0] ^= 1
    cases = [
        dict(replace={"marker.npy": npy_bytes(changed)}),
        # same bytes, same shape, only the dtype string differs
        dict(replace={"index.npy": npy_bytes(np.array([3, 1, 4, 1], dtype="<i8").view(">i8"))}),
        dict(replace={"support.npy": npy_bytes(np.arange(12, dtype=np.float64).reshape(3, 4))}),  # new shape
        dict(drop={"alpha.npy"}),
        dict(replace={"extra.npy": npy_bytes(np.zeros(1))}),
    ]
    for case in cases:
        rewrite_zip(model_path, tampered, **case)
        with pytest.raises(ModelFileError) as excinfo:
            load(tampered)
        assert_one_line_error(excinfo, tampered, "truncated or corrupt (checksum mismatch)")

    # ... and the same for an edited user header inside an otherwise valid container.
    container = read_container(model_path)
    container["header"]["budget"] = 5
    _, arrays = load(model_path)
    write_container(tampered, container, arrays)
    with pytest.raises(ModelFileError, match=r"checksum mismatch"):
        load(tampered)


def test_member_that_is_not_an_array(model_path, tmp_path):
    tampered = tmp_path / "t.model"
    rewrite_zip(model_path, tampered, replace={"alpha.npy": b"just some bytes"})
    with pytest.raises(ModelFileError) as excinfo:
        load(tampered)
    assert_one_line_error(excinfo, tampered, "truncated or corrupt")


def _load_or_error(path):
    try:
        return load(path)
    except ModelFileError as e:
        assert "\n" not in str(e) and str(e).startswith(f"{path}: ")
        return None


def _assert_never_silently_wrong(path, original, offset, xor):
    data = bytearray(original)
    data[offset] ^= xor
    path.write_bytes(bytes(data))
    result = _load_or_error(path)
    if result is not None:  # a harmless byte (timestamps, unused zip fields): content must be exact
        header, arrays = result
        assert header == small_model()[0], offset
        assert_same_arrays(arrays, small_model()[1])


def test_every_single_byte_flip_is_detected_or_harmless(model_path):
    original = model_path.read_bytes()
    for offset in range(len(original)):
        _assert_never_silently_wrong(model_path, original, offset, 0xFF)


@settings(max_examples=300, deadline=None)
@given(position=st.floats(0, 1, exclude_max=True), xor=st.integers(1, 255))
def test_random_byte_flips_are_detected_or_harmless(position, xor):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.model"
        save(path, *small_model())
        original = path.read_bytes()
        _assert_never_silently_wrong(path, original, int(position * len(original)), xor)


# --- files that are not (this version's) models --------------------------------------------


def test_version_from_the_future(tmp_path):
    path = tmp_path / "m.model"
    # Even with members this build cannot read, the version is what the user must hear about.
    write_container(
        path,
        {"format": FORMAT_NAME, "version": 7, "checksum": "sha512:...", "layout": "new"},
        {"weird": np.array([{"x": 1}], dtype=object)},
    )
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert str(excinfo.value) == (
        f"{path}: written by format version 7, this build reads versions up to 2; upgrade budgetlearn"
    )


def test_version_too_old(tmp_path):
    path = tmp_path / "m.model"
    write_container(path, {"format": FORMAT_NAME, "version": 0, "checksum": "md5:x", "header": {}})
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert_one_line_error(excinfo, path, "format version 0", "cannot read")


@pytest.mark.parametrize(
    "container",
    [
        {"format": "some-other-model", "version": 1, "checksum": "sha256:0", "header": {}},
        {"version": 1, "header": {}},
        ["format", "budgetlearn-model"],
        {"format": FORMAT_NAME, "version": "1", "checksum": "sha256:0", "header": {}},
        {"format": FORMAT_NAME, "version": True, "checksum": "sha256:0", "header": {}},
    ],
)
def test_wrong_format_or_version_field(tmp_path, container):
    path = tmp_path / "m.model"
    write_container(path, container)
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert_one_line_error(excinfo, path, "not a budgetlearn model file")


def test_missing_header_or_checksum_fields(tmp_path):
    path = tmp_path / "m.model"
    write_container(path, {"format": FORMAT_NAME, "version": 1, "header": {}})
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert_one_line_error(excinfo, path, "truncated or corrupt")


@pytest.mark.parametrize(
    "header_array",
    [
        np.frombuffer(b"{not json", dtype=np.uint8),
        np.frombuffer(b"\xff\xfe{}", dtype=np.uint8),
        np.frombuffer(json.dumps({"format": FORMAT_NAME}).encode(), dtype=np.uint8).astype(np.int64),
        np.zeros((2, 2), dtype=np.uint8),
        np.frombuffer(b"[" * 100_000, dtype=np.uint8),  # nesting deep enough to exhaust recursion
    ],
)
def test_unparsable_header(tmp_path, header_array):
    path = tmp_path / "m.model"
    with open(path, "wb") as f:
        np.savez(f, __header__=header_array)
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert_one_line_error(excinfo, path, "not a budgetlearn model file")


def test_plain_text_file(tmp_path):
    path = tmp_path / "m.model"
    path.write_text("label,x1,x2\n1,0.5,0.25\n")
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert str(excinfo.value) == f"{path}: not a budgetlearn model file"


def test_plain_npz_and_npy_without_header(tmp_path):
    npz = tmp_path / "plain.npz"
    np.savez(npz, weights=np.ones(3))
    npy = tmp_path / "plain.npy"
    np.save(npy, np.ones(3))
    for path in (npz, npy):
        with pytest.raises(ModelFileError) as excinfo:
            load(path)
        assert_one_line_error(excinfo, path, "not a budgetlearn model file")


class _Payload:
    """Unpickling this creates the marker file: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickled_object_npz(path, marker, with_valid_looking_header):
    evil = np.array([_Payload(marker)], dtype=object)
    with zipfile.ZipFile(path, "w") as z:
        if with_valid_looking_header:
            container = {"format": FORMAT_NAME, "version": 1, "checksum": "sha256:0", "header": {}}
            z.writestr("__header__.npy", npy_bytes(np.frombuffer(json.dumps(container).encode(), np.uint8)))
        z.writestr("evil.npy", npy_bytes(evil, allow_pickle=True))


@pytest.mark.parametrize("with_valid_looking_header", [True, False])
def test_pickled_object_npz_never_executes(tmp_path, with_valid_looking_header):
    path = tmp_path / "evil.model"
    control_marker = tmp_path / "control-ran"
    _pickled_object_npz(path, control_marker, with_valid_looking_header)
    # Control: the crafted file really is dangerous when pickle is allowed.
    np.load(path, allow_pickle=True)["evil"]
    assert control_marker.exists()

    marker = tmp_path / "payload-ran"
    _pickled_object_npz(path, marker, with_valid_looking_header)
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert_one_line_error(excinfo, path)
    assert not marker.exists()


def test_raw_pickle_file_never_executes(tmp_path):
    path = tmp_path / "evil.model"
    marker = tmp_path / "payload-ran"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert str(excinfo.value) == f"{path}: not a budgetlearn model file"
    assert not marker.exists()


def test_missing_file_and_directory(tmp_path):
    missing = tmp_path / "missing.model"
    with pytest.raises(ModelFileError) as excinfo:
        load(missing)
    assert_one_line_error(excinfo, missing, "cannot open: ")
    with pytest.raises(ModelFileError) as excinfo:
        load(tmp_path)
    assert_one_line_error(excinfo, tmp_path, "cannot open: ")


@pytest.mark.skipif(os.name != "posix", reason="newlines in file names")
def test_message_stays_one_line_for_odd_names(tmp_path):
    path = tmp_path / "two\nlines.model"
    path.write_text("junk")
    with pytest.raises(ModelFileError) as excinfo:
        load(path)
    assert "\n" not in str(excinfo.value)
    assert "two\\nlines.model" in str(excinfo.value)


def test_model_file_error_is_a_value_error():
    assert issubclass(ModelFileError, ValueError)
    assert str(ModelFileError("m.model: cannot open: gone")) == "m.model: cannot open: gone"
    assert modelfile.FORMAT_NAME == "budgetlearn-model" and modelfile.FORMAT_VERSION == 2
