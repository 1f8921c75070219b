"""GIN with the independence tests indexed by variable, as a benchmark method.

GIN: Xie, Cai, Huang, Glymour, Hao & Zhang, "Generalized Independent Noise
Condition for Estimating Latent Variable Causal Graphs", NeurIPS 2020.

Why a second GIN
----------------
causal-learn's ``GIN`` (0.1.4.8, the ``"GIN"`` method of this benchmark)
tests the GIN residual against ``data[:, [z]]`` with ``z`` a loop counter
over positions ``0, 1, ...`` instead of the indices of the variables the
condition is about, both in the cluster search and in the ordering step
(causal-learn issue #271,
https://github.com/py-why/causal-learn/issues/271). The residual is then
tested against the first columns of the data, which include the candidate
cluster's own measurements, and the clusters depend on the column order. On
causal-learn's own test case 2 (three latents with three pure indicators
each) it returns two clusters. This module follows the paper's condition
with every test indexed by variable; everything else is as causal-learn's
algorithm.

Assumptions (as the paper)
--------------------------
* A linear non-Gaussian latent-variable model with a **pure measurement
  model**: every measurement has exactly one latent parent, every latent at
  least two pure measured children; no edges among measurements.
* One SEM: environments are pooled after centring each (as for the
  ``"GIN"`` method, see :mod:`creator_plugin.benchmark.gin`).

What was read from the paper
----------------------------
* **GIN condition** for sets ``(Y, Z)``: with ``omega`` spanning the null
  space of ``E[Z Y^T]`` (the last right singular vector of the
  cross-covariance, rows Z, columns Y), ``E_{Y||Z} = omega^T Y`` is
  independent of every variable of ``Z``; the per-variable independence
  p-values are combined by Fisher's method and the condition holds at
  level ``alpha``.
* **Clusters** (Algorithm 1): for growing sizes ``s = 2, 3, ...`` every
  subset ``P`` of ``s`` still-unclustered variables with ``GIN(Z = rest,
  Y = P)`` is a candidate; overlapping candidates are merged and removed
  from the active set.
* **Causal order** (Algorithm 2): a cluster ``i`` is a root among the
  remaining ones when, with the ordered clusters' halves ``X`` and ``Z``,
  ``GIN(Z + i_2, X + i_1 + j_1)`` holds for every other remaining cluster
  ``j`` (``i_1, i_2``: the two halves of ``i``); roots are appended in turn.
* As causal-learn, every ordered latent points to every later one (the
  latent graph is a complete DAG over the ordered latents); clusters that
  cannot be ordered come last. Latent scores: :func:`creator_plugin.
  benchmark.gin.cluster_scores`.

Independence test: causal-learn's HSIC gamma test
(``causallearn.search.FCMBased.lingam.hsic.hsic_test_gamma``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.stats import chi2

from .gin import cluster_scores

__all__ = ["fit_gin_corrected", "gin_clusters_and_order"]


def _fisher(pvals: list[float]) -> float:
    p = np.maximum(np.asarray(pvals, dtype=float), 1e-5)
    return float(chi2.sf(-2.0 * np.log(p).sum(), 2 * p.size))


def _residual(data: np.ndarray, cov: np.ndarray, Y: list[int], Z: list[int]) -> np.ndarray:
    omega = np.linalg.svd(cov[np.ix_(Z, Y)])[2][-1]
    return data[:, Y] @ omega


def _gin_holds(data, cov, Y, Z, alpha, test) -> bool:
    if not Z:  # nothing to test against: the condition cannot be checked
        return False
    e = _residual(data, cov, Y, Z)
    pvals = [test(data[:, [z]], e[:, None]) for z in Z]
    return _fisher(pvals) >= alpha


def _merge(groups: list[tuple[int, ...]]) -> list[list[int]]:
    """Union of overlapping groups (connected components), each sorted."""
    merged: list[set[int]] = []
    for g in groups:
        g = set(g)
        touching = [m for m in merged if m & g]
        for m in touching:
            g |= m
            merged.remove(m)
        merged.append(g)
    return sorted((sorted(m) for m in merged), key=lambda c: c[0])


def _halves(c: list[int]) -> tuple[list[int], list[int]]:
    k = (len(c) + 1) // 2
    return list(c[:k]), list(c[k:])


def gin_clusters_and_order(
    data: np.ndarray, *, alpha: float = 0.05, test=None
) -> tuple[list[list[int]], list[list[int]]]:
    """GIN's clusters, ordered ones first, with every test indexed by variable.

    Parameters
    ----------
    data : ndarray (n, p)
    alpha : float, default=0.05
    test : callable, optional
        ``test(x, y) -> p-value`` for two ``(n, 1)`` arrays (default:
        causal-learn's HSIC gamma test).

    Returns
    -------
    ordered : list of list of int
        Clusters in GIN's causal order.
    unordered : list of list of int
        Clusters it could not order.
    """
    if test is None:
        from causallearn.search.FCMBased.lingam.hsic import hsic_test_gamma

        def test(x, y):
            return hsic_test_gamma(x, y)[1]

    data = np.asarray(data, dtype=float)
    cov = np.cov(data.T)
    active = set(range(data.shape[1]))
    clusters: list[list[int]] = []
    size = 2
    while size < len(active):
        found = []
        for P in combinations(sorted(active), size):
            rest = sorted(active - set(P))
            if _gin_holds(data, cov, list(P), rest, alpha, test):
                found.append(P)
        new = _merge(found)
        clusters += new
        for c in new:
            active -= set(c)
        size += 1

    ordered: list[list[int]] = []
    remaining = list(clusters)
    while remaining:
        X, Z = [], []
        for c in ordered:
            a, b = _halves(c)
            X += a
            Z += b
        root = None
        for i in remaining:
            i1, i2 = _halves(i)
            if all(_gin_holds(data, cov, X + i1 + _halves(j)[0], Z + i2, alpha, test)
                   for j in remaining if j is not i):
                root = i
                break
        if root is None:
            break
        ordered.append(root)
        remaining = [c for c in remaining if c is not root]
    return ordered, remaining


def fit_gin_corrected(
    X_list: list[np.ndarray],
    n_latent: int,
    random_state=None,
    *,
    alpha: float = 0.05,
    max_samples: int | None = 1000,
):
    """GIN (tests indexed by variable) on the pooled, centred environments.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    n_latent : int
        Not used: GIN finds its own number of latents.
    random_state : int or None
        Seeds the row subsample.
    alpha : float, default=0.05
    max_samples : int or None, default=1000
        At most this many pooled rows (a seeded random subset); None for all.

    Returns
    -------
    adjacency, latents, order, info
        As :func:`creator_plugin.benchmark.gin.fit_gin`.
    """
    pooled = np.vstack([np.asarray(x, dtype=float) - np.mean(x, axis=0) for x in X_list])
    rows = np.arange(pooled.shape[0])
    if max_samples is not None and pooled.shape[0] > max_samples:
        rng = np.random.default_rng(random_state)
        rows = np.sort(rng.choice(pooled.shape[0], max_samples, replace=False))
    ordered, unordered = gin_clusters_and_order(pooled[rows], alpha=alpha)
    clusters = ordered + unordered
    m = len(clusters)
    adjacency = np.zeros((m, m), dtype=int)
    for a in range(m):
        adjacency[a, a + 1:] = 1
    p = pooled.shape[1]
    used = {j for c in clusters for j in c}
    info = {"clusters": clusters, "n_ordered": len(ordered),
            "unclustered": [j for j in range(p) if j not in used], "rows": int(rows.size)}
    return adjacency, cluster_scores(X_list, clusters), list(range(m)), info
