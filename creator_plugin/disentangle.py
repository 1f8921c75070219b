"""Step 3: disentangle the entangled features with the pruned graph.

Feature i is the direction in the intersection of the row spaces of the
pruning's regression rows of i and of its children
(:func:`disentangling_matrix`, the paper's subspace intersection); the
features then get their sign and scale (:func:`orient_and_scale`) and the
encoder is written in measurement coordinates (:func:`encoder`). The
refinement of the features by the likelihood of their graph is an optional
step (:mod:`creator_plugin.refine.likelihood`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._passes import MappedArrays
from .pruning import PrunedGraph, paper_scales

__all__ = [
    "surrounded_sets", "parent_subspaces", "subspace_residuals", "disentangling_matrix",
    "orient_and_scale", "intersection", "encoder",
]


def surrounded_sets(adjacency: np.ndarray) -> list[set[int]]:
    """``sur(i) = {j in pa(i) : ch(i) subset of ch(j)}`` for every node.

    ``adjacency[j, i] == 1`` means ``j -> i``. Note that for a node without
    children every parent is surrounding (``ch(i)`` is empty).
    """
    A = np.asarray(adjacency) != 0
    d = A.shape[0]
    out = []
    for i in range(d):
        ch_i = set(np.flatnonzero(A[i]))
        out.append({int(j) for j in np.flatnonzero(A[:, i]) if ch_i <= set(np.flatnonzero(A[j]))})
    return out


def _unit_rows(B: np.ndarray, j: int) -> np.ndarray:
    """The rows ``B[k][j, :]`` of every environment, each scaled to unit length."""
    rows = B[:, j, :]
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)


def parent_subspaces(B: np.ndarray, adjacency: np.ndarray) -> list[np.ndarray]:
    """Orthonormal basis ``(d, |pa(j)| + 1)`` of ``V_j`` = span of the rows ``B[k][j, :]``.

    Rows are normalised to unit length before the SVD so that environments
    with large noise scales do not dominate the subspace estimate.
    """
    K, d, _ = B.shape
    bases = []
    for j in range(d):
        rows = _unit_rows(B, j)
        dim = min(int(np.asarray(adjacency)[:, j].sum()) + 1, K, d)
        _, _, vt = np.linalg.svd(rows, full_matrices=False)
        bases.append(vt[:dim].T)
    return bases


def subspace_residuals(B: np.ndarray, bases: list[np.ndarray]) -> np.ndarray:
    """Per node j, the mean squared residual of the unit rows ``B[k][j, :]`` outside ``V_j``.

    ``(1/K) sum_k |u_kj - V_j V_j^T u_kj|^2`` with ``u_kj`` the unit rows
    :func:`parent_subspaces` fits ``V_j`` to: the subspaces' own noise
    level, which :func:`disentangling_matrix` (``evidence=True``) compares
    with the singular values of the intersection.
    """
    K, d, _ = B.shape
    out = np.zeros(d)
    for j in range(d):
        rows = _unit_rows(B, j)
        V = bases[j]
        out[j] = float(np.sum((rows - rows @ V @ V.T) ** 2) / K)
    return out


def disentangling_matrix(B: np.ndarray, adjacency: np.ndarray, *,
                         evidence: bool = False) -> np.ndarray:
    """The matrix ``C`` (d, d) with ``Yhat = Ytilde @ C``.

    For node i, ``c_i`` lies in the intersection of ``V_j`` over
    ``j in {i} U ch(i)``: the right singular vectors of the smallest singular
    values of ``sum_j Q_j`` (``Q_j`` the projector onto the orthogonal
    complement of ``V_j``). The intersection has dimension ``|sur(i)| + 1``
    in the population; when that is more than one the choice inside it is
    not identifiable and we take the projection of ``e_i`` (the entangled
    feature's own coordinate) onto it, a deterministic convention.

    With ``evidence=True`` (nodes with children and ``|sur(i)| > 0`` only),
    each of those ``r`` directions ``v_l`` enters the projection with weight
    ``mu_i / (s_l + mu_i)``: ``s_l`` its singular value of ``sum_j Q_j`` and
    ``mu_i`` the sum over the same j of :func:`subspace_residuals` (floored
    at 1e-12). In the population every ``s_l`` is 0 and the weights are 1
    (the same convention); in a sample, a direction the subspaces do not
    share -- a surrounding parent made up by one extra edge, whose
    projection dominates ``e_i`` when the entangled feature is mostly its
    parents -- is down-weighted. Its accuracy against the convention is on
    the documentation's accuracy page ("Why does the disentanglement weight
    the directions of an intersection?").

    Parameters
    ----------
    B : ndarray (K, d, d)
        Regression matrices, ``Zhat[k] ~= Ytilde[k] @ B[k].T``.
    adjacency : ndarray (d, d)
        Pruned DAG over positions, ``[j, i] == 1`` iff ``j -> i``.
    evidence : bool, default=False
        Weight the directions of a surrounded intersection by the evidence
        that they belong to it (above).
    """
    K, d, _ = B.shape
    A = np.asarray(adjacency) != 0
    bases = parent_subspaces(B, A)
    sur = surrounded_sets(A)
    resid = subspace_residuals(B, bases) if evidence else None
    C = np.zeros((d, d))
    eye = np.eye(d)
    for i in range(d):
        M = np.zeros((d, d))
        js = [i, *np.flatnonzero(A[i])]
        for j in js:
            V = bases[j]
            M += eye - V @ V.T
        _, sv, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        N = vt[-r:].T  # (d, r), smallest singular values last
        if r == 1:
            c = N[:, 0]
        elif evidence and len(js) > 1:
            mu = max(float(resid[js].sum()), 1e-12)
            c = N @ (mu / (sv[-r:] + mu) * (N.T @ eye[i]))
        else:
            c = N @ (N.T @ eye[i])
        norm = np.linalg.norm(c)
        C[:, i] = c / norm if norm > 1e-12 else N[:, -1]
    return C


def orient_and_scale(
    C: np.ndarray, gram: np.ndarray, scatter: np.ndarray, n_total: int
) -> np.ndarray:
    """The features' sign and scale convention, applied to ``C`` (d, d).

    Every disentangled feature ``Ytilde @ C[:, i]`` gets unit pooled
    within-environment variance and a positive pooled covariance with the
    entangled feature of the same position; only ``d x d`` moments are read.

    Parameters
    ----------
    C : ndarray (d, d)
    gram : ndarray (d, d)
        ``sum_k Ytilde_k.T @ Ytilde_k`` (uncentred).
    scatter : ndarray (d, d)
        ``sum_k`` of the centred scatter of ``Ytilde_k``.
    n_total : int
        Rows over all environments.

    Returns
    -------
    ndarray (d, d)
    """
    cov = np.diag(gram @ C)
    return C * (np.where(cov < 0, -1.0, 1.0) / np.sqrt(np.diag(C.T @ scatter @ C) / n_total))


def intersection(X_red: list, order, graph: PrunedGraph, *, paper_mode: bool,
                 evidence: bool) -> np.ndarray:
    """Step 3 of a fit: the disentangling matrix of the pruned graph, in the coordinates of the
    unit-variance entangled features (``X_red[k] @ graph.alphas``).

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
    order : creator_plugin.ordering.OrderingResult
    graph : creator_plugin.pruning.PrunedGraph
    paper_mode : bool
        The paper's Algorithm 3: intersect the row spaces of the same raw
        coefficients the pruning tested, in the coordinates of the raw
        features (:func:`creator_plugin.pruning.paper_scales`).
    evidence : bool
        :func:`disentangling_matrix`'s ``evidence`` (otherwise).

    Returns
    -------
    ndarray (d, d)
    """
    if paper_mode:
        # The paper's Algorithm 3 intersects the row spaces of the same raw B-hat, in
        # the coordinates of the raw features (paper_scales); map its C to `entangled`.
        noises = MappedArrays(X_red, order.noise_maps)
        raw = graph.feature_sd * paper_scales(noises, graph.reference)
        return raw[:, None] * disentangling_matrix(graph.tested, graph.adjacency)
    return disentangling_matrix(graph.B, graph.adjacency, evidence=evidence)


def encoder(X_red: list, order, reduction, graph: PrunedGraph, C: np.ndarray, moments: tuple,
            *, keep_features: bool = False) -> tuple:
    """The features' sign and scale, then the encoder in measurement coordinates.

    The sign and scale convention (:func:`orient_and_scale`) reads ``d x d``
    moments (``moments``: the entangled features' gram and scatters,
    :func:`creator_plugin.sem.feature_moments`): the disentangled features
    are never formed.

    Returns
    -------
    components : ndarray (d, p)
        The encoder.
    order : creator_plugin.ordering.OrderingResult
        With the rescaled directions (and, with ``keep_features``, the noises
        and the entangled features as arrays).
    features : list of ndarray (n_k, d) or None
        The entangled features (``keep_features``).
    C : ndarray (d, d)
        The oriented and scaled disentangling matrix.
    """
    gram, scatters = moments
    n_total = int(sum(x.shape[0] for x in X_red))
    C = orient_and_scale(C, gram, np.sum(scatters, axis=0), n_total)
    alphas = graph.alphas
    components = ((reduction.projection / reduction.scale[:, None]) @ (alphas @ C)).T
    features = list(MappedArrays(X_red, [alphas] * len(X_red))) if keep_features else None
    noises = list(MappedArrays(X_red, order.noise_maps)) if keep_features else None
    order = replace(order, alphas=alphas, noises=noises, entangled=features)
    return components, order, features, C

