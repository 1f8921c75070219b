"""CREATOR's clamped reading against pooled FastICA on Multi-Node-CRL's generator.

One row per (noise, K, seed, method): ``simulate_family("multi_node_crl", 5, K,
2000, n_features=5, noise=noise, random_state=seed)``, K = 5 (the generator's
default, K = d) and K = 6 (d + 1). Methods:

* ``CREATOR``: ``CREATOR(5, random_state=seed % 10000).fit(sim.X)`` (defaults);
  the row records whether it was refused, its verdict's issue kinds and
  whether the verdict names the regime and a method;
* ``pooled FastICA``: every environment centred, the rows pooled, whitened
  PCA to d dimensions, then ``sklearn.decomposition.FastICA`` (unit-variance
  whitening, ``random_state=seed % 10000``); its latents are the sources, its
  graph empty (it reads none);
* ``pooled FastICA (uncentred)``: the same on the pooled rows without
  centring each environment (the environments' mean shifts kept);
* ``pooled PCA``: the whitened PCA scores alone (the latents that the bench's
  ``PCA+ICA-LiNGAM (pooled)`` returns).

Scores: :func:`creator_plugin.benchmark.scoring.score` (``mcc``, ``shd_corr``).
Rows are appended per fit; a rerun skips the rows already in ``--out``.

Usage (tuning seeds 50000 + s, evaluation seeds 300100 + s)::

    OMP_NUM_THREADS=1 python benchmarks/clamped_bench.py --first-seed 300100 --seeds 20 \\
        --out benchmarks/results/clamped/multi_node_crl_300100.csv
    python benchmarks/clamped_bench.py --table benchmarks/results/clamped/multi_node_crl_300100.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA, FastICA

from creator_plugin import CREATOR, simulate_family
from creator_plugin.benchmark.scoring import score

D, N = 5, 2000
COLUMNS = ["noise", "K", "seed", "method", "status", "seconds", "mcc", "shd_corr",
           "n_true_edges", "n_est_edges", "kinds", "names_regime", "methods", "identified"]


def pooled(X_list, seed, ica: bool, centre: bool = True):
    """Whitened pooled PCA scores of the (per-environment centred) rows, then FastICA if ``ica``."""
    centred = [x - x.mean(axis=0) if centre else x for x in X_list]
    sizes = np.cumsum([len(x) for x in centred])[:-1]
    Z = PCA(D, whiten=True).fit_transform(np.vstack(centred))
    if ica:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Z = FastICA(D, whiten="unit-variance", random_state=seed).fit_transform(Z)
    return np.split(Z, sizes)


def fit_row(noise: str, K: int, seed: int, method: str) -> dict:
    """One row of the table."""
    sim = simulate_family("multi_node_crl", D, K, N, n_features=D, noise=noise,
                          random_state=seed)
    row = {"noise": noise, "K": K, "seed": seed, "method": method,
           "n_true_edges": int(sim.adjacency.sum())}
    t0 = time.perf_counter()
    extra = {"kinds": "[]", "names_regime": False, "methods": "[]", "identified": ""}
    if method == "CREATOR":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = CREATOR(D, random_state=seed % 10000).fit(sim.X)
        except ValueError as exc:
            return {**row, **extra, "status": "refused: " + str(exc)[:80],
                    "seconds": time.perf_counter() - t0, "mcc": 0.0, "shd_corr": "",
                    "n_est_edges": ""}
        adjacency, latents = model.adjacency_matrix_, model.latents_
        quality = model.diagnostics_.get("quality") or {}
        regime = quality.get("checks", {}).get("regime") or {}
        kinds = list(dict.fromkeys(i["kind"] for i in quality.get("issues", [])))
        extra = {"kinds": json.dumps(kinds),
                 "names_regime": "interventional_regime" in kinds
                 and regime.get("reading") == "clamped" and bool(regime.get("methods")),
                 "methods": json.dumps(regime.get("methods", [])),
                 "identified": len(model.diagnostics_.get("clamped", {}).get(
                     "identified_latents", []))}
    else:
        latents = pooled(sim.X, seed % 10000, ica=method != "pooled PCA",
                         centre=method != "pooled FastICA (uncentred)")
        adjacency = np.zeros((D, D), dtype=int)
    s = score(sim.adjacency, sim.Y, adjacency, latents)
    return {**row, **extra, "status": "ok", "seconds": time.perf_counter() - t0,
            "mcc": s["mcc"], "shd_corr": s["shd_corr"], "n_est_edges": s["n_est_edges"]}


def run(first_seed: int, n_seeds: int, out: Path) -> None:
    """Append every missing row to ``out``."""
    done = set()
    if out.exists():
        with out.open() as f:
            done = {(r["noise"], int(r["K"]), int(r["seed"]), r["method"])
                    for r in csv.DictReader(f)}
    new = not out.exists()
    with out.open("a", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        if new:
            writer.writeheader()
        for noise in ("gaussian", "laplace"):
            for K in (D, D + 1):
                for seed in range(first_seed, first_seed + n_seeds):
                    for method in ("CREATOR", "pooled FastICA", "pooled FastICA (uncentred)",
                                   "pooled PCA"):
                        if (noise, K, seed, method) in done:
                            continue
                        writer.writerow(fit_row(noise, K, seed, method))
                        f.flush()


def table(path: Path) -> str:
    """Markdown table: per (noise, K, method) fits, refused, mean MCC, mean SHD, regime named."""
    groups = defaultdict(list)
    with path.open() as f:
        for r in csv.DictReader(f):
            groups[(r["noise"], r["K"], r["method"])].append(r)
    lines = ["| noise | K | method | fits | refused | mean MCC | min MCC | mean SHD "
             "| true edges (mean) | verdict names regime + method |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (noise, K, method), rows in sorted(groups.items()):
        mcc = np.array([float(r["mcc"]) for r in rows])
        shd = [float(r["shd_corr"]) for r in rows if r["shd_corr"] != ""]
        refused = sum(not r["status"].startswith("ok") for r in rows)
        named = (f"{sum(r['names_regime'] == 'True' for r in rows)} / {len(rows)}"
                 if method == "CREATOR" else "—")
        edges = np.mean([int(r["n_true_edges"]) for r in rows])
        lines.append(f"| {noise} | {K} | {method} | {len(rows)} | {refused} | "
                     f"{mcc.mean():.4f} | {mcc.min():.4f} | "
                     f"{np.mean(shd) if shd else float('nan'):.2f} | {edges:.2f} | {named} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=50000)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--table", type=Path)
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    run(args.first_seed, args.seeds, args.out)
    print(table(args.out))


if __name__ == "__main__":
    main()
