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

One row per data set with both variants' SHD, correct order and LocR².
"""
import json
import os
import sys
import warnings

import numpy as np

import creator_plugin.independence as indmod
import creator_plugin.ordering as ordmod
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import BAR, data  # noqa: E402

_sources = indmod.ica_consistency_sources
_descent = ordmod.consistency_descent


def quiet_sources(R_list, candidates, ica_dirs):
    """The score summed over every environment but the worst-conditioned one."""
    K = len(R_list)
    conds = [np.linalg.cond(R.T @ R / R.shape[0]) for R in R_list]
    skip = int(np.argmax(conds)) if K >= 4 else -1
    scores = np.zeros(candidates.shape[1])
    sources = np.zeros((candidates.shape[1], K), dtype=int)
    for k, (R, A) in enumerate(zip(R_list, ica_dirs)):
        part, one = _sources([R], candidates, [A])
        sources[:, k] = one[:, 0]
        if k != skip:
            scores += part
    return scores, sources


def quiet_descent(R_list, ica_dirs, starts, **kw):
    directions, _ = _descent(R_list, ica_dirs, starts, **kw)
    return directions, quiet_sources(R_list, directions, ica_dirs)[0]


def patch(on: bool) -> None:
    indmod.ica_consistency_sources = quiet_sources if on else _sources
    ordmod.ica_consistency_sources = quiet_sources if on else _sources
    ordmod.consistency_descent = quiet_descent if on else _descent


def main() -> None:
    warnings.simplefilter("ignore")
    mode, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    families = BAR if mode.startswith("zoo") else [mode]
    with open(out, "a") as fh:
        for family in families:
            for seed in range(first, first + count):
                d, X, A, Y = data(mode, family, seed)
                rec = {"set": mode, "family": family, "seed": seed}
                for name, on in (("all", False), ("quiet", True)):
                    patch(on)
                    r = fit_arrays(X, FitConfig(d, quality=False), random_state=seed)
                    ev = evaluate(A, Y, r.adjacency, r.latents)
                    rec[name] = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                                 "locr2": round(float(ev["locr2"]), 4)}
                patch(False)
                fh.write(json.dumps(rec) + "\n")
                fh.flush()


if __name__ == "__main__":
    main()
