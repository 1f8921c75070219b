"""The ordering step's consistency descent and the canonical form of the directions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from creator_plugin import simulate
from creator_plugin.independence import ica_consistency_scores
from creator_plugin.joint_ica import _solve_each, consistency_descent
from creator_plugin.ordering import (
    canonical_directions,
    ica_directions,
    ordered_noises,
    topological_ordering,
)
from creator_plugin.preprocessing import reduce_environments


def _reduced(seed: int, d: int, n: int):
    sim = simulate(d, d, n, random_state=seed)
    X_red, _ = reduce_environments(sim.X, d)
    return sim, X_red


def _worst_env_corr2(noises, Z) -> float:
    """Smallest per-environment corr^2 of a recovered noise with its matched true noise."""
    c2 = np.array([
        (((e - e.mean(0)) / e.std(0)).T @ ((z - z.mean(0)) / z.std(0)) / len(e)) ** 2
        for e, z in zip(noises, Z)
    ])
    match = c2.mean(axis=0).argmax(axis=1)
    return float(c2[:, np.arange(c2.shape[1]), match].min())


@pytest.fixture(scope="module")
def step0():
    """First ordering step of a d=6 model: residuals, ICA directions, candidates."""
    _, X_red = _reduced(3, 6, 1000)
    dirs = [ica_directions(R, 6, random_state=k)[0] for k, R in enumerate(X_red)]
    return X_red, dirs, np.hstack(dirs)


def test_descent_scores_are_the_consistency_scores_and_never_worse(step0):
    X_red, dirs, cands = step0
    out, scores = consistency_descent(X_red, dirs, cands)
    np.testing.assert_allclose(scores, ica_consistency_scores(X_red, out, dirs), atol=1e-9)
    raw = ica_consistency_scores(X_red, cands, dirs)
    assert np.all(scores <= raw + 1e-9)
    assert scores.min() < raw.min()  # combining environments beats every single one
    np.testing.assert_allclose(np.linalg.norm(out, axis=0), 1.0)
    # sign convention: largest entry positive, so equal minima are equal vectors
    assert np.all(out[np.abs(out).argmax(axis=0), np.arange(out.shape[1])] > 0)


def test_descent_stays_in_the_column_space_of_rank_deficient_residuals(step0):
    # A later step: residuals of rank m = 4 in d = 6 coordinates. The score
    # ignores the other two directions, so a step along them would be rounding
    # amplified by the solve (about 1e-7 per iteration before the steps were
    # kept in the column space): the descended directions must not move there.
    X_red, _, _ = step0
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((6, 4)))[0]
    R_list = [x @ basis @ basis.T for x in X_red]
    dirs = [ica_directions(R, 4, random_state=k)[0] for k, R in enumerate(R_list)]
    starts = np.hstack(dirs)
    outside = np.eye(6) - basis @ basis.T
    assert np.abs(outside @ starts).max() < 1e-12
    out, scores = consistency_descent(R_list, dirs, starts, max_iter=20)
    assert scores.min() < ica_consistency_scores(R_list, starts, dirs).min()  # it moved
    assert np.abs(outside @ out).max() < 1e-12


def test_descent_by_matrix_product_equals_the_einsum(step0, monkeypatch):
    """Large problems form the products with the ICA directions as one matrix product."""
    import creator_plugin.joint_ica as joint_ica

    X_red, dirs, cands = step0
    small = consistency_descent(X_red, dirs, cands, max_iter=10, tol=1e-4)
    monkeypatch.setattr(joint_ica, "DESCENT_EINSUM_MAX", 0)
    large = consistency_descent(X_red, dirs, cands, max_iter=10, tol=1e-4)
    np.testing.assert_allclose(large[0], small[0], atol=1e-10)
    np.testing.assert_allclose(large[1], small[1], atol=1e-12)


@pytest.mark.parametrize("products", ["einsum", "matmul"])
def test_descent_in_blocks_of_starts_gives_every_start_its_numbers(step0, monkeypatch,
                                                                    products):
    """Large problems descend their starts in blocks: the same minima.

    Not to the bit: a matrix product of one row (a block, or the active
    starts, down to one) is a BLAS matrix-vector product, which rounds
    differently; the descent carries that to about 1e-11 after ten steps.
    """
    import creator_plugin.joint_ica as joint_ica

    X_red, dirs, cands = step0
    if products == "matmul":
        monkeypatch.setattr(joint_ica, "DESCENT_EINSUM_MAX", 0)
    whole = consistency_descent(X_red, dirs, cands, max_iter=10, tol=1e-4)
    for elements in (1, 500):  # one start per block; blocks of 4 starts and a last of 4
        monkeypatch.setattr(joint_ica, "DESCENT_BLOCK_ELEMENTS", elements)
        blocks = consistency_descent(X_red, dirs, cands, max_iter=10, tol=1e-4)
        np.testing.assert_allclose(blocks[0], whole[0], rtol=0, atol=1e-9)
        np.testing.assert_allclose(blocks[1], whole[1], rtol=0, atol=1e-10)


def test_ordering_runs_the_descent_with_the_module_stopping_rule(monkeypatch):
    import creator_plugin.ordering as ordering

    seen = []
    real = ordering.consistency_descent

    def spy(*args, **kwargs):
        seen.append((kwargs["max_iter"], kwargs["tol"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(ordering, "consistency_descent", spy)
    _, X_red = _reduced(0, 3, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topological_ordering(X_red, random_state=0)
    assert seen and set(seen) == {(ordering.DESCENT_MAX_ITER, ordering.DESCENT_TOL)}
    assert (ordering.DESCENT_MAX_ITER, ordering.DESCENT_TOL) == (10, 1e-4)


def test_descent_ignores_scale_and_sign_of_starts(step0):
    X_red, dirs, cands = step0
    a, sa = consistency_descent(X_red, dirs, cands[:, :4])
    b, sb = consistency_descent(X_red, dirs, -3.0 * cands[:, :4])
    # equal up to the stopping tolerance (directions moving less than 1e-8)
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(sa, sb, atol=1e-8)


@pytest.mark.slow
def test_descent_finds_the_root_direction_a_single_environment_misses():
    # d=10 seed 4: without the descent one step's direction extracts a
    # different source in one environment (chains of large weights there);
    # with it every recovered noise matches its true noise in every environment.
    sim, X_red = _reduced(4, 10, 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        without = topological_ordering(X_red, random_state=4, descend=False)
        with_descent = topological_ordering(X_red, random_state=4)
    assert _worst_env_corr2(without.noises, sim.Z) < 0.1
    assert _worst_env_corr2(with_descent.noises, sim.Z) > 0.95
    assert all("descended_scores" in s for s in with_descent.steps[:-1])


@pytest.mark.slow
def test_canonical_directions_keep_noises_and_ignore_earlier_components():
    _, X_red = _reduced(3, 6, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = topological_ordering(X_red, random_state=3, canonical=False)
    canon = canonical_directions(X_red, res.alphas, res.noises)
    for a, b in zip(ordered_noises(X_red, canon), ordered_noises(X_red, res.alphas)):
        np.testing.assert_allclose(a, b, atol=1e-9 * np.abs(b).max())
    shifted = res.alphas.copy()
    shifted[:, 3] += 5.0 * shifted[:, 0] - 2.0 * shifted[:, 2]
    shifted[:, 5] += 3.0 * shifted[:, 1]
    np.testing.assert_allclose(canonical_directions(X_red, shifted, res.noises), canon, atol=1e-9)
    # the defining property: precision-weighted mean of each feature's
    # coefficients on the earlier features is zero
    for i in range(1, 6):
        mean, total = np.zeros(i), 0.0
        for x, z in zip(X_red, res.noises):
            Y = x @ canon
            w = 1.0 / np.mean(z[:, i] ** 2)
            mean += w * np.linalg.lstsq(Y[:, :i], Y[:, i], rcond=None)[0]
            total += w
        np.testing.assert_allclose(mean / total, 0.0, atol=1e-9)
    # the column changes only by earlier columns
    coef = np.linalg.lstsq(res.alphas, canon, rcond=None)[0]
    np.testing.assert_allclose(np.tril(coef, -1), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.diag(coef), 1.0, atol=1e-9)


@pytest.mark.slow
def test_ordering_returns_canonical_directions_by_default():
    _, X_red = _reduced(3, 5, 800)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = topological_ordering(X_red, random_state=1, canonical=False)
        default = topological_ordering(X_red, random_state=1)
    np.testing.assert_allclose(
        default.alphas, canonical_directions(X_red, raw.alphas, raw.noises), atol=1e-12
    )
    for a, b in zip(default.entangled, X_red):
        np.testing.assert_allclose(a, b @ default.alphas)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1001, 1006])
def test_ill_conditioned_d10_models_are_fitted(seed, fit):
    """Chains of large weights at d = K = 10, n = 2000: seed 1006's pooled data have a
    smallest eigenvalue 2e-14 of the largest (once refused as rank deficient), and at
    seed 1001 a descent start has almost no variance in one environment (its Q was
    singular). Both are well posed and are fitted. The failures were in the reduction and
    the descent, so the core alone is fitted (the optional steps cost minutes here)."""
    from creator_plugin import metrics

    sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
    model = fit(sim.X, 10, refine=None, random_state=seed)
    scores = metrics.evaluate_model(model, sim)
    assert scores["shd"] <= 3 and scores["locr2"] > 0.9


def test_solve_each_falls_back_to_least_squares_only_for_the_singular_matrix():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 4, 4))
    M[1] = np.diag([2.0, 1.0, 3.0, 0.0])  # singular: np.linalg.solve refuses the batch
    b = rng.standard_normal((3, 4))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(M, b[:, :, None])
    x = _solve_each(M, b)
    for s in (0, 2):
        np.testing.assert_array_equal(x[s], np.linalg.solve(M[s], b[s]))
    np.testing.assert_allclose(x[1], np.linalg.lstsq(M[1], b[1], rcond=None)[0])
