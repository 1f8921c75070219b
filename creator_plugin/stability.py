"""Resampling stability of a fit: refit on bootstrap resamples and compare graphs.

Used by the fit-quality verdict (``CREATOR(quality_resamples=B)``) and by
:func:`creator_plugin.bootstrap`, which share the resampling and the
alignment of a refit's latents to the full fit's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from joblib import Parallel, delayed
from scipy.optimize import linear_sum_assignment

from ._random import as_generator, draw_seed

__all__ = ["align_latents", "resample_rows", "resample_stability"]

#: What a refit may raise on a resample (which can lose the rows that make
#: an environment full rank, for example): recorded as a failed resample.
def resample_rows(X_list: list, rng: np.random.Generator) -> list[np.ndarray]:
    """Rows drawn with replacement within every environment (same sizes)."""
    return [x[rng.integers(0, x.shape[0], x.shape[0])] for x in X_list]


def align_latents(
    L_full: np.ndarray, L_other: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Match another fit's latents to the full fit's, on the same rows.

    Labels and signs are free in any fit, so the latents are matched by
    absolute correlation with a linear assignment.

    Parameters
    ----------
    L_full, L_other : ndarray (n, d)
        Both fits' latents of the same rows.

    Returns
    -------
    perm : ndarray (d,) of int
        Full-fit latent i is the other fit's latent ``perm[i]``.
    sign : ndarray (d,)
        Sign of their correlation.
    corr : ndarray (d,)
        Absolute correlation of every matched pair.
    """
    d = L_full.shape[1]
    corr = np.corrcoef(L_full, L_other, rowvar=False)[:d, d:]
    rows, cols = linear_sum_assignment(np.abs(corr), maximize=True)
    perm = cols[np.argsort(rows)]
    matched = corr[np.arange(d), perm]
    return perm, np.sign(matched), np.abs(matched)


def _one(refit, X_list, full_latents, full_adjacency, seed):
    rng = np.random.default_rng(seed)
    sample = resample_rows(X_list, rng)
    try:
        adjacency, mean, components = refit(sample, draw_seed(rng))
    except Exception as exc:  # one failed resample is recorded, the others kept
        return f"{type(exc).__name__}: {exc}"
    L_other = np.vstack([(x - mean) @ components.T for x in X_list])
    perm, _, corr = align_latents(full_latents, L_other)
    aligned = np.asarray(adjacency)[np.ix_(perm, perm)] != 0
    return int(np.sum(aligned != full_adjacency)), float(corr.min())


def resample_stability(
    X_list: list[np.ndarray],
    adjacency: np.ndarray,
    latents: list[np.ndarray],
    refit: Callable[[list[np.ndarray], int], tuple[np.ndarray, np.ndarray, np.ndarray]],
    n_resamples: int,
    *,
    random_state=None,
) -> dict:
    """How much does the graph change when the fit is repeated on resamples?

    Every resample draws the rows of every environment with replacement,
    refits, aligns the refit's latents to the full fit's (on the full data,
    :func:`align_latents`) and counts the ordered pairs ``(i, j)`` whose
    edge ``i -> j`` differs from the full fit's graph (a missing or extra
    edge counts 1, a reversed one 2). A fit whose graph rests on a knife's
    edge (a near-tie in the order, an imprecise feature that the next
    resample matches differently) changes from resample to resample; a
    well-determined one does not.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        The data of the full fit (in memory: rows are drawn by index).
    adjacency : ndarray (d, d)
        The full fit's graph, ``[i, j] != 0`` iff ``i -> j``.
    latents : list of ndarray (n_k, d)
        The full fit's latents of ``X_list``.
    refit : callable
        ``refit(sample, seed) -> (adjacency, mean, components)``: the same
        estimator fitted on ``sample`` (latents ``(x - mean) @ components.T``).
    n_resamples : int
        Number of resamples.
    random_state : int, Generator or None
        Seeds the resamples. Resample b's seed is the b-th draw, so the
        first B resamples of a larger run are the resamples of a run with B.

    Returns
    -------
    dict
        ``differences`` (per successful resample), ``min_alignment`` (the
        lowest matched |correlation| of each), ``failures`` (error messages
        of resamples whose refit failed), ``instability`` (mean of
        ``differences`` divided by d; NaN when every refit failed).
    """
    rng = as_generator(random_state)
    seeds = [draw_seed(rng) for _ in range(n_resamples)]
    full_latents = np.vstack(latents)
    full_adjacency = np.asarray(adjacency) != 0
    results = Parallel(n_jobs=None)(
        delayed(_one)(refit, X_list, full_latents, full_adjacency, s) for s in seeds
    )
    done = [r for r in results if not isinstance(r, str)]
    d = full_adjacency.shape[0]
    differences = [r[0] for r in done]
    return {
        "n_resamples": n_resamples,
        "differences": differences,
        "min_alignment": [r[1] for r in done],
        "failures": [r for r in results if isinstance(r, str)],
        "instability": float(np.mean(differences) / d) if done else float("nan"),
    }
