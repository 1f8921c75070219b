"""Hostile and messy inputs: a clear error, or a result with an explicit warning.

Each test backs one row of the README table "What happens when...".
"""

import numpy as np
import pytest

from creator_plugin import CREATOR, WeakEvidenceWarning, metrics, simulate


@pytest.fixture(scope="module")
def sim(sim3):
    return sim3


@pytest.fixture(scope="module")
def base(sim, fit):
    return fit(sim.X, 3)


@pytest.mark.parametrize("scale", [1e-8, 1e8])
def test_huge_and_tiny_scales(sim, base, scale, fit_recording):
    model, _ = fit_recording([x * scale for x in sim.X], 3)
    np.testing.assert_array_equal(model.adjacency_matrix_, base.adjacency_matrix_)
    for a, b in zip(model.latents_, base.latents_):
        np.testing.assert_allclose(a, b, atol=1e-8)



@pytest.mark.parametrize("scales", [(1e-200,) * 4, (1.0, 1e-200, 1e-200, 1e-150),
                                    (1e150, 1.0, 1e-200, 1.0)])
def test_tiny_and_far_apart_column_scales_fit_save_and_load(sim, base, scales, fit_recording,
                                                            tmp_path):
    """Columns near 1e-200, or in units 1e350 apart: the same fit, and its file loads.

    A fit saved a model its loader refused (its mixing's rank was judged in
    the data's units, where rows of size 1e-200 beside rows of size 1 count
    as zero).
    """
    D = np.array(scales)
    model, _ = fit_recording([x * D for x in sim.X], 3)
    np.testing.assert_array_equal(model.adjacency_matrix_, base.adjacency_matrix_)
    for a, b in zip(model.latents_, base.latents_):
        np.testing.assert_allclose(a, b, atol=1e-8)
    np.testing.assert_allclose(model.mixing_ / D[:, None], base.mixing_, rtol=1e-6, atol=1e-9)
    model.save(tmp_path / "model.npz")
    loaded = CREATOR.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.mixing_, model.mixing_)
    np.testing.assert_allclose(loaded.transform(sim.X[0] * D), base.transform(sim.X[0]),
                               atol=1e-8)


def test_constant_column_dropped_with_warning(sim, base, fit_recording):
    X = [np.column_stack([x, np.full(len(x), 3.0)]) for x in sim.X]
    model, caught = fit_recording(X, 3)
    assert any("constant within every environment" in str(w.message) for w in caught)
    assert model.diagnostics_["dropped_columns"] == [4]
    np.testing.assert_array_equal(model.adjacency_matrix_, base.adjacency_matrix_)


def test_near_constant_noise_column_warns(sim, fit_recording):
    rng = np.random.default_rng(0)
    X = [np.column_stack([x, 5 + 1e-6 * rng.standard_normal(len(x))]) for x in sim.X]
    model, caught = fit_recording(X, 3)
    assert any("nearly unrelated to the other columns" in str(w.message) for w in caught)
    assert model.diagnostics_["unrelated_columns"] == [4]


def test_duplicated_columns(sim, base, fit_recording):
    X = [np.column_stack([x, x[:, :2], 2 * x[:, 3]]) for x in sim.X]
    model, caught = fit_recording(X, 3)
    np.testing.assert_array_equal(model.adjacency_matrix_, base.adjacency_matrix_)
    assert not any("unrelated" in str(w.message) for w in caught)


def test_very_unequal_sample_sizes(fit_recording):
    sim = simulate(3, 4, [4000, 150, 1000, 300], random_state=3)
    model, _ = fit_recording(sim.X, 3)
    assert [L.shape[0] for L in model.latents_] == [4000, 150, 1000, 300]
    ev = metrics.evaluate_model(model, sim)
    assert ev["locr2"] > 0.9


@pytest.mark.slow
def test_p_much_larger_than_d_with_measurement_noise(fit_recording):
    sim = simulate(3, 4, 1000, n_features=200, measurement_noise=0.1, random_state=0)
    model, caught = fit_recording(sim.X, 3)
    ev = metrics.evaluate_model(model, sim)
    assert ev["shd"] == 0 and ev["locr2"] > 0.95
    assert model.components_.shape == (3, 200)
    assert not any("unrelated" in str(w.message) for w in caught)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gaussian_noise_warns_weak_evidence(seed, fit_recording):
    sim = simulate(4, 4, 1000, noise_shape=2.0, random_state=seed)
    model, caught = fit_recording(sim.X, 4)
    assert any(issubclass(w.category, WeakEvidenceWarning) for w in caught)
    assert model.diagnostics_["weak_ordering_steps"]
    assert model.adjacency_matrix_.shape == (4, 4)  # the fit still returns


@pytest.mark.slow
def test_non_gaussian_noise_does_not_warn(fit_recording):
    for seed in range(6):
        sim = simulate(5, 5, 1000, random_state=seed)
        model, caught = fit_recording(sim.X, 5)
        assert not any(issubclass(w.category, WeakEvidenceWarning) for w in caught), seed
        assert model.diagnostics_["weak_ordering_steps"] == []


def test_environment_with_too_few_rows(sim):
    X = [sim.X[0], sim.X[1][:12], sim.X[2]]
    with pytest.raises(ValueError, match=r"X_list\[1\] has 12 rows"):
        CREATOR(3).fit(X)
