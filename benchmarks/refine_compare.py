"""The core alone against the refine steps: ``CREATOR(refine=None)`` beside ``refine="auto"``.

The zoo's bar families (:data:`zoo.BAR_FAMILIES`) at d = 5 (n = 1000 rows per
environment, as the zoo's d = 5 rows) and d = 10 (n = 2000), K = d, both
simulators, fitted twice on the same data sets: with ``refine=None`` (the
paper's three steps with the core's joint re-estimation and polish) and with
the default ``refine="auto"``. One row per fit (SHD, LocR², correct order,
seconds of the fit) goes to a JSON-lines file; ``table`` prints the page's
table from it. The seeds are a fresh block (120000-120019, above every block
in ``benchmarks/LOG.md``); nothing was chosen on them.

Usage::

    OMP_NUM_THREADS=1 nice python benchmarks/refine_compare.py run --d 5 --n 1000
    OMP_NUM_THREADS=1 nice python benchmarks/refine_compare.py run --d 10 --n 2000
    python benchmarks/refine_compare.py table
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_files  # noqa: E402
from zoo import BAR_FAMILIES, data_of  # noqa: E402

ROWS = Path(__file__).resolve().parent / "results" / "refine" / "refine_compare.jsonl"
FIRST_SEED = 120000
SETTINGS = {"none": None, "auto": "auto"}
SIMULATORS = ("package", "independent")


def fit_row(simulator: str, family: str, d: int, n: int, seed: int, setting: str) -> dict:
    """One fit of ``CREATOR(d, refine=...)`` to one data set, scored against its truth."""
    X, A, Y = data_of(simulator, family, d, d, n, seed)
    row = {"simulator": simulator, "family": family, "d": d, "K": d, "n": n, "seed": seed,
           "refine": setting}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        try:
            model = CREATOR(d, refine=SETTINGS[setting], random_state=seed).fit(X)
        except Exception as exc:  # a crash is a result
            return {**row, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}
        seconds = time.perf_counter() - start
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    return {**row, "status": "ok", "seconds": seconds, "shd": int(s["shd"]),
            "locr2": float(s["locr2"]), "correct_order": bool(s["correct_order"])}


def run(args: argparse.Namespace) -> None:
    rows = Path(args.rows)
    rows.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["simulator"], r["family"], r["d"], r["seed"], r["refine"])
            for r in (row_files.read_jsonl(rows) if row_files.exists(rows) else [])}
    with row_files.open_text(rows, "a") as fh:
        for seed in range(FIRST_SEED, FIRST_SEED + args.seeds):  # seed-major: even coverage
            for simulator in SIMULATORS:
                for family in BAR_FAMILIES:
                    for setting in SETTINGS:
                        if (simulator, family, args.d, seed, setting) in done:
                            continue
                        row = fit_row(simulator, family, args.d, args.n, seed, setting)
                        fh.write(json.dumps(row) + "\n")
                        fh.flush()


def table(rows: list[dict]) -> str:
    """Markdown: per d and family, the same data sets fitted both ways.

    Mean SHD of each, the paired difference (auto minus None) with its
    standard error and the data sets better / worse with ``"auto"``, mean
    LocR², correct orders and seconds per fit. A data set counts when both
    fits ran; failed fits are counted below the table.
    """
    lines = ["| d | family | data sets | mean SHD, `refine=None` | mean SHD, `\"auto\"` "
             "| difference (SE) | better / worse | LocR², None / auto "
             "| correct order, None / auto | s per fit, None / auto |", "|---" * 10 + "|"]
    by_key = {}
    for r in rows:
        if r["status"] == "ok":
            by_key.setdefault((r["simulator"], r["family"], r["d"], r["seed"]), {})[
                r["refine"]] = r
    pairs = [v for v in by_key.values() if set(v) == set(SETTINGS)]
    for d in sorted({p["none"]["d"] for p in pairs}):
        for family in [*BAR_FAMILIES, "all", "all but measured"]:
            cell = [p for p in pairs if p["none"]["d"] == d and (
                family == "all" or p["none"]["family"] == family
                or (family == "all but measured" and p["none"]["family"] != "measured"))]
            if not cell:
                continue

            def col(setting, key, cell=cell):
                return np.array([float(p[setting][key]) for p in cell])

            diff = col("auto", "shd") - col("none", "shd")
            se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
            label = f"**{family}**" if family.startswith("all") else family
            lines.append(
                f"| {d} | {label} | {len(cell)} | {col('none', 'shd').mean():.2f} "
                f"| {col('auto', 'shd').mean():.2f} | {diff.mean():+.2f} ({se:.2f}) "
                f"| {int((diff < 0).sum())} / {int((diff > 0).sum())} "
                f"| {col('none', 'locr2').mean():.3f} / {col('auto', 'locr2').mean():.3f} "
                f"| {100 * col('none', 'correct_order').mean():.0f} % / "
                f"{100 * col('auto', 'correct_order').mean():.0f} % "
                f"| {col('none', 'seconds').mean():.2f} / {col('auto', 'seconds').mean():.2f} |")
    failed = [r for r in rows if r["status"] != "ok"]
    note = "".join(f"\n\nFailed: {r['simulator']} {r['family']} d = {r['d']} seed "
                   f"{r['seed']} refine={r['refine']}: {r['error'][:80]}" for r in failed)
    return "\n".join(lines) + note


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--d", type=int, required=True)
    r.add_argument("--n", type=int, required=True)
    r.add_argument("--seeds", type=int, default=20)
    t = sub.add_parser("table")
    for p in (r, t):
        p.add_argument("--rows", default=str(ROWS))
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        print(table(row_files.read_jsonl(args.rows)))


if __name__ == "__main__":
    main()
