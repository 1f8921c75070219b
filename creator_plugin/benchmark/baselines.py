"""Methods compared with CREATOR in the benchmark.

Every method is a function ``fit(X_list, n_latent, random_state, **kwargs) ->
(adjacency, latents, order)``: ``adjacency[i, j] == 1`` iff ``i -> j`` (this
project's convention; lingam's matrices are transposed on the way in) over
the method's own latent labels, ``latents`` a list of ``(n_k, d)`` arrays (one
per environment) and ``order`` a topological order of those labels (the
protocol, and how other methods are named, is in
:mod:`creator_plugin.benchmark.methods`). :data:`METHODS` maps the
benchmark's built-in names to them; causal-learn's GIN is
:func:`creator_plugin.benchmark.gin.fit_gin`.

LiNGCReL, reconstructed
-----------------------
LiNGCReL (Jin & Syrgkanis, "Learning linear causal representations from
general environments", NeurIPS 2024) was published without public code. What is
here is *our reconstruction from the paper's description*, written for this
benchmark; it follows the paper's identification argument, and the numerical
choices (distance, tolerances, greedy order) are ours. Its first author's
later code (``github.com/hlzhang109/causal-eval``, ``scripts/utils_full.py``,
no licence) implements LiNGCReL-style steps differently: it aligns the
environments' ICA rows and orders them in one search over every tuple of one
row per environment (d^K candidates per step) instead of step 3 below, so it
does not need the noise laws to agree across environments. The two
compared on the same inputs, with how often each alignment is right, are on
docs/results/peers.md ("LiNGCReL against its author's code");
:func:`lingcrel_steps` returns every intermediate result. The steps:

1. the same shared reduction as CREATOR
   (:func:`creator_plugin.preprocessing.reduce_environments`: per-environment
   centring, pooled standardisation and PCA to d dimensions);
2. FastICA in every environment separately; every source standardised to
   unit variance and sign-corrected to positive skewness, its unmixing row
   scaled alike;
3. alignment of the sources of every environment to those of environment 0
   *by their distributions* -- LiNGCReL's assumption is that component i has
   the same noise law in every environment and different components have
   different laws. Cost of pairing source a (env 0) with source b (env k):
   the 1-Wasserstein distance between their standardised samples
   (:func:`scipy.stats.wasserstein_distance`, i.e. on sorted samples),
   minimised over the sign of b; the pairing minimises the total cost
   (:func:`scipy.optimize.linear_sum_assignment`). Under setting (1) of the
   simulation this assumption is false, which is the point of comparing;
4. the aligned unmixing rows of node i over the K environments span
   ``A_i = span{h_j : j in {i} U pa(i)}`` in the population (``h_j`` node j's
   row of the inverse mixing), so ``dim A_i = |pa(i)| + 1``.
   *Order*: repeatedly take the node whose (unit-normalised) rows, projected
   off the directions of the nodes already ordered, are closest to
   one-dimensional (smallest ratio of second to first singular value), and
   add its leading remaining direction to the ordered span.
   *Parents*: following the order, j is a parent of i iff adding j's own
   direction to the span of the nodes before it lowers the numerical rank of
   ``A_i`` projected off that span by one. Numerical rank: singular values
   above ``rank_tol * sqrt(K)`` (rows have unit norm);
5. disentanglement with CREATOR's step 3
   (:func:`creator_plugin.disentangle.disentangling_matrix`, least singular
   vectors of the summed complement projectors) applied to the aligned rows,
   which play the part of CREATOR's regression matrices; latents are the
   reduced data times that matrix.

Naive baselines
---------------
``PCA+MultiGroupDirectLiNGAM`` and ``PCA+ICA-LiNGAM (pooled)`` reduce the data
to d dimensions with a pooled whitened PCA and run a LiNGAM on the d
coordinates. In the LiNGAM model the analysed variables *are* the causal
variables, so the latent estimate of node i is PCA coordinate i; the
estimated structure labels the graph and order over those coordinates but
cannot re-mix them. Both therefore share the same latents, hence the same
LocR^2 on the same data (LocR^2 does not depend on the estimated graph); it
measures how far PCA alone gets.

GIN
---
causal-learn's GIN (``"GIN"``, :mod:`creator_plugin.benchmark.gin`) needs a
pure measurement model -- every latent with at least two measurements that
have no other latent parent -- which the paper's workload (every measurement
a mixture of all latents) does not have; ``simulate(..., mixing="pure")``
does. It is slow (``O(n^2)`` tests over subsets of the measurements) and runs
under a per-fit time limit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.stats import skew, wasserstein_distance
from sklearn.decomposition import PCA, FastICA

from .. import CREATOR
from .._config import FitConfig
from .._fit import fit_arrays
from .._random import draw_seed
from .._validation import check_environments
from ..disentangle import disentangling_matrix
from ..preprocessing import reduce_environments
from .gin import fit_gin
from .gin_corrected import fit_gin_corrected
from .lincd import fit_lincd
from .lscale import fit_lscale_i, fit_lscale_i_soft
from .ordering_cache import ordering_for
from .rlcd import fit_rlcd
from .umni_crl import fit_umni_crl, fit_umni_crl_soft

try:  # optional (the ``bench`` extra); imported here so no fit's wall time includes it
    import lingam
except ImportError:  # pragma: no cover
    lingam = None

__all__ = ["DEFAULT_METHODS", "METHODS", "REQUIRES", "fit_creator", "fit_creator_paper",
           "fit_lingcrel", "fit_pca_multigroup_lingam", "fit_pooled_ica_lingam",
           "lingcrel_steps"]


Fit = Callable[..., tuple[np.ndarray, list[np.ndarray], list[int]]]


def fit_creator(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None, **kwargs
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """CREATOR with default parameters (or the given ones).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One array per environment.
    n_latent : int
        Number of latent nodes d.
    random_state : int or None
        Seed of CREATOR.
    **kwargs
        Passed to :class:`creator_plugin.CREATOR` (e.g. ``prune_threshold``,
        ``pruning``). CREATOR's warnings (weak evidence) are silenced here.

    Returns
    -------
    adjacency : ndarray (d, d)
        ``[i, j] == 1`` iff ``i -> j``.
    latents : list of ndarray (n_k, d)
    order : list of int
    """
    return _fit_quietly(CREATOR(n_latent, random_state=random_state, **kwargs), X_list)


def fit_creator_paper(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None, tau: float = 1.0
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """The paper's algorithm as published (:meth:`creator_plugin.CREATOR.paper`).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    n_latent : int
    random_state : int or None
    tau : float, default=1.0
        The paper's singular-value threshold.

    Returns
    -------
    adjacency, latents, order
        As :func:`fit_creator`.

    Notes
    -----
    With an integer ``random_state``, fits in one process share their
    reduction and ordering (:func:`creator_plugin.benchmark.ordering_cache.ordering_for`,
    handed to the fit as a precomputed stage), so a tau table computes the
    exact-HSIC ordering of a (data, seed) once; the results are those of
    independent fits.
    """
    estimator = CREATOR.paper(n_latent, tau=tau, random_state=random_state)
    if random_state is None:
        return _fit_quietly(estimator, X_list)
    X_list = check_environments(X_list, n_latent=n_latent)
    config = FitConfig.from_estimator(estimator, n_latent)
    stage = ordering_for(X_list, config, random_state)
    result = fit_arrays(X_list, config, ordering=stage,
                        random_state=np.random.default_rng(int(random_state)))
    return result.adjacency, result.latents, list(range(n_latent))


def _fit_quietly(estimator, X_list, *, info: bool = False):
    """Fit with the estimator's warnings (weak evidence, ...) silenced; with ``info``, a
    fit that has ``edge_confidence_`` also returns it as the info ``edge_confidence``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = estimator.fit(X_list)
    out = (m.adjacency_matrix_, m.latents_, list(m.causal_order_))
    if info and hasattr(m, "edge_confidence_"):
        return (*out, {"edge_confidence": np.asarray(m.edge_confidence_).tolist()})
    return out


def _bench_creator(X_list: list[np.ndarray], n_latent: int, random_state: int | None,
                   **kwargs) -> tuple:
    """CREATOR with default parameters (or the given ones).

    The built-in ``"CREATOR"`` of ``creator bench``: :func:`fit_creator`,
    and with the default residual pruning the info ``{"edge_confidence":
    ...}`` (``edge_confidence_`` as nested lists), from which every row gets
    its ``undecided_edges`` (:func:`creator_plugin.benchmark.grid.run_one`).
    """
    return _fit_quietly(CREATOR(n_latent, random_state=random_state, **kwargs), X_list,
                        info=True)


def _rank(M: np.ndarray, scale: float, tol: float) -> int:
    """Numerical rank: singular values above ``tol * scale``."""
    if M.size == 0:
        return 0
    return int(np.sum(np.linalg.svd(M, compute_uv=False) > tol * scale))


def fit_lingcrel(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None, rank_tol: float = 0.15
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """The LiNGCReL reconstruction described in the module docstring.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One array per environment.
    n_latent : int
        Number of latent nodes d.
    random_state : int or None
        Seeds the per-environment FastICA runs.
    rank_tol : float, default=0.15
        Relative singular-value tolerance of the subspace dimensions (step 4).

    Returns
    -------
    adjacency : ndarray (d, d) of int
        ``[i, j] == 1`` iff ``i -> j``, over the labels of environment 0's
        ICA sources.
    latents : list of ndarray (n_k, d)
        Disentangled features, one column per node.
    order : list of int
        The order found in step 4.
    """
    steps = lingcrel_steps(X_list, n_latent, random_state, rank_tol)
    return steps["adjacency"], steps["latents"], steps["order"]


def lingcrel_steps(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None, rank_tol: float = 0.15
) -> dict:
    """Every intermediate result of the LiNGCReL reconstruction (:func:`fit_lingcrel`).

    Parameters
    ----------
    X_list, n_latent, random_state, rank_tol
        As :func:`fit_lingcrel`.

    Returns
    -------
    dict
        * ``"reduced"``: list of ndarray (n_k, d), step 1's reduced data;
        * ``"rows"``: ndarray (K, d, d), step 2's unmixing rows of every
          environment (``rows[k] @ reduced[k].T`` are its unit-variance,
          positively skewed sources), before alignment;
        * ``"aligned"``: ndarray (K, d, d), the rows after step 3, row i of
          every environment belonging to node i (environment 0's labels);
        * ``"order"``, ``"adjacency"``: step 4;
        * ``"directions"``: ndarray (d, d), row i the unit direction step 4
          added to the ordered span when it ordered node i (the rows are
          orthonormal: the shared mixing rows up to the ordering's
          Gram-Schmidt ambiguity);
        * ``"weights"``: ndarray (K, d, d), ``[k][j, i]`` the effect of node j
          on node i in environment k, for j before i in the order, in the
          units of the latents ``reduced[k] @ directions.T``: the rows are
          written in the directions, ``aligned[k][i] ~= sum_j B[i, j]
          directions[j]`` over i and the nodes before it (least squares,
          the directions being orthonormal), and ``[j, i] = -B[i, j] /
          B[i, i]``;
        * ``"latents"``: list of ndarray (n_k, d), step 5.
    """
    d = n_latent
    X_red, _ = reduce_environments(X_list, d)
    rng = np.random.default_rng(random_state)
    rows, sources = [], []
    for x in X_red:
        ica = FastICA(d, whiten="unit-variance", max_iter=1000,
                      random_state=draw_seed(rng))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            S = ica.fit_transform(x)
        W = ica.components_.copy()
        sd = S.std(axis=0)
        sign = np.where(skew(S, axis=0) < 0, -1.0, 1.0)
        rows.append(W * (sign / sd)[:, None])
        sources.append(S * sign / sd)
    U = _align(rows, sources)  # (K, d, d): U[k][i] = node i's unmixing row in env k
    adjacency, order, directions = _order_and_parents(U, rank_tol)
    C = disentangling_matrix(U, adjacency)
    return {"reduced": X_red, "rows": np.stack(rows), "aligned": U, "order": order,
            "adjacency": adjacency, "directions": directions,
            "weights": _weights(U, directions, order), "latents": [x @ C for x in X_red]}


def _weights(U: np.ndarray, directions: np.ndarray, order: list[int]) -> np.ndarray:
    """Per-environment weights of the nodes' rows written in the ordered directions."""
    K, d, _ = U.shape
    W = np.zeros((K, d, d))
    for k in range(K):
        for t, i in enumerate(order):
            B = {j: float(U[k, i] @ directions[j]) for j in order[:t + 1]}
            for j in order[:t]:
                W[k, j, i] = -B[j] / B[i]
    return W


def _align(rows: list[np.ndarray], sources: list[np.ndarray]) -> np.ndarray:
    """Step 3: permute and sign every environment's rows to match environment 0.

    ``rows[k]`` (d, d) unmixing rows and ``sources[k]`` (n_k, d) the
    standardised sources of environment k; returns the aligned rows
    (K, d, d).
    """
    d = rows[0].shape[0]
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
    return np.stack(aligned)


def _order_and_parents(
    U: np.ndarray, rank_tol: float
) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Step 4: order, parents and ordered directions from the subspace dimensions of rows."""
    K, d, _ = U.shape
    stacks = [U[:, i, :] / np.linalg.norm(U[:, i, :], axis=1, keepdims=True) for i in range(d)]
    order: list[int] = []
    basis = np.zeros((d, 0))
    directions = np.zeros((d, d))
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
        directions[best] = basis[:, -1]
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
    return adjacency, order, directions


def _top_dirs(stack: np.ndarray, basis: np.ndarray) -> list[np.ndarray]:
    """The principal direction of ``stack`` outside ``basis`` (one new direction)."""
    M = stack - (stack @ basis) @ basis.T if basis.size else stack
    return [np.linalg.svd(M, full_matrices=False)[2][0]]


def _pca_reduce(X_list: list[np.ndarray], d: int) -> list[np.ndarray]:
    """Whitened PCA scores (n_k, d) of every environment, one pooled map."""
    pooled = np.vstack([x - x.mean(axis=0) for x in X_list])
    pca = PCA(d, whiten=True).fit(pooled)
    return [pca.transform(x - x.mean(axis=0)) for x in X_list]


def _require_lingam() -> None:
    if lingam is None:
        raise ImportError("This baseline needs lingam: pip install creator-plugin[bench]")


def _lingam_result(
    B: np.ndarray, order, Z_list: list[np.ndarray]
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """Transpose lingam's ``B[i, j]`` (effect of j on i) to ``[i, j]``: i -> j."""
    adjacency = (np.abs(B.T) > 0).astype(int)
    return adjacency, Z_list, [int(i) for i in order]


def fit_pca_multigroup_lingam(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """Pooled PCA to d dimensions, then ``lingam.MultiGroupDirectLiNGAM``.

    The environments are lingam's groups (one shared order, per-group
    weights). The graph is the union of the groups' adjacency matrices; the
    latents are the whitened PCA scores (see the module docstring).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    n_latent : int
    random_state : int or None

    Returns
    -------
    adjacency : ndarray (d, d) of int
        ``[i, j] == 1`` iff ``i -> j`` over the PCA coordinates.
    latents : list of ndarray (n_k, d)
    order : list of int
    """
    _require_lingam()
    Z = _pca_reduce(X_list, n_latent)
    model = lingam.MultiGroupDirectLiNGAM(random_state=random_state).fit(Z)
    B = np.any([np.abs(a) > 0 for a in model.adjacency_matrices_], axis=0).astype(float)
    return _lingam_result(B, model.causal_order_, Z)


def fit_pooled_ica_lingam(
    X_list: list[np.ndarray], n_latent: int, random_state: int | None
) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
    """Pooled PCA to d dimensions, then ``lingam.ICALiNGAM`` on all rows together.

    Ignores the environments (the pooled rows are one data set); latents are
    the whitened PCA scores (see the module docstring).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
    n_latent : int
    random_state : int or None

    Returns
    -------
    adjacency : ndarray (d, d) of int
        ``[i, j] == 1`` iff ``i -> j`` over the PCA coordinates.
    latents : list of ndarray (n_k, d)
    order : list of int
    """
    _require_lingam()
    Z = _pca_reduce(X_list, n_latent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lingam.ICALiNGAM(random_state=random_state).fit(np.vstack(Z))
    return _lingam_result(model.adjacency_matrix_, model.causal_order_, Z)


METHODS: dict[str, Fit] = {
    "CREATOR": _bench_creator,
    "CREATOR (paper)": fit_creator_paper,
    "LiNGCReL": fit_lingcrel,
    "PCA+MultiGroupDirectLiNGAM": fit_pca_multigroup_lingam,
    "PCA+ICA-LiNGAM (pooled)": fit_pooled_ica_lingam,
    "GIN": fit_gin,
    "GIN (tests by variable)": fit_gin_corrected,
    "LinCD": fit_lincd,
    "LSCALE-I (hard)": fit_lscale_i,
    "LSCALE-I (soft)": fit_lscale_i_soft,
    "UMNI-CRL (hard)": fit_umni_crl,
    "UMNI-CRL (soft)": fit_umni_crl_soft,
    "RLCD": fit_rlcd,
}

#: Modules a method needs beyond the core dependencies (the ``bench`` extra).
REQUIRES: dict[str, str] = {
    "PCA+MultiGroupDirectLiNGAM": "lingam",
    "PCA+ICA-LiNGAM (pooled)": "lingam",
    "GIN": "causallearn",
    "GIN (tests by variable)": "causallearn",
    "RLCD": "causallearn",
}

#: The methods a grid runs when none are named (the paper preset's exact HSIC
#: and GIN are slow: name them to run them).
DEFAULT_METHODS: tuple[str, ...] = (
    "CREATOR", "LiNGCReL", "PCA+MultiGroupDirectLiNGAM", "PCA+ICA-LiNGAM (pooled)",
)
