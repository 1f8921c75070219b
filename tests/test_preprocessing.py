"""Step 0: column scales and constant columns in each column's own units; the reduction's routes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from creator_plugin import metrics, simulate
from creator_plugin._passes import column_moments, pooled_gram, pooled_r_factor
from creator_plugin.preprocessing import (
    _dominant_row_note,
    _r2_on_other_columns,
    reduce_environments,
)


@pytest.fixture(scope="module")
def sim4():
    return simulate(4, 4, 1000, n_features=6, measurement_noise=0.02, random_state=3)


@pytest.fixture(scope="module")
def base4(sim4, fit):
    return fit(sim4.X, 4)


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1e15, 1e-15])
@pytest.mark.parametrize("column", [0, 3])
def test_one_column_rescaled_by_1e15_gives_the_same_fit(sim4, base4, fit_recording, factor,
                                                        column):
    X = [x.copy() for x in sim4.X]
    for x in X:
        x[:, column] *= factor
    model, caught = fit_recording(X, 4)
    np.testing.assert_array_equal(model.adjacency_matrix_, base4.adjacency_matrix_)
    for a, b in zip(model.latents_, base4.latents_):
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert model.diagnostics_["dropped_columns"] == []
    assert not any("constant" in str(w.message) for w in caught)


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1e200, 1e-200])
def test_whole_data_at_extreme_scales_gives_the_same_fit(sim4, base4, fit, factor):
    model = fit([x * factor for x in sim4.X], 4)
    np.testing.assert_array_equal(model.adjacency_matrix_, base4.adjacency_matrix_)
    for a, b in zip(model.latents_, base4.latents_):
        np.testing.assert_allclose(a, b, atol=1e-6)
    x0 = sim4.X[0][:50] * factor
    np.testing.assert_allclose(model.inverse_transform(model.transform(x0)) / factor,
                               base4.inverse_transform(base4.transform(sim4.X[0][:50])),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
def test_magnitudes_beyond_float64_precision_get_a_message_about_scale(sim4, factor):
    from creator_plugin import CREATOR

    X = [x.copy() for x in sim4.X]
    for x in X:
        x[:, 2] *= factor
    with pytest.raises(ValueError, match=r"columns \[2\] have values of magnitude.*Rescale"):
        CREATOR(4).fit(X)


@pytest.mark.slow
def test_constant_column_at_any_magnitude_is_dropped_and_tiny_variation_is_not(sim4, fit):
    big_constant = [np.column_stack([x, np.full(len(x), 3e8)]) for x in sim4.X]
    assert fit(big_constant, 4).diagnostics_["dropped_columns"] == [6]
    rng = np.random.default_rng(0)
    # Varies by 1e-9 of its size: tiny next to the other columns, not constant in its own units.
    tiny = [np.column_stack([x, 1e-20 * (1 + 1e-9 * rng.standard_normal(len(x)))])
            for x in sim4.X]
    assert fit(tiny, 4).diagnostics_["dropped_columns"] == []


@pytest.mark.slow
def test_column_constant_in_some_environments_warns_and_is_ignored(fit, fit_recording):
    sim = simulate(4, 4, 1000, n_features=8, measurement_noise=0.05, random_state=0)
    X = [x.copy() for x in sim.X]
    X[0][:, 2] = X[0][:, 2].mean()
    X[3][:, 2] = 7.0
    model, caught = fit_recording(X, 4)
    messages = [str(w.message) for w in caught]
    assert any("Columns [2] are constant within some environments" in m
               and "within environments [[0, 3]]" in m for m in messages), messages
    assert model.diagnostics_["partly_constant_columns"] == [2]
    assert model.diagnostics_["dropped_columns"] == []
    without = fit([np.delete(x, 2, axis=1) for x in X], 4)
    np.testing.assert_array_equal(model.adjacency_matrix_, without.adjacency_matrix_)
    for a, b in zip(model.latents_, without.latents_):
        np.testing.assert_allclose(a, b, atol=1e-8)
    assert metrics.evaluate_model(model, sim)["shd"] == 0
    frames = [pd.DataFrame(x, columns=list("abcdefgh")) for x in X]
    _, caught = fit_recording(frames, 4)
    assert any("Columns ['c'] are constant within some environments" in str(w.message)
               for w in caught)


def test_partly_constant_column_that_leaves_too_few_columns_is_named(sim3):
    from creator_plugin import CREATOR

    X = [x.copy() for x in sim3.X]
    X[1][:, 0] = 1.0
    X[1][:, 1] = 2.0
    with pytest.raises(ValueError, match=r"rank deficient.*Columns \[0, 1\] were ignored"):
        CREATOR(3).fit(X)


def test_r2_on_other_columns_equals_the_inverse_correlation_formula():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((400, 4)) @ rng.standard_normal((4, 7))
    Z[:, 5] = rng.standard_normal(400)  # unrelated
    Z[:, 6] = Z[:, 1] * 3.0  # an exact duplicate
    Z -= Z.mean(axis=0)
    corr = np.corrcoef(Z, rowvar=False)
    expected = 1.0 - 1.0 / np.diag(np.linalg.inv(corr + 1e-9 * np.eye(7)))
    r2 = _r2_on_other_columns(np.linalg.qr(Z, mode="r"))
    np.testing.assert_allclose(r2, expected, atol=1e-7)
    assert r2[5] < 0.1 and r2[6] > 0.999 and r2[1] > 0.999


@pytest.mark.slow
def test_unrelated_column_found_when_p_exceeds_the_rows(fit_recording):
    """p > N: every column is an exact combination of the others in-sample; the
    check uses the share of each column's variance in the leading d components."""
    sim = simulate(3, 4, 60, n_features=300, measurement_noise=0.1, random_state=0)
    rng = np.random.default_rng(0)
    X = [np.column_stack([x, rng.standard_normal(len(x))]) for x in sim.X]
    model, caught = fit_recording(X, 3)
    assert model.diagnostics_["unrelated_columns"] == [300]
    assert len(model.diagnostics_["explained_variance"]) == 240


@pytest.mark.slow
def test_tall_and_wide_routes_agree_with_a_dense_svd():
    """The TSQR factor (used when p <= N) and the Gram matrix (p > N) both give Z's spectrum."""
    sim = simulate(3, 3, 60, n_features=150, measurement_noise=0.1, random_state=5)
    mo = column_moments(sim.X)
    scale = np.sqrt((mo.sds**2).mean(axis=0))
    Z = np.vstack([(x - m) / scale for x, m in zip(sim.X, mo.means)])
    s_ref = np.linalg.svd(Z, compute_uv=False)
    s_tsqr = np.linalg.svd(pooled_r_factor(sim.X, mo.means, scale), compute_uv=False)
    np.testing.assert_allclose(s_tsqr, s_ref, rtol=1e-9)
    eig = np.linalg.eigvalsh(pooled_gram(sim.X, mo.means, scale))[::-1]
    np.testing.assert_allclose(np.sqrt(eig[:50]), s_ref[:50], rtol=1e-9)


def test_reduction_is_whitened_and_matches_a_dense_pca():
    sim = simulate(3, 3, 400, n_features=12, measurement_noise=0.05, random_state=2)
    X_red, red = reduce_environments(sim.X, 3)
    pooled = np.vstack(X_red)
    np.testing.assert_allclose(pooled.T @ pooled / len(pooled), np.eye(3), atol=1e-10)
    Z = np.vstack([(x - m) / red.scale for x, m in zip(sim.X, red.env_means)])
    np.testing.assert_allclose(red.explained_variance,
                               np.linalg.svd(Z, compute_uv=False) ** 2 / len(Z), rtol=1e-9)


@pytest.fixture(scope="module")
def sim3_square():
    return simulate(3, 4, 1000, random_state=0)


def test_ill_conditioned_full_rank_data_are_fitted_like_the_well_conditioned_data(
    sim3_square, fit
):
    """A near-collinear but invertible mixing (smallest pooled eigenvalue ~1e-15 of the
    largest, as chains of large weights give at d = 10) is well posed in float64: the
    fit equals the fit of the unmixed data."""
    X = sim3_square.X
    mixing = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 3e-7]])
    X_ill = [x @ mixing for x in X]
    _, reduction = reduce_environments(X_ill, 3)
    ev = reduction.explained_variance
    assert ev[2] / ev[0] < 1e-13  # refused as "rank deficient" by the old fixed tolerance
    base, ill = fit(X, 3), fit(X_ill, 3)
    np.testing.assert_array_equal(ill.adjacency_matrix_, base.adjacency_matrix_)
    corr = np.corrcoef(np.vstack(base.latents_).T, np.vstack(ill.latents_).T)[:3, 3:]
    np.testing.assert_allclose(np.abs(np.diag(corr)), 1.0, atol=1e-6)
    assert metrics.evaluate_model(ill, sim3_square)["shd"] == 0


@pytest.mark.parametrize("p_first", [True, False])
def test_exactly_collinear_columns_are_refused_on_both_routes(sim3_square, p_first):
    """The third column is an exact combination of the first two (rank 2 < n_latent = 3),
    on the triangular-factor route (p <= N) and the Gram route (p > N)."""
    X = [x @ np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
         for x in sim3_square.X]
    if not p_first:
        X = [np.tile(x[:20], (1, 30)) for x in X]  # p = 90 > N = 80
    with pytest.raises(ValueError, match="rank deficient: the pooled data spans only 2"):
        reduce_environments(X, 3)


def test_an_environment_lost_to_the_others_scales_is_refused_with_both_causes():
    """Every environment has full rank, but one varies 10^7 times more along a
    latent: the other's covariance in the pooled coordinates is beyond double
    precision, and the message names both possible causes and the condition."""
    rng = np.random.default_rng(0)
    H = rng.normal(size=(3, 3))
    loud = rng.laplace(size=(500, 3))
    loud[:, 0] *= 1e7
    X = [rng.laplace(size=(500, 3)) @ H.T, loud @ H.T]
    assert all(np.linalg.matrix_rank(x) == 3 for x in X)
    with pytest.raises(ValueError, match=r"X_list\[0\] is rank deficient.*scales differ.*"
                                         r"condition number of \d"):
        reduce_environments(X, 3)


def test_a_gross_outlier_is_named_when_it_makes_a_direction_of_its_own():
    sim = simulate(3, 4, 500, n_features=6, measurement_noise=0.02, random_state=0)
    X = [x.copy() for x in sim.X]
    X[0][3] = 1e6  # one corrupted row
    with pytest.raises(ValueError, match=r"rank deficient.*row 3 of X_list\[0\]"):
        reduce_environments(X, 3)
    # Without the outlier the same data reduce, and no row is named.
    X_red, _ = reduce_environments(sim.X, 3)
    assert _dominant_row_note(X_red) == ""
