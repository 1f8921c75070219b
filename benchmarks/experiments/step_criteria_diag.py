"""Diagnosis: the consistency score and the score test on every re-estimated direction.

At every ordering step where ``ordering._keep_sources`` runs (the default
fit, nothing changed), each final direction is labelled against the truth:
right when it extracts, in every environment, the noise of one node (largest
|corr| over nodes, at least 0.9 in every environment) that is a root of the
graph left after the earlier steps. The noises come from the simulator's
latents (each node regressed on its parents per environment), so the
independent simulator is labelled the same way. One row per step: the
directions' consistency scores, score-test sums
(``score_test_trial.score_test``) and labels, the labels of the starts they
were re-estimated from, and whether any raw or descended candidate of the
step's pool is right (with the best right descended minimum's rank among the
minima).

    python step_criteria_diag.py {d10,zoo,zoo-independent} FIRST COUNT OUT.jsonl
"""
import json
import os
import sys
import warnings

import numpy as np

import creator_plugin.ordering as ordmod
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import BAR, data  # noqa: E402
from score_test_trial import score_test  # noqa: E402

_keep = ordmod._keep_sources
_descent = ordmod.consistency_descent
STATE: dict = {}


def true_noises(A, Y):
    Z = []
    for y in Y:
        z = np.empty_like(y)
        for j in range(A.shape[0]):
            pa = np.flatnonzero(A[:, j])
            z[:, j] = y[:, j] - (y[:, pa] @ np.linalg.lstsq(y[:, pa], y[:, j], rcond=None)[0]
                                 if pa.size else 0.0)
        Z.append(z)
    return Z


def labels(R_list, directions):
    A, Z = STATE["A"], STATE["Z"]
    d = A.shape[0]
    # nodes already extracted: their noise is (mostly) gone from the residuals
    gone = np.zeros(d)
    for R, z in zip(R_list, Z):
        coef = np.linalg.lstsq(R, z, rcond=None)[0]
        gone += 1.0 - np.sum((R @ coef) ** 2, axis=0) / np.sum(z**2, axis=0) > 0.5
    done = gone > len(R_list) / 2
    roots = [j for j in range(d) if not done[j] and done[np.flatnonzero(A[:, j])].all()]
    out = []
    for w in directions.T:
        c = np.stack([np.abs(np.corrcoef(R @ w, z.T)[0, 1:]) for R, z in zip(R_list, Z)])
        j = c.argmax(axis=1)
        out.append(bool((j == j[0]).all() and c[:, j[0]].min() >= 0.9 and j[0] in roots))
    return out


def logged(R_list, ica_dirs, starts, refined):
    directions, kept, scores = _keep(R_list, ica_dirs, starts, refined)
    pool = STATE.pop("pool", None)
    STATE["rows"].append({"cons": scores.tolist(), "T": score_test(R_list, directions).tolist(),
                          "right": labels(R_list, directions), "m": ica_dirs[0].shape[1],
                          "starts_right": labels(R_list, starts), "pool_right": pool})
    return directions, kept, scores


def descent_logged(R_list, ica_dirs, starts, **kw):
    dirs, scores = _descent(R_list, ica_dirs, starts, **kw)
    right = labels(R_list, dirs)
    STATE["pool"] = {"any_raw": any(labels(R_list, starts)), "any_descended": any(right),
                     "best_right_rank": (int(np.argsort(np.argsort(scores))[right].min())
                                         if any(right) else None)}
    return dirs, scores


def main() -> None:
    warnings.simplefilter("ignore")
    mode, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    ordmod._keep_sources = logged
    ordmod.consistency_descent = descent_logged
    families = BAR if mode.startswith("zoo") else [mode]
    with open(out, "a") as fh:
        for family in families:
            for seed in range(first, first + count):
                d, X, A, Y = data(mode, family, seed)
                STATE.update(A=A, Z=true_noises(A, Y), rows=[])
                fit_arrays(X, FitConfig(d, quality=False), random_state=seed)
                fh.write(json.dumps({"set": mode, "family": family, "seed": seed,
                                     "steps": STATE["rows"]}) + "\n")
                fh.flush()


if __name__ == "__main__":
    main()
