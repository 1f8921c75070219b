"""The factor fit's L-BFGS-B loop against SciPy's minimize: the same iterates to the bit."""

import numpy as np
import pytest
from scipy import optimize

import creator_plugin._lbfgsb as lbfgsb
from creator_plugin.dimension import _factor_discrepancy


def _scipy(fun, x0, lower, upper, **options):
    return optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                             bounds=list(zip(lower, upper)), options=options)


def _shifted_rosenbrock(x):
    return optimize.rosen(x + 1.0), optimize.rosen_der(x + 1.0)


@pytest.mark.parametrize("n", [2, 7, 30])
@pytest.mark.parametrize("options", [
    {"ftol": 1e-12, "gtol": 1e-7, "maxiter": 1000},  # converges, some bounds active
    {"ftol": 1e-12, "gtol": 1e-12, "maxiter": 4},    # stopped by maxiter
])
def test_it_takes_scipys_steps_to_the_bit(n, options):
    # With SciPy's routine missing or changed the function is SciPy's minimize
    # itself, and this comparison holds trivially.
    rng = np.random.default_rng(n)
    x0 = rng.uniform(-2.0, 0.5, n)  # some entries start outside the box: clipped
    lower, upper = np.full(n, -1.5), np.full(n, -0.2)
    ref = _scipy(_shifted_rosenbrock, x0, lower, upper, **options)
    own = lbfgsb.minimize_lbfgsb(_shifted_rosenbrock, x0, lower, upper, **options)
    np.testing.assert_array_equal(own.x, ref.x)
    assert (own.fun, own.nit, own.nfev, own.status, own.message) == (
        ref.fun, ref.nit, ref.nfev, ref.status, ref.message)


def test_without_the_routine_it_is_scipys_minimize(monkeypatch):
    monkeypatch.setattr(lbfgsb, "_fortran", None)
    x0 = np.zeros(4)
    lower, upper = np.full(4, -1.5), np.full(4, 1.0)
    ref = _scipy(_shifted_rosenbrock, x0, lower, upper, ftol=1e-12, gtol=1e-7, maxiter=50)
    own = lbfgsb.minimize_lbfgsb(_shifted_rosenbrock, x0, lower, upper, ftol=1e-12,
                                 gtol=1e-7, maxiter=50)
    np.testing.assert_array_equal(own.x, ref.x)


def test_factor_discrepancy_is_the_same_through_scipys_minimize(monkeypatch):
    # A correlation matrix of a 2-factor model with one Heywood-like column.
    rng = np.random.default_rng(0)
    L = rng.normal(size=(7, 2))
    S = L @ L.T + np.diag(np.r_[1e-6, rng.uniform(0.2, 1.0, 6)])
    S /= np.sqrt(np.outer(np.diag(S), np.diag(S)))
    direct = [_factor_discrepancy(S, k) for k in (1, 2, 3)]
    monkeypatch.setattr(lbfgsb, "_fortran", None)
    assert [_factor_discrepancy(S, k) for k in (1, 2, 3)] == direct


def test_a_routine_with_another_interface_is_not_driven(monkeypatch):
    # SciPy 1.15 and later ship a setulb with other arguments: the loop must
    # not call it (it would pass its arguments in the wrong places).
    class Other:
        @staticmethod
        def setulb(*args):
            raise AssertionError("the loop drove a routine of another interface")

    Other.setulb.__doc__ = ("setulb(m,x,l,u,nbd,f,g,factr,pgtol,wa,iwa,task,lsave,isave,dsave,"
                            "maxls,ln_task)")
    monkeypatch.setattr(lbfgsb, "_fortran", Other)
    assert lbfgsb._routine() is None
    x0 = np.zeros(3)
    res = lbfgsb.minimize_lbfgsb(_shifted_rosenbrock, x0, np.full(3, -1.5), np.ones(3),
                                 ftol=1e-12, gtol=1e-7, maxiter=100)
    assert res.success
