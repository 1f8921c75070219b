"""Choosing the number of latent features d from the data.

In CREATOR's model every observed column is a combination of the same d
latents, ``x = H y``, plus (in real data) measurement noise that is
independent across columns. The number of latents is then the number of
common factors of a factor model, and :func:`select_n_latent` chooses it
with the classical sequential likelihood-ratio test of the factor model,
run in every environment and summed, next to three spectral estimators
that are reported as evidence.

Why the likelihood-ratio test decides: on the simulator's workload
(docs/results/verdict.md) the spectral estimators lose the
weakest latent of ill-conditioned models at d = 7 and cannot say "every
direction is signal" when p = d, while the factor-model test finds d in
every model of the tuning and fresh seeds. The test is run per environment
because the measurement noise need not have the same scale in every
environment; pooled over environments it is a scale mixture whose heavy
tails break the chi-square calibration of any pooled test.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, optimize, stats

from ._bfgs import minimize_split
from ._passes import is_dask, row_blocks
from ._random import as_generator
from ._validation import check_environments

__all__ = [
    "DimensionSelection",
    "select_n_latent",
    "pooled_spectrum",
    "eigenvalue_ratio",
    "growth_ratio",
    "onatski_ed",
    "factor_lr_test",
    "ledermann_bound",
    "n_latent_evidence",
]

# Relative size of a pivot of the column QR below which a column is an exact
# linear combination of the others (rounding is ~1e-15, ill-conditioned but
# genuine latents are ~1e-6 on the simulator's hardest models).
_RANK_TOL = 1e-10
# Smallest eigenvalue of a correlation matrix the factor tests accept: below it
# the matrix is singular at the precision of its second moments (e.g. exact
# combinations of columns stored in float32) and the fit's start, the inverse,
# is meaningless.
_PD_TOL = 1e-12
# Smallest uniqueness (noise share of a standardised column) the factor fit
# may use; 5 % measurement noise is a uniqueness of 0.0025.
_MIN_UNIQUENESS = 1e-8
#: L-BFGS-B's stopping rules in the factor fit (relative decrease of the
#: discrepancy, largest projected gradient). A gradient tolerance of 1e-5
#: saves a sixth of the evaluations but moved a p-value by 0.012.
FACTOR_FTOL, FACTOR_GTOL = 1e-12, 1e-7
#: Columns :func:`n_latent_evidence` tests at most (a seeded random subset
#: beyond): the tests' cost is cubic in the columns, their power saturates
#: long before (a k-factor model has k * m loadings to fit on m columns).
MAX_TEST_COLUMNS = 60
#: Rows of the smallest environment per tested column, at least: with fewer,
#: the tests' chi-square approximation fails and a true factor model is
#: rejected (d = 3, K = 4, 5 % measurement noise, 30-120 rows: at most one of
#: 40 data sets from three rows per column on, two of 40 at 2.5, and on other
#: seeds 14 to 20 of 20 at one to two rows per column; docs: results,
#: verdict, "Few rows per environment").
ROWS_PER_TESTED_COLUMN = 3
#: Rows (at least; 10 per tested column otherwise) of the seeded subsample
#: on which :func:`n_latent_evidence` finds the linearly independent columns.
RANK_ROWS = 2000
#: Columns (a seeded random subset beyond) whose pooled spectrum
#: :func:`select_n_latent` reports when it tests a subset.
SPECTRUM_COLUMNS = 500


@dataclass(frozen=True)
class DimensionSelection:
    """The chosen number of latents and the evidence behind it.

    Attributes
    ----------
    n_latent : int
        The choice.
    decided_by : {"factor_lr_test", "all_directions", "rank"}
        ``"factor_lr_test"``: the smallest k whose k-factor model the
        likelihood-ratio test does not reject at level ``alpha``.
        ``"all_directions"``: every testable k was rejected, so every
        direction of the data is kept (``n_latent = p``; typical for p = d,
        where no noise floor exists). ``"rank"``: as ``"all_directions"``,
        but the data are exactly rank deficient, so ``n_latent`` is their
        rank (noise-free data with p > d).
    criteria : dict
        The pick of every criterion: ``"factor_lr_test"`` (None when no
        testable k was accepted), ``"onatski_ed"``, ``"ahn_horenstein_er"``,
        ``"ahn_horenstein_gr"`` (None when the spectrum is too short for
        them) and ``"rank"``.
    spectrum : ndarray (p,)
        Eigenvalues of the pooled within-environment covariance of the
        (standardised) columns, in decreasing order: the scree.
    tests : list of dict
        One entry per tested k, in order: ``k``, ``statistic``, ``df``,
        ``p_value``.
    alpha : float
        Level of the tests.
    rank : int
        Number of linearly independent columns (the data's rank).
    max_testable : int
        Largest k whose factor model can be tested with ``rank`` columns
        (:func:`ledermann_bound`).
    test_scope : {"per_environment", "pooled"}
        Whether the test statistic is the sum of per-environment statistics
        (the default) or computed once on the pooled correlation (when an
        environment has too few rows or a column constant within it).
    n_columns_tested : int
        Columns the tests drew from: all p, or a seeded random subset of
        ``max_columns`` (then ``rank`` and ``spectrum`` are of subsets).
    n_columns : int
        Columns of the data (p).
    """

    n_latent: int
    decided_by: str
    criteria: dict
    spectrum: np.ndarray
    tests: list = field(default_factory=list)
    alpha: float = 0.01
    rank: int = 0
    max_testable: int = 0
    test_scope: str = "per_environment"
    n_columns_tested: int = 0
    n_columns: int = 0

    def to_dict(self) -> dict:
        """Plain-Python form (for ``diagnostics_`` and JSON)."""
        return {
            "n_latent": self.n_latent, "decided_by": self.decided_by,
            "criteria": dict(self.criteria), "spectrum": self.spectrum.tolist(),
            "tests": [dict(t) for t in self.tests], "alpha": self.alpha, "rank": self.rank,
            "max_testable": self.max_testable, "test_scope": self.test_scope,
            "n_columns_tested": self.n_columns_tested, "n_columns": self.n_columns,
            "summary": self.summary(),
        }

    def p_value(self, k: int) -> float | None:
        """p-value of the k-factor test, or None if k was not tested."""
        for t in self.tests:
            if t["k"] == k:
                return t["p_value"]
        return None

    def summary(self) -> str:
        """A few lines of plain language: the choice and why."""
        if self.decided_by == "factor_lr_test":
            why = (
                f"the {self.n_latent}-factor model is the first one the likelihood-ratio test "
                f"does not reject (p = {self.p_value(self.n_latent):.3g} >= {self.alpha})"
            )
        elif self.decided_by == "shared_subspace_lr_test":
            why = (
                f"every per-environment factor model that can be tested was rejected, and the "
                f"{self.n_latent}-factor model with one loading subspace shared by all "
                f"environments is the first one the likelihood-ratio test does not reject "
                f"(p = {self.p_value(self.n_latent):.3g} >= {self.alpha})"
            )
        elif self.decided_by == "all_directions":
            why = ("every testable factor model was rejected, so every direction of the data "
                   "carries signal (no noise floor; typical when p = d)")
        else:
            why = (f"no testable factor model was accepted and the data are exactly rank "
                   f"{self.rank} (noise-free), so the rank decides")
        others = ", ".join(
            f"{k}: {v}" for k, v in self.criteria.items() if k not in ("factor_lr_test", "rank")
        )
        subset = (f" (tests on a random subset of {self.n_columns_tested} of the "
                  f"{self.n_columns} columns)" if self.n_columns_tested < self.n_columns else "")
        return (f"n_latent = {self.n_latent}: {why}{subset}.\nSpectral criteria: {others}; "
                f"rank of the data: {self.rank}.{self._df_note()}")

    def _df_note(self) -> str:
        """Why the tests' degrees of freedom rise where the shared-subspace model takes over."""
        shared = [t for t in self.tests if t.get("model") == "shared_subspace"]
        if not shared:
            return ""
        own = [t for t in self.tests if t.get("model") != "shared_subspace"]
        first = shared[0]
        note = (f"\nThe tests from k = {first['k']} on fit one loading subspace shared by all "
                f"environments: a separate {first['k']}-factor model of each environment leaves "
                f"no degrees of freedom to test with {self.rank} columns, and the shared model "
                f"has fewer parameters")
        if own:
            which = ("one model per environment" if self.test_scope == "per_environment"
                     else "one model of the pooled correlation")
            note += (f", so the degrees of freedom rise from {own[-1]['df']} (k = {own[-1]['k']}, "
                     f"{which}) to {first['df']} (k = {first['k']})")
        return note + "."


def _column_units(X_list: list[np.ndarray]) -> list[np.ndarray]:
    """Every column divided by its largest absolute value over all environments.

    Correlations are unchanged; squares no longer overflow or underflow at
    extreme magnitudes (1e+-200), so every later moment is computed safely.
    """
    top = np.max([np.max(np.abs(x), axis=0) for x in X_list], axis=0)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    return [x / top for x in X_list]


def _pooled_centred(X_list: list[np.ndarray], standardize: bool) -> np.ndarray:
    pooled = np.vstack([x - x.mean(axis=0) for x in X_list])
    if standardize:
        sd = pooled.std(axis=0)
        pooled = pooled / np.where(sd > 0, sd, np.inf)
    return pooled


def pooled_spectrum(X_list: list[np.ndarray], *, standardize: bool = True) -> np.ndarray:
    """Eigenvalues of the pooled within-environment covariance, decreasing.

    Every environment is centred on its own mean; with ``standardize`` every
    column is then divided by its pooled SD (the correlation scale, as in
    :func:`creator_plugin.preprocessing.reduce_environments`).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    standardize : bool, default=True

    Returns
    -------
    ndarray (p,)
        Zero-padded when ``sum(n_k) < p``.
    """
    pooled = _pooled_centred(X_list, standardize)
    s = np.linalg.svd(pooled, compute_uv=False)
    out = np.zeros(pooled.shape[1])
    out[: s.size] = s**2 / pooled.shape[0]
    return out


def _positive(spectrum: np.ndarray) -> np.ndarray:
    """The spectrum with rounding-level eigenvalues set to exactly zero."""
    lam = np.asarray(spectrum, dtype=float)
    return np.where(lam > _RANK_TOL**2 * lam[0], lam, 0.0)


def eigenvalue_ratio(spectrum, k_max: int | None = None) -> int | None:
    """Ahn & Horenstein's eigenvalue-ratio (ER) estimator.

    ``argmax_{1 <= k <= k_max} lambda_k / lambda_{k+1}``.

    Parameters
    ----------
    spectrum : array-like (m,)
        Decreasing eigenvalues.
    k_max : int, optional
        Largest k considered; default ``ceil(m / 2)`` (at most m - 2).

    Returns
    -------
    int or None
        None when the spectrum has fewer than 3 eigenvalues.

    References
    ----------
    Ahn, S. C. and Horenstein, A. R. (2013). Eigenvalue ratio test for the
    number of factors. *Econometrica*, 81(3), 1203-1227.
    """
    lam = _positive(spectrum)
    return _argmax_ratio(lam, _default_k_max(lam.size, k_max))


def growth_ratio(spectrum, k_max: int | None = None) -> int | None:
    """Ahn & Horenstein's growth-ratio (GR) estimator.

    ``argmax_k ln(1 + l_k / V_k) / ln(1 + l_{k+1} / V_{k+1})`` with
    ``V_k = sum_{j > k} l_j``. Less sensitive than ER to one dominant
    eigenvalue.

    Parameters
    ----------
    spectrum : array-like (m,)
    k_max : int, optional
        As for :func:`eigenvalue_ratio`.

    Returns
    -------
    int or None

    References
    ----------
    Ahn, S. C. and Horenstein, A. R. (2013). Eigenvalue ratio test for the
    number of factors. *Econometrica*, 81(3), 1203-1227.
    """
    lam = _positive(spectrum)
    tail = np.concatenate([np.cumsum(lam[::-1])[::-1][1:], [0.0]])  # V_k = sum_{j>k}
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.log1p(lam / tail)
    return _argmax_ratio(growth, _default_k_max(lam.size, k_max))


def _argmax_ratio(values: np.ndarray, k_max: int | None) -> int | None:
    """``argmax_{1 <= k <= k_max} values_k / values_{k+1}`` (None without a k_max)."""
    if k_max is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = values[:k_max] / values[1 : k_max + 1]
    ratio = np.where(np.isnan(ratio), 0.0, ratio)  # 0 / 0 beyond the rank
    return int(np.argmax(ratio)) + 1


def _default_k_max(m: int, k_max: int | None) -> int | None:
    if m < 3:
        return None
    if k_max is None:
        k_max = -(-m // 2)
    return int(min(max(k_max, 1), m - 2))


def onatski_ed(spectrum, r_max: int | None = None, *, max_iter: int = 20) -> int | None:
    """Onatski's edge-distribution (ED) estimator.

    The noise eigenvalues near the edge of the bulk are spaced like
    ``j^{2/3}``; the slope of ``lambda_j`` on ``(j - 1)^{2/3}`` over five
    eigenvalues past the current estimate calibrates a spacing ``delta``, and
    the estimate is the largest ``i <= r_max`` with
    ``lambda_i - lambda_{i+1} >= delta``; the two steps alternate until the
    estimate stops changing. Robust to noise that is correlated or
    heteroscedastic across columns, but it needs a bulk of noise
    eigenvalues: p well above d.

    Parameters
    ----------
    spectrum : array-like (m,)
    r_max : int, optional
        Largest number of factors considered; default ``min(m - 5, m // 2)``.

    Returns
    -------
    int or None
        None when ``m < 8`` (no bulk to calibrate on). 0 is possible.

    References
    ----------
    Onatski, A. (2010). Determining the number of factors from empirical
    distribution of eigenvalues. *The Review of Economics and Statistics*,
    92(4), 1004-1016.
    """
    lam = _positive(spectrum)
    m = lam.size
    if m < 8:
        return None
    r_max = min(m - 5, m // 2) if r_max is None else int(min(r_max, m - 5))
    gaps = lam[:r_max] - lam[1 : r_max + 1]
    estimate = r_max
    for _ in range(max_iter):
        j = np.arange(estimate, estimate + 5)  # zero-based indices of lambda_{r+1..r+5}
        slope = np.polyfit(j.astype(float) ** (2.0 / 3.0), lam[j], 1)[0]
        delta = 2.0 * abs(slope)
        above = np.flatnonzero((gaps >= delta) & (gaps > 0))
        new = int(above[-1]) + 1 if above.size else 0
        if new == estimate:
            break
        estimate = new
    return estimate


def ledermann_bound(p: int) -> int:
    """Largest k for which a k-factor model of p columns can be tested.

    The model ``Sigma = L L^T + Psi`` (diagonal ``Psi``) restricts the
    covariance only while its degrees of freedom
    ``((p - k)^2 - (p + k)) / 2`` are positive.

    References
    ----------
    Ledermann, W. (1937). On the rank of the reduced correlational matrix in
    multiple-factor analysis. *Psychometrika*, 2(2), 85-93.
    """
    k = 0
    while (p - k - 1) ** 2 > p + k + 1:
        k += 1
    return k


def _factor_discrepancy(S: np.ndarray, k: int) -> float:
    """Minimum of the maximum-likelihood factor discrepancy.

    With the uniquenesses ``psi`` fixed, the best loadings come from the
    eigenvectors of ``Psi^{-1/2} S Psi^{-1/2}`` and the discrepancy
    ``ln|Sigma| - ln|S| + tr(Sigma^{-1} S) - p`` concentrates to
    ``sum_{j > k} (theta_j - ln theta_j - 1)`` over its p - k smallest
    eigenvalues theta (Joreskog, 1967); it is minimised over ``ln psi``
    with L-BFGS-B from ``factanal``'s start, as R's ``factanal`` does
    (:func:`scipy.optimize.minimize`). (A start from
    the (k-1)-factor fit can stall far from the minimum.)
    """
    p = S.shape[0]

    def objective(u: np.ndarray) -> tuple[float, np.ndarray]:
        scale = np.exp(-0.5 * u)
        theta, vec = np.linalg.eigh(S * (scale[:, None] * scale))
        theta, vec = np.maximum(theta[: p - k], 1e-300), vec[:, : p - k]
        value = float((theta - np.log(theta) - 1.0).sum())
        return value, -(vec**2) @ (theta - 1.0)

    lo = np.log(_MIN_UNIQUENESS)
    start = np.clip(np.log((1.0 - 0.5 * k / p) / np.diag(np.linalg.inv(S))), lo, 0.0)
    res = minimize_split(objective, start, method="L-BFGS-B", bounds=[(lo, 0.0)] * p,
                         options={"maxiter": 1000, "ftol": FACTOR_FTOL, "gtol": FACTOR_GTOL})
    return float(res.fun)


def factor_lr_test(
    correlations: list[np.ndarray], n_samples: list[int], k: int
) -> tuple[float, int, float]:
    """Likelihood-ratio test of a k-factor model, summed over groups.

    Each group (environment) has its own loadings and diagonal noise; the
    statistic is the sum over groups of Bartlett's corrected
    ``(n - 1 - (2p + 5) / 6 - 2k / 3) * F_min`` and is referred to a
    chi-square with the summed degrees of freedom. The normal-theory
    statistic keeps its chi-square limit for non-Gaussian factors when each
    column's noise is independent of the factors and of the other columns'
    noise (Amemiya and Anderson, 1990): CREATOR's latents are non-Gaussian
    by assumption.

    Parameters
    ----------
    correlations : list of ndarray (p, p)
        Positive-definite correlation (or covariance) matrix of each group.
    n_samples : list of int
        Rows of each group.
    k : int
        Number of factors, ``1 <= k <= ledermann_bound(p)``.

    Returns
    -------
    statistic : float
    df : int
    p_value : float

    References
    ----------
    Lawley, D. N. (1940). The estimation of factor loadings by the method of
    maximum likelihood. *Proceedings of the Royal Society of Edinburgh*,
    60(1), 64-82.
    Bartlett, M. S. (1951). The effect of standardization on a chi-square
    approximation in factor analysis. *Biometrika*, 38(3/4), 337-344.
    Joreskog, K. G. (1967). Some contributions to maximum likelihood factor
    analysis. *Psychometrika*, 32(4), 443-482.
    Amemiya, Y. and Anderson, T. W. (1990). Asymptotic chi-square tests for
    a large class of factor analysis models. *The Annals of Statistics*,
    18(3), 1453-1463.
    """
    correlations = [np.asarray(S, dtype=float) for S in correlations]
    p = correlations[0].shape[0]
    for i, S in enumerate(correlations):
        if S.shape != (p, p) or not np.all(np.isfinite(S)) or not np.allclose(S, S.T):
            raise ValueError(f"correlations[{i}] must be a finite symmetric {p} x {p} matrix.")
        smallest = float(np.linalg.eigvalsh(S)[0])
        if smallest <= 0:
            raise ValueError(
                f"correlations[{i}] is not positive definite (smallest eigenvalue "
                f"{smallest:.3g}): some columns are exact combinations of the others.")
    df_one = ((p - k) ** 2 - (p + k)) // 2
    if not 1 <= k <= ledermann_bound(p):
        raise ValueError(f"k must be in 1..{ledermann_bound(p)} for p={p} columns, got {k}.")
    statistic = sum(
        (n - 1 - (2 * p + 5) / 6 - 2 * k / 3) * _factor_discrepancy(S, k)
        for S, n in zip(correlations, n_samples)
    )
    df = df_one * len(correlations)
    return float(statistic), int(df), float(stats.chi2.sf(statistic, df))


_FAR = 1e300


def _shared_subspace_em(S: np.ndarray, n: np.ndarray, k: int, n_iter: int = 200):
    """EM for ``S_g ~ H C_g H^T + Psi_g``: loadings (p, k), factor covariances, uniquenesses."""
    G, p, _ = S.shape
    pooled = np.tensordot(n, S, axes=1) / n.sum()
    vals, vecs = np.linalg.eigh(pooled)
    H = vecs[:, ::-1][:, :k] * np.sqrt(np.maximum(vals[::-1][:k], 1e-12))
    diag_S = np.diagonal(S, axis1=1, axis2=2)
    psi = np.maximum(diag_S - np.sum(H**2, axis=1), 0.05 * diag_S)
    C = np.repeat(np.eye(k)[None], G, axis=0)
    floor = 1e-6 * diag_S
    for _ in range(n_iter):
        Sigma = H @ C @ H.T + psi[:, :, None] * np.eye(p)
        beta = C @ H.T @ np.linalg.inv(Sigma)  # (G, k, p)
        Eff = C - beta @ H @ C + beta @ S @ np.swapaxes(beta, 1, 2)  # (G, k, k)
        Exf = S @ np.swapaxes(beta, 1, 2)  # (G, p, k)
        w = n[:, None] / psi  # (G, p)
        num = np.einsum("gj,gjk->jk", w, Exf)
        den = np.einsum("gj,gkl->jkl", w, Eff)
        H = np.linalg.solve(den, num[:, :, None])[:, :, 0]
        C = Eff
        psi = diag_S - 2 * np.einsum("jk,gjk->gj", H, Exf) + np.einsum(
            "jk,gkl,jl->gj", H, Eff, H)
        psi = np.maximum(psi, floor)
    return H, C, psi


def shared_subspace_df(p: int, k: int, n_groups: int) -> int:
    """Degrees of freedom of the shared-subspace k-factor model of ``n_groups`` groups.

    Each group's covariance is ``H C_g H^T + Psi_g`` with one ``p x k``
    loading matrix ``H`` for all groups (identified up to an invertible
    ``k x k`` map), a free ``C_g`` and a diagonal ``Psi_g`` per group.
    """
    data = n_groups * p * (p + 1) // 2
    params = p * k - k * k + n_groups * (k * (k + 1) // 2 + p)
    return data - params


def _group_logdets(S: np.ndarray) -> np.ndarray:
    """``log|S_g|`` of every group; a ``ValueError`` when one is singular (a column
    constant in a group, or columns exactly dependent there: no likelihood ratio)."""
    sign, logdet = np.linalg.slogdet(S)
    bad = (sign <= 0) | ~np.isfinite(logdet)
    if bad.any():
        raise ValueError(f"the covariance of group {int(np.flatnonzero(bad)[0])} is singular, "
                         "so the shared-subspace likelihood-ratio test is not defined.")
    return logdet


def shared_subspace_lr_test(
    covariances: list[np.ndarray], n_samples: list[int], k: int
) -> tuple[float, int, float]:
    """Likelihood-ratio test of k factors whose loadings span one subspace in every group.

    CREATOR's model, ``x = H y`` plus independent measurement noise, gives
    every environment the covariance ``H C_g H^T + Psi_g``: the latents'
    covariance ``C_g`` and the noise ``Psi_g`` change with the environment,
    the column space of ``H`` does not. Sharing ``H`` leaves the test
    degrees of freedom where each environment's own k-factor model has none
    (k = 3 factors of p = 6 columns, for example). The maximum-likelihood fit
    runs L-BFGS on ``H``, Cholesky factors of ``C_g`` and ``log Psi_g`` with
    the analytic gradient, from the pooled principal subspace; the statistic
    ``sum_g (n_g - 1) F_g`` (no Bartlett correction is known for this model)
    is referred to a chi-square with :func:`shared_subspace_df` degrees of
    freedom.

    Parameters
    ----------
    covariances : list of ndarray (p, p)
        Covariance of each group, all in the same column units (never
        standardised per group: that would rescale the rows of ``H``
        differently in each group).
    n_samples : list of int
    k : int
        Number of factors, with ``shared_subspace_df(p, k, groups) > 0``.

    Returns
    -------
    statistic : float
    df : int
    p_value : float

    Raises
    ------
    ValueError
        When the model has no degrees of freedom, or a group's covariance is
        singular (a column constant in it: the likelihood ratio is not defined).
    """
    S = np.stack(covariances)
    G, p, _ = S.shape
    n = np.asarray(n_samples, dtype=float)
    df = shared_subspace_df(p, k, G)
    if df <= 0 or not 1 <= k < p:
        raise ValueError(f"the shared-subspace {k}-factor model of {p} columns in {G} groups "
                         "has no degrees of freedom.")
    tril = np.tril_indices(k)
    logdet_S = _group_logdets(S)
    # Start from a few EM iterations (monotone, robust), then polish by BFGS in
    # the chart H = Q0 [I; B] of the subspaces near the EM one, so that no
    # parameter moves along the k x k gauge H -> H M (which stalls quasi-Newton
    # methods); the C_g absorb every scale.
    try:
        H_em, C_em, psi0 = _shared_subspace_em(S, n, k)
    except np.linalg.LinAlgError:
        raise ValueError("the shared-subspace factor model could not be fitted.") from None
    Q0 = np.linalg.qr(H_em, mode="complete")[0]
    top, rest = Q0[:, :k], Q0[:, k:]
    R = top.T @ H_em
    A0 = []
    for g in range(G):
        C = R @ C_em[g] @ R.T
        w, v = np.linalg.eigh((C + C.T) / 2)
        A0.append(np.linalg.cholesky((v * np.maximum(w, 1e-9 * max(w.max(), 1e-12))) @ v.T)[tril])
    nB = (p - k) * k
    x0 = np.concatenate([np.zeros(nB), np.concatenate(A0), np.log(psi0).ravel()])
    nA = len(tril[0])
    floor = np.log(1e-8 * np.diagonal(S, axis1=1, axis2=2)).ravel()

    def unpack(x):
        H = top + rest @ x[:nB].reshape(p - k, k)
        A = np.zeros((G, k, k))
        A[:, tril[0], tril[1]] = x[nB: nB + G * nA].reshape(G, nA)
        return H, A, x[nB + G * nA:].reshape(G, p)

    def objective(x):
        with np.errstate(all="ignore"):  # trial steps outside the model are rejected below
            return _objective(x)

    def _objective(x):
        H, A, u = unpack(x)
        psi = np.exp(u)
        C = A @ np.swapaxes(A, 1, 2)
        Sigma = H @ C @ H.T + psi[:, :, None] * np.eye(p)
        sign, logdet = np.linalg.slogdet(Sigma)
        if np.any(sign <= 0) or not np.all(np.isfinite(logdet)):
            return _FAR, np.zeros_like(x)  # outside the model: the line search backs off
        inv = np.linalg.inv(Sigma)
        inner = inv @ S @ inv
        f = float(n @ (logdet + np.einsum("gij,gji->g", S, inv) - logdet_S - p))
        if not np.isfinite(f):
            return _FAR, np.zeros_like(x)
        grad_sigma = n[:, None, None] * (inv - inner)
        dH = 2 * np.einsum("gij,jk,gkl->il", grad_sigma, H, C)
        dC = np.einsum("ji,gjk,kl->gil", H, grad_sigma, H)
        dA = 2 * dC @ A
        du = np.diagonal(grad_sigma, axis1=1, axis2=2) * psi
        return f, np.concatenate([(rest.T @ dH).ravel(), dA[:, tril[0], tril[1]].ravel(),
                                  du.ravel()])

    def clipped(x):
        return objective(np.concatenate([x[: nB + G * nA], np.maximum(x[nB + G * nA:], floor)]))

    res = optimize.minimize(clipped, x0, jac=True, method="BFGS",
                            options={"maxiter": 20000, "gtol": 1e-6 * float(n.sum())})
    if not res.success:
        # BFGS stops on precision loss near a boundary (a uniqueness at its floor):
        # continue with bounds from where it stopped.
        x1 = np.concatenate([res.x[: nB + G * nA], np.maximum(res.x[nB + G * nA:], floor)])
        bounds = [(None, None)] * (nB + G * nA) + [(lo, None) for lo in floor]
        polished = optimize.minimize(objective, x1, jac=True, method="L-BFGS-B", bounds=bounds,
                                     options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-9})
        res = polished if polished.fun < res.fun else res
    if not np.isfinite(res.fun) or res.fun >= _FAR:
        raise ValueError("the shared-subspace factor model could not be fitted.")
    statistic = float(res.fun) * float(np.sum(n - 1) / n.sum())
    return statistic, int(df), float(stats.chi2.sf(statistic, df))


def _independent_columns(pooled: np.ndarray) -> np.ndarray:
    """Indices of a maximal set of linearly independent columns (pivoted QR)."""
    _, R, piv = linalg.qr(pooled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    if diag.size == 0 or diag[0] == 0:
        return np.array([], dtype=int)
    return np.sort(piv[: int(np.sum(diag > _RANK_TOL * diag[0]))])


def _conditioned(S: np.ndarray) -> np.ndarray:
    """Positions of a largest set of columns whose correlation matrix is positive definite.

    For a correlation matrix ``S`` singular at the precision of its entries
    (smallest eigenvalue at most ``_PD_TOL``): the columns are taken greedily,
    each next one the least explained by those already taken (pivoted QR of a
    square root of ``S``), while the taken ones' matrix has its smallest
    eigenvalue above ``_PD_TOL``. Columns that are exact combinations of the
    others up to rounding (data stored in float32, say) are left out, as the
    column QR leaves out exact combinations in float64.
    """
    w, V = np.linalg.eigh(S)
    root = np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T  # root.T @ root == S
    _, R, piv = linalg.qr(root, mode="economic", pivoting=True)
    keep = piv[: int(np.sum(np.abs(np.diag(R)) ** 2 > 100 * _PD_TOL))]
    while keep.size > 1 and np.linalg.eigvalsh(S[np.ix_(keep, keep)])[0] <= _PD_TOL:
        keep = keep[:-1]
    return np.sort(keep)


def _columns_to_test(k: int) -> int:
    """Fewest columns on which a k-factor model is testable (``ledermann_bound(m) >= k``)."""
    m = k + 1
    while ledermann_bound(m) < k:
        m += 1
    return m


def _column_budget(X_list: list, max_columns: int | None, need: int | None = None) -> int | None:
    """Most columns the factor tests use.

    ``max_columns`` (all if None), and at most one column per
    ``ROWS_PER_TESTED_COLUMN`` rows of the smallest environment, but never
    fewer than a ``need``-factor model needs to be testable (with very few
    rows the rule would leave nothing to test).
    """
    p = int(X_list[0].shape[1])
    cap = p if max_columns is None else min(p, max_columns)
    limit = max(min(int(x.shape[0]) for x in X_list) // ROWS_PER_TESTED_COLUMN, 1)
    if need is not None:
        limit = max(limit, _columns_to_test(need))
    return max_columns if limit >= cap else limit


def _common_unit_covariances(
    X_list: list[np.ndarray], cols: np.ndarray
) -> tuple[list[np.ndarray], list[int]]:
    """Per-environment covariances of ``cols``, every column in its pooled within-SD units."""
    # Each column in units of its largest absolute value first: no square overflows
    # or underflows at any scale of the data (1e-200 .. 1e200).
    top = np.max([np.abs(x[:, cols]).max(axis=0) for x in X_list], axis=0)
    top = np.where(top > 0, top, 1.0)
    centred = [x[:, cols] / top - (x[:, cols] / top).mean(axis=0) for x in X_list]
    n = np.array([c.shape[0] for c in centred])
    sd = np.sqrt(sum((c**2).sum(axis=0) for c in centred) / n.sum())
    sd = np.where(sd > 0, sd, 1.0)
    return [(c / sd).T @ (c / sd) / c.shape[0] for c in centred], n.tolist()


def _group_correlations(
    X_list: list[np.ndarray], cols: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray], list[int], str]:
    """Per-environment correlations of ``cols``, or the pooled one as fallback.

    Returns the columns used too: when even the pooled correlation is singular
    at the precision of its entries, only the columns of :func:`_conditioned`.
    """
    r = cols.size
    mats = []
    for x in X_list:
        xs = x[:, cols]
        if xs.shape[0] <= r + 1 or np.any(xs.std(axis=0) == 0):
            break
        S = np.atleast_2d(np.corrcoef(xs, rowvar=False))
        if np.linalg.eigvalsh(S)[0] <= _PD_TOL:
            break
        mats.append(S)
    else:
        return cols, mats, [x.shape[0] for x in X_list], "per_environment"
    pooled = np.vstack([x[:, cols] - x[:, cols].mean(axis=0) for x in X_list])
    n_eff = pooled.shape[0] - len(X_list) + 1  # n - 1 = degrees of freedom
    S = np.atleast_2d(np.corrcoef(pooled, rowvar=False))
    if np.linalg.eigvalsh(S)[0] <= _PD_TOL:
        idx = _conditioned(S)
        cols, S = cols[idx], S[np.ix_(idx, idx)]
    return cols, [S], [n_eff], "pooled"


def select_n_latent(
    X, environments=None, *, alpha: float = 0.01, standardize: bool = True,
    max_columns: int | None = MAX_TEST_COLUMNS, random_state=None,
) -> DimensionSelection:
    """Choose the number of latent features d from multi-environment data.

    The rule: drop columns that are exact linear combinations of others
    (pivoted QR; their number is the data's rank r), then test the k-factor
    model ``Sigma_k = L_k L_k^T + Psi_k`` in every environment k for
    ``k = 1, 2, ...`` with the Bartlett-corrected likelihood-ratio test
    summed over environments (:func:`factor_lr_test`), and return the first
    k that is not rejected at level ``alpha``. When every testable k is
    rejected (k-factor models stop being testable at
    :func:`ledermann_bound`), every direction carries signal and the answer
    is r: all p columns when p = d, or the rank of noise-free data.

    Onatski's ED and Ahn and Horenstein's ER and GR estimators on the pooled
    spectrum are reported alongside; they do not decide.

    Parameters
    ----------
    X : list of array-like (n_k, p), or array-like (n, p)
        One array per environment, or one stacked array with
        ``environments``.
    environments : array-like (n,), optional
        Environment label of every row when ``X`` is one array.
    alpha : float, default=0.01
        Level of every likelihood-ratio test.
    standardize : bool, default=True
        Report the spectrum (and the spectral criteria) on the correlation
        scale, as CREATOR's reduction uses it with ``standardize=True``. The
        test is scale-invariant either way.
    max_columns : int or None, default=MAX_TEST_COLUMNS
        With more columns than this, the tests use a seeded random subset of
        ``max_columns`` columns, as :func:`n_latent_evidence` does, and the
        spectrum a seeded random subset of ``SPECTRUM_COLUMNS``: the cost is
        then linear in p and the memory bounded. A k-factor model of all
        columns is one of every subset and a subset of m >> d columns
        measures the same d latents, so the choice keeps its meaning; it
        also keeps the test's chi-square approximation valid, which fails
        once the columns are a sizeable fraction of the rows (with all 200
        to 1000 columns of a d = 5 model, n = 500 per environment, the test
        picked 6 to 37). The largest choice is then ``max_columns`` (more
        latents than the subset can show); raise it for more. None tests
        every column (cubic cost in p). Either way at most one column per
        ``ROWS_PER_TESTED_COLUMN`` (3) rows of the smallest environment is
        tested, for the same reason: with 80 rows per environment and 60
        columns a true 3-factor model was rejected in all 20 data sets of a
        fresh check, and the choice was right in none (docs: results,
        verdict, "Few rows per environment"). When that leaves too
        few columns for any model that fits to be testable, the subset
        widens to the fewest columns that can test one factor more, up to
        ``max_columns``.
    random_state : int, Generator or None
        Seeds the column subsets and the row subsample that finds the
        independent columns (unused with at most ``max_columns`` columns).

    Returns
    -------
    DimensionSelection

    Raises
    ------
    ValueError
        For fewer than 2 environments, mismatched columns, non-finite
        values, an ``alpha`` outside (0, 1), or data with no variation.

    Notes
    -----
    Per-environment tests need more rows than columns in every environment;
    otherwise one test on the pooled correlation is used, which assumes the
    noise has the same scale in every environment.

    Examples
    --------
    >>> from creator_plugin import simulate
    >>> from creator_plugin.dimension import select_n_latent
    >>> sim = simulate(n_latent=3, n_environments=3, n_features=9,
    ...                measurement_noise=0.1, random_state=0)
    >>> select_n_latent(sim.X).n_latent
    3
    """
    if (
        isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)
        or not 0.0 < float(alpha) < 1.0
    ):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.")
    if max_columns is not None and (
        isinstance(max_columns, bool) or not isinstance(max_columns, numbers.Integral)
        or max_columns < 4
    ):
        raise ValueError(f"max_columns must be None or an integer >= 4, got {max_columns!r}.")
    X_list = check_environments(X, environments)
    budget = _column_budget(X_list, max_columns)
    chosen = _select(X_list, alpha, standardize, budget, random_state)
    p = X_list[0].shape[1]
    cap = p if max_columns is None else min(p, max_columns)
    tested = budget
    while budget != max_columns and chosen.decided_by in ("rank", "all_directions"):
        # The rows allow too few columns to test a model that fits (the answer
        # would be the subset's width): test one factor more on the fewest
        # columns that can show it, up to the cap (as before the row rule).
        wider = _columns_to_test(chosen.max_testable + 1)
        if wider <= tested:  # collinear columns: a wider subset shows no more
            wider = cap
        budget = max_columns if wider >= cap else wider
        tested = wider
        chosen = _select(X_list, alpha, standardize, budget, random_state)
    return chosen


def _select(X_list: list, alpha: float, standardize: bool, max_columns: int | None,
            random_state) -> DimensionSelection:
    """:func:`select_n_latent` on validated environments with a given column cap."""
    p = X_list[0].shape[1]
    # Dask arrays always take the moment-based route (nothing is stacked).
    subset = (max_columns is not None and p > max_columns) or any(map(is_dask, X_list))
    constant = "X: every column is constant within every environment."
    if subset:
        rng = as_generator(random_state)
        cols, mats, sizes, scope, _ = _test_inputs(X_list, max_columns, rng)
        if cols.size == 0:
            raise ValueError(constant)
        n_tested = min(p, max_columns or p)
        spec_cols = np.arange(p) if p <= SPECTRUM_COLUMNS else np.sort(
            rng.choice(p, SPECTRUM_COLUMNS, replace=False))
        spectrum = _spectrum_from_moments(X_list, spec_cols, standardize)
    else:
        if standardize:
            X_list = _column_units(X_list)
        cols = _independent_columns(_pooled_centred(X_list, standardize=True))
        if cols.size == 0:
            raise ValueError(constant)
        n_tested = p
        spectrum = pooled_spectrum(X_list, standardize=standardize)
        cols, mats, sizes, scope = _group_correlations(X_list, cols)
    r = int(cols.size)
    k_test = ledermann_bound(r)
    tests, chosen, shared = [], None, False
    for k in range(1, k_test + 1):
        stat, df, pval = factor_lr_test(mats, sizes, k)
        tests.append({"k": k, "statistic": stat, "df": df, "p_value": pval})
        if pval >= alpha:
            chosen = k
            break
    if chosen is None and not subset and len(X_list) > 1:
        # Every per-environment model that can be tested was rejected: test the
        # models with one loading subspace shared by all environments, which keep
        # degrees of freedom beyond the per-environment bound (k = 3 of p = 6).
        covs, sizes_k = _common_unit_covariances(X_list, cols)
        start = tests[-1]["k"] + 1 if tests else 1
        for k in range(start, r):
            if shared_subspace_df(r, k, len(covs)) <= 0:
                break
            try:
                stat, df, pval = shared_subspace_lr_test(covs, sizes_k, k)
            except ValueError:  # degenerate data: the test cannot decide
                break
            tests.append({"k": k, "statistic": stat, "df": df, "p_value": pval,
                          "model": "shared_subspace"})
            if pval >= alpha:
                chosen, shared = k, True
                break
    if chosen is not None:
        n_latent = chosen
        decided_by = "shared_subspace_lr_test" if shared else "factor_lr_test"
    else:
        n_latent = r
        decided_by = "rank" if r < n_tested else "all_directions"
    criteria = {
        "factor_lr_test": None if shared else chosen,
        "onatski_ed": onatski_ed(spectrum),
        "ahn_horenstein_er": eigenvalue_ratio(spectrum),
        "ahn_horenstein_gr": growth_ratio(spectrum),
        "rank": r,
    }
    return DimensionSelection(
        n_latent=n_latent, decided_by=decided_by, criteria=criteria, spectrum=spectrum,
        tests=tests, alpha=float(alpha), rank=r, max_testable=k_test, test_scope=scope,
        n_columns_tested=n_tested, n_columns=p,
    )


def _shared_evidence(X_list, cols, n_latent, bound, mats, sizes, alpha) -> dict | None:
    """:func:`n_latent_evidence` beyond the per-environment bound, by the shared-subspace test.

    None when the shared-subspace model of ``n_latent`` factors has no
    degrees of freedom either (the per-environment rules then apply).
    """
    r, K = int(cols.size), len(X_list)
    if n_latent >= r:
        return None
    covs, n = _common_unit_covariances(X_list, cols)
    if not all(np.isfinite(c).all() for c in covs):
        return None

    def p_of(k):
        if k <= bound:
            return factor_lr_test(mats, sizes, k)[2]
        return shared_subspace_lr_test(covs, n, k)[2]

    try:
        return _shared_status(p_of, r, n_latent, bound, K, alpha)
    except ValueError:  # degenerate data: the shared-subspace test cannot decide
        return None


def _shared_status(p_of, r, n_latent, bound, K, alpha) -> dict | None:
    fewer = n_latent - 1
    out = {"test": "shared_subspace"}
    if shared_subspace_df(r, n_latent, K) > 0:
        out["p_value"] = p_of(n_latent)
        if out["p_value"] < alpha:
            return {**out, "status": "too_few"}
        if fewer < 1:
            return {**out, "status": "consistent"}
        p_fewer = p_of(fewer)
        status = "too_many" if p_fewer >= alpha else "consistent"
        return {**out, "status": status, "fewer": fewer, "p_value_fewer": p_fewer}
    if fewer > bound and shared_subspace_df(r, fewer, K) > 0:
        # n_latent itself is untestable; its neighbour below decides, as in
        # select_n_latent: fitted by fewer factors = too many, rejected = too few.
        p_fewer = p_of(fewer)
        status = "too_many" if p_fewer >= alpha else "too_few"
        return {**out, "p_value": None, "status": status, "fewer": fewer,
                "p_value_fewer": p_fewer}
    return None


def _subset_moments(X_list: list, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-environment means and centred scatter matrices of the columns ``cols``.

    Every column is divided by its largest absolute value over all
    environments (its unit) so that no square overflows or underflows. NumPy
    arrays are read in blocks of rows (never copied); dask arrays are reduced
    by dask and only the ``(m, m)`` results come back.

    Returns
    -------
    unit : ndarray (m,)
    means : ndarray (K, m)
        In units.
    scatters : ndarray (K, m, m)
        ``sum_rows (x / unit - mean)(x / unit - mean)^T`` per environment.
    """
    if any(is_dask(x) for x in X_list):
        import dask
        import dask.array as da

        subs = [da.asarray(x)[:, cols] for x in X_list]
        highs, lows = dask.compute([s.max(axis=0) for s in subs], [s.min(axis=0) for s in subs])
        unit = _unit(highs, lows)
        (means,) = dask.compute([(s / unit).mean(axis=0) for s in subs])
        (scatters,) = dask.compute([
            (s / unit - m).T @ (s / unit - m) for s, m in zip(subs, means)
        ])
        return unit, np.stack(means), np.stack([np.asarray(c) for c in scatters])
    highs, lows = [], []
    for x in X_list:
        hi, lo = np.full(cols.size, -np.inf), np.full(cols.size, np.inf)
        for rows in row_blocks(x.shape[0], x.shape[1]):
            block = x[rows][:, cols]
            hi, lo = np.maximum(hi, block.max(axis=0)), np.minimum(lo, block.min(axis=0))
        highs.append(hi)
        lows.append(lo)
    unit = _unit(highs, lows)
    means, scatters = [], []
    for x in X_list:
        total = np.zeros(cols.size)
        for rows in row_blocks(x.shape[0], x.shape[1]):
            total += (x[rows][:, cols] / unit).sum(axis=0)
        mean = total / x.shape[0]
        scatter = np.zeros((cols.size, cols.size))
        for rows in row_blocks(x.shape[0], x.shape[1]):
            c = x[rows][:, cols] / unit
            c -= mean
            scatter += c.T @ c
        means.append(mean)
        scatters.append(scatter)
    return unit, np.stack(means), np.stack(scatters)


def _spectrum_from_moments(X_list: list, cols: np.ndarray, standardize: bool) -> np.ndarray:
    """:func:`pooled_spectrum` of the columns ``cols``, from scatter matrices
    accumulated in blocks of rows (or by dask): no copy of the rows."""
    unit, _, scatters = _subset_moments(X_list, cols)
    S = scatters.sum(axis=0) / sum(x.shape[0] for x in X_list)
    if standardize:
        sd = np.sqrt(np.diag(S))
        sd = np.where(sd > 0, sd, np.inf)
        S = S / np.outer(sd, sd)
    else:
        S = S * np.outer(unit, unit)
    lam = np.linalg.eigvalsh(S)[::-1]
    # Eigenvalues of a covariance are accurate to about m eps of the largest
    # (those of the data's SVD to about eps^2): below that they are zero.
    return np.where(lam > cols.size * np.finfo(float).eps * max(lam[0], 0.0), lam, 0.0)


def _unit(highs: list, lows: list) -> np.ndarray:
    top = np.max([np.maximum(np.abs(h), np.abs(lo)) for h, lo in zip(highs, lows)], axis=0)
    return np.where(np.isfinite(top) & (top > 0), top, 1.0)


def _row_sample(
    X_list: list, cols: np.ndarray, n_rows: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """About ``n_rows`` rows of the columns ``cols``, drawn in proportion to the environments.

    Every row when the environments hold ``n_rows`` or fewer.
    """
    sizes = np.array([x.shape[0] for x in X_list])
    take = sizes if sizes.sum() <= n_rows else np.maximum(
        np.minimum(np.round(n_rows * sizes / sizes.sum()).astype(int), sizes), 1)
    out = []
    for x, n, t in zip(X_list, sizes, take):
        idx = np.arange(n) if t == n else np.sort(rng.choice(n, t, replace=False))
        if is_dask(x):
            import dask.array as da

            out.append(np.asarray(da.asarray(x)[idx][:, cols].compute()))
        else:
            out.append(x[np.ix_(idx, cols)])
    return out


def _test_inputs(
    X_list: list, max_columns: int | None, rng: np.random.Generator
) -> tuple[np.ndarray, list[np.ndarray], list[int], str, int]:
    """The columns the factor tests use and their correlations, without a p x p matrix.

    A seeded random subset of ``max_columns`` columns when there are more;
    the linearly independent ones among them (pivoted QR of a row subsample
    of the standardised, per-environment centred columns: an exact linear
    combination is one in every subset of the rows); their correlation in
    every environment (or pooled, as in :func:`_group_correlations`), from
    scatter matrices accumulated over all rows.

    Returns
    -------
    cols : ndarray
        Positions of the independent tested columns in the data.
    mats, sizes, scope
        As :func:`_group_correlations`.
    n_candidates : int
        Columns the subset was drawn from (p).
    """
    p = X_list[0].shape[1]
    cand = np.arange(p)
    if max_columns is not None and p > max_columns:
        cand = np.sort(rng.choice(p, max_columns, replace=False))
    unit, means, scatters = _subset_moments(X_list, cand)
    n_rows = np.array([x.shape[0] for x in X_list])
    pooled = scatters.sum(axis=0)
    sd = np.sqrt(np.diag(pooled) / n_rows.sum())
    sample = _row_sample(X_list, cand, max(RANK_ROWS, 10 * cand.size), rng)
    z = np.vstack([(s / unit - m) for s, m in zip(sample, means)])
    z /= np.where(sd > 0, sd, np.inf)
    keep = _independent_columns(z)
    r = keep.size
    if r == 0:
        return cand[keep], [], n_rows.tolist(), "per_environment", p
    mats = []
    for scatter, n in zip(scatters, n_rows):
        S = scatter[np.ix_(keep, keep)]
        s = np.sqrt(np.diag(S))
        if n <= r + 1 or np.any(s == 0):
            break
        S = S / np.outer(s, s)
        if np.linalg.eigvalsh(S)[0] <= _PD_TOL:
            break
        mats.append(S)
    else:
        return cand[keep], mats, n_rows.tolist(), "per_environment", p
    S = pooled[np.ix_(keep, keep)]
    s = np.sqrt(np.diag(S))
    S = S / np.outer(s, s)
    if np.linalg.eigvalsh(S)[0] <= _PD_TOL:
        idx = _conditioned(S)
        keep, S = keep[idx], S[np.ix_(idx, idx)]
    n_eff = int(n_rows.sum()) - len(X_list) + 1  # n - 1 = degrees of freedom
    return cand[keep], [S], [n_eff], "pooled", p


def n_latent_evidence(
    X, n_latent: int, environments=None, *, alpha: float = 0.01,
    max_columns: int | None = MAX_TEST_COLUMNS, random_state=None,
) -> dict:
    """Does the data's factor structure support a given ``n_latent``?

    At most two likelihood-ratio tests of :func:`factor_lr_test`, no
    search. With r linearly independent columns, a k-factor model can be
    tested for ``k <= ledermann_bound(r)``:

    * ``n_latent`` testable and its model rejected: the data hold more
      latents, ``n_latent`` leaves out signal (``"too_few"``);
    * the model with ``j = min(n_latent - 1, ledermann_bound(r))`` factors
      not rejected: j factors already fit, so ``n_latent`` includes
      components indistinguishable from noise (``"too_many"``);
    * ``n_latent`` beyond the testable range, below r, and the j-factor
      model rejected: as in :func:`select_n_latent`, no testable model
      leaves a noise floor, every direction carries signal
      (``"too_few"``).

    Cost is linear in the rows and in p, memory bounded: with more than
    ``max_columns`` columns the tests use a seeded random subset of
    ``max_columns`` of them. That keeps their meaning: a k-factor model of
    all columns is a k-factor model of every subset, so a rejection on the
    subset rejects it for all columns; a subset of m >> n_latent columns
    measures the same k latents (the loadings of a random subset have full
    rank), so a model with fewer factors fits it only if it fits the data.
    The power is that of m columns. The independent columns are found on a
    seeded subsample of the rows (exact linear combinations are exact on
    every subsample) and the correlations are accumulated over all rows in
    blocks, so neither the rows nor a ``p x p`` matrix is ever copied.
    Dask arrays are reduced by dask.

    Parameters
    ----------
    X : list of array-like (n_k, p), or array-like (n, p)
        NumPy or dask arrays.
    n_latent : int
    environments : array-like (n,), optional
    alpha : float, default=0.01
    max_columns : int or None, default=MAX_TEST_COLUMNS
        Most columns tested; None tests all (cubic cost in p). Either way at
        most one column per ``ROWS_PER_TESTED_COLUMN`` (3) rows of the
        smallest environment is tested (with fewer rows per column the
        test's chi-square approximation fails and it rejects true models),
        but never fewer than an ``n_latent``-factor model needs to be
        testable.
    random_state : int, Generator or None
        Seeds the column subset and the row subsample (unused when the data
        have at most ``max_columns`` columns and ``RANK_ROWS`` rows).

    Returns
    -------
    dict
        ``status`` ("consistent", "too_few", "too_many" or "untestable":
        no factor model is testable, r <= 3), ``p_value`` (the
        ``n_latent``-factor test, None if untestable), ``fewer`` (the j
        tested, or None) with ``p_value_fewer``, ``rank`` (of the tested
        columns), ``max_testable``, ``test_scope``, ``n_columns_tested``
        and ``n_columns``.
    """
    X_list = check_environments(X, environments)
    max_columns = _column_budget(X_list, max_columns, need=n_latent)
    cols, mats, sizes, scope, p = _test_inputs(X_list, max_columns, as_generator(random_state))
    r = int(cols.size)
    bound = ledermann_bound(r)
    out = {
        "status": "consistent", "p_value": None, "fewer": None, "p_value_fewer": None,
        "rank": r, "max_testable": bound, "test_scope": scope,
        "n_columns_tested": min(p, max_columns or p), "n_columns": p,
    }
    if n_latent > r:
        out["status"] = "too_many"
        return out
    if n_latent > bound and len(X_list) > 1 and not any(map(is_dask, X_list)) and (
            max_columns is None or p <= max_columns):
        shared = _shared_evidence(X_list, cols, n_latent, bound, mats, sizes, alpha)
        if shared is not None:
            out.update(shared)
            return out
    if n_latent <= bound:
        out["p_value"] = factor_lr_test(mats, sizes, n_latent)[2]
        if out["p_value"] < alpha:
            out["status"] = "too_few"
            return out
    fewer = min(n_latent - 1, bound)
    if fewer >= 1:
        out["fewer"] = fewer
        out["p_value_fewer"] = factor_lr_test(mats, sizes, fewer)[2]
        if out["p_value_fewer"] >= alpha:
            out["status"] = "too_many"
        elif n_latent > bound and n_latent < r:
            out["status"] = "too_few"
    elif bound == 0:
        out["status"] = "untestable"
    return out
