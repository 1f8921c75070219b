"""How many graphs the revision scores in default fits (the budget check; lab script).

Usage: python revision_budget_check.py {d20,d30,d10,d10i} FIRST COUNT > OUT.jsonl
"""
import json, sys, time, warnings
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import zoo
from creator_plugin import CREATOR, simulate
which, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for seed in range(first, first + count):
    if which == "d20":
        sim = simulate(20, 20, 5000, edge_prob=0.2, random_state=seed); X, d = sim.X, 20
    elif which == "d30":
        sim = simulate(30, 30, 5000, edge_prob=0.1, random_state=seed); X, d = sim.X, 30
    elif which == "d10":
        sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed); X, d = sim.X, 10
    elif which == "d10i":
        X, A, Y = zoo.data_of("independent", "paper", 10, 10, 2000, seed); d = 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.process_time()
        try:
            m = CREATOR(d, random_state=seed).fit(X)
        except ValueError as e:
            print(json.dumps({"set": which, "seed": seed, "failed": str(e)[:80]}), flush=True); continue
    r = m.diagnostics_["graph_revision"]
    print(json.dumps({"set": which, "seed": seed, "candidates": len(r["candidates"]), "n_scores": r["n_scores"], "stopped": r["stopped"], "cpu": round(time.process_time() - t, 1)}), flush=True)
