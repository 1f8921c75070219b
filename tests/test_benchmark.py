"""The benchmark grid runner: rows, failure rows, identical results on every backend."""

import numpy as np
import pytest

from creator_plugin import simulate
from creator_plugin.benchmark.baselines import METHODS, fit_lingcrel
from creator_plugin.benchmark.cli import main
from creator_plugin.benchmark.figures import summary_markdown
from creator_plugin.benchmark.grid import data_seed, full_grid, run_grid, threshold_grid
from creator_plugin.metrics import evaluate

CELLS = [{"grid": "t", "n_latent": 2, "n_environments": 2, "n_samples": 300, "setting": 1},
         {"grid": "t", "n_latent": 3, "n_environments": 3, "n_samples": 300, "setting": 2}]
PAIR = ["CREATOR", "PCA+ICA-LiNGAM (pooled)"]


def _broken(X_list, n_latent, random_state):
    raise RuntimeError("forced failure")


def _spy(X_list, n_latent, random_state):
    """Returns the first d observed columns as latents: its LocR² pins down its data."""
    d = n_latent
    return np.zeros((d, d)), [x[:, :d] for x in X_list], list(range(d))


TABLE = {**METHODS, "broken": _broken, "spy": _spy}
KEY = ["method", "n_latent", "seed", "data_seed", "shd", "locr2", "topological_divergence",
       "exact_dag", "correct_order"]


def _key(rows):
    return [tuple(r.get(k) for k in KEY) for r in rows]


@pytest.mark.slow
def test_tiny_grid_rows_and_failures():
    rows = run_grid(CELLS, 2, ["CREATOR", "LiNGCReL", "PCA+MultiGroupDirectLiNGAM", "broken"],
                    method_table=TABLE)
    assert len(rows) == 2 * 2 * 4
    assert [(r["n_latent"], r["seed"]) for r in rows[:4]] == [(2, 0)] * 4
    ok = [r for r in rows if r["method"] != "broken"]
    assert all(r["status"] == "ok" for r in ok)
    assert all(0 <= r["locr2"] <= 1 and r["shd"] >= 0 and r["seconds"] > 0 for r in ok)
    bad = [r for r in rows if r["method"] == "broken"]
    assert len(bad) == 4 and all(r["status"] == "failed" for r in bad)
    assert all(r["error"] == "RuntimeError: forced failure" for r in bad)
    assert all("shd" not in r for r in bad)
    # one data seed per (cell, seed), shared by every method
    for c in range(2):
        for s in range(2):
            block = rows[(2 * c + s) * 4:(2 * c + s + 1) * 4]
            assert len({r["data_seed"] for r in block}) == 1
    summary = summary_markdown(__import__("pandas").DataFrame(rows))
    assert "Failed fits: 4" in summary and "forced failure" in summary


def test_every_method_sees_the_same_data():
    spy = run_grid(CELLS[:1], [3], ["spy"], method_table=TABLE)[0]
    sim = simulate(2, 2, 300, setting=1, random_state=spy["data_seed"])
    expected = evaluate(sim.adjacency, sim.Y, np.zeros((2, 2)), [x[:, :2] for x in sim.X],
                        [0, 1])
    assert spy["locr2"] == pytest.approx(expected["locr2"])


def test_threshold_cells_only_run_creator_on_the_main_cells_data():
    cells = threshold_grid(d=2, thresholds={"residual": [0.1, 0.3]})
    main_cell = {"grid": "main", "n_latent": 2, "n_environments": 2, "n_samples": 1000,
                 "setting": 1}
    assert data_seed(cells[0], 4) == data_seed(cells[1], 4) == data_seed(main_cell, 4)
    rows = run_grid(cells, 1, ["CREATOR", "LiNGCReL"])
    assert [r["method"] for r in rows] == ["CREATOR", "CREATOR"]
    assert [r["prune_threshold"] for r in rows] == [0.1, 0.3]
    assert all(r["status"] == "ok" and "methods" not in r for r in rows)
    grids = {c["grid"] for c in full_grid()}
    assert grids == {"main", "sigma", "beta", "threshold"}


def test_lingcrel_recovers_the_graph_under_its_own_assumption():
    sim = simulate(3, 6, 3000, setting=2, random_state=1)
    adj, latents, order = fit_lingcrel(sim.X, 3, random_state=0)
    ev = evaluate(sim.adjacency, sim.Y, adj, latents, order)
    assert ev["locr2"] > 0.9 and ev["shd"] <= 1


def test_unknown_method():
    with pytest.raises(ValueError, match="Unknown methods"):
        run_grid(CELLS, 1, ["nope"])


@pytest.mark.slow
def test_serial_joblib_and_dask_identical():
    distributed = pytest.importorskip("distributed")
    import joblib

    serial = run_grid(CELLS, 2, PAIR)
    parallel = run_grid(CELLS, 2, PAIR, n_jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        dask = run_grid(CELLS, 2, PAIR)
    assert _key(serial) == _key(parallel) == _key(dask)
    assert all(r["status"] == "ok" for r in serial)


@pytest.mark.slow
def test_cli_writes_results_and_figures(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "bench"

    assert main(["--quick", "--seeds", "1", "--methods", "CREATOR", "--out", str(out),
                 "--no-progress"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert set(df["status"]) == {"ok"} and len(df) == 6
    assert np.isfinite(df["shd"]).all()
    summary = (out / "summary.md").read_text()
    assert "Failed fits: 0" in summary and "### Main grid: mean SHD / mean LocR²" in summary
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "main_locr2_setting1_Kd.png" in pngs and "main_shd_setting2_Kd.png" in pngs


def test_cli_rejects_two_dask_options():
    with pytest.raises(SystemExit):
        main(["--dask-local", "2", "--dask-scheduler", "tcp://x:1"])
