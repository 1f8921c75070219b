"""Time the default fit of this checkout against another checkout, on the same data, in one run.

Every (seed, checkout) fit runs in its own subprocess with ``PYTHONPATH``
set to the checkout (the subprocess reports which ``creator_plugin`` it
imported, and the run stops if it is not the intended one), one BLAS
thread, the two checkouts interleaved and their order alternated from seed
to seed, so that the load of a shared machine falls on both alike. Each
subprocess fits the data once untimed (imports, caches), then ``--repeats``
timed fits of ``CREATOR(d, random_state=seed)`` and keeps the fastest
(``--no-warmup``: no untimed fit, for fits of many seconds); with
``--rounds R`` this happens R times per checkout, alternating with the
other checkout, and the fastest of all counts. The
data are simulated once by this checkout and handed to both as a file;
each fit's adjacency and latents come back the same way and are scored here
(:func:`creator_plugin.metrics.evaluate`), so both are scored alike.

Reported: per checkout the median seconds per fit (wall clock and CPU
time), the ratio other / this of the medians and the median of the per-seed
ratios, mean SHD, correct-order share and LocR^2.

Usage::

    python benchmarks/speed_vs_base.py --base /path/to/other/checkout --seeds 0-19 \\
        --out benchmarks/results/speed/d5.csv
    python benchmarks/speed_vs_base.py --base /path/to/other/checkout --d 20 --n 5000 \\
        --edge-prob 0.2 --seeds 0-9 --repeats 1 --no-warmup --out benchmarks/results/speed/d20.csv

Without ``--base`` only this checkout is timed (a time-versus-d curve, say).
``--family NAME`` draws the data from a zoo family
(:func:`creator_plugin.simulation.simulate_family`) instead of ``simulate``.
``--params JSON`` fits this checkout with those parameters, as ``set_params``
keywords (``'{"refine__disentangle": false}'``; the base keeps its defaults):
what a change of defaults would cost before it is made.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin.metrics import evaluate
from creator_plugin.simulation import simulate

HERE = Path(__file__).resolve().parent
THIS = HERE.parent

#: Runs inside the subprocess (its creator_plugin is the checkout on PYTHONPATH).
WORKER = r"""
import json, sys, time
import numpy as np
import creator_plugin
from creator_plugin import CREATOR
data = np.load(sys.argv[1])
d, seed, repeats, warmup = int(data["d"]), int(data["seed"]), int(sys.argv[3]), int(sys.argv[4])
params = json.loads(sys.argv[5])
X = [data[f"X{k}"] for k in range(int(data["K"]))]
if warmup:
    CREATOR(d, random_state=seed).set_params(**params).fit(X)
wall, cpu = [], []
for _ in range(repeats):
    w, c = time.perf_counter(), time.process_time()
    est = CREATOR(d, random_state=seed).set_params(**params).fit(X)
    wall.append(time.perf_counter() - w)
    cpu.append(time.process_time() - c)
np.savez(sys.argv[2], adjacency=est.adjacency_matrix_,
         **{f"L{k}": z for k, z in enumerate(est.latents_)})
print(json.dumps({"module": creator_plugin.__file__, "wall": min(wall), "cpu": min(cpu)}))
"""

THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def _seeds(text: str) -> list[int]:
    """``"0-19"`` or ``"3,5,8"``."""
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def _simulate(args, seed: int):
    if args.family:
        from creator_plugin.simulation import simulate_family
        return simulate_family(args.family, args.d, args.K or args.d, args.n, random_state=seed)
    return simulate(args.d, args.K or args.d, args.n, edge_prob=args.edge_prob,
                    random_state=seed)


def fit_in(checkout: Path, data_file: Path, out_file: Path, repeats: int, warmup: bool,
           params: str = "{}") -> dict:
    """One subprocess fit with ``checkout`` first on the path; its timings and results."""
    env = {**os.environ, **THREADS, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-c", WORKER, str(data_file), str(out_file), str(repeats),
               str(int(warmup)), params]
    # cwd: the temporary directory, so that "" on sys.path finds no other checkout.
    proc = subprocess.run(command, env=env, cwd=data_file.parent, capture_output=True,
                          text=True, check=True)
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = (checkout / "creator_plugin" / "__init__.py").resolve()
    if Path(info["module"]).resolve() != expected:
        raise RuntimeError(f"the subprocess imported {info['module']}, not {expected}.")
    return info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=None, help="the other checkout (a directory "
                        "holding creator_plugin/); without it only this checkout is timed")
    parser.add_argument("--seeds", default="0-19", help="'0-19' or '3,5,8'")
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--K", type=int, default=None, help="environments (default: d)")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--edge-prob", type=float, default=0.5)
    parser.add_argument("--family", default=None, help="a zoo family instead of simulate()")
    parser.add_argument("--repeats", type=int, default=3, help="timed fits per subprocess")
    parser.add_argument("--rounds", type=int, default=1,
                        help="subprocesses per checkout and seed, alternating; the fastest "
                        "counts")
    parser.add_argument("--no-warmup", action="store_true",
                        help="no untimed fit first (for fits of many seconds)")
    parser.add_argument("--out", default=None, help="CSV of every fit")
    parser.add_argument("--params", default="{}",
                        help="JSON of CREATOR parameters for this checkout's fits only "
                             "(the base keeps its defaults)")
    args = parser.parse_args(argv)
    json.loads(args.params)  # fail early on bad JSON

    checkouts = {"this": THIS}
    if args.base:
        checkouts["base"] = Path(args.base).resolve()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, seed in enumerate(_seeds(args.seeds)):
            sim = _simulate(args, seed)
            data_file = Path(tmp) / "data.npz"
            np.savez(data_file, d=args.d, K=len(sim.X), seed=seed,
                     **{f"X{k}": x for k, x in enumerate(sim.X)})
            order = sorted(checkouts) if i % 2 == 0 else sorted(checkouts, reverse=True)
            timings = {name: [] for name in order}
            # --rounds subprocesses per checkout, alternating with the other's.
            for _ in range(args.rounds):
                for name in order:
                    timings[name].append(fit_in(checkouts[name], data_file,
                                                Path(tmp) / f"{name}.npz", args.repeats,
                                                not args.no_warmup,
                                                args.params if name == "this" else "{}"))
            for name in order:
                res = np.load(Path(tmp) / f"{name}.npz")
                latents = [res[f"L{k}"] for k in range(len(sim.X))]
                m = evaluate(sim.adjacency, sim.Y, res["adjacency"], latents)
                rows.append({"seed": seed, "checkout": name, "path": str(checkouts[name]),
                             "wall": min(t["wall"] for t in timings[name]),
                             "cpu": min(t["cpu"] for t in timings[name]), "shd": m["shd"],
                             "correct_order": m["correct_order"], "locr2": m["locr2"]})
                print(json.dumps(rows[-1]), flush=True)
    df = pd.DataFrame(rows)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(args.out, index=False)
    print(summary(df, args))


def summary(df: pd.DataFrame, args) -> str:
    """Markdown table of the medians, the ratios and the accuracy of both checkouts."""
    wide = df.pivot(index="seed", columns="checkout", values=["wall", "cpu"])
    lines = [f"d={args.d}, K={args.K or args.d}, n={args.n}, "
             f"{args.family or f'edge_prob={args.edge_prob}'}, {df.seed.nunique()} seeds, "
             f"best of {args.rounds} x {args.repeats} timed fits each"
             f"{'' if args.no_warmup else ' (each process after an untimed one)'}"
             f"{'' if args.params == '{}' else f'; this checkout with {args.params}'}", "",
             "| checkout | median wall s | median CPU s | mean SHD | correct order | LocR² |",
             "|---|---|---|---|---|---|"]
    for name in ("base", "this"):
        sub = df[df.checkout == name]
        if sub.empty:
            continue
        lines.append(f"| {name} | {sub.wall.median():.3f} | {sub.cpu.median():.3f} | "
                     f"{sub.shd.mean():.2f} | {sub.correct_order.mean():.2f} | "
                     f"{sub.locr2.mean():.3f} |")
    for clock in ("wall", "cpu") if "base" in set(df.checkout) else ():
        ratio = wide[clock]["base"].median() / wide[clock]["this"].median()
        per_seed = (wide[clock]["base"] / wide[clock]["this"]).median()
        lines.append(f"\n{clock}: base / this = {ratio:.2f}x (ratio of medians), "
                     f"{per_seed:.2f}x (median of per-seed ratios)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
