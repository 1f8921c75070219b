"""Accuracy of CREATOR against the rows per environment, for several d (K = d).

Usage (the curves of BENCHMARKS.md)::

    python benchmarks/accuracy_vs_n.py --ds 5 7 10 --ns 500 1000 2000 5000 --seeds 20 \
        --first-seed 1000 --csv benchmarks/results/accuracy_vs_n.csv \
        --figure benchmarks/results/accuracy_vs_n.png

Every fit is a row of ``creator_plugin.benchmark.grid.run_grid`` (grid
``"n_curve"``); the data of seed s are ``simulate(d, d, n, setting=...,
edge_prob=..., random_state=s)`` and the fit is ``CREATOR(d,
random_state=s)``. ``--edge-prob D=P`` gives d = D its own edge probability
(e.g. a sparser graph for d = 15). ``--append`` adds rows to an existing CSV
(cells run separately) and redraws the table and figure from all of them.
Failed fits are rows of the CSV (``status``, ``error``), counted in the
table's last column, marked in the table and figure, and listed on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from creator_plugin.benchmark.curves import (
    n_curve_failures,
    n_curve_figure,
    n_curve_grid,
    n_curve_markdown,
)
from creator_plugin.benchmark.grid import run_grid


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ds", type=int, nargs="+", default=[5, 7, 10])
    parser.add_argument("--ns", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--setting", type=int, default=1)
    parser.add_argument("--edge-prob", nargs="*", default=[],
                        help="per-d edge probabilities as D=P (others: 0.5)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", default="benchmarks/results/accuracy_vs_n.csv")
    parser.add_argument("--figure", default="benchmarks/results/accuracy_vs_n.png")
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args(argv)
    probs = {int(k): float(v) for k, v in (item.split("=") for item in args.edge_prob)}
    cells = n_curve_grid(args.ds, args.ns, setting=args.setting, edge_prob=probs)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    df = pd.DataFrame(run_grid(cells, seeds, ["CREATOR"], n_jobs=args.n_jobs, progress=True))
    csv = Path(args.csv)
    if args.append and csv.exists():
        df = pd.concat([pd.read_csv(csv), df], ignore_index=True)
    csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv, index=False)
    print(n_curve_markdown(df))
    failures = n_curve_failures(df)
    print(failures or "failed fits: none")
    print(f"figure: {n_curve_figure(df, args.figure)}")


if __name__ == "__main__":
    main()
