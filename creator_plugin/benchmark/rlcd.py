"""causal-learn's RLCD as a benchmark method, its latents mapped to scores through its clusters.

RLCD (rank-based latent causal discovery: Dong, Huang, Ng, Song, Zheng, Jin,
Legaspi, Spirtes & Zhang, "A Versatile Causal Discovery Framework to Allow
Causally-Related Hidden Variables", ICLR 2024;
``causallearn.search.HiddenCausal.RLCD.RLCD``) learns a linear model with
latent variables from one data set by rank tests on cross-covariance
matrices: a first stage (GES on the measurements) splits the measurements
into groups, a second stage finds, inside every group, the latent variables
that explain rank deficiencies and the edges between latents, between
latents and measurements, and between measurements.

When its assumptions hold
-------------------------
* **Enough measurements per latent.** A latent is found where a rank
  deficiency shows it: in practice every latent needs several pure measured
  children, or latent neighbours that have them. A latent with three pure
  indicators and no latent neighbour is indistinguishable, by ranks, from
  three measurements that cause one another, and RLCD returns those three as
  a clique of measurements. ``simulate(..., mixing="pure",
  indicators_per_latent=m, measurement_noise > 0)`` is its kind of data
  (noiseless pure indicators are exactly collinear). It does **not** hold on
  the paper's workload, where every measurement mixes all latents.
* **One linear SEM**: RLCD has no notion of environments. Its input here is
  the environments' rows pooled after centring each environment, which is a
  mixture of SEMs when the weights change across environments (CREATOR's
  setting), not one SEM.
* Rank tests use second moments only: Gaussian noise is allowed, and
  directions RLCD cannot orient from ranks stay undirected.

How its result is read here
---------------------------
* Its latent nodes are named ``L1, L2, ...`` -- the names CREATOR gives its
  own latents, with a different meaning. They are never used here: every
  RLCD latent is identified by its **cluster**, the measurement columns that
  are its children (a latent without a measured child gets its measured
  descendants), and the clusters are written to the row's ``info``.
* Latent scores: the first principal component of every cluster's
  standardised measurements, as for GIN
  (:func:`creator_plugin.benchmark.gin.cluster_scores`).
* Latent graph: the directed edges between RLCD's latents; an undirected
  latent-latent edge is oriented by RLCD's numbering (their count is in
  ``info``). Edges between measurements (RLCD allows them) are not part of
  the latent graph; their count is in ``info``.
* RLCD may find ``m != d`` latents, or none (then every measurement is in a
  graph of measurements); see :mod:`creator_plugin.benchmark.scoring` for
  the scoring of such results.

Cost
----
The rank tests are cheap (one covariance matrix) but their number grows
combinatorially with the measurements in a group; fits take seconds at
p = 15 (measured times: docs/results/peers.md, "RLCD"), and the benchmark
gives RLCD a default per-fit time limit
(:data:`creator_plugin.benchmark.methods.DEFAULT_TIME_LIMITS`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from .gin import cluster_scores

__all__ = ["fit_rlcd", "rlcd_structure"]


def rlcd_structure(
    adjacency: np.ndarray, names: list[str], n_measurements: int
) -> tuple[list[list[int]], np.ndarray, list[int], dict]:
    """Clusters and latent graph of an RLCD result.

    Parameters
    ----------
    adjacency : ndarray (q, q)
        RLCD's ``cg.adjacency`` over ``names``: ``[i, j] == -1`` and
        ``[j, i] == 1`` mean i -> j; ``-1`` both ways an undirected edge.
    names : list of str
        RLCD's ``cg.all_vars``: the ``n_measurements`` measurements first,
        then the latents.
    n_measurements : int
        p.

    Returns
    -------
    clusters : list of list of int
        Measurement columns (0-based) of every RLCD latent, in RLCD's
        numbering: its measured children, or its measured descendants if it
        has no measured child.
    latent_adjacency : ndarray (m, m) of int
        ``[a, b] == 1`` iff latent a -> latent b; undirected latent-latent
        edges oriented by RLCD's numbering.
    order : list of int
        A topological order of ``latent_adjacency``.
    counts : dict
        ``undirected_latent_edges`` and ``measurement_edges`` (edges between
        two measurements).
    """
    A = np.asarray(adjacency)
    q = A.shape[0]
    if A.shape != (q, q) or len(names) != q or n_measurements > q:
        raise ValueError(f"adjacency {A.shape} does not fit {len(names)} names and "
                         f"{n_measurements} measurements.")
    p = n_measurements
    latent = list(range(p, q))

    def directed(i, j):
        return A[i, j] == -1 and A[j, i] == 1

    def linked(i, j):
        return A[i, j] != 0 or A[j, i] != 0

    full = nx.DiGraph()
    full.add_nodes_from(range(q))
    full.add_edges_from((i, j) for i in range(q) for j in range(q) if directed(i, j))
    clusters = []
    for lat in latent:
        children = sorted(j for j in full.successors(lat) if j < p)
        if not children:
            children = sorted(j for j in nx.descendants(full, lat) if j < p)
        clusters.append(children)
    m = len(latent)
    latent_adjacency = np.zeros((m, m), dtype=int)
    undirected = 0
    for a, u in enumerate(latent):
        for b, v in enumerate(latent):
            if directed(u, v):
                latent_adjacency[a, b] = 1
            elif a < b and linked(u, v) and not directed(v, u):
                latent_adjacency[a, b] = 1
                undirected += 1
    g = nx.from_numpy_array(latent_adjacency, create_using=nx.DiGraph)
    if not nx.is_directed_acyclic_graph(g):  # RLCD's edges among latents form a cycle
        latent_adjacency = np.triu(latent_adjacency | latent_adjacency.T, k=1)
        g = nx.from_numpy_array(latent_adjacency, create_using=nx.DiGraph)
    order = [int(v) for v in nx.topological_sort(g)]
    measurement_edges = sum(1 for i in range(p) for j in range(i + 1, p) if linked(i, j))
    return clusters, latent_adjacency, order, {"undirected_latent_edges": undirected,
                                                "measurement_edges": measurement_edges}


def fit_rlcd(
    X_list: list[np.ndarray],
    n_latent: int,
    random_state: int | None,
    *,
    alpha: float = 0.01,
) -> tuple[np.ndarray, list[np.ndarray], list[int], dict]:
    """causal-learn's RLCD on the pooled environments (see the module docstring).

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One array per environment.
    n_latent : int
        Not used: RLCD finds its own number of latents.
    random_state : int or None
        Not used: RLCD is deterministic.
    alpha : float, default=0.01
        Significance level of every rank test (causal-learn's default).

    Returns
    -------
    adjacency : ndarray (m, m) of int
        ``[a, b] == 1`` iff latent a -> latent b, latents numbered by RLCD.
    latents : list of ndarray (n_k, m)
        Cluster scores (:func:`creator_plugin.benchmark.gin.cluster_scores`),
        every row of every environment.
    order : list of int
    info : dict
        ``clusters`` (measurement columns, 0-based, of every latent),
        ``unclustered`` (columns in no cluster), ``undirected_latent_edges``
        and ``measurement_edges``; ``unscored_latents`` if RLCD returned
        latents without a measured descendant (left out of the result: they
        have no score).

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1).
    """
    try:
        from causallearn.search.HiddenCausal.RLCD import RLCD
    except ImportError:
        raise ImportError("RLCD needs a causal-learn with causallearn.search.HiddenCausal.RLCD "
                          "(0.1.4.8 has it): pip install -U causal-learn") from None
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    pooled = np.vstack([np.asarray(x, dtype=float) - np.mean(x, axis=0) for x in X_list])
    p = pooled.shape[1]
    cg = RLCD(pooled, alpha_dict=dict.fromkeys(range(4), float(alpha)))
    clusters, adjacency, order, counts = rlcd_structure(cg.adjacency, list(cg.all_vars), p)
    scored = [a for a, c in enumerate(clusters) if c]  # a latent with no measured descendant
    if len(scored) < len(clusters):                     # has no score: it is left out
        adjacency = adjacency[np.ix_(scored, scored)]
        order = [scored.index(a) for a in order if a in scored]
        counts["unscored_latents"] = len(clusters) - len(scored)
        clusters = [clusters[a] for a in scored]
    used = {j for c in clusters for j in c}
    info = {"clusters": clusters, "unclustered": [j for j in range(p) if j not in used],
            **counts}
    return adjacency, cluster_scores(X_list, clusters), order, info
