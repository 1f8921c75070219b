"""Nothing lost: the route for sparse changes on the zoo's bar families.

Every bar family of ``benchmarks/zoo.py`` (:data:`zoo.BAR_FAMILIES`, K = d,
n = 2000 per environment, the package's simulator) is fitted with CREATOR's
defaults by the package on the path. A row records whether the fit took the
route for sparse changes (``diagnostics_["mechanism_changes"]["route"]``),
its SHD and whether its order is correct. Where the route was not taken the
fit is the paper route's, the same to the bit as the version without the
route (``tests/test_refactor_identity.py``); where it was, the same data are
fitted again by the other version, ``--baseline`` (a checkout of the package
without the route, run in a subprocess), and that row is written beside it.

Usage (fresh seeds; ``/tmp/main`` a worktree of the version without the route)::

    OMP_NUM_THREADS=1 nice python benchmarks/sparse_changes_zoo.py run --d 5 \\
        --first-seed 400000 --seeds 100 --baseline /tmp/main \\
        --out benchmarks/results/sparse_changes/zoo_d5.csv
    python benchmarks/sparse_changes_zoo.py table benchmarks/results/sparse_changes/zoo_d5.csv

Or both versions on every data set, one run each (``--version without`` with
the version without the route on ``PYTHONPATH``)::

    PYTHONPATH=. python benchmarks/sparse_changes_zoo.py run --d 5 --first-seed 420000 \\
        --seeds 100 --out rows.csv
    PYTHONPATH=/tmp/main python benchmarks/sparse_changes_zoo.py run --version without \\
        --d 5 --first-seed 420000 --seeds 100 --out rows.csv

Where a fit costs minutes (``measured`` at d = 10), ``decide`` computes only
what the route's choice rests on, the fit's own steps before it (the
reduction, the ordering and the change test, with the fit's random state):
a row with status ``decided`` records the route a fit of that data would
take. Where that is the paper's route the fit is the version without the
route's, to the bit, so the two versions' SHD and order agree without
fitting either; where it is the sparse route both versions are fitted and
their rows written as ``run`` writes them::

    OMP_NUM_THREADS=1 nice python benchmarks/sparse_changes_zoo.py decide --d 10 \\
        --first-seed 440000 --seeds 100 --baseline /tmp/main --families measured \\
        --out benchmarks/results/sparse_changes/zoo_d10_440000.csv

Rows are appended as each fit finishes; a rerun skips the (version, family,
seed) rows already there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_files  # noqa: E402
import zoo  # noqa: E402

from creator_plugin import _fit, sparse_changes  # noqa: E402
from creator_plugin._config import FitConfig  # noqa: E402
from creator_plugin._random import as_generator  # noqa: E402
from creator_plugin._validation import check_environments  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402

N = 2000
COLUMNS = ["version", "family", "d", "seed", "status", "route", "shd", "correct_order",
           "seconds", "error"]


def fit_row(family: str, d: int, seed: int, version: str) -> dict:
    """One fit of CREATOR's defaults on the zoo's data of (family, seed), scored."""
    X, A, Y = zoo.data_of("package", family, d, d, N, seed)
    row = {"version": version, "family": family, "d": d, "seed": seed, "error": ""}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = zoo.estimator(d, random_state=seed).fit(X)
    except Exception as exc:  # a crash is a result
        return {**row, "status": "failed", "route": "", "shd": "", "correct_order": "",
                "seconds": time.perf_counter() - start, "error": f"{type(exc).__name__}: {exc}"}
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    route = model.diagnostics_.get("mechanism_changes", {}).get("route", "")
    return {**row, "status": "ok", "route": route, "shd": int(s["shd"]),
            "correct_order": bool(s["correct_order"]), "seconds": time.perf_counter() - start}


def route_decision(estimator, X: list) -> str:
    """The route ``estimator.fit(X)`` takes (``"sparse"`` or ``"paper"``), from the fit's
    steps before the choice only: the reduction and the ordering with the fit's random
    state, the change test against the first environment, then the fit's own rule."""
    d = estimator.n_latent
    X_list = check_environments(X, None, n_latent=d)
    config = FitConfig.from_estimator(estimator, d, check_n_latent=True)
    stage = _fit.order_stage(X_list, config, as_generator(estimator.random_state), key=False)
    changes = sparse_changes.mechanism_changes(stage.reduced, stage.ordering.alphas, 0)
    return _fit._route(config, changes, stage)


def decided_row(family: str, d: int, seed: int, version: str) -> dict:
    """The route a default fit of the zoo's data of (family, seed) takes, without the fit."""
    X, _, _ = zoo.data_of("package", family, d, d, N, seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        route = route_decision(zoo.estimator(d, random_state=seed), X)
    return {"version": version, "family": family, "d": d, "seed": seed, "status": "decided",
            "route": route, "shd": "", "correct_order": "",
            "seconds": time.perf_counter() - start, "error": ""}


def baseline_row(baseline: str, family: str, d: int, seed: int) -> dict:
    """:func:`fit_row` by the package of the checkout ``baseline`` (a subprocess)."""
    env = {**os.environ, "PYTHONPATH": baseline}
    out = subprocess.run(
        [sys.executable, __file__, "one", "--family", family, "--d", str(d), "--seed",
         str(seed)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace, decide: bool = False) -> None:
    def fit(version: str, family: str, seed: int) -> list[dict]:
        rows = [decided_row(family, args.d, seed, version)] if decide else []
        if not rows or rows[0]["route"] == "sparse":
            rows = [fit_row(family, args.d, seed, version)]
        if rows[0]["route"] == "sparse" and args.baseline:
            rows.append(baseline_row(args.baseline, family, args.d, seed))
        return rows

    keys = [(args.version, fam, seed)  # seed-major
            for seed in range(args.first_seed, args.first_seed + args.seeds)
            for fam in args.families or zoo.BAR_FAMILIES]
    row_files.append_fits(args.out, COLUMNS, keys, fit)


def table(path: str, label: str = "route") -> str:
    """Per family: seeds, route taken, mean SHD and correct-order rate of both versions
    (``label``: the column name of the version with the route)."""
    df = pd.read_csv(path)
    d = int(df.d.iloc[0])
    lines = [f"| family, d = {d} | seeds | route taken | mean SHD ({label}) | mean SHD (without) "
             f"| correct order ({label}) | correct order (without) |", "|---" * 7 + "|"]
    if df.empty:
        return "\n".join(lines)
    for fam in [f for f in zoo.BAR_FAMILIES if f in set(df.family)]:
        ours = df[(df.family == fam) & (df.version == "route")].set_index("seed")
        if ours.empty:
            continue
        base = df[(df.family == fam) & (df.version == "without")].set_index("seed")
        ok = ours[ours.status == "ok"]
        decided = ours[ours.status == "decided"]
        taken = ok.route == "sparse"
        # where the route is not taken the version without it fits the same (identity tests)
        shd_b = ok.shd.astype(float).copy()
        order_b = ok.correct_order.astype(bool).copy()
        for s in ok.index[taken] if base.empty else ok.index:  # a "without" row wherever run
            if s in base.index:
                shd_b[s] = float(base.shd[s])
                order_b[s] = bool(base.correct_order[s] in (True, "True"))
        failed = int((~ours.status.isin(["ok", "decided"])).sum())
        seeds = (f"{len(ok) + len(decided)} ({len(ok)} fitted)" if len(decided)
                 else f"{len(ok)}")
        lines.append(
            f"| {fam} | {seeds}{f' (+{failed} failed)' if failed else ''} "
            f"| {int(taken.sum() + (decided.route == 'sparse').sum())}"
            f" | {ok.shd.astype(float).mean():.2f} | {shd_b.mean():.2f} "
            f"| {np.mean(ok.correct_order.astype(bool)):.2f} | {order_b.mean():.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--d", type=int, default=5)
    common.add_argument("--first-seed", type=int, default=400000)
    common.add_argument("--seeds", type=int, default=100)
    common.add_argument("--baseline", default=None,
                        help="checkout of the package without the route (its PYTHONPATH), "
                             "fitted where the route is taken")
    common.add_argument("--version", default="route", choices=["route", "without"],
                        help="label of the package on the path (run twice, once per version, "
                             "to fit both on every data set)")
    common.add_argument("--out", required=True)
    common.add_argument("--families", nargs="+", choices=zoo.BAR_FAMILIES, default=None,
                        help="a subset of the bar families (default: all)")
    sub.add_parser("run", parents=[common], help="fit every data set")
    sub.add_parser("decide", parents=[common],
                   help="the route's choice only; fits where the route is taken")
    o = sub.add_parser("one", help="one fit, printed as a JSON row (the baseline's subprocess)")
    o.add_argument("--family", required=True)
    o.add_argument("--d", type=int, required=True)
    o.add_argument("--seed", type=int, required=True)
    t = sub.add_parser("table")
    t.add_argument("csv")
    t.add_argument("--label", default="route", help="column name of the version with the route")
    args = ap.parse_args(argv)
    if args.command in ("run", "decide"):
        run(args, decide=args.command == "decide")
    elif args.command == "one":
        print(json.dumps(fit_row(args.family, args.d, args.seed, "without"), default=str))
    else:
        print(table(args.csv, args.label))


if __name__ == "__main__":
    main()
