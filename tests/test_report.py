"""Pictures and the fit report: plotting, write_fit_report and ``creator fit --plots``."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from creator_plugin import simulate
from creator_plugin.cli import main
from creator_plugin.plotting import plot_graph, plot_loadings

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def csv_file(tmp_path):
    sim = simulate(3, 3, 400, n_features=5, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X * [1, 100, 0.01, 1, 10], columns=["temp", "ph", "flow", "load", "rpm"])
    df.insert(2, "lab", np.array(["a", "b", "c"])[labels])
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_fit_writes_tables_and_plots(csv_file, tmp_path):
    out = tmp_path / "out"
    assert main(["fit", str(csv_file), "--env-column", "lab", "--n-latent", "3",
                 "--out", str(out), "--plots"]) == 0
    loadings = pd.read_csv(out / "loadings.csv", index_col=0)
    assert list(loadings.index) == ["temp", "ph", "flow", "load", "rpm"]
    assert list(loadings.columns) == ["L1", "L2", "L3"]
    assert np.abs(loadings.to_numpy()).max() < 5  # standardised, whatever the units
    for name in ("noise_scales.csv", "intercepts.csv"):
        table = pd.read_csv(out / name, index_col=0)
        assert list(table.index) == ["a", "b", "c"] and table.shape == (3, 3)
    for name in ("graph.png", "loadings.png"):
        assert (out / name).read_bytes()[:8] == PNG


def test_fit_without_plots_draws_nothing(csv_file, tmp_path):
    out = tmp_path / "out"
    assert main(["fit", str(csv_file), "--env-column", "lab", "--n-latent", "3",
                 "--out", str(out)]) == 0
    assert (out / "loadings.csv").exists() and not (out / "graph.png").exists()


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_loadings_heatmap_shows_every_value(sim3, fit):
    model = fit(sim3.X, 3)
    fig = plot_loadings(model, feature_names=["a", "b", "c", "d"])
    assert len(_texts(fig)) == 12
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b", "c", "d"]


def test_missing_matplotlib_names_the_extra(sim3, fit, monkeypatch):
    model = fit(sim3.X, 3)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"creator-plugin\[plots\]"):
        plot_graph(model)
