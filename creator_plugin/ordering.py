"""Step 1: topological ordering, exogenous noises and entangled features."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, linalg, stats
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from ._bfgs import minimize_bfgs, same_point
from ._lapack import eigh_syevr as _eigh
from ._passes import row_blocks, scratch_array
from ._random import draw_seed
from .independence import SCORERS, ica_consistency_sources

__all__ = [
    "AUTO_BRANCH_LATENTS",
    "AUTO_ORDER_BRANCHES",
    "DISTINCT_SCORE_RATIO",
    "OrderingResult",
    "canonical_directions",
    "close_calls",
    "consistency_descent",
    "ica_directions",
    "joint_direction",
    "looks_gaussian",
    "polish_directions",
    "topological_ordering",
]

# E[log cosh(nu)] for a standard normal nu: the Gaussian reference of the
# log-cosh negentropy approximation.
_GAUSS_LOGCOSH = integrate.quad(
    lambda t: (np.logaddexp(t, -t) - np.log(2.0)) * stats.norm.pdf(t), -np.inf, np.inf
)[0]

#: SD of the log-cosh excess ``mean(log cosh(t)) - E[log cosh(nu)]`` of a
#: standardised Gaussian sample of n rows is ``GAUSS_EXCESS_SD / sqrt(n)``
#: (the influence function of the excess, projected off the standardisation:
#: ``sqrt(Var(h) - Cov(h, nu^2 - 1)^2 / 2)`` with ``h = log cosh``).
GAUSS_EXCESS_SD = 0.0795

#: A direction whose log-cosh excess is within this many of those SDs of 0
#: in every environment is treated as Gaussian by :func:`joint_direction`.
GAUSS_EXCESS_LEVEL = 3.0


#: Weight of the skewness term in the polish's contrast (see :func:`polish_directions`).
_SKEW_WEIGHT = 0.3

#: Rows per environment FastICA proposes candidate directions from when the
#: refinement re-estimates them on every row (``n_refine > 0``).
ICA_MAX_ROWS = 100_000

#: Rows per environment of the polish's first stage (:func:`polish_directions`).
POLISH_MAX_ROWS = 100_000

#: BFGS gradient tolerance of :func:`joint_direction` (objective scaled to 1 at the start).
JOINT_GTOL = 1e-7

#: BFGS gradient tolerance of :func:`polish_directions` (contrast scaled to 1 at the start).
#: The optimum is flat: 1e-5 ends the ascent in fewer evaluations than 1e-6
#: (124 against 174 in a d = 20 fit) and changed no SHD and no verdict of the
#: simulated fits it was chosen on (263) nor of those it was checked on
#: afterwards (690; d = 5 to 20; the documentation's speed and scale page).
POLISH_GTOL = 1e-5

#: Iterations of :func:`consistency_descent` in :func:`topological_ordering`.
#: The descended directions are only starts of the joint refinement, which
#: re-estimates them; 10 iterations and a stopping tolerance of 1e-4 were
#: chosen on tuning seeds (d = 5 zoo families, d = 10, d = 20) as the fewest
#: that left every tuning fit's SHD unchanged, and halved the fit's time at
#: d = 20 (benchmarks/LOG.md, "The consistency descent's stopping rule").
DESCENT_MAX_ITER = 10

#: Stopping tolerance of :func:`consistency_descent` in :func:`topological_ordering`
#: (largest coordinate change of a unit-norm direction in one iteration).
DESCENT_TOL = 1e-4

#: :func:`consistency_descent` forms the starts' products with every ICA
#: direction (``s K m d`` multiplications) by ``np.einsum`` up to this size and
#: as one matrix product above it (6x faster at d = 30). The two round
#: differently; small problems (d <= 15 at K = d) keep the einsum, with which
#: their fits were checked (an ill-conditioned d = 10 fit,
#: tests/test_descent.py::test_ill_conditioned_d10_models_are_fitted[1001],
#: changes with the matrix product under one BLAS thread).
DESCENT_EINSUM_MAX = 10**6


@dataclass(frozen=True)
class OrderingResult:
    """Output of :func:`topological_ordering` (immutable: a fit that rescales it
    builds a new one with :func:`dataclasses.replace`).

    Attributes
    ----------
    alphas : ndarray (d, d)
        Column i is the direction chosen at step i (reduced coordinates).
    noises : list of ndarray (n_k, d), or None
        ``Zhat[k][:, i] = R_i[k] @ alphas[:, i]``: the recovered exogenous
        noises (None with ``materialize=False``).
    entangled : list of ndarray (n_k, d), or None
        ``Ytilde[k][:, i] = X_red[k] @ alphas[:, i]``: the entangled features
        (None with ``materialize=False``).
    steps : list of dict
        Per step: candidate scores, the environment each candidate came from,
        the chosen index, the best raw score and the gap to the runner-up;
        with refinement also ``refined_from`` (starts re-estimated: indices
        of candidates, plus ``K * m`` for the minimum of the consistency
        score reached from a candidate), ``refined_scores``, ``joint_corr2``
        (see :func:`joint_direction`), ``refined_chosen`` (the position of the
        kept direction in ``refined_scores``), ``descended_scores`` (see
        :func:`consistency_descent`) and, where a start replaced its
        re-estimate, ``kept_starts`` (positions in ``refined_from``).
    n_ica_not_converged : int
        How many ICA fits hit ``max_iter``.
    polish : dict or None
        With ``polish=True``: the contrast before and after the joint
        re-estimation of all directions (:func:`polish_directions`), the
        BFGS iterations and whether the result was kept.
    noise_maps : list of ndarray (d, d)
        ``noises[k] = X_red[k] @ noise_maps[k]``: every noise is a linear
        function of its environment's reduced data.
    """

    alphas: np.ndarray
    noises: list[np.ndarray] | None
    entangled: list[np.ndarray] | None
    steps: list[dict] = field(default_factory=list)
    n_ica_not_converged: int = 0
    polish: dict | None = None
    noise_maps: list[np.ndarray] = field(default_factory=list)


def ica_directions(
    R: np.ndarray, m: int, *, random_state: int, max_iter: int = 400, tol: float = 1e-5,
    fun: str = "logcosh",
) -> tuple[np.ndarray, bool]:
    """ICA unmixing directions of the rank-``m`` residual ``R`` (n, d).

    ICA runs on R restricted to its m-dimensional column space; every
    unmixing row is returned as a direction in the d reduced coordinates.

    Returns
    -------
    dirs : ndarray (d, m)
        Unit-norm directions; ``R @ dirs`` are the estimated sources.
    converged : bool
    """
    _, _, vt = np.linalg.svd(R, full_matrices=False)
    basis = vt[:m].T  # (d, m)
    # Deterministic signs (largest entry positive) so that the ICA start, and
    # hence the result, does not depend on the SVD's arbitrary sign choices.
    basis = basis * np.sign(basis[np.argmax(np.abs(basis), axis=0), np.arange(m)])
    if m == 1:
        return basis, True
    U = R @ basis
    # Whiten with the Cholesky factor (unique, no sign choices) and start FastICA
    # from a seeded matrix: the result is then a deterministic function of the
    # data, equivariant to linear reparametrisations of the reduced coordinates.
    chol = np.linalg.cholesky(np.cov(U, rowvar=False))
    white = np.linalg.inv(chol).T  # U @ white has identity covariance
    w_init = np.random.default_rng(random_state).standard_normal((m, m))
    if fun == "logcosh":
        unmixing, converged = _fastica_logcosh(
            ((U - U.mean(axis=0)) @ white).T, w_init, tol=tol, max_iter=max_iter)
    else:
        ica = FastICA(
            n_components=m, whiten=False, max_iter=max_iter, tol=tol, fun=fun, w_init=w_init,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            ica.fit((U - U.mean(axis=0)) @ white)
        converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        unmixing = ica.components_
    dirs = basis @ white @ unmixing.T
    dirs /= np.linalg.norm(dirs, axis=0, keepdims=True)
    return dirs, converged


def _sym_decorrelation(W: np.ndarray) -> np.ndarray:
    """``(W W^T)^{-1/2} W``, computed as scikit-learn's FastICA does."""
    s, u = _eigh(W @ W.T)
    s = np.clip(s, a_min=np.finfo(W.dtype).tiny, a_max=None)
    if W.shape[0] == W.shape[1]:
        # multi_dot's order for three square factors (its cost estimates tie),
        # without its shape analysis.
        return (u * (1.0 / np.sqrt(s))) @ (u.T @ W)
    return np.linalg.multi_dot([u * (1.0 / np.sqrt(s)), u.T, W])


def _fastica_logcosh(
    XT: np.ndarray, w_init: np.ndarray, *, tol: float, max_iter: int
) -> tuple[np.ndarray, bool]:
    """Parallel FastICA with the log-cosh contrast on whitened ``XT`` (m, n).

    The iteration of :class:`sklearn.decomposition.FastICA` with
    ``whiten=False, fun="logcosh"`` operation for operation (its unmixing
    matrix is reproduced exactly), without the estimator's input checks
    and the mixing matrix it also computes: the ordering step runs it
    ``K d`` times a fit on small, already validated arrays, where those
    dominated its cost.

    Returns
    -------
    unmixing : ndarray (m, m)
        ``unmixing @ XT`` are the sources.
    converged : bool
        Whether the tolerance was reached within ``max_iter`` iterations.
    """
    W = _sym_decorrelation(w_init)
    n = float(XT.shape[1])
    square = np.empty((W.shape[0], XT.shape[1]))
    for _ in range(max_iter):
        gwtx = np.tanh(W @ XT)
        g_wtx = np.subtract(1.0, np.square(gwtx, out=square), out=square).mean(axis=1)
        W1 = _sym_decorrelation(gwtx @ XT.T / n - g_wtx[:, None] * W)
        lim = max(abs(abs(np.einsum("ij,ij->i", W1, W)) - 1))
        W = W1
        if lim < tol:
            return W, True
    return W, False


def _residual_map(S: np.ndarray, T: np.ndarray) -> np.ndarray | None:
    """``P`` with ``X @ P`` the residual of X on ``Z = X @ T`` (least squares), from ``S = X^T X``.

    None when T has no columns (the residual is X itself).
    """
    if T.shape[1] == 0:
        return None
    coef = np.linalg.lstsq(T.T @ S @ T, T.T @ S, rcond=None)[0]
    return np.eye(S.shape[0]) - T @ coef


def _distinct_best(
    R_list: list[np.ndarray], candidates: np.ndarray, scores: np.ndarray, n: int,
    max_corr2: float = 0.9,
) -> list[int]:
    """The ``n`` best-scored candidates that extract different sources.

    A candidate counts as the same source as an already picked one when their
    projections have squared pooled correlation ``>= max_corr2``.
    """
    # Pooled Gram matrix once: every correlation below is a d x d computation.
    sigma = sum(R.T @ R for R in R_list)
    cov = candidates.T @ sigma @ candidates
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    corr2 = (cov / np.outer(sd, sd)) ** 2
    picked: list[int] = []
    for c in np.argsort(scores, kind="stable"):
        if not picked or corr2[c, picked].max() < max_corr2:
            picked.append(int(c))
        if len(picked) == n:
            break
    return picked


def consistency_descent(
    R_list: list[np.ndarray], ica_dirs: list[np.ndarray], starts: np.ndarray, *,
    max_iter: int = 100, tol: float = 1e-8,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimise the ICA-consistency score over directions, from every start.

    The score of a direction ``a`` is ``sum_k (1 - max_c corr^2_k(a, a_kc))``
    (:func:`creator_plugin.independence.ica_consistency_scores`): zero
    exactly when ``a`` extracts one of environment k's ICA sources in every
    k. Each ICA direction ``a_kc`` is precise only in its own environment's
    metric; with chains of large weights the covariances of the
    environments differ by orders of magnitude, so a direction found in one
    environment can extract a different source in another, and no single
    candidate scores well everywhere. The minimum over *all* directions
    combines every environment's precise information.

    With every environment's closest ICA direction ``a_k`` held, the score
    is ``sum_k a' P_k a / a' S_k a`` (``S_k`` environment k's covariance,
    ``P_k = S_k - u_k u_k'``, ``u_k = S_k a_k / sqrt(a_k' S_k a_k)``). Each
    iteration, for all starts at once, reassigns the closest directions and
    takes a step along ``-(sum_k P_k / a' S_k a)^{-1}`` times the gradient
    (a descent direction: the matrix is positive semi-definite), with
    backtracking until the score decreases, so no start ends worse than it
    began. Steps stay in the residuals' column space (of rank m < d after
    the first step), so the result does not depend on rounding along the
    directions the score ignores. Only ``d x d`` matrices are involved. The
    score has a local minimum near each source direction of each
    environment, so the caller starts from every candidate and keeps the
    best minima.

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
        The step's residuals.
    ica_dirs : list of ndarray (d, m)
        The ICA unmixing directions of every environment.
    starts : ndarray (d, s)
        Starting directions.
    max_iter : int, default=100
        Iterations; each costs ``O(s K d (m + d))`` and ``s`` solves of
        ``d x d`` systems.
    tol : float, default=1e-8
        A start stops when its unit-norm direction moves less than this
        (max-norm) or no step decreases its score.

    Returns
    -------
    directions : ndarray (d, s)
        Unit-norm minimisers, one per start, largest entry positive.
    scores : ndarray (s,)
        Their ICA-consistency scores (never above the starts' scores).
    """
    S = np.stack([R.T @ R / R.shape[0] for R in R_list])  # (K, d, d)
    A = np.stack(ica_dirs)  # (K, d, m)
    K, d, _ = A.shape
    var = np.einsum("kic,kij,kjc->kc", A, S, A)
    Ut = (np.einsum("kij,kjc->kci", S, A)
          / np.sqrt(np.maximum(var, 1e-300))[:, :, None])  # (K, m, d): u_kc
    S_flat = S.transpose(1, 0, 2).reshape(d, K * d)  # a @ S_flat = [S_k a]_k (S symmetric)
    env = np.arange(K)
    ridge = 1e-9 * np.trace(S, axis1=1, axis2=2).sum() * np.eye(d)
    m = Ut.shape[1]
    Ut_flat = Ut.reshape(K * m, d).T  # a @ Ut_flat = [a . u_kc]_(k, c)
    # After the first step the residuals have rank m < d: the score ignores
    # the other d - m directions, along which the ridge's solve would turn
    # rounding in the gradient into steps of about 1e-7 (so results would
    # depend on the order of the data's columns at that level). Steps are
    # kept in the residuals' column space.
    range_basis = np.linalg.eigh(S.sum(axis=0))[1][:, d - m:] if m < d else None
    by_matmul = starts.shape[1] * K * m * d > DESCENT_EINSUM_MAX

    def correlations(a: np.ndarray):
        """S_k a, a' S_k a and the squared correlations with every ICA direction."""
        Sa = (a @ S_flat).reshape(-1, K, d)
        q = np.maximum(np.einsum("ski,si->sk", Sa, a), 1e-300)
        if by_matmul:
            products = (a @ Ut_flat).reshape(-1, K, m)
        else:
            products = np.einsum("si,kci->skc", a, Ut)
        return Sa, q, products**2 / q[:, :, None]

    def evaluate(a: np.ndarray):
        """S_k a, a' S_k a, the closest ICA direction and 1 - corr^2 per environment."""
        Sa, q, c2 = correlations(a)
        closest = np.argmax(c2, axis=2)
        # The closest direction's value, read as the maximum (no index arrays).
        f = 1.0 - np.minimum(c2.max(axis=2), 1.0)
        return Sa, q, closest, f

    a = (starts / np.linalg.norm(starts, axis=0)).T  # (s, d)
    Sa, q, closest, f = evaluate(a)
    score = f.sum(axis=1)
    active = np.arange(a.shape[0])
    for _ in range(max_iter):
        if not active.size:
            break
        x, w = a[active], 1.0 / q[active]
        Uc = Ut[env[None, :], closest[active]]  # (s, K, d)
        Q = np.tensordot(w, S, axes=(1, 0)) - np.swapaxes(Uc * w[:, :, None], 1, 2) @ Uc
        # Half the gradient; it is orthogonal to x (the score is scale-free).
        g = np.einsum("sij,sj->si", Q, x) - np.einsum("sk,ski->si", w * f[active], Sa[active])
        step = -_solve_each(Q + ridge, g)
        if range_basis is not None:
            step = (step @ range_basis) @ range_basis.T
        slope = np.sum(g * step, axis=1)  # < 0
        t = np.ones(active.size)
        accepted = np.zeros(active.size, dtype=bool)
        new, new_score = x.copy(), score[active].copy()
        for _ in range(12):
            trial = x + t[:, None] * step
            trial /= np.linalg.norm(trial, axis=1, keepdims=True)
            # Scores only: the same arithmetic as evaluate's, without the indices.
            trial_score = (1.0 - np.minimum(correlations(trial)[2].max(axis=2), 1.0)).sum(axis=1)
            ok = ~accepted & (trial_score <= score[active] + 2e-4 * t * slope)
            new[ok], new_score[ok] = trial[ok], trial_score[ok]
            accepted |= ok
            if accepted.all():
                break
            t = np.where(accepted, t, t / 4)
        moved = np.abs(new - x).max(axis=1)
        a[active], score[active] = new, new_score
        Sa, q, closest, f = evaluate(a)
        active = active[accepted & (moved >= tol)]
    # Starts that reach the same minimum must give the same direction, sign
    # included, whichever of them the caller picks: largest entry positive.
    a *= np.sign(a[np.arange(a.shape[0]), np.argmax(np.abs(a), axis=1)])[:, None]
    return a.T.copy(), score


def _solve_each(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``M[s]^-1 b[s]`` for every s; least squares where ``M[s]`` is singular.

    A start with almost no variance in some environment has a huge weight
    ``1 / q`` there, which can make its matrix singular in float64 (chains of
    large weights at d = 10); only that start falls back to least squares.
    """
    try:
        return np.linalg.solve(M, b[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        out = np.empty_like(b)
        for s, (m, v) in enumerate(zip(M, b)):
            try:
                out[s] = np.linalg.solve(m, v)
            except np.linalg.LinAlgError:
                out[s] = np.linalg.lstsq(m, v, rcond=None)[0]
        return out


def looks_gaussian(R_list: list[np.ndarray], w: np.ndarray) -> bool:
    """Is ``R_k @ w`` indistinguishable from Gaussian in every environment?

    The log-cosh excess of the standardised projection (the negentropy
    approximation :func:`joint_direction` ascends) is compared with its
    sampling SD under a Gaussian, ``GAUSS_EXCESS_SD / sqrt(n_k)``; the
    answer is yes when it is within ``GAUSS_EXCESS_LEVEL`` SDs of 0 in every
    environment.

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
    w : ndarray (d,)

    Returns
    -------
    bool
    """
    for R in R_list:
        n = R.shape[0]
        if n < 2:
            return False
        t = R @ w
        sd = t.std()
        if not sd > 0:
            return False
        a = np.abs((t - t.mean()) / sd)
        excess = float(np.mean(a + np.log1p(np.exp(-2.0 * a)))) - np.log(2.0) - _GAUSS_LOGCOSH
        if abs(excess) >= GAUSS_EXCESS_LEVEL * GAUSS_EXCESS_SD / np.sqrt(n):
            return False
    return True


def joint_direction(
    R_list: list[np.ndarray], w0: np.ndarray, found: np.ndarray, *, max_iter: int = 200,
    stacked: tuple | None = None,
) -> tuple[np.ndarray, float]:
    """Re-estimate one source direction from all environments at once.

    The direction ``w`` of the step's source is the same in every
    environment (it extracts the same exogenous noise), but the ICA that
    found it saw one environment only. This maximises the sum over
    environments of the squared log-cosh negentropy of the standardised
    projection ``R_k @ w``; the true direction is a stationary point of every
    term, so of the sum, and the estimate uses all ``sum(n_k)`` rows. A
    quasi-Newton (BFGS) ascent starts from ``w0``. Directions only matter
    modulo ``span(found)`` (every residual ``R_k`` annihilates it), so the
    search runs in its orthogonal complement.

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
        The step's residuals (centred; ``R_k @ found == 0``).
    w0 : ndarray (d,)
        Starting direction (the chosen ICA candidate).
    found : ndarray (d, i)
        Directions of the sources already found.
    max_iter : int, default=200
        BFGS iterations.
    stacked : tuple, optional
        ``_stack_rows(R_list)``, when the caller re-uses it across calls
        (built here otherwise).

    Returns
    -------
    w : ndarray (d,)
        Unit-norm refined direction.
    corr2 : float
        Squared pooled correlation between ``R_k @ w`` and ``R_k @ w0`` (small
        when the ascent left ``w0``'s source for another one; the caller
        re-scores the result, so that is allowed).

    Notes
    -----
    A start whose projection is indistinguishable from Gaussian in every
    environment (:func:`looks_gaussian`) is returned unchanged (``corr2 =
    1``). The model allows one Gaussian noise; at its source the contrast
    has no signal, and an ascent from there leaves the source for a mixture
    of the non-Gaussian ones.
    """
    d = w0.shape[0]
    if looks_gaussian(R_list, w0):
        return w0 / np.linalg.norm(w0), 1.0
    if found.shape[1]:
        q, _ = np.linalg.qr(found, mode="complete")
        basis = q[:, found.shape[1]:]
    else:
        basis = np.eye(d)
    # Projections are formed as R_k @ (basis @ v): storing R_k @ basis would
    # copy n x d per environment. An optimiser can leave reference cycles
    # that keep the closure alive until the next garbage collection, so it
    # sees the data through a list emptied after the ascent.
    data = list(R_list)
    S = [basis.T @ (R.T @ R) @ basis / R.shape[0] for R in R_list]
    if stacked is None:
        stacked = _stack_rows(R_list)
    if stacked is not None:
        neg_objective = _stacked_logcosh_objective(stacked, basis, np.stack(S))
    else:
        def neg_objective(v: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = 0.0, np.zeros_like(v)
            for R, s in zip(data, S):
                sv = s @ v
                var = v @ sv
                w = basis @ v / np.sqrt(var)
                # One pass over blocks of rows: the data are read once per evaluation.
                log_cosh, gt, gR = 0.0, 0.0, np.zeros(d)
                for rows in row_blocks(R.shape[0], d):
                    Rb = R[rows]
                    t = Rb @ w
                    lc, g = _logcosh_terms(t)
                    log_cosh += float(np.sum(lc))
                    gt += float(g @ t)
                    gR += g @ Rb
                n = R.shape[0]
                excess = log_cosh / n - np.log(2.0) - _GAUSS_LOGCOSH
                d_mean = basis.T @ gR / (n * np.sqrt(var)) - gt / n * sv / var
                value += excess**2
                grad += 2.0 * excess * d_mean
            return -value, -grad

    v0 = basis.T @ w0
    v0 = v0 / np.linalg.norm(v0)
    # Scale the objective to 1 at the start so that BFGS's gradient tolerance
    # means the same thing whatever the noises' non-Gaussianity.
    at_start = neg_objective(v0)
    scale = max(-at_start[0], 1e-12)

    def scaled(v: np.ndarray) -> tuple[float, np.ndarray]:
        # The optimiser's first request is the start, already evaluated.
        value, grad = at_start if same_point(v, v0) else neg_objective(v)
        return value / scale, grad / scale

    with np.errstate(all="ignore"):
        res = minimize_bfgs(scaled, v0, gtol=JOINT_GTOL, maxiter=max_iter)
    data.clear()
    v = res.x
    if not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
        return w0, 0.0
    num = sum((v0 @ s @ v) for s in S)
    corr2 = float(num**2 / (sum(v0 @ s @ v0 for s in S) * sum(v @ s @ v for s in S)))
    w = basis @ v
    w = w / np.linalg.norm(w)
    if w @ w0 < 0:
        w = -w
    return w, corr2


#: Environments whose rows hold at most this many values in all are stacked
#: into one array, so that a contrast is evaluated in a few numpy calls over
#: all environments instead of a loop over them (the loop's overhead is most
#: of the cost of small data). The stacked copy and each temporary of the
#: contrast are then at most this size (512 kB, the size of the loop's
#: blocks); larger data are read environment by environment in blocks.
STACK_ELEMENTS = 2**16


class _Stacked(tuple):
    """``(R_all, starts, sizes)``, with scratch arrays for the contrasts' elementwise terms.

    A contrast evaluated many times over the same rows writes its
    temporaries into the same arrays (:func:`_contrast_sums_stacked`;
    :func:`creator_plugin._passes.scratch_array` says why).
    """

    def __new__(cls, R_all: np.ndarray, starts: np.ndarray, sizes: np.ndarray):
        self = super().__new__(cls, (R_all, starts, sizes))
        self.scratch = {}
        return self

    def buffers(self, columns: int, count: int) -> list[np.ndarray]:
        """``count`` arrays of shape ``(rows, columns)``, the same ones at every call."""
        return [scratch_array(self.scratch, (columns, i), (self[0].shape[0], columns))
                for i in range(count)]


def _keep_sources(
    R_list: list[np.ndarray], ica_dirs: list[np.ndarray], starts: np.ndarray,
    refined: np.ndarray,
) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Undo a joint re-estimation that left its start's source and scores worse.

    :func:`joint_direction` maximises the summed negentropy from a start; in
    an environment where another source is more non-Gaussian it can move to
    that one, and then it no longer re-estimates the start's direction: it
    proposes another. The step's own criterion judges the two: where the
    re-estimated direction's closest ICA source differs from the start's in
    at least one environment and the start's ICA-consistency score is lower,
    the start (unit norm) is kept.

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
    ica_dirs : list of ndarray (d, m)
    starts, refined : ndarray (d, s)
        The starts and their re-estimates, column by column.

    Returns
    -------
    directions : ndarray (d, s)
    kept : list of int
        The columns where the start was kept.
    scores : ndarray (s,)
        The ICA-consistency scores of ``directions``.
    """
    s = starts.shape[1]
    starts = starts / np.linalg.norm(starts, axis=0)
    scores, sources = ica_consistency_sources(R_list, np.hstack([starts, refined]), ica_dirs)
    kept = [c for c in range(s)
            if (sources[c] != sources[s + c]).any() and scores[c] < scores[s + c]]
    directions = refined.copy()
    directions[:, kept] = starts[:, kept]
    chosen = scores[s:].copy()
    chosen[kept] = scores[kept]
    return directions, kept, chosen


def _stack_rows(R_list: list[np.ndarray]) -> _Stacked | None:
    """``(R_all, starts, sizes)``: the environments' rows in one array, or None when large."""
    sizes = np.array([R.shape[0] for R in R_list])
    if int(sizes.sum()) * R_list[0].shape[1] > STACK_ELEMENTS or np.any(sizes == 0):
        return None
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return _Stacked(np.concatenate(R_list), starts, sizes)


def _stacked_logcosh_objective(stacked: tuple, basis: np.ndarray, S: np.ndarray):
    """:func:`joint_direction`'s negated objective and gradient over stacked environments.

    ``S[k]`` is environment k's covariance in the coordinates of ``basis``.
    The same sums as the loop over environments, formed in one pass over
    all rows with per-environment totals by ``np.add.reduceat``.
    """
    R_all, starts, sizes = stacked
    n = sizes.astype(float)
    offset = np.log(2.0) + _GAUSS_LOGCOSH
    environment = np.repeat(np.arange(sizes.size), sizes)  # of each row
    bounds = list(zip(starts.tolist(), (starts + sizes).tolist()))
    # The elementwise terms are written into arrays kept for the ascent.
    t, *terms = (scratch_array(stacked.scratch, ("joint", i), (R_all.shape[0],))
                 for i in range(4))

    def neg_objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        Sv = S @ v  # (K, m)
        var = Sv @ v
        sd = np.sqrt(var)
        np.multiply(np.matmul(R_all, basis @ v, out=t), (1.0 / sd)[environment], out=t)
        lc, g = _logcosh_terms(t, out=terms)
        log_cosh = np.add.reduceat(lc, starts)
        gt = np.add.reduceat(np.multiply(g, t, out=lc), starts)
        gR = np.stack([g[lo:hi] @ R_all[lo:hi] for lo, hi in bounds])  # (K, d)
        excess = log_cosh / n - offset
        d_mean = (gR @ basis) / (n * sd)[:, None] - (gt / (n * var))[:, None] * Sv
        return -float(excess @ excess), -(2.0 * excess) @ d_mean

    return neg_objective


class _SingularDirections(Exception):
    """The directions stopped spanning the reduced space during the polish."""


def _ordered_contrast(
    g: np.ndarray, X_red: list[np.ndarray], d: int, scatters: list[np.ndarray],
    stacked: tuple | None = None,
) -> tuple[float, np.ndarray]:
    """The polish's contrast of all ordered noises, and its gradient.

    ``G = g.reshape(d, d)`` holds one direction per row. In environment k the
    entangled features are ``Y = X_k G^T`` and the noises are their
    Gram-Schmidt residuals in the order of the rows, standardised:
    ``Z = Y L^{-T}`` with ``L`` the Cholesky factor of ``Y^T Y / n``. Every
    noise contributes its squared log-cosh excess plus ``_SKEW_WEIGHT``
    times the square of ``mean(z exp(-z^2 / 2))`` (zero for a Gaussian and
    for any symmetric law). The gradient back-propagates through the
    Cholesky factorisation (Murray, 2016, "Differentiation of the Cholesky
    decomposition"). ``scatters[k]`` is ``X_k^T X_k``, which does not depend
    on ``g``. ``stacked`` (``_stack_rows(X_red)``) evaluates the row sums
    of all environments in one pass over the stacked rows.
    """
    G = g.reshape(d, d)
    eye = np.eye(d)
    factors = []
    for X, S in zip(X_red, scatters):
        n = X.shape[0]
        try:
            L = np.linalg.cholesky(G @ S @ G.T / n)
        except np.linalg.LinAlgError:
            raise _SingularDirections from None
        Linv = linalg.solve_triangular(L, eye, lower=True)
        factors.append((n, L, Linv, G.T @ Linv.T))  # Z = X M, M the last entry
    if stacked is not None:
        sums = _contrast_sums_stacked(stacked, [f[3] for f in factors])
    else:
        sums = [_contrast_sums(X, f[3]) for X, f in zip(X_red, factors)]
    value, grad = 0.0, np.zeros((d, d))
    for (n, L, Linv, _), S, (log_cosh, skew, tanh_x, odd_x) in zip(factors, scatters, sums):
        excess = log_cosh / n - np.log(2.0) - _GAUSS_LOGCOSH
        skew = skew / n
        value += float(excess @ excess) + _SKEW_WEIGHT * float(skew @ skew)
        DtX = ((2.0 * excess / n)[:, None] * tanh_x
               + (2.0 * _SKEW_WEIGHT * skew / n)[:, None] * odd_x)
        # Z = Y N with Y = X G^T and N = L^{-T}: the direct term, then through L.
        Lbar = np.tril(-(Linv.T @ (DtX @ G.T) @ Linv.T))
        P = np.tril(L.T @ Lbar)
        P[np.diag_indices(d)] *= 0.5
        Sbar = Linv.T @ P @ Linv
        grad += Linv.T @ DtX + (Sbar + Sbar.T) / n @ G @ S
    return value, grad.ravel()


def _contrast_sums(X: np.ndarray, M: np.ndarray) -> tuple:
    """Row sums of one environment for :func:`_ordered_contrast` (``Z = X M``).

    ``sum log(2 cosh Z)``, ``sum Z exp(-Z^2 / 2)`` (per column) and
    ``tanh(Z)^T X``, ``((1 - Z^2) exp(-Z^2 / 2))^T X``.
    """
    d = M.shape[1]
    # One pass over blocks of rows, so that only one block of temporaries
    # exists at any n and the data are read once per evaluation (at large
    # n reading them is the cost). dJ/dZ is tanh(Z) and
    # (1 - Z^2) exp(-Z^2 / 2), column-scaled by factors known only after
    # the pass, so their products with X are accumulated apart.
    log_cosh, skew = np.zeros(d), np.zeros(d)
    tanh_x, odd_x = np.zeros((d, X.shape[1])), np.zeros((d, X.shape[1]))
    for rows in row_blocks(X.shape[0], 16 * d):
        Xb = X[rows]
        lc, ZE, th, odd = _contrast_terms(Xb @ M)
        log_cosh += lc.sum(axis=0)
        skew += ZE.sum(axis=0)
        tanh_x += th.T @ Xb
        odd_x += odd.T @ Xb
    return log_cosh, skew, tanh_x, odd_x


def _contrast_terms(Z: np.ndarray, out: list[np.ndarray] | None = None) -> tuple:
    """Elementwise terms of the polish's contrast and its gradient.

    ``log(2 cosh Z)``, ``Z exp(-Z^2 / 2)``, ``tanh Z`` and ``(1 - Z^2) exp(-Z^2 / 2)``,
    written into the five arrays ``out`` (shaped like ``Z``) when given.
    """
    b0, b1, b2, b3, b4 = out if out is not None else [np.empty_like(Z) for _ in range(5)]
    lc, th = _logcosh_terms(Z, out=(b0, b1, b2))
    Z2 = np.square(Z, out=b1)
    E = np.exp(np.multiply(Z2, -0.5, out=b3), out=b3)
    ZE = np.multiply(Z, E, out=b4)
    odd = np.multiply(np.subtract(1.0, Z2, out=b1), E, out=b1)
    return lc, ZE, th, odd


def _contrast_sums_stacked(stacked: tuple, Ms: list[np.ndarray]) -> list[tuple]:
    """:func:`_contrast_sums` of every environment, the elementwise work done once over all rows."""
    X_all, starts, sizes = stacked
    spans = [slice(s, s + m) for s, m in zip(starts, sizes)]
    columns = Ms[0].shape[1]
    if isinstance(stacked, _Stacked):
        Z, *out = stacked.buffers(columns, 6)
    else:
        Z, out = np.empty((X_all.shape[0], columns)), None
    for rows, M in zip(spans, Ms):
        np.matmul(X_all[rows], M, out=Z[rows])
    lc, ZE, th, odd = _contrast_terms(Z, out)
    return [(lc[r].sum(axis=0), ZE[r].sum(axis=0), th[r].T @ X_all[r], odd[r].T @ X_all[r])
            for r in spans]


def _logcosh_terms(t: np.ndarray, out: tuple | None = None) -> tuple:
    """Elementwise ``log(2 cosh t)`` and its derivative ``tanh t``.

    With ``out = (b0, b1, b2)`` (arrays shaped like ``t``) nothing is
    allocated: ``log(2 cosh t)`` is written into ``b2`` and ``tanh t`` into
    ``b0``; ``b1`` is overwritten (the same operations, so the same numbers).
    """
    b0, b1, b2 = out if out is not None else [np.empty_like(t) for _ in range(3)]
    a = np.abs(t, out=b0)
    e = np.exp(np.multiply(a, -2.0, out=b1), out=b1)
    lc = np.add(a, np.log1p(e, out=b2), out=b2)
    return lc, _tanh_from(e, t, out=b0)


def _tanh_from(e: np.ndarray, t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``tanh(t)`` from ``e = exp(-2 |t|)``, which the log-cosh contrast computes anyway.

    ``tanh|t| = (1 - e) / (1 + e)``: exact up to rounding, with an absolute
    error of a few units of 1e-16, and far cheaper than a second
    transcendental function. With ``out``, the result is written there and
    ``e`` is overwritten (the same operations, so the same numbers).
    """
    if out is None:
        return np.copysign((1.0 - e) / (1.0 + e), t)
    np.subtract(1.0, e, out=out)
    np.divide(out, np.add(e, 1.0, out=e), out=out)
    return np.copysign(out, t, out=out)


def polish_directions(
    X_red: list[np.ndarray], alphas: np.ndarray, *, max_iter: int = 300,
    max_rows: int | None = POLISH_MAX_ROWS,
) -> tuple[np.ndarray, dict]:
    """Re-estimate all source directions at once, keeping the order.

    With the order fixed, the model is a structured ICA shared by the
    environments: the entangled features ``Y_k = X_k @ alphas`` have the
    exogenous noises as their Gram-Schmidt residuals (position i regressed
    on positions ``< i``) in every environment k, with the same ``alphas``
    everywhere and only the triangular factor changing with k. The ordering
    step estimates the columns one at a time, so errors of early directions
    leak into the residuals every later one is estimated from. This
    maximises, over all columns jointly and by BFGS from ``alphas``, the
    sum over environments and positions of a negentropy approximation of
    those residuals (standardised): the squared log-cosh excess, which is
    blind to asymmetry, plus ``0.3 * mean(z exp(-z^2 / 2))^2``, a robust
    skewness term (Hyvarinen's odd contrast function), so skewed noises
    (exponential, chi-squared, log-normal...) pin their directions more
    precisely. The true directions are a stationary point of every term.

    With more than ``max_rows`` rows in an environment the ascent runs in
    two stages: first on ``max_rows`` evenly spaced rows per environment (a
    view), then on every row from that point, BFGS starting from the first
    stage's inverse-Hessian estimate. The answer is the all-row maximum as
    before (the second stage stops at the same gradient tolerance), reached
    in a few all-row evaluations instead of the 20 or so a cold start needs
    at n = 10^6 (docs/results/scale.md).

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        Centred reduced data.
    alphas : ndarray (d, d)
        Starting directions, one per column, in the order found.
    max_iter : int, default=300
        BFGS iterations (per stage).
    max_rows : int or None, default=POLISH_MAX_ROWS
        Rows per environment of the first stage; None: one stage on every
        row.

    Returns
    -------
    alphas : ndarray (d, d)
        Unit-norm columns, signs aligned with the start. The start is
        returned unchanged when the ascent breaks down (the directions become
        linearly dependent) or does not increase the contrast.
    info : dict
        ``contrast_start``, ``contrast``, ``iterations``, ``evaluations``
        (of the contrast and its gradient on every row, each ``O(n d^2)``
        per environment), ``kept`` (whether the polished directions replaced
        the start); with two stages also ``"subsample"``: the first stage's
        ``rows`` (per environment), ``iterations`` and ``evaluations``.
    """
    d = alphas.shape[1]
    start = alphas / np.linalg.norm(alphas, axis=0)
    g0 = start.T.ravel()
    scatters = [X.T @ X for X in X_red]
    stacked = _stack_rows(X_red)
    value0, grad0 = _ordered_contrast(g0, X_red, d, scatters, stacked)
    info = {
        "contrast_start": value0, "contrast": value0, "iterations": 0, "evaluations": 1,
        "kept": False,
    }
    if d < 2:
        return start, info
    # Scale to 1 at the start, so that the gradient tolerance means the same
    # thing whatever the noises' non-Gaussianity. (A level much below
    # POLISH_GTOL only ends in line-search precision loss at large n, after
    # many evaluations.)
    scale = max(value0, 1e-12)
    g_start, hess_inv0 = g0, None
    if max_rows is not None and max(x.shape[0] for x in X_red) > max_rows:
        sub = [x[:: -(-x.shape[0] // max_rows)] for x in X_red]
        sub_scatters = [x.T @ x for x in sub]
        first = _ascend(lambda g, data, st: _ordered_contrast(g, data, d, sub_scatters, st),
                        sub, g0, scale, max_iter, None, stacked=_stack_rows(sub))
        if first is not None and np.all(np.isfinite(first.x)):
            g_start, hess_inv0 = first.x, _positive_definite(first.hess_inv)
            info["subsample"] = {
                "rows": [x.shape[0] for x in sub], "iterations": int(first.nit),
                "evaluations": int(first.nfev),
            }
    res = _ascend(lambda g, data, st: _ordered_contrast(g, data, d, scatters, st),
                  X_red, g_start, scale, max_iter, hess_inv0, stacked=stacked,
                  known=(g0, value0, grad0))
    del stacked
    if res is None:
        return start, info
    value = -float(res.fun) * scale
    info["iterations"] = int(res.nit)
    info["evaluations"] = int(res.nfev)
    if not np.all(np.isfinite(res.x)) or not value > value0:
        return start, info
    out = res.x.reshape(d, d).T
    out = out / np.linalg.norm(out, axis=0)
    out = out * np.where(np.sum(out * start, axis=0) < 0, -1.0, 1.0)
    info.update(contrast=value, kept=True)
    return out, info


def _ascend(
    contrast, X_list: list[np.ndarray], g0: np.ndarray, scale: float, max_iter: int,
    hess_inv0: np.ndarray | None, *, stacked: tuple | None = None,
    known: tuple | None = None,
):
    """BFGS ascent of ``contrast(g, X_list, stacked) -> (value, gradient)`` from ``g0``.

    Returns SciPy's result, or None when the contrast raises
    :class:`_SingularDirections` (the directions became linearly dependent).
    ``stacked`` is handed to the contrast (``_stack_rows(X_list)`` or None).
    ``known = (g, value, grad)``: the contrast already computed at ``g``,
    returned instead of recomputed when the optimiser asks for exactly that
    point (its first evaluation, when it starts there).
    """
    # SciPy's optimiser leaves reference cycles that keep the closure alive
    # until the next garbage collection: it sees the data (and their stacked
    # copy) through lists emptied afterwards, so those cycles do not hold them.
    data = list(X_list)
    extra = [stacked]

    def neg(g: np.ndarray) -> tuple[float, np.ndarray]:
        if known is not None and same_point(g, known[0]):
            value, grad = known[1], known[2]
        else:
            value, grad = contrast(g, data, extra[0])
        return -value / scale, -grad / scale

    try:
        with np.errstate(all="ignore"):
            return minimize_bfgs(neg, g0, gtol=POLISH_GTOL, maxiter=max_iter,
                                 hess_inv0=hess_inv0)
    except _SingularDirections:
        return None
    finally:
        data.clear()
        extra.clear()


def _positive_definite(H: np.ndarray) -> np.ndarray:
    """``H`` symmetrised, eigenvalues below ``1e-4`` of the largest raised to it."""
    w, V = np.linalg.eigh((H + H.T) / 2)
    w = np.maximum(w, 1e-4 * max(float(w.max()), 1e-12))
    P = (V * w) @ V.T
    return (P + P.T) / 2


def canonical_directions(
    X_red: list[np.ndarray], alphas: np.ndarray, noises: list[np.ndarray]
) -> np.ndarray:
    """Fix each direction's free part along the earlier directions.

    The noise of position i is the residual of ``X_k @ alphas[:, i]`` on the
    earlier noises, so adding any combination of earlier columns to column
    i changes the entangled feature but not the noise: the ordering step
    leaves that part arbitrary (and the polish moves it freely). The
    pruning statistic is not invariant to it. A feature that carries large
    multiples of earlier features passes their coefficients' estimation
    error, multiplied, into the coefficients of the earlier positions, and
    chains of large weights make such multiples large.

    The canonical choice, made position by position: regress feature i on
    the (already canonical) earlier features in every environment and
    subtract the precision-weighted mean of those coefficient vectors over
    environments (weights ``1 / var_k(noise_i)``). A true non-edge has an
    environment-invariant coefficient in any parametrisation, so it becomes
    zero; an edge's coefficients vary across environments and keep their
    variation. The result does not depend on the start's arbitrary part.

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        Centred reduced data.
    alphas : ndarray (d, d)
        Directions in the order found.
    noises : list of ndarray (n_k, d)
        The noises of those directions (unchanged by this function).

    Returns
    -------
    ndarray (d, d)
        Column i differs from ``alphas[:, i]`` by a combination of the
        earlier columns only, so the noises are exactly those of ``alphas``.
    """
    grams = [x.T @ x for x in X_red]
    noise_var = [np.einsum("ij,ij->j", z, z) / z.shape[0] for z in noises]
    return _canonical(grams, alphas, noise_var)


def _canonical(grams: list[np.ndarray], alphas: np.ndarray, noise_var: list[np.ndarray]):
    """:func:`canonical_directions` from every environment's ``X_k^T X_k`` and noise variances."""
    out = np.array(alphas, dtype=float)
    d = out.shape[1]
    for i in range(1, d):
        mean, total = np.zeros(i), 0.0
        for S, v in zip(grams, noise_var):
            G = out[:, : i + 1].T @ S @ out[:, : i + 1]
            coef = np.linalg.lstsq(G[:i, :i], G[:i, i], rcond=None)[0]
            w = 1.0 / max(float(v[i]), 1e-300)
            mean += w * coef
            total += w
        out[:, i] -= out[:, :i] @ (mean / total)
    return out


def _ordered_noise_maps(
    grams: list[np.ndarray], n_rows: list[int], alphas: np.ndarray
) -> list[np.ndarray]:
    """``T_k`` with ``X_k @ T_k`` = :func:`_ordered_noises`, from ``X_k^T X_k``."""
    maps = []
    for S, n in zip(grams, n_rows):
        L = np.linalg.cholesky(alphas.T @ S @ alphas / n)
        maps.append(alphas @ linalg.solve_triangular(L.T, np.diag(np.diag(L)), lower=False))
    return maps


def _ordered_noises(X_red: list[np.ndarray], alphas: np.ndarray) -> list[np.ndarray]:
    """Noises of every environment: ``X_k @ alphas`` residualised in order."""
    noises = []
    for x in X_red:
        Y = x @ alphas
        L = np.linalg.cholesky(Y.T @ Y / Y.shape[0])
        # Gram-Schmidt residuals in their own scale: Y L^{-T} diag(L).
        noises.append(linalg.solve_triangular(L, Y.T, lower=True).T * np.diag(L))
    return noises


#: Two re-estimated directions of a step count as different when their
#: scores differ by more than this factor (the same direction reached from two
#: starts scores alike up to the descent's tolerance).
DISTINCT_SCORE_RATIO = 1 + 1e-6

#: Close calls ``CREATOR(order_branches="auto")`` branches on, for numbers of
#: latents in :data:`AUTO_BRANCH_LATENTS`.
AUTO_ORDER_BRANCHES = 2

#: The numbers of latents (inclusive range) at which ``order_branches="auto"``
#: branches, given at least as many environments as latents: two branches
#: lowered the mean SHD on fresh simulated data at d = K = 7, 10 and 15, did
#: not help at d = 5, mended nothing at d = K = 20 (tuning data), where a fit's
#: time matters most, and changed nothing on average with fewer environments
#: than latents (d = 10, K = 4 and 6; tuning data).
AUTO_BRANCH_LATENTS = (7, 15)


def close_calls(steps: list[dict]) -> list[tuple[float, int, int]]:
    """The steps whose choice between different re-estimated directions was closest.

    Parameters
    ----------
    steps : list of dict
        :attr:`OrderingResult.steps`.

    Returns
    -------
    list of (ratio, step, rank)
        For every step with at least two re-estimated directions whose
        scores differ (by more than :data:`DISTINCT_SCORE_RATIO`): the ratio
        of the best different direction's score to the winner's, the step,
        and that direction's rank among the step's scores (0 the winner), the
        closest call first. ``topological_ordering(step_choices={step:
        rank})`` takes the other way at that step.
    """
    calls = []
    for st in steps:
        scores = np.sort(np.asarray(st.get("refined_scores") or [], dtype=float))
        if scores.size < 2 or not scores[0] > 0:
            continue
        other = np.flatnonzero(scores > scores[0] * DISTINCT_SCORE_RATIO)
        if other.size:
            calls.append((float(scores[other[0]] / scores[0]), int(st["step"]), int(other[0])))
    return sorted(calls)


def topological_ordering(
    X_red: list[np.ndarray],
    *,
    scorer: str = "ica_consistency",
    random_state: int | np.random.Generator | None = None,
    ica_max_iter: int = 400,
    ica_tol: float = 1e-5,
    ica_fun: str = "logcosh",
    scorer_options: dict | None = None,
    n_refine: int = 3,
    refine_min_sources: int = 4,
    polish: bool = True,
    descend: bool = True,
    canonical: bool = True,
    measurement_basis: np.ndarray | None = None,
    materialize: bool = True,
    reload=None,
    step_choices: dict | None = None,
) -> OrderingResult:
    """Recover a topological order, the noises and the entangled features.

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        Centred, reduced data of the K environments (same coordinates).
    scorer : {"ica_consistency", "hsic", "hsic_rff"}
        Candidate score (see :mod:`creator_plugin.independence`).
    random_state : int, Generator or None
        Seeds the ICA fits and any randomised scorer.
    ica_max_iter, ica_tol, ica_fun
        Passed to :class:`sklearn.decomposition.FastICA`.
    scorer_options : dict, optional
        Extra keyword arguments for the scorer.
    n_refine : int, default=3
        Re-estimate the ``n_refine`` best-scored candidates that extract
        different sources from all environments jointly
        (:func:`joint_direction`), score the re-estimated directions with
        the same scorer and keep the best. With ``scorer="ica_consistency"``
        and ``descend=True``, a re-estimate whose closest ICA source differs
        from its start's in some environment and which scores worse than its
        start is replaced by the start (:func:`_keep_sources`; recorded as the
        step's ``kept_starts``). ``0`` runs the paper's step unchanged (the
        best raw candidate wins). With ``n_refine > 0`` the
        candidates are only starts, so FastICA proposes them from at most
        :data:`ICA_MAX_ROWS` evenly spaced rows per environment; scores,
        refinement and polish use every row.
    refine_min_sources : int, default=4
        Re-estimate jointly only at the first step and at steps with at
        least this many sources left; at the other steps the best-scored
        start (raw or descended candidate) is kept as it is. 2 re-estimates
        at every step but the last (which has one source); with three or two
        sources left that cost about a tenth of a d = 5 fit for no gain in
        accuracy. The first step is always re-estimated: the directions
        found there shape every later residual, and with ill-conditioned
        data the starts alone leave enough of the first source in them to
        spoil the next step's candidates.
    polish : bool, default=True
        Once the order is found, re-estimate all directions jointly
        (:func:`polish_directions`) and recompute the noises from them. The
        order and the per-step diagnostics are not changed.
    descend : bool, default=True
        With ``scorer="ica_consistency"`` and ``n_refine > 0``: before the
        refinement, minimise the consistency score from every candidate
        (:func:`consistency_descent`) and choose the refinement's starts
        among the raw and the descended directions.
    canonical : bool, default=True
        Return the directions in canonical form
        (:func:`canonical_directions`); the noises are unchanged, the
        entangled features and so the pruning's coefficients change.
    measurement_basis : ndarray (d, p), optional
        Map from the reduced coordinates back to the measurements, for the
        ``"hsic"`` scorer (the paper scores residuals measurement by
        measurement).
    materialize : bool, default=True
        Return the noises and entangled features as arrays. With False only
        their maps (``noise_maps``, ``alphas``) are returned, which the
        caller applies to ``X_red`` when and where it has room (the fit does
        so in place).
    reload : callable, optional
        ``reload(k)`` returns ``X_red[k]`` afresh (the fit projects the data
        again). When given, the list ``X_red`` and its arrays are the
        search's work space: the arrays are overwritten with each step's
        residuals (updated in place, so no second ``(n_k, d)`` array per
        environment exists during the search) and the list's entries are
        replaced by ``reload(k)`` afterwards. Only for callers that own
        ``X_red``.
    step_choices : dict, optional
        ``{step: rank}``: at that step take the re-estimated direction whose
        score ranks ``rank`` (0 the best) instead of the best, when the step
        has that many (an alternative order, for comparing final models).

    Returns
    -------
    OrderingResult
    """
    if scorer not in SCORERS:
        raise ValueError(f"scorer must be one of {sorted(SCORERS)}, got {scorer!r}.")
    score_fn = SCORERS[scorer]
    rng = np.random.default_rng(random_state)
    d = X_red[0].shape[1]
    K = len(X_red)
    # Every noise is X_k @ T_k[:, i]: the residuals come from d x d moments,
    # and no (n_k, d) array of noises exists during the search.
    grams = [x.T @ x for x in X_red]
    n_rows = [x.shape[0] for x in X_red]
    maps = [np.zeros((d, d)) for _ in X_red]
    alphas = np.zeros((d, d))
    steps = []
    not_converged = 0
    for i in range(d):
        m = d - i
        residual_maps = [_residual_map(S, T[:, :i]) for S, T in zip(grams, maps)]
        if reload is not None:
            # X_red's arrays hold this step's residuals already.
            residual_maps_used = [None] * K
        else:
            residual_maps_used = residual_maps
        ica_dirs = []
        # One environment's residuals at a time next to FastICA's copies of
        # them; all environments' only afterwards, for the scores. With the
        # refinement the ICA's directions are only starts (scored, refined and
        # polished on every row), so FastICA sees at most ICA_MAX_ROWS evenly
        # spaced rows (a view).
        for x, P in zip(X_red, residual_maps_used):
            if n_refine > 0:
                x = x[:: -(-x.shape[0] // ICA_MAX_ROWS)]
            dirs, ok = ica_directions(
                x if P is None else x @ P, m, random_state=draw_seed(rng),
                max_iter=ica_max_iter, tol=ica_tol, fun=ica_fun,
            )
            not_converged += not ok
            ica_dirs.append(dirs)
        R_list = [x if P is None else x @ P for x, P in zip(X_red, residual_maps_used)]
        candidates = np.hstack(ica_dirs)
        score_options = {"rng": rng, "basis": measurement_basis, **(scorer_options or {})}
        scores = score_fn(R_list, candidates, ica_dirs, **score_options)
        # Ties up to rounding (e.g. the last step, where every candidate extracts
        # the same rank-one residual) go to the first candidate, so results do
        # not hinge on floating-point noise.
        best = int(np.flatnonzero(scores <= scores.min() + 1e-9 * max(1.0, scores.min()))[0])
        alpha = candidates[:, best]
        refined = None
        if n_refine > 0 and m > 1:
            # Pool of starts: the raw candidates, then (index + K m) the
            # minima of the consistency score reached from each of them.
            pool, pool_scores = candidates, scores
            if descend and scorer == "ica_consistency":
                descended, descended_scores = consistency_descent(
                    R_list, ica_dirs, candidates, max_iter=DESCENT_MAX_ITER, tol=DESCENT_TOL)
                pool = np.hstack([candidates, descended])
                pool_scores = np.concatenate([scores, descended_scores])
            starts = _distinct_best(R_list, pool, pool_scores, n_refine)
            found = alphas[:, :i]
            if m >= refine_min_sources or i == 0:
                stacked = _stack_rows(R_list)
                joint = [joint_direction(R_list, pool[:, c], found, stacked=stacked)
                         for c in starts]
                del stacked
            else:  # the starts as they are, re-scored like re-estimated ones
                joint = [(pool[:, c] / np.linalg.norm(pool[:, c]), 1.0) for c in starts]
            directions = np.column_stack([w for w, _ in joint])
            kept_starts = []
            if (scorer == "ica_consistency" and descend
                    and (m >= refine_min_sources or i == 0)):
                # the rule scores the directions already (the same scorer)
                directions, kept_starts, refined_scores = _keep_sources(
                    R_list, ica_dirs, pool[:, starts], directions)
            else:
                refined_scores = score_fn(R_list, directions, ica_dirs, **score_options)
            win = int(np.argmin(refined_scores))
            rank = (step_choices or {}).get(i, 0)
            if 0 < rank < len(refined_scores):
                win = int(np.argsort(refined_scores, kind="stable")[rank])
            best, alpha = starts[win] % candidates.shape[1], directions[:, win]
            refined = {
                "refined_from": starts,
                "refined_scores": refined_scores.tolist(),
                "refined_chosen": win,
                "joint_corr2": [c2 for _, c2 in joint],
            }
            if pool is not candidates:
                refined["descended_scores"] = descended_scores.tolist()
            if kept_starts:
                refined["kept_starts"] = kept_starts
        alphas[:, i] = alpha
        for T, P in zip(maps, residual_maps):
            T[:, i] = alpha if P is None else P @ alpha
        ranked = np.sort(scores)
        steps.append(
            {
                "step": i,
                "scores": scores.tolist(),
                "candidate_environment": np.repeat(np.arange(K), m).tolist(),
                "chosen": best,
                "best_score": float(ranked[0]),
                "runner_up_gap": float(ranked[1] - ranked[0]) if ranked.size > 1 else None,
                **(refined or {}),
            }
        )
        if reload is not None and i + 1 < d:
            # Next step's residuals in place: R - z (z^T z)^{-1} z^T R with
            # z = R alpha (z is orthogonal to the earlier noises already).
            for R in R_list:
                Sr = R.T @ R
                Q = np.eye(d) - np.outer(alpha, alpha @ Sr) / max(float(alpha @ Sr @ alpha),
                                                                  1e-300)
                for rows in row_blocks(R.shape[0], d):
                    R[rows] = R[rows] @ Q
        # n x d per environment: freed before the next step builds its own
        # residuals, and not needed by the polish.
        del R_list
    if reload is not None:
        for k in range(K):
            X_red[k] = None  # frees the work space before its replacement exists
            X_red[k] = reload(k)
    polish_info = None
    if polish:
        polished, polish_info = polish_directions(X_red, alphas)
        if polish_info["kept"]:
            alphas = polished
            maps = _ordered_noise_maps(grams, n_rows, alphas)
    if canonical:
        noise_var = [np.einsum("ij,ik,kj->j", T, S, T) / n
                     for T, S, n in zip(maps, grams, n_rows)]
        alphas = _canonical(grams, alphas, noise_var)
    noises = entangled = None
    if materialize:
        noises = [x @ T for x, T in zip(X_red, maps)]
        entangled = [x @ alphas for x in X_red]
    return OrderingResult(alphas, noises, entangled, steps, not_converged, polish_info, maps)
