"""Symmetric eigendecomposition of small matrices by LAPACK, without SciPy's checks.

FastICA's decorrelation decomposes thousands of small matrices a fit, where
the general input checks and workspace query of :func:`scipy.linalg.eigh`
cost more than the decomposition. :func:`eigh_syevr` makes the same LAPACK
call with the same workspace (the tests compare them to the bit), through
SciPy's public ``scipy.linalg.lapack``.

Why it stays (``benchmarks/optimiser_policy.py``, rows
``benchmarks/results/scale/optimisers_b171a58.csv``, one run, one thread):
2,000 decompositions of 5 x 5 matrices took 0.023 s against 0.044 s by
``scipy.linalg.eigh`` (1.9 times as fast); at 40 x 40, 1.1 times.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import lapack


@functools.cache
def _syevr_work(m: int) -> tuple[int, int]:
    """LAPACK's workspace sizes for ``dsyevr`` on an ``m x m`` matrix (as ``linalg.eigh`` asks)."""
    lwork, liwork, info = lapack.dsyevr_lwork(n=m, lower=1)
    if info:  # pragma: no cover - LAPACK's workspace query does not fail
        raise np.linalg.LinAlgError(f"dsyevr_lwork failed (info={info})")
    return int(lwork), int(liwork)


def eigh_syevr(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.linalg.eigh(A)`` for a small symmetric float matrix.

    ``dsyevr`` on the lower triangle with ``linalg.eigh``'s workspace, and
    the same error for a matrix with infinite or NaN entries; for the
    ``m x m`` matrices FastICA decorrelates at every iteration,
    ``linalg.eigh``'s checks and workspace query cost three times the
    decomposition.
    """
    if not np.isfinite(A).all():
        raise ValueError("array must not contain infs or NaNs")
    lwork, liwork = _syevr_work(A.shape[0])
    w, v, _, _, info = lapack.dsyevr(A, compute_v=1, lower=1, lwork=lwork, liwork=liwork)
    if info:
        raise np.linalg.LinAlgError(f"the eigenvalue decomposition failed (dsyevr info={info})")
    return w, v
