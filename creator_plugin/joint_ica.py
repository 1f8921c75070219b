"""The joint-ICA optimisation: source directions re-estimated from all environments at once.

The paper's ordering step (:mod:`creator_plugin.ordering`) takes, at every
step, the best of the ICA directions each environment proposes on its own.
Every environment sees the same source directions, so they can be estimated
from all environments together. This module holds those estimates:

* :func:`consistency_descent` -- minima of the ICA-consistency score from
  every candidate, which combine the environments' ICA estimates;
* :func:`joint_direction` -- one step's direction by a BFGS ascent of the
  summed negentropy of all environments, with the Gaussian guard
  (:func:`looks_gaussian`) and :func:`keep_sources`, which undoes an ascent
  that left its start's source and scores worse;
* :func:`polish_directions` -- all directions at once, the order kept, by a
  BFGS ascent of a negentropy contrast of the ordered noises (the contrast is
  pluggable: the measurement-noise correction supplies its own).
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, linalg, stats

from ._bfgs import minimize_bfgs, same_point
from ._passes import row_blocks, scratch_array
from .independence import ica_consistency_sources

__all__ = [
    "DESCENT_BLOCK_ELEMENTS",
    "DESCENT_EINSUM_MAX",
    "DESCENT_MAX_ITER",
    "DESCENT_TOL",
    "GAUSS_EXCESS_LEVEL",
    "GAUSS_EXCESS_SD",
    "GAUSS_LOGCOSH",
    "JOINT_GTOL",
    "POLISH_GTOL",
    "POLISH_MAX_ROWS",
    "SKEW_WEIGHT",
    "STACK_ELEMENTS",
    "OrderedContrast",
    "SingularDirections",
    "cholesky_gradient",
    "consistency_descent",
    "joint_direction",
    "keep_sources",
    "looks_gaussian",
    "polish_directions",
    "stack_rows",
]

# E[log cosh(nu)] for a standard normal nu: the Gaussian reference of the
# log-cosh negentropy approximation.
GAUSS_LOGCOSH = integrate.quad(
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
SKEW_WEIGHT = 0.3

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

#: :func:`consistency_descent` descends its starts in blocks whose largest
#: temporaries (``s K d``, ``s K m`` and ``s d^2`` numbers for s starts) hold
#: at most about this many numbers each (16 MB): all ``K m`` starts of a
#: first step at once would be d^4 numbers per array, 800 MB at d = 100.
#: Every start descends on its own, so blocks reach each start's minimum, to
#: rounding (a product of one row is a BLAS matrix-vector product, which
#: rounds differently). Up to d = 28 at K = d a first step is one block.
DESCENT_BLOCK_ELEMENTS = 2**21


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
    iteration, for a block of starts at once, reassigns the closest directions and
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

    def descend(a: np.ndarray) -> np.ndarray:  # starts (s, d) descended in place; scores
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
            new, new_score, accepted = _backtrack(x, step, score[active], slope, correlations)
            moved = np.abs(new - x).max(axis=1)
            a[active], score[active] = new, new_score
            Sa, q, closest, f = evaluate(a)
            active = active[accepted & (moved >= tol)]
        return score

    a = (starts / np.linalg.norm(starts, axis=0)).T  # (s, d)
    block = max(1, DESCENT_BLOCK_ELEMENTS // (K * (d + m) + d * d))  # starts per block
    score = np.concatenate([descend(a[lo: lo + block]) for lo in range(0, max(len(a), 1), block)])
    # Starts that reach the same minimum must give the same direction, sign
    # included, whichever of them the caller picks: largest entry positive.
    a *= np.sign(a[np.arange(a.shape[0]), np.argmax(np.abs(a), axis=1)])[:, None]
    return a.T.copy(), score


def _backtrack(x: np.ndarray, step: np.ndarray, score: np.ndarray, slope: np.ndarray,
               correlations) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`consistency_descent`'s line search: quarter every start's step until it
    decreases the score enough (Armijo, 12 tries at most).

    Returns the new directions (the old ones where no step was accepted),
    their scores and which starts accepted a step.
    """
    t = np.ones(x.shape[0])
    accepted = np.zeros(x.shape[0], dtype=bool)
    new, new_score = x.copy(), score.copy()
    for _ in range(12):
        trial = x + t[:, None] * step
        trial /= np.linalg.norm(trial, axis=1, keepdims=True)
        # Scores only: the same arithmetic as evaluate's, without the indices.
        trial_score = (1.0 - np.minimum(correlations(trial)[2].max(axis=2), 1.0)).sum(axis=1)
        ok = ~accepted & (trial_score <= score + 2e-4 * t * slope)
        new[ok], new_score[ok] = trial[ok], trial_score[ok]
        accepted |= ok
        if accepted.all():
            break
        t = np.where(accepted, t, t / 4)
    return new, new_score, accepted


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
        excess = float(np.mean(a + np.log1p(np.exp(-2.0 * a)))) - np.log(2.0) - GAUSS_LOGCOSH
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
        ``stack_rows(R_list)``, when the caller re-uses it across calls
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
        stacked = stack_rows(R_list)
    release = None
    if stacked is not None:
        neg_objective = _stacked_logcosh_objective(stacked, basis, np.stack(S))
    else:
        neg_objective, release = _blocked_logcosh_objective(data, basis, S)

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
    if release is not None:
        release()
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


def _blocked_logcosh_objective(R_list: list[np.ndarray], basis: np.ndarray, S: list):
    """:func:`joint_direction`'s objective read one block of rows at a time, and a
    function that frees what it keeps.

    The blocks of rows of every environment and arrays for the elementwise
    terms are made once for the ascent (the same numbers as fresh ones at
    every evaluation, without their allocations). An optimiser can leave
    reference cycles that keep the objective alive after the ascent; the
    release empties what it holds (views of the data, arrays of a block's
    size) at once.
    """
    d = basis.shape[0]
    blocks = [(s, R.shape[0], [R[rows] for rows in row_blocks(R.shape[0], d)])
              for R, s in zip(R_list, S)]
    rows_max = max(Rb.shape[0] for *_, parts in blocks for Rb in parts)
    work = [np.empty(rows_max) for _ in range(4)]
    log2 = np.log(2.0)

    def neg_objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        t_all, *terms_all = work
        value, grad = 0.0, np.zeros_like(v)
        for s, n, parts in blocks:
            sv = s @ v
            var = v @ sv
            w = basis @ v / np.sqrt(var)
            # One pass over blocks of rows: the data are read once per evaluation.
            log_cosh, gt, gR = 0.0, 0.0, np.zeros(d)
            for Rb in parts:
                size = Rb.shape[0]
                t = np.matmul(Rb, w, out=t_all[:size])
                lc, g = _logcosh_terms(t, out=[b[:size] for b in terms_all])
                log_cosh += float(np.sum(lc))
                gt += float(g @ t)
                gR += g @ Rb
            excess = log_cosh / n - log2 - GAUSS_LOGCOSH
            d_mean = basis.T @ gR / (n * np.sqrt(var)) - gt / n * sv / var
            value += excess**2
            grad += 2.0 * excess * d_mean
        return -value, -grad

    def release() -> None:
        blocks.clear()
        work.clear()

    return neg_objective, release


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


def keep_sources(
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


def stack_rows(R_list: list[np.ndarray]) -> _Stacked | None:
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
    offset = np.log(2.0) + GAUSS_LOGCOSH
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


class SingularDirections(Exception):
    """The directions stopped spanning the reduced space during the polish."""


def _ordered_contrast(
    g: np.ndarray, X_red: list[np.ndarray], d: int, scatters: list[np.ndarray],
    stacked: tuple | None = None, work: dict | None = None,
) -> tuple[float, np.ndarray]:
    """The polish's contrast of all ordered noises, and its gradient.

    ``G = g.reshape(d, d)`` holds one direction per row. In environment k the
    entangled features are ``Y = X_k G^T`` and the noises are their
    Gram-Schmidt residuals in the order of the rows, standardised:
    ``Z = Y L^{-T}`` with ``L`` the Cholesky factor of ``Y^T Y / n``. Every
    noise contributes its squared log-cosh excess plus ``SKEW_WEIGHT``
    times the square of ``mean(z exp(-z^2 / 2))`` (zero for a Gaussian and
    for any symmetric law). The gradient back-propagates through the
    Cholesky factorisation (Murray, 2016, "Differentiation of the Cholesky
    decomposition"). ``scatters[k]`` is ``X_k^T X_k``, which does not depend
    on ``g``. ``stacked`` (``stack_rows(X_red)``) evaluates the row sums
    of all environments in one pass over the stacked rows; otherwise the
    environments are read one block of rows at a time, the elementwise terms
    written into the arrays of ``work`` when given (kept across evaluations,
    the same numbers).
    """
    G = g.reshape(d, d)
    eye = np.eye(d)
    factors = []
    for X, S in zip(X_red, scatters):
        n = X.shape[0]
        try:
            L = np.linalg.cholesky(G @ S @ G.T / n)
        except np.linalg.LinAlgError:
            raise SingularDirections from None
        Linv = linalg.solve_triangular(L, eye, lower=True)
        factors.append((n, L, Linv, G.T @ Linv.T))  # Z = X M, M the last entry
    if stacked is not None:
        sums = _contrast_sums_stacked(stacked, [f[3] for f in factors])
    else:
        sums = [_contrast_sums(X, f[3], work) for X, f in zip(X_red, factors)]
    value, grad = 0.0, np.zeros((d, d))
    for (n, L, Linv, _), S, (log_cosh, skew, tanh_x, odd_x) in zip(factors, scatters, sums):
        excess = log_cosh / n - np.log(2.0) - GAUSS_LOGCOSH
        skew = skew / n
        value += float(excess @ excess) + SKEW_WEIGHT * float(skew @ skew)
        DtX = ((2.0 * excess / n)[:, None] * tanh_x
               + (2.0 * SKEW_WEIGHT * skew / n)[:, None] * odd_x)
        grad += cholesky_gradient(L, Linv, DtX, G, S, n)
    return value, grad.ravel()


def cholesky_gradient(L: np.ndarray, Linv: np.ndarray, DtX: np.ndarray, G: np.ndarray,
                      S: np.ndarray, n: int) -> np.ndarray:
    """Gradient over ``G`` of a contrast of the ordered noises ``Z = X G^T L^{-T}``.

    ``L`` is the Cholesky factor of ``G S G^T / n`` (``S = X^T X``, or its
    signal part), ``Linv`` its inverse and ``DtX`` the contrast's derivative
    over ``Z``, times ``X`` (``dJ/dZ^T X``). The direct term, then the
    back-propagation through the factorisation (Murray, 2016,
    "Differentiation of the Cholesky decomposition").
    """
    Lbar = np.tril(-(Linv.T @ (DtX @ G.T) @ Linv.T))
    P = np.tril(L.T @ Lbar)
    P[np.diag_indices(G.shape[0])] *= 0.5
    Sbar = Linv.T @ P @ Linv
    return Linv.T @ DtX + (Sbar + Sbar.T) / n @ G @ S


class OrderedContrast:
    """The polish's contrast (:func:`_ordered_contrast`) of the data it is called on.

    :func:`polish_directions` calls ``contrast(g, X_list, stacked)`` for the
    value and gradient at ``g`` (``stacked``: ``stack_rows(X_list)`` when
    :attr:`stacks`, else None) and ``contrast.subsample(sub, X_list)`` for the
    contrast of a subsample ``sub`` of the rows. Another contrast of the
    ordered noises (the measurement-noise correction's) has the same form.

    Parameters
    ----------
    X_list : list of ndarray (n_k, d)
        The data the contrast reads (its scatters ``X_k^T X_k`` are formed here).
    """

    #: Whether the contrast reads the environments stacked (:func:`stack_rows`).
    stacks = True

    def __init__(self, X_list: list[np.ndarray]):
        self.scatters = [X.T @ X for X in X_list]
        self.work = {}  # the per-environment pass's temporaries, kept for the ascent

    def __call__(self, g: np.ndarray, X_list: list[np.ndarray], stacked) -> tuple:
        return _ordered_contrast(g, X_list, self.scatters[0].shape[0], self.scatters, stacked,
                                 self.work)

    def subsample(self, sub: list[np.ndarray], X_list: list[np.ndarray]) -> OrderedContrast:
        """The contrast of the rows ``sub`` (evenly spaced rows of ``X_list``)."""
        return OrderedContrast(sub)


def _contrast_sums(X: np.ndarray, M: np.ndarray, work: dict | None = None) -> tuple:
    """Row sums of one environment for :func:`_ordered_contrast` (``Z = X M``).

    ``sum log(2 cosh Z)``, ``sum Z exp(-Z^2 / 2)`` (per column) and
    ``tanh(Z)^T X``, ``((1 - Z^2) exp(-Z^2 / 2))^T X``. With ``work`` (a
    dict kept by the caller) the block's temporaries are written into arrays
    kept there (:func:`creator_plugin._passes.scratch_array`): at d = 40 a
    polish evaluation took half the time that way, the same numbers.
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
        if work is None:
            lc, ZE, th, odd = _contrast_terms(Xb @ M)
        else:
            size = (rows.stop - rows.start, d)
            Z, *out = (scratch_array(work, ("sums", i), size) for i in range(6))
            lc, ZE, th, odd = _contrast_terms(np.matmul(Xb, M, out=Z), out)
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
    max_rows: int | None = POLISH_MAX_ROWS, contrast=None,
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
    contrast : OrderedContrast-like, optional
        The contrast ascended (:class:`OrderedContrast` of ``X_red`` by
        default; the measurement-noise correction passes
        :class:`creator_plugin.refine.measurement_noise.SignalContrast`).

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
    contrast = OrderedContrast(X_red) if contrast is None else contrast
    stacked = stack_rows(X_red) if contrast.stacks else None
    value0, grad0 = contrast(g0, X_red, stacked)
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
    # The dense inverse Hessian is kept while it takes no more memory than the
    # float64 data (d^2 <= the rows per environment at K = d); beyond that the
    # limited-memory form runs (creator_plugin._bfgs.minimize_bfgs).
    dense_bytes = 8.0 * sum(x.size for x in X_red)
    g_start, hess_inv0, contrasts = g0, None, [contrast]
    if max_rows is not None and max(x.shape[0] for x in X_red) > max_rows:
        sub = [x[:: -(-x.shape[0] // max_rows)] for x in X_red]
        part = contrast.subsample(sub, X_red)
        contrasts.append(part)
        first = _ascend(part, sub, g0, scale, max_iter, None,
                        stacked=stack_rows(sub) if part.stacks else None,
                        max_dense_bytes=dense_bytes)
        if first is not None and np.all(np.isfinite(first.x)):
            g_start = first.x
            if first.hess_inv is not None:
                hess_inv0 = _positive_definite(first.hess_inv)
            info["subsample"] = {
                "rows": [x.shape[0] for x in sub], "iterations": int(first.nit),
                "evaluations": int(first.nfev),
            }
    res = _ascend(contrast, X_red, g_start, scale, max_iter, hess_inv0, stacked=stacked,
                  known=(g0, value0, grad0), max_dense_bytes=dense_bytes)
    del stacked
    for used in contrasts:  # the ascent's kept arrays go with it
        getattr(used, "work", {}).clear()
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
    known: tuple | None = None, max_dense_bytes: float | None = None,
):
    """BFGS ascent of ``contrast(g, X_list, stacked) -> (value, gradient)`` from ``g0``.

    Returns SciPy's result, or None when the contrast raises
    :class:`SingularDirections` (the directions became linearly dependent).
    ``stacked`` is handed to the contrast (``stack_rows(X_list)`` or None).
    ``known = (g, value, grad)``: the contrast already computed at ``g``,
    returned instead of recomputed when the optimiser asks for exactly that
    point (its first evaluation, when it starts there). ``max_dense_bytes``:
    :func:`creator_plugin._bfgs.minimize_bfgs`'s bound on the dense inverse Hessian.
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
                                 hess_inv0=hess_inv0, max_dense_bytes=max_dense_bytes)
    except SingularDirections:
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
