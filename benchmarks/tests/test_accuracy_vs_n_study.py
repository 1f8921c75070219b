"""The accuracy-against-n study: its cells, table and figure."""

import numpy as np
import pytest

from creator_plugin import simulate
from creator_plugin.benchmark.baselines import METHODS
from creator_plugin.benchmark.grid import run_grid


def _broken(X_list, n_latent, random_state):
    raise RuntimeError("forced failure")


def _spy(X_list, n_latent, random_state):
    """Returns the first d observed columns as latents: its LocR² pins down its data."""
    d = n_latent
    return np.zeros((d, d)), [x[:, :d] for x in X_list], list(range(d))


TABLE = {**METHODS, "broken": _broken, "spy": _spy}


@pytest.mark.slow
def test_n_curve_cells_table_and_figure(tmp_path):
    import pandas as pd
    from accuracy_vs_n import (
        n_curve_failures,
        n_curve_figure,
        n_curve_grid,
        n_curve_markdown,
    )

    cells = n_curve_grid([2, 3], [200, 400], edge_prob={3: 0.3})
    assert [(c["n_latent"], c["n_environments"], c["n_samples"], c["edge_prob"])
            for c in cells] == [(2, 2, 200, 0.5), (2, 2, 400, 0.5), (3, 3, 200, 0.3),
                                (3, 3, 400, 0.3)]
    rows = run_grid(cells, [5], ["CREATOR", "broken"], method_table=TABLE)
    # the data are simulate(d, d, n, ..., random_state=seed), as a user would simulate them
    spy = run_grid(cells[2:3], [5], ["spy"], method_table=TABLE)[0]
    sim = simulate(3, 3, 200, setting=1, edge_prob=0.3, random_state=5)
    assert spy["data_seed"] == 5 and spy["n_true_edges"] == int(sim.adjacency.sum())
    df = pd.DataFrame(rows)
    table = n_curve_markdown(df)
    lines = table.splitlines()
    assert len(lines) == 2 + 4  # header, rule, one row per (d, n)
    # two fits per cell, one failed: counted, and the mean (of the other) marked
    assert lines[-1].startswith("| 3 | 0.3 | 400 |") and lines[-1].endswith("| 2 (1) |")
    assert all(" † |" in line for line in lines[2:])
    assert len(n_curve_failures(df).splitlines()) == 4
    path = n_curve_figure(df, tmp_path / "curve.png")
    assert path.exists() and path.stat().st_size > 1000
    # a cell whose every fit failed still has its row, never silently dropped
    only_failed = pd.DataFrame(rows + run_grid(n_curve_grid([4], [100]), [5, 6], ["broken"],
                                               method_table=TABLE))
    last = n_curve_markdown(only_failed).splitlines()[-1]
    assert last.startswith("| 4 | 0.5 | 100 | nan †") and last.endswith("| 2 (2) |")
    assert "failed: d=4 n=100 seed=6" in n_curve_failures(only_failed)
    assert n_curve_figure(only_failed, tmp_path / "curve2.png").exists()
