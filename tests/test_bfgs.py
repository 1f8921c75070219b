"""The ascents' BFGS loop against SciPy's BFGS: its steps to the bit, and in rank-two form."""

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


@pytest.mark.parametrize("n", [6, 30])
def test_rank_two_update_takes_scipys_steps(monkeypatch, n):
    # Forced below the size threshold, the own loop must follow SciPy's
    # iterations: same count, same evaluations, same answer up to rounding.
    monkeypatch.setattr(bfgs, "RANK_TWO_MIN_SIZE", 1)
    x0 = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    ref = _scipy(_rosenbrock, x0, gtol=1e-6, maxiter=5000)
    own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-6, maxiter=5000)
    assert ref.success and own.success
    assert own.nit == pytest.approx(ref.nit, rel=0.05)
    np.testing.assert_allclose(own.x, ref.x, atol=1e-6)
    assert own.fun == pytest.approx(ref.fun, abs=1e-9)
    assert own.hess_inv.shape == (n, n)
    np.testing.assert_array_equal(own.hess_inv, own.hess_inv.T)


def test_rank_two_on_request_takes_scipys_steps():
    # rank_two=True asks for the rank-two form below the size threshold
    # (the revision's refinements); rank_two=False keeps SciPy's form.
    x0 = np.random.default_rng(3).uniform(-1.5, 1.5, 20)
    assert bfgs.RANK_TWO_MIN_SIZE > 20
    ref = _scipy(_rosenbrock, x0, gtol=1e-6, maxiter=5000)
    own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-6, maxiter=5000, rank_two=True)
    assert own.success and own.nit == pytest.approx(ref.nit, rel=0.05)
    np.testing.assert_allclose(own.x, ref.x, atol=1e-6)
    np.testing.assert_array_equal(own.hess_inv, own.hess_inv.T)  # only the rank-two form
    scipys = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-6, maxiter=5000, rank_two=False)
    np.testing.assert_array_equal(scipys.x, ref.x)


def test_first_iterations_equal_scipys_to_rounding(monkeypatch):
    monkeypatch.setattr(bfgs, "RANK_TWO_MIN_SIZE", 1)
    x0 = np.random.default_rng(1).uniform(-1.5, 1.5, 12)
    for it in (1, 2, 5, 10):
        ref = _scipy(_rosenbrock, x0, gtol=1e-12, maxiter=it)
        own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-12, maxiter=it)
        assert own.nit == ref.nit == it
        assert own.nfev == ref.nfev
        np.testing.assert_allclose(own.x, ref.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(own.hess_inv, ref.hess_inv, rtol=1e-8, atol=1e-10)
        assert own.status == ref.status == 1


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


def test_below_the_threshold_is_scipys_bfgs_bit_for_bit():
    x0 = np.random.default_rng(2).uniform(-1.5, 1.5, 8)
    ref = _scipy(_rosenbrock, x0, gtol=1e-6, maxiter=300)
    own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-6, maxiter=300)
    np.testing.assert_array_equal(own.x, ref.x)
    assert own.nit == ref.nit


def test_exceptions_of_the_function_propagate(monkeypatch):
    monkeypatch.setattr(bfgs, "RANK_TWO_MIN_SIZE", 1)

    class Stop(Exception):
        pass

    def fun(x):
        if x[0] > 0.5:
            raise Stop
        return float(-x[0]), np.array([-1.0, 0.0])

    with pytest.raises(Stop):
        bfgs.minimize_bfgs(fun, np.zeros(2), gtol=1e-6, maxiter=50)


@pytest.mark.parametrize("n", [3, 12, 40])
def test_below_the_size_threshold_it_takes_scipys_steps_to_the_bit(n):
    # Below RANK_TWO_MIN_SIZE the own loop applies SciPy's update in SciPy's
    # form: the same iterates, evaluations and inverse Hessian, bit for bit.
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


@pytest.mark.parametrize("d", [4, 16])
def test_the_ascents_run_the_own_loop(monkeypatch, d):
    # The polish and the joint re-estimation of a direction never go through
    # SciPy's minimize (its wrappers cost a tenth of a small fit).
    from creator_plugin import ordering

    def refused(*args, **kwargs):
        raise AssertionError("scipy.optimize.minimize called")

    monkeypatch.setattr(bfgs.optimize, "minimize", refused)
    rng = np.random.default_rng(d)
    X_red = [rng.laplace(size=(400, d)) @ rng.normal(size=(d, d)) for _ in range(2)]
    X_red = [x - x.mean(axis=0) for x in X_red]
    start = np.linalg.qr(rng.normal(size=(d, d)))[0]
    out, info = ordering.polish_directions(X_red, start, max_iter=20)
    assert info["evaluations"] >= 2 and info["contrast"] >= info["contrast_start"]
    np.testing.assert_allclose(np.linalg.norm(out, axis=0), 1.0)
    w, corr2 = ordering.joint_direction(X_red, start[:, 0], np.zeros((d, 0)))
    assert np.linalg.norm(w) == pytest.approx(1.0) and 0.0 <= corr2 <= 1.0 + 1e-12


@pytest.mark.slow
def test_without_scipys_line_search_it_is_scipys_bfgs(monkeypatch):
    # A SciPy release without the private line search: the same problem goes
    # to SciPy's BFGS, with the same answer as calling it directly.
    monkeypatch.setattr(bfgs, "_line_search_wolfe12", None)
    n = bfgs.RANK_TWO_MIN_SIZE
    x0 = np.random.default_rng(3).uniform(-1.2, 1.2, n)
    ref = _scipy(_rosenbrock, x0, gtol=1e-5, maxiter=40)
    own = bfgs.minimize_bfgs(_rosenbrock, x0, gtol=1e-5, maxiter=40)
    np.testing.assert_array_equal(own.x, ref.x)
    assert own.nit == ref.nit


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=4),
       st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=4))
def test_same_point_is_array_equal(a, b):
    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    assert same_point(x, y) == np.array_equal(x, y)
    assert same_point(x, x.copy()) == np.array_equal(x, x.copy())


def test_symmetric_blas_form_reaches_the_numpy_forms_minimiser(monkeypatch):
    # From SYMMETRIC_MIN_SIZE on the rank-two update keeps one triangle and
    # runs in place through BLAS: the same update in exact arithmetic, so the
    # same minimiser in about as many iterations, and a symmetric inverse
    # Hessian returned in full.
    rng = np.random.default_rng(5)
    n = 300
    Q = rng.normal(size=(n, n))
    A = Q @ Q.T / n + 0.1 * np.eye(n)
    b = rng.normal(size=n)

    def fun(x):
        return 0.5 * x @ A @ x - b @ x + 0.01 * np.sum(x**4), A @ x - b + 0.04 * x**3

    monkeypatch.setattr(bfgs, "SYMMETRIC_MIN_SIZE", 10**9)
    dense = bfgs.minimize_bfgs(fun, np.zeros(n), gtol=1e-6, maxiter=2000, rank_two=True)
    monkeypatch.setattr(bfgs, "SYMMETRIC_MIN_SIZE", n)
    H0 = np.diag(np.linspace(0.5, 2.0, n))
    blas = bfgs.minimize_bfgs(fun, np.zeros(n), gtol=1e-6, maxiter=2000, rank_two=True)
    assert dense.success and blas.success
    np.testing.assert_allclose(blas.x, dense.x, atol=1e-6)
    assert blas.nit == pytest.approx(dense.nit, rel=0.25)
    np.testing.assert_array_equal(blas.hess_inv, blas.hess_inv.T)
    # a given start is read, not modified
    kept = H0.copy()
    warm = bfgs.minimize_bfgs(fun, np.zeros(n), gtol=1e-6, maxiter=2000, hess_inv0=H0,
                              rank_two=True)
    np.testing.assert_array_equal(H0, kept)
    np.testing.assert_allclose(warm.x, dense.x, atol=1e-4)
