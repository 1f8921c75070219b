"""Would a bootstrap-calibrated pruning level help? Measure the statistic's SE.

Usage::

    python benchmarks/pruning_se.py --d 5 --first-seed 0 --seeds 100 --B 30

Prints each wrong pruning decision of the correctly ordered default fits,
and each right one within 0.08 of the level, as
``seed parent->child WRONG|ok true|absent stat se z`` with
``z = (stat - level) / se``, then a summary (see
:mod:`creator_plugin.benchmark.pruning_se`).
"""

from __future__ import annotations

import argparse

import numpy as np

from creator_plugin.benchmark.pruning_se import pruning_se_rows

LEVEL = 0.2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--B", type=int, default=30)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = pruning_se_rows(args.d, seeds, args.B, LEVEL)
    wrong = [r for r in rows if r["edge"] != r["true_edge"]]
    for r in rows:
        if r in wrong or abs(r["statistic"] - LEVEL) < 0.08:
            print(r["seed"], f"{r['parent']}->{r['child']}", "WRONG" if r in wrong else "ok",
                  "true" if r["true_edge"] else "absent",
                  f"stat {r['statistic']:.3f} se {r['se']:.3f} z {r['z']:+.1f}")
    z = np.abs([r["z"] for r in wrong])
    ses = [r["se"] for r in rows]
    print(f"\nwrong decisions: {len(wrong)} ({sum(r['true_edge'] for r in wrong)} missing, "
          f"{sum(not r['true_edge'] for r in wrong)} extra); SE range {min(ses):.3f}-"
          f"{max(ses):.3f}; |z| of wrong decisions: median {np.median(z):.1f}, share below 3: "
          f"{np.mean(z < 3):.2f}")


if __name__ == "__main__":
    main()
