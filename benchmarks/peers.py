"""Every method on every workload: CREATOR beside the field's linear CRL methods.

Workloads (d = 5 latents, K = 6 environments, p = 10 measurements):

* ``creator``: CREATOR's own workload, ``simulate(5, 6, n, n_features=10)``
  (every weight and noise law changes across environments; no
  observational environment);
* ``single-hard-gauss`` / ``single-hard-laplace`` / ``single-soft-laplace``:
  the zoo families ``single_node_hard``, ``single_node_hard_laplace`` and
  ``single_node_soft`` (:mod:`creator_plugin.interventional`: environment 0
  observational, one single-node intervention per latent);
* ``multi-hard-laplace``: the zoo family ``multi_node`` (unknown multi-node
  interventions);
* ``creator-pure``: CREATOR's workload with a pure measurement model (two pure
  indicators per latent, p = 10, measurement noise 0.2), GIN's assumption.

Every method gets the same data of a (workload, seed) and runs in its own
process under a per-fit time limit; every result is scored by
:func:`creator_plugin.benchmark.scoring.score` (MCC and SHD under the
Hungarian matching on pooled |correlation|, and LocR²). CREATOR's rows
carry its fit-quality verdict (the issue kinds it raised, or "trusted").

Usage::

    python benchmarks/peers.py --seeds 20 --out benchmarks/results/peers/table_20seeds.csv
    python benchmarks/peers.py --seeds 3 --methods CREATOR LinCD "LSCALE-I (hard)" \\
        --out benchmarks/results/peers/table_3seeds.csv

Run it with ``nice`` and one BLAS thread per process.
"""

from __future__ import annotations

import argparse
import json
import signal
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin import CREATOR, simulate, simulate_family
from creator_plugin.benchmark.baselines import METHODS
from creator_plugin.benchmark.isolation import FitTimeout, call_with_time_limit
from creator_plugin.benchmark.scoring import score

D, K, P = 5, 6, 10

WORKLOADS = {
    "creator": lambda n, s: simulate(D, K, n, n_features=P, random_state=s),
    # the interventional families of the zoo (creator_plugin.interventional)
    "single-hard-gauss": lambda n, s: simulate_family(
        "single_node_hard", D, K, n, n_features=P, random_state=s),
    "single-hard-laplace": lambda n, s: simulate_family(
        "single_node_hard_laplace", D, K, n, n_features=P, random_state=s),
    "single-soft-laplace": lambda n, s: simulate_family(
        "single_node_soft", D, K, n, n_features=P, random_state=s),
    "multi-hard-laplace": lambda n, s: simulate_family(
        "multi_node", D, K, n, n_features=P, random_state=s),
    "creator-pure": lambda n, s: simulate(D, K, n, mixing="pure", indicators_per_latent=2,
                                          measurement_noise=0.2, random_state=s),
}

#: What each method assumes (the results page's assumptions table).
ASSUMES = {
    "CREATOR": "weights and noise laws change across environments; non-Gaussian noise",
    "LinCD": "observational env. + one single-node (hard) intervention per latent; 2nd moments",
    "LSCALE-I (hard)": "observational env. + one hard single-node intervention per latent, "
                       "environments ordered by target; Gaussian scores",
    "LSCALE-I (soft)": "as LSCALE-I (hard), soft interventions: latents up to ancestors",
    "LiNGCReL": "every latent's noise law the same in all environments, different between "
                "latents; non-Gaussian noise",
    "PCA+MultiGroupDirectLiNGAM": "latents = PCA scores of the pooled data; one causal order "
                                  "shared by the environments",
    "PCA+ICA-LiNGAM (pooled)": "latents = PCA scores of the pooled data; environments pooled",
    "GIN": "pure measurement model (>= 2 pure indicators per latent), one SEM",
    "GIN (tests by variable)": "pure measurement model (>= 2 pure indicators per latent), one SEM",
}


def fit_creator_with_verdict(X_list, n_latent, random_state):
    """CREATOR with defaults; its verdict (issue kinds, or "trusted") in ``info``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = CREATOR(n_latent, random_state=random_state).fit(X_list)
    verdict = m.diagnostics_.get("quality") or {}
    kinds = list(dict.fromkeys(i["kind"] for i in verdict.get("issues", [])))
    return (m.adjacency_matrix_, m.latents_, list(m.causal_order_),
            {"verdict": kinds or ["trusted"]})


def _methods(names):
    table = {**METHODS, "CREATOR": fit_creator_with_verdict}
    unknown = [n for n in names if n not in table]
    if unknown:
        raise SystemExit(f"unknown methods {unknown}; available: {list(table)}")
    return {n: table[n] for n in names}


def _call_in_process(fit, args, time_limit, clock="wall"):
    """``fit(*args)`` in this process, interrupted after ``time_limit`` s.

    Starting a process per fit costs seconds (imports) on a busy machine,
    more than the fits of the fast methods; the alarm still bounds each fit
    (it interrupts Python code between bytecodes, so a long compiled call
    overruns until it returns). ``clock="wall"`` limits elapsed time
    (SIGALRM); ``clock="cpu"`` limits the CPU time of this process
    (SIGPROF), which other jobs on a shared machine do not eat into. Returns
    the result and the seconds the fit took on that clock.
    """
    timer, sig, now = ((signal.ITIMER_PROF, signal.SIGPROF, time.process_time) if clock == "cpu"
                       else (signal.ITIMER_REAL, signal.SIGALRM, time.perf_counter))

    def _alarm(signum, frame):
        raise FitTimeout(f"fit exceeded {time_limit:g} s ({clock} time)")

    previous = signal.signal(sig, _alarm)
    signal.setitimer(timer, time_limit)
    try:
        start = now()
        result = fit(*args)
        return result, now() - start
    finally:
        signal.setitimer(timer, 0)
        signal.signal(sig, previous)


def run(workloads, methods, seeds, n_samples, time_limit, first_seed=0, out=None,
        in_process=False, clock="wall"):
    """All fits; with ``out``, the rows so far are rewritten to it after every fit.

    With ``in_process`` every fit runs in this process under a SIGALRM time
    limit (:func:`_call_in_process`, on the ``clock`` given) instead of a
    child process per fit.
    """
    rows = []
    for wname in workloads:
        for seed in range(first_seed, first_seed + seeds):
            sim = WORKLOADS[wname](n_samples, 50_000 + seed)
            for mname, fit in methods.items():
                row = {"workload": wname, "method": mname, "seed": seed, "n_samples": n_samples,
                       "time_limit": time_limit, "in_process": in_process}
                if clock != "wall":
                    row["clock"] = clock
                try:
                    if in_process:
                        result, secs = _call_in_process(fit, (sim.X, D, seed), time_limit,
                                                        clock)
                    else:
                        result, secs = call_with_time_limit(fit, (sim.X, D, seed), {},
                                                            time_limit)
                    adj, lat, order, *info = result
                    row.update(status="ok", seconds=secs,
                               info=json.dumps(info[0], default=str) if info else "",
                               **score(sim.adjacency, sim.Y, adj, lat, order))
                except FitTimeout as exc:
                    row.update(status="timeout", error=str(exc))
                except Exception as exc:  # a failed fit is a result
                    row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
                rows.append(row)
                if out is not None:
                    pd.DataFrame(rows).to_csv(out, index=False)
                print(json.dumps({k: row.get(k) for k in
                                  ("workload", "method", "seed", "status", "mcc", "shd_corr",
                                   "seconds", "info")}, default=str), flush=True)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Mean SHD, MCC, LocR², median seconds per (workload, method); failures counted."""
    df = df.copy()
    for col in ("shd_corr", "mcc", "locr2", "seconds", "info"):
        if col not in df:
            df[col] = float("nan") if col != "info" else ""
    ok = df[df.status == "ok"]
    out = df[["workload", "method"]].drop_duplicates().set_index(["workload", "method"])
    g = ok.groupby(["workload", "method"])
    out = out.join(g.agg(fits=("seed", "size"), shd_corr=("shd_corr", "mean"),
                         mcc=("mcc", "mean"), locr2=("locr2", "mean"),
                         seconds=("seconds", "median")))
    out["fits"] = out["fits"].fillna(0).astype(int)
    out["not_ok"] = df[df.status != "ok"].groupby(["workload", "method"]).size()
    out["not_ok"] = out["not_ok"].fillna(0).astype(int)
    verdicts = {}
    for key, sub in ok[ok.method == "CREATOR"].groupby(["workload", "method"]):
        flagged = sum(json.loads(i)["verdict"] != ["trusted"] for i in sub["info"])
        verdicts[key] = f"{flagged}/{len(sub)} flagged"
    out["verdict"] = pd.Series(verdicts)
    return out.reset_index()


def _cell(values, best):
    text = f"{values:.2f}" if isinstance(values, float) else str(values)
    return f"**{text}**" if best else text


def common_seeds(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the seeds that every method of their workload has a row for."""
    keep = []
    for _, sub in df.groupby("workload", sort=False):
        per_method = sub.groupby("method").seed.apply(set)
        seeds = set.intersection(*per_method)
        keep.append(sub[sub.seed.isin(seeds)])
    return pd.concat(keep)


def markdown_tables(df: pd.DataFrame) -> str:
    """The results page's tables, computed from the rows of a run.

    Per workload (rows) and method (columns): mean SHD / mean MCC over the
    fits that finished, the best of each bold (ties bold too), the number of
    fits behind each cell; then the median seconds per fit, the mean number
    of edges each method returns beside the true graphs' mean, and the issue
    kinds of CREATOR's verdict with how many fits raised each.
    """
    ok = df[df.status == "ok"]
    workloads = list(dict.fromkeys(df.workload))
    methods = list(dict.fromkeys(df.method))
    g = ok.groupby(["workload", "method"])
    shd, mcc = g.shd_corr.mean(), g.mcc.mean()
    fits = g.size()
    total = df.groupby(["workload", "method"]).size()
    lines = ["| workload | " + " | ".join(methods) + " |",
             "|---" * (len(methods) + 1) + "|"]
    for w in workloads:
        row_shd = {m: shd.get((w, m)) for m in methods}
        row_mcc = {m: mcc.get((w, m)) for m in methods}
        best_shd = min(v for v in row_shd.values() if v is not None)
        best_mcc = max(v for v in row_mcc.values() if v is not None)
        cells = []
        for m in methods:
            if row_shd[m] is None:
                cells.append(f"— (0/{total.get((w, m), 0)} fits)")
                continue
            cell = (_cell(row_shd[m], np.isclose(row_shd[m], best_shd)) + " / "
                    + _cell(row_mcc[m], np.isclose(row_mcc[m], best_mcc)))
            if fits[(w, m)] != total[(w, m)]:
                cell += f" ({fits[(w, m)]}/{total[(w, m)]} fits)"
            cells.append(cell)
        lines.append(f"| `{w}` | " + " | ".join(cells) + " |")
    cpu = "clock" in df and (df["clock"] == "cpu").all()
    lines += ["", f"Median {'CPU ' if cpu else ''}seconds per fit:", "",
              "| workload | " + " | ".join(methods) + " |",
              "|---" * (len(methods) + 1) + "|"]
    secs = g.seconds.median()
    for w in workloads:
        lines.append(f"| `{w}` | " + " | ".join(
            f"{secs[(w, m)]:.2g}" if (w, m) in secs else "—" for m in methods) + " |")
    lines += ["", "Mean edges returned (the true graphs' mean in the first column):", "",
              "| workload | true | " + " | ".join(methods) + " |",
              "|---" * (len(methods) + 2) + "|"]
    edges = g.n_est_edges.mean()
    true_edges = ok.drop_duplicates(["workload", "seed"]).groupby("workload").n_true_edges.mean()
    for w in workloads:
        lines.append(f"| `{w}` | {true_edges[w]:.2f} | " + " | ".join(
            f"{edges[(w, m)]:.2f}" if (w, m) in edges else "—" for m in methods) + " |")
    creator = ok[ok.method == "CREATOR"]
    if len(creator):
        lines += ["", "CREATOR's verdict (fits that raised each issue kind; "
                  "\"trusted\": no issue):", "",
                  "| workload | fits | trusted | issue kinds raised |", "|---|---|---|---|"]
        for w in workloads:
            sub = creator[creator.workload == w]
            if not len(sub):
                continue
            kinds = [json.loads(i)["verdict"] for i in sub["info"]]
            trusted = sum(k == ["trusted"] for k in kinds)
            counts = pd.Series([x for k in kinds if k != ["trusted"] for x in k]).value_counts()
            raised = ", ".join(f"{kind} ({c})" for kind, c in counts.items()) or "none"
            lines.append(f"| `{w}` | {len(sub)} | {trusted} | {raised} |")
    gin = ok[ok["info"].fillna("").str.contains('"clusters"')]
    if len(gin):
        lines += ["", "Clusters GIN found (of the latents' count), per fit:", "",
                  "| workload | method | fits | clusters found, mean | range |",
                  "|---|---|---|---|---|"]
        for (w, m), sub in gin.groupby(["workload", "method"], sort=False):
            n = [len(json.loads(i)["clusters"]) for i in sub["info"]]
            lines.append(f"| `{w}` | {m} | {len(n)} | {np.mean(n):.2f} | {min(n)}–{max(n)} |")
    seeds = sorted(set(df.seed))
    clock = (df["clock"].fillna("wall") if "clock" in df else
             pd.Series("wall", index=df.index)).map({"wall": "", "cpu": " of CPU time"})
    limit = df.time_limit.map("{:g} s".format) + clock
    by_limit = df.groupby(limit, sort=False).method.unique()
    limits = "; ".join(f"{t} ({', '.join(ms)})" for t, ms in by_limit.items())
    if limit.nunique() == 1:
        limits = limit.iloc[0]
    lines += ["", f"Seeds {seeds[0]}–{seeds[-1]} ({len(seeds)} per cell at most), "
              f"{int(df.n_samples.iloc[0])} rows per environment, "
              f"time limit per fit: {limits}."]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=2000, help="rows per environment")
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--methods", nargs="+",
                    default=["CREATOR", "LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)",
                             "GIN", "GIN (tests by variable)"])
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per fit")
    ap.add_argument("--in-process", action="store_true",
                    help="run every fit in this process under a SIGALRM limit instead of a "
                         "child process per fit (saves the start-up of a process per fit)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="with --in-process: limit (and report) elapsed time or this "
                         "process's CPU time per fit (cpu: other jobs on a shared machine "
                         "do not count against a fit)")
    ap.add_argument("--out", default="benchmarks/results/peers/table.csv")
    ap.add_argument("--table", metavar="CSV", nargs="+",
                    help="print the results page's markdown tables of the rows in the CSV "
                         "files (concatenated) and exit (no fits)")
    ap.add_argument("--common-seeds", action="store_true",
                    help="with --table: keep, per workload, only the seeds every method has "
                         "a row for (a partial run beside a full one)")
    args = ap.parse_args(argv)
    if args.table:
        df = pd.concat([pd.read_csv(f) for f in args.table])
        df = df[df.workload.isin(args.workloads)]
        if args.common_seeds:
            df = common_seeds(df)
        print(markdown_tables(df))
        return
    start = time.perf_counter()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df = run(args.workloads, _methods(args.methods), args.seeds, args.n, args.time_limit,
             args.first_seed, out, args.in_process, args.clock)
    summary = summarise(df)
    summary.to_csv(out.with_name(out.stem + "_summary.csv"), index=False)
    print(summary.to_string(index=False))
    print(f"{len(df)} fits in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
