"""Trial: choose between a step's two best directions by looking one step ahead.

``step_criteria_diag.py`` found that at d = 10 about half of the wrong steps
have a right direction among the step's final directions that scores worse
than the chosen one, and the exchanged sources of the d = 10 outliers are
close calls at the step where they happen: a direction that extracts another
node's noise in one loud environment scores about as well as the consistent
one. The exchange shows at the next step, whose residual in that environment
still holds the noise the other environments gave up, so no direction of the
next step can be consistent.

Variant ``lookahead``: where ``ordering._keep_sources`` runs and at least two
sources remain after the step, for each of the step's two best final
directions: regress it out of every environment's residual, run the next
step's candidates (FastICA per environment, the consistency score, the
descent from every candidate) and take the best minimum. The step chooses
the direction with the smaller sum of its own score and that best minimum.

Tuning sets only::

    python lookahead_trial.py d10 91000 80 OUT.jsonl
"""
import os
import sys

import numpy as np

import creator_plugin.ordering as ordmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import _use, cli  # noqa: E402

_keep = ordmod._keep_sources


def next_best(R_list, a, m, seed):
    """Best descended consistency score of the next step (``m`` sources) after extracting ``a``."""
    nxt, ica = [], []
    for k, R in enumerate(R_list):
        z = R @ a
        Rn = R - np.outer(z, (z @ R) / (z @ z))
        nxt.append(Rn)
        dirs, _ = ordmod.ica_directions(Rn, m, random_state=seed + k)
        ica.append(dirs)
    cand = np.hstack(ica)
    _, scores = ordmod.consistency_descent(nxt, ica, cand, max_iter=ordmod.DESCENT_MAX_ITER,
                                           tol=ordmod.DESCENT_TOL)
    return float(scores.min())


def _lookahead(R_list, ica_dirs, starts, refined):
    directions, kept, scores = _keep(R_list, ica_dirs, starts, refined)
    m = ica_dirs[0].shape[1]
    if m < 3 or directions.shape[1] < 2:
        return directions, kept, scores
    top = np.argsort(scores)[:2]
    total = np.full(scores.shape, np.inf)
    for c in top:
        total[c] = scores[c] + next_best(R_list, directions[:, c], m - 1, 12345)
    return directions, kept, total


def main() -> None:
    cli({"default": _use(_keep), "lookahead": _use(_lookahead)}, _use(_keep))


if __name__ == "__main__":
    main()
