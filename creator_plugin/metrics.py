"""Accuracy against ground truth: SHD, LocR^2, topological divergence.

All matrices use ``[i, j] == 1`` iff ``i -> j``. Recovered nodes are matched
to true nodes once (by LocR^2, a linear assignment problem) and every metric
is computed under that one matching.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment

from .disentangle import surrounded_sets

__all__ = [
    "shd",
    "topological_divergence",
    "locr2_matrix",
    "match_latents",
    "evaluate",
    "evaluate_model",
]


def shd(true_adjacency, est_adjacency) -> int:
    """Structural Hamming distance on the same node labels.

    Missing + extra + reversed edges; a reversed edge counts once.
    """
    A = np.asarray(true_adjacency) != 0
    B = np.asarray(est_adjacency) != 0
    if A.shape != B.shape:
        raise ValueError(f"adjacency shapes differ: {A.shape} vs {B.shape}.")
    iu = np.triu_indices(A.shape[0], 1)
    # State of each unordered pair: 0 none, 1 forward, 2 backward, 3 both.
    sa = A[iu] * 1 + A.T[iu] * 2
    sb = B[iu] * 1 + B.T[iu] * 2
    return int(np.sum(sa != sb))


def topological_divergence(order, true_adjacency) -> int:
    """``D_top``: number of true edges ``a -> b`` with b placed before a in ``order``."""
    A = np.asarray(true_adjacency) != 0
    pos = np.empty(A.shape[0], dtype=int)
    pos[np.asarray(order, dtype=int)] = np.arange(len(order))
    a, b = np.nonzero(A)
    return int(np.sum(pos[b] < pos[a]))


def _r2(y: np.ndarray, X: np.ndarray) -> float:
    y = y - y.mean()
    Xc = X - X.mean(axis=0)
    coef, *_ = np.linalg.lstsq(Xc, y, rcond=None)
    resid = y - Xc @ coef
    return float(1.0 - (resid @ resid) / max(y @ y, 1e-300))


def locr2_matrix(true_adjacency, true_latents, est_latents) -> np.ndarray:
    """``M[i, t]``: mean over environments of the R^2 of recovered feature i
    regressed on the true features ``y_{sur-bar(t)}`` of true node t."""
    sur = surrounded_sets(true_adjacency)
    d_est = est_latents[0].shape[1]
    d = np.asarray(true_adjacency).shape[0]
    M = np.zeros((d_est, d))
    for Yt, Ye in zip(true_latents, est_latents):
        for t in range(d):
            cols = sorted({t} | sur[t])
            for i in range(d_est):
                M[i, t] += _r2(Ye[:, i], Yt[:, cols])
    return M / len(true_latents)


def match_latents(true_adjacency, true_latents, est_latents) -> tuple[np.ndarray, np.ndarray]:
    """Matching maximising total LocR^2 (Hungarian algorithm).

    Returns
    -------
    matching : ndarray (d,)
        ``matching[i]`` is the true node matched to recovered latent i.
    M : ndarray (d, d)
        The LocR^2 matrix used.
    """
    M = locr2_matrix(true_adjacency, true_latents, est_latents)
    rows, cols = linear_sum_assignment(M, maximize=True)
    matching = np.empty(M.shape[0], dtype=int)
    matching[rows] = cols
    return matching, M


def evaluate(
    true_adjacency, true_latents, est_adjacency, est_latents, est_order=None
) -> dict:
    """All metrics under one matching.

    Parameters
    ----------
    true_adjacency : (d, d)
    true_latents : list of (n_k, d)
    est_adjacency : (d, d)
    est_latents : list of (n_k, d)
    est_order : sequence of int, optional
        Recovered causal order (recovered labels). Defaults to a topological
        sort of ``est_adjacency``.

    Returns
    -------
    dict
        ``shd``, ``locr2``, ``locr2_per_latent``, ``topological_divergence``,
        ``exact_dag``, ``correct_order``, ``matching`` (recovered i -> true
        node), ``est_adjacency_matched`` (recovered graph in true labels).
    """
    A = (np.asarray(true_adjacency) != 0).astype(int)
    B = (np.asarray(est_adjacency) != 0).astype(int)
    _check_against_truth(A, true_latents, B, est_latents)
    matching, M = match_latents(A, true_latents, est_latents)
    B_matched = np.zeros_like(A)
    B_matched[np.ix_(matching, matching)] = B
    if est_order is None:
        est_order = list(nx.topological_sort(nx.from_numpy_array(B, create_using=nx.DiGraph)))
        est_order += [i for i in range(B.shape[0]) if i not in est_order]
    true_order = [int(matching[i]) for i in est_order]
    s = shd(A, B_matched)
    dtop = topological_divergence(true_order, A)
    per = M[np.arange(M.shape[0]), matching]
    return {
        "shd": s,
        "locr2": float(per.mean()),
        "locr2_per_latent": per.tolist(),
        "topological_divergence": dtop,
        "exact_dag": bool(s == 0),
        "correct_order": bool(dtop == 0),
        "matching": matching.tolist(),
        "est_adjacency_matched": B_matched,
    }


def _check_against_truth(A, true_latents, B, est_latents) -> None:
    """Estimate and truth describe the same d latents in the same environments and rows."""
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"true_adjacency must be square; got shape {A.shape}.")
    if B.shape != A.shape:
        raise ValueError(
            f"est_adjacency has shape {B.shape} but true_adjacency {A.shape}: the estimate "
            "must have as many latents as the truth."
        )
    if len(true_latents) != len(est_latents):
        raise ValueError(
            f"true_latents has {len(true_latents)} environments but est_latents "
            f"{len(est_latents)}; they need the same number of environments."
        )
    d = A.shape[0]
    for k, (Yt, Ye) in enumerate(zip(true_latents, est_latents)):
        st, se = np.shape(Yt), np.shape(Ye)
        if len(st) != 2 or st[1] != d:
            raise ValueError(f"true_latents[{k}] has shape {st}; expected (n, {d}).")
        if len(se) != 2 or se[1] != d:
            raise ValueError(f"est_latents[{k}] has shape {se}; expected (n, {d}).")
        if st[0] != se[0]:
            raise ValueError(
                f"environment {k} has {st[0]} rows in true_latents but {se[0]} in est_latents; "
                "the same samples are needed."
            )


def evaluate_model(model, truth) -> dict:
    """:func:`evaluate` a fitted model against a simulation's ground truth.

    Parameters
    ----------
    model : fitted CREATOR
        Anything with ``adjacency_matrix_``, ``latents_`` (one array per
        environment, in the simulation's environment order) and optionally
        ``causal_order_``.
    truth : Simulation
        Anything with ``adjacency`` and ``Y`` (:class:`creator_plugin.Simulation`).

    Returns
    -------
    dict
        See :func:`evaluate`.
    """
    return evaluate(
        truth.adjacency, truth.Y, model.adjacency_matrix_, model.latents_,
        getattr(model, "causal_order_", None),
    )
