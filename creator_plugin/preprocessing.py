"""Step 0: per-environment centring and one shared reduction to d dimensions.

The reduction reads the data in a few passes (:mod:`creator_plugin._passes`)
and never copies it: per-environment column moments, then one factorisation
of the stacked standardised data, then the projection to d dimensions. Its
memory is the ``(n_k, d)`` result plus ``O(min(N, p)^2)`` for the
factorisation (``N = sum(n_k)``) plus one block of rows; its time is
``O(N p min(N, p))``, linear in p when ``p > N`` and linear in N when
``p <= N``. Dask arrays go through dask, with a randomised SVD when p is
large (:data:`DASK_EXACT_MAX_FEATURES`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._passes import (
    column_moments,
    is_dask,
    pooled_gram,
    pooled_r_factor,
    project,
    project_gram_loadings,
    randomized_pca,
)
from ._random import as_generator, draw_seed

__all__ = ["Reduction", "reduce_environments"]

#: A column is constant within an environment when its SD there is at most
#: this fraction of the column's own magnitude (its largest absolute value):
#: about 45 float64 rounding units, so only variation at the rounding level of
#: the values counts as none (a column at 1e13 with an SD of 1 varies).
CONSTANT_TOL = 1e-14
#: Column magnitudes outside this range lose float64 precision (subnormal
#: numbers, or squares and sums that overflow); such data get a message
#: about scale.
MAGNITUDE_RANGE = (1e-290, 1e290)
#: With dask inputs and more columns than this, the reduction uses a
#: randomised SVD and keeps only the leading part of the spectrum.
DASK_EXACT_MAX_FEATURES = 4096
#: Leading eigenvalues a randomised reduction keeps (at least; 2 * n_latent
#: if larger, at most min(N, p)).
N_LEADING_EIGENVALUES = 50
#: Ridge added to the eigenvalues of the column correlation matrix in the
#: unrelated-column check, so exact duplicates get R^2 ~ 1 instead of 1/0.
_R2_RIDGE = 1e-9


@dataclass(frozen=True)
class Reduction:
    """The shared linear map from observations to whitened d-dim coordinates.

    ``x_red = ((x - env_mean) / scale) @ projection`` where ``projection``
    (``p x d``) combines the pooled PCA loadings and a pooled whitening, so
    the reduced data of all environments together has identity covariance.

    Attributes
    ----------
    env_means : ndarray (K, p)
        Mean of every environment.
    scale : ndarray (p,)
        With ``standardize=True``, the pooled within-environment standard
        deviation of every column; with ``standardize=False`` the data's
        largest absolute value for every column (a common unit, which does
        not change the PCA and keeps every sum finite). ``inf`` for dropped
        columns, which therefore map to exactly zero.
    projection : ndarray (p, d)
    explained_variance : ndarray
        Pooled eigenvalue spectrum of ``(x - env_mean) / scale``, largest
        first: all ``min(N, p)`` eigenvalues for NumPy input and for dask
        input with at most :data:`DASK_EXACT_MAX_FEATURES` columns; otherwise
        the leading ``min(N, p, max(50, 2 d))`` of a randomised SVD.
    dropped_columns : ndarray of int
        Columns constant within every environment (SD at most
        :data:`CONSTANT_TOL` times the column's own largest absolute value
        in each environment). They carry no information about the latents
        and are ignored.
    unrelated_columns : ndarray of int
        Columns nearly unrelated to the others (R^2 < 0.1, only checked when
        more than d columns vary): in the model every column is a
        combination of the same d latents, so such a column is most likely
        pure noise, which standardisation would give full weight. The R^2 is
        that of the column on all other columns (pooled, in-sample) when the
        reduction factors the data through its ``p x p`` triangular factor
        (NumPy input with ``p <= N``, dask input with ``p <=``
        :data:`DASK_EXACT_MAX_FEATURES`); otherwise (``p > N``, where every
        column is an exact combination of the others in-sample) it is the
        share of the column's variance in the leading d principal
        components.
    partly_constant_columns : ndarray of int
        Columns constant within some environments but not all. In the model
        every column measures the latents in every environment, so this
        points to a recording fault, and the column's values in those
        environments would pull the shared reduction away from the latents:
        these columns are ignored too.
    constant_environments : dict
        For every partly constant column, the environments (positions in
        ``X_list``) where it is constant.
    within_sd : ndarray (p,)
        Pooled within-environment SD of every column, in its own units
        (divisor ``N``), whatever ``standardize`` is.
    """

    env_means: np.ndarray
    scale: np.ndarray
    projection: np.ndarray
    explained_variance: np.ndarray
    dropped_columns: np.ndarray
    unrelated_columns: np.ndarray
    partly_constant_columns: np.ndarray
    constant_environments: dict
    within_sd: np.ndarray


def reduce_environments(
    X_list: list,
    n_latent: int,
    *,
    standardize: bool = True,
    rank_tol: float | None = None,
    random_state: int | np.random.Generator | None = None,
    check_environment_ranks: bool = True,
) -> tuple[list[np.ndarray], Reduction]:
    """Center each environment and project all onto one pooled PCA subspace.

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        Never modified or copied.
    n_latent : int
        Dimension d of the reduction.
    standardize : bool, default=True
        Divide every column by its pooled within-environment standard
        deviation first, which makes the whole fit invariant to rescaling
        observed columns.
    rank_tol : float or None, default=None
        Relative eigenvalue (d-th over first, in standardised units) at or
        below which the pooled data is called rank deficient. ``None``: the
        float64 precision of the factorisation used, ``(max(N, p) eps)^2``
        when the spectrum comes from an SVD of the data's triangular factor
        (singular values accurate to about ``eps`` times the largest, as in
        :func:`numpy.linalg.matrix_rank`) and ``max(N, p) eps`` when it comes
        from a Gram matrix or a randomised SVD (eigenvalues accurate to about
        ``eps`` times the largest), with ``N = sum(n_k)``. Only directions
        lost to rounding count as missing: ill-conditioned but full-rank data
        (chains of large causal weights) are fitted.
    random_state : int, Generator or None
        Seeds the randomised SVD (dask inputs with many columns only), from a
        child stream spawned from it: a Generator passed here is not advanced.
    check_environment_ranks : bool, default=True
        Refuse environments whose reduced data are rank deficient (the
        ``ValueError`` has an attribute ``environment_ranks``: every
        environment's own rank, :func:`environment_ranks`, or None for dask
        input). ``False``: the clamped
        reading (:mod:`creator_plugin.clamped`), which uses them.

    Returns
    -------
    X_red : list of ndarray (n_k, d)
        Reduced, per-environment centred data (pooled covariance = identity).
    reduction : Reduction

    Raises
    ------
    ValueError
        If every column is constant, a column's magnitude is outside
        :data:`MAGNITUDE_RANGE`, the pooled data has fewer than ``n_latent``
        non-negligible directions, or an environment's reduced data is rank
        deficient.
    """
    moments = column_moments(X_list)
    _check_magnitudes(moments.magnitude)
    n_rows = moments.n_rows
    n_total = int(n_rows.sum())
    unit = np.where(moments.magnitude > 0, moments.magnitude, 1.0)
    # Constant is judged in every column's own units, never against other columns.
    relative_sd = moments.sds / unit
    constant = relative_sd <= CONSTANT_TOL
    dropped = np.flatnonzero(constant.all(axis=0))
    partly = np.flatnonzero(constant.any(axis=0) & ~constant.all(axis=0))
    if dropped.size == unit.size:
        raise ValueError("X_list: every column is constant within every environment.")
    ignored = np.union1d(dropped, partly)
    pooled_relative_sd = np.sqrt((n_rows[:, None] * relative_sd**2).sum(axis=0) / n_total)
    if standardize:
        scale = pooled_relative_sd * unit
    else:
        scale = np.full(unit.shape, unit.max())
    scale[ignored] = np.inf

    d = n_latent
    eigvals, loadings, factor, vt = _pooled_spectrum(X_list, moments, scale, d, rank_tol,
                                                     partly, random_state)
    # Deterministic signs: largest-magnitude loading positive (as sklearn's svd_flip).
    signs = np.sign(loadings[np.argmax(np.abs(loadings), axis=0), np.arange(d)])
    loadings = loadings * signs
    projection = loadings / np.sqrt(eigvals[:d])

    X_red = project(X_list, moments.means, projection / scale[:, None])
    if check_environment_ranks:
        _check_environment_ranks(X_red, n_latent, X_list)
    keep = np.setdiff1d(np.arange(unit.size), ignored)
    if keep.size <= d:
        unrelated = np.array([], dtype=int)
    elif factor is not None and standardize:
        # Standardised columns have unit pooled variance, so the spectrum is
        # already that of their correlation matrix.
        unrelated = keep[_r2_from_spectrum(eigvals, vt)[keep] < 0.1]
    elif factor is not None:
        unrelated = keep[_r2_on_other_columns(factor[:, keep]) < 0.1]
    else:
        variance = (pooled_relative_sd * unit / scale) ** 2
        share = (loadings[keep] ** 2 * eigvals[:d]).sum(axis=1) / variance[keep]
        unrelated = keep[share < 0.1]
    constant_envs = {int(j): np.flatnonzero(constant[:, j]).tolist() for j in partly}
    reduction = Reduction(
        moments.means, scale, projection, eigvals, dropped, unrelated, partly, constant_envs,
        pooled_relative_sd * unit,
    )
    return X_red, reduction


def _pooled_spectrum(X_list: list, moments, scale: np.ndarray, d: int, rank_tol, partly,
                     random_state):
    """The pooled spectrum of the scaled, environment-centred data and its leading loadings.

    A randomised SVD for dask input with many columns, the SVD of the pooled
    triangular factor when ``p <= N``, the Gram matrix's eigendecomposition
    otherwise; the rank is checked against the factorisation's precision.
    Returns the eigenvalues (per row), the ``(p, d)`` loadings, the factor
    (None unless it was formed) and its right singular vectors.
    """
    p = scale.size
    n_total = int(moments.n_rows.sum())
    eps_rel = max(n_total, p) * np.finfo(float).eps
    vt = None
    if any(is_dask(x) for x in X_list) and p > min(n_total, DASK_EXACT_MAX_FEATURES):
        n_comp = min(n_total, p, max(N_LEADING_EIGENVALUES, 2 * d))
        # A spawned child stream: the caller's generator is not advanced, so the
        # later steps draw the same numbers as for NumPy input.
        child = as_generator(random_state).spawn(1)[0]
        s, vt = randomized_pca(X_list, moments.means, scale, n_comp, draw_seed(child))
        eigvals = s**2 / n_total
        _check_rank(eigvals, d, eps_rel if rank_tol is None else rank_tol, partly)
        return eigvals, vt[:d].T, None, vt
    if p <= n_total:
        factor = pooled_r_factor(X_list, moments.means, scale)
        _, s, vt = np.linalg.svd(factor)
        eigvals = s**2 / n_total
        _check_rank(eigvals, d, eps_rel**2 if rank_tol is None else rank_tol, partly)
        return eigvals, vt[:d].T, factor, vt
    eigvals, left = np.linalg.eigh(pooled_gram(X_list, moments.means, scale))
    eigvals, left = np.maximum(eigvals[::-1], 0.0), left[:, ::-1]
    _check_rank(eigvals, d, eps_rel if rank_tol is None else rank_tol, partly)
    loadings = project_gram_loadings(
        X_list, moments.means, scale, left[:, :d] / np.sqrt(eigvals[:d])
    )
    return eigvals / n_total, loadings, None, vt


#: Relative singular value (of an environment's own centred data) at or below
#: which a direction counts as not varying (exact degeneracy, as when latents
#: are clamped to constants).
ENVIRONMENT_RANK_TOL = 1e-12


def environment_ranks(X_list: list[np.ndarray], tol: float = ENVIRONMENT_RANK_TOL) -> list[int]:
    """Every environment's rank: singular values of its centred data above ``tol`` of its largest.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    tol : float, default=ENVIRONMENT_RANK_TOL

    Returns
    -------
    list of int
    """
    ranks = []
    for x in X_list:
        x = np.asarray(x, dtype=float)
        sv = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
        ranks.append(int(np.sum(sv > tol * max(sv[0], 1e-300))) if sv.size else 0)
    return ranks


def _check_environment_ranks(X_red: list[np.ndarray], n_latent: int,
                             X_list: list[np.ndarray] | None = None) -> None:
    """A ``ValueError`` naming the first environment whose reduced data are rank deficient.

    The error's ``environment_ranks``: every environment's own rank (None
    without the data or for dask input).
    """
    for k, xr in enumerate(X_red):
        ev = np.linalg.eigvalsh(xr.T @ xr)
        if ev[0] <= 1e-12 * ev[-1]:
            ranks = (environment_ranks(X_list) if X_list is not None
                     and not any(is_dask(x) for x in X_list) else None)
            error = ValueError(
                f"X_list[{k}] is rank deficient within the shared {n_latent}-dim latent "
                "subspace: some latent direction does not vary in that environment, or "
                "the environments' scales differ by so many orders of magnitude that "
                f"X_list[{k}] cannot be resolved in the pooled coordinates (its covariance "
                f"there has a condition number of {ev[-1] / max(ev[0], 1e-300):.2g})."
                + _dominant_row_note(X_red)
                + (_clamped_note(X_list, n_latent) if X_list is not None else "")
            )
            error.environment_ranks = ranks  # read by the clamped reading
            raise error


def _clamped_note(X_list: list[np.ndarray], n_latent: int, tol: float = 1e-12) -> str:
    """A sentence naming the environments whose data span fewer than ``n_latent`` directions.

    Ranks are read in each environment's own centred data (singular values
    above ``tol`` times its largest: exact degeneracy, not a scale lost in
    the pooled coordinates). Interventions that clamp latents to constants
    produce such environments: one that clamps m latents varies in
    ``n_latent - m`` directions.
    """
    ranks = environment_ranks(X_list, tol)
    low = [k for k, r in enumerate(ranks) if r < n_latent]
    if not low:
        return ""
    which = ", ".join(f"X_list[{k}]: rank {ranks[k]}" for k in low)
    return (f" {len(low)} of the {len(X_list)} environments vary in fewer than {n_latent} "
            f"directions ({which}). If the environments are interventions, that is what "
            "interventions that clamp latents to constants produce (an environment that "
            f"clamps m latents varies in {n_latent} - m directions). When every "
            "environment is such, CREATOR.fit reads in-memory data with its clamped reading "
            "(creator_plugin.clamped); creator "
            "bench's other interventional methods (LinCD, LSCALE-I, UMNI-CRL: an observational "
            "environment plus interventions that leave every latent varying) do not fit "
            "such data; methods built for clamped multi-node interventions (Multi-Node-CRL, "
            "Bing et al. 2024) do, and they are not part of this package.")


def _check_magnitudes(magnitude: np.ndarray) -> None:
    low, high = MAGNITUDE_RANGE
    bad = np.flatnonzero((magnitude > 0) & ((magnitude < low) | (magnitude > high)))
    if bad.size:
        raise ValueError(
            f"X_list: columns {bad.tolist()} have values of magnitude up to "
            f"{magnitude[bad[0]]:.1e}, outside [{low:.0e}, {high:.0e}], where float64 "
            "arithmetic loses precision (subnormal numbers or overflowing squares). Rescale "
            "those columns, e.g. divide each by its largest absolute value: with "
            "standardize=True the fit does not depend on column units."
        )


def _check_rank(
    eigvals: np.ndarray, n_latent: int, rank_tol: float, partly_constant: np.ndarray
) -> None:
    if eigvals.size < n_latent or eigvals[n_latent - 1] <= rank_tol * eigvals[0]:
        rank = int(np.sum(eigvals > rank_tol * eigvals[0]))
        hint = (
            f" Columns {partly_constant.tolist()} were ignored because they are constant "
            "within some environments." if partly_constant.size else ""
        )
        raise ValueError(
            f"X_list is rank deficient: the pooled data spans only {rank} directions, "
            f"fewer than n_latent={n_latent}. Reduce n_latent or remove collinear columns."
            + hint
        )


def _r2_on_other_columns(factor: np.ndarray) -> np.ndarray:
    """Pooled R^2 of every column on all the others, from a factor ``F`` of ``Z^T Z = F^T F``.

    ``R^2_j = 1 - 1 / (C^-1)_jj`` for the correlation matrix ``C``, with the
    diagonal of the inverse taken from the eigendecomposition of ``C``
    (the SVD of the column-normalised factor); no ``p x p`` inverse.
    """
    f = factor / np.linalg.norm(factor, axis=0)
    _, s, vt = np.linalg.svd(f, full_matrices=False)
    return _r2_from_spectrum(s**2, vt)


def _r2_from_spectrum(eigvals: np.ndarray, vt: np.ndarray) -> np.ndarray:
    """``1 - 1 / (C + ridge I)^-1_jj`` for a correlation matrix ``C = vt.T diag(eigvals) vt``."""
    precision_diag = (vt**2 / (eigvals + _R2_RIDGE)[:, None]).sum(axis=0)
    return 1.0 - 1.0 / precision_diag


def _dominant_row(centred: list[np.ndarray]) -> tuple[float, int, int, int]:
    """Largest share of a column's pooled sum of squares carried by one row.

    ``centred``: every environment centred on its own mean. Returns the share,
    the environment, the row and the column where it is.
    """
    total = sum((x**2).sum(axis=0) for x in centred)
    total = np.where(total > 0, total, np.inf)
    best = (0.0, 0, 0, 0)
    for k, x in enumerate(centred):
        if x.size:
            sq = x**2 / total
            i, j = np.unravel_index(int(np.argmax(sq)), sq.shape)
            if sq[i, j] > best[0]:
                best = (float(sq[i, j]), k, int(i), int(j))
    return best


def _dominant_row_note(X_red: list[np.ndarray], share: float = 0.5) -> str:
    """A sentence naming a row that carries most of a kept direction's variance, or ''.

    A gross outlier (a data error) makes a direction of its own in the pooled
    principal components; the environments without it then do not vary there.
    """
    found, k, i, _ = _dominant_row(X_red)
    if found <= share:
        return ""
    return (f" One row carries {found:.0%} of a kept direction's variance (row {i} "
            f"of X_list[{k}]): an outlier or a data error makes a direction of its own; "
            "check that row.")
