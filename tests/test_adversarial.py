"""A permanent adversarial suite: generated hostile inputs, checked against the safety rules.

For every generated case: the command exits 0, or exits 2 with one line on
stderr and no traceback; nothing outside ``--out`` is created, changed or
removed; a model that loads or fits has no NaN, inf or complex value in what
it computes; a DataFrame's column order does not matter.

Hypothesis runs derandomised (the same cases on every run). The quick lane
runs a few cases of each property; the slow lane (``-m slow``) runs the
thorough profile, over 500 cases in all.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import string
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, simulate
from creator_plugin.cli import main
from creator_plugin.output_dir import MARKER, OutputDir, OutputDirError

pytestmark = pytest.mark.filterwarnings("ignore")

QUICK = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


def thorough(n: int):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def _tree(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        for name in dirnames + files:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = "dir"
            else:
                with open(p, "rb") as fh:
                    out[rel] = fh.read()
    return out


def _outside(tree: dict, out_name: str) -> dict:
    return {k: v for k, v in tree.items() if k != out_name and not k.startswith(out_name + os.sep)}


def _run_cli(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    return code, err.getvalue()


def _check_exit(code: int, err: str) -> None:
    assert code in (0, 2), (code, err)
    if code == 2:
        lines = [ln for ln in err.strip().splitlines() if not ln.startswith(("warning:", "note:"))]
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err


def _check_model_finite(model, X) -> None:
    for name in ("components_", "mixing_", "mean_"):
        arr = getattr(model, name)
        assert np.isrealobj(arr) and np.isfinite(arr).all(), name
    assert set(np.unique(model.adjacency_matrix_)) <= {0, 1}
    for W in getattr(model, "weights_", []):
        assert np.isrealobj(W) and np.isfinite(W).all()
    for L in getattr(model, "latents_", []):
        assert np.isrealobj(L) and np.isfinite(L).all()
    out = model.transform(X)
    assert np.isrealobj(out) and np.isfinite(out).all()


# ------------------------------------------------------------------ CSV files
_LABEL = st.sampled_from(["a", "b", "1", "01", "1.0", "NA", "True", "true", "", " ", "é", "x,y",
                          '"q"', "nan", "None", "0", "-0"])
_CELL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from(["", "NA", "nan", "inf", "-inf", "x", "1e400", "1,5", "0x10", " 3 "]),
)
_NAME = st.text(alphabet=string.ascii_letters + string.digits + " _-.,;\"'é", min_size=0,
                max_size=6)


@st.composite
def hostile_csv(draw):
    """A CSV text: usually a valid data set with some cells, names or labels corrupted."""
    seed = draw(st.integers(0, 10_000))
    d = draw(st.integers(1, 3))
    p = draw(st.integers(d, d + 2))
    K = draw(st.integers(1, 3))
    n = draw(st.sampled_from([3, 20, 120]))
    sim = simulate(d, max(K, 1), n, n_features=p, random_state=seed)
    X, env = sim.stacked()
    X = X * draw(st.sampled_from([1.0, 1e-200, 1e200, 1e13]))
    names = [f"x{i}" for i in range(p)]
    if draw(st.booleans()):
        names = [draw(_NAME) for _ in range(p)]
    labels = draw(st.lists(_LABEL, min_size=K, max_size=K))
    df = pd.DataFrame(X.astype(object), columns=range(p))
    df["lab"] = np.asarray(labels, dtype=object)[env]
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(df) - 1))
        j = draw(st.integers(0, p))
        df.iat[i, j] = draw(_CELL) if j < p else draw(_LABEL)
    if draw(st.booleans()):
        df[draw(st.integers(0, p - 1))] = 5.0  # a constant column
    df.columns = [*names, draw(st.sampled_from(["lab", "lab", "env", ""]))]
    text = df.to_csv(index=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]  # truncated
    return text, d


def _csv_property(tmp_path_factory, case) -> None:
    text, d = case
    root = tmp_path_factory.mktemp("csv")
    (root / "data.csv").write_text(text, encoding="utf-8")
    (root / "keep.txt").write_text("user file\n")
    before = _tree(root)
    code, err = _run_cli(["fit", str(root / "data.csv"), "--env-column", "lab",
                          "--n-latent", str(d), "--out", str(root / "out")])
    _check_exit(code, err)
    assert _outside(_tree(root), "out") == before
    if code == 0:
        model = CREATOR.load(root / "out" / "model.npz")
        _check_model_finite(model, np.zeros((2, model.n_features_in_)))
    else:
        assert not (root / "out").exists()


@QUICK
@given(hostile_csv())
def test_cli_fit_on_hostile_csv(tmp_path_factory, case):
    _csv_property(tmp_path_factory, case)


@pytest.mark.slow
@thorough(400)
@given(hostile_csv())
def test_cli_fit_on_hostile_csv_thorough(tmp_path_factory, case):
    _csv_property(tmp_path_factory, case)



def test_cli_fit_on_csv_of_tiny_values_saves_a_model_that_loads(tmp_path_factory):
    """Values near 1e-200 beside one 1.0: the model written loads (its rank is unit-free)."""
    rng = np.random.default_rng(0)
    rows = ["x0,x1,x2,lab"]
    for k, lab in enumerate("ab"):
        for i in range(20):
            v = rng.standard_normal(3) * 1e-200
            if k == 0 and i == 0:
                v[0] = 1.0
            rows.append(",".join(repr(float(x)) for x in v) + f",{lab}")
    _csv_property(tmp_path_factory, ("\n".join(rows) + "\n", 2))


# ------------------------------------------------------------------ model files
_MODEL_BYTES: dict = {}


def _genuine_model() -> tuple[bytes, np.ndarray]:
    if not _MODEL_BYTES:
        sim = simulate(2, 3, 80, n_features=3, random_state=0)
        model = CREATOR(2, random_state=0).fit(sim.X)
        buf = io.BytesIO()
        from creator_plugin.persistence import _encode_model

        np.savez(buf, **_encode_model(model))
        _MODEL_BYTES["file"] = buf.getvalue()
        _MODEL_BYTES["X"] = sim.X[0]
    return _MODEL_BYTES["file"], _MODEL_BYTES["X"]


@st.composite
def hostile_model_file(draw):
    data, _ = _genuine_model()
    kind = draw(st.sampled_from(["flip", "truncate", "meta", "member", "array"]))
    if kind == "flip":
        b = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            b[draw(st.integers(0, len(b) - 1))] = draw(st.integers(0, 255))
        return bytes(b)
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    meta = json.loads(np.load(io.BytesIO(members["__metadata__.npy"])).tobytes())
    if kind == "meta":
        where = draw(st.sampled_from(["params", "attributes"]))
        key = draw(st.sampled_from(sorted(meta[where])))
        meta[where][key] = draw(st.one_of(
            st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=True),
            st.text(max_size=5), st.lists(st.integers(-2, 5), max_size=4),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            st.just({"__ndarray__": "a0"}), st.just({"__ndarray__": "zz"})))
    elif kind == "member":
        name = draw(st.sampled_from(sorted(members)))
        if draw(st.booleans()):
            del members[name]
        else:
            members[f"extra{draw(st.integers(0, 9))}.npy"] = members[name]
    else:
        name = draw(st.sampled_from(sorted(m for m in members if m != "__metadata__.npy")))
        arr = np.load(io.BytesIO(members[name]))
        new = draw(st.sampled_from(["nan", "complex", "shape", "int", "big"]))
        if new == "nan":
            arr = np.full(arr.shape, np.nan)
        elif new == "complex":
            arr = arr.astype(complex)
        elif new == "shape":
            arr = np.zeros((arr.shape[0] + 1,) + arr.shape[1:])
        elif new == "int":
            arr = arr.astype(np.int64) + 2
        else:
            arr = np.full(arr.shape, 1e308) * 10
        buf = io.BytesIO()
        np.save(buf, arr)
        members[name] = buf.getvalue()
    buf = io.BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), np.uint8))
    members["__metadata__.npy"] = buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return out.getvalue()


def _model_property(tmp_path_factory, blob) -> None:
    _, X = _genuine_model()
    path = tmp_path_factory.mktemp("m") / "model.npz"
    path.write_bytes(blob)
    try:
        model = CREATOR.load(path)
    except ValueError as exc:
        msg = str(exc)
        assert str(path) in msg and "\n" not in msg
        return
    _check_model_finite(model, X)


@QUICK
@given(hostile_model_file())
def test_load_hostile_model_file(tmp_path_factory, blob):
    _model_property(tmp_path_factory, blob)


@pytest.mark.slow
@thorough(300)
@given(hostile_model_file())
def test_load_hostile_model_file_thorough(tmp_path_factory, blob):
    _model_property(tmp_path_factory, blob)


# ------------------------------------------------------------------ markers
_PATHS = st.sampled_from(["a.csv", "sub/b.json", "../victim.txt", "/etc/hostname", "./a.csv",
                          "sub/../../victim.txt", "", "sub", "sub/", "a.csv\x00", "link/x",
                          "..", ".", "sub//b.json", MARKER, "victim.txt", "c.csv"])


@st.composite
def hostile_marker(draw):
    entries = draw(st.dictionaries(_PATHS, st.one_of(
        st.just("genuine"), st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
        st.integers(), st.none()), max_size=5))
    extra = draw(st.sampled_from([None, "emptydir", "userfile", "symlink", "dirlink"]))
    drop_tool = draw(st.integers(0, 9)) == 0
    return entries, extra, drop_tool


def _marker_property(tmp_path_factory, case) -> None:
    import hashlib

    entries, extra, drop_tool = case
    root = tmp_path_factory.mktemp("mk")
    (root / "victim.txt").write_text("victim\n")
    out = root / "r"
    with OutputDir(out).write({"n": 1}) as tmp:
        (tmp / "a.csv").write_text("1\n")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.json").write_text("{}")
    marker = json.loads((out / MARKER).read_text())
    for rel, digest in entries.items():
        if digest == "genuine":
            target = out / rel if not rel.startswith("/") else Path(rel)
            try:
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
            except (OSError, ValueError):
                digest = "0" * 64
        marker["files"][rel] = digest
    if drop_tool:
        marker["tool"] = "other"
    (out / MARKER).write_text(json.dumps(marker))
    if extra == "emptydir":
        (out / "mine").mkdir()
    elif extra == "userfile":
        (out / "mine.txt").write_text("mine\n")
    elif extra == "symlink":
        os.symlink(root / "victim.txt", out / "link")
    elif extra == "dirlink":
        os.symlink(root, out / "link")
    before = _outside(_tree(root), "r")
    try:
        target = OutputDir(out, force=True)
    except OutputDirError as exc:
        assert "\n" not in str(exc)
        assert _outside(_tree(root), "r") == before
        return
    with target.write({"n": 2}) as tmp:
        (tmp / "new.csv").write_text("2\n")
    assert _outside(_tree(root), "r") == before
    assert sorted(os.listdir(out)) == sorted([MARKER, "new.csv"])
    assert sorted(os.listdir(root)) == ["r", "victim.txt"]


@QUICK
@given(hostile_marker())
def test_force_with_hostile_marker(tmp_path_factory, case):
    _marker_property(tmp_path_factory, case)


@pytest.mark.slow
@thorough(300)
@given(hostile_marker())
def test_force_with_hostile_marker_thorough(tmp_path_factory, case):
    _marker_property(tmp_path_factory, case)


# ------------------------------------------------------------------ arrays and frames
_SIM = simulate(3, 3, 300, n_features=5, random_state=4)
_BASE = CREATOR(3, random_state=0).fit([pd.DataFrame(x, columns=list("abcde")) for x in _SIM.X])


@pytest.mark.slow
@QUICK
@given(st.permutations(list("abcde")), st.permutations(list("abcde")))
def test_column_order_of_frames_does_not_matter(first, second):
    frames = [pd.DataFrame(x, columns=list("abcde")) for x in _SIM.X]
    model = CREATOR(3, random_state=0).fit([frames[0][first], frames[1][second], frames[2]])
    np.testing.assert_array_equal(model.adjacency_matrix_, _BASE.adjacency_matrix_)
    for a, b in zip(model.latents_, _BASE.latents_):
        np.testing.assert_allclose(a, b, atol=1e-8)


@st.composite
def hostile_arrays(draw):
    d = draw(st.integers(1, 3))
    K = draw(st.integers(1, 3))
    sim = simulate(d, K, draw(st.sampled_from([4, 40])), n_features=d + draw(st.integers(0, 2)),
                   random_state=draw(st.integers(0, 999)))
    X = [x.copy() for x in sim.X]
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(0, K - 1))
        i, j = draw(st.integers(0, X[k].shape[0] - 1)), draw(st.integers(0, X[k].shape[1] - 1))
        X[k][i, j] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e308, 0.0, 1e-320]))
    return X, draw(st.integers(0, d + 1))


@QUICK
@given(hostile_arrays())
def test_fit_on_hostile_arrays(case):
    X, d = case
    copies = [x.copy() for x in X]
    try:
        model = CREATOR(d, random_state=0).fit(X)
    except (ValueError, TypeError) as exc:
        assert str(exc).strip()
    else:
        _check_model_finite(model, X[0])
    for a, b in zip(X, copies):
        np.testing.assert_array_equal(a, b)  # never modified in place
