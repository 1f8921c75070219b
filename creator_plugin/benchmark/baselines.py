"""Methods compared with CREATOR in the benchmark.

Every method is a function ``fit(X_list, n_latent, random_state) -> (adjacency,
latents, order)`` with ``adjacency[i, j] == 1`` iff ``i -> j`` over its own
latent labels, ``latents`` a list of ``(n_k, d)`` arrays and ``order`` a
topological order (or None).

LiNGCReL (Jin & Syrgkanis, NeurIPS 2024) has no public implementation; the
version here is a reconstruction from the paper's description, made for this
benchmark:

1. the same shared PCA reduction as CREATOR;
2. FastICA per environment; every source standardised and sign-corrected
   (positive skewness);
3. alignment of the sources of every environment to those of environment 0
   by their distributions (LiNGCReL's assumption: the same noise law in
   every environment, different laws across components): 1-Wasserstein
   distance between the standardised samples, minimised over the sign,
   matched with a linear assignment;
4. node i's aligned unmixing rows span ``A_i`` (dimension ``|pa(i)| + 1``).
   Order: repeatedly take the node whose rows, projected off the span of
   the nodes already ordered, are closest to one-dimensional (ratio of the
   second to the first singular value). Parents: following the order, ``j``
   is a parent of ``i`` iff projecting ``A_i`` off ``A_j`` (added to the
   earlier nodes' spans) lowers its dimension by one; dimensions are
   numerical ranks with a relative singular-value tolerance;
5. disentanglement with CREATOR's step 3 (least singular vectors of the
   summed complement projectors) on the aligned rows.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import skew, wasserstein_distance
from sklearn.decomposition import PCA, FastICA

from ..disentangle import disentangling_matrix
from ..estimator import CREATOR
from ..preprocessing import reduce_environments

__all__ = ["METHODS", "fit_creator", "fit_lingcrel", "fit_pca_multigroup_lingam",
           "fit_pooled_ica_lingam"]


def fit_creator(X_list, n_latent, random_state, **kwargs):
    """CREATOR with default (or given) parameters."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = CREATOR(n_latent, random_state=random_state, **kwargs).fit(X_list)
    return m.adjacency_matrix_, m.latents_, m.causal_order_


def _rank(M: np.ndarray, scale: float, tol: float) -> int:
    if M.size == 0:
        return 0
    return int(np.sum(np.linalg.svd(M, compute_uv=False) > tol * scale))


def fit_lingcrel(X_list, n_latent, random_state, rank_tol: float = 0.15):
    """The LiNGCReL reconstruction described in the module docstring."""
    d = n_latent
    X_red, _ = reduce_environments(X_list, d)
    rng = np.random.default_rng(random_state)
    rows, sources = [], []
    for x in X_red:
        ica = FastICA(d, whiten="unit-variance", max_iter=1000,
                      random_state=int(rng.integers(2**31 - 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            S = ica.fit_transform(x)
        W = ica.components_.copy()
        sd = S.std(axis=0)
        sign = np.where(skew(S, axis=0) < 0, -1.0, 1.0)
        rows.append(W * (sign / sd)[:, None])
        sources.append(S * sign / sd)
    aligned = [rows[0]]
    for S, W in zip(sources[1:], rows[1:]):
        cost = np.zeros((d, d))
        flip = np.ones((d, d))
        for i in range(d):
            for j in range(d):
                pos = wasserstein_distance(sources[0][:, i], S[:, j])
                neg = wasserstein_distance(sources[0][:, i], -S[:, j])
                cost[i, j] = min(pos, neg)
                flip[i, j] = 1.0 if pos <= neg else -1.0
        r, c = linear_sum_assignment(cost)
        perm = c[np.argsort(r)]
        aligned.append(W[perm] * flip[np.arange(d), perm][:, None])
    U = np.stack(aligned)  # (K, d, d): U[k][i] = node i's unmixing row in env k
    stacks = [U[:, i, :] / np.linalg.norm(U[:, i, :], axis=1, keepdims=True) for i in range(d)]
    K = U.shape[0]
    order: list[int] = []
    basis = np.zeros((d, 0))
    while len(order) < d:
        best, best_ratio = None, np.inf
        for i in set(range(d)) - set(order):
            M = stacks[i] - (stacks[i] @ basis) @ basis.T
            sv = np.linalg.svd(M, compute_uv=False)
            ratio = sv[1] / sv[0] if sv.size > 1 and sv[0] > 0 else 0.0
            if ratio < best_ratio:
                best, best_ratio = i, ratio
        order.append(best)
        basis = np.linalg.qr(np.column_stack([basis, *_top_dirs(stacks[best], basis)]))[0]
    adjacency = np.zeros((d, d), dtype=int)
    scale = np.sqrt(K)
    for t, i in enumerate(order):
        span = np.zeros((d, 0))
        prev = _rank(stacks[i], scale, rank_tol)
        for j in order[:t]:
            span = np.linalg.qr(np.column_stack([span, *_top_dirs(stacks[j], span)]))[0]
            cur = _rank(stacks[i] - (stacks[i] @ span) @ span.T, scale, rank_tol)
            if cur == prev - 1:
                adjacency[j, i] = 1
            prev = cur
    C = disentangling_matrix(U, adjacency)
    latents = [x @ C for x in X_red]
    return adjacency, latents, order


def _top_dirs(stack: np.ndarray, basis: np.ndarray) -> list[np.ndarray]:
    """The principal direction of ``stack`` outside ``basis`` (one new direction)."""
    M = stack - (stack @ basis) @ basis.T if basis.size else stack
    return [np.linalg.svd(M, full_matrices=False)[2][0]]


def _pca_reduce(X_list, d):
    pooled = np.vstack([x - x.mean(axis=0) for x in X_list])
    pca = PCA(d, whiten=True).fit(pooled)
    return [pca.transform(x - x.mean(axis=0)) for x in X_list]


def _lingam_result(B: np.ndarray, order, Z_list):
    adjacency = (np.abs(B.T) > 0).astype(int)  # lingam: B[i, j] = effect of j on i
    return adjacency, Z_list, list(order)


def fit_pca_multigroup_lingam(X_list, n_latent, random_state):
    """PCA to d dimensions, then ``lingam.MultiGroupDirectLiNGAM``.

    The latents are the whitened PCA scores (so LocR^2 measures how far PCA
    alone gets); the graph is the union of the groups' adjacency matrices.
    """
    import lingam

    Z = _pca_reduce(X_list, n_latent)
    model = lingam.MultiGroupDirectLiNGAM(random_state=random_state).fit(Z)
    B = np.any([np.abs(a) > 0 for a in model.adjacency_matrices_], axis=0).astype(float)
    return _lingam_result(B, model.causal_order_, Z)


def fit_pooled_ica_lingam(X_list, n_latent, random_state):
    """Pooled PCA to d dimensions, then ``lingam.ICALiNGAM`` on all rows together."""
    import lingam

    Z = _pca_reduce(X_list, n_latent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lingam.ICALiNGAM(random_state=random_state).fit(np.vstack(Z))
    return _lingam_result(model.adjacency_matrix_, model.causal_order_, Z)


METHODS = {
    "CREATOR": fit_creator,
    "LiNGCReL": fit_lingcrel,
    "PCA+MultiGroupDirectLiNGAM": fit_pca_multigroup_lingam,
    "PCA+ICA-LiNGAM (pooled)": fit_pooled_ica_lingam,
}
