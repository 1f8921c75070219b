"""causal-learn's GIN as a benchmark method, its latents mapped to scores through its clusters.

GIN (Xie, Cai, Huang, Glymour, Hao & Zhang, "Generalized Independent Noise
Condition for Estimating Latent Variable Causal Graphs", NeurIPS 2020;
``causallearn.search.HiddenCausal.GIN.GIN``) learns a linear non-Gaussian
latent-variable model from one data set: it clusters the measurements by the
GIN condition (each cluster = the pure indicators of one latent), then orders
the clusters' latents.

When its assumptions hold
-------------------------
* **A pure measurement model**: every measurement has exactly one latent
  parent and no measurement causes another; every latent has **at least two
  pure measured children** (causal-learn's search starts from pairs). This
  is ``simulate(..., mixing="pure", indicators_per_latent=m)`` with
  ``m >= 2`` (and ``measurement_noise > 0``: noiseless pure indicators are
  exactly collinear). It does **not** hold on the paper's workload, where
  ``H`` is dense and every measurement mixes all latents.
* **One linear SEM**: GIN has no notion of environments. Its input here is
  the environments' rows pooled after centring each environment, which is a
  mixture of SEMs when the weights change across environments (CREATOR's
  setting), not one SEM.
* Non-Gaussian latent noise, as for CREATOR.

What causal-learn's implementation returns, and how it is read here
-------------------------------------------------------------------
* Its latent nodes are named ``L1, L2, ...`` -- the names CREATOR gives its
  own latents, with a different meaning. They are never used here: every
  GIN latent is identified by its **cluster** (the measurement columns it
  points to), and the clusters are written to the row's ``info``.
* The ordered latents come first in its numbering and it connects every
  ordered latent to every later one: **its latent graph is always a complete
  DAG** over the ordered latents (the implementation does not prune latent
  edges). Latents it cannot order are joined by undirected edges; they are
  oriented here by GIN's numbering, which is also the order reported.
* Latent scores: for every cluster, the **first principal component of the
  cluster's standardised measurements** (pooled over the centred
  environments; sign: positive loading on the cluster's first measurement),
  applied to every environment. Under a pure measurement model it is the
  latent plus averaged measurement noise. (The plain mean of the
  standardised measurements would cancel indicators with loadings of
  opposite sign.) Measurements GIN leaves out of every cluster are not used.
* GIN may find ``m != d`` clusters; see
  :mod:`creator_plugin.benchmark.scoring` for the scoring of such results.

Cost
----
Every test is an HSIC (or KCI) test, ``O(n^2)``, over many subsets of the
measurements, so a fit takes seconds to minutes where CREATOR takes a
fraction of a second (measured times: docs/results/accuracy.md, "GIN against
CREATOR"). ``max_samples`` subsamples the pooled rows, and the
benchmark gives GIN a default per-fit time limit
(:data:`creator_plugin.benchmark.methods.DEFAULT_TIME_LIMITS`).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["cluster_scores", "fit_gin", "gin_structure"]


def gin_structure(graph, n_measurements: int) -> tuple[list[list[int]], np.ndarray, list[int]]:
    """Clusters and latent graph of a causal-learn GIN result.

    Parameters
    ----------
    graph : causallearn.graph.GeneralGraph.GeneralGraph
        The graph GIN returned: measurement nodes ``X1..Xp`` and latent nodes.
    n_measurements : int
        p.

    Returns
    -------
    clusters : list of list of int
        Measurement columns (0-based) of every GIN latent, in GIN's numbering.
    adjacency : ndarray (m, m) of int
        ``[a, b] == 1`` iff cluster a's latent -> cluster b's latent;
        undirected latent-latent edges are oriented by GIN's numbering.
    order : list of int
        GIN's numbering, ``0..m-1`` (a topological order of ``adjacency``).
    """
    from causallearn.graph.NodeType import NodeType

    nodes = graph.get_nodes()
    latent = [nd for nd in nodes if nd.get_node_type() == NodeType.LATENT]
    latent.sort(key=lambda nd: int(re.sub(r"\D", "", nd.get_name()) or 0))
    G = graph.graph
    idx = {nd.get_name(): graph.node_map[nd] for nd in nodes}
    measured = {idx[f"X{j + 1}"]: j for j in range(n_measurements) if f"X{j + 1}" in idx}
    clusters = []
    for nd in latent:
        a = idx[nd.get_name()]
        clusters.append(sorted(j for b, j in measured.items() if G[a, b] == -1 and G[b, a] == 1))
    m = len(latent)
    adjacency = np.zeros((m, m), dtype=int)
    for s, u in enumerate(latent):
        for t, v in enumerate(latent):
            a, b = idx[u.get_name()], idx[v.get_name()]
            directed = G[a, b] == -1 and G[b, a] == 1
            undirected = G[a, b] == -1 and G[b, a] == -1 and s < t
            if directed or undirected:
                adjacency[s, t] = 1
    return clusters, adjacency, list(range(m))


def cluster_scores(X_list: list[np.ndarray], clusters: list[list[int]]) -> list[np.ndarray]:
    """First principal component of every cluster's standardised measurements.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One array per environment.
    clusters : list of list of int
        Measurement columns of every latent.

    Returns
    -------
    list of ndarray (n_k, len(clusters))
        Per environment, one score per cluster (environment-centred data,
        loadings from the pooled data).
    """
    centred = [x - x.mean(axis=0) for x in X_list]
    pooled = np.vstack(centred)
    sd = np.maximum(pooled.std(axis=0), 1e-300)
    loadings = []
    for cols in clusters:
        z = pooled[:, cols] / sd[cols]
        v = np.linalg.svd(z, full_matrices=False)[2][0]
        loadings.append(v if v[0] >= 0 else -v)
    return [
        np.column_stack([(c[:, cols] / sd[cols]) @ v for cols, v in zip(clusters, loadings)])
        if clusters else np.zeros((c.shape[0], 0))
        for c in centred
    ]


def fit_gin(
    X_list: list[np.ndarray],
    n_latent: int,
    random_state: int | None,
    *,
    indep_test: str = "hsic",
    alpha: float = 0.05,
    max_samples: int | None = 1000,
) -> tuple[np.ndarray, list[np.ndarray], list[int], dict]:
    """causal-learn's GIN on the pooled environments (see the module docstring).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One array per environment.
    n_latent : int
        Not used: GIN finds its own number of latents.
    random_state : int or None
        Seeds the row subsample.
    indep_test : {"hsic", "kci"}, default="hsic"
        GIN's independence test.
    alpha : float, default=0.05
        GIN's significance level.
    max_samples : int or None, default=1000
        At most this many pooled rows (a seeded random subset) go to GIN;
        None for all.

    Returns
    -------
    adjacency : ndarray (m, m) of int
        ``[a, b] == 1`` iff latent a -> latent b, latents numbered by cluster.
    latents : list of ndarray (n_k, m)
        Cluster scores (:func:`cluster_scores`), every row of every
        environment.
    order : list of int
    info : dict
        ``clusters`` (measurement columns, 0-based, of every latent),
        ``unclustered`` (columns in no cluster) and ``rows`` (rows GIN saw).
    """
    from causallearn.search.HiddenCausal.GIN.GIN import GIN

    pooled = np.vstack([x - x.mean(axis=0) for x in X_list])
    rows = np.arange(pooled.shape[0])
    if max_samples is not None and pooled.shape[0] > max_samples:
        rng = np.random.default_rng(random_state)
        rows = np.sort(rng.choice(pooled.shape[0], max_samples, replace=False))
    graph, _ = GIN(pooled[rows], indep_test_method=indep_test, alpha=alpha)
    p = pooled.shape[1]
    clusters, adjacency, order = gin_structure(graph, p)
    used = {j for c in clusters for j in c}
    info = {"clusters": clusters, "unclustered": [j for j in range(p) if j not in used],
            "rows": int(rows.size)}
    return adjacency, cluster_scores(X_list, clusters), order, info
