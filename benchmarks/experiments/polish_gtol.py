"""The polish's gradient tolerance: tuning sweep and fresh-seed evaluation.

The ordering step's final polish (:func:`creator_plugin.ordering.polish_directions`)
stops its BFGS ascent once the largest gradient entry of its contrast (scaled
to 1 at the start) is below ``ordering.POLISH_GTOL``. This script fits the same
data under several tolerances (set on that module constant, which the polish
reads at call time) and writes one JSON line per fit: SHD, correct order,
LocR² (after :func:`creator_plugin.metrics.evaluate`'s matching), CPU seconds
and whether the verdict raised an issue.

Workloads: ``zoo:SIMULATOR:FAMILY`` (d = 5, K = 5, n = 1000, a zoo family from
``benchmarks/zoo.py``'s simulators), ``d10`` (``simulate(10, 10, 2000)``),
``d20`` (``simulate(20, 20, 5000, edge_prob=0.2)``), ``d30``
(``simulate(30, 30, 5000, edge_prob=0.1)``).

``tune`` reads only tuning seeds (0-99) and refuses others; ``evaluate``
reads only seeds from 10000 on. The rule frozen from the tuning rows and the
evaluation seeds are recorded in ``benchmarks/LOG.md`` ("The polish's
gradient tolerance").

Usage::

    python benchmarks/experiments/polish_gtol.py tune --workloads d10 --seeds 0-19 \\
        --variants '[1e-6, 3e-6, 1e-5]' --out benchmarks/results/polish_gtol/tuning_d10.jsonl
    python benchmarks/experiments/polish_gtol.py summary \\
        benchmarks/results/polish_gtol/tuning_d10.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

import creator_plugin.ordering as ordering
from creator_plugin import CREATOR
from creator_plugin.metrics import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from descent_stop import _data, _seeds  # noqa: E402  (the same workloads and seed ranges)
from zoo import BAR_FAMILIES  # noqa: E402

#: The tolerance before.
OLD = 1e-6


def run(workloads: list[str], seeds: list[int], variants: list[float], out: Path) -> None:
    done = set()
    if out.exists():
        done = {(r["workload"], r["seed"], r["gtol"])
                for r in map(json.loads, out.read_text().splitlines())}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        for seed in seeds:
            for workload in workloads:
                X, A, Y, d = _data(workload, seed)
                for gtol in variants:
                    if (workload, seed, gtol) in done:
                        continue
                    ordering.POLISH_GTOL = gtol
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.process_time()
                        model = CREATOR(d, random_state=seed).fit(X)
                        cpu = time.process_time() - start
                    m = evaluate(A, Y, model.adjacency_matrix_, model.latents_)
                    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
                    fh.write(json.dumps({
                        "workload": workload, "seed": seed, "gtol": gtol,
                        "cpu": cpu, "shd": int(m["shd"]), "correct_order": m["correct_order"],
                        "locr2": m["locr2"], "flagged": bool(issues),
                    }) + "\n")
                    fh.flush()


def summary(path: Path) -> str:
    """Per workload group and variant: mean SHD, correct order, changed fits, CPU ratio."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    groups = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        w = r["workload"]
        group = w.rsplit(":", 1)[0] if w.startswith("zoo:") else w
        groups[group][r["gtol"]][(r["workload"], r["seed"])] = r
    lines = ["| workload | variant | fits | mean SHD | correct order | flagged | fits whose SHD "
             "changed | CPU, old tolerance / variant |", "|---|---|---|---|---|---|---|---|"]
    for group, by_variant in groups.items():
        old = by_variant.get(OLD, {})
        common = set.intersection(*(set(v) for v in by_variant.values()))
        for variant in sorted(by_variant):
            fits = [by_variant[variant][k] for k in sorted(common)]
            ref = [old[k] for k in sorted(common)] if old else fits
            changed = sum(a["shd"] != b["shd"] for a, b in zip(fits, ref))
            ratio = sum(b["cpu"] for b in ref) / sum(a["cpu"] for a in fits)
            flagged = sum(f["flagged"] for f in fits)
            lines.append(
                f"| {group} | {variant} | {len(fits)} | {np.mean([f['shd'] for f in fits]):.3f} | "
                f"{np.mean([f['correct_order'] for f in fits]):.2f} | "
                f"{flagged} | {changed} | {ratio:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("tune", "evaluate"):
        p = sub.add_parser(name)
        p.add_argument("--workloads", default=",".join(f"zoo:package:{f}" for f in BAR_FAMILIES))
        p.add_argument("--seeds", required=True, help="'0-19'")
        p.add_argument("--variants", default=json.dumps([OLD]), help="JSON list of tolerances")
        p.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("rows")
    args = parser.parse_args(argv)
    if args.command == "summary":
        print(summary(Path(args.rows)))
        return
    seeds = _seeds(args.seeds)
    if args.command == "tune" and max(seeds) >= 100:
        parser.error("tune reads tuning seeds only (0-99)")
    if args.command == "evaluate" and min(seeds) < 10000:
        parser.error("evaluate reads evaluation seeds only (10000 on)")
    variants = [float(v) for v in json.loads(args.variants)]
    run(args.workloads.split(","), seeds, variants, Path(args.out))


if __name__ == "__main__":
    main()
