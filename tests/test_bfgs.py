"""The ascents' BFGS: SciPy's own below its size, the rank-two update in place above it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize

import creator_plugin._bfgs as bfgs
from creator_plugin._bfgs import same_point


def _rosenbrock(x):
    return optimize.rosen(x), optimize.rosen_der(x)


def _scipy(fun, x0, **options):
    return optimize.minimize(fun, x0, jac=True, method="BFGS", options=options)


def _quartic(n: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(n, n))
    A = Q @ Q.T / n + 0.1 * np.eye(n)
    b = rng.normal(size=n)

    def fun(x):
        return 0.5 * x @ A @ x - b @ x + 0.01 * np.sum(x**4), A @ x - b + 0.04 * x**3

    return fun


@pytest.mark.parametrize("n", [3, 12, 40])
def test_below_the_size_is_scipys_bfgs_bit_for_bit(n):
    x0 = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    for options in ({"gtol": 1e-6, "maxiter": 5000}, {"gtol": 1e-12, "maxiter": 7}):
        ref = _scipy(_rosenbrock, x0, **options)
        own = bfgs.minimize_bfgs(_rosenbrock, x0, **options)
        np.testing.assert_array_equal(own.x, ref.x)
        np.testing.assert_array_equal(own.hess_inv, ref.hess_inv)
        assert (own.fun, own.nit, own.nfev, own.status) == (ref.fun, ref.nit, ref.nfev, ref.status)
    H0 = np.diag(np.linspace(0.5, 2.0, n))
    ref = _scipy(_rosenbrock, x0, gtol=1e-6, maxiter=5000, hess_inv0=H0)
    own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-6, maxiter=5000, hess_inv0=H0)
    np.testing.assert_array_equal(own.x, ref.x)


@pytest.mark.parametrize("n", [6, 30])
def test_own_loop_reaches_scipys_minimum(monkeypatch, n):
    # Forced below its size, the own loop (rank-two update in place, SciPy's
    # public line search) minimises what SciPy's BFGS minimises, in about as
    # many iterations, with a symmetric inverse Hessian.
    monkeypatch.setattr(bfgs, "RANK_TWO_MIN_SIZE", 1)
    fun = _rosenbrock if n < 10 else _quartic(n)  # (Rosenbrock has two minima from n = 4)
    x0 = np.random.default_rng(n).uniform(-0.5, 0.5, n)
    ref = _scipy(fun, x0, gtol=1e-6, maxiter=5000)
    own = bfgs.minimize_bfgs(fun, x0, gtol=1e-6, maxiter=5000)
    assert ref.success and own.success
    assert own.nit == pytest.approx(ref.nit, rel=0.3)
    np.testing.assert_allclose(own.x, ref.x, atol=1e-5)
    assert own.fun == pytest.approx(ref.fun, abs=1e-9)
    assert own.hess_inv.shape == (n, n)
    np.testing.assert_array_equal(own.hess_inv, own.hess_inv.T)


@pytest.mark.slow
def test_large_problem_reaches_scipys_minimiser_and_reads_its_start():
    n = bfgs.RANK_TWO_MIN_SIZE + 44
    fun = _quartic(n)
    ref = _scipy(fun, np.zeros(n), gtol=1e-6, maxiter=2000)
    own = bfgs.minimize_bfgs(fun, np.zeros(n), gtol=1e-6, maxiter=2000)
    assert ref.success and own.success
    np.testing.assert_allclose(own.x, ref.x, atol=1e-5)
    assert own.nit == pytest.approx(ref.nit, rel=0.3)
    np.testing.assert_array_equal(own.hess_inv, own.hess_inv.T)
    H0 = np.diag(np.linspace(0.5, 2.0, n))
    kept = H0.copy()
    warm = bfgs.minimize_bfgs(fun, np.zeros(n), gtol=1e-6, maxiter=2000, hess_inv0=H0)
    np.testing.assert_array_equal(H0, kept)  # read, not modified
    np.testing.assert_allclose(warm.x, ref.x, atol=1e-4)


@pytest.mark.slow
def test_large_quadratic_reaches_its_minimiser_from_a_given_inverse_hessian():
    rng = np.random.default_rng(0)
    n = bfgs.RANK_TWO_MIN_SIZE + 44
    Q = rng.normal(size=(n, n))
    A = Q @ Q.T / n + np.eye(n)
    b = rng.normal(size=n)

    def quad(x):
        return 0.5 * x @ A @ x - b @ x, A @ x - b

    H0 = np.linalg.inv(A + 0.5 * np.eye(n))
    H0 = (H0 + H0.T) / 2
    res = bfgs.minimize_bfgs(quad, np.zeros(n), gtol=1e-6, maxiter=1000, hess_inv0=H0)
    assert res.success and res.status == 0
    np.testing.assert_allclose(res.x, np.linalg.solve(A, b), atol=1e-5)
    cold = bfgs.minimize_bfgs(quad, np.zeros(n), gtol=1e-6, maxiter=1000)
    assert res.nit < cold.nit  # the warm start is used
    np.testing.assert_array_equal(res.hess_inv, res.hess_inv.T)


def test_iteration_cap_and_exceptions(monkeypatch):
    monkeypatch.setattr(bfgs, "RANK_TWO_MIN_SIZE", 1)
    x0 = np.random.default_rng(1).uniform(-1.5, 1.5, 12)
    capped = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-12, maxiter=5)
    assert capped.nit == 5 and capped.status == 1 and not capped.success

    class Stop(Exception):
        pass

    def fun(x):
        if x[0] > 0.5:
            raise Stop
        return float(-x[0]), np.array([-1.0, 0.0])

    with pytest.raises(Stop):
        bfgs.minimize_bfgs(fun, np.zeros(2), gtol=1e-6, maxiter=50)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=4),
       st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=4))
def test_same_point_is_array_equal(a, b):
    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    assert same_point(x, y) == np.array_equal(x, y)
    assert same_point(x, x.copy()) == np.array_equal(x, x.copy())


def test_split_objective_runs_jac_true_iterates_bit_for_bit():
    # L-BFGS-B within bounds (the factor fit's call) and BFGS: the same
    # iterates, values and counts as minimize(fun, jac=True).
    fun = _quartic(7)
    x0 = np.linspace(-1.0, 1.0, 7)
    for kwargs in ({"method": "L-BFGS-B", "bounds": [(-0.3, 0.2)] * 7,
                    "options": {"ftol": 1e-12, "gtol": 1e-9, "maxiter": 1000}},
                   {"method": "BFGS", "options": {"gtol": 1e-9}}):
        ref = optimize.minimize(fun, x0, jac=True, **kwargs)
        own = bfgs.minimize_split(fun, x0, **kwargs)
        np.testing.assert_array_equal(own.x, ref.x)
        assert (own.fun, own.nit, own.nfev) == (ref.fun, ref.nit, ref.nfev)


def test_split_objective_evaluates_again_for_a_gradient_elsewhere():
    calls = []

    def fun(x):
        calls.append(x.copy())
        return float(x @ x), 2 * x

    split = bfgs.SplitObjective(fun)
    assert split.value(np.array([1.0, 2.0])) == 5.0
    np.testing.assert_array_equal(split.grad(np.array([1.0, 2.0])), [2.0, 4.0])
    assert len(calls) == 1  # the gradient at the last point comes with its value
    np.testing.assert_array_equal(split.grad(np.array([3.0, 0.0])), [6.0, 0.0])
    assert len(calls) == 2


@pytest.mark.parametrize("N", [1, 2, 255, 256, 257, 600])
def test_fill_upper_is_the_tril_sum_in_place(N):
    rng = np.random.default_rng(N)
    H = np.asfortranarray(rng.normal(size=(N, N)))
    H[N - 1, 0] = H[0, 0] = -0.0
    ref = np.tril(H)
    ref += np.tril(ref, -1).T
    before = H.ctypes.data
    bfgs._fill_upper(H)
    assert H.ctypes.data == before
    np.testing.assert_array_equal(H, ref)
    np.testing.assert_array_equal(np.signbit(H), np.signbit(ref))  # -0.0 too


def test_beyond_the_memory_bound_runs_limited_memory_bfgs():
    # The dense inverse Hessian would take 8 * 12^2 bytes: above a bound of
    # 1000 bytes SciPy's L-BFGS-B runs (no matrix kept), reaching BFGS's minimum.
    fun = _quartic(12)
    x0 = np.linspace(-1.0, 1.0, 12)
    dense = bfgs.minimize_bfgs(fun, x0, gtol=1e-8, maxiter=500, max_dense_bytes=8 * 144)
    limited = bfgs.minimize_bfgs(fun, x0, gtol=1e-8, maxiter=500, max_dense_bytes=1000)
    assert dense.hess_inv.shape == (12, 12) and limited.hess_inv is None
    assert limited.success and "L-BFGS-B" not in dense.message
    ref = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options={
        "gtol": 1e-8, "maxiter": 500, "ftol": 0.0, "maxcor": bfgs.LIMITED_MEMORY_CORRECTIONS})
    np.testing.assert_array_equal(limited.x, ref.x)
    np.testing.assert_allclose(limited.x, dense.x, atol=1e-6)
