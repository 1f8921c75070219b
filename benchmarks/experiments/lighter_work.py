"""Less work per fit: which cuts keep the accuracy and the verdict, and what they save.

Candidate cuts of the default fit's work (none is the default):

* ``tol3``: FastICA's tolerance 1e-3 instead of 1e-5 (``ica_options``); with
  the refinement on, its directions are only starts;
* ``skip2``: no joint re-estimation at the step with two sources left (the
  best-scored start is kept as it is; the polish re-estimates every
  direction afterwards);
* ``skip3``: likewise while three or two sources are left;
* ``ref19``: 19 simulated Gaussian data sets instead of 49 in the verdict's
  Gaussianity check;
* ``refK``: as many as :func:`creator_plugin.quality.reference_size` gives for
  the number K of environments (19 from K = 5 on, 29 at K = 4, 49 below).

Every data set is fitted by every configuration in turn (the order rotates
from data set to data set), in one process with one BLAS thread, so the
seconds compare within a run. One JSON line per fit: SHD, correct order,
LocR², issues raised, process seconds. ``summary`` prints per workload the
mean SHD, correct-order share, flagged shares of right (SHD <= 1) and wrong
(SHD >= 2) fits, and the median time relative to the default.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/experiments/lighter_work.py run \\
        --configs default,tol3,tol3+skip2,tol3+ref19,tol3+skip2+ref19 \\
        --first-seed 0 --seeds 15 --out benchmarks/results/lighter_work/tuning_a.jsonl
    python benchmarks/experiments/lighter_work.py summary \
        benchmarks/results/lighter_work/tuning_*.jsonl
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
import creator_plugin.quality as quality
from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score
from creator_plugin.quality import reference_size
from creator_plugin.simulation import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo import BAR_FAMILIES, FLAG_FAMILIES, data_of  # noqa: E402

_JOINT = ordering.joint_direction
_GAUSSIANITY = quality.gaussianity_test


def _joint_skipping(up_to: int):
    """joint_direction that returns its start unchanged while at most ``up_to`` sources remain."""
    def joint(R_list, w0, found, **kwargs):
        if R_list[0].shape[1] - found.shape[1] <= up_to:
            return w0 / np.linalg.norm(w0), 1.0
        return _JOINT(R_list, w0, found, **kwargs)
    return joint


def _gaussianity_19(data, **kwargs):
    return _GAUSSIANITY(data, **{**kwargs, "n_simulations": 19})


def _gaussianity_by_K(data, **kwargs):
    return _GAUSSIANITY(data, **{**kwargs, "n_simulations": reference_size(len(data))})


def configure(name: str) -> dict:
    """Install the cuts of ``name`` (``+``-separated); returns CREATOR's extra parameters."""
    cuts = set(name.split("+")) - {"default"}
    unknown = cuts - {"tol3", "skip2", "skip3", "ref19", "refK"}
    if unknown:
        raise SystemExit(f"unknown cuts {sorted(unknown)}")
    ordering.joint_direction = (_joint_skipping(3) if "skip3" in cuts else
                                _joint_skipping(2) if "skip2" in cuts else _JOINT)
    quality.gaussianity_test = (_gaussianity_19 if "ref19" in cuts else
                                _gaussianity_by_K if "refK" in cuts else _GAUSSIANITY)
    return {"ica_options": {"tol": 1e-3}} if "tol3" in cuts else {}


def workloads():
    """(label, simulator, family, d, n): the zoo at d = 5 on both simulators (bar
    and flag families), ``simulate`` at d = 5 and 7, and d = 10 at n = 2000."""
    for simulator in ("package", "independent"):
        for family in (*BAR_FAMILIES, *FLAG_FAMILIES):
            yield f"zoo {simulator} {family}", simulator, family, 5, 1000
    yield "simulate d=5", "simulate", None, 5, 1000
    yield "simulate d=7", "simulate", None, 7, 1000
    yield "simulate d=10 n=2000", "simulate", None, 10, 2000


def small_workloads():
    """``simulate`` at d = 2 and 3 (K = 2d): where few sources are left from the start."""
    yield "simulate d=2 K=4", "simulate", None, 2, 1000
    yield "simulate d=3 K=3", "simulate", None, 3, 1000
    yield "simulate d=3 K=6", "simulate", None, 3, 1000


def _data(label, simulator, family, d, n, seed):
    if simulator == "simulate":
        K = int(label.split("K=")[1].split()[0]) if "K=" in label else d
        sim = simulate(d, K, n, random_state=seed)
        return sim.X, sim.adjacency, sim.Y
    return data_of(simulator, family, d, d, n, seed)


def run(args: argparse.Namespace) -> None:
    configs = args.configs.split(",")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        cells = small_workloads() if args.small else workloads()
        for label, simulator, family, d, n in cells:
            seeds = range(args.first_seed, args.first_seed + args.seeds)
            if d >= 10:
                seeds = range(args.first_seed, args.first_seed + args.seeds_d10)
            for i, seed in enumerate(seeds):
                X, A, Y = _data(label, simulator, family, d, n, seed)
                rotated = configs[i % len(configs):] + configs[:i % len(configs)]
                for name in rotated:
                    params = configure(name)
                    row = {"workload": label, "config": name, "seed": seed, "d": d}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        start = time.process_time()
                        try:
                            model = CREATOR(d, random_state=seed, **params).fit(X)
                        except ValueError as exc:
                            fh.write(json.dumps({**row, "status": "failed",
                                                 "error": str(exc)}) + "\n")
                            continue
                        seconds = time.process_time() - start
                    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
                    issues = model.diagnostics_["quality"]["issues"]
                    kinds = sorted({i if isinstance(i, str) else i["kind"] for i in issues})
                    fh.write(json.dumps({
                        **row, "status": "ok", "shd": int(s["shd"]),
                        "correct_order": bool(s["correct_order"]), "locr2": float(s["locr2"]),
                        "issues": kinds, "seconds": seconds}) + "\n")
                fh.flush()
            print(label, "done", flush=True)
    configure("default")


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    rows = [r for r in rows if r["status"] == "ok"]
    by = defaultdict(list)
    for r in rows:
        by[(r["workload"], r["config"])].append(r)
    configs = list(dict.fromkeys(r["config"] for r in rows))
    base_time = {(r["workload"], r["seed"]): r["seconds"] for r in rows
                 if r["config"] == "default"}
    print("| workload | config | fits | mean SHD | correct order | LocR2 "
          "| right flagged | wrong flagged | time / default (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    pooled = defaultdict(list)
    for workload in dict.fromkeys(r["workload"] for r in rows):
        for config in configs:
            g = by.get((workload, config), [])
            if not g:
                continue
            right = [r for r in g if r["shd"] <= 1]
            wrong = [r for r in g if r["shd"] >= 2]
            ratios = [r["seconds"] / base_time[(workload, r["seed"])] for r in g
                      if (workload, r["seed"]) in base_time]
            pooled[config] += g

            def share(fits):
                return (f"{sum(bool(r['issues']) for r in fits)}/{len(fits)}"
                        if fits else "-")
            print(f"| {workload} | {config} | {len(g)} | {np.mean([r['shd'] for r in g]):.2f} "
                  f"| {np.mean([r['correct_order'] for r in g]):.0%} "
                  f"| {np.mean([r['locr2'] for r in g]):.3f} | {share(right)} | {share(wrong)} "
                  f"| {np.median(ratios):.3f} |")
    print()
    for config, g in pooled.items():
        bar = [r for r in g if not any(f in r["workload"] for f in FLAG_FAMILIES)]
        print(f"{config}: bar workloads mean SHD {np.mean([r['shd'] for r in bar]):.3f} "
              f"over {len(bar)} fits; total seconds {sum(r['seconds'] for r in g):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--configs", default="default,tol3,tol3+skip2,tol3+ref19,tol3+skip2+ref19")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--seeds", type=int, default=30)
    r.add_argument("--seeds-d10", type=int, default=5)
    r.add_argument("--small", action="store_true", help="d = 2 and 3 only")
    r.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        summary(args.paths)


if __name__ == "__main__":
    main()
