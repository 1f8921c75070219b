"""Speed benchmark: default CREATOR vs the paper's algorithm, and scaling in n.

Usage::

    python benchmarks/speed.py --seeds 20                 # ratio + accuracy, d=5, K=5
    python benchmarks/speed.py --seeds 0 --scaling 1e3 1e4 1e5 1e6

Part 1 fits the variants (the default; without the final joint polish;
without polish and per-step refinement; the paper's algorithm,
``CREATOR.paper``) on the *same* simulated data (d=5, K=5, n=1000, setting
1, ``random_state=seed``) in one run and reports mean seconds per fit, the
paper-vs-default ratio and mean SHD / LocR^2 / correct-order share; with
``--first N`` also over the first N seeds only, and with ``--per-seed FILE``
every fit as a CSV row. Part 2 times one default fit per sample size.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
import pandas as pd

from creator_plugin.benchmark.figures import mean_metrics
from creator_plugin.benchmark.grid import run_grid
from creator_plugin.benchmark.scaling import scaling_rows

#: name -> (method, keyword arguments)
VARIANTS = {
    "default": ("CREATOR", {}),
    "default without polish (polish=False)": ("CREATOR", {"polish": False}),
    "without polish and refinement (polish=False, n_refine=0)":
        ("CREATOR", {"polish": False, "n_refine": 0}),
    "paper's algorithm (CREATOR.paper, tau=1)": ("CREATOR (paper)", {}),
}


def _table(df: pd.DataFrame, title: str) -> None:
    print(f"## {title}\n")
    print("| variant | s/fit | mean SHD | mean LocR² | correct order | exact DAG |")
    print("|---|---|---|---|---|---|")
    m = mean_metrics(df, ["grid"]).set_index("grid")
    for name in VARIANTS:
        r = m.loc[name]
        print(f"| {name} | {r.seconds_per_fit:.3f} | {r.mean_shd:.2f} | {r.mean_locr2:.3f} | "
              f"{r.correct_order_share:.2f} | {r.exact_dag_share:.2f} |")
    paper = list(VARIANTS)[-1]
    ratio = m.loc[paper, "seconds_per_fit"] / m.loc["default", "seconds_per_fit"]
    print(f"\nspeed ratio paper / default: {ratio:.1f}x\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--K", type=int, default=5)
    parser.add_argument("--scaling", type=float, nargs="*", default=[1e3, 1e4, 1e5])
    parser.add_argument("--first", type=int, default=None,
                        help="also report the first N seeds on their own")
    parser.add_argument("--per-seed", default=None, help="write every fit to this CSV file")
    args = parser.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}\n")
    if args.seeds:
        base = {"seeding": "seed", "n_latent": args.d, "n_environments": args.K,
                "n_samples": 1000, "setting": 1}
        cells = [{"grid": name, **base, "methods": (method,), **kw}
                 for name, (method, kw) in VARIANTS.items()]
        methods = list(dict.fromkeys(m for m, _ in VARIANTS.values()))
        df = pd.DataFrame(run_grid(cells, args.seeds, methods))
        _table(df, f"d={args.d}, K={args.K}, n=1000, setting 1, {args.seeds} seeds "
                   "(same data for all)")
        if args.first and args.first < args.seeds:
            _table(df[df["seed"] < args.first], f"seeds 0-{args.first - 1}")
        if args.per_seed:
            cols = ["grid", "seed", "seconds", "shd", "locr2", "correct_order", "exact_dag"]
            df[cols].rename(columns={"grid": "variant"}).to_csv(args.per_seed, index=False)
    if args.scaling:
        print(f"## Scaling of one default fit, d={args.d}, K={args.K}, setting 1\n")
        print("| n per environment | fit seconds | peak traced memory (MB) | "
              "peak RSS of the fitting process (MB) |")
        print("|---|---|---|---|")
        for r in scaling_rows([int(s) for s in args.scaling], args.d, args.K):
            print(f"| {r['n']:,} | {r['seconds']:.2f} | {r['peak_traced_mb']:.0f} | "
                  f"{r['peak_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
