"""Choose CREATOR's defaults on the tuning seeds of a named set of zoo families.

Only seeds 0-99 (the tuning seeds of ``benchmarks/zoo.py``) are read; a seed
range reaching 100 or beyond is refused, so evaluation seeds (10000 on) are
never used to choose anything. Every configuration of a small grid of the
knobs that matter is fitted to every (family, seed); the chosen configuration
has the smallest mean SHD over the families (ties: more correct orders, then
the current defaults, ``{}``, then less time: a configuration that only ties
the defaults is not a reason to change them, and time differences of a few
percent are the shared machine's noise). Rows are cached in a JSON-lines
file, so a second call with an overlapping grid or a different family set
refits nothing already done.

Leave-one-family-out is one command: ``--leave-out heavy_tails`` chooses
without that family and prints the command that reports the choice on it
(evaluation seeds).

Usage::

    python benchmarks/tune_defaults.py --families paper,heavy_tails,wide_scales \
        --seeds 10 --grid '{"prune_threshold": ["auto", 0.15, 0.3]}'
    python benchmarks/tune_defaults.py --leave-out measured --seeds 10
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
import row_files
from zoo import BAR_FAMILIES, RESULTS, TUNING_SEEDS, current, fit_one, params_key

#: The knobs that matter most for accuracy (creator_plugin/estimator.py):
#: the pruning level, the refinement of the ordering step's candidates, the polish.
DEFAULT_GRID = {"prune_threshold": ["auto", 0.15, 0.25], "ordering__n_reestimate": [3, 0],
                "ordering__polish": [True]}


def _key(row: dict) -> tuple:
    """What makes a cached fit the same fit."""
    return (row["simulator"], row["family"], row["d"], row["K"], row["n"], row["seed"],
            row["params"])


def configurations(grid: dict | list) -> list[dict]:
    """Every combination of a ``{knob: [values]}`` grid, or a list of configurations as given."""
    if isinstance(grid, list):
        return [dict(c) for c in grid]
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(BAR_FAMILIES),
                        help="comma-separated zoo families to tune on (default: the bar families)")
    parser.add_argument("--leave-out", default=None, help="a family removed from --families")
    parser.add_argument("--simulator", choices=("package", "independent"), default="package")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--K", type=int, default=None)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--grid", default=None,
                        help="JSON {knob: [values]} (every combination) or a list of "
                        "configurations [{knob: value}, ...]; default DEFAULT_GRID")
    parser.add_argument("--cache", default=str(RESULTS / "tuning.jsonl"))
    args = parser.parse_args(argv)

    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if seeds.start < TUNING_SEEDS.start or seeds.stop > TUNING_SEEDS.stop:
        parser.error(f"--first-seed/--seeds must stay within the tuning seeds "
                     f"{TUNING_SEEDS.start}-{TUNING_SEEDS.stop - 1}.")
    families = [f for f in args.families.split(",") if f and f != args.leave_out]
    if not families:
        parser.error("no family left to tune on (--families minus --leave-out is empty).")
    grid = json.loads(args.grid) if args.grid else DEFAULT_GRID
    configs = configurations(grid)
    K = args.K or args.d

    cache = Path(args.cache)
    cache.parent.mkdir(parents=True, exist_ok=True)
    rows = row_files.read_jsonl(cache) if row_files.exists(cache) else []
    # rows of earlier defaults are refitted; a fit cached twice (two processes
    # over overlapping seeds) counts once, its last row
    rows = list({_key(r): r for r in rows if current(r)}.values())
    have = set(map(_key, rows))
    with row_files.open_text(cache, "a") as fh:
        for seed in seeds:
            for fam in families:
                for cfg in configs:
                    key = (args.simulator, fam, args.d, K, args.n, seed, params_key(cfg))
                    if key in have:
                        continue
                    row = fit_one(args.simulator, fam, args.d, K, args.n, seed, cfg)
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    rows.append(row)
                    have.add(key)

    print(f"families: {', '.join(families)}; tuning seeds {seeds.start}-{seeds.stop - 1}; "
          f"{args.simulator} simulator, d = {args.d}, K = {K}, n = {args.n}")
    print("| configuration | fits | mean SHD | correct order | worst family SHD | s/fit |")
    print("|---|---|---|---|---|---|")
    results = []
    for cfg in configs:
        key = params_key(cfg)
        sub = [r for r in rows if r["params"] == key and r["simulator"] == args.simulator
               and r["family"] in families and r["seed"] in seeds and r["d"] == args.d
               and r["K"] == K and r["n"] == args.n]
        ok = [r for r in sub if r["status"] == "ok"]
        # a failed fit counts as the worst SHD: every possible edge wrong
        shd = [r["shd"] if r["status"] == "ok" else args.d * (args.d - 1) / 2 for r in sub]
        per_family = [np.mean([r["shd"] for r in ok if r["family"] == f] or [np.nan])
                      for f in families]
        results.append((np.mean(shd), -np.mean([r["correct_order"] for r in ok]),
                        0 if not cfg else 1, np.mean([r["seconds"] for r in ok]), cfg))
        print(f"| {key} | {len(sub)} | {np.mean(shd):.3f} "
              f"| {np.mean([r['correct_order'] for r in ok]):.0%} | {np.nanmax(per_family):.2f} "
              f"| {np.mean([r['seconds'] for r in ok]):.2f} |")
    best = min(results, key=lambda t: t[:4])[4]
    print(f"\nchosen: {json.dumps(best, sort_keys=True)}")
    if args.leave_out:
        print("report it on the left-out family (evaluation seeds):\n"
              f"python benchmarks/zoo.py run --simulator {args.simulator} --families "
              f"{args.leave_out} --first-seed 10000 --seeds 50 --params "
              f"'{json.dumps(best, sort_keys=True)}' --out benchmarks/results/zoo/"
              f"leave_out_{args.leave_out}.jsonl")


if __name__ == "__main__":
    main()
