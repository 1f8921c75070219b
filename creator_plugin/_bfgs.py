"""BFGS with the inverse-Hessian update in rank-two form, for many variables.

SciPy's ``minimize(method="BFGS")`` updates its dense ``N x N`` inverse
Hessian as ``(I - r s y^T) H (I - r y s^T) + r s s^T``, two matrix products
per iteration: ``O(N^3)``. The polish optimises ``N = d^2`` variables, so that
update costs ``O(d^6)`` per iteration and dominates a fit from d of about 30
on (benchmarks/LOG.md, "What grows fastest with d"). Expanded, the same
update is a symmetric rank-two correction,

``H - r (s (Hy)^T + (Hy) s^T) + (r^2 y^T H y + r) s s^T``,

``O(N^2)``. :func:`minimize_bfgs` is SciPy's BFGS loop (same line search,
same first step, same stopping rules and result fields). From
:data:`RANK_TWO_MIN_SIZE` variables on (or at any size, on request) it uses
the rank-two update; in
exact arithmetic that takes SciPy's steps, in floating point it rounds
differently. Below it, it applies SciPy's update in SciPy's form, so it
takes SciPy's steps to the last bit, without the wrappers SciPy's
``minimize`` puts around the objective (a copy of the point and several
calls per evaluation: a tenth of the time of a small fit's ascents). From
:data:`SYMMETRIC_MIN_SIZE` variables on the rank-two form keeps one
triangle of the matrix and updates it in place through BLAS (no ``N x N``
temporaries: at d = 100 a polish's matrix is 800 MB).

The line search is the one SciPy's BFGS calls
(``scipy.optimize._optimize._line_search_wolfe12``: MINPACK's ``dcsrch`` with
the strong-Wolfe search as fallback). It is not public; when it cannot be
imported, :func:`minimize_bfgs` hands the problem to SciPy's BFGS unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.linalg import blas

try:  # SciPy's BFGS line search (private: without it, SciPy's BFGS runs)
    from scipy.optimize._optimize import _line_search_wolfe12, _LineSearchError
except ImportError:  # pragma: no cover - depends on the SciPy release
    _line_search_wolfe12 = _LineSearchError = None

__all__ = ["minimize_bfgs", "RANK_TWO_MIN_SIZE", "SYMMETRIC_MIN_SIZE", "same_point"]

#: :func:`minimize_bfgs` updates the inverse Hessian in rank-two form from
#: this many variables on (a polish at d >= 16) and in SciPy's form below.
#: Below it the update's matrix products cost little and fits keep SciPy's
#: rounding.
RANK_TWO_MIN_SIZE = 256

#: From this many variables on, the rank-two form keeps one triangle of the
#: inverse Hessian and updates it in place with BLAS's symmetric routines
#: (``dsymv``, ``dsyr2``, SciPy's public ``scipy.linalg.blas``): one pass
#: over half the matrix per product or update and no ``N x N`` temporaries,
#: where the NumPy form makes seven passes over full matrices and two
#: ``N x N`` temporaries (16 times the time per iteration at N = 2,500, one
#: thread; at N = 10,000, a d = 100 polish, the temporaries alone would be
#: 1.6 GB). The same update in exact arithmetic; it rounds differently.
SYMMETRIC_MIN_SIZE = 256


def same_point(x: np.ndarray, y: np.ndarray) -> bool:
    """``np.array_equal(x, y)`` for two float arrays, without its conversions.

    The optimisers ask whether a point was evaluated already about once per
    evaluation; for a few variables ``np.array_equal``'s overhead is most
    of that question's cost.
    """
    return x.shape == y.shape and bool((x == y).all())


class _Memo:
    """``fun(x) -> (value, grad)`` evaluated once per point, counted."""

    def __init__(self, fun):
        self.fun = fun
        self.x = None
        self.nfev = 0

    def _at(self, x: np.ndarray) -> None:
        if self.x is None or not same_point(x, self.x):
            value, grad = self.fun(x)
            self.x = np.array(x, dtype=float)
            self.value, self.grad = float(value), np.asarray(grad, dtype=float)
            self.nfev += 1

    def value_at(self, x: np.ndarray) -> float:
        self._at(x)
        return self.value

    def grad_at(self, x: np.ndarray) -> np.ndarray:
        self._at(x)
        return self.grad


def _line_search(f, fprime, xk, pk, gfk, old_fval, old_old_fval):
    """SciPy's BFGS line search with BFGS's arguments; None when it fails."""
    try:
        return _line_search_wolfe12(f, fprime, xk, pk, gfk, old_fval, old_old_fval,
                                    amin=1e-100, amax=1e100, c1=1e-4, c2=0.9)
    except _LineSearchError:
        return None


def minimize_bfgs(
    fun, x0: np.ndarray, *, gtol: float, maxiter: int, hess_inv0: np.ndarray | None = None,
    rank_two: bool | None = None,
) -> optimize.OptimizeResult:
    """Minimise ``fun(x) -> (value, gradient)`` by BFGS from ``x0``.

    ``optimize.minimize(fun, x0, jac=True, method="BFGS", options=...)`` with
    ``gtol``, ``maxiter`` and ``hess_inv0`` (None: the identity), with the
    inverse-Hessian update in rank-two form from :data:`RANK_TWO_MIN_SIZE`
    variables on (see the module's docstring) and SciPy's steps to the last
    bit below. ``rank_two`` (None: by that size) forces one form or the
    other: a caller whose results need not keep SciPy's rounding takes the
    rank-two form at every size. Returns SciPy's result fields (``x``, ``fun``, ``jac``,
    ``hess_inv``, ``nit``, ``nfev``, ``njev``, ``status``, ``success``,
    ``message``); in rank-two form the inverse Hessian is symmetric.
    Exceptions raised by ``fun`` propagate.
    """
    x0 = np.asarray(x0, dtype=float).ravel()
    N = x0.size
    if _line_search_wolfe12 is None:
        options = {"maxiter": maxiter, "gtol": gtol}
        if hess_inv0 is not None:
            options["hess_inv0"] = hess_inv0
        return optimize.minimize(fun, x0, jac=True, method="BFGS", options=options)
    memo = _Memo(fun)
    f, fprime = memo.value_at, memo.grad_at
    old_fval = f(x0)
    gfk = fprime(x0)
    H = np.eye(N) if hess_inv0 is None else np.array(hess_inv0, dtype=float)
    if rank_two is None:
        rank_two = N >= RANK_TWO_MIN_SIZE
    eye = None if rank_two else np.eye(N, dtype=int)
    # From SYMMETRIC_MIN_SIZE on, H is kept as one triangle of a Fortran-ordered
    # array (H.T of the C-ordered H: its lower triangle is H's upper one),
    # multiplied and updated in place by BLAS's symmetric routines.
    packed = H.T if rank_two and N >= SYMMETRIC_MIN_SIZE else None
    if packed is not None and not packed.flags.f_contiguous:
        packed = np.asfortranarray(packed)
    old_old_fval = old_fval + np.linalg.norm(gfk) / 2  # first step of length about 1
    xk, k, warnflag = x0, 0, 0
    gnorm = np.max(np.abs(gfk))
    while gnorm > gtol and k < maxiter:
        pk = -(H @ gfk) if packed is None else -blas.dsymv(1.0, packed, gfk, lower=1)
        ret = _line_search(f, fprime, xk, pk, gfk, old_fval, old_old_fval)
        if ret is None:
            warnflag = 2
            break
        alpha_k, _, _, old_fval, old_old_fval, gfkp1 = ret
        sk = alpha_k * pk
        xk = xk + sk
        if gfkp1 is None:
            gfkp1 = fprime(xk)
        yk = gfkp1 - gfk
        gfk = gfkp1
        k += 1
        gnorm = np.max(np.abs(gfk))
        if gnorm <= gtol:
            break
        if alpha_k * np.linalg.norm(pk) <= 0.0:  # SciPy's xrtol test at xrtol = 0
            break
        if not np.isfinite(old_fval):
            warnflag = 2
            break
        rhok_inv = np.dot(yk, sk)
        rhok = 1000.0 if rhok_inv == 0.0 else 1.0 / rhok_inv
        if not rank_two:  # SciPy's expressions, so SciPy's rounding
            A1 = eye - sk[:, np.newaxis] * yk[np.newaxis, :] * rhok
            A2 = eye - yk[:, np.newaxis] * sk[np.newaxis, :] * rhok
            H = np.dot(A1, np.dot(H, A2)) + (rhok * sk[:, np.newaxis] * sk[np.newaxis, :])
            continue
        if packed is not None:  # one triangle, updated in place by BLAS
            Hy = blas.dsymv(1.0, packed, yk, lower=1)
            # H - r (s Hy' + Hy s') + c s s' = H + s a' + a s', a = c s / 2 - r Hy
            a = (0.5 * (rhok * rhok * float(yk @ Hy) + rhok)) * sk - rhok * Hy
            blas.dsyr2(1.0, sk, a, lower=1, a=packed, overwrite_a=1)
            continue
        Hy = H @ yk
        sy = np.outer(sk, rhok * Hy)
        sy += sy.T  # exactly symmetric, so H stays so
        H -= sy
        ss = np.outer(sk, sk)
        ss *= rhok * rhok * float(yk @ Hy) + rhok
        H += ss
    if packed is not None:  # the full matrix from its upper triangle
        H = np.triu(packed.T)
        H += np.triu(H, 1).T
    if warnflag == 2:
        message = "Desired error not necessarily achieved due to precision loss."
    elif k >= maxiter:
        warnflag, message = 1, "Maximum number of iterations has been exceeded."
    elif np.isnan(gnorm) or np.isnan(old_fval) or np.isnan(xk).any():
        warnflag, message = 3, "NaN result encountered."
    else:
        message = "Optimization terminated successfully."
    return optimize.OptimizeResult(
        x=xk, fun=old_fval, jac=gfk, hess_inv=H, nit=k, nfev=memo.nfev, njev=memo.nfev,
        status=warnflag, success=warnflag == 0, message=message,
    )
