"""Step 0: per-environment centering and one shared reduction to d dimensions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Reduction", "reduce_environments"]


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
        Pooled within-environment standard deviation of every column (1 for
        columns that were not standardised).
    projection : ndarray (p, d)
    explained_variance : ndarray (min(n, p),)
        Pooled eigenvalue spectrum of the scaled data (for choosing d).
    dropped_columns : ndarray of int
        Columns that are constant within every environment (they carry no
        information about the latents and are ignored).
    unrelated_columns : ndarray of int
        Columns whose pooled R^2 on all other columns is below 0.1 (only
        checked when p > d): in the model every column is a combination of
        the same d latents, so such a column is most likely pure noise, which
        standardisation would give full weight.
    """

    env_means: np.ndarray
    scale: np.ndarray
    projection: np.ndarray
    explained_variance: np.ndarray
    dropped_columns: np.ndarray
    unrelated_columns: np.ndarray


def reduce_environments(
    X_list: list[np.ndarray], n_latent: int, *, standardize: bool = True, rank_tol: float = 1e-13
) -> tuple[list[np.ndarray], Reduction]:
    """Center each environment and project all onto one pooled PCA subspace.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    n_latent : int
        Dimension d of the reduction.
    standardize : bool, default=True
        Divide every column by its pooled within-environment standard
        deviation first, which makes the whole fit invariant to rescaling
        observed columns.
    rank_tol : float
        Relative eigenvalue below which the pooled data is called rank
        deficient.

    Returns
    -------
    X_red : list of ndarray (n_k, d)
        Reduced, per-environment centred data (pooled covariance = identity).
    reduction : Reduction

    Raises
    ------
    ValueError
        If the pooled data has fewer than ``n_latent`` non-negligible
        directions, or an environment's reduced data is rank deficient.
    """
    env_means = np.stack([x.mean(axis=0) for x in X_list])
    centred = [x - m for x, m in zip(X_list, env_means)]
    pooled = np.vstack(centred)
    sd = pooled.std(axis=0)
    max_sd = sd.max() if sd.size else 0.0
    if max_sd == 0.0:
        raise ValueError("X_list: every column is constant within every environment.")
    dropped = np.flatnonzero(sd <= 1e-12 * max_sd)
    scale = sd.copy() if standardize else np.ones_like(sd)
    scale[dropped] = np.inf  # a constant column maps to exactly zero
    pooled = pooled / scale
    # Pooled PCA through the SVD of the stacked data (memory linear in n).
    _, s, vt = np.linalg.svd(pooled, full_matrices=False)
    eigvals = s**2 / pooled.shape[0]
    if eigvals.size < n_latent or eigvals[n_latent - 1] <= rank_tol * eigvals[0]:
        rank = int(np.sum(eigvals > rank_tol * eigvals[0]))
        raise ValueError(
            f"X_list is rank deficient: the pooled data spans only {rank} directions, "
            f"fewer than n_latent={n_latent}. Reduce n_latent or remove collinear columns."
        )
    loadings = vt[:n_latent].T
    # Deterministic signs: largest-magnitude loading positive (as sklearn's svd_flip).
    signs = np.sign(loadings[np.argmax(np.abs(loadings), axis=0), np.arange(n_latent)])
    loadings = loadings * signs
    projection = loadings / np.sqrt(eigvals[:n_latent])
    X_red = [(c / scale) @ projection for c in centred]
    for k, xr in enumerate(X_red):
        sv = np.linalg.svd(xr, compute_uv=False)
        if sv[-1] <= 1e-6 * sv[0]:
            raise ValueError(
                f"X_list[{k}] is rank deficient within the shared {n_latent}-dim latent "
                "subspace: some latent direction does not vary in that environment."
            )
    return X_red, Reduction(
        env_means, scale, projection, eigvals, dropped, _unrelated_columns(pooled, n_latent)
    )


def _unrelated_columns(pooled: np.ndarray, n_latent: int, min_r2: float = 0.1) -> np.ndarray:
    """Columns with pooled R^2 < ``min_r2`` on the other columns (p > d only)."""
    keep = np.flatnonzero(pooled.std(axis=0) > 0)
    if keep.size <= n_latent:
        return np.array([], dtype=int)
    corr = np.corrcoef(pooled[:, keep], rowvar=False)
    # R^2_j = 1 - 1 / (C^-1)_jj; the small ridge keeps exact duplicates finite (R^2 ~ 1).
    prec = np.linalg.inv(corr + 1e-9 * np.eye(keep.size))
    r2 = 1.0 - 1.0 / np.diag(prec)
    return keep[r2 < min_r2]
