"""Revise the pruned graph by the likelihood of the disentangled SEM (on by default).

The pruning decides every pair ``j -> i`` on its own, from the regression
coefficients of the ordering's noises. It never asks whether the features
the disentanglement then builds follow the graph it returns, and at d = 10 one
wrong decision can make the subspace intersection build a feature for the
wrong subspace. This step scores a graph G by how well features disentangled
for G follow a linear SEM over G in every environment::

    score(G) = min_C sum_k n_k (sum_j log s_kj(C) - log det(C^T S_k C))
               + penalty * |E| * sum_k log n_k

with ``S_k`` the covariance of the entangled features in environment k,
``s_kj(C)`` the residual variance of feature j on its parents in G, and the
minimum over the disentangling matrix C taken by
:func:`creator_plugin.disentangle.refine_disentangling` (dense BFGS, which
converges where the limited-memory descent stops at its iteration cap, in
rank-two form and to the gradient tolerance :data:`REVISION_GTOL`) started
at the evidence-weighted intersection for G (when that refinement is not kept,
the intersection itself is scored). The first term is the Gaussian
likelihood-ratio statistic of the SEM against the complete graph, the second
BIC's price of K weights per edge. A greedy search flips, one at a time, the
decisions whose pruning statistic lies within a factor :data:`REVISION_BAND`
of the pruning level, taking the flip that lowers the score most, until none
does. The order is never changed.

:func:`search_graph` runs after the disentanglement, on the finished fit:
every graph is scored from the same fitted features (:func:`fitted_score`'s
criterion, read at the refinement's optimum), so an edge the pruning missed
and the features absorbed shows as a large drop in the score, which the
revision's per-graph starts with the refinement's guard can hide. Its
candidates are the decisions within :data:`SEARCH_BAND` of the level.
"""

from __future__ import annotations

import numpy as np

from .disentangle import _node_precisions, disentangling_matrix, refine_disentangling

__all__ = ["sem_deviance", "graph_score", "fitted_score", "revise_graph", "search_graph",
           "AUTO_SEARCH_LATENTS", "SEARCH_BAND", "SEARCH_MAX_SCORES", "REVISION_BAND",
           "REVISION_GTOL", "REVISION_MAX_SCORES", "REVISION_MIN_ENVIRONMENTS", "REVISION_PENALTY"]

#: Decisions whose statistic lies in ``[level / REVISION_BAND, level * REVISION_BAND]``
#: may be flipped. Chosen on tuning data (package simulator: d = 10 seeds 0-49,
#: six workload families at d = 5 seeds 0-29) between 1.5 and 2.
REVISION_BAND = 1.5

#: Multiplier of BIC's penalty per edge (K weights, ``sum_k log n_k``).
#: Chosen on the same tuning data among 1, 2, 4, 8 and 16.
REVISION_PENALTY = 1.0

#: ``CREATOR(revise_graph="auto")`` revises only data with at least this many
#: environments. With two or three environments the revision removed right
#: edges more often than it mended wrong ones: on simulated data not used to
#: choose the rule (d = 2, 3 and 4 with K = d or 3, two simulators, 900 data
#: sets) the mean SHD without it was 0.014 lower (SE 0.009; better in 39 data
#: sets, worse in 26). ``revise_graph=True`` still revises at any K.
REVISION_MIN_ENVIRONMENTS = 4

#: Gradient tolerance of each graph's refinement. The criterion is an average
#: per row, and one edge's price is ``K log n / n`` in its units (about 7e-3 at
#: K = 5, n = 1000, 3e-3 at K = 10, n = 2000), so a tolerance of 1e-6 leaves
#: the comparisons of graphs unchanged; on tuning fits the searches chose the
#: same graphs as with 1e-9 (benchmarks/LOG.md, "The revision's cost").
REVISION_GTOL = 1e-6

#: Most graphs one search scores (the pruned graph included). A round of the
#: greedy search scores every open candidate, so a pruning with many decisions
#: near its level (large d, few rows) would cost a number of likelihood
#: refinements that grows as the square of the candidates' number (66
#: candidates at d = 20 with 300 rows per environment, about a second each).
#: A round that would exceed the budget is not started: the search returns the
#: graph of its last complete round and says so (``info["stopped"]``). In
#: 2,250 tuning fits at d = 5, 7 and 10 the largest search scored 25 graphs,
#: and at d <= 5 no search can score more than 56.
REVISION_MAX_SCORES = 60

#: Most graphs one :func:`search_graph` scores (the start included); a round
#: that would exceed it is not started.
SEARCH_MAX_SCORES = 400

#: ``CREATOR(search_graph=...)`` may flip the pairs whose pruning statistic
#: lies within this factor of the level (the revision's band is
#: :data:`REVISION_BAND`).
SEARCH_BAND = 3.0

#: ``CREATOR(search_graph="auto")`` searches when the number of latents is in
#: this range (and there are at least as many environments as latents).
AUTO_SEARCH_LATENTS = (8, 12)


def sem_deviance(C: np.ndarray, covariances: np.ndarray, n_rows: np.ndarray,
                 adjacency: np.ndarray) -> float:
    """``sum_k n_k (sum_j log s_kj - log det G_k)`` for the features ``Ytilde_k C``.

    Parameters
    ----------
    C : ndarray (d, d)
        Disentangling matrix (columns the features).
    covariances : ndarray (K, d, d)
        Covariance ``S_k`` of the entangled features per environment.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        ``[j, i] != 0`` iff ``j -> i``.

    Returns
    -------
    float
        The Gaussian likelihood-ratio statistic of the linear SEM over the
        graph (environment-specific weights and noise variances) against
        the complete graph; 0 for a complete graph.
    """
    S = np.asarray(covariances, dtype=float)
    n = np.asarray(n_rows, dtype=float)
    A = np.asarray(adjacency) != 0
    G = np.einsum("ia,kij,jb->kab", C, S, C)
    _, logs = _node_precisions(G, [np.flatnonzero(A[:, j]) for j in range(A.shape[0])])
    _, logdet = np.linalg.slogdet(G)
    return float(n @ (logs - logdet))


def graph_score(B: np.ndarray, covariances: np.ndarray, n_rows: np.ndarray,
                adjacency: np.ndarray, penalty: float = REVISION_PENALTY) -> float:
    """The penalised, profiled score of one graph (module docstring).

    Parameters
    ----------
    B : ndarray (K, d, d)
        The pruning's regression matrices (:func:`disentangling_matrix`'s ``B``).
    covariances : ndarray (K, d, d)
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
    penalty : float, default=REVISION_PENALTY

    Returns
    -------
    float
        Lower is better.
    """
    A = np.asarray(adjacency) != 0
    return _profiled(disentangling_matrix(B, A, evidence=True), covariances, n_rows, A, penalty)


def _profiled(C: np.ndarray, covariances: np.ndarray, n_rows: np.ndarray, A: np.ndarray,
              penalty: float, guard: bool = True) -> float:
    """The penalised deviance after refining ``C``: at the matrix the refinement's guard
    returns (``guard``), or at the refinement's optimum."""
    n = np.asarray(n_rows, dtype=float)
    refined, info = refine_disentangling(C, covariances, n, A, method="BFGS",
                                         gtol=REVISION_GTOL)
    deviance = (sem_deviance(refined, covariances, n, A) if guard
                else min(info["final"], info["start"]) * float(n.sum()))
    return deviance + penalty * int(A.sum()) * float(np.log(n).sum())


def fitted_score(covariances: np.ndarray, n_rows: np.ndarray, adjacency: np.ndarray,
                 penalty: float = REVISION_PENALTY) -> float:
    """The penalised, profiled score of fitted features over their graph.

    :func:`graph_score`'s criterion for a finished fit: the refinement
    (:func:`refine_disentangling`, BFGS at the revision's tolerance) starts
    from the features themselves, and the deviance is read at the
    refinement's optimum, whether or not its guard would keep the refined
    matrix as features (a model is scored here, not re-estimated). Comparable
    between fits of the same reduced data with different orders, since every
    fit's features are a map of those data.

    Parameters
    ----------
    covariances : ndarray (K, d, d)
        Covariance of the fitted features per environment, in the order's
        positions.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        The fitted graph over positions.
    penalty : float, default=REVISION_PENALTY

    Returns
    -------
    float
        Lower is better.
    """
    A = np.asarray(adjacency) != 0
    return _profiled(np.eye(A.shape[0]), covariances, n_rows, A, penalty, guard=False)


def near_level(decisions: list[dict], band: float) -> list[tuple[int, int]]:
    """``(parent, child)`` of the decisions whose statistic is within a factor ``band`` of
    the level."""
    return [(int(q["parent"]), int(q["child"])) for q in decisions
            if q["threshold"] / band <= q["statistic"] <= q["threshold"] * band]


def revise_graph(
    B: np.ndarray,
    covariances: np.ndarray,
    n_rows: np.ndarray,
    adjacency: np.ndarray,
    decisions: list[dict],
    *,
    band: float = REVISION_BAND,
    penalty: float = REVISION_PENALTY,
    max_scores: int = REVISION_MAX_SCORES,
) -> tuple[np.ndarray, dict]:
    """Greedy single flips of the near-level decisions while :func:`graph_score` drops.

    Parameters
    ----------
    B : ndarray (K, d, d)
        Regression matrices of the pruning step.
    covariances : ndarray (K, d, d)
        Covariance of the entangled features per environment.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        The pruned graph, ``[j, i] == 1`` iff ``j -> i``.
    decisions : list of dict
        The pruning's decisions (``"parent"``, ``"child"``, ``"statistic"``,
        ``"threshold"``).
    band : float, default=REVISION_BAND
        Only decisions with ``threshold / band <= statistic <= threshold * band``
        may flip.
    penalty : float, default=REVISION_PENALTY
    max_scores : int, default=REVISION_MAX_SCORES
        Most graphs scored; a round that would score more is not started.

    Returns
    -------
    adjacency : ndarray (d, d) of int
        The revised graph (the input, unchanged, when no flip lowers the score).
    info : dict
        ``"candidates"`` (the pairs that could flip), ``"flips"`` (the pairs
        flipped, in order), ``"scores"`` (the score before and after each
        flip) and ``"margins"``: for each pair still open when the search
        stopped, ``[parent, child, rise]`` with ``rise`` the amount by which
        flipping it would raise the final score, in units of one edge's
        price (``penalty * sum_k log n_k``); empty when every candidate
        flipped; ``"n_scores"`` (graphs scored) and ``"stopped"``: ``"no
        candidates"``, ``"converged"`` (no flip lowers the score, or every
        candidate flipped) or ``"budget"`` (the next round would have scored
        more than ``max_scores`` graphs).
    """
    if band < 1:
        raise ValueError(f"band must be at least 1, got {band!r}.")
    if max_scores < 1:
        raise ValueError(f"max_scores must be at least 1, got {max_scores!r}.")
    A = (np.asarray(adjacency) != 0).astype(int)
    candidates = near_level(decisions, band)
    info: dict = {"candidates": [list(c) for c in candidates], "flips": [], "scores": [],
                  "margins": [], "n_scores": 0, "stopped": "no candidates"}
    if not candidates:
        return A, info
    info["stopped"] = "converged"
    if 1 + len(candidates) > max_scores:
        info["stopped"] = "budget"
        return A, info
    info["scores"].append(graph_score(B, covariances, n_rows, A, penalty))
    info["n_scores"] = 1
    A, trials = _greedy_flips(lambda G: graph_score(B, covariances, n_rows, G, penalty), A,
                              list(candidates), info, max_scores)
    if trials:  # stopped because no flip lowers the score
        price = penalty * float(np.log(np.asarray(n_rows, dtype=float)).sum())
        best = info["scores"][-1]
        info["margins"] = [[j, i, float((t - best) / price)] for t, (j, i) in trials]
    return A, info


def _greedy_flips(score_of, A: np.ndarray, open_pairs: list, info: dict, max_scores: int,
                  tol: float = 0.0) -> tuple[np.ndarray, list]:
    """Flip, round by round, the open pair whose graph scores lowest while that is lower.

    A flip must lower the last score in ``info["scores"]`` by more than
    ``tol`` relative; ``info``'s ``"flips"``, ``"scores"``, ``"n_scores"``
    and ``"stopped"`` are updated. Returns the graph and, when no flip lowered
    the score, that round's ``(score, pair)`` trials (empty otherwise).
    """
    best = info["scores"][-1]
    while open_pairs:
        if info["n_scores"] + len(open_pairs) > max_scores:
            info["stopped"] = "budget"
            break
        info["n_scores"] += len(open_pairs)
        trials = []
        for j, i in open_pairs:
            A1 = A.copy()
            A1[j, i] = 1 - A1[j, i]
            trials.append((score_of(A1), (j, i)))
        value, pair = min(trials, key=lambda t: t[0])
        if not value < best - tol * max(1.0, abs(best)):
            return A, trials
        best = value
        A = A.copy()
        A[pair] = 1 - A[pair]
        open_pairs.remove(pair)
        info["flips"].append(list(pair))
        info["scores"].append(best)
    return A, []


def search_graph(
    covariances: np.ndarray,
    n_rows: np.ndarray,
    adjacency: np.ndarray,
    *,
    pairs: list[tuple[int, int]] | None = None,
    penalty: float = REVISION_PENALTY,
    max_scores: int = SEARCH_MAX_SCORES,
) -> tuple[np.ndarray, dict]:
    """Greedy single flips of a finished fit's graph while its fitted score drops.

    Every graph is scored as :func:`fitted_score` scores the fit's own: the
    likelihood refinement of the fitted features' disentangling matrix over
    that graph, read at its optimum. Each round flips, of the open pairs, the
    one whose graph scores lowest, if that is lower than the current graph's
    score by more than ``1e-8`` relative; a flipped pair is closed. Unlike
    :func:`revise_graph`, which flips near-level pruning decisions of the
    entangled features and scores each graph from its own intersection with
    the refinement's guard, this reads every forward pair and scores all
    graphs from the same features.

    Parameters
    ----------
    covariances : ndarray (K, d, d)
        Covariance of the fitted features per environment, in the order's
        positions.
    n_rows : ndarray (K,)
    adjacency : ndarray (d, d)
        The fitted graph over positions (``[j, i] != 0`` iff ``j -> i``, only
        ``j < i``).
    pairs : list of (int, int), optional
        The pairs ``(j, i)``, ``j < i``, that may flip; every forward pair when
        None.
    penalty : float, default=REVISION_PENALTY
    max_scores : int, default=SEARCH_MAX_SCORES

    Returns
    -------
    adjacency : ndarray (d, d) of int
    info : dict
        ``"flips"`` (pairs, in order), ``"scores"`` (the score before and
        after each flip), ``"n_scores"`` (graphs scored) and ``"stopped"``
        (``"converged"`` or ``"budget"``).
    """
    A = (np.asarray(adjacency) != 0).astype(int)
    d = A.shape[0]
    if np.any(np.tril(A)):
        raise ValueError("adjacency must be over positions of a causal order (j -> i only "
                         "for j < i).")
    open_pairs = ([(j, i) for j in range(d) for i in range(j + 1, d)] if pairs is None
                  else [(int(j), int(i)) for j, i in pairs])
    def score_of(G):  # every graph from the fitted features themselves
        return _profiled(np.eye(d), covariances, n_rows, G != 0, penalty, guard=False)

    info: dict = {"flips": [], "scores": [score_of(A)], "n_scores": 1, "stopped": "converged"}
    A, _ = _greedy_flips(score_of, A, open_pairs, info, max_scores, tol=1e-8)
    return A, info
