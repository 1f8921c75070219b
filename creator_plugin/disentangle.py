"""Step 3: disentangle the entangled features with the pruned graph."""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

from ._bfgs import minimize_bfgs

__all__ = [
    "surrounded_sets", "parent_subspaces", "subspace_residuals", "disentangling_matrix",
    "refine_disentangling", "orient_and_scale", "LATER_WEIGHT_LEVEL", "AUTO_LIKELIHOOD_LATENTS",
]

#: ``CREATOR(disentangle="likelihood")`` keeps the subspace intersection when a
#: refined feature's largest coefficient on an entangled feature at a later
#: position exceeds this many times its coefficient on its own position
#: (:func:`refine_disentangling`'s ``"later_weight"``). The ordering's
#: directions are accurate enough that a right refinement moves features
#: along later positions by a fraction of their own; weights above 1 came,
#: on simulated data set aside for choosing it, from a true edge the pruning had
#: missed, which the likelihood absorbs by mixing features.
LATER_WEIGHT_LEVEL = 1.0

#: ``CREATOR(disentangle="auto")`` refines the features by the likelihood of
#: their graph (``"likelihood"``) when the number of latents is in this closed
#: range and there are at least as many environments as latents, and takes the
#: evidence-weighted intersection (``"evidence"``) otherwise. The range is the
#: one checked on fresh simulated data (d = 8, 10 and 12; docs: accuracy,
#: "Features refined by the likelihood of their graph"); at d = 5 the
#: refinement made features worse on the data used to design it.
AUTO_LIKELIHOOD_LATENTS = (8, 12)


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


class _NodePrecisions:
    """Per environment, ``sum_j v_j v_j^T / s_j`` and ``sum_j log s_j`` for one graph.

    For a stack ``G`` (K, d, d) of covariances, ``v_j = e_j - beta_j`` with
    ``beta_j`` the least-squares weights of node j on its parents under
    ``G[k]`` and ``s_j`` the residual variance. All nodes are solved in one
    batched call: each node's parents are padded to the largest parent set
    with slots that carry the identity and no covariance, so their weights
    are exactly zero. The index arrays depend only on the graph, so an
    optimiser that evaluates one graph many times builds them once.
    """

    def __init__(self, parents: list[np.ndarray]):
        d = len(parents)
        width = max([1] + [len(pa) for pa in parents])
        index = np.zeros((d, width), dtype=int)
        mask = np.zeros((d, width))
        for j, pa in enumerate(parents):
            index[j, : len(pa)] = pa
            mask[j, : len(pa)] = 1.0
        self._index, self._mask = index, mask
        self._mask2 = mask[:, :, None] * mask[:, None, :]
        self._padding = np.eye(width)[None] * (1.0 - self._mask2)
        self._nodes = np.arange(d)
        # beta (d, width) -> its place in the (d, d) weight matrix
        scatter = np.zeros((d * width, d * d))
        for j, pa in enumerate(parents):
            scatter[j * width + np.arange(len(pa)), j * d + pa] = 1.0
        self._scatter = scatter

    def __call__(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        K, d, _ = G.shape
        index, nodes = self._index, self._nodes
        G_pa = G[:, index[:, :, None], index[:, None, :]] * self._mask2 + self._padding
        g = G[:, index, nodes[:, None]] * self._mask
        beta = np.linalg.solve(G_pa, g[..., None])[..., 0]
        s = np.maximum(G[:, nodes, nodes] - (g * beta).sum(axis=-1), 1e-300)
        V = np.eye(d) - (beta.reshape(K, -1) @ self._scatter).reshape(K, d, d)
        P = np.swapaxes(V, 1, 2) @ (V / s[:, :, None])
        return P, np.log(s).sum(axis=-1)


def _node_precisions(G: np.ndarray, parents: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per environment, ``sum_j v_j v_j^T / s_j`` and ``sum_j log s_j``.

    One-off form of :class:`_NodePrecisions`.
    """
    return _NodePrecisions(parents)(G)


def refine_disentangling(
    C: np.ndarray,
    covariances: np.ndarray,
    n_rows: np.ndarray,
    adjacency: np.ndarray,
    *,
    max_iter: int = 3000,
    method: str = "L-BFGS-B",
    gtol: float = 1e-9,
) -> tuple[np.ndarray, dict]:
    """Refine ``C`` by the Gaussian likelihood of the pruned SEM in every environment.

    The disentangled features ``Yhat[k] = Ytilde[k] @ C`` follow, in every
    environment, a linear SEM over the pruned graph whose weights and noise
    variances change with k while ``C`` is shared. Given the graph, this
    maximises the Gaussian (quasi-)likelihood of all environments together,
    that is, it minimises::

        sum_k n_k (sum_j log s_kj(C) - log det(C^T S_k C)) / sum_k n_k

    with ``s_kj`` the residual variance of feature j on its parents in
    environment k and ``S_k`` the covariance of ``Ytilde[k]``; the criterion
    is 0 for a complete graph, and ``sum_k n_k`` times it is the
    likelihood-ratio statistic of the graph. It is invariant to each
    column's scale and flat along the surrounding directions (adding a
    surrounding parent's feature to a node changes no fit), where the
    start's choice is kept. The start is the subspace intersection
    (:func:`disentangling_matrix`). Every entry of ``C`` is free, so the
    refinement also corrects errors of the ordering's directions along
    later positions. The descent is L-BFGS with the analytic gradient
    (``2 sum_k w_k S_k C (P_k - (C^T S_k C)^{-1})``, ``P_k`` the SEM's
    precision of the features), in the coordinates where the entangled
    features are white over the pooled environments.

    Parameters
    ----------
    C : ndarray (d, d)
        Start, columns the disentangling vectors.
    covariances : ndarray (K, d, d)
        Covariance of the entangled features in each environment.
    n_rows : ndarray (K,)
        Rows per environment (the likelihood's weights).
    adjacency : ndarray (d, d)
        Pruned DAG over positions, ``[j, i] == 1`` iff ``j -> i``.
    max_iter : int, default=3000
        Iterations of the descent.
    method : {"L-BFGS-B", "BFGS"}, default="L-BFGS-B"
        :func:`scipy.optimize.minimize`'s method. ``"BFGS"`` keeps a dense
        inverse-Hessian estimate (d^2 x d^2), which converges in far fewer
        iterations on this criterion than the limited-memory form; it runs
        SciPy's BFGS steps without SciPy's wrappers
        (:func:`creator_plugin._bfgs.minimize_bfgs`).
    gtol : float, default=1e-9
        The descent stops when no gradient entry exceeds it.

    Returns
    -------
    C : ndarray (d, d)
        The refined matrix; the start, unchanged, if the descent did not
        lower the criterion or a refined column leans on a later position
        more than :data:`LATER_WEIGHT_LEVEL` times on its own (the
        likelihood absorbing an edge the pruning missed).
    info : dict
        ``"start"`` and ``"final"`` criterion, ``"iterations"``, ``"kept"``
        (whether the refined matrix was returned) and ``"later_weight"``:
        the largest coefficient of an entangled feature at a later position
        in a refined column, relative to the column's own position.
    """
    n = np.asarray(n_rows, dtype=float)
    w = n / n.sum()
    A = np.asarray(adjacency) != 0
    d = A.shape[0]
    parents = [np.flatnonzero(A[:, j]) for j in range(d)]
    # Pooled-white coordinates (R R^T = pooled covariance): the criterion is
    # far better conditioned there when chains of large weights make the
    # S_k ill-conditioned.
    S_raw = np.asarray(covariances, dtype=float)
    R = np.linalg.cholesky(np.einsum("k,kij->ij", w, S_raw))
    Rinv = linalg.solve_triangular(R, np.eye(d), lower=True)
    S = Rinv @ S_raw @ Rinv.T
    C0 = R.T @ np.asarray(C, dtype=float)
    C0 = C0 / np.maximum(np.linalg.norm(C0, axis=0), 1e-300)

    precisions = _NodePrecisions(parents)
    wS = w[:, None, None] * S
    # log det(M^T S_k M) = 2 log|det M| + log det S_k: one d x d determinant
    # and inverse per evaluation instead of K of each.
    logdet_S = float(w @ np.linalg.slogdet(S)[1])

    def objective(theta):
        M = theta.reshape(d, d)
        sign, logdet_M = np.linalg.slogdet(M)
        if sign == 0:
            return np.inf, np.zeros(d * d)
        # A line-search step can go far out (overflow there is the search's
        # business: it backs off) or to a numerically singular M.
        with np.errstate(over="ignore", invalid="ignore"):
            G = np.swapaxes(S @ M, 1, 2) @ M
            try:
                P, logs = precisions(G)
            except np.linalg.LinAlgError:
                return np.inf, np.zeros(d * d)
            f = float(w @ logs) - 2.0 * logdet_M - logdet_S
            grad = 2.0 * ((wS @ M @ P).sum(axis=0) - np.linalg.inv(M).T)
        return f, grad.ravel()

    if method not in ("L-BFGS-B", "BFGS"):
        raise ValueError(f"method must be 'L-BFGS-B' or 'BFGS', got {method!r}.")
    f0 = objective(C0.ravel())[0]
    if method == "BFGS":
        res = minimize_bfgs(objective, C0.ravel(), gtol=gtol, maxiter=max_iter, rank_two=True)
    else:
        res = optimize.minimize(objective, C0.ravel(), jac=True, method=method,
                                options={"maxiter": max_iter, "gtol": gtol})
    out = Rinv.T @ res.x.reshape(d, d)
    rel = out / np.where(np.abs(np.diag(out)) > 1e-300, np.diag(out), 1.0)
    later = float(np.abs(np.tril(rel, -1)).max(initial=0.0))
    kept = bool(np.isfinite(res.fun) and res.fun < f0 and later <= LATER_WEIGHT_LEVEL)
    info = {"start": float(f0), "final": float(res.fun), "iterations": int(res.nit),
            "kept": kept, "later_weight": later}
    return (out if kept else np.asarray(C, dtype=float)), info


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
