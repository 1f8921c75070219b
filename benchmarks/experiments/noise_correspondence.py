"""Record of the d = 10 diagnosis in BENCHMARKS.md ("What breaks at d = 10").

Per seed: SHD under the metric's LocR² matching and under the noise
correspondence (step i of the order <-> the true node whose exogenous noise
that step extracted, by mean per-environment |corr| with the simulator's
noises), edges against the order, missing and extra edges in that
correspondence. It reads the ordering's noises, which the estimator does not
expose, so it calls ``creator_plugin._fit.fit_arrays`` (the numerics of
``CREATOR.fit``, same defaults; the quality verdict is skipped, which does
not change the fit). Usage::

    python benchmarks/experiments/noise_correspondence.py 10 2000 0 50 tuning.jsonl
    python benchmarks/experiments/noise_correspondence.py 10 2000 1000 20 fresh.jsonl
"""

import json
import sys
import warnings

import numpy as np

from creator_plugin import simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate, shd


def main() -> None:
    d, n, first, count = map(int, sys.argv[1:5])
    with open(sys.argv[5], "a") as fh:
        for seed in range(first, first + count):
            sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fit_arrays(sim.X, FitConfig(d, quality=False, keep_features=True),
                               random_state=seed)
            ev = evaluate(sim.adjacency, sim.Y, r.adjacency, r.latents)
            A = (np.asarray(sim.adjacency) != 0).astype(int)
            C = np.stack([np.abs(np.corrcoef(zh.T, zt.T)[:d, d:])
                          for zh, zt in zip(r.ordering.noises, sim.Z)]).mean(0)
            mn = C.argmax(1)
            bijective = len(set(mn.tolist())) == d
            rec = {"seed": seed, "shd_locr2": int(ev["shd"]), "locr2": float(ev["locr2"]),
                   "noise_corr_min": float(C.max(1).min()), "bijective": bijective}
            if bijective:
                Ap = A[np.ix_(mn, mn)]
                Bm = np.zeros_like(A)
                Bm[np.ix_(mn, mn)] = r.adjacency
                rec.update(
                    shd_noise=int(shd(A, Bm)), against_order=int(np.tril(Ap, -1).sum()),
                    missing=int(((np.triu(Ap, 1) == 1) & (r.adjacency == 0)).sum()),
                    extra=int(((Ap == 0) & (r.adjacency == 1)).sum()),
                    same_matching=bool((np.asarray(ev["matching"]) == mn).all()),
                )
            fh.write(json.dumps(rec) + "\n")
            fh.flush()


if __name__ == "__main__":
    main()
