"""Crafted model files: each is refused with one ValueError naming the file, or loads sanely."""

import io
import json
import zipfile

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    sim = simulate(3, 3, 200, n_features=4, random_state=0)
    model = CREATOR(3, random_state=0).fit(sim.X)
    path = tmp_path_factory.mktemp("m") / "model.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(arrays.pop("__metadata__").tobytes())
    return model, arrays, meta, sim


def _write(path, arrays, meta, raw_meta=None):
    payload = dict(arrays)
    body = raw_meta if raw_meta is not None else json.dumps(meta).encode()
    payload["__metadata__"] = np.frombuffer(body, np.uint8)
    np.savez(path, **payload)
    return path


def _key(meta, *where):
    v = meta["attributes"]
    for w in where:
        v = v[w]
    return v["__ndarray__"]


def _variant(saved, edit):
    _, arrays, meta, _ = saved
    arrays, meta = dict(arrays), json.loads(json.dumps(meta))
    edit(arrays, meta)
    return arrays, meta


def _refused(tmp_path, arrays, meta, match=None, raw_meta=None):
    path = _write(tmp_path / "bad.npz", arrays, meta, raw_meta)
    with pytest.raises(ValueError) as info:
        CREATOR.load(path)
    msg = str(info.value)
    assert str(path) in msg and "\n" not in msg
    if match:
        assert match in msg, msg
    return msg


def _set_array(name, value, *index):
    def edit(arrays, meta):
        arrays[_key(meta, name, *index)] = value(arrays[_key(meta, name, *index)])
    return edit


ARRAY_CASES = {
    "NaN components": (_set_array("components_", lambda a: np.where(a == a.flat[0], np.nan, a)),
                       "NaN"),
    "inf mixing": (_set_array("mixing_", lambda a: a * np.inf), "NaN or infinite"),
    "complex components": (_set_array("components_", lambda a: a.astype(complex)),
                           "not a real floating-point"),
    "integer mean": (_set_array("mean_", lambda a: a.astype(int)), "not a real floating-point"),
    "string mean": (_set_array("mean_", lambda a: a.astype(str)), "not a real floating-point"),
    "wrong-shape components": (_set_array("components_", lambda a: a[:, :-1]), "shape"),
    "transposed mixing": (_set_array("mixing_", lambda a: a.T.copy()), "shape"),
    "wrong-shape weights": (_set_array("weights_", lambda a: a[:2], 0), "shape"),
    "NaN weights": (_set_array("weights_", lambda a: a * np.nan, 1), "NaN"),
    "NaN latents": (_set_array("latents_", lambda a: a * np.nan, 0), "NaN"),
    "latents of wrong width": (_set_array("latents_", lambda a: a[:, :2], 2), "shape"),
    "cyclic adjacency": (_set_array("adjacency_matrix_", lambda a: a + a.T), None),
    "self loop": (_set_array("adjacency_matrix_", lambda a: a + np.eye(3, dtype=a.dtype)),
                  None),
    "adjacency of 2s": (_set_array("adjacency_matrix_", lambda a: 2 * a), "0/1"),
    "float adjacency": (_set_array("adjacency_matrix_", lambda a: a + 0.5), "0/1"),
}


@pytest.mark.parametrize("case", list(ARRAY_CASES))
def test_bad_arrays_refused(saved, tmp_path, case):
    edit, match = ARRAY_CASES[case]
    arrays, meta = _variant(saved, edit)
    _refused(tmp_path, arrays, meta, match)


def _set_attr(name, value):
    def edit(arrays, meta):
        meta["attributes"][name] = value
    return edit


ATTR_CASES = {
    "n_latent_ string": _set_attr("n_latent_", "3"),
    "n_latent_ zero": _set_attr("n_latent_", 0),
    "n_latent_ above p": _set_attr("n_latent_", 9),
    "n_features_in_ float": _set_attr("n_features_in_", 4.0),
    "n_features_in_ bool": _set_attr("n_features_in_", True),
    "n_environments_ negative": _set_attr("n_environments_", -1),
    # a stored matrix where a count belongs: numpy's repr would span lines
    "n_features_in_ matrix": lambda a, m: m["attributes"].__setitem__(
        "n_features_in_", m["attributes"]["adjacency_matrix_"]),
    "n_environments_ matrix": lambda a, m: m["attributes"].__setitem__(
        "n_environments_", m["attributes"]["adjacency_matrix_"]),
    "causal_order_ string": _set_attr("causal_order_", "012"),
    "causal_order_ repeated": _set_attr("causal_order_", [0, 0, 1]),
    "causal_order_ short": _set_attr("causal_order_", [0, 1]),
    "diagnostics_ list": _set_attr("diagnostics_", [1, 2]),
    "weights_ dict": _set_attr("weights_", {"a": 1}),
    "weights_ too few": lambda a, m: m["attributes"].__setitem__(
        "weights_", m["attributes"]["weights_"][:2]),
    "latents_ number": _set_attr("latents_", 3),
    "environment_labels_ short": _set_attr("environment_labels_", ["a"]),
    "components_ list": _set_attr("components_", [[1.0, 2.0]]),
    "mean_ None": _set_attr("mean_", None),
    "private attribute": _set_attr("_secret_", 1),
    "unfitted name": _set_attr("n_latent", 1),
    "params random_state string": lambda a, m: m["params"].__setitem__("random_state", "x"),
    "params scorer unknown": lambda a, m: m["params"].__setitem__("scorer", "magic"),
    "params not a dict": lambda a, m: m.__setitem__("params", [1]),
    "attributes not a dict": lambda a, m: m.__setitem__("attributes", "x"),
    "array reference not a name": _set_attr("mean_", {"__ndarray__": 5}),
    "array reference missing": _set_attr("mean_", {"__ndarray__": "a999"}),
    "output config not strings": lambda a, m: m.__setitem__("output_config", {"transform": 3}),
}


@pytest.mark.parametrize("case", list(ATTR_CASES))
def test_wrong_typed_attributes_refused(saved, tmp_path, case):
    arrays, meta = _variant(saved, ATTR_CASES[case])
    _refused(tmp_path, arrays, meta)


def test_deep_metadata_refused(saved, tmp_path):
    _, arrays, meta, _ = saved
    deep = "[" * 100_000 + "]" * 100_000
    raw = json.dumps(meta).replace('"diagnostics_": {', f'"deep": {deep}, "diagnostics_": {{', 1)
    _refused(tmp_path, arrays, meta, raw_meta=raw.encode())


def test_moderately_deep_metadata_refused(saved, tmp_path):
    arrays, meta = _variant(saved, _set_attr("diagnostics_", {"x": json.loads(
        "[" * 200 + "]" * 200)}))
    _refused(tmp_path, arrays, meta, "nested")


def test_huge_declared_shape_refused(saved, tmp_path):
    """A header declaring 10^12 elements over a few bytes of data."""
    _, arrays, meta, _ = saved
    path = _write(tmp_path / "big.npz", arrays, meta)
    key = _key(meta, "mean_")
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    buf.write(b"\0" * 64)
    rewritten = tmp_path / "big2.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(rewritten, "w") as dst:
        for info in src.infolist():
            data = buf.getvalue() if info.filename == f"{key}.npy" else src.read(info)
            dst.writestr(info.filename, data)
    with pytest.raises(ValueError, match="does not match its stored size"):
        CREATOR.load(rewritten)


def _with_member(path, name, data, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "a", compression=compress) as zf:
        zf.writestr(name, data)


def test_unused_member_is_never_read(saved, tmp_path):
    """An extra member is ignored, not decompressed: here one declaring 10^12 elements
    (reading it would fail or exhaust memory) and 64 MiB of compressed zeros."""
    model, arrays, meta, sim = saved
    path = _write(tmp_path / "extra.npz", arrays, meta)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    _with_member(path, "huge.npy", header.getvalue() + b"\0" * 8)
    _with_member(path, "bomb.npy", b"\0" * (64 << 20))
    loaded = CREATOR.load(path)
    np.testing.assert_allclose(loaded.transform(sim.X[0]), model.transform(sim.X[0]))


def test_used_member_bomb_refused(saved, tmp_path):
    _, arrays, meta, _ = saved
    key = _key(meta, "latents_", 0)
    arrays = dict(arrays)
    arrays[key] = np.zeros((400_000, 3))  # 9.6 MB of zeros, compresses ~1000x
    path = tmp_path / "bomb.npz"
    payload = dict(arrays)
    payload["__metadata__"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(path, **payload)
    with pytest.raises(ValueError, match="decompression bomb"):
        CREATOR.load(path)


def test_object_array_refused(saved, tmp_path):
    _, arrays, meta, _ = saved
    path = _write(tmp_path / "obj.npz", arrays, meta)
    key = _key(meta, "mean_")
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "|O", "fortran_order": False, "shape": (4,)})
    rewritten = tmp_path / "obj2.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(rewritten, "w") as dst:
        for info in src.infolist():
            data = buf.getvalue() + b"\x80" if info.filename == f"{key}.npy" else src.read(info)
            dst.writestr(info.filename, data)
    with pytest.raises(ValueError, match="Python objects"):
        CREATOR.load(rewritten)


def test_genuine_file_still_round_trips(saved, tmp_path):
    model, arrays, meta, sim = saved
    loaded = CREATOR.load(_write(tmp_path / "ok.npz", arrays, meta))
    np.testing.assert_array_equal(loaded.adjacency_matrix_, model.adjacency_matrix_)
    np.testing.assert_allclose(loaded.transform(sim.X[1]), model.transform(sim.X[1]))
    assert np.isfinite(loaded.transform(sim.X[1])).all()


def test_unbalanced_array_header_refused(saved, tmp_path):
    """A header whose quotes do not balance: numpy's header filter raises a tokenize error."""
    _, arrays, meta, _ = saved
    path = _write(tmp_path / "quote.npz", arrays, meta)
    rewritten = tmp_path / "quote2.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(rewritten, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "__metadata__.npy":
                data = data.replace(b"'shape':", b"'shape#:", 1)
            dst.writestr(info.filename, data)
    with pytest.raises(ValueError, match="not a valid creator-plugin model file"):
        CREATOR.load(rewritten)
