"""Calibration of the fit-quality verdict (issue 13, acceptance 2-4).

Usage (tuning block, then a fresh block)::

    python benchmarks/quality.py --workload gaussian --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload default --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload homogeneous --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload hard --first-seed 0 --seeds 600 --levels
    python benchmarks/quality.py --workload hard_setting2 --first-seed 0 --seeds 200 --levels
    python benchmarks/quality.py --workload hard --first-seed 0 --seeds 600 --resamples 8
    # ... and the same with --first-seed 1000
    python benchmarks/quality.py --overhead --first-seed 1000  # fit time, verdict on vs off

Prints a Markdown summary (with ``--levels`` for ``hard``, the trade-off
of the order check's levels) and optionally writes every fit to CSV.
Re-run after the ordering step changes: the order check's levels depend on
how often it fails.
"""

from __future__ import annotations

import argparse

import pandas as pd

from creator_plugin.benchmark.verdict import (
    WORKLOADS,
    instability_table,
    level_table,
    overhead_table,
    run_verdict_benchmark,
    summarize_hard,
    summarize_rates,
)

_KIND = {"gaussian": "not_identifiable", "default": "not_identifiable",
         "homogeneous": "no_heterogeneity"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--workload", choices=WORKLOADS)
    what.add_argument("--overhead", action="store_true",
                      help="time CREATOR's fit with and without the verdict (p = 5 and 50)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--n", type=int, default=1000, help="rows per environment")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--levels", action="store_true",
                        help="(hard) print detections and false alarms for other levels")
    parser.add_argument("--resamples", type=int, default=0,
                        help="run the resampling check (CREATOR(quality_resamples=...)); with "
                             "--levels, also print its trade-off for fewer resamples")
    parser.add_argument("--timing-models", type=int, default=5,
                        help="(overhead) models per width, from --first-seed")
    parser.add_argument("--csv", help="write one row per fit here")
    args = parser.parse_args(argv)
    if args.overhead:
        print(overhead_table(seeds=range(args.first_seed, args.first_seed + args.timing_models)))
        return
    rows = run_verdict_benchmark(
        args.workload, range(args.first_seed, args.first_seed + args.seeds), n=args.n,
        n_jobs=args.n_jobs, resamples=args.resamples,
    )
    if args.workload.startswith("hard"):
        print(summarize_hard(rows))
        if args.levels:
            print()
            print(level_table(rows, (3, 4, 4.5, 5, 6), (10**4.5, 10**5, 10**6, float("inf"))))
            if args.resamples:
                print()
                print(instability_table(rows, (0.4, 0.5, 0.6)))
    else:
        print(summarize_rates(rows, _KIND[args.workload]))
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
