"""Trial: the ICA-consistency score without its least reliable environment.

At d = 10 most of the SHD left is in fits where an ordering step extracts
another true noise in one "loud" environment, whose latents' variances span
orders of magnitude (benchmarks/LOG.md, "Sources permuted in one environment
at d = 10"): its ICA directions are imprecise along the loud directions, and
its term of the score can favour the permuted direction. This trial leaves,
at every ordering step, the environment whose residual covariance has the
largest condition number out of the score of the candidates, of the
re-estimates and of the keep rule (with K >= 4 environments; the
consistency descent still minimises the full sum and its minima are scored
again). Tuning seeds only::

    python loud_environment_trial.py d10 91000 80 OUT.jsonl
    python loud_environment_trial.py d10 0 50 OUT.jsonl
    python loud_environment_trial.py zoo 0 30 OUT.jsonl
    python loud_environment_trial.py zoo-independent 0 30 OUT.jsonl

One row per data set with both variants' SHD, correct order, LocR² and CPU seconds.
"""
import sys
import warnings

import numpy as np
from keep_variant_trial import run
from weighted_consistency_trial import patch


def quiet_weights(R_list) -> np.ndarray:
    """1 for every environment but the worst-conditioned one (0), with K >= 4."""
    weights = np.ones(len(R_list))
    if len(R_list) >= 4:
        weights[int(np.argmax([np.linalg.cond(R.T @ R / R.shape[0]) for R in R_list]))] = 0.0
    return weights


def main() -> None:
    warnings.simplefilter("ignore")
    mode, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    run(mode, first, count, out, {"all": patch, "quiet": lambda: patch(quiet_weights)}, patch)


if __name__ == "__main__":
    main()
