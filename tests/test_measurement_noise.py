"""The measurement-noise correction: its estimate, its no-op at p == d, its input check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, RefineOptions
from creator_plugin.joint_ica import _ordered_contrast
from creator_plugin.preprocessing import reduce_environments
from creator_plugin.refine.measurement_noise import (
    PD_MARGIN_SDS,
    _signal_contrast,
    estimate_measurement_noise,
    noise_of_variances,
    polish_signal,
)
from creator_plugin.simulation import simulate_family


def _noisy_environments(noise_sd, *, p=20, d=3, K=4, n=4000, latent_scales=None, seed=0):
    """Non-Gaussian latents, a random mixing and Gaussian noise of SD ``noise_sd[k]`` per entry."""
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((p, d))
    X = []
    for k in range(K):
        scales = np.ones(d) if latent_scales is None else latent_scales[k]
        Y = rng.laplace(size=(n, d)) * scales
        X.append(Y @ H.T + noise_sd[k] * rng.standard_normal((n, p)))
    return X


def test_recovers_the_noise_variance_of_every_environment():
    noise_sd = [0.3, 0.1, 0.2, 0.05]
    X = _noisy_environments(noise_sd)
    # standardize=False: every column in one common unit, so the noise is
    # isotropic in the reduction's units and its variance known there.
    X_red, red = reduce_environments(X, 3, standardize=False)
    noise = estimate_measurement_noise(X, X_red, red)
    truth = np.array(noise_sd) ** 2 / red.scale[0] ** 2
    assert noise.model == "diagonal"
    assert np.all(noise.shrinkage == 1.0)  # nothing needed shrinking
    np.testing.assert_allclose(noise.variances.mean(axis=1), truth, rtol=0.05)
    np.testing.assert_allclose(noise.variances, truth[:, None] * np.ones(20), rtol=0.3)
    # The corrected covariances equal the noiseless data's in expectation: compare
    # with the same latents and mixing without noise.
    clean = _noisy_environments([0.0] * 4)
    clean_red = [((x - x.mean(axis=0)) / red.scale) @ red.projection for x in clean]
    for g, c, n in zip(noise.signal_grams([x.T @ x for x in X_red]), clean_red, [4000] * 4):
        np.testing.assert_allclose(g / n, c.T @ c / n, atol=0.05 * np.abs(c.T @ c / n).max())


def test_an_estimate_the_data_cannot_carry_is_shrunk_to_keep_covariances_positive():
    # Environment 0: one latent with almost no variance, buried in the noise.
    scales = [np.array([1.0, 1.0, 0.01]), np.ones(3), np.ones(3)]
    X = _noisy_environments([0.5, 0.02, 0.02], K=3, latent_scales=scales, seed=1)
    X_red, red = reduce_environments(X, 3, standardize=False)
    noise = estimate_measurement_noise(X, X_red, red)
    assert noise.shrinkage[0] < 1.0
    assert np.all(noise.shrinkage[1:] == 1.0)
    n = X_red[0].shape[0]
    g = noise.signal_grams([x.T @ x for x in X_red])[0]
    raw = X_red[0].T @ X_red[0]
    metric = red.projection.T @ red.projection
    from scipy.linalg import eigh
    # The corrected covariance keeps the margin's share of the raw one in its
    # weakest direction, and no more.
    share = eigh(g, raw, eigvals_only=True)[0]
    assert share == pytest.approx(PD_MARGIN_SDS * np.sqrt(2.0 / n), rel=1e-6)
    assert np.all(eigh(g, metric, eigvals_only=True) > 0)


def test_known_variances_give_the_estimate_its_form_and_the_same_shrinkage():
    scales = [np.array([1.0, 1.0, 0.01]), np.ones(3), np.ones(3)]
    X = _noisy_environments([0.5, 0.02, 0.02], K=3, latent_scales=scales, seed=1)
    X_red, red = reduce_environments(X, 3, standardize=False)
    estimate = estimate_measurement_noise(X, X_red, red)
    again = noise_of_variances(estimate.variances, estimate.model, X_red, red)
    np.testing.assert_array_equal(again.shrinkage, estimate.shrinkage)
    for a, b in zip(again.scatters, estimate.scatters):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    given = noise_of_variances(estimate.variances, estimate.model, X_red, red,
                               grams=[x.T @ x for x in X_red])
    np.testing.assert_array_equal(given.shrinkage, again.shrinkage)
    for a, b in zip(given.scatters, again.scatters):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="grams"):
        noise_of_variances(estimate.variances, estimate.model, X_red, red,
                           grams=[X_red[0].T @ X_red[0]])
    # The true variances (0.5^2 per column in environment 0) are shrunk as well:
    # they are more than that environment's weakest direction can carry.
    truth = np.array([0.5, 0.02, 0.02])[:, None] ** 2 * np.ones((3, 20)) / red.scale**2
    before = [x.copy() for x in X_red], truth.copy()
    known = noise_of_variances(truth, "diagonal", X_red, red)
    assert known.shrinkage[0] < 1.0 and np.all(known.shrinkage[1:] == 1.0)
    for x, b in zip(X_red, before[0]):
        np.testing.assert_array_equal(x, b)
    np.testing.assert_array_equal(truth, before[1])


def test_heteroscedastic_columns_are_estimated_one_by_one():
    rng = np.random.default_rng(5)
    sd = rng.uniform(0.05, 0.4, 20)
    X = [x + sd * rng.standard_normal(x.shape)
         for x in _noisy_environments([0.0] * 3, K=3, seed=2)]
    X_red, red = reduce_environments(X, 3, standardize=False)
    noise = estimate_measurement_noise(X, X_red, red)
    truth = sd**2 / red.scale[0] ** 2
    for v in noise.variances:
        assert np.corrcoef(v, truth)[0, 1] > 0.95
        np.testing.assert_allclose(v.mean(), truth.mean(), rtol=0.05)


def test_few_discarded_dimensions_fall_back_to_one_variance_per_environment():
    X = _noisy_environments([0.2, 0.1], p=5, d=3, K=2)
    X_red, red = reduce_environments(X, 3, standardize=False)
    noise = estimate_measurement_noise(X, X_red, red)
    assert noise.model == "isotropic"
    np.testing.assert_allclose(noise.variances, np.array([[0.04], [0.01]]) / red.scale[0] ** 2
                               * np.ones(5), rtol=0.15)


@pytest.mark.slow
def test_square_data_give_identical_fits():
    sim = simulate_family("paper", 4, 4, 500, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = CREATOR(4, random_state=3).fit(sim.X)
        b = CREATOR(4, random_state=3, refine=RefineOptions(measurement_noise=True)).fit(sim.X)
    assert np.array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    assert np.array_equal(a.components_, b.components_)
    assert all(np.array_equal(x, y) for x, y in zip(a.latents_, b.latents_))
    assert "measurement_noise" not in b.diagnostics_
    X_red, red = reduce_environments(sim.X, 4)
    assert estimate_measurement_noise(sim.X, X_red, red) is None


@pytest.mark.slow
def test_noisy_measurements_are_corrected_and_reported():
    sim = simulate_family("measured", 3, 3, 800, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = CREATOR(3, random_state=0).fit(sim.X)  # the default: no correction
        b = CREATOR(3, random_state=0, refine=RefineOptions(measurement_noise=True)).fit(sim.X)
    est = np.array(b.diagnostics_["measurement_noise"]["mean_variance"])
    # 5 % of every column's SD: about 0.05^2 of a standardised column's variance.
    assert np.all((est > 0) & (est < 0.05))
    assert not np.array_equal(a.components_, b.components_)
    assert "measurement_noise" not in a.diagnostics_


def test_noise_shares_show_the_noise_the_measurements_bury():
    # A chain 0 -> 1 -> 2 whose weights change across three environments; in
    # environment 0 node 2's own noise is quiet, mostly measurement noise in the data.
    rng = np.random.default_rng(2)
    p, n, sd = 20, 4000, 0.3
    H = rng.standard_normal((p, 3))
    X, E = [], []
    for w01, w12, quiet in [(0.9, 0.8, 0.05), (-0.7, 1.2, 1.0), (0.4, -0.9, 1.0)]:
        e = rng.laplace(size=(n, 3)) * np.array([1.0, 1.0, quiet])
        y = e.copy()
        y[:, 1] += w01 * y[:, 0]
        y[:, 2] += w12 * y[:, 1]
        X.append(y @ H.T + sd * rng.standard_normal((n, p)))
        E.append(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = CREATOR(3, random_state=0, refine=RefineOptions(measurement_noise=True)).fit(X)
    rec = m.diagnostics_["measurement_noise"]
    shares = np.array(rec["noise_shares"])
    assert shares.shape == (3, 3)
    # The share the known noise gives each recovered noise, through the fit's own maps.
    truth = np.empty((3, 3))
    for k in range(3):
        maps = m.components_.T @ (np.eye(3) - m.weights_[k])  # (p, d), original units
        truth[k] = sd ** 2 * (maps ** 2).sum(axis=0) / m.noise_scales_[k] ** 2
    np.testing.assert_allclose(shares, truth, rtol=0.1)  # the estimated noise against the known
    quiet = np.unravel_index(np.argmax(shares), shares.shape)
    assert quiet[0] == 0 and shares[quiet] > 0.5
    assert np.delete(shares.ravel(), np.ravel_multi_index(quiet, shares.shape)).max() < 0.05
    assert rec["min_signal_share"] == pytest.approx(1 - shares.max())
    # The quiet recovered noise is node 2's.
    noise0 = (m.latents_[0] - m.latents_[0].mean(axis=0)) @ (np.eye(3) - m.weights_[0])
    corr = [abs(np.corrcoef(noise0[:, quiet[1]], E[0][:, j])[0, 1]) for j in range(3)]
    assert int(np.argmax(corr)) == 2


@pytest.mark.parametrize("value", ["yes", 1, "auto", None])
def test_rejects_unknown_values(value):
    with pytest.raises(ValueError, match="'measurement_noise' parameter of RefineOptions"):
        RefineOptions(measurement_noise=value)
    with pytest.raises(TypeError, match=r"refine=RefineOptions\(measurement_noise=True\)"):
        CREATOR(3, measurement_noise=value)


def test_signal_polish_contrast_and_gradient():
    rng = np.random.default_rng(0)
    X = [rng.laplace(size=(400, 3)) @ rng.standard_normal((3, 3)) for _ in range(2)]
    raw = [x.T @ x for x in X]
    signal = [0.97 * r - 0.01 * 400 * np.eye(3) for r in raw]
    g = rng.standard_normal(9)
    # Without noise it is the ordering's polish contrast.
    assert _signal_contrast(g, X, 3, raw, raw)[0] == pytest.approx(
        _ordered_contrast(g, X, 3, raw)[0], rel=1e-12)
    value, grad = _signal_contrast(g, X, 3, signal, raw)
    h = 1e-6
    numeric = [(_signal_contrast(g + h * e, X, 3, signal, raw)[0]
                - _signal_contrast(g - h * e, X, 3, signal, raw)[0]) / (2 * h) for e in np.eye(9)]
    np.testing.assert_allclose(grad, numeric, atol=1e-6 * np.abs(grad).max())


def test_signal_polish_in_two_stages_ascends():
    X = _noisy_environments([0.3, 0.2], p=8, d=3, K=2, n=600, seed=4)
    X_red, red = reduce_environments(X, 3, standardize=False)
    noise = estimate_measurement_noise(X, X_red, red)
    raw = [x.T @ x for x in X_red]
    start = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    one, info1 = polish_signal(X_red, start, noise.signal_grams(raw), raw)
    two, info2 = polish_signal(X_red, start, noise.signal_grams(raw), raw, max_rows=200)
    assert "subsample" in info2 and info2["subsample"]["rows"] == [200, 200]
    assert info1["kept"] and info2["kept"]
    assert info2["contrast"] > info2["contrast_start"]
    assert info2["contrast"] == pytest.approx(info1["contrast"], rel=1e-3)
