"""CPU time, memory and each stage's share of default fits at many latents, one version or two.

Every (seed, checkout) fit runs in its own subprocess with ``PYTHONPATH`` set
to the checkout (checked), one BLAS thread, ``CREATOR(d, random_state=seed)``
on ``simulate(d, K=d, n, edge_prob)`` drawn once by this checkout and handed
to both as a file; the two checkouts alternate their order from seed to seed.
Per fit it records:

* ``cpu``: CPU seconds of the fit (``time.process_time``) and ``wall``;
* ``extra_mb``: the peak resident memory of the process
  (``resource.getrusage``) minus its resident memory just after the data
  were loaded, beside ``data_mb``, the float64 data's size;
* each stage's CPU seconds, by a sampling profiler driven by CPU time
  (``ITIMER_PROF``, every 10 ms of CPU): at every sample the CPU time since
  the last one goes to the innermost function of the stack that names a
  stage (:data:`STAGES`; the functions of both versions' modules), the rest
  to ``other``. It reads only frames, so it costs nothing measurable;
* SHD, correct order and LocR² (:func:`creator_plugin.metrics.evaluate`).

Rows are appended to ``--out`` one fit at a time, and a (checkout, seed)
already there is skipped, so an interrupted run resumes. Usage::

    OMP_NUM_THREADS=1 nice python benchmarks/scale_lab.py --d 50 --seeds 500000-500001 \\
        --checkout new=. --checkout old=/path/to/other/checkout \\
        --out benchmarks/results/scale/d50.csv
    python benchmarks/scale_lab.py summary benchmarks/results/scale/*.csv
    python benchmarks/scale_lab.py compare --old old --new new benchmarks/results/scale/d50.csv

``--warmup`` fits a small data set untimed in every subprocess first (for
fits of a second or less, whose first call would otherwise pay one-off
costs) and ``--repeat R`` records the fastest of R fits of the same data in
one subprocess (the best of R, for short fits on a loaded machine); the
rows' ``adjacency_sha`` and ``latents_sha`` tell whether two versions' fits
of the same data are equal to the last bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
THIS = HERE.parent

#: Stage of a sampled stack: the innermost of these functions on it.
STAGES = {
    "reduce_environments": "reduction",
    "ica_directions": "ica_candidates",
    "ica_consistency_scores": "candidate_scores",
    "consistency_descent": "consistency_descent",
    "joint_direction": "joint_reestimation",
    "keep_sources": "joint_reestimation",
    "polish_directions": "polish",
    "topological_ordering": "ordering_rest",
    "prune_ordering": "pruning",
    "_prune_stage": "pruning",
    "revise_graph": "graph_revision",
    "_disentangle_stage": "disentangle",
    "search_decisions": "graph_search",
    "_search_stage": "graph_search",
    "_encode_decode": "encode",
    "sem_parameters": "encode",
    "gaussianity_test": "verdict_gaussianity",
    "homogeneity_test": "verdict_homogeneity",
    "ica_agreement": "verdict_ica_agreement",
    "mechanism_heterogeneity": "verdict_heterogeneity",
    "n_latent_evidence": "verdict_n_latent",
    "assess_fit": "verdict_rest",
}
STAGE_NAMES = list(dict.fromkeys(STAGES.values())) + ["other"]

#: Runs inside the subprocess (its creator_plugin is the checkout on PYTHONPATH).
WORKER = r"""
import json, os, resource, signal, sys, time
import numpy as np
import creator_plugin
from creator_plugin import CREATOR
stages = json.loads(sys.argv[3])
data = np.load(sys.argv[1])
d, seed = int(data["d"]), int(data["seed"])
X = [np.array(data[f"X{k}"]) for k in range(int(data["K"]))]
del data
if sys.argv[4] == "1":  # first-call costs (lazy imports, caches) paid before the clock
    rng = np.random.default_rng(0)
    CREATOR(3, random_state=0).fit([rng.laplace(size=(300, 3)) * (1 + k) for k in range(3)])
page = resource.getpagesize()
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
rss_data = rss()
shares, last = {}, [0.0]
def sample(signum, frame):
    now = time.process_time()
    name = "other"
    while frame is not None:
        if frame.f_code.co_name in stages:
            name = stages[frame.f_code.co_name]
            break
        frame = frame.f_back
    shares[name] = shares.get(name, 0.0) + now - last[0]
    last[0] = now
signal.signal(signal.SIGPROF, sample)
def at_limit(signum, frame):  # the CPU limit reached: the record so far, no fit
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    sample(signum, frame)
    where = []
    while frame is not None:
        if "creator_plugin" in frame.f_code.co_filename:
            where.append(frame.f_code.co_name)
        frame = frame.f_back
    print(json.dumps({"module": creator_plugin.__file__, "completed": False,
                      "cpu": time.process_time() - c, "wall": time.perf_counter() - w,
                      "rss_data": rss_data, "stages": shares, "where": "<".join(where[:6]),
                      "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}),
          flush=True)
    os._exit(0)
limit = float(sys.argv[5])
w, c = time.perf_counter(), time.process_time()
if limit > 0:
    signal.signal(signal.SIGXCPU, at_limit)
    soft = int(c + limit) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 120))
best = None
for _ in range(int(sys.argv[6])):  # --repeat: the fastest of that many fits
    shares.clear()
    w, c = time.perf_counter(), time.process_time()
    last[0] = c
    signal.setitimer(signal.ITIMER_PROF, 0.01, 0.01)
    est = CREATOR(d, random_state=seed).fit(X)
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    cpu, wall = time.process_time() - c, time.perf_counter() - w
    shares["other"] = shares.get("other", 0.0) + time.process_time() - last[0]
    if best is None or cpu < best[0]:
        best = (cpu, wall, dict(shares))
cpu, wall, shares = best
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
np.savez(sys.argv[2], adjacency=est.adjacency_matrix_,
         **{f"L{k}": z for k, z in enumerate(est.latents_)})
print(json.dumps({"module": creator_plugin.__file__, "completed": True, "cpu": cpu, "wall": wall,
                  "rss_data": rss_data, "peak": peak, "stages": shares}))
"""

THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def _seeds(text: str) -> list[int]:
    """``"0-19"`` or ``"3,5,8"``."""
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def _sha(arrays: list[np.ndarray]) -> str:
    """The first 12 hex digits of the SHA-256 of the arrays' float64 bytes (bit-identical fits)."""
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return digest.hexdigest()[:12]


def fit_in(checkout: Path, data_file: Path, out_file: Path, warmup: bool = False,
           cpu_limit: float = 0.0, repeat: int = 1) -> dict:
    """One subprocess fit with ``checkout`` first on the path: its record.

    With ``warmup`` the subprocess first fits a small data set (d = K = 3,
    300 rows) untimed, so the timed fit does not pay the first call's costs.
    With ``cpu_limit`` > 0 a fit still running after that many CPU seconds is
    stopped (``RLIMIT_CPU``); its record has ``completed`` false, the stages'
    seconds so far and ``where``, the package's functions on the stack then
    (innermost first). With ``repeat`` > 1 the data are fitted that many
    times in the subprocess and the record is the fastest fit's (its CPU and
    wall seconds and stage shares; the peak memory is the process's over all
    of them, the fits being the same).
    """
    env = {**os.environ, **THREADS, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-c", WORKER, str(data_file), str(out_file), json.dumps(STAGES),
               "1" if warmup else "0", str(cpu_limit), str(repeat)]
    proc = subprocess.run(command, env=env, cwd=data_file.parent, capture_output=True,
                          text=True, check=True)
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = (checkout / "creator_plugin" / "__init__.py").resolve()
    if Path(info["module"]).resolve() != expected:
        raise RuntimeError(f"the subprocess imported {info['module']}, not {expected}.")
    return info


def _append(out: Path, row: dict) -> None:
    """Append one row to ``out``, rewriting it once if the row brings new columns."""
    new = pd.DataFrame([row])
    if not out.exists():
        new.to_csv(out, index=False)
        return
    header = list(pd.read_csv(out, nrows=0).columns)
    if set(new.columns) <= set(header):
        new.reindex(columns=header).to_csv(out, mode="a", header=False, index=False)
    else:
        pd.concat([pd.read_csv(out), new], ignore_index=True).to_csv(out, index=False)


def run(args) -> None:
    from creator_plugin.metrics import evaluate
    from creator_plugin.simulation import simulate

    checkouts = {}
    for item in args.checkout or [f"this={THIS}"]:
        label, _, path = item.partition("=")
        checkouts[label] = Path(path).resolve()
    out = Path(args.out)
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.version, old.seed))
    edge_prob = args.edge_prob if args.edge_prob is not None else 3.0 / args.d
    with tempfile.TemporaryDirectory() as tmp:
        for i, seed in enumerate(_seeds(args.seeds)):
            todo = [v for v in checkouts if (v, seed) not in done]
            if not todo:
                continue
            sim = simulate(args.d, args.d, args.n, edge_prob=edge_prob, random_state=seed)
            data_file = Path(tmp) / "data.npz"
            np.savez(data_file, d=args.d, K=len(sim.X), seed=seed,
                     **{f"X{k}": x for k, x in enumerate(sim.X)})
            data_mb = sum(x.size for x in sim.X) * 8 / 2**20
            for version in (todo if i % 2 == 0 else todo[::-1]):
                info = fit_in(checkouts[version], data_file, Path(tmp) / "fit.npz",
                              args.warmup, args.cpu_limit, args.repeat)
                if info["completed"]:
                    res = np.load(Path(tmp) / "fit.npz")
                    latents = [res[f"L{k}"] for k in range(len(sim.X))]
                    m = evaluate(sim.adjacency, sim.Y, res["adjacency"], latents)
                    shas = {"adjacency_sha": _sha([res["adjacency"]]),
                            "latents_sha": _sha(latents)}
                else:
                    m = {"shd": np.nan, "correct_order": np.nan, "locr2": np.nan}
                    shas = {"adjacency_sha": "", "latents_sha": ""}
                row = {"version": version, "d": args.d, "K": args.d, "n": args.n,
                       "edge_prob": edge_prob, "seed": seed, "cpu": info["cpu"],
                       "wall": info["wall"], "data_mb": data_mb,
                       "extra_mb": (info["peak"] - info["rss_data"]) / 2**20,
                       "shd": m["shd"], "correct_order": m["correct_order"],
                       "locr2": m["locr2"], "warmup": bool(args.warmup),
                       "repeat": args.repeat,
                       **shas, "completed": info["completed"], "where": info.get("where", ""),
                       **{f"s_{s}": info["stages"].get(s, 0.0) for s in STAGE_NAMES}}
                out.parent.mkdir(parents=True, exist_ok=True)
                _append(out, row)
                print(json.dumps(row), flush=True)


def summary(paths: list[str]) -> str:
    """Markdown: per version and d the median CPU s, memory, SHD and each stage's share."""
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    cols = [c for c in df.columns if c.startswith("s_")]
    lines = ["| version | d | fits | median CPU s | median extra MB (data MB) | mean SHD | "
             + " | ".join(c[2:] for c in cols) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(cols)]
    for (version, d), g in df.groupby(["version", "d"], sort=True):
        share = g[cols].sum() / g[cols].sum().sum()
        lines.append(f"| {version} | {d} | {len(g)} | {g.cpu.median():.1f} | "
                     f"{g.extra_mb.median():.0f} ({g.data_mb.median():.0f}) | "
                     f"{g.shd.mean():.2f} | " + " | ".join(f"{100 * s:.0f}" for s in share)
                     + " |")
    return "\n".join(lines)


def compare(paths: list[str], old: str, new: str) -> str:
    """Markdown: per d, the two versions' fits of the same seeds side by side.

    CPU seconds are medians over the seeds fitted by both; the ratio is old
    over new (above 1: the new version is faster), as the ratio of medians and
    the smallest per-seed ratio; *new worse* counts the seeds whose SHD is
    higher with ``new``; *same adjacency* and *same latents* count the seeds
    whose fitted adjacency matrix or latents are equal to the last bit.
    """
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    lines = [f"| d | K | n | seeds | {old} median CPU s | {new} median CPU s | "
             "ratio of medians (smallest per seed) | mean SHD, "
             f"{old} / {new} | seeds {new} worse | same adjacency | same latents |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (d, n), g in df.groupby(["d", "n"], sort=True):
        a = g[g.version == old].set_index("seed")
        b = g[g.version == new].set_index("seed")
        seeds = a.index.intersection(b.index)
        if len(seeds) == 0:
            continue
        a, b = a.loc[seeds], b.loc[seeds]
        ratio = a.cpu / b.cpu
        lines.append(
            f"| {d} | {int(a.K.iloc[0])} | {n} | {len(seeds)} | {a.cpu.median():.3g} | "
            f"{b.cpu.median():.3g} | **{a.cpu.median() / b.cpu.median():.2f}x** "
            f"({ratio.min():.2f}x) | {a.shd.mean():.2f} / {b.shd.mean():.2f} | "
            f"{int((b.shd > a.shd).sum())} | "
            f"{int((a.adjacency_sha == b.adjacency_sha).sum())} | "
            f"{int((a.latents_sha == b.latents_sha).sum())} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "summary":
        parser = argparse.ArgumentParser(prog="scale_lab.py summary",
                                         description="each version's fits per d, from rows")
        parser.add_argument("paths", nargs="+", help="CSV rows")
        print(summary(parser.parse_args(argv[1:]).paths))
        return
    if argv and argv[0] == "compare":
        parser = argparse.ArgumentParser(prog="scale_lab.py compare",
                                         description=compare.__doc__.splitlines()[0])
        parser.add_argument("--old", required=True, help="the earlier version's label")
        parser.add_argument("--new", required=True, help="the later version's label")
        parser.add_argument("paths", nargs="+", help="CSV rows of both versions")
        args = parser.parse_args(argv[1:])
        print(compare(args.paths, args.old, args.new))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, required=True)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--edge-prob", type=float, default=None, help="default: 3 / d")
    parser.add_argument("--seeds", required=True, help="'500000-500001' or '3,5,8'")
    parser.add_argument("--checkout", action="append", metavar="LABEL=PATH",
                        help="a version to fit (a directory holding creator_plugin/), "
                        "repeated for several; default: this checkout as 'this'")
    parser.add_argument("--out", required=True, help="CSV, appended to (resumable)")
    parser.add_argument("--warmup", action="store_true",
                        help="fit a d = K = 3 data set untimed first in every subprocess "
                        "(for fits of a second or less)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="fit each data set this many times in its subprocess and record "
                        "the fastest fit (for fits of a second or less on a shared machine)")
    parser.add_argument("--cpu-limit", type=float, default=0.0,
                        help="CPU seconds after which a fit is stopped and recorded as not "
                        "completed (default: none)")
    args = parser.parse_args(argv)
    run(args)


if __name__ == "__main__":
    main()
