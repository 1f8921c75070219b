"""Benchmark figures: a method whose seeds all score the same stays visible; bench --data draws."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from creator_plugin import simulate  # noqa: E402
from creator_plugin.benchmark.cli import main  # noqa: E402
from creator_plugin.benchmark.figures import _boxes  # noqa: E402


def test_zero_spread_method_keeps_a_marker_of_its_colour_at_its_value():
    import matplotlib.pyplot as plt

    rows = [{"method": m, "n_latent": d, "seed": s, "shd": 0.0 if m == "A" else float(s % 3)}
            for d in (3, 6) for m in ("A", "B") for s in range(5)]
    df = pd.DataFrame(rows)
    fig, ax = plt.subplots()
    _boxes(ax, [(f"d={d}", df[df["n_latent"] == d]) for d in (3, 6)], ["A", "B"], "shd")
    colour = to_rgba("C0")
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"
            and to_rgba(ln.get_markerfacecolor()) == colour]
    assert len(dots) == 2  # one set of dots per group
    for ln in dots:
        y = np.asarray(ln.get_ydata(), dtype=float)
        assert len(y) == 5 and np.all(y == 0.0)
        assert ln.get_markersize() >= 4
    plt.close(fig)


@pytest.mark.slow  # two fits through the command line: a few seconds
def test_bench_data_writes_the_box_plots(tmp_path):
    sim = simulate(3, 3, 200, random_state=5)
    names = [f"Y{i}" for i in range(3)]
    env = np.concatenate([[lab] * x.shape[0] for lab, x in zip("abc", sim.X)])
    data = pd.DataFrame(np.vstack(sim.X), columns=[f"x{j}" for j in range(sim.X[0].shape[1])])
    data.insert(0, "lab", env)
    data.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame(sim.adjacency, index=names, columns=names).to_csv(tmp_path / "adj.csv")
    lat = pd.DataFrame(np.vstack(sim.Y), columns=names)
    lat.to_csv(tmp_path / "lat.csv", index=False)
    out = tmp_path / "out"
    assert main(["--data", str(tmp_path / "data.csv"), "--env-column", "lab",
                 "--truth-adjacency", str(tmp_path / "adj.csv"), "--truth-latents",
                 str(tmp_path / "lat.csv"), "--methods", "CREATOR", "--seeds", "2",
                 "--out", str(out), "--no-progress"]) == 0
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["data_locr2.png", "data_shd.png", "data_shd_min_relabel.png"]
    for name in pngs:
        assert (out / name).read_bytes()[:4] == b"\x89PNG" and (out / name).stat().st_size > 5000
