"""Alignment of one fit's latents to another's, shared by the bootstrap and the verdict."""

import numpy as np

from creator_plugin.stability import align_latents, resample_rows


def test_align_latents_undoes_a_permutation_and_signs():
    rng = np.random.default_rng(0)
    L = rng.standard_normal((500, 4))
    perm = np.array([2, 0, 3, 1])
    signs = np.array([1.0, -1.0, -1.0, 1.0])
    other = np.empty_like(L)
    other[:, perm] = L * signs  # full latent i is other's column perm[i]
    other += 0.05 * rng.standard_normal(other.shape)
    found, sign, corr = align_latents(L, other)
    np.testing.assert_array_equal(found, perm)
    np.testing.assert_array_equal(sign, signs)
    assert np.all(corr > 0.99)


def test_resample_rows_keeps_sizes_draws_existing_rows_and_leaves_input_alone():
    X = [np.arange(10.0).reshape(5, 2), np.arange(6.0).reshape(3, 2) + 100]
    before = [x.copy() for x in X]
    out = resample_rows(X, np.random.default_rng(0))
    assert [o.shape for o in out] == [(5, 2), (3, 2)]
    for o, x in zip(out, X):
        assert all(any(np.array_equal(row, r) for r in x) for row in o)
    for x, b in zip(X, before):
        np.testing.assert_array_equal(x, b)
