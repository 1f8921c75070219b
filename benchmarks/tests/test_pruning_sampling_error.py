"""The pruning statistic's sampling error and the true-direction oracle: what the studies read."""

import sys
from pathlib import Path

import numpy as np

from creator_plugin.measurement_noise import corrected_pruning_moments
from creator_plugin.ordering import _ordered_noise_maps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import oracle_directions_diag  # noqa: E402
import pruning_wald_trial  # noqa: E402


def _latents(rng, n, k):
    """0 -> 1 with a weight that changes with k; 2 independent of both."""
    z = rng.laplace(size=(n, 3))
    y = z.copy()
    y[:, 1] = (1.0 + 0.5 * k) * y[:, 0] + 0.3 * z[:, 1]
    return y - y.mean(axis=0)


def _tested(Y):
    grams = [y.T @ y for y in Y]
    n_rows = [len(y) for y in Y]
    maps = _ordered_noise_maps(grams, n_rows, np.eye(3))
    _, tested, a, _ = corrected_pruning_moments(grams, n_rows, np.eye(3), maps)
    covs = [a.T @ g @ a / n for g, n in zip(grams, n_rows)]
    return tested, pruning_wald_trial.coefficient_se(covs, n_rows, tested)


def test_the_coefficients_standard_error_matches_their_spread_over_fresh_samples():
    rng = np.random.default_rng(0)
    draws, ses = [], []
    for _ in range(150):
        tested, se = _tested([_latents(rng, 800, k) for k in range(5)])
        draws.append(tested[:, 2, :2])
        ses.append(se[:, 2, :2])
    ratio = np.mean(ses, axis=0) / np.std(draws, axis=0)
    # the no-edge coefficient on a feature its child nearly copies is the noisiest
    assert np.all((ratio > 0.8) & (ratio < 1.25)), ratio
    assert np.mean(ses, axis=0)[:, 0].mean() > 2 * np.mean(ses, axis=0)[:, 1].mean()


def test_the_gate_drops_an_edge_within_sampling_error_and_keeps_a_significant_one():
    K = 5
    tested = np.zeros((K, 3, 3))
    tested[:, 1, 1] = tested[:, 2, 2] = 1.0
    tested[:, 2, 0] = [0.5, -0.4, 0.6, -0.3, 0.1]  # far above the level, no common pattern
    for sd, kept in ((0.5, 0), (0.01, 1)):
        se = np.full_like(tested, sd)
        adjacency, decisions = pruning_wald_trial.wald_prune(tested, se, 0.2, 1.0, 1e-3)
        assert adjacency[0, 2] == kept
        q = next(x for x in decisions if (x["parent"], x["child"]) == (0, 2))
        assert q["statistic"] > 0.2


def test_the_true_unmixing_is_not_biased_by_measurement_noise():
    rng = np.random.default_rng(1)
    Y = [_latents(rng, 4000, k) for k in range(4)]
    H = rng.normal(size=(3, 3))
    X = [y @ H + 0.3 * rng.normal(size=y.shape) for y in Y]
    exact = oracle_directions_diag.true_unmixing(X, Y)
    regression = np.linalg.lstsq(np.vstack(X), np.vstack(Y), rcond=None)[0]
    # the clean data mapped back: the identity for the unmixing, not for the regression
    assert np.allclose(H @ exact, np.eye(3), atol=0.03)
    assert np.abs(H @ regression - np.eye(3)).max() > 0.1
