"""networkx and pgmpy bridges for a fitted CREATOR model.

The latent DAG as an ``nx.DiGraph`` carrying per-environment SEM weights and
noise scales (the common currency of the other adapters), as a
``pgmpy.base.DAG``, and per environment as a fitted pgmpy
``LinearGaussianBayesianNetwork`` that answers ``simulate(do=...)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import networkx as nx
import numpy as np

from ._common import (
    document_latents,
    environment_index,
    latent_dataframe,
    missing_extra,
    quiet_library_warnings,
    resolve_estimator,
    resolve_names,
)

__all__ = [
    "adjacency_from_networkx",
    "to_linear_gaussian_bn",
    "to_networkx",
    "to_pgmpy_dag",
    "topology",
]


@document_latents
def to_networkx(model, names: Sequence[str] | None = None, environment=None) -> nx.DiGraph:
    """The recovered latent DAG as an ``nx.DiGraph`` with SEM parameters.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    names : list of str, optional
        Node names (default: the model's node names, ``L1..Ld``).
    environment : hashable, optional
        If given, also set the edge attribute ``weight`` and the node
        attributes ``noise_scale`` and ``intercept`` to that environment's
        values (handy for networkx algorithms that read ``weight``).

    Returns
    -------
    networkx.DiGraph
        A new graph. Edge ``u -> v`` has ``weights``: a list with the OLS
        effect of u on v in every environment (order of
        ``graph.graph["environments"]``) and, when the fit has
        ``edge_confidence_`` (the default residual pruning), ``confidence``:
        the probability that the edge is in the true graph (pairs without an
        edge are not added). Node attributes: ``position``
        (index in the estimator's matrices), ``noise_scales`` and
        ``intercepts`` (lists over environments) and ``changed_mechanisms``
        (list over environments: the node's mechanism there differs from the
        reference environment's, ``changed_mechanisms_``; absent for a model
        file written before that attribute). Graph attributes:
        ``environments`` (labels) and ``n_environments``.

    Notes
    -----
    The SEM in environment k reads
    ``L_v = intercept_v + sum_u weights[k] * (L_u - intercept_u) + e_v`` with
    ``sd(e_v) = noise_scales[k]``.
    """
    est = resolve_estimator(model)
    names = resolve_names(model, names)
    labels = list(est.environment_labels_)
    k_sel = None if environment is None else environment_index(est, environment)
    g = nx.DiGraph(environments=labels, n_environments=len(labels))
    changed = getattr(est, "changed_mechanisms_", None)
    for i, name in enumerate(names):
        attrs = {
            "position": i,
            "noise_scales": [float(s[i]) for s in est.noise_scales_],
            "intercepts": [float(m[i]) for m in est.intercepts_],
        }
        if changed is not None:
            attrs["changed_mechanisms"] = [bool(c) for c in changed[:, i]]
        if k_sel is not None:
            attrs["noise_scale"] = attrs["noise_scales"][k_sel]
            attrs["intercept"] = attrs["intercepts"][k_sel]
        g.add_node(name, **attrs)
    confidence = _edge_confidences(est)
    for i, j in np.argwhere(est.adjacency_matrix_):
        attrs = {"weights": [float(W[i, j]) for W in est.weights_]}
        if confidence is not None:
            attrs["confidence"] = float(confidence[i, j])
        if k_sel is not None:
            attrs["weight"] = attrs["weights"][k_sel]
        g.add_edge(names[i], names[j], **attrs)
    return g



def topology(model, names: Sequence[str] | None = None) -> nx.DiGraph:
    """The recovered latent DAG with nodes and edges only (no SEM parameters).

    A new graph that nobody else holds: DoWhy's gcm stores mechanisms on the
    graph it is given. Every edge carries ``confidence`` when the fit has
    ``edge_confidence_`` (as in :func:`to_networkx`), nothing else.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
    names : list of str, optional

    Returns
    -------
    networkx.DiGraph
    """
    g = to_networkx(model, names)
    plain = nx.DiGraph()
    plain.add_nodes_from(g.nodes)
    plain.add_edges_from((u, v, {"confidence": a["confidence"]} if "confidence" in a else {})
                         for u, v, a in g.edges(data=True))
    return plain


def _edge_confidences(model) -> np.ndarray | None:
    """The fit's ``edge_confidence_`` (d, d), or None when it has none.

    A fit with a rank pruning rule, and a model file saved before the
    confidence existed, have none; the bridges then add no ``confidence``.

    Parameters
    ----------
    model : CREATOR or CreatorGraph

    Returns
    -------
    ndarray (d, d) or None
    """
    c = getattr(resolve_estimator(model), "edge_confidence_", None)
    return None if c is None else np.asarray(c, dtype=float)


def _set_confidence(graph, model, names: Sequence[str]) -> None:
    """Set the edge attribute ``confidence`` of every edge of ``graph`` (in place)."""
    c = _edge_confidences(model)
    if c is None:
        return
    index = {n: i for i, n in enumerate(names)}
    for u, v in graph.edges():
        graph.edges[u, v]["confidence"] = float(c[index[u], index[v]])


def adjacency_from_networkx(graph: nx.DiGraph, names: Sequence[str]) -> np.ndarray:
    """Adjacency matrix (``[i, j] == 1`` iff ``names[i] -> names[j]``) of a DiGraph.

    Parameters
    ----------
    graph : networkx.DiGraph or networkx.MultiDiGraph
        Must contain exactly the nodes ``names``. Not modified. Parallel
        edges of a ``MultiDiGraph`` count as one edge (an adjacency says
        whether there is an edge, not how many).
    names : list of hashable
        Node order of the matrix: distinct node names.

    Raises
    ------
    TypeError
        If ``graph`` is not a directed networkx graph, or ``names`` is not a
        list of node names.
    ValueError
        If ``names`` repeats a name, the nodes of ``graph`` are not
        ``names``, or it has a cycle (the adjacency of a DAG is expected).
    """
    if not isinstance(graph, nx.DiGraph):
        raise TypeError(f"graph must be a networkx.DiGraph; got {type(graph).__name__}.")
    if isinstance(names, (str, bytes)) or not isinstance(names, (Sequence, np.ndarray)):
        raise TypeError(f"names must be a list of node names; got {type(names).__name__}.")
    names = list(names)
    try:
        counts = Counter(names)
    except TypeError:
        raise TypeError("names must be hashable node names (strings or numbers).") from None
    repeated = [n for n, c in counts.items() if c > 1]
    if repeated:
        raise ValueError(f"names repeats {repeated}: every node of the matrix needs its own "
                         "name.")
    if set(graph.nodes) != set(names):
        missing = [n for n in names if n not in graph]
        extra = [n for n in graph.nodes if n not in counts]
        raise ValueError(
            f"graph nodes differ from names: names not in graph {missing}, graph nodes not in "
            f"names {extra}."
        )
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError("graph has a cycle; the adjacency of a DAG is expected.")
    index = {n: i for i, n in enumerate(names)}
    A = np.zeros((len(names), len(names)), dtype=int)
    for u, v in graph.edges():
        A[index[u], index[v]] = 1
    return A


@document_latents
def to_pgmpy_dag(model, names: Sequence[str] | None = None):
    """The recovered latent DAG as a ``pgmpy.base.DAG`` (no parameters).

    Parameters
    ----------
    model : CREATOR or CreatorGraph
    names : list of str, optional

    Returns
    -------
    pgmpy.base.DAG
        Nodes are the latent names; the latent features are treated as
        observed variables (they are the recovered features), so pgmpy's
        identification and ``pgmpy.metrics.SHD`` apply directly. Every edge
        has the attribute ``confidence`` when the fit has ``edge_confidence_``
        (:func:`to_networkx`).
    """
    with quiet_library_warnings():
        try:
            from pgmpy.base import DAG
        except ModuleNotFoundError as exc:
            raise missing_extra(exc, "pgmpy", "pgmpy") from exc

    names = resolve_names(model, names)
    g = topology(model, names)
    plain = nx.DiGraph()  # pgmpy reads a given edge's attributes as its weight: set them after
    plain.add_nodes_from(g.nodes)
    plain.add_edges_from(g.edges)
    dag = DAG(plain)
    _set_confidence(dag, model, names)
    return dag



@document_latents
def to_linear_gaussian_bn(model, environment=0, names: Sequence[str] | None = None):
    """A pgmpy ``LinearGaussianBayesianNetwork`` fitted to one environment's latents.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    environment : hashable, default=0
        Environment label (see ``estimator.environment_labels_``).
    names : list of str, optional
        Node names (default: the model's node names).

    Returns
    -------
    pgmpy.models.LinearGaussianBayesianNetwork
        Fitted by pgmpy (maximum likelihood) on the latent features of that
        environment; CPDs ``N(beta_0 + sum beta_u L_u, std)``. Use
        ``bn.simulate(n, do={"L1": 1.0}, seed=0)`` for interventional
        samples. Gaussian noise is pgmpy's modelling choice: interventional
        *means* are right for the linear SEM, higher moments are not (the
        noise is non-Gaussian; use :func:`creator_plugin.adapters.dowhy.to_gcm`
        for those). Every edge has the attribute ``confidence`` when the
        fit has ``edge_confidence_`` (:func:`to_networkx`).
    """
    with quiet_library_warnings():
        try:
            from pgmpy.models import LinearGaussianBayesianNetwork
        except ModuleNotFoundError as exc:
            raise missing_extra(exc, "pgmpy", "pgmpy") from exc

    est = resolve_estimator(model)
    names = resolve_names(model, names)
    df = latent_dataframe(model, environment, names)
    g = to_networkx(est, names)
    bn = LinearGaussianBayesianNetwork(list(g.edges))
    bn.add_nodes_from(names)
    with quiet_library_warnings():
        bn.fit(df)
    _set_confidence(bn, est, names)
    return bn

