"""Saved fits reload identically; loading never runs code; damaged files give one clear error."""

import errno
import os
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, persistence, simulate


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 3, 300, n_features=4, random_state=0)


@pytest.fixture(scope="module")
def model(sim, fit):
    frames = [pd.DataFrame(x, columns=["a", "b", "c", "d"]) for x in sim.X]
    return fit(frames, 3).set_output(transform="pandas")


@pytest.fixture
def saved(tmp_path, model):
    path = tmp_path / "m.npz"
    model.save(path)
    return path


def _same(a, b, where="model"):
    """Deep equality of fitted attributes: types, dtypes and values (NaN == NaN)."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    else:
        assert a == b or (a != a and b != b), (where, a, b)


def test_round_trip_identical_attributes_and_transform(tmp_path, sim, model, saved):
    again = CREATOR.load(saved)
    fitted = {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}
    assert "diagnostics_" in fitted and "feature_names_in_" in fitted
    _same(fitted, {k: getattr(again, k) for k in fitted})
    assert again.get_params() == model.get_params()
    X1 = pd.DataFrame(sim.X[1], columns=["a", "b", "c", "d"])
    pd.testing.assert_frame_equal(again.transform(X1), model.transform(X1))  # set_output kept
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no temporary left


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="No saved model"):
        CREATOR.load(tmp_path / "nope.npz")


class _Payload:
    """Unpickling this creates the directory ``marker``: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.parametrize("name", ["evil.joblib", "evil.npz", "evil.pkl"])
def test_crafted_pickle_runs_no_code_through_default_load(tmp_path, name):
    marker = tmp_path / "code_ran"
    path = tmp_path / name
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ValueError, match=r"evil.*pickle.*allow_pickle=True"):
        CREATOR.load(path)
    assert not marker.exists()
    # The payload is real: opting in to pickles runs it.
    with pytest.raises(ValueError, match="not a CREATOR"):
        CREATOR.load(path, allow_pickle=True)
    assert marker.exists()


def test_npz_with_pickled_object_array_runs_no_code(tmp_path, model):
    marker = tmp_path / "code_ran"
    good = tmp_path / "good.npz"
    model.save(good)
    with np.load(good) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["a0"] = np.array([_Payload(marker)], dtype=object)
    evil = tmp_path / "evil.npz"
    np.savez(evil, **arrays)
    with pytest.raises(ValueError, match="evil.npz is not a valid creator-plugin model file"):
        CREATOR.load(evil)
    assert not marker.exists()


def _damaged(tmp_path, saved, kind):
    path = tmp_path / f"{kind}.npz"
    data = saved.read_bytes()
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "flipped":
        mid = len(data) // 3
        path.write_bytes(data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 64])
                         + data[mid + 64:])
    elif kind == "random":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "csv":
        path.write_text("a,b\n1,2\n")
    elif kind == "foreign_npz":
        np.savez(path, x=np.arange(3))
    elif kind == "foreign_zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("hello.txt", "hi")
    elif kind in ("future_version", "wrong_class", "bad_shapes"):
        with np.load(saved) as npz:
            arrays = {k: npz[k] for k in npz.files}
        import json

        meta = json.loads(arrays["__metadata__"].tobytes())
        if kind == "future_version":
            meta["format_version"] = 99
        elif kind == "wrong_class":
            meta["class"] = "Evil"
        else:
            key = meta["attributes"]["components_"]["__ndarray__"]
            arrays[key] = arrays[key][:, :2]
        arrays["__metadata__"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("kind", ["empty", "truncated", "flipped", "random", "csv",
                                  "foreign_npz", "foreign_zip", "future_version",
                                  "wrong_class", "bad_shapes"])
def test_damaged_or_foreign_files_give_one_value_error_naming_the_file(tmp_path, saved, kind):
    path = _damaged(tmp_path, saved, kind)
    for allow_pickle in (False, True):
        with pytest.raises(ValueError, match=rf"{kind}\.npz"):
            CREATOR.load(path, allow_pickle=allow_pickle)


def test_joblib_format_only_with_opt_in(tmp_path, sim, model):
    path = tmp_path / "m.joblib"
    model.save(path, format="joblib")
    with pytest.raises(ValueError, match="pickle"):
        CREATOR.load(path)
    again = CREATOR.load(path, allow_pickle=True)
    np.testing.assert_array_equal(again.components_, model.components_)
    truncated = tmp_path / "t.joblib"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match="t.joblib"):
        CREATOR.load(truncated, allow_pickle=True)
    with pytest.raises(ValueError, match="format must be"):
        model.save(tmp_path / "x", format="pickle")


@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink_to_dir", "device"])
def test_save_refuses_non_regular_targets(tmp_path, model, kind):
    target = tmp_path / "target"
    if kind == "directory":
        target.mkdir()
        (target / "inside.txt").write_text("keep")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink_to_dir":
        (tmp_path / "real").mkdir()
        target.symlink_to(tmp_path / "real")
    else:
        target = "/dev/null"
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="target|/dev/null"):
        model.save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if kind == "directory":
        assert (tmp_path / "target" / "inside.txt").read_text() == "keep"


def test_save_syncs_before_renaming(tmp_path, model, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace",
                        lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    model.save(tmp_path / "m.npz")
    assert calls[:2] == ["fsync", "replace"]


def test_disk_full_keeps_the_previous_file(tmp_path, model, saved, monkeypatch):
    before = saved.read_bytes()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(persistence.np, "savez", full)
    with pytest.raises(OSError, match="No space left"):
        model.save(saved)
    assert saved.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]
