"""Memory: inputs are read in place (never copied, never modified); what a fit adds and keeps."""

from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest

from creator_plugin import simulate
from creator_plugin._validation import check_environments


def test_inputs_are_read_in_place_and_never_modified(fit):
    sim = simulate(3, 3, 500, n_features=5, random_state=0)
    before = [x.copy() for x in sim.X]
    checked = check_environments(sim.X, n_latent=3)
    assert all(np.shares_memory(a, b) for a, b in zip(checked, sim.X))
    assert not any(a.flags.writeable for a in checked)  # a write would raise, not corrupt
    model = fit(sim.X, 3)
    for x, b in zip(sim.X, before):
        np.testing.assert_array_equal(x, b)
        assert x.flags.writeable  # the caller's own arrays keep their flags
    model.transform(sim.X[0])
    np.testing.assert_array_equal(sim.X[0], before[0])


@pytest.mark.slow
def test_other_dtypes_and_layouts_are_converted_without_touching_the_input(fit):
    sim = simulate(3, 3, 500, random_state=0)
    as_f32 = [x.astype(np.float32) for x in sim.X]
    fortran = [np.asfortranarray(x) for x in sim.X]
    checked = check_environments(as_f32, n_latent=3)
    assert all(a.dtype == np.float64 and not np.shares_memory(a, b)
               for a, b in zip(checked, as_f32))
    ref = fit(sim.X, 3)
    np.testing.assert_array_equal(fit(fortran, 3).adjacency_matrix_, ref.adjacency_matrix_)
    for a, b in zip(fit(fortran, 3).latents_, ref.latents_):
        np.testing.assert_allclose(a, b, atol=1e-10)


def test_stacked_input_sorted_by_label_is_split_into_views_and_unsorted_is_not_mixed_up(fit):
    sim = simulate(3, 3, 400, random_state=1)
    X, labels = sim.stacked()
    views = check_environments(X, labels, n_latent=3)
    assert all(np.shares_memory(v, X) for v in views)
    perm = np.random.default_rng(0).permutation(len(labels))
    shuffled = check_environments(X[perm], labels[perm], n_latent=3)
    for a, b in zip(shuffled, views):
        np.testing.assert_array_equal(np.sort(a, axis=0), np.sort(b, axis=0))
    ref = fit(sim.X, 3)
    np.testing.assert_array_equal(fit(X[perm], 3, environments=labels[perm]).adjacency_matrix_,
                                  ref.adjacency_matrix_)


def _traced_fit(X, d, fit):
    tracemalloc.start()
    try:
        model = fit(X, d)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return model, kept, peak


def _growth(d, p, sizes, fit):
    """Input bytes, peak and kept traced bytes of a fit at two sample sizes, and their growth."""
    rows = []
    for n in sizes:
        sim = simulate(d, d, n, n_features=p, measurement_noise=0.05 if p > d else 0.0,
                       random_state=0)
        model, kept, peak = _traced_fit(sim.X, d, fit)
        rows.append((sum(x.nbytes for x in sim.X), peak, kept, model))
    (s0, p0, k0, _), (s1, p1, k1, model) = rows
    return (p1 - p0) / (s1 - s0), (k1 - k0) / (s1 - s0), model


@pytest.mark.slow
def test_with_many_columns_the_fit_adds_a_fraction_of_its_input(fit):
    """p = 100 >> d = 3: the fit's own arrays are (n, d); the input is read in blocks, so
    the memory a fit adds grows by a fraction of what the input grows by."""
    peak_growth, kept_growth, _ = _growth(3, 100, [30_000, 60_000], fit)
    assert peak_growth < 0.15
    assert kept_growth < 0.05  # latents_: 3 of 100 columns


@pytest.mark.slow
def test_with_p_equal_d_the_model_keeps_only_the_latents(fit):
    """p = d: every (n, d) array is as large as the input. The model keeps latents_ (noise_
    is computed on access); the fit adds at most twice its input: the ordering
    step's residuals overwrite the reduced data, the later steps read noises and features
    as maps of it, and it is gone before the latents exist."""
    peak_growth, kept_growth, model = _growth(5, 5, [20_000, 60_000], fit)
    assert kept_growth < 1.05
    assert peak_growth < 2.0
    assert "noise_" not in vars(model)


def test_noise_is_computed_from_latents_and_survives_pickling(fit):
    sim = simulate(4, 4, 800, random_state=2)
    model = fit(sim.X, 4)
    for L, mu, W, E, s in zip(model.latents_, model.intercepts_, model.weights_, model.noise_,
                              model.noise_scales_):
        np.testing.assert_allclose(E, (L - mu) @ (np.eye(4) - W), atol=1e-12)
        np.testing.assert_allclose(E.std(axis=0), s, rtol=1e-8)
        # OLS residuals: uncorrelated with the parents they were regressed on.
        for i in range(4):
            pa = np.flatnonzero(model.adjacency_matrix_[:, i])
            if pa.size:
                np.testing.assert_allclose((L - mu)[:, pa].T @ E[:, i], 0, atol=1e-8 * len(L))
    clone = pickle.loads(pickle.dumps(model))
    for a, b in zip(clone.noise_, model.noise_):
        np.testing.assert_array_equal(a, b)


def test_noise_of_an_unfitted_model_is_an_error():
    from sklearn.exceptions import NotFittedError

    from creator_plugin import CREATOR

    with pytest.raises(NotFittedError):
        CREATOR(3).noise_  # noqa: B018


@pytest.mark.slow
def test_memory_mapped_files_are_fitted_in_place(tmp_path, fit):
    """``np.load(..., mmap_mode="r")`` arrays are read in blocks, never loaded whole."""
    sim = simulate(3, 3, 2000, n_features=6, measurement_noise=0.05, random_state=0)
    paths = []
    for k, x in enumerate(sim.X):
        paths.append(tmp_path / f"x{k}.npy")
        np.save(paths[-1], x)
    mapped = [np.load(p, mmap_mode="r") for p in paths]
    checked = check_environments(mapped, n_latent=3)
    assert all(np.shares_memory(a, m) for a, m in zip(checked, mapped))
    ref = fit(sim.X, 3)
    model = fit(mapped, 3)
    np.testing.assert_array_equal(model.adjacency_matrix_, ref.adjacency_matrix_)
    for a, b in zip(model.latents_, ref.latents_):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_the_verdicts_mechanism_and_mean_shift_checks_read_the_latents_in_blocks():
    """No centred or squared copy of the latents: the traced peak is a block, not an input."""
    from creator_plugin.quality import mean_shift_share, mechanism_heterogeneity

    rng = np.random.default_rng(0)
    latents = [rng.laplace(size=(1_000_000, 5)) * (1 + k) for k in range(2)]  # 80 MB in all
    size = sum(L.nbytes for L in latents)
    for check in (mechanism_heterogeneity, mean_shift_share):
        tracemalloc.start()
        try:
            check(latents)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 0.4 * size, (check.__name__, peak / size)
