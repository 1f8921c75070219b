"""Linear SEM helpers over recovered features: pooled scales, regressions, OLS weights.

Used by the pruning step, the fit and the benchmarks, so every part of the
package computes these quantities the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SEMParameters",
    "ols_weights",
    "pooled_innovation_sd",
    "pooled_sd",
    "regression_matrices",
    "sem_parameters",
]


def pooled_sd(arrays: list[np.ndarray]) -> np.ndarray:
    """Pooled within-environment SD of every column.

    Parameters
    ----------
    arrays : list of ndarray (n_k, c)
        One array per environment; each is centred on its own mean.

    Returns
    -------
    ndarray (c,)
    """
    ss = sum(((a - a.mean(axis=0)) ** 2).sum(axis=0) for a in arrays)
    return np.sqrt(ss / sum(a.shape[0] for a in arrays))


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


def ols_weights(Y: np.ndarray, adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SEM weights and residuals of centred latents by OLS on the given parents.

    Parameters
    ----------
    Y : ndarray (n, d)
        Centred latent features.
    adjacency : ndarray (d, d)
        ``[j, i] != 0`` iff ``j -> i``.

    Returns
    -------
    W : ndarray (d, d)
        ``W[j, i]``: effect of j on i.
    E : ndarray (n, d)
        Residual of every column on its parents (the column itself for roots).
    """
    d = Y.shape[1]
    W = np.zeros((d, d))
    E = Y.copy()
    for i in range(d):
        pa = np.flatnonzero(adjacency[:, i])
        if pa.size:
            coef, *_ = np.linalg.lstsq(Y[:, pa], Y[:, i], rcond=None)
            W[pa, i] = coef
            E[:, i] = Y[:, i] - Y[:, pa] @ coef
    return W, E


@dataclass
class SEMParameters:
    """Per-environment linear SEM over recovered latents.

    ``latents[k] - intercepts[k] = (latents[k] - intercepts[k]) @ weights[k] + noise[k]``.

    Attributes
    ----------
    intercepts : list of ndarray (d,)
    weights : list of ndarray (d, d)
        ``[j, i]``: effect of latent j on latent i.
    noise : list of ndarray (n_k, d)
    noise_scales : list of ndarray (d,)
    """

    intercepts: list[np.ndarray]
    weights: list[np.ndarray]
    noise: list[np.ndarray]
    noise_scales: list[np.ndarray]


def sem_parameters(latents: list[np.ndarray], adjacency: np.ndarray) -> SEMParameters:
    """Fit the SEM of every environment by OLS of each latent on its parents.

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
    weights, noise = [], []
    for L, mu in zip(latents, intercepts):
        W, E = ols_weights(L - mu, adjacency)
        weights.append(W)
        noise.append(E)
    return SEMParameters(intercepts, weights, noise, [E.std(axis=0) for E in noise])
