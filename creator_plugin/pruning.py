"""Step 2: prune the complete DAG implied by the order with rank tests.

Nodes are positions in the recovered order (0 = first found). ``Bhat[k]``
writes the noises as combinations of the entangled features of environment
k: ``Zhat[k] ~= Ytilde[k] @ Bhat[k].T``; row i is supported on positions
``<= i``. Edge ``j -> i`` (``j < i``) exists iff the K-vector
``b_ij = (Bhat[k][i, j])_k`` is not in the span of ``{b_il : j < l <= i}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._passes import MappedArrays
from .sem import pooled_innovation_sd, pooled_sd, regression_matrices

__all__ = [
    "PRUNING_RULES", "PrunedGraph", "default_threshold", "paper_coefficients", "paper_scales",
    "prune", "prune_ordering", "standardised_coefficients",
]

#: Edge decision rules. ``"residual"`` and ``"rank"`` work on the scale-free
#: coefficients of :func:`standardised_coefficients`; ``"rank_raw"`` is the
#: paper's rule, on the raw coefficients of :func:`paper_coefficients`.
PRUNING_RULES = ("residual", "rank", "rank_raw")


def standardised_coefficients(
    B: np.ndarray, noises: list[np.ndarray], entangled: list[np.ndarray]
) -> np.ndarray:
    """Scale-free version of the regression matrices, shape (K, d, d).

    Column j is multiplied by the pooled SD of feature j's innovation and
    row i divided by the pooled SD of noise i, so entry (i, j) is the change
    in noise i, in its own SDs, per SD of feature j's innovation. Rescaling
    any feature, any noise or the data leaves it unchanged.

    Parameters
    ----------
    B : ndarray (K, d, d)
        :func:`creator_plugin.sem.regression_matrices` of ``noises`` on
        ``entangled``.
    noises, entangled : list of ndarray (n_k, d)
    """
    z_sd = np.sqrt(sum((Z**2).sum(axis=0) for Z in noises) / sum(Z.shape[0] for Z in noises))
    innov = pooled_innovation_sd(entangled)
    return B * innov[None, None, :] / z_sd[None, :, None]


def paper_scales(noises: list[np.ndarray], reference: list[int]) -> np.ndarray:
    """Factor per direction that gives its noise unit variance in its reference environment.

    In the paper every direction is a row of an ICA unmixing matrix, so the
    noise it extracts has unit variance in the environment whose ICA found
    it; multiplying direction i (its noise and its feature) by ``c[i]``
    restores that scale.

    Parameters
    ----------
    noises : list of ndarray (n_k, d)
    reference : list of int
        For every position, the environment that proposed its direction.

    Returns
    -------
    c : ndarray (d,)
    """
    return 1.0 / np.array([noises[e][:, i].std() for i, e in enumerate(reference)])


def paper_coefficients(
    noises: list[np.ndarray], entangled: list[np.ndarray], reference: list[int]
) -> np.ndarray:
    """The paper's raw regression matrices ``Bhat``, shape (K, d, d).

    In the paper every direction is a row of an ICA unmixing matrix, so the
    noise it extracts has unit variance in the environment whose ICA found
    it. This rescales every direction that way (:func:`paper_scales`: noise i
    to unit variance in environment ``reference[i]``) and regresses the
    noises on the features.
    The result is not scale-free: it changes with the environment that
    proposed each direction, which is why the default rules standardise.

    Parameters
    ----------
    noises, entangled : list of ndarray (n_k, d)
        Noises and entangled features from the same directions.
    reference : list of int
        For every position, the environment that proposed its direction.
    """
    c = paper_scales(noises, reference)
    return regression_matrices([Z * c for Z in noises], [Y * c for Y in entangled])


def _residual_norm(v: np.ndarray, basis: list[np.ndarray]) -> float:
    if not basis:
        return float(np.linalg.norm(v))
    Q, _ = np.linalg.qr(np.column_stack(basis))
    return float(np.linalg.norm(v - Q @ (Q.T @ v)))


def default_threshold(rule: str, n_environments: int) -> float:
    """The level ``CREATOR(prune_threshold="auto")`` uses.

    For ``"residual"``: ``0.2 * sqrt(K / 5)``. In the paper's workload the
    statistics of true edges grow with the number of environments K (the
    RMS of a coefficient vector over more environments, each with its own
    weight law) while those of absent edges barely move, so the level that
    balances missing and extra edges grows with K too. The square root
    follows the best measured levels for K from 2 to 14 (docs/results/accuracy.md) and
    gives 0.2 at K = 5. The rank rules keep 0.2.

    Parameters
    ----------
    rule : {"residual", "rank", "rank_raw"}
    n_environments : int
        K.

    Returns
    -------
    float
    """
    if rule not in PRUNING_RULES:
        raise ValueError(f"pruning must be one of {PRUNING_RULES}, got {rule!r}.")
    if rule == "residual":
        return 0.2 * float(np.sqrt(n_environments / 5.0))
    return 0.2


def prune(
    B: np.ndarray, *, rule: str = "residual", threshold: float = 0.2
) -> tuple[np.ndarray, list[dict]]:
    """Decide every edge ``j -> i`` (``j < i``) from the stacked coefficients.

    Parameters
    ----------
    B : ndarray (K, d, d)
        Standardised coefficients (:func:`standardised_coefficients`) for
        ``"residual"`` and ``"rank"``; the paper's raw coefficients
        (:func:`paper_coefficients`) for ``"rank_raw"``.
    rule : {"residual", "rank", "rank_raw"}
        ``"residual"`` (default): for node i visit ``j = i-1, ..., 0`` and keep
        ``j -> i`` when the RMS over environments of the part of ``b_ij``
        outside ``span({b_ii} U {b_il : l already kept})`` exceeds
        ``threshold``; at most K-1 parents (the rank of K-vectors is at most
        K). Scale-free because ``B`` is. ``"rank"``: the paper's
        Algorithm 4 on ``B``: keep ``j -> i`` iff
        ``rank([b_ij, C_ij]) > rank(C_ij)``, ranks counted as singular values
        above ``threshold`` (the paper's tau). ``"rank_raw"``: the same test
        on the raw coefficients, as the paper runs it (not scale-free).
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
    K, d, _ = B.shape
    adjacency = np.zeros((d, d), dtype=int)
    decisions = []
    for i in range(1, d):
        kept: list[np.ndarray] = [B[:, i, i]]
        for j in range(i - 1, -1, -1):
            b = B[:, i, j]
            if rule == "residual":
                stat = _residual_norm(b, kept) / np.sqrt(K)
                edge = stat > threshold and len(kept) < K
                if edge:
                    kept.append(b)
            else:  # "rank" and "rank_raw"
                C = B[:, i, j + 1 : i + 1]
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


@dataclass(frozen=True)
class PrunedGraph:
    """Step 2's result: the graph over the order's positions and what step 3 reads.

    Attributes
    ----------
    adjacency : ndarray (d, d) of int
        ``[j, i] == 1`` iff ``j -> i``.
    decisions : list of dict
        Every decision of :func:`prune`.
    tested : ndarray (K, d, d)
        The coefficients the rule tested (standardised, or the paper's raw ones).
    alphas : ndarray (d, d)
        The ordering's directions scaled to unit pooled variance of their features.
    feature_sd : ndarray (d,)
        The pooled SD of every direction's feature before that scaling.
    reference : list of int or None
        The environment whose ICA found each direction (the paper's mode only).
    B : ndarray (K, d, d)
        The noises regressed on the unit-variance features.
    """

    adjacency: np.ndarray
    decisions: list
    tested: np.ndarray
    alphas: np.ndarray
    feature_sd: np.ndarray
    reference: list | None
    B: np.ndarray


def prune_ordering(X_red: list, order, rule: str, threshold: float, *, paper_mode: bool,
                   coefficients: tuple | None = None) -> PrunedGraph:
    """Step 2 of a fit: the coefficients of the ordering's noises on its features, then the
    rule's decisions.

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        The reduced data.
    order : creator_plugin.ordering.OrderingResult
    rule : {"residual", "rank", "rank_raw"}
    threshold : float
    paper_mode : bool
        Test the paper's raw coefficients (:func:`paper_coefficients`).
    coefficients : tuple, optional
        ``(B, tested, alphas, feature_sd)`` computed elsewhere (the
        measurement-noise correction's,
        :func:`creator_plugin.refine.measurement_noise.pruning_coefficients`);
        by default they are read from the data.

    Returns
    -------
    PrunedGraph
    """
    if coefficients is not None:
        B, tested, alphas, feature_sd = coefficients
        adjacency, decisions = prune(tested, rule=rule, threshold=threshold)
        return PrunedGraph(adjacency, decisions, tested, alphas, feature_sd, None, B)
    K = len(X_red)
    noises = MappedArrays(X_red, order.noise_maps)
    raw_features = MappedArrays(X_red, [order.alphas] * K)
    feature_sd = pooled_sd(raw_features)
    reference = None
    if paper_mode:
        reference = [s["candidate_environment"][s["chosen"]] for s in order.steps]
        tested = paper_coefficients(noises, raw_features, reference)
    # Unit pooled variance for the entangled features fixes their arbitrary scale.
    alphas = order.alphas / feature_sd
    entangled = MappedArrays(X_red, [alphas] * K)
    B = regression_matrices(noises, entangled)
    if not paper_mode:
        tested = standardised_coefficients(B, noises, entangled)
    adjacency, decisions = prune(tested, rule=rule, threshold=threshold)
    return PrunedGraph(adjacency, decisions, tested, alphas, feature_sd, reference, B)
