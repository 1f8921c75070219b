"""Search the finished graph by the fitted features' score (``search_graph``).

After the disentanglement, the finished graph is revised by the score the
order branches compare models by: greedy single flips of the pairs whose
pruning statistic is within a factor :data:`SEARCH_BAND` of the level, each
graph scored by the penalised Gaussian likelihood of the SEM over it with
the disentangling matrix refined from the fitted features
(:func:`creator_plugin.refine.likelihood.fitted_score`'s criterion, read at
the refinement's optimum), while the score drops. Unlike the graph revision
(:mod:`.revision`), which scores each graph from its own intersection with
the refinement's guard, every graph here starts from the same fitted
features, so a missed edge the features absorb shows as a large drop in the
score. When a flip is taken the features are disentangled again for the new
graph. Each graph scored costs one likelihood refinement.

The ``"auto"`` rule (:func:`searches`): search with ``pruning="residual"``
when the number of latents is in :data:`AUTO_SEARCH_LATENTS` (8 to 12) and
there are at least as many environments as latents. Measured on simulated
data not used to design it (fresh seeds, two simulators): it lowered the
mean SHD at d = 8, 10 and 12 from 0.55 to 0.30 (220 data sets; 40 better, 3
worse), at about twice the time of a fit; at d = 5 it made fits worse and
at d = 7 it changed nothing on tuning data (docs: accuracy, "the finished
graph searched").
"""

from __future__ import annotations

import numpy as np

from .likelihood import PENALTY, profiled_score
from .revision import flipped, greedy_flips, near_level

__all__ = ["AUTO_SEARCH_LATENTS", "SEARCH_BAND", "SEARCH_MAX_SCORES", "search_decisions",
           "search_graph", "searches"]

#: Most graphs one :func:`search_graph` scores (the start included); a round
#: that would exceed it is not started.
SEARCH_MAX_SCORES = 400

#: ``CREATOR(search_graph=...)`` may flip the pairs whose pruning statistic
#: lies within this factor of the level (the revision's band is
#: :data:`.revision.REVISION_BAND`).
SEARCH_BAND = 3.0

#: ``CREATOR(search_graph="auto")`` searches when the number of latents is in
#: this range (and there are at least as many environments as latents).
AUTO_SEARCH_LATENTS = (8, 12)


def searches(setting, *, n_latent: int, n_environments: int, pruning: str) -> bool:
    """Whether a fit searches its finished graph (``setting``: "auto", True or False).

    ``"auto"``: with the residual rule, a number of latents in
    :data:`AUTO_SEARCH_LATENTS` and at least as many environments as latents.
    """
    if isinstance(setting, str):  # "auto"
        low, high = AUTO_SEARCH_LATENTS
        return pruning == "residual" and low <= n_latent <= high and n_environments >= n_latent
    return bool(setting)


def search_graph(
    covariances: np.ndarray,
    n_rows: np.ndarray,
    adjacency: np.ndarray,
    *,
    pairs: list[tuple[int, int]] | None = None,
    penalty: float = PENALTY,
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
    penalty : float, default=PENALTY
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
        return profiled_score(np.eye(d), covariances, n_rows, G != 0, penalty, guard=False)

    info: dict = {"flips": [], "scores": [score_of(A)], "n_scores": 1, "stopped": "converged"}
    A, _ = greedy_flips(score_of, A, open_pairs, info, max_scores, tol=1e-8)
    return A, info


def search_decisions(covariances: np.ndarray, n_rows: np.ndarray, adjacency: np.ndarray,
                     decisions: list[dict]) -> tuple[np.ndarray, list[dict], dict]:
    """The fit's search: flip near-level decisions by the fitted features' score.

    Returns the searched adjacency, the decisions with ``"edge"`` updated (a
    flipped pair also carries ``"searched": True``) and the search's record
    (:func:`search_graph`'s, with the ``"candidates"``).
    """
    pairs = near_level(decisions, SEARCH_BAND)
    searched, info = search_graph(covariances, n_rows, adjacency, pairs=pairs)
    return (searched, flipped(decisions, searched, info["flips"], "searched"),
            {"candidates": [list(p) for p in pairs], **info})
