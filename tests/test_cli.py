"""The ``creator`` command line: demo and fit, through the installed entry point."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from creator_plugin import simulate
from creator_plugin.cli import main


def _creator(*args, **kw):
    exe = shutil.which("creator")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "creator_plugin.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def test_demo_runs_and_prints_metrics():
    out = _creator("demo")
    assert out.returncode == 0, out.stderr
    for needle in ("True latent DAG", "Recovered DAG", "SHD", "LocR^2", "Topological divergence"):
        assert needle in out.stdout


@pytest.fixture
def csv_file(tmp_path):
    sim = simulate(3, 3, 400, n_features=5, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    df.insert(2, "lab", np.array(["a", "b", "c"])[labels])
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_fit_writes_outputs(csv_file, tmp_path):
    out_dir = tmp_path / "out"
    res = _creator("fit", str(csv_file), "--env-column", "lab", "--n-latent", "3",
                   "--out", str(out_dir))
    assert res.returncode == 0, res.stderr
    latents = pd.read_csv(out_dir / "latents.csv")
    assert list(latents.columns) == ["lab", "L1", "L2", "L3"]
    assert len(latents) == 1200
    adj = pd.read_csv(out_dir / "adjacency.csv", index_col=0)
    assert adj.shape == (3, 3) and set(np.unique(adj.to_numpy())) <= {0, 1}
    diag = json.loads((out_dir / "diagnostics.json").read_text())
    assert len(diag["pruning"]) == 3 and diag["environment_labels"] == ["a", "b", "c"]
    assert (out_dir / "weights.csv").exists() and (out_dir / "model.joblib").exists()


def test_fit_refuses_existing_dir_without_force(csv_file, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("precious")
    args = ["fit", str(csv_file), "--env-column", "lab", "--n-latent", "3", "--out", str(out_dir)]
    assert main(args) == 2
    assert "exists" in capsys.readouterr().err
    assert (out_dir / "keep.txt").read_text() == "precious"
    assert main([*args, "--force"]) == 0
    assert (out_dir / "latents.csv").exists() and not (out_dir / "keep.txt").exists()


def test_fit_reports_bad_input(csv_file, tmp_path, capsys):
    assert main(["fit", str(csv_file), "--env-column", "nope", "--n-latent", "3",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--env-column 'nope'" in capsys.readouterr().err
    assert main(["fit", str(csv_file), "--env-column", "lab", "--n-latent", "9",
                 "--out", str(tmp_path / "o")]) == 2
    assert "n_latent=9 exceeds" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
