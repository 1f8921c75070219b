"""Every pass over the rows of the data, for NumPy arrays and dask arrays.

A fit reads its ``(n_k, p)`` inputs only through these functions. NumPy
arrays are read in blocks of rows (or of columns), so a pass holds one block
of temporaries (about 8 MB) besides its result and never copies an input;
dask arrays are handed to dask, which runs the pass on whatever scheduler is
active (threads, processes or a ``distributed`` cluster) and returns only the
small result. No function here modifies its inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ColumnMoments",
    "MappedArrays",
    "column_moments",
    "encode",
    "is_dask",
    "pooled_gram",
    "pooled_r_factor",
    "project",
    "project_gram_loadings",
    "randomized_pca",
]

#: Elements in one block of temporaries (8 MB of float64).
BLOCK_ELEMENTS = 2**20


class MappedArrays(Sequence):
    """``arrays[k] @ maps[k]`` for every k, each computed when read.

    A list of per-environment ``(n_k, d)`` arrays for functions that visit
    the environments one at a time: only the one being read exists.
    """

    def __init__(self, arrays: list[np.ndarray], maps: list[np.ndarray]):
        self._arrays, self._maps = arrays, maps

    def __len__(self) -> int:
        return len(self._arrays)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(len(self))[k]]
        return self._arrays[k] @ self._maps[k]


def is_dask(x) -> bool:
    """Whether ``x`` is a dask array (checked without importing dask)."""
    return type(x).__module__.split(".")[0] == "dask"


def scratch_array(work: dict, key, shape: tuple) -> np.ndarray:
    """An array of ``shape`` kept in ``work`` under ``key``, re-used by later calls.

    Many evaluations of the same size write their temporaries into the same
    memory: arrays of a few hundred kB allocated and freed again and again
    make the C allocator hand memory back to the system and map it anew,
    and those page faults cost as much as the arithmetic. A later request
    for fewer leading rows gets a view of the kept array.
    """
    kept = work.get(key)
    if kept is None or kept.shape[1:] != shape[1:] or kept.shape[0] < shape[0]:
        kept = work[key] = np.empty(shape)
    return kept[: shape[0]]


def row_blocks(n_rows: int, n_cols: int, min_rows: int = 1) -> Iterator[slice]:
    """Slices of about :data:`BLOCK_ELEMENTS` elements, at least ``min_rows`` rows each."""
    step = max(BLOCK_ELEMENTS // max(n_cols, 1), min_rows, 1)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def _col_blocks(n_cols: int, n_rows: int) -> Iterator[slice]:
    step = max(BLOCK_ELEMENTS // max(n_rows, 1), 1)
    for start in range(0, n_cols, step):
        yield slice(start, min(start + step, n_cols))


@dataclass(frozen=True)
class ColumnMoments:
    """Per-environment column means and SDs, and every column's magnitude.

    Attributes
    ----------
    n_rows : ndarray (K,) of int
    magnitude : ndarray (p,)
        Largest absolute value of every column over all environments.
    means : ndarray (K, p)
    sds : ndarray (K, p)
        Within-environment SD (divisor ``n_k``) of every column.
    """

    n_rows: np.ndarray
    magnitude: np.ndarray
    means: np.ndarray
    sds: np.ndarray


def _moments_numpy(x: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and SD of ``x`` in one pass of blocks, each block's moments merged exactly.

    Every column is divided by its unit (its magnitude) and shifted by the
    first row, so a constant column is exactly zero (SD exactly 0) and no
    square overflows or underflows whatever the data's scale. Blocks are
    merged with the pairwise update of Chan, Golub and LeVeque (1979).
    """
    shift = x[0] / unit
    n, mean, m2 = 0, np.zeros(x.shape[1]), np.zeros(x.shape[1])
    for rows in row_blocks(x.shape[0], x.shape[1]):
        c = x[rows] / unit
        c -= shift
        nb = c.shape[0]
        mb = c.mean(axis=0)
        c -= mb
        delta = mb - mean
        total = n + nb
        mean = mean + delta * (nb / total)
        m2 = m2 + np.einsum("ij,ij->j", c, c) + delta**2 * (n * nb / total)
        n = total
    return (shift + mean) * unit, np.sqrt(m2 / n) * unit


def column_moments(X_list: list) -> ColumnMoments:
    """Means, SDs and magnitudes of every column (one or two passes per environment).

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)

    Returns
    -------
    ColumnMoments

    Raises
    ------
    ValueError
        If a dask input holds NaN or inf (NumPy inputs are checked on entry).
    """
    if any(is_dask(x) for x in X_list):
        import dask

        highs, lows, firsts = dask.compute([x.max(axis=0) for x in X_list],
                                           [x.min(axis=0) for x in X_list],
                                           [x[0] for x in X_list])
        for k, (hi, lo) in enumerate(zip(highs, lows)):
            if not (np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
                raise ValueError(
                    f"X_list[{k}] contains non-finite values (NaN or inf); remove or impute "
                    "them before fitting."
                )
        magnitude = np.max([np.maximum(np.abs(h), np.abs(lo)) for h, lo in zip(highs, lows)],
                           axis=0)
        unit = np.where(magnitude > 0, magnitude, 1.0)
        shifted = [x / unit - f / unit for x, f in zip(X_list, firsts)]
        means, variances = dask.compute([s.mean(axis=0) for s in shifted],
                                        [s.var(axis=0) for s in shifted])
        means = np.stack([(f / unit + m) * unit for f, m in zip(firsts, means)])
        sds = np.stack([np.sqrt(v) * unit for v in variances])
    else:
        magnitude = np.max(
            [np.maximum(np.abs(x.max(axis=0)), np.abs(x.min(axis=0))) for x in X_list], axis=0
        )
        unit = np.where(magnitude > 0, magnitude, 1.0)
        moments = [_moments_numpy(x, unit) for x in X_list]
        means = np.stack([m for m, _ in moments])
        sds = np.stack([s for _, s in moments])
    n_rows = np.array([x.shape[0] for x in X_list])
    return ColumnMoments(n_rows, magnitude, means, sds)


def _standardised(x, mean: np.ndarray, scale: np.ndarray):
    """``(x - mean) / scale`` (columns with infinite scale become 0)."""
    z = x - mean
    z /= scale
    return z


def pooled_r_factor(X_list: list, env_means: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Triangular factor ``R`` (p, p) of the stacked standardised data ``Z = Q R``.

    ``Z`` stacks ``(X_list[k] - env_means[k]) / scale`` over the environments;
    ``R`` comes from a QR factorisation of one block of rows at a time (a
    tall-and-skinny QR: Demmel, Grigori, Hoemmen and Langou, 2012), so its
    singular values are those of ``Z`` to working precision and ``Z`` is never
    formed. Needs ``p <= sum(n_k)``. Time ``O(n p^2)``, memory ``O(p^2)`` plus
    one block.
    """
    p = scale.shape[0]
    if any(is_dask(x) for x in X_list):
        import dask.array as da

        z = da.concatenate(
            [(da.asarray(x) - m) / scale for x, m in zip(X_list, env_means)], axis=0
        ).rechunk({1: -1})
        # Blocks need at least p rows for a square R factor per block.
        z = z.rechunk({0: max(p, z.chunks[0][0])})
        _, r = da.linalg.tsqr(z)
        return np.asarray(r.compute())
    r = np.zeros((0, p))
    for x, m in zip(X_list, env_means):
        for rows in row_blocks(x.shape[0], p, min_rows=p):
            r = np.linalg.qr(np.concatenate([r, _standardised(x[rows], m, scale)]), mode="r")
    return r


def _column_block(X_list: list, env_means: np.ndarray, scale: np.ndarray, cols: slice):
    return np.concatenate(
        [_standardised(x[:, cols], m[cols], scale[cols]) for x, m in zip(X_list, env_means)]
    )


def pooled_gram(X_list: list, env_means: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Gram matrix ``Z Z^T`` (N, N) of the stacked standardised data (NumPy inputs).

    Built from blocks of columns; for ``p > N = sum(n_k)`` it is the small
    side of ``Z``. Time ``O(N^2 p)``, memory ``O(N^2)`` plus one block.
    """
    n_total = sum(x.shape[0] for x in X_list)
    gram = np.zeros((n_total, n_total))
    for cols in _col_blocks(scale.shape[0], n_total):
        block = _column_block(X_list, env_means, scale, cols)
        gram += block @ block.T
    return gram


def project_gram_loadings(
    X_list: list, env_means: np.ndarray, scale: np.ndarray, left: np.ndarray
) -> np.ndarray:
    """``Z^T left`` (p, c) for the stacked standardised data ``Z`` (NumPy inputs)."""
    out = np.empty((scale.shape[0], left.shape[1]))
    for cols in _col_blocks(scale.shape[0], left.shape[0]):
        out[cols] = _column_block(X_list, env_means, scale, cols).T @ left
    return out


def randomized_pca(
    X_list: list, env_means: np.ndarray, scale: np.ndarray, n_components: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Leading singular values and right singular vectors of ``Z`` (dask inputs).

    Dask's randomised SVD (:func:`dask.array.linalg.svd_compressed`, Halko,
    Martinsson and Tropp's algorithm with power iterations), run where the
    data are; only the ``(n_components, p)`` right factor comes back.

    Returns
    -------
    s : ndarray (n_components,)
    vt : ndarray (n_components, p)
    """
    import dask
    import dask.array as da

    z = da.concatenate(
        [(da.asarray(x) - m) / scale for x, m in zip(X_list, env_means)], axis=0
    )
    _, s, vt = da.linalg.svd_compressed(z, n_components, n_power_iter=4, seed=seed)
    s, vt = dask.compute(s, vt)
    return np.asarray(s), np.asarray(vt)


def project(X_list: list, shifts, matrix: np.ndarray) -> list[np.ndarray]:
    """``(X_list[k] - shifts[k]) @ matrix`` for every environment, as NumPy arrays.

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
    shifts : ndarray (K, p) or (p,)
        One row per environment, or one row for all.
    matrix : ndarray (p, c)

    Returns
    -------
    list of ndarray (n_k, c)
    """
    shifts = np.broadcast_to(shifts, (len(X_list), matrix.shape[0]))
    if any(is_dask(x) for x in X_list):
        import dask
        import dask.array as da

        return [np.asarray(a) for a in dask.compute(
            *[(da.asarray(x) - s) @ matrix for x, s in zip(X_list, shifts)]
        )]
    out = []
    for x, s in zip(X_list, shifts):
        res = np.empty((x.shape[0], matrix.shape[1]))
        for rows in row_blocks(x.shape[0], x.shape[1]):
            np.matmul(x[rows] - s, matrix, out=res[rows])
        out.append(res)
    return out


def encode(
    X_list: list, mean: np.ndarray, matrix: np.ndarray, unit: np.ndarray,
    env_means: np.ndarray,
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Latents ``L_k = (X_list[k] - mean) @ matrix`` and their within-environment moments.

    One pass over the data for the latents and the cross products of the
    least-squares decoder, both centred on each environment's own mean
    (``env_means[k]``), so that offsets between environments in the
    measurements (a lab's calibration, a batch) do not enter the decoder.
    Dividing by ``unit`` (every column's own size) keeps the sums finite
    whatever the data's scale.

    Returns
    -------
    latents : list of ndarray (n_k, c)
    gram : ndarray (c, c)
        ``sum_k (L_k - mean(L_k))^T (L_k - mean(L_k))``.
    cross : ndarray (c, p)
        ``sum_k (L_k - mean(L_k))^T (X_list[k] - env_means[k]) / unit``.
    """
    shifts = (env_means - mean) @ matrix  # mean(L_k), exactly
    if any(is_dask(x) for x in X_list):
        import dask
        import dask.array as da

        lazy = [(da.asarray(x) - mean) @ matrix for x in X_list]
        cross = sum((L - s).T @ ((da.asarray(x) - m) / unit)
                    for x, L, s, m in zip(X_list, lazy, shifts, env_means))
        gram = sum((L - s).T @ (L - s) for L, s in zip(lazy, shifts))
        latents, gram, cross = dask.compute(lazy, gram, cross)
        return [np.asarray(L) for L in latents], np.asarray(gram), np.asarray(cross)
    c = matrix.shape[1]
    latents, gram, cross = [], np.zeros((c, c)), np.zeros((c, mean.shape[0]))
    for x, s, m in zip(X_list, shifts, env_means):
        L = np.empty((x.shape[0], c))
        for rows in row_blocks(x.shape[0], x.shape[1]):
            np.matmul(x[rows] - mean, matrix, out=L[rows])
            within = L[rows] - s
            gram += within.T @ within
            cross += within.T @ ((x[rows] - m) / unit)
        latents.append(L)
    return latents, gram, cross
