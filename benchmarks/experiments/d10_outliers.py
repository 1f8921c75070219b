"""Why do a few d = 10, K = 10, n = 2000 fits have SHD 10-27?

For the outlier seeds of the earlier d = 10 runs (and a few good seeds as a
contrast) the default fit is repeated with three random states of the fit
(the data fixed): the step where the order first goes wrong (a node chosen
before one of its ancestors: the recovered noise of the step is matched to
the true noise it correlates with most, and that correlation is recorded: a
low one means the step's noise is a mixture, not a source), the margin of that step (best score,
gap to the runner-up) and the SHD. If other random states of the fit give the
right order, the failure is in the stochastic candidates (ICA restarts), not
in the score or the data.

    OMP_NUM_THREADS=1 python benchmarks/experiments/d10_outliers.py > out.jsonl
    OMP_NUM_THREADS=1 python benchmarks/experiments/d10_outliers.py --states=1 1017 >> out.jsonl
"""

from __future__ import annotations

import json
import sys
import warnings

import networkx as nx
import numpy as np

from creator_plugin import CREATOR, simulate
from creator_plugin.metrics import evaluate

OUTLIERS = [1002, 1008, 1017, 1020, 1026, 1046, 1050, 2012]
GOOD = [1000, 1001, 1003, 1004]


def first_wrong_step(sim, model) -> tuple[int | None, list[int], list[float]]:
    Z0 = sim.Z[0]
    N0 = model.noise_[0]
    C = np.abs(np.corrcoef(N0.T, Z0.T)[: N0.shape[1], N0.shape[1]:])
    # the recovered noise of step i is model column causal_order_[i]
    nodes = [int(np.argmax(C[j])) for j in model.causal_order_]
    corr = [float(C[j].max()) for j in model.causal_order_]
    anc = {v: nx.ancestors(nx.from_numpy_array(sim.adjacency, create_using=nx.DiGraph), v)
           for v in range(sim.adjacency.shape[0])}
    seen: set[int] = set()
    for i, v in enumerate(nodes):
        if not anc[v] <= seen:
            return i, nodes, corr
        seen.add(v)
    return None, nodes, corr


def main() -> None:
    args = sys.argv[1:]
    n_states = 3
    if args and args[0].startswith("--states="):
        n_states = int(args.pop(0).split("=")[1])
    seeds = [int(s) for s in args] or OUTLIERS + GOOD
    for seed in seeds:
        sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
        for rs in (seed, seed + 100_000, seed + 200_000)[:n_states]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = CREATOR(10, random_state=rs).fit(sim.X)
            ev = evaluate(sim.adjacency, sim.Y, m.adjacency_matrix_, m.latents_,
                          m.causal_order_)
            step, nodes, corr = first_wrong_step(sim, m)
            steps = m.diagnostics_["ordering"]
            row = {"seed": seed, "fit_random_state": rs, "shd": int(ev["shd"]),
                   "correct_order": bool(ev["correct_order"]), "first_wrong_step": step,
                   "recovered_nodes": nodes, "match_abs_corr": corr, "true_order": sim.causal_order,
                   "best_scores": [s["best_score"] for s in steps],
                   "gaps": [s["runner_up_gap"] for s in steps],
                   "issues": m.diagnostics_["quality"]["issues"]}
            print(json.dumps(row, default=str), flush=True)


if __name__ == "__main__":
    main()
