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


def plot_graph(
    model,
    bootstrap=None,
    *,
    names: Sequence[str] | None = None,
    min_probability: float = 0.1,
    ax=None,
):
    """Draw the recovered latent DAG, causes on the left.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    bootstrap : BootstrapResult, optional
        From :func:`creator_plugin.bootstrap` on the same data and estimator
        settings. If given, every edge seen in at least ``min_probability``
        of the resamples is drawn (dashed when absent from the full fit),
        labelled with its probability and drawn with a width that grows
        with it. Otherwise the edges of the fit are drawn, labelled with
        their SEM weight in every environment (``w1 / w2 / ...``, in the
        order of ``environment_labels_``) and with widths that grow with the
        mean absolute weight.
    names : list of str, optional
        Latent names (default ``L1..Ld`` or the result's ``node_names``).
    min_probability : float, default=0.1
        With ``bootstrap``: the least probability of an edge to draw.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    est = _estimator(model)
    labels = latent_names(model, names)
    A = np.asarray(est.adjacency_matrix_, dtype=int)
    d = A.shape[0]
    if bootstrap is not None:
        bootstrap.check_model(est)
        P = np.asarray(bootstrap.get_probabilities(), dtype=float)
        if P.shape != (d, d):
            raise ValueError(f"bootstrap has {P.shape[0]} latents; the model has {d}.")
        edges = [(i, j) for i, j in zip(*np.nonzero(P >= min_probability)) if i != j]
        strength = {(i, j): P[i, j] for i, j in edges}
        text = {(i, j): f"{P[i, j]:.2f}" for i, j in edges}
        title = "Latent DAG: bootstrap edge probabilities"
    else:
        edges = [tuple(e) for e in np.argwhere(A)]
        W = np.stack(est.weights_)
        strength = {(i, j): float(np.mean(np.abs(W[:, i, j]))) for i, j in edges}
        top = max(strength.values(), default=1.0)
        strength = {e: s / top for e, s in strength.items()}
        text = {(i, j): " / ".join(f"{w:.2f}" for w in W[:, i, j]) for i, j in edges}
        title = "Latent DAG: weight in each environment\n(" + " / ".join(
            str(lab) for lab in est.environment_labels_) + ")"
    g = nx.DiGraph()
    g.add_nodes_from(range(d))
    g.add_edges_from(edges)
    pos, n_layers, height = _positions(A)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 2.6 * n_layers, 1.4 + 1.3 * height))
    else:
        fig = ax.figure
    nx.draw_networkx_nodes(g, pos, ax=ax, node_size=1400, node_color="#dbe8f5",
                           edgecolors="#2b5d8a")
    nx.draw_networkx_labels(g, pos, labels=dict(enumerate(labels)), ax=ax, font_size=11)
    for (i, j) in edges:
        # Edges that skip a layer bend, so they do not run through the nodes between.
        style = f"arc3,rad={0.0 if abs(pos[j][0] - pos[i][0]) <= 1 else 0.3}"
        nx.draw_networkx_edges(
            g, pos, edgelist=[(i, j)], ax=ax, width=1.0 + 4.0 * strength[(i, j)],
            style="solid" if A[i, j] else "dashed", arrowsize=18, node_size=1400,
            connectionstyle=style, edge_color="#333333",
        )
        nx.draw_networkx_edge_labels(g, pos, edge_labels={(i, j): text[(i, j)]}, ax=ax,
                                     font_size=8, connectionstyle=style)
    ax.set_xlim(-0.5, n_layers - 0.5)
    ax.set_ylim(-0.5 - 0.5 * height, 0.5 + 0.5 * height)
    ax.set_title(title, fontsize=10)
    ax.set_axis_off()
    fig.tight_layout()
    return fig


def _positions(adjacency: np.ndarray) -> tuple[dict[int, tuple[float, float]], int, int]:
    """Node positions: x the layer (longest path into the node), nodes of a layer stacked."""
    layer = _layers(adjacency)
    n_layers = max(layer.values()) + 1
    members = [[n for n in sorted(layer) if layer[n] == k] for k in range(n_layers)]
    height = max(len(m) for m in members)
    pos = {}
    for k, nodes in enumerate(members):
        for r, node in enumerate(nodes):
            pos[node] = (float(k), (len(nodes) - 1) / 2 - r)
    return pos, n_layers, height


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
