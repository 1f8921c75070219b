"""Saved fits reload identically; output directories appear whole or not at all."""

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.persistence import atomic_output_dir


def test_save_load_gives_identical_transform(tmp_path, fit):
    sim = simulate(3, 3, 300, n_features=4, random_state=0)
    model = fit(sim.X, 3)
    model.save(tmp_path / "m.joblib")
    again = CREATOR.load(tmp_path / "m.joblib")
    np.testing.assert_array_equal(again.transform(sim.X[1]), model.transform(sim.X[1]))
    np.testing.assert_array_equal(again.adjacency_matrix_, model.adjacency_matrix_)
    assert [p.name for p in tmp_path.iterdir()] == ["m.joblib"]  # no temporary left


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="No saved model"):
        CREATOR.load(tmp_path / "nope.joblib")


def test_atomic_dir_failure_leaves_nothing(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(RuntimeError), atomic_output_dir(target) as tmp:
        (tmp / "half.csv").write_text("1,2")
        raise RuntimeError("crash midway")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_refuses_then_replaces_with_force(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(FileExistsError, match="already exists"), atomic_output_dir(target):
        pass
    assert (target / "old.txt").exists()
    with atomic_output_dir(target, force=True) as tmp:
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
