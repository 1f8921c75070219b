"""Accuracy against ground truth: SHD, LocR^2, topological divergence.

All matrices use ``[i, j] == 1`` iff ``i -> j``. Recovered nodes are matched
to true nodes once (by LocR^2, a linear assignment problem) and every metric
is computed under that one matching.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment

from .disentangle import surrounded_sets

__all__ = [
    "shd",
    "topological_divergence",
    "locr2_matrix",
    "match_latents",
    "Alignment",
    "align_to_truth",
    "evaluate",
    "evaluate_model",
]


def _adjacency(a, name: str) -> np.ndarray:
    """``a != 0`` as a boolean square matrix; a clear error for anything else."""
    arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square matrix; got shape {arr.shape}.")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries.")
    return arr != 0


def _permutation(order, d: int, name: str) -> np.ndarray:
    """``order`` as an int array, checked to be a permutation of ``0..d-1``."""
    arr = np.asarray(order)
    valid = (arr.ndim == 1 and arr.size == d
             and (np.issubdtype(arr.dtype, np.number) or arr.size == 0)
             and bool(np.all(np.isfinite(arr))) and bool(np.all(arr == np.round(arr)))
             and bool(np.all(np.sort(arr.astype(int)) == np.arange(d))))
    if not valid:
        raise ValueError(f"{name} must be a permutation of 0..{d - 1}; got {order!r}.")
    return arr.astype(int)


def shd(true_adjacency, est_adjacency) -> int:
    """Structural Hamming distance on the same node labels.

    Missing + extra + reversed edges; a reversed edge counts once.
    """
    A = _adjacency(true_adjacency, "true_adjacency")
    B = _adjacency(est_adjacency, "est_adjacency")
    if A.shape != B.shape:
        raise ValueError(f"adjacency shapes differ: {A.shape} vs {B.shape}.")
    iu = np.triu_indices(A.shape[0], 1)
    # State of each unordered pair: 0 none, 1 forward, 2 backward, 3 both.
    sa = A[iu] * 1 + A.T[iu] * 2
    sb = B[iu] * 1 + B.T[iu] * 2
    return int(np.sum(sa != sb))


def topological_divergence(order, true_adjacency) -> int:
    """``D_top``: number of true edges ``a -> b`` with b placed before a in ``order``.

    ``order`` must be a permutation of the nodes ``0..d-1``.
    """
    A = _adjacency(true_adjacency, "true_adjacency")
    pos = np.empty(A.shape[0], dtype=int)
    pos[_permutation(order, A.shape[0], "order")] = np.arange(A.shape[0])
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


@dataclass(frozen=True)
class Alignment:
    """A recovered model expressed in the labels of a known truth.

    Attributes
    ----------
    matching : ndarray (d,) of int
        ``matching[i]`` is the true node matched to recovered latent i.
    permutation : ndarray (d,) of int
        The inverse: ``permutation[t]`` is the recovered latent matched to
        true node t, so ``latents[:, permutation]`` puts recovered features
        in the true order.
    adjacency : ndarray (d, d) of int
        The recovered graph relabelled to the true nodes: ``[s, t] == 1``
        iff the recovered latents matched to s and t have an edge s -> t.
        Compare it with the true adjacency entry by entry.
    locr2 : ndarray (d,)
        LocR^2 of every true node's matched feature (in true-node order).
    locr2_matrix : ndarray (d, d)
        ``[i, t]``: LocR^2 of recovered latent i for true node t (the
        matching maximises the sum of the matched entries).
    """

    matching: np.ndarray
    permutation: np.ndarray
    adjacency: np.ndarray
    locr2: np.ndarray
    locr2_matrix: np.ndarray


def _align(A: np.ndarray, B: np.ndarray, true_latents, est_latents) -> Alignment:
    _check_against_truth(A, true_latents, B, est_latents)
    matching, M = match_latents(A, true_latents, est_latents)
    B_matched = np.zeros_like(A)
    B_matched[np.ix_(matching, matching)] = B
    permutation = np.argsort(matching)
    return Alignment(matching, permutation, B_matched, M[permutation, np.arange(A.shape[0])], M)


def align_to_truth(model, true_adjacency, true_latents) -> Alignment:
    """Relabel a recovered model to a known truth, as :func:`evaluate` does.

    Latent labels are arbitrary, so comparing a recovered graph with a true
    one label by label is meaningless. This matches every recovered latent
    to one true node (the assignment maximising total LocR^2, the matching
    behind :func:`evaluate`'s SHD) and returns the recovered graph in the
    true labels.

    Parameters
    ----------
    model : fitted CREATOR, or a result with an ``estimator`` attribute
        Anything with ``adjacency_matrix_`` and ``latents_`` (one array per
        environment), or holding such an object as ``.estimator`` (the
        causal-learn-style result of
        :func:`creator_plugin.adapters.causallearn.creator`).
    true_adjacency : array-like (d, d)
        ``[s, t] != 0`` iff true node s -> t.
    true_latents : list of array-like (n_k, d)
        The true latent values of the training rows, one array per
        environment in the model's environment order
        (``model.environment_labels_``).

    Returns
    -------
    Alignment
        ``shd(true_adjacency, alignment.adjacency)`` is :func:`evaluate`'s
        SHD.

    Examples
    --------
    >>> from creator_plugin import CREATOR, simulate
    >>> from creator_plugin.metrics import align_to_truth, shd
    >>> sim = simulate(n_latent=3, n_environments=4, n_samples=500, random_state=1)
    >>> model = CREATOR(3, random_state=0).fit(sim.X)
    >>> aligned = align_to_truth(model, sim.adjacency, sim.Y)
    >>> int(shd(sim.adjacency, aligned.adjacency))
    0
    """
    est = _fitted(model)
    A = _adjacency(true_adjacency, "true_adjacency").astype(int)
    B = (np.asarray(est.adjacency_matrix_) != 0).astype(int)
    true_latents = [np.asarray(y, dtype=float) for y in true_latents]
    return _align(A, B, true_latents, est.latents_)


def _fitted(model):
    """The fitted estimator of ``model`` (itself, or its ``.estimator``), or a TypeError."""
    est = getattr(model, "estimator", model)
    if not (hasattr(est, "adjacency_matrix_") and hasattr(est, "latents_")):
        raise TypeError(
            "model must be a fitted CREATOR (or a result holding one as .estimator); got "
            f"{type(model).__name__} without adjacency_matrix_ / latents_ (call fit first)."
        )
    return est


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
        Recovered causal order (recovered labels), a permutation of
        ``0..d-1``. Defaults to a topological sort of ``est_adjacency``,
        which then must be acyclic.

    Returns
    -------
    dict
        ``shd``, ``locr2``, ``locr2_per_latent``, ``topological_divergence``,
        ``exact_dag``, ``correct_order``, ``matching`` (recovered i -> true
        node), ``est_adjacency_matched`` (recovered graph in true labels).
    """
    A = _adjacency(true_adjacency, "true_adjacency").astype(int)
    B = _adjacency(est_adjacency, "est_adjacency").astype(int)
    alignment = _align(A, B, true_latents, est_latents)
    matching, B_matched = alignment.matching, alignment.adjacency
    if est_order is None:
        graph = nx.from_numpy_array(B, create_using=nx.DiGraph)
        if not nx.is_directed_acyclic_graph(graph):
            raise ValueError(
                "est_adjacency has a directed cycle, so it implies no causal order; "
                "pass est_order.")
        est_order = list(nx.topological_sort(graph))
    est_order = _permutation(est_order, B.shape[0], "est_order")
    true_order = [int(matching[i]) for i in est_order]
    s = shd(A, B_matched)
    dtop = topological_divergence(true_order, A)
    per = alignment.locr2_matrix[np.arange(B.shape[0]), matching]
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
        for name, Y in (("true_latents", Yt), ("est_latents", Ye)):
            if not np.all(np.isfinite(np.asarray(Y, dtype=float))):
                raise ValueError(f"{name}[{k}] contains NaN or infinite values.")
        if st[0] != se[0]:
            raise ValueError(
                f"environment {k} has {st[0]} rows in true_latents but {se[0]} in est_latents; "
                "the same samples are needed."
            )


def evaluate_model(model, truth) -> dict:
    """:func:`evaluate` a fitted model against a simulation's ground truth.

    Parameters
    ----------
    model : fitted CREATOR, or a result with an ``estimator`` attribute
        Anything with ``adjacency_matrix_``, ``latents_`` (one array per
        environment, in the simulation's environment order) and optionally
        ``causal_order_``, or holding such an object as ``.estimator``.
    truth : Simulation
        Anything with ``adjacency`` and ``Y`` (:class:`creator_plugin.Simulation`).

    Returns
    -------
    dict
        See :func:`evaluate`.
    """
    est = _fitted(model)
    return evaluate(
        truth.adjacency, truth.Y, est.adjacency_matrix_, est.latents_,
        getattr(est, "causal_order_", None),
    )
