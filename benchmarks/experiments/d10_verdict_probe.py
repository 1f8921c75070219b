"""Default verdict on chosen d = 10 tuning seeds (simulate(10, 10, 2000, setting=1)).

Usage: python benchmarks/experiments/d10_verdict_probe.py 16,21,26,38,45,6,35,0,1,2
(rows: benchmarks/results/ordering_repair/d10_tuning_verdict.jsonl).
"""
import json
import sys
import warnings

from creator_plugin import CREATOR, simulate
from creator_plugin.metrics import evaluate_model

for seed in [int(s) for s in sys.argv[1].split(",")]:
    sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = CREATOR(10, random_state=seed).fit(sim.X)
    ev = evaluate_model(m, sim)
    issues = [i["kind"] for i in (m.diagnostics_.get("quality") or {}).get("issues", [])]
    print(json.dumps({"seed": seed, "shd": int(ev["shd"]), "issues": issues,
                      "warnings": sorted({type(x.message).__name__ for x in w})}), flush=True)
