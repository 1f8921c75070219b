"""Probe: revise the finished fit's graph by its own fitted score, over every forward pair.

Question (tuning seeds only): the graph revision (`revise_graph`) flips only
near-level pruning decisions and scores each graph from its own
subspace-intersection start with the refinement's guard. Scored instead the
way the branches' chooser scores a finished model
(:func:`creator_plugin.revision.fitted_score`'s criterion: the refinement
starts from the fit's final features and the deviance is read at its
optimum), do greedy single flips of forward pairs (in the fit's causal order)
mend the fit's graph? For each data set: the default fit without branches,
then greedy flips while the score drops by more than 1e-8 relative, over

* ``all``: every forward pair;
* ``band3``: the pairs whose pruning statistic is within a factor 3 of the
  level (the revision's band is 1.5).

One row per data set: the default fit's SHD, order and verdict, and per
variant the final SHD, the flips, the graphs scored and the seconds. Usage::

    OMP_NUM_THREADS=1 python fitted_revision_probe.py run SET FIRST COUNT OUT.jsonl [VARIANTS]
    python fitted_revision_probe.py summary OUT.jsonl [...]

SET as in ``branch_probe.py``; VARIANTS comma-separated (default: all of them).
``run-chosen`` fits with the defaults' branches instead (``search_graph=False``),
so the greedy flips search only the model the branches' scores chose.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import branch_probe as bp  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402
from creator_plugin.revision import REVISION_PENALTY, _profiled  # noqa: E402

VARIANTS = {"all": None, "band3": 3.0}


def _shd(model, A_pos, order, A, Y) -> int:
    adj = np.zeros(A_pos.shape)
    adj[np.ix_(order, order)] = A_pos
    return int(score(A, Y, adj, model.latents_, model.causal_order_)["shd"])


def greedy(model, band: float | None, A, Y) -> dict:
    """Greedy flips of the fit's graph (positions of its causal order) by the fitted score."""
    start = time.process_time()
    order = np.asarray(model.causal_order_)
    L = [x[:, order] for x in model.latents_]
    cur = (np.asarray(model.adjacency_matrix_) != 0)[np.ix_(order, order)]
    covs = np.stack([np.cov(x, rowvar=False, bias=True) for x in L])
    n = np.array([x.shape[0] for x in L], float)
    d = cur.shape[0]
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    if band is not None:  # the pruning's decisions are over positions
        ratio = {(q["parent"], q["child"]): q["statistic"] / q["threshold"]
                 for q in model.diagnostics_["pruning"]}
        pairs = [p for p in pairs if p in ratio and 1 / band <= ratio[p] <= band]
    best = _profiled(np.eye(d), covs, n, cur, REVISION_PENALTY, guard=False)
    scored, flips = 1, []
    while pairs:
        trials = []
        for i, j in pairs:
            B = cur.copy()
            B[i, j] = not B[i, j]
            trials.append((_profiled(np.eye(d), covs, n, B, REVISION_PENALTY, guard=False), (i, j)))
        scored += len(pairs)
        value, pair = min(trials)
        if not value < best - 1e-8 * abs(best):
            break
        best = value
        cur[pair] = not cur[pair]
        flips.append([int(pair[0]), int(pair[1])])
        pairs.remove(pair)
    return {"shd": _shd(model, cur, order, A, Y), "flips": flips, "scored": scored,
            "cpu": time.process_time() - start}


def _fit_branched(d: int, seed: int, X, A, Y) -> tuple[dict, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        model = CREATOR(d, random_state=seed, search_graph=False).fit(X)
        cpu = time.process_time() - start
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
    return ({"shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
             "flagged": bool(issues), "cpu": cpu}, model)


def run(which: str, first: int, count: int, out: str, variants: list[str] | None = None,
        branched: bool = False) -> None:
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            for cell, d, X, A, Y in bp.data_sets(which, seed):
                base, model = (_fit_branched if branched else bp.fit)(d, seed, X, A, Y)
                row = {"set": which, "cell": cell, "seed": seed,
                       "base": {k: base[k] for k in ("shd", "correct_order", "flagged", "cpu")}}
                for name in variants or list(VARIANTS):
                    row[name] = greedy(model, VARIANTS[name], A, Y)
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    names = [v for v in VARIANTS if all(v in r for r in rows)]
    print("| cell | data sets | default | " + " | ".join(names) + " | better / worse ("
          + ", ".join(names) + ") | time against the fit (" + ", ".join(names) + ") |")
    print("|---|---|---|" + "---|" * (len(names) + 2))
    for cell in sorted({r["cell"] for r in rows}) + ["pooled"]:
        rs = [r for r in rows if cell in ("pooled", r["cell"])]
        base = np.array([r["base"]["shd"] for r in rs], float)
        fit_cpu = sum(r["base"]["cpu"] for r in rs)
        means, bw, cost = [], [], []
        for v in names:
            shd = np.array([r[v]["shd"] for r in rs], float)
            means.append(f"{shd.mean():.3f}")
            bw.append(f"{int(np.sum(shd < base))} / {int(np.sum(shd > base))}")
            cost.append(f"{sum(r[v]['cpu'] for r in rs) / fit_cpu:.2f}")
        print(f"| {cell} | {len(rs)} | {base.mean():.3f} | " + " | ".join(means) + " | "
              + ", ".join(bw) + " | " + ", ".join(cost) + " |")


if __name__ == "__main__":
    if len(sys.argv) in (6, 7) and sys.argv[1] in ("run", "run-chosen"):
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
            sys.argv[6].split(",") if len(sys.argv) == 7 else None,
            branched=sys.argv[1] == "run-chosen")
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
