"""The clamped reading: environments whose interventions hold latents constant."""

import numpy as np
import pytest

from creator_plugin import CREATOR, _fit, clamped, simulate, simulate_family
from creator_plugin.benchmark.scoring import score


@pytest.fixture(scope="module")
def clamped_fit():
    sim = simulate_family("multi_node_crl", 4, 5, 300, n_features=4, random_state=3,
                          noise="laplace")
    with pytest.warns(Warning):
        model = CREATOR(4, random_state=0).fit(sim.X)
    return sim, model


def test_clamped_environments_are_fitted_and_their_latents_recovered(clamped_fit):
    sim, model = clamped_fit
    s = score(sim.adjacency, sim.Y, model.adjacency_matrix_, model.latents_)
    assert s["mcc"] > 0.999
    record = model.diagnostics_["clamped"]
    assert model.diagnostics_["route"] == "clamped"
    assert record["environment_ranks"] == [1] * 5
    assert record["identified_latents"] == [0, 1, 2, 3]
    assert record["graph_identified"] is False
    assert not model.adjacency_matrix_.any()  # no edge is identified, none is invented
    # The encoder maps new data like the fitted latents.
    np.testing.assert_allclose(model.transform(sim.X[1]), model.latents_[1], atol=1e-8)


def test_the_verdict_names_the_clamped_regime_and_the_methods(clamped_fit):
    _, model = clamped_fit
    quality = model.diagnostics_["quality"]
    assert [i["kind"] for i in quality["issues"]] == ["interventional_regime"]
    regime = quality["checks"]["regime"]
    assert regime["reading"] == "clamped"
    assert "CREATOR (clamped reading)" in regime["methods"]
    # Environment k of the generator leaves latent d - 1 - (k mod d) free: each fitted
    # latent is free in exactly one of the first four environments.
    held = regime["clamped"]
    assert all(len(t) == 3 for t in held)
    free = [set(range(4)) - set(t) for t in held]
    assert sorted(min(f) for f in free[:4]) == [0, 1, 2, 3]
    assert free[4] == free[0]
    assert "clamped multi-node interventions" in quality["issues"][0]["message"]
    assert regime["targets"][0] == [] and len(regime["targets"][1]) == 2


def test_changed_mechanisms_follow_the_clamping(clamped_fit):
    _, model = clamped_fit
    changed = model.changed_mechanisms_
    assert changed.shape == (5, 4) and changed.dtype == bool
    assert not changed[0].any() and not changed[4].any()  # environment 4 repeats 0
    assert all(changed[k].sum() == 2 for k in (1, 2, 3))


def test_intersections_of_subspaces_give_the_columns():
    rng = np.random.default_rng(0)
    M = np.linalg.qr(rng.normal(size=(3, 3)))[0] @ np.diag([1.0, 2.0, 0.5])
    M = M / np.linalg.norm(M, axis=0)
    # Environment k clamps latent k only: its subspace is spanned by the other two columns.
    subspaces = [np.linalg.qr(np.delete(M, k, axis=1))[0] for k in range(3)]
    columns, sources = clamped.mixing_columns(subspaces, 3)
    assert columns.shape == (3, 3) and len(sources) == 3
    cos = np.abs(columns.T @ M)
    assert np.allclose(np.sort(cos.max(axis=1)), 1.0)
    assert sorted(cos.argmax(axis=1).tolist()) == [0, 1, 2]


def test_an_unresolved_subspace_leaves_latents_unidentified():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(4, 4))
    M /= np.linalg.norm(M, axis=0)
    subspaces = [M[:, :1] * 1.0, np.linalg.qr(M[:, 1:])[0]]
    columns, _ = clamped.mixing_columns(subspaces, 4)
    assert columns.shape == (4, 1)
    encoder = clamped.reduced_encoder(columns, 4)
    assert encoder.shape == (4, 4) and np.isfinite(encoder).all()


def test_full_rank_data_never_take_the_clamped_reading(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the clamped reading ran on full-rank data")

    monkeypatch.setattr(_fit, "_clamped_fit", fail)
    sim = simulate(3, 4, 300, random_state=0)
    model = CREATOR(3, random_state=0, quality=False).fit(sim.X)
    assert "clamped" not in model.diagnostics_



def test_some_clamped_environments_among_full_rank_ones_are_still_refused():
    sim = simulate_family("multi_node_crl", 3, 3, 200, n_features=3, random_state=0)
    full = np.random.default_rng(0).laplace(size=(200, 3)) @ sim.H.T
    with pytest.raises(ValueError, match="rank deficient.*3 of the 4 environments"):
        CREATOR(3, random_state=0, quality=False).fit([*sim.X, full])
