"""The Sachs walkthrough: its scoring rule, and the small run end to end."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "06_real_data.py"
spec = importlib.util.spec_from_file_location("real_data_example", SCRIPT)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def test_score_counts_missing_extra_and_reversed_edges():
    truth = np.zeros((3, 3), int)
    truth[0, 1] = truth[1, 2] = 1
    assert example.score(truth, truth, "x")["shd"] == 0
    reversed_ = truth.T.copy()
    row = example.score(reversed_, truth, "x")
    assert row["shd"] == 2 and row["directed_tp"] == 0 and row["skeleton_recall"] == 1.0
    extra = truth.copy()
    extra[0, 2] = 1
    row = example.score(extra, truth, "x")
    assert row["shd"] == 1 and row["directed_precision"] == pytest.approx(2 / 3, abs=1e-3)
    undirected = np.zeros((3, 3), int)
    undirected[0, 1] = undirected[1, 0] = 1  # one unoriented true adjacency, one missing
    row = example.score(undirected, truth, "x")
    assert row["shd"] == 2 and row["directed_pred"] == 0 and row["skeleton_recall"] == 0.5


def test_shipped_data_and_consensus_graph():
    pytest.importorskip("lingam")
    if importlib.util.find_spec("cdt") is None and not _has_dist("cdt"):
        pytest.skip("cdt not installed")
    X, env, names, truth = example.load()
    assert X.shape == (7466, 11) and np.isfinite(X).all()
    assert np.bincount(env).tolist() == example.BLOCKS
    assert truth.sum() == 18 and "PKA" in names


def _has_dist(name: str) -> bool:
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        distribution(name)
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.slow
def test_small_run_scores_every_method():
    if not _has_dist("cdt"):
        pytest.skip("cdt not installed")
    out = subprocess.run([sys.executable, str(SCRIPT)], cwd=SCRIPT.parents[1],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    for method in ("CREATOR", "PC (causal-learn", "CD-NOD", "DirectLiNGAM",
                   "MultiGroupDirectLiNGAM",
                   "empty graph"):
        assert method in out.stdout
