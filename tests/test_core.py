"""Recovery, invariance and API tests of the CREATOR estimator."""

import numpy as np
import pytest

from creator_plugin import CREATOR, metrics, simulate
from creator_plugin.disentangle import disentangling_matrix, surrounded_sets
from creator_plugin.pruning import prune, standardised_coefficients
from creator_plugin.sem import regression_matrices


@pytest.mark.slow
def test_exact_recovery_small(fit):
    """d=3, K=3, n=2000 over ten seeds: every order right, LocR^2 > 0.95, and the
    exact DAG in at least 9 of 10 (seed 4 has an edge whose weight barely varies
    across environments, 0.71/0.50/0.49, so it is close to non-identifiable)."""
    exact = 0
    for seed in range(10):
        sim = simulate(3, 3, 2000, random_state=seed)
        model = fit(sim.X, sim.params["n_latent"])
        ev = metrics.evaluate_model(model, sim)
        assert ev["correct_order"], seed
        assert ev["locr2"] > 0.95, (seed, ev["locr2"])
        exact += ev["exact_dag"]
    assert exact >= 9


@pytest.mark.slow
def test_recovers_chain_with_p_greater_than_d(fit):
    sim = simulate(4, 5, 2000, n_features=10, edge_prob=0.6, random_state=11)
    model = fit(sim.X, sim.params["n_latent"])
    ev = metrics.evaluate_model(model, sim)
    assert ev["shd"] == 0
    assert ev["locr2"] > 0.97


@pytest.mark.slow
def test_offsets_between_environments_do_not_change_the_decoder(fit):
    """A per-environment offset in measurement space (a lab's calibration, outside
    the span of the mixing matrix) leaves the fit and ``mixing_`` unchanged: the
    decoder is estimated within environments. A decoder fitted on the pooled
    rows would absorb the offsets."""
    sim = simulate(3, 4, 500, n_features=8, random_state=3)
    rng = np.random.default_rng(0)
    shifted = [x + 50 * rng.standard_normal(x.shape[1]) for x in sim.X]
    a, b = fit(sim.X, 3), fit(shifted, 3)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    np.testing.assert_allclose(b.components_, a.components_, atol=1e-10)
    np.testing.assert_allclose(b.mixing_, a.mixing_, atol=1e-10)


def test_fitted_attributes_shapes_and_conventions(fit):
    sim = simulate(3, 4, 500, n_features=5, random_state=3)
    model = fit(sim.X, sim.params["n_latent"])
    d, p, K = 3, 5, 4
    A = model.adjacency_matrix_
    assert A.shape == (d, d) and A.dtype.kind == "i"
    assert set(np.unique(A)) <= {0, 1}
    assert np.all(np.tril(A) == 0)  # discovery order is a topological order
    assert model.causal_order_ == [0, 1, 2]
    assert model.components_.shape == (d, p) and model.mixing_.shape == (p, d)
    assert model.mean_.shape == (p,)
    assert len(model.latents_) == len(model.noise_) == len(model.weights_) == K
    for L, E, W in zip(model.latents_, model.noise_, model.weights_):
        assert L.shape == (500, d) and E.shape == (500, d) and W.shape == (d, d)
        assert np.all(W[A == 0] == 0)
    np.testing.assert_allclose(model.components_ @ model.mixing_, np.eye(d), atol=1e-8)
    pooled = np.vstack([L - L.mean(0) for L in model.latents_])
    np.testing.assert_allclose(pooled.std(axis=0), 1.0, rtol=1e-8)
    diag = model.diagnostics_
    assert len(diag["ordering"]) == d
    assert len(diag["pruning"]) == d * (d - 1) // 2
    for dec in diag["pruning"]:
        assert dec["edge"] == bool(A[dec["parent"], dec["child"]])


def test_weights_reproduce_sem(fit):
    sim = simulate(3, 3, 1000, random_state=5)
    model = fit(sim.X, sim.params["n_latent"])
    for L, mu, W, E in zip(model.latents_, model.intercepts_, model.weights_, model.noise_):
        np.testing.assert_allclose((L - mu) - (L - mu) @ W, E, atol=1e-8)


def test_transform_reproduces_latents_and_inverse(fit):
    sim = simulate(3, 3, 800, n_features=6, random_state=2)
    model = fit(sim.X, sim.params["n_latent"])
    for X, L in zip(sim.X, model.latents_):
        np.testing.assert_allclose(model.transform(X), L, atol=1e-10)
        # Noise-free data lies in col(H): the decoder reconstructs it exactly.
        np.testing.assert_allclose(model.inverse_transform(L), X, atol=1e-6 * np.abs(X).max())
    # A list of environments (what fit takes) is named, not read as a 3-D array.
    with pytest.raises(ValueError, match=r"list of 3 arrays.*\[model\.transform\(x\)"):
        model.transform(sim.X)
    with pytest.raises(ValueError, match=r"\[model\.inverse_transform\(x\) for x in L_list"):
        model.inverse_transform(model.latents_)
    with pytest.raises(ValueError, match="remove or impute them first"):
        model.transform(np.full((2, 6), np.nan))


@pytest.mark.slow
def test_fit_with_environment_labels_matches_list_input(fit):
    sim = simulate(3, 3, 600, random_state=4)
    X, labels = sim.stacked()
    a = fit(sim.X, 3)
    b = fit(X, 3, environments=labels)
    L = CREATOR(3, random_state=0).fit_transform(X, environments=labels)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    for la, lb in zip(a.latents_, b.latents_):
        np.testing.assert_allclose(la, lb)
    np.testing.assert_allclose(L, np.vstack(a.latents_))


@pytest.mark.slow
def test_graph_invariant_to_rescaling_columns_and_data(fit):
    sim = simulate(4, 4, 1500, n_features=6, random_state=7)
    base = fit(sim.X, sim.params["n_latent"])
    rng = np.random.default_rng(0)
    scales = rng.uniform(0.01, 100, size=6)
    scaled = fit([x * scales for x in sim.X], 4)
    np.testing.assert_array_equal(base.adjacency_matrix_, scaled.adjacency_matrix_)
    for a, b in zip(base.latents_, scaled.latents_):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_pruning_invariant_to_rescaling_features_and_noises():
    sim = simulate(5, 5, 1000, random_state=1)
    from creator_plugin.ordering import topological_ordering
    from creator_plugin.preprocessing import reduce_environments

    def standardised(noises, entangled):
        B = regression_matrices(noises, entangled)
        return standardised_coefficients(B, noises, entangled)

    X_red, _ = reduce_environments(sim.X, 5)
    order = topological_ordering(X_red, random_state=0)
    adj, dec = prune(standardised(order.noises, order.entangled))
    f = np.array([0.001, 10.0, 3.0, 1e4, 0.5])
    g = np.array([1e3, 0.2, 7.0, 1.0, 1e-3])
    adj2, dec2 = prune(
        standardised([z * g for z in order.noises], [y * f for y in order.entangled])
    )
    np.testing.assert_array_equal(adj, adj2)
    np.testing.assert_allclose(
        [x["statistic"] for x in dec], [x["statistic"] for x in dec2], rtol=1e-8
    )


@pytest.mark.slow
def test_same_random_state_is_reproducible(fit):
    sim = simulate(4, 4, 500, random_state=8)
    a, b = fit(sim.X, sim.params["n_latent"]), fit(sim.X, sim.params["n_latent"])
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    np.testing.assert_array_equal(a.components_, b.components_)


def test_inputs_not_modified(fit):
    sim = simulate(3, 3, 400, random_state=9)
    copies = [x.copy() for x in sim.X]
    fit(sim.X, sim.params["n_latent"])
    for x, c in zip(sim.X, copies):
        np.testing.assert_array_equal(x, c)


def test_population_steps_two_and_three_are_exact():
    """With exact population coefficients the pruning and disentanglement are exact."""
    rng = np.random.default_rng(0)
    d, K = 5, 5
    A = np.triu((rng.random((d, d)) < 0.6).astype(int), 1)
    Binv = np.tril(rng.normal(size=(d, d)), -1) + np.diag(rng.uniform(1, 2, d))
    U = []
    for _ in range(K):
        W = A * rng.uniform(0.5, 2.0, (d, d)) * rng.choice([-1, 1], (d, d))
        omega = rng.uniform(0.5, 1.5, d)
        U.append(((np.eye(d) - W).T / omega[:, None]) @ Binv)
    B = np.stack(U)
    adj, _ = prune(B, threshold=1e-6)
    np.testing.assert_array_equal(adj, A)
    C = disentangling_matrix(B, A)
    # Ytilde = Y @ B^T with B = inv(Binv), so Yhat = Y @ (B^T C): column i of
    # B^T C must be supported on sur-bar(i).
    mix = np.linalg.inv(Binv).T @ C
    sur = surrounded_sets(A)
    for i in range(d):
        outside = [t for t in range(d) if t != i and t not in sur[i]]
        assert np.all(np.abs(mix[outside, i]) < 1e-8 * np.abs(mix[:, i]).max())


@pytest.mark.slow
def test_hsic_scorer_runs_and_agrees_on_easy_case(fit):
    sim = simulate(3, 3, 400, random_state=0)
    a = fit(sim.X, sim.params["n_latent"])
    b = fit(sim.X, sim.params["n_latent"], scorer="hsic")
    ev = metrics.evaluate_model(b, sim)
    assert ev["correct_order"]
    assert len(b.diagnostics_["ordering"][0]["scores"]) == 9
    assert a.adjacency_matrix_.shape == b.adjacency_matrix_.shape
