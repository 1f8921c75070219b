"""The ordering step's numerical kernels agree with the plain computations they replace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from creator_plugin import joint_ica, ordering
from creator_plugin.joint_ica import (
    _contrast_sums,
    _contrast_sums_stacked,
    _ordered_contrast,
    _stacked_logcosh_objective,
    _tanh_from,
    joint_direction,
    stack_rows,
)
from creator_plugin.ordering import fastica_logcosh


def _white(rng, n, m):
    X = rng.laplace(size=(n, m)) @ rng.normal(size=(m, m))
    X -= X.mean(axis=0)
    return X @ np.linalg.inv(np.linalg.cholesky(np.cov(X, rowvar=False))).T


@pytest.mark.parametrize("max_iter", [3, 400])
def test_fastica_iteration_reproduces_scikit_learn_exactly(max_iter):
    rng = np.random.default_rng(0)
    for m, n in [(2, 300), (4, 800), (6, 150)]:
        X = _white(rng, n, m)
        w_init = rng.standard_normal((m, m))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            ica = FastICA(n_components=m, whiten=False, max_iter=max_iter, tol=1e-5,
                          w_init=w_init).fit(X)
        W, converged = fastica_logcosh(X.T, w_init, tol=1e-5, max_iter=max_iter)
        np.testing.assert_array_equal(W, ica.components_)
        assert converged == (not any(issubclass(w.category, ConvergenceWarning)
                                     for w in caught))
    assert max_iter == 400 or not converged  # three iterations do not reach 1e-5


def test_tanh_from_the_log_cosh_exponential():
    t = np.concatenate([np.linspace(-40, 40, 10001), [0.0, -0.0, 1e-300, -1e-12, 710.0]])
    e = np.exp(-2.0 * np.abs(t))
    np.testing.assert_allclose(_tanh_from(e, t), np.tanh(t), rtol=0, atol=4e-16)
    away = np.abs(t) > 1e-15  # below, 1 - e rounds to 0: an absolute error of |t|
    assert np.array_equal(np.sign(_tanh_from(e, t))[away], np.sign(t[away]))


def test_stack_rows_only_small_data():
    rng = np.random.default_rng(1)
    R = [rng.normal(size=(n, 3)) for n in (5, 7, 2)]
    R_all, starts, sizes = stack_rows(R)
    np.testing.assert_array_equal(R_all, np.vstack(R))
    assert starts.tolist() == [0, 5, 12] and sizes.tolist() == [5, 7, 2]
    big = [np.zeros((joint_ica.STACK_ELEMENTS // 3 + 1, 3))]
    assert stack_rows(big) is None
    assert stack_rows([np.zeros((0, 3)), np.zeros((4, 3))]) is None


def test_stacked_contrast_sums_equal_the_per_environment_pass():
    rng = np.random.default_rng(2)
    X = [rng.laplace(size=(n, 4)) for n in (300, 120, 501)]
    Ms = [rng.normal(size=(4, 4)) for _ in X]
    stacked = _contrast_sums_stacked(stack_rows(X), Ms)
    for x, M, got in zip(X, Ms, stacked):
        Z = x @ M
        want = (np.log(2 * np.cosh(Z)).sum(axis=0), (Z * np.exp(-Z**2 / 2)).sum(axis=0),
                np.tanh(Z).T @ x, ((1 - Z**2) * np.exp(-Z**2 / 2)).T @ x)
        for a, b, c in zip(got, _contrast_sums(x, M), want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)


def test_contrast_terms_in_scratch_arrays_are_the_allocating_ones_to_the_bit():
    # The in-place form must round exactly like the expressions it replaces,
    # and re-used scratch arrays must not leak one evaluation into the next.
    rng = np.random.default_rng(5)
    Z = rng.laplace(size=(200, 3)) * 3
    a = np.abs(Z)
    e = np.exp(-2.0 * a)
    E = np.exp(-0.5 * Z**2)
    plain = (a + np.log1p(e), Z * E, _tanh_from(e, Z), (1.0 - Z**2) * E)
    out = [np.full_like(Z, np.nan) for _ in range(5)]
    for got, want in zip(joint_ica._contrast_terms(Z, out), plain):
        np.testing.assert_array_equal(got, want)
    X = [rng.laplace(size=(n, 3)) for n in (90, 60)]
    stacked = stack_rows(X)
    M1, M2 = rng.normal(size=(2, 3, 3))
    _contrast_sums_stacked(stacked, [M1, M1])
    again = _contrast_sums_stacked(stacked, [M2, M1])
    fresh = _contrast_sums_stacked(stack_rows(X), [M2, M1])
    for env_again, env_fresh in zip(again, fresh):
        for a_, b_ in zip(env_again, env_fresh):
            np.testing.assert_array_equal(a_, b_)


def test_ordered_contrast_is_the_same_stacked_or_not():
    rng = np.random.default_rng(3)
    X = [rng.laplace(size=(n, 3)) @ rng.normal(size=(3, 3)) for n in (400, 250)]
    scatters = [x.T @ x for x in X]
    g = rng.normal(size=9)
    v1, g1 = _ordered_contrast(g, X, 3, scatters)
    v2, g2 = _ordered_contrast(g, X, 3, scatters, stack_rows(X))
    assert v2 == pytest.approx(v1, rel=1e-13)
    np.testing.assert_allclose(g2, g1, rtol=1e-11, atol=1e-13)


def test_stacked_joint_objective_is_the_sum_over_environments():
    rng = np.random.default_rng(5)
    R = [rng.laplace(size=(n, 4)) @ rng.normal(size=(4, 4)) for n in (300, 500, 200)]
    basis = np.linalg.qr(rng.normal(size=(4, 3)))[0]
    S = np.stack([basis.T @ (x.T @ x) @ basis / x.shape[0] for x in R])
    objective = _stacked_logcosh_objective(stack_rows(R), basis, S)

    def direct(v):
        total = 0.0
        for x in R:
            t = x @ basis @ v / np.sqrt(v @ basis.T @ (x.T @ x) @ basis @ v / x.shape[0])
            total += (np.mean(np.log(np.cosh(t))) - joint_ica.GAUSS_LOGCOSH) ** 2
        return total

    v = rng.normal(size=3)
    value, grad = objective(v)
    assert -value == pytest.approx(direct(v), rel=1e-12)
    h = 1e-6
    numeric = [(direct(v + h * e) - direct(v - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(-grad, numeric, rtol=1e-5, atol=1e-9)


def test_joint_direction_is_the_same_stacked_or_not(monkeypatch):
    rng = np.random.default_rng(4)
    mix = rng.normal(size=(4, 4))
    R = [rng.laplace(size=(n, 4)) * rng.uniform(0.5, 2, 4) @ mix for n in (300, 500, 200)]
    w0 = np.linalg.inv(mix)[:, 0] + 0.1 * rng.normal(size=4)
    found = np.zeros((4, 0))
    stacked = joint_direction(R, w0, found)
    monkeypatch.setattr(joint_ica, "STACK_ELEMENTS", 0)
    looped = joint_direction(R, w0, found)
    # the same objective up to rounding, so the same maximum up to the optimiser's tolerance
    np.testing.assert_allclose(stacked[0], looped[0], atol=1e-6)
    assert stacked[1] == pytest.approx(looped[1], abs=1e-6)
    # and it found the source the start was near
    target = np.linalg.inv(mix)[:, 0]
    assert abs(stacked[0] @ target) / np.linalg.norm(target) > 0.99


@pytest.mark.parametrize("m", [1, 2, 5, 17, 40])
def test_the_direct_eigh_is_scipys_to_the_bit(m):
    # FastICA's decorrelation calls LAPACK directly; it must give exactly
    # what scipy.linalg.eigh gives (and so what scikit-learn's FastICA uses).
    from scipy import linalg

    rng = np.random.default_rng(m)
    for _ in range(5):
        B = rng.normal(size=(m, m))
        w, v = ordering._eigh(B @ B.T)
        w_ref, v_ref = linalg.eigh(B @ B.T)
        np.testing.assert_array_equal(w, w_ref)
        np.testing.assert_array_equal(v, v_ref)


def test_the_direct_eigh_refuses_what_scipys_refuses():
    from scipy import linalg

    bad = np.eye(3)
    bad[1, 2] = bad[2, 1] = np.nan
    for eigh in (ordering._eigh, linalg.eigh):
        with pytest.raises(ValueError, match="must not contain infs or NaNs"):
            eigh(bad)


def test_stacked_joint_objective_keeps_no_state_between_evaluations():
    # Its elementwise terms live in arrays kept for the ascent: an evaluation
    # must not depend on the ones before it.
    rng = np.random.default_rng(6)
    R = [rng.laplace(size=(n, 4)) for n in (300, 200)]
    basis = np.linalg.qr(rng.normal(size=(4, 4)))[0][:, :3]
    S = np.stack([basis.T @ (x.T @ x) @ basis / x.shape[0] for x in R])
    v, w = rng.normal(size=3), rng.normal(size=3)
    reused = _stacked_logcosh_objective(stack_rows(R), basis, S)
    reused(w)
    value, grad = reused(v)
    fresh_value, fresh_grad = _stacked_logcosh_objective(stack_rows(R), basis, S)(v)
    assert value == fresh_value
    np.testing.assert_array_equal(grad, fresh_grad)
