"""Cache the default fits' d x d ingredients of the disentanglement.

Per seed: the entangled features (unit pooled SD, as the fit uses them), the
pruned adjacency, the true latents, graph, weights and noise scales, and the
noise correspondence (step of the order <-> true node, by mean per-environment
|corr| of the ordering's noises with the simulator's). Variants of the
disentanglement are then evaluated on these without refitting
(``disentangle_precision.py``). Usage::

    python disentangle_precision_cache.py D N FIRST COUNT OUTDIR [FAMILY]

Without FAMILY: ``simulate(D, D, N, setting=1, edge_prob=0.5)``; with it:
``simulate_family(FAMILY, D, D, N)`` (the zoo's package simulator); with
``independent:FAMILY`` the independent simulator's family (it does not return
the noises, so ``noise_corr`` is all zeros and the noise correspondence is
unavailable).
"""
import os
import sys
import warnings

import numpy as np

from creator_plugin import RefineOptions, simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate
from creator_plugin.simulation import simulate_family

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import independent_simulator  # noqa: E402


def main() -> None:
    d, n, first, count = map(int, sys.argv[1:5])
    outdir = sys.argv[5]
    os.makedirs(outdir, exist_ok=True)
    family = sys.argv[6] if len(sys.argv) > 6 else None
    tag = f"_{family.replace(':', '-')}" if family else ""
    for seed in range(first, first + count):
        if family and family.startswith("independent:"):
            sim = independent_simulator.simulate(family.split(":")[1], d, d, n, seed=seed)
            sim.Y, sim.W, sim.Omega, sim.Z = sim.latents, [np.zeros((d, d))], [np.zeros(d)], None
        elif family:
            sim = simulate_family(family, d, d, n, random_state=seed)
        else:
            sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = FitConfig(d, quality=False, keep_features=True,
                               refine=RefineOptions(order_branches=0))
            r = fit_arrays(sim.X, config, random_state=seed)
        ev = evaluate(sim.adjacency, sim.Y, r.adjacency, r.latents)
        Cn = np.zeros((d, d)) if sim.Z is None else np.stack(
            [np.abs(np.corrcoef(zh.T, zt.T)[:d, d:])
             for zh, zt in zip(r.ordering.noises, sim.Z)]).mean(0)
        np.savez(f"{outdir}/d{d}{tag}_n{n}_s{seed}.npz",
                 ent=np.concatenate(r.entangled), sizes=[e.shape[0] for e in r.entangled],
                 adjacency=r.adjacency,
                 true_adjacency=np.asarray(sim.adjacency), Y=np.concatenate(sim.Y),
                 W=np.stack(sim.W), Omega=np.stack(sim.Omega), noise_corr=Cn,
                 fit_shd=int(ev["shd"]), fit_locr2=float(ev["locr2"]),
                 fit_matching=np.asarray(ev["matching"]),
                 tested=r.coefficients)
        print(seed, int(ev["shd"]), round(float(ev["locr2"]), 4), flush=True)


if __name__ == "__main__":
    main()
