"""The latent-DAG picture, checked through matplotlib's artists (one rendering per case).

The layout's geometry itself is checked in test_plotting_geometry.py; here:
the drawing uses that geometry, in points, and the texts fit.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.graph_layout import ELLIPSIS  # noqa: E402
from creator_plugin.plotting import plot_graph  # noqa: E402

CASES = {"d3": (3, 4), "d11_k9": (11, 9), "d20": (20, 20)}


@pytest.fixture(scope="module", params=[
    "d3", pytest.param("d11_k9", marks=pytest.mark.slow),
    pytest.param("d20", marks=pytest.mark.slow)])
def fitted(request):
    d, K = CASES[request.param]
    sim = simulate(d, K, 300, n_features=3 * d, weight_scale=0.5, random_state=1)
    cols = [f"m{j}_{'abcdefgh'[j % 8] * (1 + j % 3)}" for j in range(3 * d)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the pictures need a fitted model, not the optional steps' accuracy
        model = CREATOR(n_latent=d, refine=None, random_state=0).fit(
            [pd.DataFrame(x, columns=cols) for x in sim.X])
    fig = plot_graph(model)
    fig.canvas.draw()
    yield model, fig
    import matplotlib.pyplot as plt

    plt.close(fig)


def _graph_axes(fig):
    return fig.axes[0]


def _arrows(fig):
    return {tuple(int(s) for s in a.get_gid().removeprefix("edge ").split("->")): a
            for a in _graph_axes(fig).patches if isinstance(a, FancyArrowPatch)}


def _by_gid(artists, prefix):
    return {int(a.get_gid().removeprefix(prefix)): a for a in artists
            if (a.get_gid() or "").startswith(prefix)}


def test_one_arrowhead_per_edge(fitted):
    model, fig = fitted
    arrows = _arrows(fig)
    assert len(arrows) == int(model.adjacency_matrix_.sum())
    texts = _by_gid(_graph_axes(fig).texts, "node ")
    for (i, j), a in arrows.items():
        assert a.get_arrowstyle().__class__.__name__ == "CurveFilledB"
        assert model.adjacency_matrix_[i, j] == 1
        # Every edge points forward: the head is below the tail (roots on top).
        assert texts[i].get_position()[1] > texts[j].get_position()[1]


def test_drawing_uses_the_layout_in_points(fitted):
    """Edges are drawn along the layout's paths; one unit of the graph is one point."""
    _, fig = fitted
    ax, lay = _graph_axes(fig), fig.graph_layout
    (x0, y0), (x1, y1) = ax.transData.transform([(0.0, 0.0), (1.0, 1.0)])
    assert x1 - x0 == pytest.approx(fig.dpi / 72) and y1 - y0 == pytest.approx(fig.dpi / 72)
    arrows = _arrows(fig)
    boxes = _by_gid(ax.patches, "box ")
    for (i, j), path in zip(lay.edges, lay.paths):
        drawn = arrows[(i, j)].get_path().vertices
        # The line is the layout's path (its end drawn short of the tip, under the head).
        np.testing.assert_allclose(drawn[: len(path) - 1], path[:-1], atol=1e-6)
        # The arrowhead: a triangle of at least 8 square points, outside every box.
        head = drawn[-4:-1]
        (ax_, ay), (bx, by), (cx, cy) = head
        assert abs((bx - ax_) * (cy - ay) - (cx - ax_) * (by - ay)) / 2 >= 8.0
        for k, (bx0, by0, bx1, by1) in enumerate(lay.boxes):
            inside = ((head[:, 0] > bx0 + 0.5) & (head[:, 0] < bx1 - 0.5)
                      & (head[:, 1] > by0 + 0.5) & (head[:, 1] < by1 - 0.5))
            assert not inside.any(), (i, j, k)
    for k, box in boxes.items():
        e = box.get_extents()
        np.testing.assert_allclose(ax.transData.inverted().transform([[e.x0, e.y0], [e.x1, e.y1]]),
                                   lay.boxes[k].reshape(2, 2), atol=1.5)


def test_node_texts_fit_in_their_boxes(fitted):
    _, fig = fitted
    renderer = fig.canvas.get_renderer()
    ax = _graph_axes(fig)
    boxes = _by_gid(ax.patches, "box ")
    for k, t in _by_gid(ax.texts, "node ").items():
        inner, outer = t.get_window_extent(renderer), boxes[k].get_window_extent(renderer)
        assert inner.x0 >= outer.x0 and inner.x1 <= outer.x1, k
        assert inner.y0 >= outer.y0 and inner.y1 <= outer.y1, k


def test_no_text_boxes_overlap(fitted):
    _, fig = fitted
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        ticks = ax.get_xticklabels() + ax.get_yticklabels() if ax.axison else []
        for t in ax.texts + ticks:
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
    legend = dict(fig.graph_layout.legend)
    for t in _graph_axes(fig).texts:
        if not (t.get_gid() or "").startswith("node "):
            continue
        name, tops = t.get_text().split("\n")
        col = table[name].abs()
        first = tops.split(", ")[0]
        assert first == str(col.idxmax()) or (first.endswith(ELLIPSIS)
                                              and legend[first] == str(col.idxmax()))


def test_long_names_are_cut_with_an_ellipsis_and_given_in_full(fitted):
    import matplotlib.pyplot as plt

    model, _ = fitted
    d = model.n_latent_
    names = [f"latent_{i:02d}_of_the_long_named_kind" for i in range(d)]
    fig = plot_graph(model, names=names)
    fig.canvas.draw()
    ax = _graph_axes(fig)
    shown = {k: t.get_text().split("\n")[0] for k, t in _by_gid(ax.texts, "node ").items()}
    legend = [t.get_text() for t in ax.texts if t.get_gid() == "legend"]
    for k, s in shown.items():
        assert s.endswith(ELLIPSIS) and len(s) < len(names[k])
        assert f"{s} = {names[k]}" in legend
    (hax,) = [a for a in fig.axes if a.get_gid() == "edge heatmap"] or [None]
    if hax is not None:
        rows = [t.get_text() for t in hax.get_yticklabels()]
        edges = np.argwhere(model.adjacency_matrix_)
        assert rows == [f"{shown[i]} -> {shown[j]}" for i, j in edges]
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    for t in ax.texts + [fig._suptitle]:
        e = t.get_window_extent(renderer)
        assert e.x0 >= frame.x0 and e.x1 <= frame.x1 and e.y0 >= frame.y0 and e.y1 <= frame.y1
    plt.close(fig)


@pytest.mark.slow
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
    arrows = _arrows(fig)
    assert sorted(arrows) == sorted((int(i), int(j)) for i, j in drawn)
    (hax,) = [ax for ax in fig.axes if ax.get_gid() == "edge heatmap"]
    np.testing.assert_allclose(np.asarray(hax.images[0].get_array())[:, 0],
                               [P[i, j] for i, j in drawn])
    # Edges absent from the full fit are dashed.
    for (i, j), a in arrows.items():
        assert (a.get_linestyle() == "-") == bool(model.adjacency_matrix_[i, j])
