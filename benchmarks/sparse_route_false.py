"""Where the route for sparse changes should not be taken: is it, and does it lose?

The families on which an earlier rule for the route (fewer than half of the
cells changed, at 34e08c9 / 4324bb8) was taken and lost: the paper family
at few rows (every mechanism changes, the strict change level misses some)
and single-node soft interventions (an observational environment and one per
latent whose incoming weights and noise scale change, the construction of
``tests/test_verdict_conditions.py``). Every data set is fitted with
CREATOR's defaults by the package on the path; a row records the route,
the change test's share and undecided cells, SHD, MCC, whether the order is
correct and the verdict's issue kinds. ``run`` once per version (each with
its checkout on ``PYTHONPATH``) writes the rows with a ``--version`` label;
``table`` joins the versions on the same data.

Usage (``/tmp/without`` a checkout without the route, ``/tmp/earlier`` one
with the earlier rule)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/sparse_route_false.py run \\
        --version this --first-seed 720000 --seeds 30 --out rows.csv
    PYTHONPATH=/tmp/earlier ... run --version earlier ...
    PYTHONPATH=/tmp/without ... run --version without ...
    python benchmarks/sparse_route_false.py table rows.csv

Rows are appended as each fit finishes; a rerun skips the (version, family,
seed) rows already there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin import CREATOR, simulate, simulate_family
from creator_plugin.benchmark.scoring import score

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_files  # noqa: E402

#: family name -> (d, K, n): the paper family, and ``soft`` (single-node soft, K = d + 1).
FAMILIES = {
    "paper d4 K5 n300": ("paper", 4, 5, 300),
    "paper d5 K6 n500": ("paper", 5, 6, 500),
    "paper d5 K5 n300": ("paper", 5, 5, 300),
    "paper d3 K4 n300": ("paper", 3, 4, 300),
    "soft d4 K5 n800": ("soft", 4, 5, 800),
}
COLUMNS = ["version", "family", "seed", "status", "route", "share", "undecided", "shd", "mcc",
           "correct_order", "issues", "seconds", "error"]


def data_of(family: str, seed: int):
    """``(X_list, adjacency, Y_list, d)`` of a family's data set ``seed``."""
    kind, d, K, n = FAMILIES[family]
    if kind == "paper":
        sim = simulate_family("paper", d, K, n, random_state=seed)
        return sim.X, sim.adjacency, sim.Y, d
    sim = simulate(d, K, n, edge_prob=0.8, random_state=seed)
    W = [sim.W[0].copy() for _ in range(K)]
    Om = [sim.Omega[0].copy() for _ in range(K)]
    for k in range(1, K):
        W[k][:, k - 1] = sim.W[k][:, k - 1]
        Om[k][k - 1, k - 1] = sim.Omega[k][k - 1, k - 1]
    Y = [z @ om @ np.linalg.inv(np.eye(d) - w) for z, om, w in zip(sim.Z, Om, W)]
    return [y @ sim.H.T for y in Y], sim.adjacency, Y, d


def fit_row(family: str, seed: int, version: str) -> dict:
    """One fit of CREATOR's defaults (``random_state=0``, as the tests), scored."""
    X, A, Y, d = data_of(family, seed)
    row = {"version": version, "family": family, "seed": seed, "error": ""}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = CREATOR(d, random_state=0).fit(X)
    except Exception as exc:  # a crash is a result
        return {**row, "status": "failed", "seconds": time.perf_counter() - start,
                "error": f"{type(exc).__name__}: {exc}"[:300]}
    s = score(A, Y, m.adjacency_matrix_, m.latents_, m.causal_order_)
    rec = m.diagnostics_.get("mechanism_changes", {})
    kinds = sorted({i["kind"] for i in m.diagnostics_["quality"]["issues"]})
    return {**row, "status": "ok", "route": rec.get("route", "none"),
            "share": rec.get("share", ""), "undecided": rec.get("undecided", ""),
            "shd": int(s["shd_corr"]), "mcc": float(s["mcc"]),
            "correct_order": bool(s["correct_order"]), "issues": json.dumps(kinds),
            "seconds": time.perf_counter() - start}


def run(args: argparse.Namespace) -> None:
    keys = [(args.version, family, seed) for family in args.families or list(FAMILIES)
            for seed in range(args.first_seed, args.first_seed + args.seeds)]
    row_files.append_fits(args.out, COLUMNS, keys,
                          lambda version, family, seed: [fit_row(family, seed, version)])


def table(path: str, versions: tuple[str, ...] = ("earlier", "this"),
          first: str = "family") -> str:
    """Per family and version with a route: fits, route taken, taken and worse / better
    (SHD against the version ``without`` on the same data), mean SHD of both, and the
    fits the version without the route flags that this version leaves silent (``first``:
    the first column's name)."""
    df = pd.read_csv(path)
    base = df[df.version == "without"].set_index(["family", "seed"])
    lines = [f"| {first} | version | fits | route taken | taken, SHD worse | taken, SHD better | "
             "mean SHD | mean SHD without | flagged without | silent where flagged without |",
             "|---" * 10 + "|"]
    for family in [f for f in FAMILIES if f in set(df.family)]:
        for version in [v for v in versions if v in set(df.version)]:
            ours = df[(df.version == version) & (df.family == family)].set_index(
                ["family", "seed"])
            ours = ours[ours.status == "ok"]
            b = base.reindex(ours.index)
            taken = ours.route == "sparse"
            worse = int((taken & (ours.shd > b.shd)).sum())
            better = int((taken & (ours.shd < b.shd)).sum())
            flagged = b.issues.map(lambda s: bool(json.loads(s))) if len(b) else b.issues
            silent = int((flagged & ours.issues.map(lambda s: not json.loads(s))).sum())
            lines.append(
                f"| {family} | {version} | {len(ours)} | {int(taken.sum())} | {worse} | {better}"
                f" | {ours.shd.mean():.2f} | {b.shd.mean():.2f} | {int(flagged.sum())} "
                f"| {silent} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--version", required=True, help="label of the package on the path")
    r.add_argument("--first-seed", type=int, default=720000)
    r.add_argument("--seeds", type=int, default=30)
    r.add_argument("--families", nargs="+", choices=list(FAMILIES), default=None)
    r.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("csv")
    t.add_argument("--first", default="family", help="the first column's name")
    args = ap.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        print(table(args.csv, first=args.first))


if __name__ == "__main__":
    main()
