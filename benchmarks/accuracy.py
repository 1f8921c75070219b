"""Accuracy of CREATOR on one cell of the paper's workload.

Usage::

    python benchmarks/accuracy.py --d 5 --K 5 --n 1000 --setting 1 --seeds 50
    python benchmarks/accuracy.py --d 5 --K 5 --first-seed 1000 --seeds 50   # fresh seeds

Prints mean SHD, mean LocR^2, the shares of exactly recovered DAGs and of
correct orders, and seconds per fit. The data of seed s are
``simulate(d, K, n, setting=..., random_state=s)`` and the fit is
``CREATOR(d, random_state=s, ...)``.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from creator_plugin.benchmark.figures import mean_metrics
from creator_plugin.benchmark.grid import run_grid


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--K", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--setting", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--scorer", default=None)
    parser.add_argument("--pruning", default=None)
    parser.add_argument("--prune-threshold", type=float, default=None)
    parser.add_argument("--n-refine", type=int, default=None)
    parser.add_argument("--no-polish", action="store_true")
    parser.add_argument("--paper", action="store_true",
                        help="the paper's algorithm (CREATOR.paper); --prune-threshold is tau")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    options = {k: v for k, v in (("scorer", args.scorer), ("pruning", args.pruning),
                                 ("prune_threshold", args.prune_threshold),
                                 ("n_refine", args.n_refine)) if v is not None}
    if args.no_polish:
        options["polish"] = False
    method = "CREATOR"
    if args.paper:
        method, options = "CREATOR (paper)", {"tau": args.prune_threshold or 1.0}
    cell = {"grid": "accuracy", "seeding": "seed", "n_latent": args.d,
            "n_environments": args.K, "n_samples": args.n, "setting": args.setting, **options}
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = run_grid([cell], seeds, [method])
    res = mean_metrics(pd.DataFrame(rows), ["method"]).iloc[0].to_dict()
    if args.json:
        print(json.dumps({**cell, "seeds": list(seeds), **res}, default=str))
        return
    print(f"d={args.d} K={args.K} n={args.n} setting {args.setting}, seeds "
          f"{seeds.start}-{seeds.stop - 1}, {method}, options {options or 'defaults'}")
    print(f"fits (failed)       : {res['fits']} ({res['failed']})")
    print(f"mean SHD            : {res['mean_shd']:.2f}")
    print(f"mean LocR^2         : {res['mean_locr2']:.3f}")
    print(f"exact DAG share     : {res['exact_dag_share']:.2f}")
    print(f"correct order share : {res['correct_order_share']:.2f}")
    print(f"seconds per fit     : {res['seconds_per_fit']:.3f}")


if __name__ == "__main__":
    main()
