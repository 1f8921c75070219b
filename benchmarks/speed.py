"""Speed benchmark: default CREATOR vs the paper's exact-HSIC scorer, and scaling in n.

Usage::

    python benchmarks/speed.py --seeds 20                 # ratio + accuracy, d=5, K=5
    python benchmarks/speed.py --seeds 0 --scaling 1e3 1e4 1e5 1e6

Part 1 fits the variants (default; default without the final joint polish;
default without polish and without the per-step refinement; the paper's
exact HSIC) on the *same* simulated data (d=5, K=5, n=1000, setting 1,
``random_state=seed``) in one run, and reports mean seconds per fit, the
default-vs-exact ratio, and mean SHD / LocR^2 / correct-order share; with
``--first N`` also the same table over the first N seeds only, and with
``--per-seed FILE`` every fit as a CSV row.
Part 2 times one default fit per sample size (n rows per environment) and
records its peak traced memory (``tracemalloc``: numpy allocations included)
and the process's peak resident set size.
"""

from __future__ import annotations

import argparse
import csv
import platform
import resource
import time
import tracemalloc
import warnings

import numpy as np

from creator_plugin import CREATOR, metrics, simulate


def _fit(sim, d, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model = CREATOR(d, random_state=seed, **kw).fit(sim.X)
        return model, time.perf_counter() - start


VARIANTS = {
    "default": {},
    "default without polish (polish=False)": {"polish": False},
    "without polish and refinement (polish=False, n_refine=0)": {"polish": False, "n_refine": 0},
    "exact-HSIC (paper)": {"scorer": "hsic"},
}


def _table(acc: dict, seeds: int, d: int, K: int, n: int, setting: int) -> None:
    print(f"## d={d}, K={K}, n={n}, setting {setting}, {seeds} seeds (same data for all)\n")
    print("| variant | s/fit | mean SHD | mean LocR² | correct order | exact DAG |")
    print("|---|---|---|---|---|---|")
    means = {}
    for name, rows in acc.items():
        r = np.array(rows[:seeds], dtype=float).mean(axis=0)
        means[name] = r
        print(f"| {name} | {r[0]:.3f} | {r[1]:.2f} | {r[2]:.3f} | {r[3]:.2f} | {r[4]:.2f} |")
    ratio = means["exact-HSIC (paper)"][0] / means["default"][0]
    print(f"\nspeed ratio exact-HSIC / default: {ratio:.1f}x\n")


def compare(
    seeds: int, d: int = 5, K: int = 5, n: int = 1000, setting: int = 1,
    first: int | None = None, per_seed: str | None = None,
) -> None:
    acc = {v: [] for v in VARIANTS}
    for seed in range(seeds):
        sim = simulate(d, K, n, setting=setting, random_state=seed)
        for name, kw in VARIANTS.items():
            model, sec = _fit(sim, d, seed, **kw)
            ev = metrics.evaluate(
                sim.adjacency, sim.Y, model.adjacency_matrix_, model.latents_,
                model.causal_order_,
            )
            acc[name].append((sec, ev["shd"], ev["locr2"], ev["correct_order"], ev["exact_dag"]))
    _table(acc, seeds, d, K, n, setting)
    if first and first < seeds:
        _table(acc, first, d, K, n, setting)
    if per_seed:
        with open(per_seed, "w", newline="") as fh:
            writer = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
            writer.writerow(
                ["variant", "seed", "seconds", "shd", "locr2", "correct_order", "exact_dag"]
            )
            for name, rows in acc.items():
                writer.writerows([name, seed, *map(float, row)] for seed, row in enumerate(rows))


def scaling(sizes: list[int], d: int = 5, K: int = 5) -> None:
    print(f"## Scaling of one default fit, d={d}, K={K}, setting 1\n")
    print("| n per environment | fit seconds | peak traced memory (MB) | peak RSS so far (MB) |")
    print("|---|---|---|---|")
    for n in sizes:
        sim = simulate(d, K, n, random_state=0)
        tracemalloc.start()
        _, sec = _fit(sim, d, 0)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {n:,} | {sec:.2f} | {peak / 2**20:.0f} | {rss:.0f} |")
        del sim
    print()


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
        compare(args.seeds, args.d, args.K, first=args.first, per_seed=args.per_seed)
    if args.scaling:
        scaling([int(s) for s in args.scaling], args.d, args.K)


if __name__ == "__main__":
    main()
