"""Features refined by the Gaussian likelihood of their graph, and the score every
refine step compares graphs by.

:func:`refine_disentangling` is the likelihood disentanglement
(``RefineOptions(disentangle=...)``): it starts from the core's subspace
intersection (:func:`creator_plugin.disentangle.disentangling_matrix`) and
maximises the Gaussian likelihood of the pruned SEM in all environments at
once over the disentangling matrix, keeping the intersection when the
refinement leans on later positions more than on the feature's own
(:data:`LATER_WEIGHT_LEVEL`, the sign of an edge the pruning missed). The
same likelihood, penalised by BIC's price per edge, is the score of the
graph revision (:mod:`.revision`), the graph search (:mod:`.graph_search`)
and the order branches (:mod:`.order_branches`): :func:`sem_deviance`,
:func:`profiled_score`, :func:`fitted_score`.

The ``"auto"`` rule (:func:`refines`): refine when the number of latents is
in :data:`AUTO_LIKELIHOOD_LATENTS` (8 to 12), there are at least as many
environments as latents, the pruning rule is ``"residual"`` and the core's
intersection is ``"evidence"``. Measured: on 220 fresh data sets at d = 8,
10 and 12 it lowered the mean SHD from 0.36 to 0.28 (two better, one worse)
and raised the mean LocR² from 0.981 to 0.992, at no measurable cost in
time; at d = 5 it lowered LocR² in every workload family of the zoo and made
four of 360 tuning fits worse (docs: accuracy, "Features refined by the
likelihood of their graph").
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

from .._bfgs import minimize_bfgs

__all__ = [
    "AUTO_LIKELIHOOD_LATENTS",
    "LATER_WEIGHT_LEVEL",
    "NodePrecisions",
    "feature_covariances",
    "fitted_score",
    "node_precisions",
    "profiled_score",
    "refine_disentangling",
    "refines",
    "sem_deviance",
]

#: Multiplier of BIC's penalty per edge (K weights, ``sum_k log n_k``) in
#: every graph score. Chosen on tuning data (package simulator: d = 10 seeds
#: 0-49, six workload families at d = 5 seeds 0-29) among 1, 2, 4, 8 and 16.
PENALTY = 1.0

#: Gradient tolerance of each graph's refinement when graphs are scored. The
#: criterion is an average per row, and one edge's price is ``K log n / n``
#: in its units (about 7e-3 at K = 5, n = 1000, 3e-3 at K = 10, n = 2000),
#: so a tolerance of 1e-6 leaves the comparisons of graphs unchanged; on
#: tuning fits the searches chose the same graphs as with 1e-9
#: (benchmarks/LOG.md, "The revision's cost").
SCORE_GTOL = 1e-6

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


def refines(setting, *, n_latent: int, n_environments: int, pruning: str,
            disentangle: str = "evidence") -> bool:
    """Whether a fit refines its features by the likelihood (``setting``: "auto", True or False).

    ``"auto"``: with the residual rule, the ``"evidence"`` intersection, a
    number of latents in :data:`AUTO_LIKELIHOOD_LATENTS` and at least as many
    environments as latents.
    """
    if isinstance(setting, str):  # "auto"
        low, high = AUTO_LIKELIHOOD_LATENTS
        return (pruning == "residual" and disentangle == "evidence"
                and low <= n_latent <= high and n_environments >= n_latent)
    return bool(setting)


class NodePrecisions:
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


def node_precisions(G: np.ndarray, parents: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per environment, ``sum_j v_j v_j^T / s_j`` and ``sum_j log s_j``.

    One-off form of :class:`NodePrecisions`.
    """
    return NodePrecisions(parents)(G)


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
        iterations on this criterion than the limited-memory form
        (:func:`creator_plugin._bfgs.minimize_bfgs`: SciPy's BFGS below 256
        numbers, d < 16, the rank-two update in place from there on, and
        SciPy's L-BFGS-B once the matrix would take more than 256 MB, d > 76).
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

    objective = _likelihood_objective(S, w, NodePrecisions(parents))

    if method not in ("L-BFGS-B", "BFGS"):
        raise ValueError(f"method must be 'L-BFGS-B' or 'BFGS', got {method!r}.")
    f0 = objective(C0.ravel())[0]
    if method == "BFGS":
        res = minimize_bfgs(objective, C0.ravel(), gtol=gtol, maxiter=max_iter)
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


def _likelihood_objective(S: np.ndarray, w: np.ndarray, precisions: NodePrecisions):
    """:func:`refine_disentangling`'s criterion and gradient over ``M`` (flattened).

    ``S`` (K, d, d) are the covariances in the pooled-white coordinates and
    ``w`` the environments' weights.
    """
    d = S.shape[1]
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

    return objective


def sem_deviance(C: np.ndarray, covariances: np.ndarray, n_rows: np.ndarray,
                 adjacency: np.ndarray) -> float:
    """``sum_k n_k (sum_j log s_kj - log det G_k)`` for the features ``Ytilde_k C``.

    Parameters
    ----------
    C : ndarray (d, d)
        Disentangling matrix (columns the features).
    covariances : ndarray (K, d, d)
        Covariance ``S_k`` of the entangled features per environment.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        ``[j, i] != 0`` iff ``j -> i``.

    Returns
    -------
    float
        The Gaussian likelihood-ratio statistic of the linear SEM over the
        graph (environment-specific weights and noise variances) against
        the complete graph; 0 for a complete graph.
    """
    S = np.asarray(covariances, dtype=float)
    n = np.asarray(n_rows, dtype=float)
    A = np.asarray(adjacency) != 0
    G = np.einsum("ia,kij,jb->kab", C, S, C)
    _, logs = node_precisions(G, [np.flatnonzero(A[:, j]) for j in range(A.shape[0])])
    _, logdet = np.linalg.slogdet(G)
    return float(n @ (logs - logdet))


def profiled_score(C: np.ndarray, covariances: np.ndarray, n_rows: np.ndarray, A: np.ndarray,
              penalty: float, guard: bool = True) -> float:
    """The penalised deviance after refining ``C``: at the matrix the refinement's guard
    returns (``guard``), or at the refinement's optimum."""
    n = np.asarray(n_rows, dtype=float)
    refined, info = refine_disentangling(C, covariances, n, A, method="BFGS",
                                         gtol=SCORE_GTOL)
    deviance = (sem_deviance(refined, covariances, n, A) if guard
                else min(info["final"], info["start"]) * float(n.sum()))
    return deviance + penalty * int(A.sum()) * float(np.log(n).sum())


def fitted_score(covariances: np.ndarray, n_rows: np.ndarray, adjacency: np.ndarray,
                 penalty: float = PENALTY) -> float:
    """The penalised, profiled score of fitted features over their graph.

    :func:`graph_score`'s criterion for a finished fit: the refinement
    (:func:`refine_disentangling`, BFGS at the revision's tolerance) starts
    from the features themselves, and the deviance is read at the
    refinement's optimum, whether or not its guard would keep the refined
    matrix as features (a model is scored here, not re-estimated). Comparable
    between fits of the same reduced data with different orders, since every
    fit's features are a map of those data.

    Parameters
    ----------
    covariances : ndarray (K, d, d)
        Covariance of the fitted features per environment, in the order's
        positions.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        The fitted graph over positions.
    penalty : float, default=PENALTY

    Returns
    -------
    float
        Lower is better.
    """
    A = np.asarray(adjacency) != 0
    return profiled_score(np.eye(A.shape[0]), covariances, n_rows, A, penalty, guard=False)


def feature_covariances(X_red: list[np.ndarray], noise, alphas: np.ndarray,
                        scatters: list[np.ndarray], n_rows: np.ndarray) -> np.ndarray:
    """Per-environment covariances (K, d, d) of the entangled features the likelihoods read.

    The centred scatters over the rows, or, with a measurement-noise
    correction (``noise``, :class:`.measurement_noise.MeasurementNoise`), the
    corrected signal moments.
    """
    covs = scatters if noise is None else [
        alphas.T @ g @ alphas for g in noise.signal_grams([x.T @ x for x in X_red])]
    return np.stack(covs) / n_rows[:, None, None]
