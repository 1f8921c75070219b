"""The verdict names data conditions the graph cannot be read from, and stays quiet otherwise."""

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.quality import mean_shift_share, mechanism_heterogeneity

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _rebuild(sim, W, Omega, shifts=None):
    d = W[0].shape[0]
    Y = [z @ om @ np.linalg.inv(np.eye(d) - w) for z, om, w in zip(sim.Z, Omega, W)]
    if shifts is not None:
        Y = [y + s for y, s in zip(Y, shifts)]
    return [y @ sim.H.T for y in Y], Y


def _kinds(X, d, seed=0):
    model = CREATOR(d, random_state=seed).fit(X)
    return [i["kind"] for i in model.diagnostics_["quality"]["issues"]], model


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_invariant_weights_are_flagged(seed):
    """Same weights in every environment, only noise scales change: edges are invisible."""
    sim = simulate(4, 4, 800, edge_prob=0.8, random_state=seed)
    X, _ = _rebuild(sim, [sim.W[0]] * 4, sim.Omega)
    kinds, model = _kinds(X, 4)
    assert "invariant_mechanisms" in kinds
    assert model.adjacency_matrix_.sum() < sim.adjacency.sum()


@pytest.mark.slow
def test_single_node_interventions_are_flagged(soft_single_node):
    """An observational environment plus one per latent changing only that latent.

    Detection is not certain (the benchmark's rate is in docs/results/verdict.md):
    at least two of three fits are flagged."""
    flagged = 0
    for seed in (0, 1, 2):
        flagged += "invariant_mechanisms" in _kinds(soft_single_node(seed), 4)[0]
    assert flagged >= 2


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_weights_that_change_are_not_flagged(seed):
    sim = simulate(4, 4, 800, edge_prob=0.8, random_state=seed)
    mech = mechanism_heterogeneity(CREATOR(4, random_state=0).fit(sim.X).latents_)
    assert not mech["independent_latents"] and not mech["few_regimes"]
    assert min(mech["regimes"]) >= 3


def test_mean_shifts_are_reported_with_a_pointer():
    sim = simulate(3, 4, 800, random_state=6)
    rng = np.random.default_rng(0)
    shifts = [rng.normal(0, 3, 3) * y.std(axis=0) for y in sim.Y]
    X, _ = _rebuild(sim, sim.W, sim.Omega, shifts)
    kinds, model = _kinds(X, 3)
    assert "mean_shifts_ignored" in kinds
    q = model.diagnostics_["quality"]
    assert q["checks"]["mean_shifts"]["share"] > 0.5
    assert "CD-NOD" in " ".join(i["message"] for i in q["issues"])
    plain, _ = _kinds(sim.X, 3)
    assert "mean_shifts_ignored" not in plain


def test_mean_shift_share_is_between_over_total():
    a = np.zeros((10, 1))
    b = np.ones((10, 1))
    assert mean_shift_share([a, b])["share"] == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    same = [rng.standard_normal((2000, 2)) for _ in range(3)]
    assert mean_shift_share(same)["share"] < 0.01


def _one_gaussian(seed, d=5):
    """simulate(d, d, 1000) with one latent's noise Gaussian in every environment."""
    sim = simulate(d, d, 1000, random_state=seed)
    rng = np.random.default_rng(seed + 7919)
    g = sim.causal_order[rng.integers(d)]
    Z = [z.copy() for z in sim.Z]
    for z in Z:
        z[:, g] = rng.standard_normal(len(z))
    Y = [z @ om @ np.linalg.inv(np.eye(d) - w) for z, om, w in zip(Z, sim.Omega, sim.W)]
    return [y @ sim.H.T for y in Y], Y, sim.adjacency


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2040, 2099])
def test_one_gaussian_noise_component_is_fitted_and_not_flagged(seed):
    """The model allows one Gaussian noise: the fit is right and the verdict raises nothing.

    On these seeds the joint re-estimation used to leave the Gaussian source
    for a mixture (LocR^2 0.91 / 0.96) and the order check flagged the fit."""
    from creator_plugin import metrics

    X, Y, adjacency = _one_gaussian(seed)
    kinds, model = _kinds(X, 5, seed)
    ev = metrics.evaluate(adjacency, Y, model.adjacency_matrix_, model.latents_)
    assert kinds == []
    assert ev["locr2"] > 0.99
    assert ev["shd"] <= 1


def test_looks_gaussian_needs_every_environment():
    from creator_plugin.joint_ica import looks_gaussian

    rng = np.random.default_rng(0)
    gauss = [rng.standard_normal((2000, 2)) for _ in range(3)]
    w = np.array([1.0, 0.0])
    assert looks_gaussian(gauss, w)
    mixed = [g.copy() for g in gauss]
    mixed[1][:, 0] = rng.laplace(size=2000)
    assert not looks_gaussian(mixed, w)
    assert looks_gaussian(mixed, np.array([0.0, 1.0]))
