"""The benchmark grid runner: rows, failure rows, identical results on every backend."""

import numpy as np
import pytest

from creator_plugin.benchmark.baselines import METHODS
from creator_plugin.benchmark.cli import main, summarise
from creator_plugin.benchmark.grid import run_grid

CELLS = [{"grid": "t", "n_latent": 2, "n_environments": 2, "n_samples": 300, "setting": 1},
         {"grid": "t", "n_latent": 3, "n_environments": 3, "n_samples": 300, "setting": 2}]


def _broken(X_list, n_latent, random_state):
    raise RuntimeError("forced failure")


TABLE = {**METHODS, "broken": _broken}
KEY = ["method", "n_latent", "seed", "shd", "locr2", "exact_dag", "correct_order"]


def _key(rows):
    return [tuple(r.get(k) for k in KEY) for r in rows]


def test_tiny_grid_rows_and_failures():
    rows = run_grid(CELLS, 2, ["CREATOR", "LiNGCReL", "broken"], method_table=TABLE)
    assert len(rows) == 2 * 2 * 3
    ok = [r for r in rows if r["method"] != "broken"]
    assert all(r["status"] == "ok" for r in ok)
    assert all(0 <= r["locr2"] <= 1 and r["shd"] >= 0 and r["seconds"] > 0 for r in ok)
    bad = [r for r in rows if r["method"] == "broken"]
    assert len(bad) == 4 and all(r["status"] == "failed" for r in bad)
    assert all("forced failure" in r["error"] for r in bad)
    # every method sees the same data for a (cell, seed): CREATOR rows are reproducible
    again = run_grid(CELLS, 2, ["CREATOR"], method_table=TABLE)
    assert _key(again) == _key([r for r in rows if r["method"] == "CREATOR"])


def test_unknown_method():
    with pytest.raises(ValueError, match="Unknown methods"):
        run_grid(CELLS, 1, ["nope"])


def test_serial_joblib_and_dask_identical():
    distributed = pytest.importorskip("distributed")
    import joblib

    serial = run_grid(CELLS, 2, ["CREATOR", "PCA+ICA-LiNGAM (pooled)"])
    parallel = run_grid(CELLS, 2, ["CREATOR", "PCA+ICA-LiNGAM (pooled)"], n_jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        dask = run_grid(CELLS, 2, ["CREATOR", "PCA+ICA-LiNGAM (pooled)"])
    assert _key(serial) == _key(parallel) == _key(dask)


def test_cli_writes_results(tmp_path, capsys):
    import pandas as pd

    assert main(["--quick", "--seeds", "1", "--methods", "CREATOR", "--out",
                 str(tmp_path)]) == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert set(df["status"]) == {"ok"} and len(df) == 6
    assert "failed fits: 0" in (tmp_path / "summary.md").read_text()
    assert np.isfinite(df["shd"]).all()
    assert "| grid |" in summarise(df)
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "main_locr2_setting1_Kd.png" in pngs and "main_shd_setting2_Kd.png" in pngs
