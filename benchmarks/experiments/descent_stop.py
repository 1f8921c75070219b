"""The consistency descent's stopping rule: tuning sweep and fresh-seed evaluation.

The ordering step's consistency descent (:func:`creator_plugin.ordering.consistency_descent`)
runs at most ``ordering.DESCENT_MAX_ITER`` iterations and stops a start that
moves less than ``ordering.DESCENT_TOL``. This script fits the same data under
several ``(max_iter, tol)`` variants (set on those two module constants, which
:func:`~creator_plugin.ordering.topological_ordering` reads at call time) and
writes one JSON line per fit: SHD, correct order, LocR² (after
:func:`creator_plugin.metrics.evaluate`'s matching), CPU seconds and the verdict's
issues.

Workloads: ``zoo:SIMULATOR:FAMILY`` (d = 5, K = 5, n = 1000, a zoo family from
``benchmarks/zoo.py``'s simulators), ``d10`` (``simulate(10, 10, 2000)``),
``d20`` (``simulate(20, 20, 5000, edge_prob=0.2)``), ``d30``
(``simulate(30, 30, 5000, edge_prob=0.1)``).

``tune`` reads only tuning seeds (0-99) and refuses others; ``evaluate``
reads only seeds from 10000 on. The rule frozen from the tuning rows and the
evaluation seeds are recorded in ``benchmarks/LOG.md`` ("The consistency
descent's stopping rule").

Usage::

    python benchmarks/experiments/descent_stop.py tune --workloads d10 --seeds 0-19 \\
        --variants '[[100, 1e-8], [10, 1e-4]]' \\
        --out benchmarks/results/descent_stop/tuning_d10.jsonl
    python benchmarks/experiments/descent_stop.py evaluate --workloads d10 --seeds 50000-50079 \\
        --out benchmarks/results/descent_stop/fresh_d10.jsonl
    python benchmarks/experiments/descent_stop.py summary \\
        benchmarks/results/descent_stop/fresh_d10.jsonl
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
from creator_plugin.simulation import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo import BAR_FAMILIES, data_of  # noqa: E402

#: The rule before (100, 1e-8) and the frozen one.
OLD, FROZEN = (100, 1e-8), (10, 1e-4)


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _data(workload: str, seed: int):
    """``(X, adjacency, latents, d)``."""
    if workload.startswith("zoo:"):
        _, simulator, family = workload.split(":")
        X, A, Y = data_of(simulator, family, 5, 5, 1000, seed)
        return X, A, Y, 5
    d, K, n, p_edge = {"d10": (10, 10, 2000, 0.5), "d20": (20, 20, 5000, 0.2),
                       "d30": (30, 30, 5000, 0.1)}[workload]
    sim = simulate(d, K, n, edge_prob=p_edge, random_state=seed)
    return sim.X, sim.adjacency, sim.Y, d


def sweep(workloads: list[str], seeds: list[int], variants: list[tuple], out: Path, *,
          fields: tuple[str, ...], apply) -> None:
    """Fit every (seed, workload) under every variant; one JSON line per fit.

    A variant is a tuple of values, stored in a row under ``fields``;
    ``apply(variant)`` sets the module constants it stands for. Rows already in
    ``out`` are skipped.
    """
    done = set()
    if out.exists():
        done = {(r["workload"], r["seed"], *(r[f] for f in fields))
                for r in map(json.loads, out.read_text().splitlines())}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        for seed in seeds:
            for workload in workloads:
                X, A, Y, d = _data(workload, seed)
                for variant in variants:
                    if (workload, seed, *variant) in done:
                        continue
                    apply(variant)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.process_time()
                        model = CREATOR(d, random_state=seed).fit(X)
                        cpu = time.process_time() - start
                    m = evaluate(A, Y, model.adjacency_matrix_, model.latents_)
                    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
                    fh.write(json.dumps({
                        "workload": workload, "seed": seed, **dict(zip(fields, variant)),
                        "cpu": cpu, "shd": int(m["shd"]), "correct_order": m["correct_order"],
                        "locr2": m["locr2"], "flagged": bool(issues),
                    }) + "\n")
                    fh.flush()


def sweep_summary(path: Path, *, fields: tuple[str, ...], old: tuple, order, label: str) -> str:
    """Per workload group and variant: mean SHD, correct order, changed fits, CPU ratio.

    ``order`` sorts the variants; a one-field variant is shown as its value.
    """
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    groups = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        w = r["workload"]
        group = w.rsplit(":", 1)[0] if w.startswith("zoo:") else w
        groups[group][tuple(r[f] for f in fields)][(r["workload"], r["seed"])] = r
    lines = ["| workload | variant | fits | mean SHD | correct order | flagged | fits whose SHD "
             f"changed | CPU, {label} / variant |", "|---|---|---|---|---|---|---|---|"]
    for group, by_variant in groups.items():
        reference = by_variant.get(old, {})
        common = set.intersection(*(set(v) for v in by_variant.values()))
        for variant in sorted(by_variant, key=order):
            fits = [by_variant[variant][k] for k in sorted(common)]
            ref = [reference[k] for k in sorted(common)] if reference else fits
            changed = sum(a["shd"] != b["shd"] for a, b in zip(fits, ref))
            ratio = sum(b["cpu"] for b in ref) / sum(a["cpu"] for a in fits)
            # (rows of the first tuning runs carry no verdict)
            flagged = "-" if any(f["flagged"] is None for f in fits) else sum(
                f["flagged"] for f in fits)
            shown = variant[0] if len(variant) == 1 else variant
            lines.append(
                f"| {group} | {shown} | {len(fits)} | {np.mean([f['shd'] for f in fits]):.3f} | "
                f"{np.mean([f['correct_order'] for f in fits]):.2f} | "
                f"{flagged} | {changed} | {ratio:.2f} |")
    return "\n".join(lines)


def sweep_cli(argv: list[str] | None, *, description: str, default_variants: list,
              variants_help: str, parse, run, summary) -> None:
    """``tune`` (tuning seeds 0-99 only), ``evaluate`` (seeds 10000 on) and ``summary``."""
    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("tune", "evaluate"):
        p = sub.add_parser(name)
        p.add_argument("--workloads", default=",".join(f"zoo:package:{f}" for f in BAR_FAMILIES))
        p.add_argument("--seeds", required=True, help="'0-19'")
        p.add_argument("--variants", default=json.dumps(default_variants), help=variants_help)
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
    run(args.workloads.split(","), seeds, [parse(v) for v in json.loads(args.variants)],
        Path(args.out))


FIELDS = ("max_iter", "tol")


def _apply(variant: tuple) -> None:
    ordering.DESCENT_MAX_ITER, ordering.DESCENT_TOL = variant


def run(workloads: list[str], seeds: list[int], variants: list[tuple], out: Path) -> None:
    sweep(workloads, seeds, variants, out, fields=FIELDS, apply=_apply)


def summary(path: Path) -> str:
    """Per workload group and variant: mean SHD, correct order, changed fits, CPU ratio."""
    return sweep_summary(path, fields=FIELDS, old=OLD, order=lambda v: (-v[0], v[1]),
                         label="old rule")


def main(argv: list[str] | None = None) -> None:
    sweep_cli(argv, description=__doc__.splitlines()[0], default_variants=[OLD, FROZEN],
              variants_help="JSON list of [max_iter, tol]", parse=tuple, run=run,
              summary=summary)


if __name__ == "__main__":
    main()
