"""Does select_n_latent find the simulator's d? (issue 13, acceptance 1)

Usage (tuning seeds, then fresh seeds)::

    python benchmarks/select_n_latent.py --first-seed 0 --seeds 20
    python benchmarks/select_n_latent.py --first-seed 1000 --seeds 20

Grid: d in {2, 3, 5, 7}, K in {d, 2d}, p in {d, 3d, 50}, measurement noise
in {0, 0.05, 0.1}, n = 1000 rows per environment; prints a Markdown summary
(overall, per criterion, per cell) and optionally writes every model to CSV.
"""

from __future__ import annotations

import argparse

import pandas as pd

from creator_plugin.benchmark.dimension import dimension_cells, run_dimension_benchmark, summarize


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n", type=int, default=1000, help="rows per environment")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", help="write one row per model here")
    parser.add_argument("--features", nargs="+", default=["d", "3d", "50"],
                        help='column counts: "d", "3d" or numbers (wide data: 100 384 1000)')
    parser.add_argument("--ds", nargs="+", type=int, default=[2, 3, 5, 7])
    parser.add_argument("--env-factors", nargs="+", type=int, default=[1, 2],
                        help="K = factor * d")
    args = parser.parse_args(argv)
    cells = dimension_cells(args.ds, args.env_factors, args.features)
    rows = run_dimension_benchmark(
        range(args.first_seed, args.first_seed + args.seeds), cells=cells, n=args.n,
        alpha=args.alpha, n_jobs=args.n_jobs,
    )
    print(summarize(rows))
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
