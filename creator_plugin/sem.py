"""Linear SEM helpers over recovered features: pooled scales, regressions, OLS weights.

Used by the pruning step, the fit and the benchmarks, so every part of the
package computes these quantities the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._passes import column_moments, row_blocks

__all__ = [
    "SEMParameters",
    "centred_scatter",
    "feature_moments",
    "ols_weights",
    "pooled_innovation_sd",
    "pooled_sd",
    "regression_matrices",
    "sem_noise",
    "sem_parameters",
]


def pooled_sd(arrays: list) -> np.ndarray:
    """Pooled within-environment SD of every column.

    From :func:`creator_plugin._passes.column_moments`: one block of rows at
    a time in every column's own units (no square overflows or underflows,
    no copy and no ``c x c`` matrix), through dask for dask arrays.

    Parameters
    ----------
    arrays : list of ndarray or dask array (n_k, c)
        One array per environment; each is centred on its own mean.

    Returns
    -------
    ndarray (c,)
    """
    m = column_moments(arrays)
    unit = np.where(np.isfinite(m.magnitude) & (m.magnitude > 0), m.magnitude, 1.0)
    return unit * np.sqrt((m.n_rows[:, None] * (m.sds / unit) ** 2).sum(axis=0) / m.n_rows.sum())


def regression_matrices(noises: list[np.ndarray], entangled: list[np.ndarray]) -> np.ndarray:
    """Per environment, the noises regressed on the features (no intercept).

    Parameters
    ----------
    noises : list of ndarray (n_k, d)
        ``Zhat[k]``.
    entangled : list of ndarray (n_k, d)
        ``Ytilde[k]``.

    Returns
    -------
    ndarray (K, d, d)
        ``B[k]`` with ``Zhat[k] ~= Ytilde[k] @ B[k].T``.
    """
    return np.stack([np.linalg.lstsq(Y, Z, rcond=None)[0].T for Z, Y in zip(noises, entangled)])


def pooled_innovation_sd(entangled: list[np.ndarray]) -> np.ndarray:
    """Pooled SD of the part of each feature not explained by the earlier features.

    Parameters
    ----------
    entangled : list of ndarray (n_k, d)
        Centred features in their order.

    Returns
    -------
    ndarray (d,)
    """
    d = entangled[0].shape[1]
    ss = np.zeros(d)
    n = 0
    for Y in entangled:
        n += Y.shape[0]
        ss[0] += Y[:, 0] @ Y[:, 0]
        for j in range(1, d):
            coef, *_ = np.linalg.lstsq(Y[:, :j], Y[:, j], rcond=None)
            r = Y[:, j] - Y[:, :j] @ coef
            ss[j] += r @ r
    return np.sqrt(ss / n)


def centred_scatter(Y: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """``(Y - mean)^T (Y - mean)`` (c, c), centring one block of rows at a time.

    Parameters
    ----------
    Y : ndarray (n, c)
    mean : ndarray (c,)
    """
    out = np.zeros((Y.shape[1], Y.shape[1]))
    for rows in row_blocks(Y.shape[0], Y.shape[1]):
        c = Y[rows] - mean
        out += c.T @ c
    return out


def feature_moments(arrays) -> tuple[np.ndarray, list[np.ndarray]]:
    """The uncentred gram ``sum_k Y_k.T @ Y_k`` (c, c) and every environment's centred scatter.

    Parameters
    ----------
    arrays : sequence of ndarray (n_k, c)
        Read one environment at a time (e.g. a ``MappedArrays``).

    Returns
    -------
    gram : ndarray (c, c)
    scatters : list of ndarray (c, c)
    """
    gram, scatters = None, []
    for y in arrays:
        gram = y.T @ y if gram is None else gram + y.T @ y
        scatters.append(centred_scatter(y, y.mean(axis=0)))
    return gram, scatters


def ols_weights(cov: np.ndarray, adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SEM weights by OLS of every latent on its parents, from the latents' covariance.

    Parameters
    ----------
    cov : ndarray (d, d)
        Covariance matrix of the latent features (one environment).
    adjacency : ndarray (d, d)
        ``[j, i] != 0`` iff ``j -> i``.

    Returns
    -------
    W : ndarray (d, d)
        ``W[j, i]``: effect of j on i.
    residual_variance : ndarray (d,)
        Variance of every latent's residual on its parents (its own variance
        for roots).
    """
    d = cov.shape[0]
    W = np.zeros((d, d))
    for i in range(d):
        pa = np.flatnonzero(adjacency[:, i])
        if pa.size:
            W[pa, i] = np.linalg.lstsq(cov[np.ix_(pa, pa)], cov[pa, i], rcond=None)[0]
    eye = np.eye(d)
    residual_variance = np.einsum("ji,jk,ki->i", eye - W, cov, eye - W)
    return W, np.maximum(residual_variance, 0.0)


@dataclass
class SEMParameters:
    """Per-environment linear SEM over recovered latents.

    ``latents[k] - intercepts[k] = (latents[k] - intercepts[k]) @ weights[k] + noise[k]``
    with ``noise`` from :func:`sem_noise`.

    Attributes
    ----------
    intercepts : list of ndarray (d,)
    weights : list of ndarray (d, d)
        ``[j, i]``: effect of latent j on latent i.
    noise_scales : list of ndarray (d,)
        SD of every environment's noise.
    """

    intercepts: list[np.ndarray]
    weights: list[np.ndarray]
    noise_scales: list[np.ndarray]


def sem_parameters(latents: list[np.ndarray], adjacency: np.ndarray) -> SEMParameters:
    """Fit the SEM of every environment by OLS of each latent on its parents.

    Works on every environment's ``d x d`` covariance, so it allocates
    nothing of size n.

    Parameters
    ----------
    latents : list of ndarray (n_k, d)
        Latent features (not centred).
    adjacency : ndarray (d, d)
        ``[j, i] != 0`` iff ``j -> i``.

    Returns
    -------
    SEMParameters
    """
    intercepts = [L.mean(axis=0) for L in latents]
    weights, scales = [], []
    for L, mu in zip(latents, intercepts):
        W, var = ols_weights(centred_scatter(L, mu) / L.shape[0], adjacency)
        weights.append(W)
        scales.append(np.sqrt(var))
    return SEMParameters(intercepts, weights, scales)


def sem_noise(
    latents: list[np.ndarray], intercepts: list[np.ndarray], weights: list[np.ndarray]
) -> list[np.ndarray]:
    """Noise of every environment: ``(latents[k] - intercepts[k]) @ (I - weights[k])``.

    Parameters
    ----------
    latents : list of ndarray (n_k, d)
    intercepts : list of ndarray (d,)
    weights : list of ndarray (d, d)

    Returns
    -------
    list of ndarray (n_k, d)
    """
    out = []
    for L, mu, W in zip(latents, intercepts, weights):
        E = L - mu
        out.append(E - E @ W)
    return out
