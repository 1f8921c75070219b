"""Which stage of a fit grows fastest with d? cProfile of one default fit per d.

Workload: ``simulate(d, d, n, edge_prob=min(0.5, 4 / d))`` (K = d), fitted with
``CREATOR(d)``. For every d, prints the cumulative seconds of the fit's stages
(ICA candidates, consistency descent, joint refinement, polish, pruning,
disentanglement, verdict) and writes them as one JSON line per d.

    OMP_NUM_THREADS=1 python benchmarks/experiments/profile_d.py 5 10 15 --n 2000
    OMP_NUM_THREADS=1 python benchmarks/experiments/profile_d.py 20 30 40 --n 5000
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
import warnings

from creator_plugin import CREATOR, simulate

STAGES = {
    "ica_directions": "ica_directions",
    "consistency_descent": "consistency_descent",
    "joint_direction": "joint_direction",
    "polish_directions": "polish_directions",
    "canonical_directions": "canonical_directions",
    "topological_ordering (all)": "topological_ordering",
    "prune": "prune",
    "disentangling_matrix": "disentangling_matrix",
    "refine_disentangling": "refine_disentangling",
    "assess_fit (verdict)": "assess_fit",
    "homogeneity_test (verdict)": "homogeneity_test",
    "gaussianity_test (verdict)": "gaussianity_test",
    "n_latent_evidence (verdict)": "n_latent_evidence",
    "fit_arrays (all)": "fit_arrays",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("ds", type=int, nargs="+")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for d in args.ds:
        sim = simulate(d, d, args.n, edge_prob=min(0.5, 4 / d), random_state=args.seed)
        prof = cProfile.Profile()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prof.enable()
            CREATOR(d, random_state=args.seed).fit(sim.X)
            prof.disable()
        wall = time.perf_counter() - start
        st = pstats.Stats(prof)
        cum = {}
        for (_file, _line, func), (_cc, _nc, tt, ct, _callers) in st.stats.items():
            for label, name in STAGES.items():
                if func == name:
                    cum[label] = cum.get(label, 0.0) + ct
            if func == "_minimize_bfgs":
                # SciPy's BFGS itself (its dense inverse-Hessian update), without the contrasts
                cum["BFGS own time"] = cum.get("BFGS own time", 0.0) + tt
        row = {"d": d, "n": args.n, "K": d, "wall_seconds": wall,
               "cumulative_seconds": {k: round(v, 3) for k, v in cum.items()}}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
