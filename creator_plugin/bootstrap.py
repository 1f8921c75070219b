"""Bootstrap uncertainty for CREATOR: edge probabilities, DAG counts, weight intervals."""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from ._random import as_generator, draw_seed
from ._validation import check_environments, environment_labels
from .estimator import CREATOR
from .stability import align_latents, resample_rows

__all__ = ["BootstrapResult", "bootstrap"]


@dataclass
class BootstrapResult:
    """Resampled fits aligned to the full-data fit.

    All matrices use the full-data fit's latent labels and ``[i, j]`` means
    ``i -> j``.

    Attributes
    ----------
    full_fit : CREATOR
        The fit the resamples are aligned to (the reference labelling): the
        fitted estimator passed to :func:`bootstrap` itself, or the fit of
        an unfitted one on all the data.
    adjacency_matrices : ndarray (B, d, d)
        Aligned adjacency of every resample.
    weights : ndarray (B, K, d, d)
        Aligned per-environment weights (sign-corrected) of every resample.
    orders : ndarray (B, d)
        Aligned causal order of every resample.
    alignment_corr : ndarray (B, d)
        absolute correlation of every full-fit latent with its matched resample latent
        (low values flag resamples whose features do not match).
    failures : list of (int, str)
        Resamples whose refit failed: their index among the ``n_sampling``
        resamples and the error. The arrays above hold the others only
        (``B == n_succeeded``).
    n_sampling : int
        Resamples drawn (succeeded or not).
    """

    full_fit: object
    adjacency_matrices: np.ndarray
    weights: np.ndarray
    orders: np.ndarray
    alignment_corr: np.ndarray
    failures: list[tuple[int, str]] = field(default_factory=list)
    n_sampling: int | None = None

    def __post_init__(self):
        if self.n_sampling is None:
            self.n_sampling = self.n_succeeded + len(self.failures)

    @property
    def n_succeeded(self) -> int:
        """Resamples whose refit succeeded (the ones every statistic uses)."""
        return self.adjacency_matrices.shape[0]

    @property
    def n_failed(self) -> int:
        """Resamples whose refit failed (see ``failures``)."""
        return len(self.failures)

    def check_model(self, model) -> None:
        """Raise ``ValueError`` unless ``model`` is the fit these resamples are aligned to.

        Edge labels of a bootstrap result are those of its reference fit
        (``full_fit``); another fit of the same data can number its latents
        differently, so its probabilities must not be drawn on that fit.
        """
        if model is self.full_fit:
            return
        ref = self.full_fit
        same = all(
            hasattr(model, name)
            and np.shape(getattr(model, name)) == np.shape(getattr(ref, name))
            and np.allclose(getattr(model, name), getattr(ref, name), rtol=1e-9, atol=0)
            for name in ("adjacency_matrix_", "components_", "mean_")
        )
        if not same:
            raise ValueError(
                "This bootstrap result belongs to another fit: its edges are labelled by its "
                "reference fit (result.full_fit), not by this model. Pass the fitted model to "
                "bootstrap(X, n, estimator=model), or plot result.full_fit."
            )

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
        if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
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


def _one_resample(estimator, X_list, seed, full_latents, index, labels):
    """One aligned refit, or ``(index, message)`` when the refit fails."""
    rng = np.random.default_rng(seed)
    sample = resample_rows(X_list, rng)
    model = clone(estimator).set_params(random_state=draw_seed(rng))
    try:
        model.fit(sample)
        L_b = np.vstack([model.transform(x) for x in X_list])
        perm, sign, corr = align_latents(np.vstack(full_latents), L_b)
    except Exception as exc:  # any failure of one resample is recorded; the others are kept
        return index, _resample_message(exc, index, labels)
    A = model.adjacency_matrix_[np.ix_(perm, perm)]
    W = np.stack([w[np.ix_(perm, perm)] * np.outer(sign, sign) for w in model.weights_])
    inv = np.empty(len(perm), dtype=int)
    inv[perm] = np.arange(len(perm))
    order = inv[np.asarray(model.causal_order_)]
    return A, W, order, corr


def _resample_message(exc: Exception, index: int, labels: list) -> str:
    """The refit's error, about the resample rather than the user's data.

    The refit sees the resample as ``X_list``; its messages name
    ``X_list[k]``, which the user would read as their own environment k.
    """
    def env(m: re.Match) -> str:
        k = int(m.group(1))
        return f"environment {labels[k]!r} of the resample" if k < len(labels) else m.group(0)

    text = re.sub(r"X_list\[(\d+)\]", env, str(exc)).replace("X_list", "the resample")
    return f"resample {index}: {type(exc).__name__}: {text}"


def bootstrap(
    X,
    n_sampling: int,
    *,
    estimator=None,
    environments=None,
    random_state=None,
    n_jobs: int | None = None,
    show_progress: bool = False,
    max_failed_share: float = 0.1,
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
    estimator : CREATOR
        A fitted estimator: it is the reference fit, and its latent labels
        are the labels of every result (pass the model you will plot or
        hand on). An unfitted estimator is first fitted on ``X`` with its
        own ``random_state``; that fit is ``BootstrapResult.full_fit``.
        Either way the resamples are refitted with the estimator's
        parameters (and its ``n_latent_``).
    environments : array-like, optional
        Environment labels when ``X`` is one array.
    random_state : int or None
        Seeds the resampling and every refit (not the reference fit).
    n_jobs : int, optional
        joblib parallelism (an integer other than 0; -1 for every core).
        For a Dask cluster, wrap the call in
        ``with joblib.parallel_config(backend="dask"):`` after creating a
        ``distributed.Client`` — results are identical whatever the backend.
    show_progress : bool, default=False
        tqdm progress bar over the resamples.
    max_failed_share : float in [0, 1), default=0.1
        A resample whose refit fails, whatever the exception (a resample can
        lose the rows that make an environment full rank, for example), is
        recorded in
        ``BootstrapResult.failures`` and left out, with a ``UserWarning``.
        When more than this share of the resamples fails, the statistics of
        the rest would be biased towards easy resamples and a
        ``RuntimeError`` is raised instead.

    Returns
    -------
    BootstrapResult

    Raises
    ------
    RuntimeError
        More than ``max_failed_share`` of the resamples failed; the message
        gives the count and the first error.
    """
    if not isinstance(estimator, CREATOR):
        kind = "the class" if estimator is CREATOR else repr(estimator)
        raise TypeError(f"bootstrap needs estimator=CREATOR(n_latent, ...) (an instance); "
                        f"got {kind[:80]}.")
    if isinstance(n_sampling, bool) or not isinstance(n_sampling, (int, np.integer)) \
            or n_sampling < 1:
        raise ValueError(f"n_sampling must be a positive integer, got {n_sampling!r}.")
    if isinstance(max_failed_share, bool) or not isinstance(max_failed_share, Real) \
            or not 0 <= max_failed_share < 1:
        raise ValueError(f"max_failed_share must be a number in [0, 1); got {max_failed_share!r}.")
    if n_jobs is not None and (isinstance(n_jobs, (bool, np.bool_))
                               or not isinstance(n_jobs, (int, np.integer))):
        raise TypeError(f"n_jobs must be None or an integer (1 for serial, -1 for all cores); "
                        f"got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0: 1 runs serially, -1 uses every core, and a "
                         "negative n uses all cores but n + 1 (joblib's rule).")
    fitted = hasattr(estimator, "components_")
    auto = isinstance(estimator.n_latent, str)
    d = estimator.n_latent_ if fitted else None if auto else estimator.n_latent
    X_list = check_environments(X, environments, n_latent=d)
    rng = as_generator(random_state)
    if fitted:
        if X_list[0].shape[1] != estimator.n_features_in_:
            raise ValueError(
                f"X has {X_list[0].shape[1]} columns; the fitted estimator was fitted on "
                f"{estimator.n_features_in_}.")
        full = estimator
    else:
        full = clone(estimator).fit(X, environments=environments)
    full_latents = [full.transform(x) for x in X_list]
    # Resamples keep the full fit's n_latent (so that they can be aligned to it)
    # and skip the verdict, which is about the full fit.
    refit = clone(estimator).set_params(n_latent=full.n_latent_, quality=False)
    seeds = [draw_seed(rng) for _ in range(n_sampling)]
    labels = environment_labels(environments, len(X_list))
    jobs = (delayed(_one_resample)(refit, X_list, s, full_latents, b, labels)
            for b, s in enumerate(seeds))
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if show_progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=n_sampling, desc="bootstrap")
    done, failures = [], []
    for r in results:
        (failures if len(r) == 2 else done).append(r)
    if failures:
        summary = (f"{len(failures)} of {n_sampling} bootstrap resamples failed; first: "
                   f"{failures[0][1]}")
        if len(failures) > max_failed_share * n_sampling:
            raise RuntimeError(
                f"{summary}. That is more than max_failed_share={max_failed_share}; the full "
                "data fit fine, but its resamples do not (too few rows per environment?)."
            )
        warnings.warn(f"{summary}. They are left out (BootstrapResult.failures).", UserWarning,
                      stacklevel=2)
    A, W, orders, corr = map(np.stack, zip(*done))
    return BootstrapResult(full, A, W, orders, corr, failures, n_sampling)
