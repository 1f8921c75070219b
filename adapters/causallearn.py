"""causal-learn bridge: a ``cdnod``-style search function and graph conversions.

:func:`creator` runs CREATOR with causal-learn's calling convention (one data
array plus an environment-index column) and returns a :class:`CreatorGraph`,
a subclass of causal-learn's ``CausalGraph`` whose ``G`` is a genuine
``GeneralGraph`` over the latent nodes. :func:`to_general_graph` and
:func:`general_graph_to_adjacency` convert between adjacency matrices
(``[i, j] == 1`` iff ``i -> j``, this project's convention) and causal-learn
graphs, so causal-learn's own ``SHD`` class and ``GraphUtils.to_pydot`` work.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import time
import warnings
from collections.abc import Sequence

import networkx as nx
import numpy as np

from creator_plugin import CREATOR
from creator_plugin._containers import latent_names
from creator_plugin.metrics import align_to_truth

from ._common import (
    check_node_names,
    document_latents,
    dot_quoted,
    missing_extra,
    resolve_estimator,
    resolve_names,
)

try:
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphClass import CausalGraph
    from causallearn.graph.GraphNode import GraphNode
    from causallearn.graph.NodeType import NodeType
    from causallearn.utils.GraphUtils import GraphUtils
except ModuleNotFoundError as exc:
    raise missing_extra(exc, "causal-learn", "causallearn") from exc

__all__ = [
    "CreatorGraph",
    "creator",
    "to_general_graph",
    "general_graph_to_adjacency",
    "general_graph_to_networkx",
    "aligned_general_graph",
    "to_pydot",
]


def _check_adjacency(adjacency) -> np.ndarray:
    if hasattr(adjacency, "get_params") or hasattr(adjacency, "estimator"):
        raise TypeError(
            f"adjacency must be an adjacency matrix; got a {type(adjacency).__name__}. For a "
            "fitted CREATOR pass model.adjacency_matrix_, or "
            "get causal-learn's result directly from creator_plugin.adapters.creator(...).")
    A = np.asarray(adjacency)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be a square (d, d) matrix; got shape {A.shape}.")
    if not np.all(np.isfinite(A.astype(float))):
        raise ValueError("adjacency contains non-finite entries.")
    A = (A != 0).astype(int)
    if np.any(np.diag(A)):
        raise ValueError("adjacency has self-loops (non-zero diagonal).")
    if not nx.is_directed_acyclic_graph(nx.from_numpy_array(A, create_using=nx.DiGraph)):
        raise ValueError("adjacency is not acyclic; CREATOR graphs are DAGs.")
    return A


def to_general_graph(
    adjacency, node_names: Sequence[str] | None = None, *, latent: bool = True
) -> GeneralGraph:
    """Build a causal-learn ``GeneralGraph`` from an adjacency matrix.

    Parameters
    ----------
    adjacency : array-like (d, d)
        ``[i, j] != 0`` iff ``i -> j`` (this project's convention; note that
        lingam-style ``adjacency_matrix_`` is the transpose). Must be a DAG.
    node_names : list of str, optional
        Node names, default ``L1..Ld``.
    latent : bool, default=True
        Mark the nodes ``NodeType.LATENT`` (as causal-learn's ``GIN`` does).

    Returns
    -------
    GeneralGraph
        A fresh graph; edge ``i -> j`` is encoded as causal-learn does:
        ``G.graph[i, j] == -1`` (tail) and ``G.graph[j, i] == 1`` (arrow).
    """
    A = _check_adjacency(adjacency)
    d = A.shape[0]
    names = latent_names(d).tolist() if node_names is None else node_names
    names = check_node_names(names, d)
    nodes = []
    for name in names:
        node = GraphNode(name)
        node.set_node_type(NodeType.LATENT if latent else NodeType.MEASURED)
        nodes.append(node)
    G = GeneralGraph(list(nodes))
    for i, j in np.argwhere(A):
        G.add_directed_edge(nodes[i], nodes[j])
    return G


def general_graph_to_adjacency(G: GeneralGraph) -> tuple[np.ndarray, list[str]]:
    """Adjacency matrix (``[i, j] == 1`` iff ``i -> j``) and node names of a DAG.

    Parameters
    ----------
    G : GeneralGraph
        A causal-learn graph whose edges are all directed (``i -> j`` iff
        ``G.graph[i, j] == -1 and G.graph[j, i] == 1``).

    Returns
    -------
    adjacency : ndarray (d, d) of int
    names : list of str
        Node names in the order of ``G.get_nodes()``.

    Raises
    ------
    ValueError
        If ``G`` has undirected, bidirected or partially oriented edges.
    """
    if not isinstance(G, GeneralGraph):
        raise TypeError(f"G must be a causal-learn GeneralGraph; got {type(G).__name__}.")
    M = np.asarray(G.graph)
    names = [n.get_name() for n in G.get_nodes()]
    directed = (M == -1) & (M.T == 1)
    other = (M != 0) & ~directed & ~directed.T
    if np.any(other):
        i, j = map(int, np.argwhere(other)[0])
        raise ValueError(
            f"Edge between {names[i]} and {names[j]} is not directed (endpoints "
            f"{M[i, j]}, {M[j, i]}); only fully directed graphs convert to an adjacency matrix."
        )
    return directed.astype(int), names


def general_graph_to_networkx(G: GeneralGraph) -> nx.DiGraph:
    """A directed causal-learn graph as an ``nx.DiGraph`` keyed by node name.

    Node attribute ``node_type`` holds the causal-learn ``NodeType`` name
    (e.g. ``"LATENT"``).
    """
    A, names = general_graph_to_adjacency(G)
    g = nx.DiGraph()
    for node in G.get_nodes():
        g.add_node(node.get_name(), node_type=str(node.get_node_type()))
    g.add_edges_from((names[i], names[j]) for i, j in np.argwhere(A))
    return g


@document_latents
class CreatorGraph(CausalGraph):
    """Result of :func:`creator`, usable where causal-learn's ``CausalGraph`` is.

    Attributes
    ----------
    G : GeneralGraph
        The recovered DAG over the latent nodes (``NodeType.LATENT``), in
        causal-learn's encoding.
    node_names : list of str
        Names of the latent nodes, in discovery (topological) order.
    latents : ndarray (n, d)
        Recovered latent features of every row of ``data``, in ``data``'s row
        order (``latents[:, i]`` is node ``node_names[i]``).
    estimator : CREATOR
        The fitted estimator (graph, per-environment weights, encoder and
        decoder).
    environments : ndarray (n,)
        Environment label of every row (the flattened ``c_indx``).
    causal_order : list of int
        A topological order of the nodes.
    elapsed : float
        Wall time of the fit in seconds.

    Notes
    -----
    Unlike ``cdnod``, the environment index is not added as a node: it is the
    input that makes the latent graph identifiable, not a variable of it.
    """

    def __init__(
        self,
        estimator: CREATOR,
        latents: np.ndarray,
        environments: np.ndarray,
        node_names: Sequence[str] | None = None,
        elapsed: float = float("nan"),
    ):
        est = resolve_estimator(estimator)
        names = (
            latent_names(est.n_latent_).tolist()
            if node_names is None
            else check_node_names(node_names, est.n_latent_)
        )
        super().__init__(est.n_latent_, names)
        self.G = to_general_graph(est.adjacency_matrix_, names, latent=True)
        self.node_names = names
        self.latents = latents
        self.estimator = est
        self.environments = environments
        self.causal_order = list(est.causal_order_)
        self.elapsed = elapsed

    @property
    def adjacency_matrix(self) -> np.ndarray:
        """Copy of the recovered adjacency, ``[i, j] == 1`` iff ``i -> j``."""
        return np.array(self.estimator.adjacency_matrix_, copy=True)

    def __repr__(self) -> str:
        edges = [f"{self.node_names[i]} -> {self.node_names[j]}"
                 for i, j in np.argwhere(self.estimator.adjacency_matrix_)]
        return (
            f"CreatorGraph(nodes={self.node_names}, edges={edges}, "
            f"environments={self.estimator.n_environments_})"
        )


#: Keywords of causal-learn's ``cdnod`` that :func:`creator` accepts and ignores: they
#: tune conditional-independence tests and orientation rules, which CREATOR does not run.
CDNOD_IGNORED = ("indep_test", "stable", "uc_rule", "uc_priority", "mvcdnod",
                 "correction_name", "background_knowledge", "verbose")
#: The level ``alpha`` is translated against: cdnod's default maps to CREATOR's default.
REFERENCE_ALPHA = 0.05


def alpha_threshold(alpha: float, n_environments: int, pruning: str = "residual") -> float:
    """The pruning level :func:`creator` uses for cdnod's ``alpha``.

    CREATOR's pruning is not a test: ``prune_threshold`` is a level on an
    effect size (:func:`creator_plugin.pruning.prune`), not a significance
    level. ``alpha`` is translated as a critical value would scale: the
    pruning's statistic is the RMS over the K environments of a K-vector
    with K - 1 free directions at a parent's first test, so

        level(alpha) = default_threshold(pruning, K)
                       * sqrt(chi2.ppf(1 - alpha, K - 1) / chi2.ppf(0.95, K - 1)).

    ``alpha = 0.05`` (cdnod's default) gives the default level, a smaller
    ``alpha`` a higher level and fewer edges, as in cdnod. The result is not
    a calibrated test: the share of false edges is not ``alpha``.

    Parameters
    ----------
    alpha : float in (0, 1)
    n_environments : int
        K, the number of distinct environment labels.
    pruning : str, default="residual"
        The pruning rule (its default level is the reference).

    Returns
    -------
    float
    """
    from scipy.stats import chi2

    from creator_plugin.pruning import default_threshold

    df = max(int(n_environments) - 1, 1)
    ratio = np.sqrt(chi2.ppf(1.0 - alpha, df) / chi2.ppf(1.0 - REFERENCE_ALPHA, df))
    return float(default_threshold(pruning, int(n_environments)) * ratio)


def _estimator_keywords(kwargs: dict, alpha, labels: np.ndarray) -> dict:
    """CREATOR's keywords among ``kwargs``; cdnod's are ignored with one warning."""
    allowed = set(inspect.signature(CREATOR).parameters) - {"n_latent", "random_state"}
    ignored = [k for k in CDNOD_IGNORED if k in kwargs]
    unknown = sorted(set(kwargs) - allowed - set(CDNOD_IGNORED))
    if unknown:
        raise TypeError(
            f"creator() got unexpected keyword arguments {unknown}; it takes CREATOR's "
            f"parameters ({', '.join(sorted(allowed))}) and causal-learn's cdnod keywords "
            f"alpha, {', '.join(CDNOD_IGNORED)} and show_progress.")
    if ignored:
        warnings.warn(
            f"creator() ignores cdnod's {', '.join(ignored)}: CREATOR runs no "
            "conditional-independence tests and no orientation rules (it orders the latent "
            "features by ICA across environments and prunes edges by how their regression "
            "weights change across environments), so these settings have no counterpart.",
            UserWarning, stacklevel=3)
    out = {k: v for k, v in kwargs.items() if k in allowed}
    if alpha is not None:
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (
                0 < alpha < 1):
            raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
        if "prune_threshold" in out:
            raise TypeError("creator() got both alpha and prune_threshold; pass one (alpha is "
                            "translated to prune_threshold).")
        if alpha != REFERENCE_ALPHA:
            out["prune_threshold"] = alpha_threshold(
                alpha, len(np.unique(labels)), out.get("pruning", "residual"))
    return out


@document_latents
def creator(
    data,
    c_indx,
    n_latent: int | str = "auto",
    node_names: Sequence[str] | None = None,
    show_progress: bool = True,
    random_state=None,
    *,
    alpha: float | None = None,
    **kwargs,
) -> CreatorGraph:
    """Run CREATOR with causal-learn's calling convention (like ``cdnod``).

    Parameters
    ----------
    data : array-like (n, p)
        Observations of all environments stacked.
    c_indx : array-like (n, 1) or (n,)
        Environment index of every row (any hashable labels). Unlike
        ``cdnod``, it is not added to the graph as a node.
    n_latent : int or "auto", default="auto"
        Number of latent features d; ``"auto"`` chooses it from the data
        (:func:`creator_plugin.select_n_latent`).
    node_names : list of str, optional
        Names of the d latent nodes, default ``L1..Ld``. (They name latent
        features, not columns of ``data``.)
    show_progress : bool, default=True
        Print a one-line start and summary message to stderr.
    random_state : int, Generator or None
        Seed of the fit.
    alpha : float in (0, 1), optional
        cdnod's significance level, translated to CREATOR's pruning level
        ``prune_threshold`` (:func:`alpha_threshold`): CREATOR's pruning is
        a level on an effect size, not a test, so ``alpha`` is mapped the
        way a critical value scales, with cdnod's default 0.05 giving
        CREATOR's default level and a smaller ``alpha`` fewer edges. The
        share of false edges is not ``alpha``. Not together with
        ``prune_threshold``.
    **kwargs
        Further :class:`creator_plugin.CREATOR` parameters (``scorer``,
        ``pruning``, ``prune_threshold``, ...). cdnod's ``indep_test``,
        ``stable``, ``uc_rule``, ``uc_priority``, ``mvcdnod``,
        ``correction_name``, ``background_knowledge`` and ``verbose`` are
        accepted and ignored, with one ``UserWarning`` (CREATOR runs no
        independence tests or orientation rules); any other keyword is a
        ``TypeError``.

    Returns
    -------
    CreatorGraph
        ``.G`` the causal-learn ``GeneralGraph`` over the latent nodes,
        ``.latents`` the ``(n, d)`` features in ``data``'s row order,
        ``.estimator`` the fitted :class:`CREATOR`.

    Examples
    --------
    >>> import numpy as np
    >>> from creator_plugin import simulate
    >>> from creator_plugin.adapters.causallearn import creator
    >>> sim = simulate(n_latent=3, n_environments=4, n_samples=500, random_state=1)
    >>> data, env = sim.stacked()
    >>> cg = creator(data, env[:, None], n_latent=3, show_progress=False, random_state=0)
    >>> [n.get_name() for n in cg.G.get_nodes()]
    ['L1', 'L2', 'L3']
    """
    if isinstance(n_latent, float) and 0 < n_latent < 1:
        raise TypeError(
            f"n_latent must be an integer or 'auto', got {n_latent!r}: creator() takes the "
            "number of latents third, where cdnod takes alpha; pass alpha by keyword "
            f"(creator(data, c_indx, alpha={n_latent!r})).")
    c = np.asarray(c_indx)
    if c.ndim == 2 and c.shape[1] == 1:
        c = c[:, 0]
    if c.ndim != 1:
        raise ValueError(f"c_indx must have shape (n, 1) or (n,); got {np.shape(c_indx)}.")
    auto = isinstance(n_latent, str)
    if node_names is not None and not auto:
        check_node_names(node_names, n_latent)
    est = CREATOR(n_latent, random_state=random_state,
                  **_estimator_keywords(kwargs, alpha, c))
    if show_progress:
        what = "a number of latent features chosen from the data" if auto else (
            f"{n_latent} latent features")
        print(f"CREATOR: fitting {what} ...", file=sys.stderr)
    start = time.perf_counter()
    latents = est.fit_transform(data, environments=c)
    elapsed = time.perf_counter() - start
    result = CreatorGraph(est, latents, c.copy(), node_names, elapsed)
    if show_progress:
        print(
            f"CREATOR: {int(est.adjacency_matrix_.sum())} edges over {est.n_latent_} latent "
            f"nodes from {est.n_environments_} environments in {elapsed:.2f} s.",
            file=sys.stderr,
        )
    return result


def aligned_general_graph(
    model, true_adjacency, true_latents, true_names: Sequence[str]
) -> GeneralGraph:
    """The recovered DAG as a ``GeneralGraph`` over the TRUE node names.

    Recovered latent labels are arbitrary: ``SHD(truth, cg.G)`` compares
    unrelated nodes. This relabels every recovered latent to the true node
    it is matched to (:func:`creator_plugin.metrics.align_to_truth`, the
    matching behind :func:`creator_plugin.metrics.evaluate`), so
    causal-learn's ``SHD(to_general_graph(true_adjacency, true_names),
    aligned).get_shd()`` is the package's own SHD.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    true_adjacency : array-like (d, d)
        ``[s, t] != 0`` iff true node s -> t.
    true_latents : list of array-like (n_k, d)
        True latent values of the training rows, one array per environment
        in the model's environment order (``estimator.environment_labels_``).
    true_names : list of str
        Names of the d true nodes, in the order of ``true_adjacency``; use
        the same names for the true graph.

    Returns
    -------
    GeneralGraph
        Nodes ``true_names`` (``NodeType.LATENT``), edge ``s -> t`` iff the
        recovered latents matched to s and t have that edge.
    """
    est = resolve_estimator(model)
    names = check_node_names(true_names, est.n_latent_)
    alignment = align_to_truth(est, true_adjacency, true_latents)
    return to_general_graph(alignment.adjacency, names, latent=True)


@document_latents
def to_pydot(model, names: Sequence[str] | None = None, *, title: str = "", dpi: float = 200):
    """Draw the recovered latent DAG with causal-learn's ``GraphUtils.to_pydot``.

    Names and the title are written as quoted DOT strings with backslashes,
    quotes and control characters escaped, so any name is drawn as it is and
    none can add DOT attributes or an HTML label.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    names : list of str, optional
        Node labels (default: the model's node names).
    title : str
        Graph title.
    dpi : float
        Resolution used when rendering.

    Returns
    -------
    pydot.Dot
        Latent nodes are drawn as squares. When the fit has
        ``edge_confidence_`` (the default residual pruning), every edge has
        the DOT attribute ``confidence`` (the probability that it is in the
        true graph, three decimals), is labelled with it and drawn with a
        ``penwidth`` from 0.5 (confidence 0) to 3 (confidence 1); without
        it the edges are drawn as causal-learn draws them. Rendering to PNG
        (``.create_png()``) needs the Graphviz ``dot`` binary; ``.to_string()``
        does not.
    """
    est = resolve_estimator(model)
    names = resolve_names(model, names)
    G = model.G if isinstance(model, CreatorGraph) and names == model.node_names else None
    if G is None:
        G = to_general_graph(est.adjacency_matrix_, names)
    # Quoted here: pydot leaves a trailing backslash, an escaped quote and <...> as they are.
    dot = GraphUtils.to_pydot(G, labels=[dot_quoted(n) for n in names],
                              title=dot_quoted(title), dpi=dpi)
    confidence = getattr(est, "edge_confidence_", None)
    if confidence is not None:
        _confidence_on_edges(dot, G, names, np.asarray(confidence, dtype=float))
    return dot


def _confidence_on_edges(dot, G: GeneralGraph, names: Sequence[str], confidence) -> None:
    """Label every directed edge of ``dot`` with its confidence, its width growing with it.

    causal-learn names the DOT nodes by their index in ``G.get_nodes()``
    and draws ``i -> j`` as an edge from i to j with an arrow at j.
    """
    index = {n: i for i, n in enumerate(names)}
    position = [index[node.get_name()] for node in G.get_nodes()]
    for edge in dot.get_edges():
        u, v = (position[int(str(e).strip('"'))] for e in (edge.get_source(),
                                                           edge.get_destination()))
        if edge.get("arrowtail") == "normal" and edge.get("arrowhead") != "normal":
            u, v = v, u
        c = float(confidence[u, v])
        edge.set("confidence", f"{c:.3f}")
        edge.set("label", f'"{c:.2f}"')
        edge.set("penwidth", f"{0.5 + 2.5 * c:.2f}")
