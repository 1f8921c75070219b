"""Pictures of a fit: the latent DAG, the loadings heatmap, the scree (matplotlib).

No Graphviz binary is needed: the graph's layout is
:mod:`creator_plugin.graph_layout` (numpy only). matplotlib is the ``plots`` extra
(``pip install "creator-plugin[plots]"``); it is imported when a function
here is called, with matplotlib's own choice of backend (Agg without a
display).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .graph_layout import FONT_FAMILY, LINE_SPACING, layered_layout, text_width
from .interpret import fitted_estimator, latent_names, loadings

__all__ = ["confidence_opacity", "plot_graph", "plot_loadings", "plot_scree"]


def pyplot():
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise ImportError(
            f"Plotting needs matplotlib, which is not installed (no module named {exc.name!r}). "
            'Install it with: pip install "creator-plugin[plots]".'
        ) from exc
    return plt


def _top_measurements(model, n_top: int) -> list[list[str]] | None:
    """Per latent, its ``n_top`` measurements of largest absolute pattern loading."""
    if n_top <= 0:
        return None
    table = loadings(model, kind="pattern")
    values = np.nan_to_num(np.abs(table.to_numpy()), nan=-1.0)
    return [[str(table.index[r]) for r in np.argsort(-values[:, i], kind="stable")[:n_top]]
            for i in range(values.shape[1])]


_NODE_FC, _NODE_EC, _EDGE = "#dbe8f5", "#2b5d8a", "#333333"
_PAD = 8.0  # points around the graph
_LEGEND_FONT, _LEGEND_LINE = 7.0, 9.5
_OPACITY_NOTE = "Fainter edges: less sure (edge confidence)"
_HEAT_FONT, _HEAT_ROW, _HEAT_COL = 7.0, 11.0, 13.0


def _legend_grid(entries: list[str], width: float) -> tuple[int, int, float]:
    """Columns, rows and column width of the legend of cut names in ``width`` points."""
    col_w = max(text_width(e, _LEGEND_FONT) for e in entries) + 14.0
    n_cols = int(max(1, min(len(entries), width // col_w)))
    return n_cols, -(-len(entries) // n_cols), col_w


def plot_graph(
    model,
    bootstrap=None,
    *,
    names: Sequence[str] | None = None,
    min_probability: float = 0.1,
    n_top: int = 2,
    ax=None,
):
    """Draw the recovered latent DAG by layers, causes on top, and its edge weights.

    The layout is layered (:func:`creator_plugin.graph_layout.layered_layout`,
    no Graphviz binary): every edge points down to a later layer, is routed
    around the boxes it does not join, leaves and enters its boxes at ports
    of its own (so two edges never merge into one line) and ends in an
    arrowhead. Each node is labelled with its name and the measurements
    that load most on it (largest absolute standardised pattern loading);
    a name too long for its box is cut with "…" and given in full in a
    legend under the graph. Beside the graph a heatmap shows, for every
    edge (rows), its SEM weight in every environment (columns, diverging
    colours centred at 0); with a bootstrap result it shows every drawn
    edge's probability instead. When the fit has ``edge_confidence_`` (the
    default residual pruning), every edge is drawn with an opacity that
    grows with its confidence (:func:`confidence_opacity`; a line under the
    graph says so); a fit without it (a rank pruning rule, a model file saved before
    the confidence existed) is drawn fully opaque.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    bootstrap : BootstrapResult, optional
        From :func:`creator_plugin.bootstrap` on the same data and estimator
        settings. If given, every edge seen in at least ``min_probability``
        of the resamples is drawn (dashed when absent from the full fit)
        with a width that grows with its probability; an edge against the
        fit's causal order points up.
    names : list of str, optional
        Latent names (default ``L1..Ld`` or the result's ``node_names``).
    min_probability : float, default=0.1
        With ``bootstrap``: the least probability of an edge to draw.
    n_top : int, default=2
        Measurements named under each latent (0: the latent's name only).
    ax : matplotlib Axes, optional
        Where to draw the graph (default: a new figure sized so that one
        unit of the graph is one point; in a smaller axes the texts shrink
        with the graph, as sized when called); the heatmap goes in an inset
        to its right.

    Returns
    -------
    matplotlib.figure.Figure
        The graph's geometry (boxes and edge paths, in points) is
        ``fig.graph_layout``, a :class:`~creator_plugin.graph_layout.GraphLayout`.
    """
    plt = pyplot()
    est = fitted_estimator(model)
    if isinstance(n_top, bool) or not isinstance(n_top, (int, np.integer)) or n_top < 0:
        raise ValueError(f"n_top must be a non-negative integer; got {n_top!r}.")
    full = latent_names(model, names)
    details = _top_measurements(model, int(n_top))
    A = np.asarray(est.adjacency_matrix_, dtype=int)
    d = A.shape[0]
    edges, strength, table, columns, title = _edges_to_draw(est, A, bootstrap, min_probability)
    confidence = getattr(est, "edge_confidence_", None)
    opacity = None
    if confidence is not None:
        opacity = {(i, j): confidence_opacity(confidence[i, j]) for i, j in edges}
    # The fit's causal order (0..d-1) orients a cyclic set of bootstrap edges.
    lay = layered_layout(full, edges, details=details, order=range(d))
    shown = [lab.split("\n")[0] for lab in lay.labels]
    rows = [f"{shown[i]} -> {shown[j]}" for i, j in edges]

    legend = [f"{s} = {f}" for s, f in lay.legend]
    graph_w = max(lay.width, 160.0)
    if legend:
        n_cols, n_rows, col_w = _legend_grid(legend, max(graph_w, 240.0))
        graph_w = max(graph_w, n_cols * col_w)
        legend_h = (n_rows + 1) * _LEGEND_LINE + 10.0
    else:
        legend_h = 0.0
    note_h = 0.0 if opacity is None else _LEGEND_LINE + 6.0  # the line saying what opacity is
    if opacity is not None:
        graph_w = max(graph_w, text_width(_OPACITY_NOTE, _LEGEND_FONT) + 4.0)
    # The graph's data box, in points: x in [x_lo, x_lo + box_w], y in [y_lo, y_lo + box_h].
    x_lo = -_PAD - (graph_w - lay.width) / 2
    box_w = graph_w + 2 * _PAD
    y_lo = -_PAD - legend_h - note_h
    box_h = lay.height + 2 * _PAD + legend_h + note_h

    own_figure = ax is None
    if own_figure:
        fig, ax, hax, cax = _own_figure(plt, box_w, box_h, rows, columns, title)
    else:
        fig = ax.figure
        hax = ax.inset_axes([1.04, 0.12, 0.3, 0.78])
        cax = ax.inset_axes([1.04, 0.0, 0.3, 0.025])
        ax.set_title(title, fontsize=10)
        ax.set_aspect("equal")
    ax.set_xlim(x_lo, x_lo + box_w)
    ax.set_ylim(y_lo, y_lo + box_h)
    ax.set_axis_off()
    ax.set_gid("latent graph")
    # In a given axes one unit is less than a point when the graph is larger:
    # texts and arrowheads shrink with it.
    extent = ax.get_window_extent()
    scale = 1.0 if own_figure else min(
        1.0, extent.width * 72 / fig.dpi / box_w, extent.height * 72 / fig.dpi / box_h)
    _draw_layout(ax, lay, edges, strength, A, scale, opacity)
    if legend:
        _draw_legend(ax, legend, x_lo, n_rows, col_w, scale)
    if opacity is not None:
        ax.text(x_lo + _PAD, -_PAD - legend_h - 4.0, _OPACITY_NOTE, fontsize=_LEGEND_FONT * scale,
                ha="left", va="top", gid="confidence note")
    _edge_heatmap(fig, hax, cax, table, rows, columns, bootstrap is not None,
                  inset=not own_figure)
    fig.graph_layout = lay
    return fig


def _edges_to_draw(est, A: np.ndarray, bootstrap, min_probability: float):
    """The edges to draw, their strengths in [0, 1], the heatmap's table, columns and title.

    With ``bootstrap``: every edge of probability >= ``min_probability``,
    its probability as strength and as the one column. Without: the fit's
    edges, their mean absolute weight (relative to the largest) as
    strength, and their weight in every environment as the columns.
    """
    d = A.shape[0]
    if bootstrap is not None:
        bootstrap.check_model(est)
        P = np.asarray(bootstrap.get_probabilities(), dtype=float)
        if P.shape != (d, d):
            raise ValueError(f"bootstrap has {P.shape[0]} latents; the model has {d}.")
        edges = [(int(i), int(j)) for i, j in zip(*np.nonzero(P >= min_probability)) if i != j]
        strength = {(i, j): P[i, j] for i, j in edges}
        table = np.array([[P[i, j]] for i, j in edges]).reshape(len(edges), 1)
        return edges, strength, table, ["P(edge)"], "Latent DAG: bootstrap edge probabilities"
    edges = [(int(i), int(j)) for i, j in np.argwhere(A)]
    W = np.stack(est.weights_)
    strength = {(i, j): float(np.mean(np.abs(W[:, i, j]))) for i, j in edges}
    top = max(strength.values(), default=1.0) or 1.0
    strength = {e: s / top for e, s in strength.items()}
    table = np.array([W[:, i, j] for i, j in edges]).reshape(len(edges), W.shape[0])
    columns = [str(lab) for lab in est.environment_labels_]
    return edges, strength, table, columns, "Latent DAG and edge weights per environment"


def _own_figure(plt, box_w: float, box_h: float, rows: list[str], columns: list[str],
                title: str):
    """A figure sized so that one unit of the graph is one point: its graph, heatmap and
    colour-bar axes (``fig, ax, hax, cax``) and its title."""
    label_w = max([text_width(r, _HEAT_FONT) for r in rows] + [20.0]) + 22.0
    tick_h = max(text_width(c, _HEAT_FONT) for c in columns) + 24.0
    heat_w = label_w + _HEAT_COL * len(columns) + 62.0
    cells_h = max(_HEAT_ROW * max(len(rows), 1), 60.0)
    heat_h = tick_h + cells_h + 8.0
    title_h = 28.0
    fig_w = max(box_w + 14.0 + heat_w + 8.0, text_width(title, 11.0) + 24.0)
    fig_h = title_h + max(box_h, heat_h) + 6.0
    fig = plt.figure(figsize=(fig_w / 72, fig_h / 72))
    top = fig_h - title_h
    ax = fig.add_axes([8.0 / fig_w, (top - box_h) / fig_h, box_w / fig_w, box_h / fig_h])
    hx = 8.0 + box_w + 14.0 + label_w
    hax = fig.add_axes([hx / fig_w, (top - 8.0 - cells_h) / fig_h,
                        _HEAT_COL * len(columns) / fig_w, cells_h / fig_h])
    cax = fig.add_axes([(hx + _HEAT_COL * len(columns) + 8.0) / fig_w,
                        (top - 8.0 - cells_h) / fig_h, 9.0 / fig_w, cells_h / fig_h])
    fig.suptitle(title, fontsize=11, y=1 - 8.0 / fig_h, va="top")
    return fig, ax, hax, cax


def _draw_legend(ax, legend: list[str], x_lo: float, n_rows: int, col_w: float,
                 scale: float) -> None:
    """The cut names in full, in columns of ``n_rows`` under the graph."""
    y = -_PAD - 4.0
    ax.text(x_lo + _PAD, y, "Names cut with \u2026, in full:", fontsize=_LEGEND_FONT * scale,
            ha="left", va="top", fontweight="bold", gid="legend")
    for r, entry in enumerate(legend):
        c, k = divmod(r, n_rows)
        ax.text(x_lo + _PAD + c * col_w, y - (k + 1) * _LEGEND_LINE, entry,
                fontsize=_LEGEND_FONT * scale, ha="left", va="top", gid="legend",
                family=FONT_FAMILY)


def confidence_opacity(confidence: float) -> float:
    """The opacity :func:`plot_graph` draws an edge of this confidence with.

    ``0.15 + 0.85 * confidence``: a sure edge is fully opaque, a coin flip
    (confidence 0.5) at 0.58, an edge the fit doubts faint but visible.

    Parameters
    ----------
    confidence : float in [0, 1]

    Returns
    -------
    float
    """
    return float(0.15 + 0.85 * np.clip(float(confidence), 0.0, 1.0))


def _draw_layout(ax, lay, edges, strength, A, scale: float = 1.0, opacity=None) -> None:
    """Boxes, texts and edges of ``lay`` in data units of points (``scale`` points a unit);
    ``opacity``: per edge, or None (opaque)."""
    from matplotlib.patches import ArrowStyle, FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path

    for node, ((x0, y0, x1, y1), label) in enumerate(zip(lay.boxes, lay.labels)):
        ax.add_patch(FancyBboxPatch(
            (x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0,rounding_size=3",
            fc=_NODE_FC, ec=_NODE_EC, lw=0.8, zorder=3, gid=f"box {node}"))
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, ha="center", va="center",
                fontsize=lay.font_size * scale, family=FONT_FAMILY, linespacing=LINE_SPACING,
                zorder=4, gid=f"node {node}")
    head = ArrowStyle("-|>", head_length=0.5, head_width=0.22)
    for (i, j), path in zip(edges, lay.paths):
        arrow = FancyArrowPatch(
            path=Path(path), arrowstyle=head, mutation_scale=12 * scale,
            lw=(0.7 + 1.6 * strength[(i, j)]) * scale, color=_EDGE, zorder=2,
            linestyle="-" if A[i, j] else "--", capstyle="butt", joinstyle="round",
            alpha=None if opacity is None else opacity[(i, j)])
        arrow.set_gid(f"edge {i}->{j}")
        ax.add_patch(arrow)


def _edge_heatmap(fig, hax, cax, table, rows, columns, probability: bool,
                  inset: bool = False) -> None:
    """Edges x environments (or x probability) heatmap with labelled axes and a colour bar.

    ``inset``: beside a graph in a given axes, the edge names on the right,
    the environments on top and a horizontal colour bar in ``cax`` below.
    """
    if not rows:
        hax.set_axis_off()
        hax.text(0.5, 0.5, "no edges", ha="center", va="center", transform=hax.transAxes)
        cax.set_axis_off()
        return
    if probability:
        image = hax.imshow(table, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        label = "edge probability"
    else:
        top = float(np.max(np.abs(table))) or 1.0
        image = hax.imshow(table, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto")
        label = "SEM weight"
    hax.set_gid("edge heatmap")
    font = _HEAT_FONT
    if inset:  # rows as high as the axes allow
        font = float(np.clip(0.8 * hax.get_window_extent().height * 72 / fig.dpi / len(rows),
                             3.0, _HEAT_FONT))
    hax.set_yticks(range(len(rows)), rows, fontsize=font)
    hax.set_xticks(range(len(columns)), columns, fontsize=font, rotation=90)
    hax.set_xlabel("environment" if not probability else "", fontsize=8)
    hax.set_ylabel("edge", fontsize=8)
    if inset:
        hax.yaxis.tick_right()
        hax.yaxis.set_label_position("right")
        hax.xaxis.tick_top()
        hax.xaxis.set_label_position("top")
    bar = fig.colorbar(image, cax=cax, orientation="horizontal" if inset else "vertical")
    bar.set_label(label, fontsize=8)
    bar.ax.tick_params(labelsize=_HEAT_FONT)


def plot_loadings(
    model,
    *,
    kind: str = "pattern",
    feature_names: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    ax=None,
):
    """Heatmap of the standardised loadings (:func:`creator_plugin.interpret.loadings`).

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    kind : {"pattern", "structure"}, default="pattern"
    feature_names, names : list of str, optional
        Measurement and latent names.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        Rows are measurements, columns latents; every cell is annotated
        with its value, and the colour scale is symmetric around 0.
    """
    plt = pyplot()
    table = loadings(model, kind=kind, feature_names=feature_names, names=names)
    values = table.to_numpy()
    p, d = values.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.8 + 0.9 * d, 1.0 + 0.38 * p))
    else:
        fig = ax.figure
    top = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    image = ax.imshow(values, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto")
    ax.set_xticks(range(d), table.columns)
    ax.set_yticks(range(p), table.index)
    for r in range(p):
        for c in range(d):
            v = values[r, c]
            ax.text(c, r, "" if np.isnan(v) else f"{v:.2f}", ha="center", va="center",
                    fontsize=8, color="white" if abs(v) > 0.6 * top else "black")
    fig.colorbar(image, ax=ax, label=f"{kind} loading (SD per SD)")
    ax.set_title("Standardised loadings", fontsize=10)
    fig.tight_layout()
    return fig


def plot_scree(selection, *, ax=None):
    """Scree plot of :func:`creator_plugin.select_n_latent`'s evidence.

    Parameters
    ----------
    selection : DimensionSelection
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        The pooled within-environment eigenvalues on a log scale, with a
        line after the chosen number of latents and the rule that decided.
    """
    plt = pyplot()
    lam = np.asarray(selection.spectrum)
    k = np.arange(1, lam.size + 1)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    positive = lam > 0  # exact zeros (rank-deficient data) have no place on a log scale
    ax.semilogy(k[positive], lam[positive], "o-", color="0.3", ms=4)
    ax.axvline(selection.n_latent + 0.5, color="C3", ls="--", label=(
        f"n_latent = {selection.n_latent} ({selection.decided_by.replace('_', ' ')})"))
    ax.set_xlabel("component")
    ax.set_ylabel("eigenvalue (pooled, correlation scale)")
    ax.set_title("Scree plot")
    ax.legend()
    fig.tight_layout()
    return fig
