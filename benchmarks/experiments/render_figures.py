"""Render the d = 11, K = 9 latent-DAG figure (docs/figures/graph_d11_k9.png).

Run from the repository root:
    python benchmarks/experiments/render_figures.py

docs/figures/graph.png and loadings.png are drawn by the example their caption
describes: python examples/04_name_latents.py --figures docs/figures
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.plotting import plot_graph  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "docs" / "figures"
MARKERS = ["IL6", "TNF", "CRP", "IL1B", "IL10", "IFNG", "CXCL8", "CCL2", "VEGFA", "TGFB1",
           "IL17A", "IL4", "IL13", "GZMB", "PRF1", "CD8A", "CD4", "FOXP3", "MKI67", "HLA-DR",
           "ALB", "BILI", "ALT", "AST", "GGT", "CREA", "UREA", "NA", "K", "GLU", "HBA1C",
           "LDL", "HDL"]


def render(d: int, K: int, n: int, seed: int, name: str) -> Path:
    # Each latent drives three measurements of its own, so the node labels can be checked.
    sim = simulate(d, K, n, mixing="pure", indicators_per_latent=3, measurement_noise=0.1,
                   random_state=seed)
    cols = MARKERS[: 3 * d]
    frames = [pd.DataFrame(x, columns=cols) for x in sim.X]
    model = CREATOR(n_latent=d, random_state=seed).fit(frames)
    fig = plot_graph(model)
    path = OUT / name
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    print(render(11, 9, 1000, 0, "graph_d11_k9.png"))
