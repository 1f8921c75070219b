"""Valid but unusual inputs that must fit: one latent, 'auto' without a decisive test."""

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.cli import main
from creator_plugin.dimension import select_n_latent

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("p, K", [(1, 2), (1, 4), (3, 2), (5, 3)])
def test_one_latent_fits_end_to_end(p, K):
    sim = simulate(1, K, 400, n_features=p, random_state=p + K)
    model = CREATOR(1, random_state=0).fit(sim.X)
    assert model.adjacency_matrix_.shape == (1, 1) and model.adjacency_matrix_.sum() == 0
    out = model.transform(sim.X[0])
    assert out.shape == (400, 1) and np.isfinite(out).all()
    assert abs(np.corrcoef(out[:, 0], sim.Y[0][:, 0])[0, 1]) > 0.99
    assert "summary" in model.diagnostics_["quality"]


def test_one_latent_demo_and_dims(tmp_path, capsys):
    assert main(["demo", "--n-latent", "1"]) == 0
    sim = simulate(1, 3, 300, random_state=0)
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=["x0"])
    df["lab"] = env
    df.to_csv(tmp_path / "one.csv", index=False)
    capsys.readouterr()
    assert main(["dims", str(tmp_path / "one.csv"), "--env-column", "lab"]) == 0
    assert "n_latent = 1" in capsys.readouterr().out


def test_bench_with_a_one_by_one_truth(tmp_path, capsys):
    sim = simulate(1, 3, 300, n_features=3, random_state=1)
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["lab"] = env
    df.to_csv(tmp_path / "d.csv", index=False)
    pd.DataFrame([[0]], index=["Y0"], columns=["Y0"]).to_csv(tmp_path / "adj.csv")
    pd.DataFrame(np.vstack(sim.Y), columns=["Y0"]).to_csv(tmp_path / "lat.csv", index=False)
    code = main(["bench", "--data", str(tmp_path / "d.csv"), "--env-column", "lab",
                 "--truth-adjacency", str(tmp_path / "adj.csv"), "--truth-latents",
                 str(tmp_path / "lat.csv"), "--methods", "CREATOR", "--seeds", "1",
                 "--no-progress", "--no-figures", "--out", str(tmp_path / "b")])
    assert code == 0, capsys.readouterr().err
    rows = pd.read_csv(tmp_path / "b" / "results.csv")
    assert rows.loc[0, "shd"] == 0 and rows.loc[0, "locr2"] > 0.99


@pytest.mark.parametrize("d, p", [(3, 3), (3, 6), (3, 12), *(
    pytest.param(d, p, marks=pytest.mark.slow)
    for d, p in [(4, 4), (4, 8), (4, 16), (5, 5), (5, 10), (5, 20)])])
def test_auto_on_noise_free_data_returns_d(d, p):
    """No likelihood-ratio test decides on noise-free data; the rank does, and says so."""
    sim = simulate(d, d, 500, n_features=p, random_state=d * p)
    model = CREATOR("auto", random_state=0).fit(sim.X)
    assert model.n_latent_ == d
    summary = model.diagnostics_["n_latent_selection"]["summary"]
    assert summary.startswith(f"n_latent = {d}:")
    sel = select_n_latent(sim.X)
    assert sel.decided_by in ("rank", "all_directions")
    assert sel.criteria["factor_lr_test"] is None
