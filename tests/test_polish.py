"""The ordering step's final joint re-estimation of all directions (``polish``)."""

from __future__ import annotations

import numpy as np
import pytest

from creator_plugin import CREATOR, OrderingOptions, simulate
from creator_plugin.joint_ica import _ordered_contrast, polish_directions
from creator_plugin.ordering import ordered_noises, topological_ordering
from creator_plugin.preprocessing import reduce_environments


def _reduced(seed: int, d: int = 5, K: int = 5, n: int = 1000):
    sim = simulate(d, K, n, random_state=seed)
    X_red, _ = reduce_environments(sim.X, d)
    return sim, X_red


def _noise_precision(noises, Z) -> float:
    """Mean over positions of the per-environment corr^2 with the closest true noise."""
    d = Z[0].shape[1]
    corr2 = np.mean(
        [
            [[np.corrcoef(e[:, i], z[:, t])[0, 1] ** 2 for t in range(d)] for i in range(d)]
            for e, z in zip(noises, Z)
        ],
        axis=0,
    )
    return float(corr2.max(axis=1).mean())


def test_contrast_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X_red = [rng.laplace(size=(300, 4)), rng.uniform(-1, 1, (200, 4)) @ rng.normal(size=(4, 4))]
    g = rng.standard_normal(16)
    S = [X.T @ X for X in X_red]
    value, grad = _ordered_contrast(g, X_red, 4, S)
    h = 1e-6
    numeric = np.array(
        [
            (_ordered_contrast(g + h * e, X_red, 4, S)[0]
             - _ordered_contrast(g - h * e, X_red, 4, S)[0]) / (2 * h)
            for e in np.eye(16)
        ]
    )
    assert value > 0
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5 * np.abs(grad).max())


def test_contrast_is_the_same_whatever_the_blocks_of_rows(monkeypatch):
    # The one-pass accumulation over blocks must not depend on where blocks end.
    import creator_plugin._passes as passes

    rng = np.random.default_rng(3)
    X_red = [rng.laplace(size=(1000, 4)), rng.exponential(size=(777, 4)) - 1.0]
    S = [X.T @ X for X in X_red]
    g = rng.standard_normal(16)
    whole = _ordered_contrast(g, X_red, 4, S)
    monkeypatch.setattr(passes, "BLOCK_ELEMENTS", 64 * 7)  # 7 rows per block
    blocks = _ordered_contrast(g, X_red, 4, S)
    assert blocks[0] == pytest.approx(whole[0], rel=1e-12)
    np.testing.assert_allclose(blocks[1], whole[1], rtol=1e-10, atol=1e-14)


def test_ordered_noises_are_the_stepwise_residuals():
    # The Cholesky form must equal regressing X @ alpha_i on the earlier noises.
    _, X_red = _reduced(0, d=4, K=3, n=400)
    alphas = np.random.default_rng(1).standard_normal((4, 4))
    noises = ordered_noises(X_red, alphas)
    for x, e in zip(X_red, noises):
        for i in range(4):
            y = x @ alphas[:, i]
            prev = e[:, :i]
            coef = np.linalg.lstsq(prev, y, rcond=None)[0] if i else np.zeros(0)
            np.testing.assert_allclose(e[:, i], y - prev @ coef, atol=1e-9)


@pytest.mark.slow
def test_polish_raises_the_contrast_and_keeps_orientation():
    _, X_red = _reduced(2)
    start = topological_ordering(X_red, random_state=2, polish=False).alphas
    out, info = polish_directions(X_red, 3.0 * start)
    assert info["kept"]
    assert info["contrast"] > info["contrast_start"]
    S = [X.T @ X for X in X_red]
    assert info["contrast"] == pytest.approx(_ordered_contrast(out.T.ravel(), X_red, 5, S)[0])
    np.testing.assert_allclose(np.linalg.norm(out, axis=0), 1.0)
    # a local refinement: every direction stays close to (and on the side of) its start
    cos = np.sum(out * start, axis=0) / np.linalg.norm(start, axis=0)
    assert np.all(cos > 0.9)


@pytest.mark.slow
def test_two_stage_polish_reaches_the_all_row_maximum_in_fewer_all_row_evaluations(monkeypatch):
    # More rows than max_rows: a first stage on a row subsample, then BFGS on
    # every row from there with the first stage's curvature. At a tight
    # tolerance (the looser default needs fewer evaluations either way, see
    # the next test) the warm start must save more than half of them.
    import creator_plugin.joint_ica as joint_ica

    monkeypatch.setattr(joint_ica, "POLISH_GTOL", 1e-6)
    _, X_red = _reduced(2, n=4000)
    # A start re-estimated at every step (converged as tightly as the
    # polish's own steps); from refine_min_sources=4's looser start the
    # two-stage polish saves exactly half (10 against 20).
    start = topological_ordering(X_red, random_state=2, polish=False,
                                 reestimate_min_sources=2).alphas
    one, info_one = polish_directions(X_red, start, max_rows=None)
    two, info_two = polish_directions(X_red, start, max_rows=500)
    assert "subsample" not in info_one
    assert info_two["subsample"]["rows"] == [500] * 5 and info_two["kept"]
    assert info_two["evaluations"] < info_one["evaluations"] / 2
    assert info_two["contrast"] == pytest.approx(info_one["contrast"], rel=1e-8)
    # Same noises (each direction is free along the earlier ones, which
    # changes no noise and no contrast).
    for a, b in zip(ordered_noises(X_red, two), ordered_noises(X_red, one)):
        corr = np.abs(np.sum(a * b, axis=0)) / np.linalg.norm(a, axis=0) / np.linalg.norm(b, axis=0)
        assert np.all(corr > 1 - 1e-6)
    # The default stays one stage up to POLISH_MAX_ROWS rows per environment.
    assert polish_directions(X_red, start)[1] == info_one


@pytest.mark.slow
def test_two_stage_polish_at_the_default_tolerance_saves_all_row_evaluations():
    _, X_red = _reduced(2, n=4000)
    start = topological_ordering(X_red, random_state=2, polish=False).alphas
    _, info_one = polish_directions(X_red, start, max_rows=None)
    _, info_two = polish_directions(X_red, start, max_rows=500)
    assert info_two["evaluations"] < info_one["evaluations"]
    assert info_two["contrast"] == pytest.approx(info_one["contrast"], rel=1e-6)


@pytest.mark.slow
def test_polish_makes_the_noises_more_precise():
    # Against the simulator's true noises, over a few models: the joint fit
    # removes the leakage of early directions' errors into later noises.
    before, after = [], []
    for seed in (0, 1, 3, 4):
        sim, X_red = _reduced(seed)
        raw = topological_ordering(X_red, random_state=seed, polish=False)
        pol = topological_ordering(X_red, random_state=seed)
        before.append(1.0 - _noise_precision(raw.noises, sim.Z))
        after.append(1.0 - _noise_precision(pol.noises, sim.Z))
    assert np.mean(after) < 0.8 * np.mean(before)


def test_polish_keeps_the_order_and_the_step_diagnostics():
    _, X_red = _reduced(6, d=4, K=4, n=600)
    off = topological_ordering(X_red, random_state=0, polish=False)
    on = topological_ordering(X_red, random_state=0)
    assert off.polish is None and on.polish is not None
    assert [s["chosen"] for s in on.steps] == [s["chosen"] for s in off.steps]
    # the same sources in the same positions (noises strongly correlated)
    for a, b in zip(on.noises, off.noises):
        corr = [abs(np.corrcoef(a[:, i], b[:, i])[0, 1]) for i in range(4)]
        assert min(corr) > 0.95


def test_polish_with_one_direction_is_the_identity():
    x = np.random.default_rng(0).laplace(size=(100, 1))
    out, info = polish_directions([x, 2 * x], np.array([[-3.0]]))
    assert out.tolist() == [[-1.0]]
    assert not info["kept"]


def test_estimator_polish_defaults_and_diagnostics():
    sim = simulate(3, 3, 500, random_state=0)
    on = CREATOR(3, random_state=0).fit(sim.X)
    assert on.diagnostics_["polish"]["kept"] in (True, False)
    assert on.diagnostics_["polish"]["evaluations"] >= 1
    off = CREATOR(3, random_state=0, ordering=OrderingOptions(polish=False)).fit(sim.X)
    assert off.diagnostics_["polish"] is None
    paper = CREATOR.paper(3, random_state=0).fit([x[:200] for x in sim.X])
    assert paper.diagnostics_["polish"] is None  # the paper's algorithm has no polish


@pytest.mark.parametrize("bad", [1, "yes", 0.0])
def test_polish_validation(bad):
    sim = simulate(2, 2, 200, random_state=0)
    with pytest.raises(ValueError, match="polish"):
        CREATOR(2, ordering=OrderingOptions(polish=bad)).fit(sim.X)


def test_contrast_in_kept_arrays_is_the_allocating_one_to_the_bit(monkeypatch):
    import creator_plugin._passes as passes

    monkeypatch.setattr(passes, "BLOCK_ELEMENTS", 64 * 20)  # 20 rows per block, a shorter last
    rng = np.random.default_rng(3)
    X = [rng.laplace(size=(n, 4)) for n in (70, 45)]
    S = [x.T @ x for x in X]
    work = {}
    g1, g2 = np.eye(4).ravel(), (np.eye(4) + 0.1 * rng.normal(size=(4, 4))).ravel()
    for g in (g1, g2, g1):
        fresh = _ordered_contrast(g, X, 4, S)
        kept = _ordered_contrast(g, X, 4, S, None, work)
        assert fresh[0] == kept[0]
        np.testing.assert_array_equal(fresh[1], kept[1])
    assert work  # the arrays were kept
