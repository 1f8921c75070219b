"""Pruning levels that depend on d as well as K, on tuning seeds.

The automatic level is ``0.2 * sqrt(K / 5)``. A rule ``c * (K / 5)^b *
(d / 5)^a`` (written ``c:a``, with b = 1/2, or ``c:a:b``) is fitted
(``CREATOR(d, prune_threshold=level)``) to the main grid's cells
(``simulate(d, K, 1000, setting)``, d in 3, 5, 7, K in d, 2d, settings 1
and 2) and to the zoo's six bar families at d = 5 and d = 7 (package
simulator, n = 1000, K = d); one JSON line per fit. ``summary``
prints the mean SHD per rule and workload. ``run`` reads tuning seeds only
(0-99); ``evaluate`` compares frozen rules on seeds 1000 and up (the zoo's
six families at d = 5 on both simulators, ``simulate`` at d = 5 and 7 with
K = d, and d = 10 with n = 2000 on both simulators).

Usage::

    python benchmarks/experiments/prune_level_d.py run --rules 0.2:0,0.15:1 \\
        --first-seed 0 --seeds 15 --out benchmarks/results/prune_level/tuning_a.jsonl
    python benchmarks/experiments/prune_level_d.py summary \\
        benchmarks/results/prune_level/tuning_*.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score
from creator_plugin.simulation import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo import BAR_FAMILIES, data_of  # noqa: E402


def level(c: float, a: float, d: int, K: int, b: float = 0.5) -> float:
    return c * (K / 5.0) ** b * (d / 5.0) ** a


def _rule(text: str) -> tuple[str, tuple[float, ...]]:
    """``"c:a"`` or ``"c:a:b"``: the row's key (as written) and the numbers."""
    return text, tuple(float(x) for x in text.split(":"))


def workloads():
    for d in (3, 5, 7):
        for K in (d, 2 * d):
            for setting in (1, 2):
                yield f"grid d={d} K={K} s={setting}", d, K, ("grid", setting)
    for d in (5, 7):
        for family in BAR_FAMILIES:
            yield f"zoo d={d} {family}", d, d, ("zoo", family)


def evaluation_workloads():
    """The evaluation's cells: the zoo at d = 5 (both simulators), the accuracy
    tables' cells (d = 5 and 7, K = d, setting 1) and d = 10 (K = 10, n = 2000)."""
    for simulator in ("package", "independent"):
        for family in BAR_FAMILIES:
            yield f"zoo d=5 {simulator} {family}", 5, 5, 1000, ("zoo", simulator, family)
    for d in (5, 7):
        yield f"grid d={d} K={d} s=1", d, d, 1000, ("grid", None, 1)
    yield "grid d=10 K=10 s=1 n=2000", 10, 10, 2000, ("grid", None, 1)
    yield "independent d=10 paper n=2000", 10, 10, 2000, ("zoo", "independent", "paper")


def run(args: argparse.Namespace) -> None:
    evaluation = args.command == "evaluate"
    if not evaluation and args.first_seed + args.seeds > 100:
        raise SystemExit("tuning seeds only: first seed + seeds must be <= 100")
    if evaluation and args.first_seed < 1000:
        raise SystemExit("evaluation seeds only: the first seed must be >= 1000")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {(r["rule"], r["workload"], r["seed"])
                for r in map(json.loads, out.read_text().splitlines())}
    rules = [_rule(r) for r in args.rules.split(",")]
    with out.open("a") as fh, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cells = (evaluation_workloads() if evaluation else
                 ((name, d, K, 1000, (kind, "package", which))
                  for name, d, K, (kind, which) in workloads()))
        for name, d, K, n, (kind, simulator, which) in cells:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                todo = [r for r in rules if (r[0], name, seed) not in done]
                if not todo:
                    continue
                if kind == "grid":
                    sim = simulate(d, K, n, setting=which, random_state=seed)
                    X, A, Y = sim.X, sim.adjacency, sim.Y
                else:
                    X, A, Y = data_of(simulator, which, d, K, n, seed)
                for key, numbers in todo:
                    model = CREATOR(d, prune_threshold=level(*numbers[:2], d, K, *numbers[2:]),
                                    random_state=seed).fit(X)
                    s = score(A, Y, model.adjacency_matrix_, model.latents_,
                              model.causal_order_)
                    fh.write(json.dumps({"rule": key, "workload": name, "d": d, "K": K,
                                         "seed": seed, "shd": int(s["shd"])}) + "\n")
                    fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    rules = sorted({r["rule"] for r in rows})
    names = list(dict.fromkeys(r["workload"] for r in rows))
    print("| workload | " + " | ".join(f"c:a = {r}" for r in rules) + " |")
    print("|---|" + "---|" * len(rules))
    table = {(r["rule"], r["workload"]): [] for r in rows}
    for r in rows:
        table[(r["rule"], r["workload"])].append(r["shd"])
    for name in names:
        cells = [np.mean(table.get((rule, name), [np.nan])) for rule in rules]
        print(f"| {name} | " + " | ".join(f"{x:.2f}" for x in cells) + " |")
    for group in ("grid", "zoo d=5", "zoo d=7", "independent"):
        cells = [np.mean([x for (rule, n), v in table.items() if rule == r and n.startswith(group)
                          for x in v]) for r in rules]
        print(f"| **{group}, mean** | " + " | ".join(f"{x:.3f}" for x in cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--rules", required=True, help="comma-separated c:a or c:a:b")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--seeds", type=int, default=30)
    r.add_argument("--out", required=True)
    e = sub.add_parser("evaluate", help="a frozen rule against the default on seeds >= 1000")
    e.add_argument("--rules", required=True, help="comma-separated c:a pairs")
    e.add_argument("--first-seed", type=int, required=True)
    e.add_argument("--seeds", type=int, default=50)
    e.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.command in ("run", "evaluate"):
        run(args)
    else:
        summary(args.paths)


if __name__ == "__main__":
    main()
