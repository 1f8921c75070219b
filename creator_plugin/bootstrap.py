"""Bootstrap uncertainty for CREATOR: edge probabilities, DAG counts, weight intervals."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone

from ._random import as_generator, draw_seed
from ._validation import check_environments

__all__ = ["BootstrapResult", "bootstrap"]


@dataclass
class BootstrapResult:
    """Resampled fits aligned to the full-data fit.

    All matrices use the full-data fit's latent labels and ``[i, j]`` means
    ``i -> j``.

    Attributes
    ----------
    full_fit : CREATOR
        The estimator fitted on all the data (the reference labelling).
    adjacency_matrices : ndarray (B, d, d)
        Aligned adjacency of every resample.
    weights : ndarray (B, K, d, d)
        Aligned per-environment weights (sign-corrected) of every resample.
    orders : ndarray (B, d)
        Aligned causal order of every resample.
    alignment_corr : ndarray (B, d)
        |correlation| of every full-fit latent with its matched resample latent
        (low values flag resamples whose features do not match).
    """

    full_fit: object
    adjacency_matrices: np.ndarray
    weights: np.ndarray
    orders: np.ndarray
    alignment_corr: np.ndarray

    @property
    def n_sampling(self) -> int:
        return self.adjacency_matrices.shape[0]

    def get_probabilities(self, min_causal_effect: float | None = None) -> np.ndarray:
        """Edge probabilities ``P[i, j]`` = share of resamples with ``i -> j``.

        Parameters
        ----------
        min_causal_effect : float, optional
            Count an edge only if its absolute weight exceeds this value in at
            least one environment.
        """
        A = self.adjacency_matrices.astype(bool)
        if min_causal_effect is not None:
            A = A & (np.abs(self.weights).max(axis=1) > min_causal_effect)
        return A.mean(axis=0)

    def get_dag_counts(self, n_dags: int | None = None) -> list[tuple[np.ndarray, int]]:
        """The most frequent DAGs (aligned adjacency matrices) with their counts."""
        counts = Counter(a.tobytes() for a in self.adjacency_matrices.astype(np.int8))
        d = self.adjacency_matrices.shape[1]
        return [
            (np.frombuffer(key, dtype=np.int8).reshape(d, d).astype(int), c)
            for key, c in counts.most_common(n_dags)
        ]

    def get_order_probabilities(self) -> np.ndarray:
        """``P[i, j]`` = share of resamples that place latent i before latent j."""
        B, d = self.orders.shape
        pos = np.empty_like(self.orders)
        pos[np.arange(B)[:, None], self.orders] = np.arange(d)
        return (pos[:, :, None] < pos[:, None, :]).mean(axis=0)

    def order_stability(self) -> float:
        """Share of resamples whose order is a topological order of the full-fit DAG."""
        A = np.asarray(self.full_fit.adjacency_matrix_) != 0
        ok = 0
        for order in self.orders:
            pos = np.empty(len(order), dtype=int)
            pos[order] = np.arange(len(order))
            a, b = np.nonzero(A)
            ok += bool(np.all(pos[a] < pos[b]))
        return ok / len(self.orders)

    def get_weight_intervals(self, alpha: float = 0.05) -> np.ndarray:
        """Percentile intervals of every edge weight per environment.

        Returns
        -------
        ndarray (K, d, d, 2)
            Lower and upper ``alpha/2`` and ``1 - alpha/2`` percentiles over the
            resamples in which the edge is present (NaN if it never is).
        """
        present = self.adjacency_matrices.astype(bool)[:, None]  # (B, 1, d, d)
        W = np.where(present, self.weights, np.nan)
        out = np.full((*self.weights.shape[1:], 2), np.nan)
        has = present[:, 0].any(axis=0)
        if has.any():
            lo, hi = np.nanpercentile(W[:, :, has], [100 * alpha / 2, 100 * (1 - alpha / 2)],
                                      axis=0)
            out[:, has, 0] = lo
            out[:, has, 1] = hi
        return out


def _one_resample(estimator, X_list, seed, full_latents):
    rng = np.random.default_rng(seed)
    sample = [x[rng.integers(0, x.shape[0], x.shape[0])] for x in X_list]
    model = clone(estimator).set_params(random_state=draw_seed(rng))
    model.fit(sample)
    L_full = np.vstack(full_latents)
    L_b = np.vstack([model.transform(x) for x in X_list])
    d = L_full.shape[1]
    corr = np.corrcoef(L_full, L_b, rowvar=False)[:d, d:]
    rows, cols = linear_sum_assignment(np.abs(corr), maximize=True)
    perm = cols[np.argsort(rows)]  # full latent i <-> resample latent perm[i]
    sign = np.sign(corr[np.arange(d), perm])
    A = model.adjacency_matrix_[np.ix_(perm, perm)]
    W = np.stack([w[np.ix_(perm, perm)] * np.outer(sign, sign) for w in model.weights_])
    inv = np.empty(d, dtype=int)
    inv[perm] = np.arange(d)
    order = inv[np.asarray(model.causal_order_)]
    return A, W, order, np.abs(corr[np.arange(d), perm])


def bootstrap(
    X,
    n_sampling: int,
    *,
    estimator=None,
    environments=None,
    random_state=None,
    n_jobs: int | None = None,
    show_progress: bool = False,
) -> BootstrapResult:
    """Bootstrap a CREATOR fit (in the spirit of lingam's ``bootstrap``).

    Rows are resampled with replacement within every environment, the
    estimator is refitted, and each resample's latents are aligned to the
    full-data fit: both fits' features are computed on the full data and
    matched by absolute correlation with a linear assignment (labels and
    signs may change between fits).

    Parameters
    ----------
    X : list of array-like (n_k, p), or array-like (n, p) with ``environments``
    n_sampling : int
        Number of bootstrap resamples.
    estimator : CREATOR, optional
        Unfitted estimator whose parameters are used (default
        ``CREATOR(n_latent)`` is not guessed: pass one).
    environments : array-like, optional
        Environment labels when ``X`` is one array.
    random_state : int or None
        Seeds the resampling and every refit.
    n_jobs : int, optional
        joblib parallelism. For a Dask cluster, wrap the call in
        ``with joblib.parallel_config(backend="dask"):`` after creating a
        ``distributed.Client`` — results are identical whatever the backend.
    show_progress : bool, default=False
        tqdm progress bar over the resamples.

    Returns
    -------
    BootstrapResult
    """
    if estimator is None:
        raise TypeError("bootstrap needs estimator=CREATOR(n_latent, ...).")
    if isinstance(n_sampling, bool) or not isinstance(n_sampling, (int, np.integer)) \
            or n_sampling < 1:
        raise ValueError(f"n_sampling must be a positive integer, got {n_sampling!r}.")
    auto = isinstance(estimator.n_latent, str)
    X_list = check_environments(X, environments, n_latent=None if auto else estimator.n_latent)
    rng = as_generator(random_state)
    full = clone(estimator).set_params(random_state=draw_seed(rng)).fit(X_list)
    # Resamples keep the full fit's n_latent (so that they can be aligned to it)
    # and skip the verdict, which is about the full fit.
    refit = clone(estimator).set_params(n_latent=full.n_latent_, quality=False)
    seeds = [draw_seed(rng) for _ in range(n_sampling)]
    jobs = (delayed(_one_resample)(refit, X_list, s, full.latents_) for s in seeds)
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if show_progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=n_sampling, desc="bootstrap")
    A, W, orders, corr = map(np.stack, zip(*results))
    return BootstrapResult(full, A, W, orders, corr)
