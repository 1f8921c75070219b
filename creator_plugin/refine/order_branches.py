"""The ordering's close calls taken the other way (``order_branches``).

The ordering step chooses, at every step, the best of its re-estimated
directions. Where the best and a different runner-up score nearly alike (a
close call, :func:`close_calls`), the fit is repeated from the same random
state with that step's runner-up (:func:`choose`), one close call at a time,
and the model whose features follow their graph best is kept: the models are
compared by the penalised Gaussian likelihood of the SEM over each model's
graph in every environment, maximised over the features from the fitted ones
(:func:`creator_plugin.refine.likelihood.fitted_score`, the graph
revision's criterion); a branch must score lower by more than rounding. Each
branch costs about one more fit. It needs the ordering's re-estimation
(``n_reestimate > 0``): without it there are no close calls.

The ``"auto"`` rule (:func:`branches`): :data:`AUTO_ORDER_BRANCHES` (2)
branches when the number of latents is in :data:`AUTO_BRANCH_LATENTS` (7 to
15) and there are at least as many environments as latents, none otherwise.
Measured on simulated data not used to design it (two blocks of fresh seeds,
two simulators): two branches moved the mean SHD at d = K = 10 from 1.05 to
0.63 on one simulator and from 0.64 to 0.63 on the other (160 data sets
each), at d = K = 7 from 0.21 to 0.18 and from 0.39 to 0.27 (100 each), and
at d = K = 15 from 3.55 to 2.15 (20 data sets, one simulator), at about
three times the time of a fit; at d = 5 they did not help, and with fewer
environments than latents they changed nothing on average (docs: accuracy,
"the ordering's close calls taken the other way").
"""

from __future__ import annotations

import numpy as np

__all__ = ["AUTO_BRANCH_LATENTS", "AUTO_ORDER_BRANCHES", "DISTINCT_SCORE_RATIO", "branches",
           "choose", "close_calls"]

#: Two re-estimated directions of a step count as different when their
#: scores differ by more than this factor (the same direction reached from two
#: starts scores alike up to the descent's tolerance).
DISTINCT_SCORE_RATIO = 1 + 1e-6

#: Close calls ``CREATOR(order_branches="auto")`` branches on, for numbers of
#: latents in :data:`AUTO_BRANCH_LATENTS`.
AUTO_ORDER_BRANCHES = 2

#: The numbers of latents (inclusive range) at which ``order_branches="auto"``
#: branches, given at least as many environments as latents: two branches
#: lowered the mean SHD on fresh simulated data at d = K = 7, 10 and 15, did
#: not help at d = 5, mended nothing at d = K = 20 (tuning data), where a fit's
#: time matters most, and changed nothing on average with fewer environments
#: than latents (d = 10, K = 4 and 6; tuning data).
AUTO_BRANCH_LATENTS = (7, 15)


def close_calls(steps: list[dict]) -> list[tuple[float, int, int]]:
    """The steps whose choice between different re-estimated directions was closest.

    Parameters
    ----------
    steps : list of dict
        :attr:`OrderingResult.steps`.

    Returns
    -------
    list of (ratio, step, rank)
        For every step with at least two re-estimated directions whose
        scores differ (by more than :data:`DISTINCT_SCORE_RATIO`): the ratio
        of the best different direction's score to the winner's, the step,
        and that direction's rank among the step's scores (0 the winner), the
        closest call first. ``topological_ordering(step_choices={step:
        rank})`` takes the other way at that step.
    """
    calls = []
    for st in steps:
        scores = np.sort(np.asarray(st.get("refined_scores") or [], dtype=float))
        if scores.size < 2 or not scores[0] > 0:
            continue
        other = np.flatnonzero(scores > scores[0] * DISTINCT_SCORE_RATIO)
        if other.size:
            calls.append((float(scores[other[0]] / scores[0]), int(st["step"]), int(other[0])))
    return sorted(calls)

def branches(setting, *, n_latent: int, n_environments: int, reestimates: bool) -> int:
    """How many close calls a fit branches on (``setting``: "auto" or a count).

    ``"auto"``: :data:`AUTO_ORDER_BRANCHES` when the number of latents is in
    :data:`AUTO_BRANCH_LATENTS`, there are at least as many environments as
    latents and the ordering re-estimates its directions (``reestimates``;
    without the re-estimation there are no close calls); none otherwise.
    """
    if isinstance(setting, str):  # "auto"
        low, high = AUTO_BRANCH_LATENTS
        wanted = low <= n_latent <= high and n_environments >= n_latent
        return AUTO_ORDER_BRANCHES if wanted and reestimates else 0
    return setting


def choose(best, n_branches: int, refit):
    """The model of the ordering's ``n_branches`` closest calls taken the other way, or ``best``.

    Parameters
    ----------
    best : model
        The unbranched model: its ``score`` (the fitted score) and its
        ``stage`` (``stage.state_before``: the random state the ordering
        started from; ``stage.ordering.steps``: the ordering's record).
    n_branches : int
    refit : callable
        ``refit(generator, step_choices)``: the model of a fit whose ordering
        starts from ``generator`` and takes ``step_choices`` (``{step:
        rank}``).

    Returns
    -------
    model, dict
        The model with the lowest score (the earlier one on a tie to
        rounding) and the record ``diagnostics_["order_branches"]``
        (``base_score``, per branch ``step``, ``rank``, ``ratio`` and
        ``score``, ``chosen``: 0 the unbranched model).
    """
    state = best.stage.state_before
    record = {"base_score": best.score, "branches": [], "chosen": 0}
    calls = close_calls(best.stage.ordering.steps)[:n_branches]
    for b, (ratio, step, rank) in enumerate(calls, start=1):
        bits = getattr(np.random, state["bit_generator"])()
        bits.state = state
        other = refit(np.random.Generator(bits), {step: rank})
        record["branches"].append({"step": step, "rank": rank, "ratio": ratio,
                                   "score": other.score})
        # a branch that reaches the same model (to rounding) does not replace it
        if other.score < best.score - 1e-8 * max(1.0, abs(best.score)):
            best, record["chosen"] = other, b
        other = None
    return best, record
