"""Gaussian measurement noise on the observed columns: its estimate and the corrected moments.

The model of the fit is ``x = H y`` with ``p >= d`` columns. Real
measurements carry their own noise, ``x = H y + e``: the reduction then keeps
``e``'s share in the d latent directions, and every *second moment* the fit
reads from the reduced data (the covariances that whiten the ordering's ICA,
the regressions that take earlier noises out of the residuals, the
canonical form of the directions, the pruning's regressions of noises on
features, the disentanglement's covariances) is that of signal plus noise.
Regressions on noisy regressors are attenuated (errors in variables), so a
non-edge gets a coefficient of the size of the noise's share instead of 0.
Cumulants of order 3 and more, which the ICA contrasts read, are blind to
Gaussian noise; second moments are not.

With ``e`` Gaussian and, in the units the reduction works in (every column
divided by its pooled SD with ``standardize=True``), of the same variance
``sigma2_k`` in every column of environment k, the reduced data's noise has
covariance ``sigma2_k P^T P`` (``P`` the reduction's ``p x d`` projection).
``sigma2_k`` is the variance per dimension the reduction discards:
``(trace S_k - trace(U^T S_k U)) / (p - d)``, with ``S_k`` environment k's
covariance and ``U`` an orthonormal basis of the kept subspace, which is the
maximum-likelihood estimate of probabilistic PCA (Tipping and Bishop, 1999)
restricted to one environment. When ``p == d`` nothing is discarded and
there is nothing to correct.

A corrected covariance ``S_k / n - sigma2_k P^T P`` must stay positive
definite. When the estimate is larger than the data of an environment
allow (some direction's variance there is mostly noise, or the estimate
picked up signal outside the subspace) it is shrunk so that the smallest
eigenvalue of the corrected covariance, relative to the noise metric
``P^T P``, stays :data:`PD_MARGIN_SDS` sampling SDs (``sqrt(2 / n_k)``
relative) above zero: the correction never removes variance that the
sample cannot tell apart from all of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ._passes import column_moments

__all__ = [
    "MEASUREMENT_NOISE_OPTIONS",
    "PD_MARGIN_SDS",
    "MeasurementNoise",
    "check_measurement_noise",
    "corrected_pruning_moments",
    "estimate_measurement_noise",
]

#: Accepted values of ``CREATOR(measurement_noise=...)``.
MEASUREMENT_NOISE_OPTIONS = ("auto", None)

#: The corrected covariance's smallest eigenvalue (in the noise metric) is kept at
#: least this many sampling SDs of a variance estimate (``sqrt(2 / n_k)`` times the
#: raw eigenvalue) above zero.
PD_MARGIN_SDS = 3.0


def check_measurement_noise(value) -> None:
    """Raise a ValueError naming ``measurement_noise`` unless ``value`` is accepted."""
    if not (value is None or (isinstance(value, str) and value == "auto")):
        raise ValueError(
            f"measurement_noise must be 'auto' or None, got {value!r}.")


@dataclass(frozen=True)
class MeasurementNoise:
    """The estimated measurement noise of every environment, in reduced coordinates.

    Attributes
    ----------
    variance : ndarray (K,)
        Noise variance per column (in the reduction's units) used for the
        correction, after shrinkage.
    estimate : ndarray (K,)
        The estimate before shrinkage.
    scatters : list of ndarray (d, d)
        ``n_k * variance[k] * P^T P``: the noise's share of ``X_red[k]^T X_red[k]``.
    """

    variance: np.ndarray
    estimate: np.ndarray
    scatters: list

    def to_dict(self) -> dict:
        """The per-environment estimates, for ``diagnostics_``."""
        return {"variance": self.variance.tolist(), "estimate": self.estimate.tolist(),
                "shrunk": (self.variance < self.estimate).tolist()}

    def signal_grams(self, grams: list[np.ndarray]) -> list[np.ndarray]:
        """``X_red[k]^T X_red[k]`` minus the noise's share, for every k."""
        return [g - s for g, s in zip(grams, self.scatters)]


def estimate_measurement_noise(X_list: list, X_red: list[np.ndarray], reduction) -> (
        MeasurementNoise | None):
    """Estimate the measurement noise of every environment (None when nothing is discarded).

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        The data the reduction was computed from (read once, column moments only).
    X_red : list of ndarray (n_k, d)
        The reduced data.
    reduction : creator_plugin.preprocessing.Reduction

    Returns
    -------
    MeasurementNoise or None
        None when at most d columns enter the reduction (``p == d``: the
        reduction discards nothing, so nothing can be estimated or corrected).
    """
    d = X_red[0].shape[1]
    kept = np.isfinite(reduction.scale)
    n_discarded = int(kept.sum()) - d
    if n_discarded <= 0:
        return None
    moments = column_moments(X_list)
    # Column variances of every environment in the reduction's units (divisor n_k).
    total = ((moments.sds[:, kept] / reduction.scale[kept]) ** 2).sum(axis=1)
    # X_red = Z U diag(eig)^-1/2 with U orthonormal: the kept variance is
    # sum_j eig_j var_k(X_red[:, j]).
    eig = reduction.explained_variance[:d]
    P = reduction.projection[kept]
    metric = P.T @ P
    grams = [x.T @ x for x in X_red]
    n_rows = np.array([x.shape[0] for x in X_red], dtype=float)
    kept_var = np.array([np.diag(g) @ eig for g in grams]) / n_rows
    estimate = np.maximum(total - kept_var, 0.0) / n_discarded
    variance = estimate.copy()
    for k, (g, n) in enumerate(zip(grams, n_rows)):
        # Smallest eigenvalue of the covariance relative to the noise metric.
        low = float(linalg.eigh(g / n, metric, eigvals_only=True)[0])
        ceiling = max(low * (1.0 - PD_MARGIN_SDS * np.sqrt(2.0 / n)), 0.0)
        variance[k] = min(estimate[k], ceiling)
    scatters = [n * v * metric for n, v in zip(n_rows, variance)]
    return MeasurementNoise(variance, estimate, scatters)


def corrected_pruning_moments(
    signal_grams: list[np.ndarray], n_rows, alphas: np.ndarray, noise_maps: list[np.ndarray]
):
    """The pruning step's regressions and scales from the noise-corrected moments.

    The same quantities as the fit's pruning step computes from the data
    (:func:`creator_plugin.sem.regression_matrices`,
    :func:`creator_plugin.pruning.standardised_coefficients`), with every
    ``X_red[k]^T X_red[k]`` replaced by its signal part.

    Parameters
    ----------
    signal_grams : list of ndarray (d, d)
        :meth:`MeasurementNoise.signal_grams`.
    n_rows : sequence of int
    alphas : ndarray (d, d)
        The ordering's directions.
    noise_maps : list of ndarray (d, d)
        The ordering's noise maps.

    Returns
    -------
    B : ndarray (K, d, d)
        Noises regressed on the unit-variance features.
    tested : ndarray (K, d, d)
        Their scale-free version.
    alphas : ndarray (d, d)
        The directions scaled to unit pooled signal variance.
    feature_sd : ndarray (d,)
        The pooled signal SD of every direction's feature.
    """
    n_total = float(np.sum(n_rows))
    d = alphas.shape[1]
    feature_sd = np.sqrt(sum(np.diag(alphas.T @ g @ alphas) for g in signal_grams) / n_total)
    a = alphas / feature_sd
    covs = [a.T @ g @ a for g in signal_grams]
    B = np.stack([np.linalg.solve(c, a.T @ g @ t).T
                  for c, g, t in zip(covs, signal_grams, noise_maps)])
    z_sd = np.sqrt(sum(np.diag(t.T @ g @ t) for g, t in zip(signal_grams, noise_maps)) / n_total)
    ss = np.zeros(d)
    for c in covs:
        ss[0] += c[0, 0]
        for j in range(1, d):
            ss[j] += c[j, j] - c[j, :j] @ np.linalg.solve(c[:j, :j], c[:j, j])
    innov = np.sqrt(ss / n_total)
    tested = B * innov[None, None, :] / z_sd[None, :, None]
    return B, tested, a, feature_sd
