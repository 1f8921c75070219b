"""One peers table: every method on every generator -- the authors', the package's, CREATOR's.

Generators (d = 5 latents, 2000 rows per environment, p = 10 measurements
except ``multi_node_crl``, whose mixing is square, p = 5):

* the authors' (:mod:`creator_plugin.benchmark.field_generators`):
  ``lincd``, ``lscale_i``, ``umni_crl`` (K = 6: observational + 5) and
  ``multi_node_crl`` (K = 5, none observational), each with Gaussian noise
  (the authors' law) and Laplace noise;
* the package's interventional families (:mod:`creator_plugin.interventional`):
  ``single_node_hard``, ``single_node_hard_laplace``, ``single_node_soft``,
  ``multi_node`` (K = 6);
* CREATOR's own: ``creator`` (``simulate(5, 6, n, n_features=10)``) and
  ``creator-pure`` (two pure indicators per latent, measurement noise 0.2).

Every method gets the same data of a (generator, seed); seed s draws its
data with ``random_state = 50_000 + s`` (the package's and CREATOR's
generators then give the data of ``benchmarks/peers.py``). With
``--first-seed S`` the seeds are ``S, ..., S + seeds - 1`` and each is the
data's ``random_state`` itself (fresh evaluation seeds: ``--first-seed
300000``). A fit that
fails or exceeds the time limit is scored as the empty graph with MCC 0
and counted. CREATOR's rows carry the issue kinds of its verdict and
whether one of them names the interventional regime.

Rows are appended to ``--out`` as each fit finishes; a rerun skips the
(generator, method, seed) rows already there, so an interrupted run resumes.
``--replace`` drops the rows of the named methods first (to refit them).

Usage::

    OMP_NUM_THREADS=1 nice python benchmarks/peers_field.py --seeds 20 \\
        --out benchmarks/results/peers/field_table_20seeds.csv
    OMP_NUM_THREADS=1 nice python benchmarks/peers_field.py --first-seed 300000 --seeds 20 \\
        --generators lincd-laplace --out benchmarks/results/sparse_changes/peers.csv
    python benchmarks/peers_field.py --table benchmarks/results/peers/field_table_20seeds.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import signal
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin import CREATOR, simulate, simulate_family
from creator_plugin.benchmark.baselines import METHODS
from creator_plugin.benchmark.scoring import correlation_scores, score

D, P, N = 5, 10, 2000


def _family(name, noise=None, p=P):
    return lambda s: simulate_family(name, D, None, N, n_features=p, random_state=s,
                                     **({"noise": noise} if noise else {}))


GENERATORS = {
    **{f"{fam}-{z}": _family(fam, z, P if fam != "multi_node_crl" else D)
       for fam in ("lincd", "lscale_i", "umni_crl", "multi_node_crl")
       for z in ("gaussian", "laplace")},
    "single_node_hard": _family("single_node_hard"),
    "single_node_hard_laplace": _family("single_node_hard_laplace"),
    "single_node_soft": _family("single_node_soft"),
    "multi_node": _family("multi_node"),
    "creator": lambda s: simulate(D, 6, N, n_features=P, random_state=s),
    "creator-pure": lambda s: simulate(D, 6, N, mixing="pure", indicators_per_latent=2,
                                       measurement_noise=0.2, random_state=s),
}
AUTHORS = [g for g in GENERATORS if g.split("-")[0] in
           ("lincd", "lscale_i", "umni_crl", "multi_node_crl")]


def fit_creator_with_verdict(X_list, n_latent, random_state):
    """CREATOR with defaults; its verdict's issue kinds (or "trusted") in ``info``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = CREATOR(n_latent, random_state=random_state).fit(X_list)
    quality = m.diagnostics_.get("quality") or {}
    kinds = list(dict.fromkeys(i["kind"] for i in quality.get("issues", [])))
    info = {"verdict": kinds or ["trusted"],
            "route": m.diagnostics_["mechanism_changes"]["route"],
            "changed": m.changed_mechanisms_.astype(int).tolist()}
    if "regime" in quality.get("checks", {}):
        info["methods"] = quality["checks"]["regime"]["methods"]
    return m.adjacency_matrix_, m.latents_, list(m.causal_order_), info


METHOD_TABLE = {
    "CREATOR": fit_creator_with_verdict,
    **{k: v for k, v in METHODS.items() if k != "CREATOR"},
    "LSCALE-I (hard, atol 0.01)": partial(METHODS["LSCALE-I (hard)"], atol_edge=0.01),
}

COLUMNS = ["generator", "method", "seed", "status", "seconds", "shd", "mcc", "n_est_edges",
           "n_true_edges", "info", "error"]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def fit_one(fit, sim, seed, time_limit):
    """One row: the fit under a SIGALRM limit, scored; a failure scores as the empty graph."""
    row = {"seed": seed, "n_true_edges": int(sim.adjacency.sum())}
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    start = time.perf_counter()
    try:
        adj, lat, order, *info = fit(sim.X, D, seed)
        secs = time.perf_counter() - start
        s = score(sim.adjacency, sim.Y, adj, lat, order)
        if info and "changed" in info[0] and "targets" in sim.params:
            info[0]["change_accuracy"] = change_accuracy(sim, adj, lat, info[0]["changed"])
        row.update(status="ok", seconds=secs, shd=s["shd_corr"], mcc=s["mcc"],
                   n_est_edges=s["n_est_edges"],
                   info=json.dumps(info[0], default=str) if info else "", error="")
    except _Timeout:
        row.update(status="timeout", error=f"exceeded {time_limit:g} s")
    except Exception as exc:  # a failed fit is a result
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if row["status"] != "ok":  # the empty graph with MCC 0
        row.update(seconds=time.perf_counter() - start, shd=row["n_true_edges"], mcc=0.0,
                   n_est_edges=0, info="")
    return row


def change_accuracy(sim, adjacency, latents, changed) -> dict:
    """``changed_mechanisms_`` against the generator's targets, after the latents' matching.

    The reference is environment 0 (the observational one of the generators that
    have one). Returns the non-reference cells right and their number, and the
    true targets found and their number.
    """
    changed = np.asarray(changed, dtype=bool)
    truth = np.zeros_like(changed)
    for k, targets in enumerate(sim.params["targets"]):
        truth[k, targets] = True
    match = correlation_scores(sim.adjacency, sim.Y, adjacency, latents)["matching"]
    est = np.zeros_like(changed)
    for e, t in match:
        est[:, t] = changed[:, e]
    est, truth = est[1:], truth[1:]
    return {"cells_right": int((est == truth).sum()), "cells": int(truth.size),
            "targets_found": int((est & truth).sum()), "targets": int(truth.sum())}


def run(generators, methods, seeds, out: Path, time_limit: float,
        offset: int = 50_000) -> None:
    """Append the rows of every (generator, seed, method) not yet in ``out``.

    Seed s draws its data with ``random_state = offset + s``.
    """
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.generator, old.method, old.seed))
    new = not out.exists()
    with out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        if new:
            writer.writeheader()
        for g in generators:
            for seed in seeds:
                todo = [m for m in methods if (g, m, seed) not in done]
                if not todo:
                    continue
                sim = GENERATORS[g](offset + seed)
                for m in todo:
                    row = {"generator": g, "method": m,
                           **fit_one(METHOD_TABLE[m], sim, seed, time_limit)}
                    writer.writerow(row)
                    fh.flush()
                    print(json.dumps({k: row[k] for k in ("generator", "method", "seed",
                                                          "status", "shd", "mcc")},
                                     default=str), flush=True)


def markdown(df: pd.DataFrame) -> str:
    """Mean SHD / MCC per generator and method (failures scored as the empty graph)."""
    gens = [g for g in GENERATORS if g in set(df.generator)]
    methods = [m for m in METHOD_TABLE if m in set(df.method)]
    g = df.groupby(["generator", "method"])
    shd, mcc, n = g.shd.mean(), g.mcc.mean(), g.size()
    bad = df[df.status != "ok"].groupby(["generator", "method"]).size()
    lines = ["| generator | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for gen in gens:
        row_shd = [shd.get((gen, m)) for m in methods]
        row_mcc = [mcc.get((gen, m)) for m in methods]
        best_s = min(v for v in row_shd if v is not None)
        best_m = max(v for v in row_mcc if v is not None)
        cells = []
        for m, s_, c_ in zip(methods, row_shd, row_mcc):
            if s_ is None:
                cells.append("—")
                continue
            txt = (f"**{s_:.2f}**" if np.isclose(s_, best_s) else f"{s_:.2f}") + " / " + (
                f"**{c_:.2f}**" if np.isclose(c_, best_m) else f"{c_:.2f}")
            k = int(bad.get((gen, m), 0))
            if k:
                txt += f" ({k} failed)"
            if n[(gen, m)] != n.max():
                txt += f" [{n[(gen, m)]} seeds]"
            cells.append(txt)
        lines.append(f"| `{gen}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wins_losses(df: pd.DataFrame) -> str:
    """Per generator: CREATOR's rank by SHD and by MCC, and the best method of each."""
    g = df.groupby(["generator", "method"])
    shd, mcc = g.shd.mean().unstack(), g.mcc.mean().unstack()
    lines = ["| generator | best SHD | CREATOR SHD (rank) | best MCC | CREATOR MCC (rank) |",
             "|---|---|---|---|---|"]
    for gen in [x for x in GENERATORS if x in shd.index]:
        s, c = shd.loc[gen].dropna(), mcc.loc[gen].dropna()
        rs = int((s < s["CREATOR"] - 1e-12).sum()) + 1
        rc = int((c > c["CREATOR"] + 1e-12).sum()) + 1
        lines.append(f"| `{gen}` | {s.idxmin()} {s.min():.2f} | {s['CREATOR']:.2f} ({rs}/{len(s)})"
                     f" | {c.idxmax()} {c.max():.2f} | {c['CREATOR']:.2f} ({rc}/{len(c)}) |")
    return "\n".join(lines)


def verdict_table(df: pd.DataFrame) -> str:
    """CREATOR's fits per generator: refused, trusted, naming the interventional regime."""
    cr = df[df.method == "CREATOR"]
    lines = ["| generator | fits | refused | trusted | names the regime | issue kinds raised |",
             "|---|---|---|---|---|---|"]
    for gen in [x for x in GENERATORS if x in set(cr.generator)]:
        sub = cr[cr.generator == gen]
        ok = sub[sub.status == "ok"]
        kinds = [json.loads(i)["verdict"] for i in ok["info"]]
        counts = pd.Series([k for ks in kinds if ks != ["trusted"] for k in ks]).value_counts()
        regime = sum("interventional_regime" in ks for ks in kinds)
        raised = ", ".join(f"{k} ({c})" for k, c in counts.items()) or "none"
        lines.append(f"| `{gen}` | {len(sub)} | {len(sub) - len(ok)} | "
                     f"{sum(ks == ['trusted'] for ks in kinds)} | {regime} | {raised} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=None,
                    help="seeds first..first+seeds-1, each the data's random_state "
                         "(default: seeds 0..seeds-1 drawing with 50000 + seed)")
    ap.add_argument("--generators", nargs="+", default=list(GENERATORS))
    ap.add_argument("--methods", nargs="+", default=list(METHOD_TABLE))
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per fit")
    ap.add_argument("--out", default="benchmarks/results/peers/field_table_20seeds.csv")
    ap.add_argument("--replace", action="store_true",
                    help="drop the rows of --methods from --out first (refit them)")
    ap.add_argument("--table", metavar="CSV", help="print the page's tables and exit")
    args = ap.parse_args(argv)
    if args.table:
        df = pd.read_csv(args.table)
        print(markdown(df), "", wins_losses(df), "", verdict_table(df), sep="\n")
        return
    unknown = [m for m in args.methods if m not in METHOD_TABLE]
    if unknown:
        raise SystemExit(f"unknown methods {unknown}; available: {list(METHOD_TABLE)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.replace and out.exists():
        df = pd.read_csv(out)
        df[~df.method.isin(args.methods)].to_csv(out, index=False)
    if args.first_seed is None:
        run(args.generators, args.methods, range(args.seeds), out, args.time_limit)
    else:
        run(args.generators, args.methods,
            range(args.first_seed, args.first_seed + args.seeds), out, args.time_limit, 0)


if __name__ == "__main__":
    main()
