"""Match recovered latents to proxies of the true features and score the DAG.

On real data the true features are unknown; the CREATOR paper matches the
recovered latents to *proxies* (hidden states of each story part alone). Here
the proxy of part t is its measurement reduced to its first principal
components, and the score of recovered latent i for part t is the R^2 of
latent i regressed on the proxies of t and of the parts surrounding t in the
true DAG -- the proxy analogue of LocR^2
(:func:`creator_plugin.metrics.locr2_matrix`), since latents are identified
only up to mixing with surrounding parents. The matching maximises the total
score (Hungarian algorithm), which generalises the paper's sequential rule
(root first, then the next part given the root, ...).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..disentangle import surrounded_sets
from ..metrics import shd

__all__ = ["proxy_components", "proxy_locr2_matrix", "match_to_proxies", "score_dag",
           "matched_order", "complete_dag_in_order"]


def proxy_components(proxy: list[np.ndarray], n_components: int = 5) -> list[np.ndarray]:
    """Scores of a proxy on its first principal components, per environment.

    The PCA is pooled over environments after centring each environment.

    Parameters
    ----------
    proxy : list of ndarray (n_k, q)
        A part's measurement in every environment.
    n_components : int, default=5

    Returns
    -------
    list of ndarray (n_k, min(n_components, q))
    """
    centred = [np.asarray(p, dtype=float) - np.mean(p, axis=0) for p in proxy]
    pooled = np.vstack(centred)
    _, _, vt = np.linalg.svd(pooled, full_matrices=False)
    V = vt[: min(int(n_components), vt.shape[0])].T
    return [c @ V for c in centred]


def _r2(y: np.ndarray, X: np.ndarray) -> float:
    """In-sample OLS R^2 of ``y`` on ``X`` (both centred here)."""
    y = y - y.mean()
    Xc = X - X.mean(axis=0)
    coef, *_ = np.linalg.lstsq(Xc, y, rcond=None)
    r = y - Xc @ coef
    return float(1.0 - (r @ r) / max(y @ y, 1e-300))


def proxy_locr2_matrix(latents: list[np.ndarray], proxies: list[list[np.ndarray]],
                       true_adjacency: np.ndarray) -> np.ndarray:
    """``M[i, t]``: mean over environments of the R^2 of latent i on the proxies
    of part t and of t's surrounding parents.

    Parameters
    ----------
    latents : list of ndarray (n_k, d)
        Recovered latents per environment.
    proxies : list (one per part) of list (one per environment) of ndarray (n_k, q)
    true_adjacency : ndarray (d, d)

    Returns
    -------
    ndarray (d, d)
    """
    sur = surrounded_sets(true_adjacency)
    d_true = len(proxies)
    d = latents[0].shape[1]
    M = np.zeros((d, d_true))
    for k, L in enumerate(latents):
        for t in range(d_true):
            X = np.column_stack([proxies[s][k] for s in sorted({t} | sur[t])])
            for i in range(d):
                M[i, t] += _r2(L[:, i], X)
    return M / len(latents)


def match_to_proxies(latents: list[np.ndarray], proxies: list[list[np.ndarray]],
                     true_adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matching of recovered latents to parts maximising the total proxy LocR^2.

    Returns
    -------
    matching : ndarray (d,)
        ``matching[i]``: the part matched to latent i.
    M : ndarray (d, d)
        The matrix of :func:`proxy_locr2_matrix`.
    """
    M = proxy_locr2_matrix(latents, proxies, true_adjacency)
    rows, cols = linear_sum_assignment(M, maximize=True)
    matching = np.empty(M.shape[0], dtype=int)
    matching[rows] = cols
    return matching, M


def score_dag(est_adjacency: np.ndarray, matching: np.ndarray,
              true_adjacency: np.ndarray) -> dict:
    """Score a recovered DAG under a matching of its nodes to the true nodes.

    Parameters
    ----------
    est_adjacency : ndarray (d, d)
        ``[i, j] == 1`` iff recovered latent i -> latent j.
    matching : ndarray (d,)
        ``matching[i]``: the true node of recovered latent i.
    true_adjacency : ndarray (d, d)

    Returns
    -------
    dict
        ``shd``, ``exact_dag``, ``edges`` (per true edge ``(i, j)``: True iff
        recovered with its direction), ``est_adjacency_matched``.
    """
    A = (np.asarray(true_adjacency) != 0).astype(int)
    B = np.zeros_like(A)
    B[np.ix_(matching, matching)] = (np.asarray(est_adjacency) != 0).astype(int)
    s = shd(A, B)
    edges = {(int(i), int(j)): bool(B[i, j]) for i, j in zip(*np.nonzero(A))}
    return {"shd": s, "exact_dag": s == 0, "edges": edges, "est_adjacency_matched": B}


def matched_order(order, matching: np.ndarray) -> list[int]:
    """A method's causal order expressed in the true nodes under a matching.

    Parameters
    ----------
    order : sequence of int
        The recovered latents in causal order, root first.
    matching : ndarray (d,)
        ``matching[i]``: the true node of recovered latent i.

    Returns
    -------
    list of int
        The true nodes in the order the method put their matched latents.
    """
    order = [int(i) for i in order]
    matching = np.asarray(matching, dtype=int)
    if sorted(order) != list(range(len(matching))):
        raise ValueError(f"order must be a permutation of 0..{len(matching) - 1}, got {order}.")
    return [int(matching[i]) for i in order]


def complete_dag_in_order(order, matching: np.ndarray, true_adjacency: np.ndarray) -> dict:
    """Score the complete DAG that follows a method's causal order.

    The trivial baseline "the complete DAG in the matched order": every
    earlier latent of ``order`` points to every later one, scored with
    :func:`score_dag` under the same matching as the method's own DAG. It
    shows what a dense output in the method's order would get.

    Parameters
    ----------
    order : sequence of int
        The recovered latents in causal order, root first.
    matching : ndarray (d,)
    true_adjacency : ndarray (d, d)

    Returns
    -------
    dict
        As :func:`score_dag`.
    """
    order = [int(i) for i in order]
    matched_order(order, matching)  # validates the order
    B = np.zeros((len(order), len(order)), dtype=int)
    for a, i in enumerate(order):
        B[i, order[a + 1:]] = 1
    return score_dag(B, matching, true_adjacency)
