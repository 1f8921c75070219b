"""Record of the "measured, not adopted" disentanglement variant in BENCHMARKS.md (issue 17).

Refits with the defaults, then disentangles the same entangled features in
coordinates with unit innovation SD. Usage: ``dis_variant.py 10 2000 0 36 out.jsonl``.
"""
import json
import sys
import warnings

import numpy as np

from creator_plugin import simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.disentangle import disentangling_matrix
from creator_plugin.metrics import evaluate
from creator_plugin.sem import pooled_innovation_sd, regression_matrices

d, n, first, count = map(int, sys.argv[1:5])
out = open(sys.argv[5], "a")
for seed in range(first, first + count):
    sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fit_arrays(sim.X, FitConfig(d, quality=False, keep_features=True),
                       random_state=seed)
    ent = r.entangled
    B = regression_matrices(r.ordering.noises, ent)
    innov = pooled_innovation_sd(ent)
    rec = {"seed": seed}
    for name, C in (("default", disentangling_matrix(B, r.adjacency)),
                    ("innov", np.diag(1 / innov) @ disentangling_matrix(B * innov[None, None, :],
                                                                         r.adjacency))):
        lat = [y @ C for y in ent]
        ev = evaluate(sim.adjacency, sim.Y, r.adjacency, lat)
        rec[name] = [int(ev["shd"]), float(ev["locr2"])]
    ev0 = evaluate(sim.adjacency, sim.Y, r.adjacency, r.latents)
    rec["fit"] = [int(ev0["shd"]), float(ev0["locr2"])]
    out.write(json.dumps(rec) + "\n")
    out.flush()
    print(rec, flush=True)
