"""Step 3: disentangle the entangled features with the pruned graph."""

from __future__ import annotations

import numpy as np

__all__ = ["surrounded_sets", "parent_subspaces", "disentangling_matrix"]


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


def parent_subspaces(B: np.ndarray, adjacency: np.ndarray) -> list[np.ndarray]:
    """Orthonormal basis (d, |pa(j)|+1) of ``V_j`` = span of the rows ``B[k][j, :]``.

    Rows are normalised to unit length before the SVD so that environments
    with large noise scales do not dominate the subspace estimate.
    """
    K, d, _ = B.shape
    bases = []
    for j in range(d):
        rows = B[:, j, :]
        rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)
        dim = min(int(np.asarray(adjacency)[:, j].sum()) + 1, K, d)
        _, _, vt = np.linalg.svd(rows, full_matrices=False)
        bases.append(vt[:dim].T)
    return bases


def disentangling_matrix(B: np.ndarray, adjacency: np.ndarray) -> np.ndarray:
    """The matrix ``C`` (d, d) with ``Yhat = Ytilde @ C``.

    For node i, ``c_i`` lies in the intersection of ``V_j`` over
    ``j in {i} U ch(i)``: the right singular vectors of the smallest singular
    values of ``sum_j Q_j`` (``Q_j`` the projector onto the orthogonal
    complement of ``V_j``). The intersection has dimension ``|sur(i)| + 1``
    in the population; when that is more than one the choice inside it is
    not identifiable and we take the projection of ``e_i`` (the entangled
    feature's own coordinate) onto it, a deterministic convention.

    Parameters
    ----------
    B : ndarray (K, d, d)
        Regression matrices, ``Zhat[k] ~= Ytilde[k] @ B[k].T``.
    adjacency : ndarray (d, d)
        Pruned DAG over positions, ``[j, i] == 1`` iff ``j -> i``.
    """
    K, d, _ = B.shape
    A = np.asarray(adjacency) != 0
    bases = parent_subspaces(B, A)
    sur = surrounded_sets(A)
    C = np.zeros((d, d))
    eye = np.eye(d)
    for i in range(d):
        M = np.zeros((d, d))
        for j in [i, *np.flatnonzero(A[i])]:
            V = bases[j]
            M += eye - V @ V.T
        _, _, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        N = vt[-r:].T  # (d, r), smallest singular values last
        c = N @ (N.T @ eye[i]) if r > 1 else N[:, 0]
        norm = np.linalg.norm(c)
        C[:, i] = c / norm if norm > 1e-12 else N[:, -1]
    return C
