"""Gaussian measurement noise on the observed columns: its estimate and the corrected moments.

The model of the fit is ``x = H y`` with ``p >= d`` columns. Real
measurements carry their own noise, ``x = H y + e``: the reduction keeps
``e``'s share in the d latent directions, and every *second moment* the fit
reads from the reduced data is that of signal plus noise. Regressions on
noisy regressors are attenuated (errors in variables): a noise recovered
as the residual of a feature on the earlier ones keeps a share of them,
and the pruning's regressions give non-edges coefficients of the size of
the noise's share instead of 0. Cumulants of order 3 and more, which the
ICA contrasts read, are blind to Gaussian noise; second moments are not.

Estimate (:func:`estimate_measurement_noise`). The part of environment k's
covariance outside the reduction's d-dimensional subspace is noise only.
With ``Q`` the projection onto the discarded directions and the noise's
covariance ``diag(psi_k)`` (one variance per column, in the reduction's
units), ``E[diag(Q S_k Q)] = (Q * Q) psi_k``: one linear equation per
column, solved when the discarded dimension ``q = p - d`` has
``q (q + 1) / 2 >= p``; with fewer discarded directions the model is one
variance per environment (probabilistic PCA's estimate, the mean
discarded variance per dimension). When ``p == d`` nothing is discarded:
there is nothing to estimate and nothing changes.

Positive definiteness. A corrected covariance ``S_k - N_k`` must stay
positive definite. When the estimate is larger than an environment's data
allow (a direction whose variance there is mostly noise, or sampling
error), the noise covariance is shrunk by a factor so that in every
direction the corrected variance keeps at least :data:`PD_MARGIN_SDS`
sampling SDs of a variance estimate (``sqrt(2 / n_k)`` of the raw
variance): the correction never removes variance that the sample cannot
tell apart from all of it.

Where it is applied (``RefineOptions(measurement_noise=True)``): after the
ordering's search, whose order is left as found. The polish re-estimates
the directions with the noises taken as Gram-Schmidt residuals in the
signal's covariance, each standardised by its actual SD
(:func:`polish_signal`); the canonical form and the noise maps are
recomputed from the corrected moments (:func:`corrected_ordering`); the
pruning's regressions and scales (:func:`corrected_pruning_moments`) and
the likelihood disentanglement's covariances read them too. The search
itself (ICA whitening, residuals on the earlier noises) is not corrected:
on the tuning workloads a quasi-whitened ICA and corrected residuals gave
more wrong orders (benchmarks/LOG.md).

The ``"auto"`` rule: off. On 100 simulated data sets with 5 % measurement
noise (p = 4d, two simulators) the correction lowered the mean SHD from 0.79
to 0.58 (docs/results/zoo.md, "Data with measurement noise"); on earlier
blocks, before the graph revision was a default, it changed little, so it
runs only when asked for. It changes nothing when the data have as many
columns as latents (nothing is discarded) or in the paper's mode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg
from scipy.sparse import linalg as sparse_linalg

from .._passes import column_moments, encode, row_blocks
from ..joint_ica import (
    GAUSS_LOGCOSH,
    POLISH_MAX_ROWS,
    SKEW_WEIGHT,
    SingularDirections,
    cholesky_gradient,
    polish_directions,
)
from ..ordering import canonical_from_moments, ordered_noise_maps

__all__ = [
    "MEASUREMENT_NOISE_OPTIONS",
    "PD_MARGIN_SDS",
    "MeasurementNoise",
    "SignalContrast",
    "check_measurement_noise",
    "corrected_ordering",
    "corrected_pruning_moments",
    "pruning_coefficients",
    "estimate_measurement_noise",
    "noise_of_variances",
    "noise_shares",
    "polish_signal",
    "pooled_innovation_sd_of",
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
    variances : ndarray (K, p)
        Noise variance of every column in every environment, in the
        reduction's units (0 for the columns the reduction ignores), as
        estimated.
    model : {"diagonal", "isotropic"}
        ``"diagonal"``: a variance per column (identified when the discarded
        dimension ``q = p - d`` has ``q (q + 1) / 2 >= p``); ``"isotropic"``:
        one variance per environment, shared by its columns.
    shrinkage : ndarray (K,)
        Factor in ``(0, 1]`` every environment's noise covariance was
        multiplied by to keep the corrected covariance positive definite
        (1: not shrunk).
    scatters : list of ndarray (d, d)
        The noise's share of ``X_red[k]^T X_red[k]``: ``n_k * shrinkage[k] *
        P^T diag(variances[k]) P``.
    """

    variances: np.ndarray
    model: str
    shrinkage: np.ndarray
    scatters: list

    def to_dict(self) -> dict:
        """The per-environment estimates (mean over columns), for ``diagnostics_``."""
        return {"model": self.model, "mean_variance": self.variances.mean(axis=1).tolist(),
                "shrinkage": self.shrinkage.tolist()}

    def signal_grams(self, grams: list[np.ndarray]) -> list[np.ndarray]:
        """``X_red[k]^T X_red[k]`` minus the noise's share, for every k."""
        return [g - s for g, s in zip(grams, self.scatters)]


def estimate_measurement_noise(X_list: list, X_red: list[np.ndarray], reduction) -> (
        MeasurementNoise | None):
    """Estimate the measurement noise of every environment (None when nothing is discarded).

    The part of environment k's covariance ``S_k`` outside the reduction's
    subspace is noise only: with ``Q = I - U U^T`` (``U`` an orthonormal basis
    of the kept subspace) and noise covariance ``diag(psi_k)``,
    ``E[diag(Q S_k Q)] = (Q * Q) psi_k`` (elementwise square). This linear
    system gives an unbiased estimate of every column's noise variance
    (negative solutions, sampling error, are set to 0) when the discarded
    dimension ``q = p - d`` leaves enough equations, ``q (q + 1) / 2 >= p``;
    otherwise the model is one variance per environment, the mean variance
    per discarded dimension (probabilistic PCA's estimate).

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        The data the reduction was computed from (read once more).
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
    q = int(kept.sum()) - d
    if q <= 0:
        return None
    scale = reduction.scale[kept]
    eig = reduction.explained_variance[:d]
    P = reduction.projection[kept]
    U = P * np.sqrt(eig)  # orthonormal basis of the kept subspace
    grams = [x.T @ x for x in X_red]
    n_rows = np.array([x.shape[0] for x in X_red], dtype=float)
    moments = column_moments(X_list)
    to_reduced = reduction.projection / reduction.scale[:, None]
    variances = np.zeros((len(X_red), reduction.scale.size))
    diagonal = q * (q + 1) // 2 >= kept.sum()
    for k, (x, g, n) in enumerate(zip(X_list, grams, n_rows)):
        column_var = (moments.sds[k, kept] / scale) ** 2
        if diagonal:
            # Cross moments of the reduced with the standardised data (one pass).
            cross = encode([x], reduction.env_means[k], to_reduced, reduction.scale,
                           reduction.env_means[k:k + 1])[2][:, kept] / n
            discarded = (column_var - 2.0 * np.einsum("jm,mj->j", U, np.sqrt(eig)[:, None] * cross)
                         + np.einsum("jm,mi,ji->j", U, np.sqrt(np.outer(eig, eig)) * g / n, U))
            variances[k, kept] = np.maximum(_solve_schur_square(U, discarded), 0.0)
        else:
            kept_var = np.diag(g) @ eig / n
            variances[k, kept] = max(float(column_var.sum() - kept_var), 0.0) / q
    return noise_of_variances(variances, "diagonal" if diagonal else "isotropic", X_red,
                              reduction, grams=grams)


def noise_of_variances(variances: np.ndarray, model: str, X_red: list[np.ndarray],
                       reduction, *, grams: list[np.ndarray] | None = None
                       ) -> MeasurementNoise:
    """The :class:`MeasurementNoise` of given column variances.

    Every environment's noise covariance is shrunk, as in
    :func:`estimate_measurement_noise`, so that the corrected covariance
    stays positive definite (see the module docstring).

    Parameters
    ----------
    variances : ndarray (K, p)
        Noise variance of every column in every environment, in the
        reduction's units (``MeasurementNoise.variances``).
    model : {"diagonal", "isotropic"}
        Recorded as is.
    X_red : list of ndarray (n_k, d)
        The reduced data.
    reduction : creator_plugin.preprocessing.Reduction
    grams : list of ndarray (d, d), optional
        ``x.T @ x`` of every environment's reduced data, when already
        computed; by default they are computed from ``X_red``.

    Returns
    -------
    MeasurementNoise
    """
    kept = np.isfinite(reduction.scale)
    P = reduction.projection[kept]
    if grams is None:
        grams = [x.T @ x for x in X_red]
    elif len(grams) != len(X_red):
        raise ValueError(f"grams has {len(grams)} matrices; X_red has {len(X_red)} environments")
    shrinkage = np.ones(len(X_red))
    scatters = []
    for k, (x, g) in enumerate(zip(X_red, grams)):
        n = float(x.shape[0])
        noise = (P.T * variances[k, kept]) @ P
        # Largest share of noise in any direction: eigenvalue of (noise, g / n).
        share = float(linalg.eigh(noise, g / n, eigvals_only=True)[-1])
        ceiling = 1.0 - PD_MARGIN_SDS * np.sqrt(2.0 / n)
        if share > ceiling:
            shrinkage[k] = max(ceiling, 0.0) / share
        scatters.append(n * shrinkage[k] * noise)
    return MeasurementNoise(variances, model, shrinkage, scatters)


def noise_shares(noise: MeasurementNoise, components: np.ndarray, scale: np.ndarray,
                 noise_sds: list[np.ndarray], weights: list[np.ndarray]) -> np.ndarray:
    """Share of every recovered SEM noise's variance that is measurement noise.

    The SEM noise of node i in environment k is a linear map of the data,
    ``(x - mean) @ components.T @ (I - weights[k])[:, i]``; measurement noise
    with column variances ``psi_k`` (the estimate as estimated, before any
    shrinkage: on simulated data it tracks the true share more closely than
    the shrunk one) contributes ``sum_j psi_kj v_ji^2`` to its variance, where
    ``v`` is that map in the reduction's standardised units. A share near 1
    means the data hardly show that node's own noise in that environment:
    its place in the order and its edges rest on little signal there.

    Parameters
    ----------
    noise : MeasurementNoise
    components : ndarray (d, p)
        The fit's map from centred data to features (``components_``).
    scale : ndarray (p,)
        The reduction's column scales (non-finite for ignored columns).
    noise_sds : list of ndarray (d,)
        Every environment's SEM noise SDs (the fit's ``noise_scales_``).
    weights : list of ndarray (d, d)
        Every environment's SEM weights (``[j, i]``: j -> i).

    Returns
    -------
    ndarray (K, d)
        In ``[0, 1]`` (a share above 1, sampling error, is reported as 1).
    """
    kept = np.isfinite(scale)
    V = (components[:, kept] * scale[kept]).T  # in standardised units
    d = V.shape[1]
    out = np.empty((len(weights), d))
    for k, (W, sd) in enumerate(zip(weights, noise_sds)):
        maps = V @ (np.eye(d) - W)
        measured = noise.variances[k, kept] @ maps ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            out[k] = np.where(sd > 0, measured / np.asarray(sd) ** 2, 1.0)
    return np.clip(out, 0.0, 1.0)


def _solve_schur_square(U: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``((I - U U^T) * (I - U U^T)) psi = rhs`` (elementwise square) by conjugate gradients.

    The matrix is positive semi-definite (a Schur product of projections) and
    is applied in ``O(p d^2)`` without forming it: entry ``(i, j)`` is
    ``delta_ij (1 - 2 h_i) + (u_i . u_j)^2`` with ``h_i = |u_i|^2``.
    """
    h = np.einsum("ij,ij->i", U, U)

    def apply(v):
        v = np.ravel(v)
        return (1.0 - 2.0 * h) * v + np.einsum("im,mn,in->i", U, (U.T * v) @ U, U)

    p = rhs.size
    op = sparse_linalg.LinearOperator((p, p), matvec=apply, dtype=float)
    psi, _ = sparse_linalg.cg(op, rhs, rtol=1e-10, atol=0.0, maxiter=10 * p)
    return psi


def corrected_ordering(order, X_red: list[np.ndarray], noise: MeasurementNoise, *,
                       polish: bool = False):
    """The ordering's canonical directions and noise maps from the noise-corrected moments.

    The order and the directions' noises are the search's; what changes is
    their second-moment bookkeeping. The noise of position i is the
    residual of feature i on the earlier features: with noisy features that
    regression is attenuated and the residual keeps a share of the earlier
    noises, so the maps are recomputed as Gram-Schmidt residuals in the
    signal's covariance. The canonical form
    (:func:`creator_plugin.ordering.canonical_directions`), a regression on
    the earlier features too, is recomputed the same way (it does not depend
    on the directions' arbitrary part, so the search's canonical form is a
    valid start).

    Parameters
    ----------
    order : creator_plugin.ordering.OrderingResult
    X_red : list of ndarray (n_k, d)
    noise : MeasurementNoise
    polish : bool, default=False
        Re-estimate the directions first (:func:`polish_signal`, in place of
        the ordering's own polish).

    Returns
    -------
    creator_plugin.ordering.OrderingResult
    """
    raw = [x.T @ x for x in X_red]
    grams = noise.signal_grams(raw)
    n_rows = [x.shape[0] for x in X_red]
    if polish:
        polished, info = polish_signal(X_red, order.alphas, grams, raw)
        order = replace(order, alphas=polished, polish=info)
    maps = ordered_noise_maps(grams, n_rows, order.alphas)
    noise_var = [np.einsum("ij,ik,kj->j", T, S, T) / n for T, S, n in zip(maps, grams, n_rows)]
    alphas = canonical_from_moments(grams, order.alphas, noise_var)
    return replace(order, alphas=alphas, noise_maps=ordered_noise_maps(grams, n_rows, alphas))


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
    feature_sd = np.sqrt(sum(np.diag(alphas.T @ g @ alphas) for g in signal_grams) / n_total)
    a = alphas / feature_sd
    covs = [a.T @ g @ a for g in signal_grams]
    B = np.stack([np.linalg.solve(c, a.T @ g @ t).T
                  for c, g, t in zip(covs, signal_grams, noise_maps)])
    z_sd = np.sqrt(sum(np.diag(t.T @ g @ t) for g, t in zip(signal_grams, noise_maps)) / n_total)
    innov = pooled_innovation_sd_of(covs, n_total)
    tested = B * innov[None, None, :] / z_sd[None, :, None]
    return B, tested, a, feature_sd


def pruning_coefficients(X_red: list[np.ndarray], order, noise: MeasurementNoise) -> tuple:
    """:func:`corrected_pruning_moments` of a fit's reduced data and ordering.

    Returns ``(B, tested, alphas, feature_sd)``, what the fit's pruning step
    computes from the data without the correction
    (:func:`creator_plugin.pruning.prune_ordering`).
    """
    grams = noise.signal_grams([x.T @ x for x in X_red])
    return corrected_pruning_moments(grams, [x.shape[0] for x in X_red], order.alphas,
                                     order.noise_maps)


def pooled_innovation_sd_of(scatters: list[np.ndarray], n_total: float) -> np.ndarray:
    """Pooled SD of every feature's residual on the earlier ones, from per-environment scatters.

    As :func:`creator_plugin.sem.pooled_innovation_sd`, from the ``d x d``
    scatter matrices (sums over the rows) of the features instead of the data.

    Parameters
    ----------
    scatters : list of ndarray (d, d)
    n_total : float
        The number of rows summed over the environments.

    Returns
    -------
    ndarray (d,)
    """
    d = scatters[0].shape[0]
    ss = np.zeros(d)
    for c in scatters:
        ss[0] += c[0, 0]
        for j in range(1, d):
            ss[j] += c[j, j] - c[j, :j] @ np.linalg.solve(c[:j, :j], c[:j, j])
    return np.sqrt(ss / n_total)


def _signal_contrast(g, X_list, d, signal, raw):
    """The polish's contrast of the signal's Gram-Schmidt residuals, and its gradient.

    As the polish's own contrast (:class:`creator_plugin.joint_ica.OrderedContrast`),
    except that the residuals are taken in the signal's covariance (``signal[k]``, the
    corrected ``X_k^T X_k``), so that they hold no share of the earlier
    noises, and each is then standardised by its actual SD (from
    ``raw[k]``, noise included) before the contrast reads it: a contrast of
    an over-dispersed variable would be biased.
    """
    G = g.reshape(d, d)
    eye = np.eye(d)
    value, grad = 0.0, np.zeros((d, d))
    for X, S, R in zip(X_list, signal, raw):
        n = X.shape[0]
        try:
            L = np.linalg.cholesky(G @ S @ G.T / n)
        except np.linalg.LinAlgError:
            raise SingularDirections from None
        Linv = linalg.solve_triangular(L, eye, lower=True)
        M = G.T @ Linv.T  # Z = X M: residuals of the signal's Gram-Schmidt
        sd = np.sqrt(np.einsum("ij,ik,kj->j", M, R, M) / n)
        Mt = M / sd  # Zt = X Mt: standardised
        log_cosh, skew, tz, oz = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
        tanh_x, odd_x = np.zeros((d, d)), np.zeros((d, d))
        for rows in row_blocks(n, 16 * d):
            Xb = X[rows]
            Z = Xb @ Mt
            a = np.abs(Z)
            log_cosh += (a + np.log1p(np.exp(-2.0 * a))).sum(axis=0)
            E = np.exp(-0.5 * Z**2)
            skew += (Z * E).sum(axis=0)
            T = np.tanh(Z)
            odd = (1.0 - Z**2) * E
            tz += (T * Z).sum(axis=0)
            oz += (odd * Z).sum(axis=0)
            tanh_x += T.T @ Xb
            odd_x += odd.T @ Xb
        excess = log_cosh / n - np.log(2.0) - GAUSS_LOGCOSH
        skew /= n
        value += float(excess @ excess) + SKEW_WEIGHT * float(skew @ skew)
        a_w, b_w = 2.0 * excess / n, 2.0 * SKEW_WEIGHT * skew / n
        # dJ/dZt, then through the standardisation Zt = Z / sd(Z).
        dzt_x = a_w[:, None] * tanh_x + b_w[:, None] * odd_x
        along = (a_w * tz + b_w * oz) / n
        DtX = (dzt_x - along[:, None] * (Mt.T @ R)) / sd[:, None]
        grad += cholesky_gradient(L, Linv, DtX, G, S, n)
    return value, grad.ravel()


class SignalContrast:
    """The polish's contrast of the signal's Gram-Schmidt residuals (:func:`_signal_contrast`).

    A contrast for :func:`creator_plugin.joint_ica.polish_directions` (the
    form of :class:`creator_plugin.joint_ica.OrderedContrast`).

    Parameters
    ----------
    signal, raw : list of ndarray (d, d)
        Every environment's noise-corrected and raw ``X_k^T X_k``.
    """

    #: The contrast loops over the environments (no stacked rows).
    stacks = False

    def __init__(self, signal: list[np.ndarray], raw: list[np.ndarray]):
        self.signal, self.raw = signal, raw

    def __call__(self, g: np.ndarray, X_list: list[np.ndarray], stacked) -> tuple:
        return _signal_contrast(g, X_list, self.raw[0].shape[0], self.signal, self.raw)

    def subsample(self, sub: list[np.ndarray], X_list: list[np.ndarray]) -> SignalContrast:
        """The contrast of the rows ``sub`` of ``X_list``: the noise's share per row is the same."""
        sub_raw = [x.T @ x for x in sub]
        sub_signal = [sr - x.shape[0] / y.shape[0] * (r - sg)
                      for sr, x, y, r, sg in zip(sub_raw, sub, X_list, self.raw, self.signal)]
        return SignalContrast(sub_signal, sub_raw)


def polish_signal(X_red, alphas, signal, raw, *, max_iter: int = 300,
                  max_rows: int | None = POLISH_MAX_ROWS):
    """:func:`creator_plugin.joint_ica.polish_directions` with the signal's Gram-Schmidt residuals.

    The polish's ascent (two stages when an environment has more than
    ``max_rows`` rows; the start kept when the ascent breaks down or does
    not increase the contrast) of :class:`SignalContrast`. Returns the
    directions and the polish's ``info`` dict.
    """
    return polish_directions(X_red, alphas, max_iter=max_iter, max_rows=max_rows,
                             contrast=SignalContrast(signal, raw))
