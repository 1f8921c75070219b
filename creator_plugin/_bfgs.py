"""BFGS for many variables: the inverse-Hessian update in rank-two form, in place.

SciPy's ``minimize(method="BFGS")`` updates its dense ``N x N`` inverse
Hessian as ``(I - r s y^T) H (I - r y s^T) + r s s^T``, two matrix products
per iteration: ``O(N^3)``. The polish optimises ``N = d^2`` variables, so that
update costs ``O(d^6)`` per iteration and dominates a fit from d of about 30
on (benchmarks/LOG.md, "What grows fastest with d"); the graph revision's
refinements optimise ``d^2`` numbers too. Expanded, the same update is a
symmetric rank-two correction,

``H - r (s (Hy)^T + (Hy) s^T) + (r^2 y^T H y + r) s s^T``,

``O(N^2)``, which :func:`minimize_bfgs` applies from :data:`RANK_TWO_MIN_SIZE`
variables on to one triangle of ``H`` in place, through BLAS's symmetric
routines (``dsymv``, ``dsyr2`` of SciPy's public ``scipy.linalg.blas``): one
pass over half the matrix per product or update and no ``N x N``
temporaries (at d = 100 a polish's matrix is 800 MB). The loop is SciPy's
BFGS loop (same first step, stopping rules and result fields) with SciPy's
public strong-Wolfe line search (``scipy.optimize.line_search``, with BFGS's
constants). Below that size it is SciPy's ``minimize`` itself, handed the
value and the gradient as two callables (:class:`SplitObjective`: the same
iterates as ``jac=True``, one wrapper fewer per evaluation).

Beyond a memory bound the dense inverse Hessian is not kept: when its
``8 N^2`` bytes would exceed ``max_dense_bytes`` (the polish passes the size
of its float64 data, so the matrix never takes more memory than the data;
other callers :data:`DENSE_MAX_BYTES`, 256 MB), :func:`minimize_bfgs` runs
SciPy's limited-memory ``minimize(method="L-BFGS-B")`` without bounds
(:data:`LIMITED_MEMORY_CORRECTIONS` pairs, the same gradient tolerance and
iteration limit), whose memory grows as ``N``. At ``K = d`` environments of
``n`` rows the polish's matrix exceeds its data from ``d^2 > n`` on (d > 70
at n = 5000); at d = 100 it would take 800 MB.

Why it stays (``benchmarks/optimiser_policy.py``, rows
``benchmarks/results/scale/optimisers_b171a58.csv``, measured at commit
b171a58, one run, one thread): at d = 40 (1,600 variables) the polish took
12.7 s of CPU against 114.9 s for the same ascent by
``minimize(method="BFGS")`` (9.0 times as fast, the same 262 iterations); at
d = 5 (25 variables) its own loop was not faster than ``minimize`` (0.74
times as fast in those rows), so there ``minimize`` runs.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize
from scipy.linalg import blas

__all__ = ["minimize_bfgs", "RANK_TWO_MIN_SIZE", "DENSE_MAX_BYTES",
           "LIMITED_MEMORY_CORRECTIONS", "same_point", "SplitObjective", "minimize_split"]

#: :func:`minimize_bfgs` runs its own loop, with the update in rank-two form
#: in place, from this many variables on (a polish at d >= 16) and SciPy's
#: ``minimize(method="BFGS")`` below, where the update costs little.
RANK_TWO_MIN_SIZE = 256

#: Largest dense inverse Hessian (bytes) :func:`minimize_bfgs` keeps when its
#: caller states no bound: 256 MB, ``N`` up to 5,792 variables (d^2 numbers up
#: to d = 76).
DENSE_MAX_BYTES = 2**28

#: Correction pairs of the limited-memory form (SciPy's ``maxcor``) beyond the
#: bound: ``2 * 100 * N`` numbers (16 MB for a d = 100 polish). On a d = 40
#: polish (the bound lowered to force it; the data of one fit, seed 500002)
#: 100 pairs ended within 5e-4 of dense BFGS's directions and 10 or 20 pairs
#: within 1e-2, each after the 300 iterations of the limit, where dense BFGS
#: stopped at the gradient tolerance after 153.
LIMITED_MEMORY_CORRECTIONS = 100


def same_point(x: np.ndarray, y: np.ndarray) -> bool:
    """``np.array_equal(x, y)`` for two float arrays, without its conversions.

    The optimisers ask whether a point was evaluated already about once per
    evaluation; for a few variables ``np.array_equal``'s overhead is most
    of that question's cost.
    """
    return x.shape == y.shape and bool((x == y).all())


class SplitObjective:
    """``fun(x) -> (value, gradient)`` as the two callables ``minimize`` takes separately.

    ``optimize.minimize(split.value, x0, jac=split.grad, ...)`` runs the
    iterates of ``optimize.minimize(fun, x0, jac=True, ...)`` to the last bit
    (the same values and gradients reach the optimiser) with one wrapper
    fewer per evaluation: ``jac=True`` memoises ``fun`` by copying the point
    and comparing it twice more, on top of SciPy's own memo. ``grad`` returns
    the gradient computed with the last value when it is asked at that point
    (as SciPy does, right after ``value``), and evaluates ``fun`` otherwise.
    """

    __slots__ = ("fun", "_x", "_grad")

    def __init__(self, fun):
        self.fun = fun
        self._x = None
        self._grad = None

    def value(self, x: np.ndarray) -> float:
        value, self._grad = self.fun(x)
        self._x = x  # SciPy hands a fresh copy, not kept by it
        return value

    def grad(self, x: np.ndarray) -> np.ndarray:
        if self._x is None or not same_point(x, self._x):
            self.value(x)
        return self._grad


def minimize_split(fun, x0: np.ndarray, **kwargs) -> optimize.OptimizeResult:
    """``optimize.minimize(fun, x0, jac=True, **kwargs)`` through :class:`SplitObjective`."""
    split = SplitObjective(fun)
    return optimize.minimize(split.value, x0, jac=split.grad, **kwargs)


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
    """SciPy's public strong-Wolfe line search with BFGS's constants; None when it fails."""
    with warnings.catch_warnings():
        # its warning of a failed search (a RuntimeWarning) is the None returned
        warnings.simplefilter("ignore", RuntimeWarning)
        ret = optimize.line_search(f, fprime, xk, pk, gfk, old_fval, old_old_fval,
                                   c1=1e-4, c2=0.9, amax=1e100)
    return None if ret[0] is None else ret


#: Columns per tile of :func:`_fill_upper`.
_TILE = 256


def _fill_upper(H: np.ndarray) -> None:
    """Overwrite the upper triangle of the square ``H`` with its lower one, in place.

    The numbers of ``np.tril(H) + np.tril(H, -1).T`` without that form's two
    ``N x N`` temporaries: one block of ``_TILE`` columns at a time, the
    lower part of the block copied into the rows above it, then ``0.0``
    added to every entry, as that sum does (so a ``-0.0`` becomes ``0.0``
    there too).
    """
    N = H.shape[0]
    for j0 in range(0, N, _TILE):
        j1 = min(j0 + _TILE, N)
        tile = H[j0:j1, j0:j1]
        upper = np.triu_indices(j1 - j0, 1)
        tile[upper] = tile.T[upper]
        if j1 < N:
            H[j0:j1, j1:] = H[j1:, j0:j1].T
    H += 0.0


def minimize_bfgs(
    fun, x0: np.ndarray, *, gtol: float, maxiter: int, hess_inv0: np.ndarray | None = None,
    max_dense_bytes: float | None = None,
) -> optimize.OptimizeResult:
    """Minimise ``fun(x) -> (value, gradient)`` by BFGS from ``x0``.

    ``optimize.minimize(fun, x0, jac=True, method="BFGS", options=...)`` with
    ``gtol``, ``maxiter`` and ``hess_inv0`` (None: the identity); from
    :data:`RANK_TWO_MIN_SIZE` variables on, the module's own loop (the
    update in rank-two form, in place). Returns SciPy's result fields
    (``x``, ``fun``, ``jac``, ``hess_inv``, ``nit``, ``nfev``, ``njev``,
    ``status``, ``success``, ``message``); the own loop's inverse Hessian is
    symmetric. Exceptions raised by ``fun`` propagate.

    When the dense inverse Hessian would take more than ``max_dense_bytes``
    (None: :data:`DENSE_MAX_BYTES`), SciPy's limited-memory
    ``minimize(method="L-BFGS-B")`` runs instead (no bounds, ``maxcor`` of
    :data:`LIMITED_MEMORY_CORRECTIONS`, stopping at the same gradient
    tolerance or iteration limit; its relative-decrease test ``ftol`` is
    switched off); ``hess_inv0`` is then not read and the result's
    ``hess_inv`` is None.
    """
    x0 = np.asarray(x0, dtype=float).ravel()
    N = x0.size
    bound = DENSE_MAX_BYTES if max_dense_bytes is None else max_dense_bytes
    if 8.0 * N * N > bound:
        res = minimize_split(fun, x0, method="L-BFGS-B", options={
            "maxiter": maxiter, "gtol": gtol, "ftol": 0.0,
            "maxcor": LIMITED_MEMORY_CORRECTIONS})
        res.hess_inv = None  # an N x N matrix only on request: never made here
        return res
    if N < RANK_TWO_MIN_SIZE:
        options = {"maxiter": maxiter, "gtol": gtol}
        if hess_inv0 is not None:
            options["hess_inv0"] = hess_inv0
        return minimize_split(fun, x0, method="BFGS", options=options)
    memo = _Memo(fun)
    f, fprime = memo.value_at, memo.grad_at
    old_fval = f(x0)
    gfk = fprime(x0)
    # H in Fortran order, its lower triangle multiplied and updated in place
    # by BLAS's symmetric routines (the upper one is not read).
    H = np.eye(N, order="F") if hess_inv0 is None else np.array(hess_inv0, dtype=float,
                                                                 order="F")
    old_old_fval = old_fval + np.linalg.norm(gfk) / 2  # first step of length about 1
    xk, k, warnflag = x0, 0, 0
    gnorm = np.max(np.abs(gfk))
    while gnorm > gtol and k < maxiter:
        pk = -blas.dsymv(1.0, H, gfk, lower=1)
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
        Hy = blas.dsymv(1.0, H, yk, lower=1)
        # H - r (s Hy' + Hy s') + c s s' = H + s a' + a s', a = c s / 2 - r Hy
        a = (0.5 * (rhok * rhok * float(yk @ Hy) + rhok)) * sk - rhok * Hy
        blas.dsyr2(1.0, sk, a, lower=1, a=H, overwrite_a=1)
    _fill_upper(H)  # the full matrix from its lower triangle, in place
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
