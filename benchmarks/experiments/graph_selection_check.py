"""``CREATOR(10, revise_graph=True)`` against ``graph_selection.py``'s rows on the same data.

Prints, per seed, the estimator's SHD, the script's (``shd2``) and the
default's. Usage::

    OMP_NUM_THREADS=1 python graph_selection_check.py FIRST COUNT

(seeds of ``benchmarks/results/graph_selection/fresh_d10_85000-85079_bfgs.jsonl``;
output of 85000-85023 in ``estimator_vs_script_d10_85000-85023_bfgs.txt`` there).
"""
import json
import sys
import warnings
from pathlib import Path

from creator_plugin import CREATOR, simulate
from creator_plugin.metrics import evaluate_model

ROWS = (Path(__file__).resolve().parents[1] / "results" / "graph_selection"
        / "fresh_d10_85000-85079_bfgs.jsonl")


def main() -> None:
    warnings.simplefilter("ignore")
    rows = {r["seed"]: r for r in map(json.loads, ROWS.read_text().splitlines())}
    first, count = map(int, sys.argv[1:3])
    for s in range(first, first + count):
        sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=s)
        model = CREATOR(10, random_state=s, revise_graph=True).fit(sim.X)
        shd = evaluate_model(model, sim)["shd"]
        same = "OK" if shd == rows[s]["shd2"] else "DIFF"
        print(s, shd, rows[s]["shd2"], rows[s]["fit_shd"], same, flush=True)


if __name__ == "__main__":
    main()
