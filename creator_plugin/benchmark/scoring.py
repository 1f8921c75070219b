"""Score one method's result against the truth, aligned through the shared matching.

With true latents, estimated latents are matched to true nodes by the
matching of :mod:`creator_plugin.metrics` (maximum total LocR², Hungarian
algorithm) and every metric is computed under that one matching. When the
method returns as many latents as the truth has nodes this is
:func:`creator_plugin.metrics.evaluate` itself (the matching of
:func:`creator_plugin.metrics.align_to_truth`). When it returns ``m != d``
(GIN finds its own number of clusters) the same LocR² matrix and criterion
match ``min(m, d)`` pairs, and:

* ``shd``: SHD over the true nodes, the estimated graph relabelled through
  the matching (a true node without a match has no edges, so its true edges
  count as missing), plus one extra edge for every estimated edge that
  touches an unmatched estimated latent;
* ``locr2``: mean over the d true nodes of the LocR² of the matched
  estimated latent, 0 for a true node without one;
* ``topological_divergence``: over the true edges between matched nodes;
* ``exact_dag`` / ``correct_order``: also require ``m == d``.

Without true latents no matching can be computed from data (a matching from
loadings would need the true measurement model), so only **order-free graph
metrics** are reported: ``shd_min_relabel``, the smallest SHD over all
relabellings of the estimated latents (a lower bound on the SHD under any
matching; exact search, computed for ``max(m, d) <= 8``, NaN above),
``isomorphic`` (the estimated DAG is the true one up to relabelling) and the
edge counts. ``shd``, ``locr2`` and ``topological_divergence`` are NaN: a
method can get the shape of the graph right with the wrong latents, and
these metrics cannot tell.

**The field's scoring** (:func:`correlation_scores`), reported for every
method beside the LocR² metrics: every estimated latent is matched to a true
one by the Hungarian algorithm on the absolute Pearson correlation, computed
on the rows of all environments pooled; ``mcc`` is the mean matched
|correlation| over the d true nodes (0 for a true node without a match) and
``shd_corr`` the SHD of the estimated graph relabelled through that
matching (same rules as ``shd`` for ``m != d``). This is the MCC and SHD of
the interventional CRL papers (LinCD, LSCALE-I, UMNI-CRL).
"""

from __future__ import annotations

from itertools import permutations

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment

from .. import metrics

__all__ = ["MAX_RELABEL_NODES", "correlation_matrix", "correlation_scores", "score",
           "shd_min_relabel"]

#: Largest graph for which the order-free SHD is searched over all relabellings.
MAX_RELABEL_NODES = 8


def _order_of(adjacency: np.ndarray, order) -> list[int]:
    if order is not None:
        return [int(i) for i in order]
    g = nx.from_numpy_array(adjacency, create_using=nx.DiGraph)
    out = list(nx.topological_sort(g)) if nx.is_directed_acyclic_graph(g) else []
    return out + [i for i in range(adjacency.shape[0]) if i not in out]


def shd_min_relabel(true_adjacency, est_adjacency) -> float:
    """Smallest SHD between the true DAG and any relabelling of the estimated one.

    The smaller graph is padded with isolated nodes. Exhaustive over
    ``max(m, d)!`` relabellings, so only for at most
    :data:`MAX_RELABEL_NODES` nodes (NaN above).

    Parameters
    ----------
    true_adjacency : array (d, d)
    est_adjacency : array (m, m)

    Returns
    -------
    float
    """
    A = np.asarray(true_adjacency) != 0
    B = np.asarray(est_adjacency) != 0
    n = max(A.shape[0], B.shape[0])
    if n > MAX_RELABEL_NODES:
        return float("nan")
    A = np.pad(A, (0, n - A.shape[0]))
    B = np.pad(B, (0, n - B.shape[0]))
    if n == 0:
        return 0.0
    perms = np.array(list(permutations(range(n))))
    Bp = B[perms[:, :, None], perms[:, None, :]]  # (n!, n, n)
    iu = np.triu_indices(n, 1)
    # State of each unordered pair: 0 none, 1 forward, 2 backward, 3 both (as metrics.shd).
    sa = A[iu] * 1 + A.T[iu] * 2
    sb = Bp[:, iu[0], iu[1]] * 1 + Bp[:, iu[1], iu[0]] * 2
    return float(np.min(np.sum(sb != sa[None, :], axis=1)))


def correlation_matrix(true_latents, latents) -> np.ndarray:
    """Absolute Pearson correlations of estimated with true latents, environments pooled.

    Parameters
    ----------
    true_latents : list of arrays (n_k, d)
    latents : list of arrays (n_k, m)

    Returns
    -------
    ndarray (m, d)
        ``[i, j]``: |corr(estimated i, true j)| over the stacked rows; 0 for
        a constant column.
    """
    T = np.vstack([np.asarray(t, dtype=float) for t in true_latents])
    E = np.vstack([np.asarray(e, dtype=float) for e in latents])
    if T.shape[0] != E.shape[0]:
        raise ValueError(f"latents have {E.shape[0]} rows in all, the truth {T.shape[0]}.")
    T = T - T.mean(axis=0)
    E = E - E.mean(axis=0)
    nt = np.linalg.norm(T, axis=0)
    ne = np.linalg.norm(E, axis=0)
    C = np.abs(E.T @ T)
    with np.errstate(invalid="ignore", divide="ignore"):
        C = C / np.outer(ne, nt)
    return np.minimum(np.nan_to_num(C, nan=0.0, posinf=0.0), 1.0)  # rounding can exceed 1


def correlation_scores(true_adjacency, true_latents, adjacency, latents) -> dict:
    """MCC and SHD under the Hungarian matching on pooled |correlation| (module docstring).

    Parameters
    ----------
    true_adjacency : array (d, d)
        ``[i, j] != 0`` iff true node i -> j.
    true_latents : list of arrays (n_k, d)
    adjacency : array (m, m)
        Estimated graph, same convention.
    latents : list of arrays (n_k, m)

    Returns
    -------
    dict
        ``mcc`` (float in [0, 1]), ``shd_corr`` (int) and ``matching``
        (list of ``[estimated, true]`` pairs).
    """
    A = (np.asarray(true_adjacency) != 0).astype(int)
    B = (np.asarray(adjacency) != 0).astype(int)
    d, m = A.shape[0], B.shape[0]
    if m == 0:
        return {"mcc": 0.0, "shd_corr": int(A.sum()), "matching": []}
    C = correlation_matrix(true_latents, latents)
    rows, cols = linear_sum_assignment(C, maximize=True)
    match = dict(zip(rows.tolist(), cols.tolist()))
    B_matched = np.zeros_like(A)
    extra = 0
    for i, j in zip(*np.nonzero(B)):
        if i in match and j in match:
            B_matched[match[i], match[j]] = 1
        else:
            extra += 1
    return {"mcc": float(C[rows, cols].sum() / d),
            "shd_corr": int(metrics.shd(A, B_matched) + extra),
            "matching": [[int(i), int(j)] for i, j in zip(rows, cols)]}


def score(true_adjacency, true_latents, adjacency, latents, order=None) -> dict:
    """The benchmark's metrics of one result (see the module docstring).

    Parameters
    ----------
    true_adjacency : array (d, d)
        ``[i, j] != 0`` iff true node i -> j.
    true_latents : list of arrays (n_k, d) or None
        True latent values per environment, or None if unknown.
    adjacency : array (m, m)
        Estimated graph, same convention.
    latents : list of arrays (n_k, m)
        Estimated latents per environment.
    order : sequence of int, optional
        Estimated topological order (default: a topological sort).

    Returns
    -------
    dict
        ``shd``, ``locr2``, ``topological_divergence``, ``exact_dag``,
        ``correct_order``, ``shd_min_relabel``, ``isomorphic``,
        ``n_est_latents``, ``n_true_edges``, ``n_est_edges``, and with
        true latents ``mcc`` and ``shd_corr`` (:func:`correlation_scores`).
    """
    A = (np.asarray(true_adjacency) != 0).astype(int)
    B = (np.asarray(adjacency) != 0).astype(int)
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"the method returned a non-square adjacency of shape {B.shape}.")
    d, m = A.shape[0], B.shape[0]
    order = _order_of(B, order)
    out = {
        "n_est_latents": m,
        "n_true_edges": int(A.sum()),
        "n_est_edges": int(B.sum()),
        "shd_min_relabel": shd_min_relabel(A, B),
        "isomorphic": bool(nx.is_isomorphic(nx.DiGraph(A), nx.DiGraph(B))),
    }
    if true_latents is None:
        # Without the true latents nothing ties estimated nodes to true ones: every
        # matched quantity is unknown (None), not false.
        return {**out, "shd": float("nan"), "locr2": float("nan"),
                "topological_divergence": float("nan"), "exact_dag": None,
                "correct_order": None, "mcc": float("nan"), "shd_corr": float("nan")}
    if len(latents) != len(true_latents):
        raise ValueError(f"the method returned latents for {len(latents)} environments, "
                         f"the truth has {len(true_latents)}.")
    if any(np.shape(L)[1:] != (m,) for L in latents):
        raise ValueError(f"the method returned a {m}-node graph but latents of shapes "
                         f"{[np.shape(L) for L in latents]}.")
    corr = correlation_scores(A, true_latents, B, latents)
    out["mcc"], out["shd_corr"] = corr["mcc"], corr["shd_corr"]
    if m == d:
        ev = metrics.evaluate(A, true_latents, B, latents, order)
        return {**out, "shd": int(ev["shd"]), "locr2": float(ev["locr2"]),
                "topological_divergence": int(ev["topological_divergence"]),
                "exact_dag": bool(ev["exact_dag"]), "correct_order": bool(ev["correct_order"])}
    return {**out, **_rectangular(A, true_latents, B, latents, order)}


def _rectangular(A, true_latents, B, latents, order) -> dict:
    """Metrics when the method found m != d latents (module docstring)."""
    d, m = A.shape[0], B.shape[0]
    if m == 0:
        return {"shd": int(A.sum()), "locr2": 0.0, "topological_divergence": 0,
                "exact_dag": False, "correct_order": False}
    M = metrics.locr2_matrix(A, true_latents, latents)  # (m, d)
    rows, cols = linear_sum_assignment(M, maximize=True)
    match = dict(zip(rows.tolist(), cols.tolist()))
    B_matched = np.zeros_like(A)
    for i, j in zip(*np.nonzero(B)):
        if i in match and j in match:
            B_matched[match[i], match[j]] = 1
    unmatched_edges = int(sum(B[i, j] for i, j in zip(*np.nonzero(B))
                              if i not in match or j not in match))
    shd = metrics.shd(A, B_matched) + unmatched_edges
    true_order = [match[i] for i in order if i in match]
    sub = np.zeros_like(A)
    sub[np.ix_(true_order, true_order)] = A[np.ix_(true_order, true_order)]
    dtop = metrics.topological_divergence(
        true_order + [t for t in range(d) if t not in true_order], sub)
    return {"shd": int(shd), "locr2": float(M[rows, cols].sum() / d),
            "topological_divergence": int(dtop), "exact_dag": False, "correct_order": False}
