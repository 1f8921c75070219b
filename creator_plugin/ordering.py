"""Step 1: topological ordering, exogenous noises and entangled features.

The paper's loop (:func:`topological_ordering`): at step i, FastICA in every
environment proposes candidate directions for the residuals of the data on
the noises found so far (:func:`ica_directions`); the scorer
(:mod:`creator_plugin.independence`) picks the candidate that is the most
consistent source across environments; its noise is taken out of the
residuals. With ``n_reestimate > 0`` the best candidates are re-estimated from
all environments at once and, once the order is found, every direction is
polished jointly (:mod:`creator_plugin.joint_ica`); the result is returned
in a canonical form (:func:`canonical_directions`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from ._lapack import eigh_syevr as _eigh
from ._passes import row_blocks
from ._random import draw_seed
from .independence import SCORERS
from .joint_ica import (
    DESCENT_MAX_ITER,
    DESCENT_TOL,
    consistency_descent,
    joint_direction,
    keep_sources,
    polish_directions,
    stack_rows,
)

__all__ = [
    "ICA_MAX_ROWS",
    "OrderingResult",
    "canonical_directions",
    "canonical_from_moments",
    "fastica_logcosh",
    "ica_directions",
    "ordered_noise_maps",
    "ordered_noises",
    "topological_ordering",
]

#: Rows FastICA proposes candidate directions from when the refinement
#: re-estimates them on every row (``n_reestimate > 0``): at most this many
#: per environment and, evenly spaced in every environment, about this many
#: in all (a bound on the candidates' cost, which grows with the environments:
#: K FastICA fits a step).
ICA_MAX_ROWS = 100_000



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
        unmixing, converged = fastica_logcosh(
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


def fastica_logcosh(
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
    # The (m, n) products and their tanh are written into arrays kept for the
    # whole iteration (the same numbers as fresh ones, without allocating and
    # faulting in two such arrays per iteration).
    square = np.empty((W.shape[0], XT.shape[1]))
    product = np.empty((W.shape[0], XT.shape[1]))
    for _ in range(max_iter):
        gwtx = np.tanh(np.matmul(W, XT, out=product), out=product)
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
    # Pooled Gram matrix once: every correlation below is a d x d computation,
    # made only for the candidates visited and against the picked ones. (All
    # pairs of the first step's 2 K m starts would be a 20,000 x 20,000
    # matrix at d = 100: 3.2 GB, and three temporaries of its size.)
    sigma = sum(R.T @ R for R in R_list)
    picked: list[int] = []
    picked_sd: list[float] = []
    for c in np.argsort(scores, kind="stable"):
        a_sigma = candidates[:, c] @ sigma
        sd = np.sqrt(max(float(a_sigma @ candidates[:, c]), 1e-300))
        if picked:
            cov = a_sigma @ candidates[:, picked]
            if float(((cov / (sd * np.array(picked_sd))) ** 2).max()) >= max_corr2:
                continue
        picked.append(int(c))
        picked_sd.append(sd)
        if len(picked) == n:
            break
    return picked


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
    return canonical_from_moments(grams, alphas, noise_var)


def canonical_from_moments(grams: list[np.ndarray], alphas: np.ndarray,
                           noise_var: list[np.ndarray]) -> np.ndarray:
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


def ordered_noise_maps(
    grams: list[np.ndarray], n_rows: list[int], alphas: np.ndarray
) -> list[np.ndarray]:
    """``T_k`` with ``X_k @ T_k`` = :func:`ordered_noises`, from ``X_k^T X_k``."""
    maps = []
    for S, n in zip(grams, n_rows):
        L = np.linalg.cholesky(alphas.T @ S @ alphas / n)
        maps.append(alphas @ linalg.solve_triangular(L.T, np.diag(np.diag(L)), lower=False))
    return maps


def ordered_noises(X_red: list[np.ndarray], alphas: np.ndarray) -> list[np.ndarray]:
    """Noises of every environment: ``X_k @ alphas`` residualised in order."""
    noises = []
    for x in X_red:
        Y = x @ alphas
        L = np.linalg.cholesky(Y.T @ Y / Y.shape[0])
        # Gram-Schmidt residuals in their own scale: Y L^{-T} diag(L).
        noises.append(linalg.solve_triangular(L, Y.T, lower=True).T * np.diag(L))
    return noises


def topological_ordering(
    X_red: list[np.ndarray],
    *,
    scorer: str = "ica_consistency",
    random_state: int | np.random.Generator | None = None,
    ica_max_iter: int = 400,
    ica_tol: float = 1e-5,
    ica_fun: str = "logcosh",
    scorer_options: dict | None = None,
    n_reestimate: int = 3,
    reestimate_min_sources: int = 4,
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
        FastICA's settings (:func:`ica_directions`).
    scorer_options : dict, optional
        Extra keyword arguments for the scorer.
    n_reestimate : int, default=3
        Re-estimate the ``n_reestimate`` best-scored candidates that extract
        different sources from all environments jointly (:func:`_reestimate`)
        and keep the best re-estimate; ``0`` runs the paper's step unchanged
        (the best raw candidate wins). With ``n_reestimate > 0`` FastICA proposes
        the candidates from evenly spaced rows (:data:`ICA_MAX_ROWS`); the rest uses every row.
    reestimate_min_sources : int, default=4
        Re-estimate jointly only at the first step and at steps with at
        least this many sources left; elsewhere the best-scored start is
        kept as it is (with three or two sources left the re-estimation
        cost about a tenth of a d = 5 fit for no gain in accuracy).
    polish : bool, default=True
        Once the order is found, re-estimate all directions jointly
        (:func:`polish_directions`) and recompute the noises from them. The
        order and the per-step diagnostics are not changed.
    descend : bool, default=True
        With ``scorer="ica_consistency"`` and ``n_reestimate > 0``: minimise the
        consistency score from every candidate first (:func:`consistency_descent`)
        and choose the starts among the raw and the descended directions.
    canonical : bool, default=True
        Return the directions in canonical form (:func:`canonical_directions`;
        the noises are unchanged, the entangled features are not).
    measurement_basis : ndarray (d, p), optional
        Map from the reduced coordinates back to the measurements, for the
        ``"hsic"`` scorer (which scores residuals measurement by measurement).
    materialize : bool, default=True
        Return the noises and entangled features as arrays; with False only
        their maps (``noise_maps``, ``alphas``), which the caller applies.
    reload : callable, optional
        ``reload(k)`` returns ``X_red[k]`` afresh. When given, the list
        ``X_red`` and its arrays are the search's work space (overwritten with
        each step's residuals in place, so no second ``(n_k, d)`` array per
        environment exists), its entries replaced by ``reload(k)`` afterwards.
        Only for callers that own ``X_red``.
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
    rng = np.random.default_rng(random_state)
    d = X_red[0].shape[1]
    K = len(X_red)
    # Every noise is X_k @ T_k[:, i]: the residuals come from d x d moments,
    # and no (n_k, d) array of noises exists during the search.
    grams = [x.T @ x for x in X_red]
    n_rows = [x.shape[0] for x in X_red]
    maps = [np.zeros((d, d)) for _ in X_red]
    alphas = np.zeros((d, d))
    settings = {
        "scorer": scorer, "ica": {"max_iter": ica_max_iter, "tol": ica_tol, "fun": ica_fun},
        "score_options": {"rng": rng, "basis": measurement_basis, **(scorer_options or {})},
        "n_reestimate": n_reestimate, "reestimate_min_sources": reestimate_min_sources,
        "descend": descend,
        "step_choices": step_choices or {}, "in_place": reload is not None,
    }
    steps = []
    not_converged = 0
    for i in range(d):
        step, misses = _ordering_step(X_red, grams, maps, alphas, i, rng, settings)
        steps.append(step)
        not_converged += misses
    if reload is not None:
        for k in range(K):
            X_red[k] = None  # frees the work space before its replacement exists
            X_red[k] = reload(k)
    polish_info = None
    if polish:
        polished, polish_info = polish_directions(X_red, alphas)
        if polish_info["kept"]:
            alphas = polished
            maps = ordered_noise_maps(grams, n_rows, alphas)
    if canonical:
        noise_var = [np.einsum("ij,ik,kj->j", T, S, T) / n
                     for T, S, n in zip(maps, grams, n_rows)]
        alphas = canonical_from_moments(grams, alphas, noise_var)
    noises = entangled = None
    if materialize:
        noises = [x @ T for x, T in zip(X_red, maps)]
        entangled = [x @ alphas for x in X_red]
    return OrderingResult(alphas, noises, entangled, steps, not_converged, polish_info, maps)


def _ordering_step(X_red: list[np.ndarray], grams: list[np.ndarray], maps: list[np.ndarray],
                   alphas: np.ndarray, i: int, rng: np.random.Generator,
                   settings: dict) -> tuple[dict, int]:
    """Step ``i`` of :func:`topological_ordering`: the step's direction and its record.

    Writes the direction into ``alphas[:, i]`` and its noise maps into
    ``maps[k][:, i]``; with ``settings["in_place"]`` the arrays of ``X_red``
    hold the step's residuals and are updated to the next step's. Returns the
    step's diagnostics and the number of FastICA fits that did not converge.
    """
    d, K = alphas.shape[0], len(X_red)
    m = d - i
    residual_maps = [_residual_map(S, T[:, :i]) for S, T in zip(grams, maps)]
    # With in-place residuals X_red's arrays hold this step's residuals already.
    residual_maps_used = [None] * K if settings["in_place"] else residual_maps
    ica_dirs = []
    not_converged = 0
    # One environment's residuals at a time next to FastICA's copies of
    # them; all environments' only afterwards, for the scores. With the
    # refinement the ICA's directions are only starts (scored, refined and
    # polished on every row), so FastICA sees evenly spaced rows (a view), at
    # most ICA_MAX_ROWS per environment and about as many in all.
    every = -(-sum(x.shape[0] for x in X_red) // ICA_MAX_ROWS)
    for x, P in zip(X_red, residual_maps_used):
        if settings["n_reestimate"] > 0:
            x = x[:: max(-(-x.shape[0] // ICA_MAX_ROWS), every)]
        dirs, ok = ica_directions(
            x if P is None else x @ P, m, random_state=draw_seed(rng), **settings["ica"])
        not_converged += not ok
        ica_dirs.append(dirs)
    R_list = [x if P is None else x @ P for x, P in zip(X_red, residual_maps_used)]
    candidates = np.hstack(ica_dirs)
    scores = SCORERS[settings["scorer"]](R_list, candidates, ica_dirs,
                                         **settings["score_options"])
    # Ties up to rounding (e.g. the last step, where every candidate extracts
    # the same rank-one residual) go to the first candidate, so results do
    # not hinge on floating-point noise.
    best = int(np.flatnonzero(scores <= scores.min() + 1e-9 * max(1.0, scores.min()))[0])
    alpha = candidates[:, best]
    refined = None
    if settings["n_reestimate"] > 0 and m > 1:
        best, alpha, refined = _reestimate(R_list, ica_dirs, candidates, scores,
                                           alphas[:, :i], i, settings)
    alphas[:, i] = alpha
    for T, P in zip(maps, residual_maps):
        T[:, i] = alpha if P is None else P @ alpha
    ranked = np.sort(scores)
    step = {
        "step": i,
        "scores": scores.tolist(),
        "candidate_environment": np.repeat(np.arange(K), m).tolist(),
        "chosen": best,
        "best_score": float(ranked[0]),
        "runner_up_gap": float(ranked[1] - ranked[0]) if ranked.size > 1 else None,
        **(refined or {}),
    }
    if settings["in_place"] and i + 1 < d:
        # Next step's residuals in place: R - z (z^T z)^{-1} z^T R with
        # z = R alpha (z is orthogonal to the earlier noises already).
        for R in R_list:
            Sr = R.T @ R
            Q = np.eye(d) - np.outer(alpha, alpha @ Sr) / max(float(alpha @ Sr @ alpha),
                                                              1e-300)
            for rows in row_blocks(R.shape[0], d):
                R[rows] = R[rows] @ Q
    return step, not_converged


def _reestimate(R_list: list[np.ndarray], ica_dirs: list[np.ndarray], candidates: np.ndarray,
                scores: np.ndarray, found: np.ndarray, i: int,
                settings: dict) -> tuple[int, np.ndarray, dict]:
    """The re-estimation of step ``i`` (``n_reestimate > 0``): the chosen candidate, its
    re-estimated direction and the step's refinement record.

    The pool of starts is the raw candidates and, with the consistency scorer
    and ``descend``, the minima of the consistency score reached from each of
    them (:func:`consistency_descent`; index + K m); the ``n_reestimate`` best
    that extract different sources are re-estimated from all environments
    jointly (:func:`joint_direction`) and re-scored with the same scorer; the
    best (or ``step_choices[i]``'s rank) is kept. With the consistency scorer
    and ``descend``, a re-estimate whose closest ICA source differs from its
    start's in some environment and which scores worse than its start is
    replaced by the start (:func:`keep_sources`; the step's ``kept_starts``).
    The first step is always re-estimated: the directions found there shape
    every later residual, and with ill-conditioned data the starts alone
    leave enough of the first source in them to spoil the next step's
    candidates.
    """
    scorer, score_options = settings["scorer"], settings["score_options"]
    score_fn, descend = SCORERS[scorer], settings["descend"]
    m = candidates.shape[1] // len(R_list)
    # Pool of starts: the raw candidates, then (index + K m) the
    # minima of the consistency score reached from each of them.
    pool, pool_scores = candidates, scores
    if descend and scorer == "ica_consistency":
        descended, descended_scores = consistency_descent(
            R_list, ica_dirs, candidates, max_iter=DESCENT_MAX_ITER, tol=DESCENT_TOL)
        pool = np.hstack([candidates, descended])
        pool_scores = np.concatenate([scores, descended_scores])
    starts = _distinct_best(R_list, pool, pool_scores, settings["n_reestimate"])
    joint_steps = m >= settings["reestimate_min_sources"] or i == 0
    if joint_steps:
        stacked = stack_rows(R_list)
        joint = [joint_direction(R_list, pool[:, c], found, stacked=stacked)
                 for c in starts]
        del stacked
    else:  # the starts as they are, re-scored like re-estimated ones
        joint = [(pool[:, c] / np.linalg.norm(pool[:, c]), 1.0) for c in starts]
    directions = np.column_stack([w for w, _ in joint])
    kept_starts = []
    if scorer == "ica_consistency" and descend and joint_steps:
        # the rule scores the directions already (the same scorer)
        directions, kept_starts, refined_scores = keep_sources(
            R_list, ica_dirs, pool[:, starts], directions)
    else:
        refined_scores = score_fn(R_list, directions, ica_dirs, **score_options)
    win = int(np.argmin(refined_scores))
    rank = settings["step_choices"].get(i, 0)
    if 0 < rank < len(refined_scores):
        win = int(np.argsort(refined_scores, kind="stable")[rank])
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
    return starts[win] % candidates.shape[1], directions[:, win], refined
