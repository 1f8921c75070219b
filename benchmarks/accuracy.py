"""Accuracy benchmark of CREATOR on one cell of the paper's workload.

Usage (the issue-2 acceptance cell)::

    python benchmarks/accuracy.py --d 5 --K 5 --n 1000 --setting 1 --seeds 20

Prints mean SHD, mean LocR^2, share of exactly recovered DAGs, share of
correct orders and seconds per fit. Every fit sees data simulated with
``random_state=seed`` and is fitted with ``random_state=seed``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from creator_plugin import CREATOR, metrics, simulate


def run_cell(d: int, K: int, n: int, setting: int, seeds: int, **kwargs) -> dict:
    """Fit CREATOR on ``seeds`` simulated models and average the metrics."""
    rows = []
    for seed in range(seeds):
        sim = simulate(d, K, n, setting=setting, random_state=seed)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, random_state=seed, **kwargs).fit(sim.X)
        elapsed = time.perf_counter() - start
        ev = metrics.evaluate(
            sim.adjacency, sim.Y, model.adjacency_matrix_, model.latents_, model.causal_order_
        )
        rows.append((ev["shd"], ev["locr2"], ev["exact_dag"], ev["correct_order"], elapsed))
    r = np.array(rows, dtype=float)
    return {
        "d": d, "K": K, "n": n, "setting": setting, "seeds": seeds, **kwargs,
        "mean_shd": float(r[:, 0].mean()),
        "mean_locr2": float(r[:, 1].mean()),
        "exact_dag_share": float(r[:, 2].mean()),
        "correct_order_share": float(r[:, 3].mean()),
        "seconds_per_fit": float(r[:, 4].mean()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--K", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--setting", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--scorer", default="ica_consistency")
    parser.add_argument("--pruning", default="residual")
    parser.add_argument("--prune-threshold", type=float, default=None)
    parser.add_argument(
        "--n-refine", type=int, default=None,
        help="CREATOR(n_refine=...); default None (3, or 0 with --scorer hsic)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    res = run_cell(
        args.d, args.K, args.n, args.setting, args.seeds, scorer=args.scorer,
        pruning=args.pruning, prune_threshold=args.prune_threshold,
        n_refine=args.n_refine,
    )
    if args.json:
        print(json.dumps(res))
        return
    print(
        f"d={args.d} K={args.K} n={args.n} setting {args.setting}, {args.seeds} seeds, "
        f"scorer={args.scorer}, pruning={args.pruning}, n_refine={args.n_refine}"
    )
    print(f"mean SHD            : {res['mean_shd']:.2f}")
    print(f"mean LocR^2         : {res['mean_locr2']:.3f}")
    print(f"exact DAG share     : {res['exact_dag_share']:.2f}")
    print(f"correct order share : {res['correct_order_share']:.2f}")
    print(f"seconds per fit     : {res['seconds_per_fit']:.3f}")


if __name__ == "__main__":
    main()
