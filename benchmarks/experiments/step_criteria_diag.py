"""Diagnosis: the consistency score and the score test on every re-estimated direction.

At every ordering step where ``ordering._keep_sources`` runs (the default
fit, nothing changed), each final direction is labelled against the truth:
right when it extracts, in every environment, the noise of one node (largest
|corr| over nodes, at least 0.9 in every environment) that is a root of the
graph left after the earlier steps. The noises come from the simulator's
latents (each node regressed on its parents per environment), so the
independent simulator is labelled the same way. One row per step: the
directions' consistency scores and their per-environment terms, score-test
sums (``score_test_trial.score_test``) and labels, the labels of the starts
they were re-estimated from, and whether any raw or descended candidate of the
step's pool is right (with the best right descended minimum's rank among the
minima).

    python step_criteria_diag.py {d10,zoo,zoo-independent} FIRST COUNT OUT.jsonl
    python step_criteria_diag.py summary ROWS.jsonl [ROWS.jsonl ...]

``summary`` prints, per file, where the chosen direction went wrong and, on
the steps whose final directions are partly right, how often each chooser
(the consistency score, the score test, and sums of the consistency score's
terms without their largest one or two, rows with terms only) picks a right
one.
"""
import json
import os
import sys
import warnings

import numpy as np

import creator_plugin.ordering as ordmod
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.independence import ica_consistency_sources

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
    terms = [ica_consistency_sources([R], directions, [a])[0] for R, a in zip(R_list, ica_dirs)]
    STATE["rows"].append({"cons": scores.tolist(), "T": score_test(R_list, directions).tolist(),
                          "terms": np.round(np.array(terms).T, 6).tolist(),
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


def summary(paths) -> None:
    choosers = {
        "consistency": lambda s: np.array(s["cons"]),
        "score test": lambda s: np.array(s["T"]),
        "terms without the largest": lambda s: (np.sum(s["terms"], axis=1)
                                                 - np.max(s["terms"], axis=1)),
        "terms without the two largest": lambda s: np.sort(s["terms"], axis=1)[:, :-2].sum(1),
    }
    for path in paths:
        kinds = dict.fromkeys(["chosen right", "a right direction scored worse",
                               "no right direction in the pool",
                               "right minimum not among the starts",
                               "re-estimation lost a right start"], 0)
        ranks, mixed, right = [], 0, dict.fromkeys(choosers, 0)
        with_terms = True
        for line in open(path):
            for s in json.loads(line)["steps"]:
                ok = np.array(s["right"])
                if ok.any() and not ok.all():
                    mixed += 1
                    for name, fn in choosers.items():
                        if name.startswith("terms") and "terms" not in s:
                            with_terms = False
                            continue
                        right[name] += int(ok[np.argmin(fn(s))])
                pool = s["pool_right"] or {}
                if ok[np.argmin(s["cons"])]:
                    kinds["chosen right"] += 1
                elif ok.any():
                    kinds["a right direction scored worse"] += 1
                elif any(s["starts_right"]):
                    kinds["re-estimation lost a right start"] += 1
                elif pool.get("any_descended"):
                    kinds["right minimum not among the starts"] += 1
                    ranks.append(pool["best_right_rank"])
                else:
                    kinds["no right direction in the pool"] += 1
        if not with_terms:
            right = {k: v for k, v in right.items() if not k.startswith("terms")}
        print(path, kinds, "ranks", sorted(ranks))
        print("  steps with right and wrong final directions:", mixed, "right choices", right)


def main() -> None:
    warnings.simplefilter("ignore")
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
        return
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
