"""Step 2: prune the complete DAG implied by the order with rank tests.

Nodes are positions in the recovered order (0 = first found). ``Bhat[k]``
writes the noises as combinations of the entangled features of environment
k: ``Zhat[k] ~= Ytilde[k] @ Bhat[k].T``; row i is supported on positions
``<= i``. Edge ``j -> i`` (``j < i``) exists iff the K-vector
``b_ij = (Bhat[k][i, j])_k`` is not in the span of ``{b_il : j < l <= i}``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["regression_matrices", "standardised_coefficients", "prune", "PRUNING_RULES"]

PRUNING_RULES = ("residual", "rank")


def regression_matrices(noises: list[np.ndarray], entangled: list[np.ndarray]) -> np.ndarray:
    """``Bhat`` of shape (K, d, d): per environment, noises regressed on features."""
    return np.stack([np.linalg.lstsq(Y, Z, rcond=None)[0].T for Z, Y in zip(noises, entangled)])


def _pooled_innovation_sd(entangled: list[np.ndarray]) -> np.ndarray:
    """Pooled SD of the part of each feature not explained by earlier features."""
    d = entangled[0].shape[1]
    ss = np.zeros(d)
    n = 0
    for Y in entangled:
        n += Y.shape[0]
        ss[0] += Y[:, 0] @ Y[:, 0]
        for j in range(1, d):
            coef, *_ = np.linalg.lstsq(Y[:, :j], Y[:, j], rcond=None)
            r = Y[:, j] - Y[:, :j] @ coef
            ss[j] += r @ r
    return np.sqrt(ss / n)


def standardised_coefficients(
    noises: list[np.ndarray], entangled: list[np.ndarray]
) -> np.ndarray:
    """Scale-free version of ``Bhat``, shape (K, d, d).

    Column j is multiplied by the pooled SD of feature j's innovation and
    row i divided by the pooled SD of noise i, so entry (i, j) is the change
    in noise i, in its own SDs, per SD of feature j's innovation. Rescaling
    any feature, any noise or the data leaves it unchanged.
    """
    B = regression_matrices(noises, entangled)
    z_sd = np.sqrt(sum((Z**2).sum(axis=0) for Z in noises) / sum(Z.shape[0] for Z in noises))
    innov = _pooled_innovation_sd(entangled)
    return B * innov[None, None, :] / z_sd[None, :, None]


def _residual_norm(v: np.ndarray, basis: list[np.ndarray]) -> float:
    if not basis:
        return float(np.linalg.norm(v))
    Q, _ = np.linalg.qr(np.column_stack(basis))
    return float(np.linalg.norm(v - Q @ (Q.T @ v)))


def prune(
    Bstd: np.ndarray, *, rule: str = "residual", threshold: float = 0.2
) -> tuple[np.ndarray, list[dict]]:
    """Decide every edge ``j -> i`` (``j < i``) from the stacked coefficients.

    Parameters
    ----------
    Bstd : ndarray (K, d, d)
        Standardised coefficients (:func:`standardised_coefficients`).
    rule : {"residual", "rank"}
        ``"residual"`` (default): for node i visit ``j = i-1, ..., 0`` and keep
        ``j -> i`` when the RMS over environments of the part of ``b_ij``
        outside ``span({b_ii} U {b_il : l already kept})`` exceeds
        ``threshold``; at most K-1 parents (the rank of K-vectors is at most
        K). Scale-free because ``Bstd`` is. ``"rank"``: the paper's
        Algorithm 4 on ``Bstd``: keep ``j -> i`` iff
        ``rank([b_ij, C_ij]) > rank(C_ij)``, ranks counted as singular values
        above ``threshold`` (the paper's tau).
    threshold : float
        The rule's level (see ``rule``).

    Returns
    -------
    adjacency : ndarray (d, d) of int
        ``[j, i] == 1`` iff ``j -> i``; strictly upper triangular.
    decisions : list of dict
        ``{"parent", "child", "statistic", "threshold", "edge"}`` per pair.
    """
    if rule not in PRUNING_RULES:
        raise ValueError(f"pruning must be one of {PRUNING_RULES}, got {rule!r}.")
    K, d, _ = Bstd.shape
    adjacency = np.zeros((d, d), dtype=int)
    decisions = []
    for i in range(1, d):
        kept: list[np.ndarray] = [Bstd[:, i, i]]
        for j in range(i - 1, -1, -1):
            b = Bstd[:, i, j]
            if rule == "residual":
                stat = _residual_norm(b, kept) / np.sqrt(K)
                edge = stat > threshold and len(kept) < K
                if edge:
                    kept.append(b)
            else:
                C = Bstd[:, i, j + 1 : i + 1]
                sv_c = np.linalg.svd(C, compute_uv=False)
                sv_full = np.linalg.svd(np.column_stack([b, C]), compute_uv=False)
                rank_c = int(np.sum(sv_c > threshold))
                rank_full = int(np.sum(sv_full > threshold))
                stat = float(rank_full - rank_c)
                edge = rank_full > rank_c
            adjacency[j, i] = int(edge)
            decisions.append(
                {
                    "parent": j,
                    "child": i,
                    "statistic": float(stat),
                    "threshold": float(threshold),
                    "edge": bool(edge),
                }
            )
    return adjacency, decisions
