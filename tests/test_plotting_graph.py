"""The latent-DAG picture, checked through matplotlib's artists."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.plotting import plot_graph  # noqa: E402

CASES = {"d3": (3, 4), "d11_k9": (11, 9), "d20": (20, 20)}


@pytest.fixture(scope="module", params=[
    "d3", "d11_k9", pytest.param("d20", marks=pytest.mark.slow)])
def fitted(request):
    d, K = CASES[request.param]
    sim = simulate(d, K, 300, n_features=3 * d, weight_scale=0.5, random_state=1)
    cols = [f"m{j}_{'abcdefgh'[j % 8] * (1 + j % 3)}" for j in range(3 * d)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(n_latent=d, random_state=0).fit(
            [pd.DataFrame(x, columns=cols) for x in sim.X])
    fig = plot_graph(model)
    fig.canvas.draw()
    yield model, fig
    import matplotlib.pyplot as plt

    plt.close(fig)


def _graph_axes(fig):
    return fig.axes[0]


def test_one_arrowhead_per_edge(fitted):
    model, fig = fitted
    arrows = [p for p in _graph_axes(fig).patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == int(model.adjacency_matrix_.sum())
    for a in arrows:
        assert a.get_arrowstyle().__class__.__name__ == "CurveFilledB"
    # Every edge points forward: the head is below the tail (roots on top).
    ax = _graph_axes(fig)
    texts = {t.get_text().split("\n")[0]: t for t in ax.texts}
    for a in arrows:
        i, j = (int(s) for s in a.get_gid().removeprefix("edge ").split("->"))
        assert model.adjacency_matrix_[i, j] == 1
        assert texts[f"L{i + 1}"].get_position()[1] > texts[f"L{j + 1}"].get_position()[1]


def test_no_text_boxes_overlap(fitted):
    _, fig = fitted
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        for t in ax.texts + ax.get_xticklabels() + ax.get_yticklabels():
            if t.get_visible() and t.get_text():
                boxes.append(t.get_window_extent(renderer))
    boxes.append(fig._suptitle.get_window_extent(renderer))
    assert len(boxes) > 3
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            assert not boxes[a].overlaps(boxes[b]), (a, b)


def test_title_and_nodes_inside_figure(fitted):
    _, fig = fitted
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    title = fig._suptitle.get_window_extent(renderer)
    assert title.x0 >= frame.x0 and title.x1 <= frame.x1
    assert title.y0 >= frame.y0 and title.y1 <= frame.y1
    for t in _graph_axes(fig).texts:
        e = t.get_window_extent(renderer)
        assert e.x0 >= frame.x0 and e.x1 <= frame.x1 and e.y0 >= frame.y0 and e.y1 <= frame.y1


def test_heatmap_holds_every_edge_weight(fitted):
    model, fig = fitted
    heat = [ax for ax in fig.axes if ax.get_gid() == "edge heatmap"]
    edges = np.argwhere(model.adjacency_matrix_)
    if len(edges) == 0:
        assert not heat
        return
    (hax,) = heat
    data = np.asarray(hax.images[0].get_array())
    W = np.stack(model.weights_)
    assert data.shape == (len(edges), len(model.environment_labels_))
    np.testing.assert_allclose(data, np.array([W[:, i, j] for i, j in edges]))
    rows = [t.get_text() for t in hax.get_yticklabels()]
    assert rows == [f"L{i + 1} -> L{j + 1}" for i, j in edges]
    cmap = hax.images[0]
    lo, hi = cmap.get_clim()
    assert lo == pytest.approx(-hi)


def test_node_labels_name_top_loading_measurements(fitted):
    from creator_plugin.interpret import loadings

    model, fig = fitted
    table = loadings(model)
    for t in _graph_axes(fig).texts:
        name, tops = t.get_text().split("\n")
        col = table[name].abs()
        assert tops.split(", ")[0] == str(col.idxmax())[:12]


def test_bootstrap_probabilities_drawn():
    from creator_plugin import bootstrap

    sim = simulate(3, 4, 300, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = CREATOR(n_latent=3, random_state=0)
        model = est.fit(sim.X)
        boot = bootstrap(sim.X, 4, estimator=CREATOR(n_latent=3, random_state=0),
                         random_state=0)
    fig = plot_graph(model, boot, min_probability=0.0001)
    fig.canvas.draw()
    P = np.asarray(boot.get_probabilities())
    drawn = [(i, j) for i, j in zip(*np.nonzero(P >= 0.0001)) if i != j]
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(drawn)
    (hax,) = [ax for ax in fig.axes if ax.get_gid() == "edge heatmap"]
    np.testing.assert_allclose(np.asarray(hax.images[0].get_array())[:, 0],
                               [P[i, j] for i, j in drawn])
    # Edges absent from the full fit are dashed.
    for a in arrows:
        i, j = (int(s) for s in a.get_gid().removeprefix("edge ").split("->"))
        assert (a.get_linestyle() == "-") == bool(model.adjacency_matrix_[i, j])
