"""Scores for the ordering step: how far is a candidate from a pure root source?

Every scorer takes the residualised data of all environments and a matrix of
candidate directions and returns one non-negative score per candidate
(smaller = more likely a root-node noise component), and is invariant to
rescaling a candidate.

Scorers
-------
``"ica_consistency"`` (default)
    ``sum_k (1 - max_c corr^2(R[k] a, R[k] a_kc))`` over the ICA directions
    ``a_kc`` found in environment k. In the population it is zero exactly
    when ``a`` extracts one independent source in every environment, which by
    the paper's Theorem 2 (residualised data, Darmois-Skitovich) means a
    root-node noise component. It works on ``d x d`` covariance matrices only,
    so it costs ``O(n d^2)`` per step, and it is invariant to every
    invertible linear map of the reduced coordinates.
``"hsic"``
    The paper's score: ``sum_k sum_j HSIC(s_k, r_kj)`` with exact biased HSIC,
    Gaussian kernels and median-heuristic bandwidths, where ``r_kj`` is
    measurement ``j`` of the residual (the residual mapped back to the
    measurement coordinates with ``basis``) minus its regression on the
    candidate ``s_k``. As in the paper it is invariant to rescaling and
    permuting the measurements, not to mixing them. ``O(n^2)`` time and
    memory per HSIC; kept as the reference.
``"hsic_rff"``
    The same sum with HSIC approximated by random Fourier features
    (``n_features`` per variable), over an orthonormal basis of the
    residual's column space instead of the measurements: linear time and
    memory in n, invariant to orthogonal maps of the reduced coordinates.

:data:`SCORER_OPTIONS` lists the options every scorer accepts (the
``OrderingOptions(scorer_options=...)``), with their constraints.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ._params import Interval

__all__ = [
    "SCORERS",
    "SCORER_OPTIONS",
    "hsic_gaussian",
    "hsic_rff",
    "ica_consistency_scores",
    "ica_consistency_sources",
    "hsic_scores",
    "hsic_rff_scores",
]

_EPS = 1e-300


def _median_bandwidth(x: np.ndarray, max_points: int = 500) -> float:
    """Median heuristic: median pairwise distance of (at most max_points of) x."""
    pts = x[:max_points]
    d = np.abs(pts[:, None] - pts[None, :])
    med = np.median(d[np.triu_indices(len(pts), 1)])
    if med <= 0:
        med = np.std(x) or 1.0
    return float(med)


def _gram(x: np.ndarray) -> np.ndarray:
    """Gaussian Gram matrix with median-heuristic bandwidth."""
    bw = _median_bandwidth(x)
    return np.exp(-((x[:, None] - x[None, :]) ** 2) / (2.0 * bw**2))


def _centred_gram(x: np.ndarray) -> np.ndarray:
    k = _gram(x)
    k -= k.mean(axis=0, keepdims=True)
    k -= k.mean(axis=1, keepdims=True)
    return k


def hsic_gaussian(x: np.ndarray, y: np.ndarray) -> float:
    """Exact biased HSIC of two 1-D samples, Gaussian kernels, median bandwidth.

    ``HSIC = tr(K H L H) / n^2``; ``O(n^2)`` time and memory.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    n = x.shape[0]
    # tr(K H L H) = sum((H K H) * L): only one Gram matrix needs centring.
    return float(np.sum(_centred_gram(x) * _gram(y)) / n**2)


def _rff(x: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """Centred random Fourier features of standardised columns.

    x : (n, c) -> (n, c, 2D) features ``[cos(w z), sin(w z)] / sqrt(D)`` of a
    Gaussian kernel with unit bandwidth. Using cos/sin pairs (no random
    phase) makes the HSIC estimate exactly invariant to sign flips.
    """
    z = (x - x.mean(axis=0)) / np.maximum(x.std(axis=0), _EPS)
    arg = z[:, :, None] * omega
    feats = np.concatenate([np.cos(arg), np.sin(arg)], axis=2) / np.sqrt(omega.size)
    return feats - feats.mean(axis=0)


def hsic_rff(x: np.ndarray, y: np.ndarray, *, n_features: int = 64, random_state=0) -> float:
    """Linear-time HSIC estimate with random Fourier features.

    Both inputs are standardised first (so the estimate is scale-invariant)
    and a Gaussian kernel of unit bandwidth is approximated with
    ``n_features`` random features; the estimate is the squared Frobenius
    norm of the cross-covariance of the two feature maps.
    """
    omega = np.random.default_rng(random_state).standard_normal(n_features)
    fx = _rff(np.asarray(x, float).reshape(-1, 1), omega)[:, 0]
    fy = _rff(np.asarray(y, float).reshape(-1, 1), omega)[:, 0]
    c = fx.T @ fy / fx.shape[0]
    return float(np.sum(c**2))


def ica_consistency_scores(
    R_list: list[np.ndarray],
    candidates: np.ndarray,
    ica_dirs: list[np.ndarray],
    *,
    rng: np.random.Generator | None = None,
    basis: np.ndarray | None = None,
) -> np.ndarray:
    """ICA-consistency score of every candidate (see module docstring).

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
    candidates : ndarray (d, n_cand)
    ica_dirs : list of ndarray (d, m)
        The ICA unmixing directions found in every environment.
    rng, basis
        Not used (the common scorer signature).
    """
    return ica_consistency_sources(R_list, candidates, ica_dirs)[0]


def ica_consistency_sources(
    R_list: list[np.ndarray],
    candidates: np.ndarray,
    ica_dirs: list[np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """ICA-consistency scores and, per environment, the ICA source each candidate extracts.

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
    candidates : ndarray (d, n_cand)
    ica_dirs : list of ndarray (d, m)

    Returns
    -------
    scores : ndarray (n_cand,)
        As :func:`ica_consistency_scores`.
    sources : ndarray (n_cand, K) of int
        ``sources[c, k]``: the column of ``ica_dirs[k]`` whose projection is
        most correlated with candidate c's in environment k.
    """
    scores = np.zeros(candidates.shape[1])
    sources = np.zeros((candidates.shape[1], len(R_list)), dtype=int)
    for k, (R, A) in enumerate(zip(R_list, ica_dirs)):
        sigma = R.T @ R / R.shape[0]
        cov = candidates.T @ sigma @ A
        var_c = np.einsum("ic,ij,jc->c", candidates, sigma, candidates)
        var_a = np.einsum("ic,ij,jc->c", A, sigma, A)
        corr2 = cov**2 / np.maximum(np.outer(var_c, var_a), _EPS)
        sources[:, k] = corr2.argmax(axis=1)
        scores += 1.0 - np.minimum(corr2.max(axis=1), 1.0)
    return scores, sources


def _residual_columns(R: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Columns of R minus their regression on s, without degenerate columns.

    A column is degenerate when s explains all of it, judged in the column's
    own units (never relative to other columns, so rescaling one measurement
    cannot drop it).
    """
    var_s = max(s @ s, _EPS)
    res = R - np.outer(s, (R.T @ s) / var_s)
    keep = res.var(axis=0) > 1e-10 * np.maximum(R.var(axis=0), _EPS)
    return res[:, keep]


def hsic_scores(
    R_list: list[np.ndarray],
    candidates: np.ndarray,
    ica_dirs: list[np.ndarray] | None = None,
    *,
    rng: np.random.Generator | None = None,
    basis: np.ndarray | None = None,
) -> np.ndarray:
    """The paper's exact-HSIC score of every candidate (reference, O(n^2)).

    Parameters
    ----------
    R_list : list of ndarray (n_k, d)
        Residuals in the reduced coordinates.
    candidates : ndarray (d, n_cand)
    ica_dirs, rng
        Not used (the common scorer signature).
    basis : ndarray (d, p), optional
        Map from the reduced coordinates to the measurements: the residual
        columns ``r_kj`` are the columns of ``R[k] @ basis``. Default: the
        reduced coordinates themselves.
    """
    scores = np.zeros(candidates.shape[1])
    for R in R_list:
        n = R.shape[0]
        measured = R if basis is None else R @ basis
        for c in range(candidates.shape[1]):
            s = R @ candidates[:, c]
            ks = _centred_gram(s)
            for r in _residual_columns(measured, s).T:
                scores[c] += np.sum(ks * _gram(r)) / n**2
    return scores


def hsic_rff_scores(
    R_list: list[np.ndarray],
    candidates: np.ndarray,
    ica_dirs: list[np.ndarray] | None = None,
    *,
    rng: np.random.Generator | None = None,
    basis: np.ndarray | None = None,
    n_features: int = 16,
    max_samples: int | None = 5000,
) -> np.ndarray:
    """Random-Fourier-feature HSIC score of every candidate, vectorised, O(n).

    The residual is expressed in an orthonormal basis of its column space
    (``m = rank(R)`` columns instead of d), and all candidates and residual
    columns of an environment are processed at once: memory is
    ``O(n * n_cand * m * n_features)``, linear in n, and at most
    ``max_samples`` rows per environment (a seeded random subset) are used,
    so the cost stops growing beyond that. ``ica_dirs`` and ``basis`` are
    not used (the common scorer signature).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    omega = rng.standard_normal(n_features)
    scores = np.zeros(candidates.shape[1])
    for R in R_list:
        if max_samples is not None and R.shape[0] > max_samples:
            R = R[np.sort(rng.choice(R.shape[0], max_samples, replace=False))]
        n = R.shape[0]
        _, sv, vt = np.linalg.svd(R, full_matrices=False)
        m = int(np.sum(sv > 1e-8 * sv[0]))
        candidates_m = vt[:m] @ candidates
        R = R @ vt[:m].T
        S = R @ candidates_m  # (n, c)
        beta = (R.T @ S) / np.maximum(np.sum(S * S, axis=0), _EPS)  # (m, c)
        res = R[:, None, :] - S[:, :, None] * beta.T[None, :, :]  # (n, c, m)
        var = res.var(axis=0)  # (c, d)
        keep = var > 1e-10 * max(R.var(axis=0).max(), _EPS)
        fs = _rff(S, omega)  # (n, c, D)
        fr = _rff(res.reshape(n, -1), omega).reshape(n, *res.shape[1:], -1)
        c, q, D = fr.shape[1], fr.shape[2], fr.shape[3]
        cross = np.matmul(fs.transpose(1, 2, 0), fr.reshape(n, c, q * D).transpose(1, 0, 2))
        cross = (cross / n).reshape(c, D, q, D)
        scores += np.sum(np.sum(cross**2, axis=(1, 3)) * keep, axis=1)
    return scores


SCORERS = {
    "ica_consistency": ica_consistency_scores,
    "hsic": hsic_scores,
    "hsic_rff": hsic_rff_scores,
}

#: Options of every scorer (keys of ``OrderingOptions(scorer_options=...)``) with
#: parameter constraints (:mod:`creator_plugin._params`).
SCORER_OPTIONS: dict[str, dict[str, list]] = {
    "ica_consistency": {},
    "hsic": {},
    "hsic_rff": {
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [Interval(Integral, 10, None, closed="left"), None],
    },
}
