"""Step 1: topological ordering, exogenous noises and entangled features."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from .independence import SCORERS

__all__ = ["OrderingResult", "ica_directions", "topological_ordering"]


@dataclass
class OrderingResult:
    """Output of :func:`topological_ordering`.

    Attributes
    ----------
    alphas : ndarray (d, d)
        Column i is the direction chosen at step i (reduced coordinates).
    noises : list of ndarray (n_k, d)
        ``Zhat[k][:, i] = R_i[k] @ alphas[:, i]``: the recovered exogenous noises.
    entangled : list of ndarray (n_k, d)
        ``Ytilde[k][:, i] = X_red[k] @ alphas[:, i]``: the entangled features.
    steps : list of dict
        Per step: candidate scores, the environment each candidate came from,
        the chosen index, and the gap to the runner-up.
    n_ica_not_converged : int
        How many ICA fits hit ``max_iter``.
    """

    alphas: np.ndarray
    noises: list[np.ndarray]
    entangled: list[np.ndarray]
    steps: list[dict] = field(default_factory=list)
    n_ica_not_converged: int = 0


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
    ica = FastICA(
        n_components=m, whiten=False, max_iter=max_iter, tol=tol, fun=fun, w_init=w_init,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        ica.fit((U - U.mean(axis=0)) @ white)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    dirs = basis @ white @ ica.components_.T
    dirs /= np.linalg.norm(dirs, axis=0, keepdims=True)
    return dirs, converged


def _residualise(X_red: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Residual of X_red after least-squares regression on the columns of Z."""
    if Z.shape[1] == 0:
        return X_red
    coef, *_ = np.linalg.lstsq(Z, X_red, rcond=None)
    return X_red - Z @ coef


def _refine_choice(
    R_list: list[np.ndarray], candidates: np.ndarray, best: int, rng: np.random.Generator,
    min_corr2: float = 0.9,
) -> int:
    """Index of the best estimate of the winning source among all environments.

    Every environment contributes an ICA estimate of the winning source; the
    consistency score tells which source is a root but not which estimate of
    it is the most precise. Candidates whose projection correlates with the
    winner's (corr^2 > ``min_corr2`` pooled over environments) are compared
    by the linear-time RFF-HSIC score and the smallest wins.
    """
    from .independence import hsic_rff_scores

    num = np.zeros(candidates.shape[1])
    den_c = np.zeros(candidates.shape[1])
    den_w = 0.0
    for R in R_list:
        sigma = R.T @ R
        num += candidates.T @ sigma @ candidates[:, best]
        den_c += np.einsum("ic,ij,jc->c", candidates, sigma, candidates)
        den_w += candidates[:, best] @ sigma @ candidates[:, best]
    corr2 = num**2 / np.maximum(den_c * den_w, 1e-300)
    same = np.flatnonzero(corr2 > min_corr2)
    if same.size <= 1:
        return best
    scores = hsic_rff_scores(R_list, candidates[:, same], rng=rng)
    return int(same[np.argmin(scores)])


def topological_ordering(
    X_red: list[np.ndarray],
    *,
    scorer: str = "ica_consistency",
    random_state: int | np.random.Generator | None = None,
    ica_max_iter: int = 400,
    ica_tol: float = 1e-5,
    ica_fun: str = "logcosh",
    scorer_options: dict | None = None,
    refine: bool = True,
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
    refine : bool, default=True
        Among the candidates (one per environment) that extract the same
        source as the winner, keep the one that is most independent of its
        regression residuals by the random-Fourier-feature HSIC.

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
    noises = [np.zeros((x.shape[0], d)) for x in X_red]
    alphas = np.zeros((d, d))
    steps = []
    not_converged = 0
    for i in range(d):
        m = d - i
        R_list = [_residualise(x, z[:, :i]) for x, z in zip(X_red, noises)]
        ica_dirs = []
        for R in R_list:
            dirs, ok = ica_directions(
                R, m, random_state=int(rng.integers(2**31 - 1)), max_iter=ica_max_iter,
                tol=ica_tol, fun=ica_fun,
            )
            not_converged += not ok
            ica_dirs.append(dirs)
        candidates = np.hstack(ica_dirs)
        scores = score_fn(R_list, candidates, ica_dirs, rng=rng, **(scorer_options or {}))
        # Ties up to rounding (e.g. the last step, where every candidate extracts
        # the same rank-one residual) go to the first candidate, so results do
        # not hinge on floating-point noise.
        best = int(np.flatnonzero(scores <= scores.min() + 1e-9 * max(1.0, scores.min()))[0])
        alpha = candidates[:, best]
        if refine and m > 1 and scorer != "hsic":
            best = _refine_choice(R_list, candidates, best, rng)
            alpha = candidates[:, best]
        alphas[:, i] = alpha
        for k in range(K):
            noises[k][:, i] = R_list[k] @ alpha
        ranked = np.sort(scores)
        steps.append(
            {
                "step": i,
                "scores": scores.tolist(),
                "candidate_environment": np.repeat(np.arange(K), m).tolist(),
                "chosen": best,
                "best_score": float(ranked[0]),
                "runner_up_gap": float(ranked[1] - ranked[0]) if ranked.size > 1 else None,
            }
        )
    entangled = [x @ alphas for x in X_red]
    return OrderingResult(alphas, noises, entangled, steps, not_converged)
