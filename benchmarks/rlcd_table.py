"""RLCD beside CREATOR: the table of docs/results/peers.md from ``creator bench`` rows.

The rows come from two ``creator bench`` runs (20 seeds a cell, K = d
environments of 1000 rows):

* the pure-indicator workload, d = 3 and 5, three pure indicators per
  latent, measurement noise 0.2 (``--mixing pure``);
* the package's default workload, d = 5 (every measurement mixes all
  latents).

Usage::

    creator bench --d 3 5 --mixing pure --indicators-per-latent 3 \\
        --measurement-noise 0.2 --seeds 20 --methods RLCD CREATOR \\
        --out benchmarks/results/rlcd/pure --no-figures
    creator bench --d 5 --seeds 20 --methods RLCD CREATOR \\
        --out benchmarks/results/rlcd/default --no-figures
    python benchmarks/rlcd_table.py benchmarks/results/rlcd/pure/results.csv \\
        benchmarks/results/rlcd/default/results.csv
"""

from __future__ import annotations

import argparse
import json

import pandas as pd


def _workload(row) -> str:
    if row.get("mixing") == "pure":
        return f"pure indicators ({int(row['indicators_per_latent'])} per latent), d = {row['d']}"
    return f"default, d = {row['d']}"


def markdown(frames: list[pd.DataFrame]) -> str:
    """One line per (workload, method): fits, latents found, edges, SHD (latents matched by
    correlation, :func:`creator_plugin.benchmark.scoring.correlation_scores`), SHD up to
    relabelling, MCC and seconds."""
    df = pd.concat(frames, ignore_index=True)
    df["d"] = df["n_latent"].astype(int)
    df["workload"] = df.apply(_workload, axis=1)
    lines = ["| workload | method | fits ok / failed / timed out | latents found (mean; true d) "
             "| measurements in no cluster (mean) | edges (mean; true mean) | SHD | SHD up to "
             "relabelling | MCC | median seconds per fit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (workload, method), g in df.groupby(["workload", "method"], sort=False):
        ok = g[g["status"] == "ok"]
        counts = "/".join(str(int((g["status"] == s).sum())) for s in ("ok", "failed", "timeout"))
        unclustered = "—"
        if method == "RLCD" and len(ok):
            left = ok["info"].map(lambda s: len(json.loads(s)["unclustered"]))
            unclustered = f"{left.mean():.2f}"
        lines.append(
            f"| {workload} | {method} | {counts} | {ok['n_est_latents'].mean():.2f}; "
            f"{int(g['d'].iloc[0])} | {unclustered} | {ok['n_est_edges'].mean():.2f}; "
            f"{ok['n_true_edges'].mean():.2f} | {ok['shd_corr'].mean():.2f} | "
            f"{ok['shd_min_relabel'].mean():.2f} | "
            f"{ok['mcc'].mean():.3f} | {ok['seconds'].median():.2g} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", help="results.csv files of creator bench")
    args = parser.parse_args(argv)
    print(markdown([pd.read_csv(p) for p in args.rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
