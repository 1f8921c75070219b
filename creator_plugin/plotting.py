"""Pictures of a fit: the latent DAG, the loadings heatmap, the scree (matplotlib + networkx).

No Graphviz binary is needed. matplotlib is the ``plots`` extra
(``pip install "creator-plugin[plots]"``); it is imported when a function
here is called, with matplotlib's own choice of backend (Agg without a
display).
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

from .interpret import _estimator, latent_names, loadings

__all__ = ["plot_graph", "plot_loadings", "plot_scree"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise ImportError(
            f"Plotting needs matplotlib, which is not installed (no module named {exc.name!r}). "
            'Install it with: pip install "creator-plugin[plots]".'
        ) from exc
    return plt


def _layers(adjacency: np.ndarray) -> dict[int, int]:
    """Layer of every node: the length of the longest directed path into it."""
    g = nx.from_numpy_array(adjacency, create_using=nx.DiGraph)
    layer = {}
    for node in nx.topological_sort(g):
        layer[node] = max((layer[u] + 1 for u in g.predecessors(node)), default=0)
    return layer


def _node_labels(model, labels: list[str], n_top: int) -> list[str]:
    """``L3`` plus its ``n_top`` measurements of largest absolute pattern loading."""
    if n_top <= 0:
        return list(labels)
    table = loadings(model, kind="pattern")
    values = np.nan_to_num(np.abs(table.to_numpy()), nan=-1.0)
    out = []
    for i, lab in enumerate(labels):
        order = np.argsort(-values[:, i], kind="stable")[:n_top]
        # Long column names would widen every slot of the layout; 12 characters name a column.
        tops = [str(table.index[r])[:12] for r in order]
        out.append(f"{lab}\n{', '.join(tops)}")
    return out


def plot_graph(
    model,
    bootstrap=None,
    *,
    names: Sequence[str] | None = None,
    min_probability: float = 0.1,
    n_top: int = 2,
    ax=None,
):
    """Draw the recovered latent DAG by topological layers, causes on top.

    Every edge points downward to a later layer and carries an arrowhead.
    Each node is labelled with its name and the measurements that load most
    on it (largest absolute standardised pattern loading). Beside the graph
    a heatmap shows, for every edge (rows), its SEM weight in every
    environment (columns, diverging colours centred at 0); with a bootstrap
    result it shows every drawn edge's probability instead.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    bootstrap : BootstrapResult, optional
        From :func:`creator_plugin.bootstrap` on the same data and estimator
        settings. If given, every edge seen in at least ``min_probability``
        of the resamples is drawn (dashed when absent from the full fit)
        with a width that grows with its probability.
    names : list of str, optional
        Latent names (default ``L1..Ld`` or the result's ``node_names``).
    min_probability : float, default=0.1
        With ``bootstrap``: the least probability of an edge to draw.
    n_top : int, default=2
        Measurements named under each latent (0: the latent's name only).
    ax : matplotlib Axes, optional
        Where to draw the graph (default: a new figure); the heatmap goes
        in an inset to its right.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    est = _estimator(model)
    if isinstance(n_top, bool) or not isinstance(n_top, (int, np.integer)) or n_top < 0:
        raise ValueError(f"n_top must be a non-negative integer; got {n_top!r}.")
    short = latent_names(model, names)
    labels = _node_labels(model, short, int(n_top))
    A = np.asarray(est.adjacency_matrix_, dtype=int)
    d = A.shape[0]
    if bootstrap is not None:
        bootstrap.check_model(est)
        P = np.asarray(bootstrap.get_probabilities(), dtype=float)
        if P.shape != (d, d):
            raise ValueError(f"bootstrap has {P.shape[0]} latents; the model has {d}.")
        edges = [(int(i), int(j)) for i, j in zip(*np.nonzero(P >= min_probability)) if i != j]
        strength = {(i, j): P[i, j] for i, j in edges}
        table = np.array([[P[i, j]] for i, j in edges]).reshape(len(edges), 1)
        columns = ["P(edge)"]
        title = "Latent DAG: bootstrap edge probabilities"
    else:
        edges = [(int(i), int(j)) for i, j in np.argwhere(A)]
        W = np.stack(est.weights_)
        strength = {(i, j): float(np.mean(np.abs(W[:, i, j]))) for i, j in edges}
        top = max(strength.values(), default=1.0) or 1.0
        strength = {e: s / top for e, s in strength.items()}
        table = np.array([W[:, i, j] for i, j in edges]).reshape(len(edges), W.shape[0])
        columns = [str(lab) for lab in est.environment_labels_]
        title = "Latent DAG and edge weights per environment"
    # Layers of the drawn graph (bootstrap edges may add order the fit lacks;
    # a cyclic set of bootstrap edges falls back to the fit's layers).
    drawn = np.zeros_like(A)
    for i, j in edges:
        drawn[i, j] = 1
    try:
        pos, n_layers, width = _positions(drawn)
    except nx.NetworkXUnfeasible:
        pos, n_layers, width = _positions(A)
    longest = max(len(line) for lab in labels for line in lab.split("\n"))
    slot_w = max(1.2, 0.075 * longest + 0.4)  # inches per node, from the label's length
    slot_h = 1.05 if n_top else 0.8
    graph_w = slot_w * width + 0.4
    graph_h = slot_h * n_layers + 0.3
    heat_w = 0.9 + 0.32 * len(columns) + 0.065 * max(len(e) for e in ["weight"] + [
        f"{short[i]} -> {short[j]}" for i, j in edges])
    heat_h = 0.17 * max(len(edges), 1) + 1.4
    if ax is None:
        fig = plt.figure(figsize=(graph_w + heat_w + 0.6, max(graph_h, heat_h) + 0.6),
                         layout="constrained")
        gs = fig.add_gridspec(1, 2, width_ratios=[graph_w, heat_w])
        ax = fig.add_subplot(gs[0, 0])
        hax = fig.add_subplot(gs[0, 1])
        fig.suptitle(title, fontsize=11)
    else:
        fig = ax.figure
        hax = ax.inset_axes([1.08, 0.0, 0.35, 1.0])
        ax.set_title(title, fontsize=10)
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(-(n_layers - 0.5), 0.5)
    ax.set_axis_off()
    boxes = {}
    for node, (x, y) in pos.items():
        boxes[node] = ax.text(
            x, y, labels[node], ha="center", va="center", fontsize=8, zorder=3,
            bbox=dict(boxstyle="round,pad=0.35", fc="#dbe8f5", ec="#2b5d8a"))
    from matplotlib.patches import FancyArrowPatch

    for i, j in edges:
        # Edges that skip a layer or stay in one bend, so they miss the nodes in between.
        span = pos[i][1] - pos[j][1]
        rad = 0.0 if span == 1 and abs(pos[i][0] - pos[j][0]) <= 1 else 0.25
        arrow = FancyArrowPatch(
            pos[i], pos[j], patchA=boxes[i].get_bbox_patch(), patchB=boxes[j].get_bbox_patch(),
            arrowstyle="-|>", mutation_scale=14, connectionstyle=f"arc3,rad={rad}",
            lw=0.8 + 2.5 * strength[(i, j)], color="#333333", zorder=2,
            linestyle="-" if A[i, j] else "--", shrinkA=1, shrinkB=1)
        arrow.set_gid(f"edge {i}->{j}")
        ax.add_patch(arrow)
    _edge_heatmap(fig, hax, table, [f"{short[i]} -> {short[j]}" for i, j in edges], columns,
                  bootstrap is not None)
    return fig


def _edge_heatmap(fig, hax, table, rows, columns, probability: bool) -> None:
    """Edges x environments (or x probability) heatmap with labelled axes and a colour bar."""
    if not rows:
        hax.set_axis_off()
        hax.text(0.5, 0.5, "no edges", ha="center", va="center", transform=hax.transAxes)
        return
    if probability:
        image = hax.imshow(table, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        label = "edge probability"
    else:
        top = float(np.max(np.abs(table))) or 1.0
        image = hax.imshow(table, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto")
        label = "SEM weight"
    hax.set_gid("edge heatmap")
    hax.set_yticks(range(len(rows)), rows, fontsize=7)
    hax.set_xticks(range(len(columns)), columns, fontsize=7, rotation=90)
    hax.set_xlabel("environment" if not probability else "")
    hax.set_ylabel("edge")
    fig.colorbar(image, ax=hax, label=label, shrink=0.8)


def _positions(adjacency: np.ndarray) -> tuple[dict[int, tuple[float, float]], int, int]:
    """Node positions: y = -layer (roots on top), the nodes of a layer side by side."""
    layer = _layers(adjacency)
    n_layers = max(layer.values()) + 1
    members = [[n for n in sorted(layer) if layer[n] == k] for k in range(n_layers)]
    width = max(len(m) for m in members)
    pos = {}
    for k, nodes in enumerate(members):
        for r, node in enumerate(nodes):
            pos[node] = ((width - 1) / 2 - (len(nodes) - 1) / 2 + r, -float(k))
    return pos, n_layers, width


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
    plt = _pyplot()
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
    plt = _pyplot()
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
