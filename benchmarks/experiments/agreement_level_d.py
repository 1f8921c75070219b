"""The verdict's order-check signals across d, for choosing a level that depends on d.

One row per default fit (JSON lines): SHD, correct order, the calibrated ICA
disagreement (``checks["ica_agreement"]["calibrated"]``), the worst latent
condition number, the weak ordering steps and the issues raised. ``summary``
prints, per simulator and d, quantiles of the calibrated disagreement of fits
with SHD <= 1 and with SHD >= 2, and the flagged shares at a list of levels;
``compare`` re-decides the default verdict on every row with the fixed levels
(4.5, 1e6) and with ``quality.order_levels(d)``; ``refinement`` compares,
at d = 10 and without the ``measured`` family, the rows fitted with
``disentangle="evidence"`` (the default before ``"auto"``) with the rows of
the current defaults, decided with ``order_levels(10)``.

Usage::

    python benchmarks/experiments/agreement_level_d.py run --simulator package \\
        --ds 5,7,10 --first-seed 0 --seeds 20 \\
        --out benchmarks/results/agreement_level/tuning_package.jsonl
    python benchmarks/experiments/agreement_level_d.py summary \\
        benchmarks/results/agreement_level/tuning_*.jsonl
    python benchmarks/experiments/agreement_level_d.py compare \\
        benchmarks/results/agreement_level/fresh_*.jsonl
    python benchmarks/experiments/agreement_level_d.py refinement \\
        benchmarks/results/agreement_level/fresh_*.jsonl

Seeds 0-99 are the zoo's tuning seeds; n = 1000 per environment below d = 10
and 2000 at d >= 10 (the cells of the accuracy bars), K = d.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402
from zoo import BAR_FAMILIES, data_of, settings_of  # noqa: E402


def fit_row(simulator: str, family: str, d: int, seed: int) -> dict:
    n = 2000 if d >= 10 else 1000
    X, A, Y = data_of(simulator, family, d, d, n, seed)
    row = {"simulator": simulator, "family": family, "d": d, "n": n, "seed": seed,
           "settings": settings_of(d)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = CREATOR(d, random_state=seed).fit(X)
        except ValueError as exc:  # a refused data set is a result
            return {**row, "status": "failed", "error": str(exc)}
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    quality = model.diagnostics_["quality"]
    checks = quality["checks"]
    cond = checks["conditioning"]
    return {
        **row, "status": "ok", "shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
        "cal": checks["ica_agreement"]["calibrated"],
        "cond": cond["condition_numbers"][cond["worst_environment"]],
        "weak": checks["weak_ordering_steps"],
        "issues": sorted({i["kind"] for i in quality["issues"]}),
    }


def _current(row: dict) -> bool:
    """Whether the row was fitted with the estimator's current settings."""
    return row.get("settings") == settings_of(row["d"])


def _rows(paths: list[str]) -> list[dict]:
    rows = row_files.read_jsonl(paths)
    return [r for r in rows if _current(r)]


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    families = args.families.split(",") if args.families else list(BAR_FAMILIES)
    done = set()
    if row_files.exists(out):  # resume: rows of the current settings already written are kept
        done = {(r["family"], r["d"], r["seed"])
                for r in row_files.read_jsonl(out) if _current(r)}
    with row_files.open_text(out, "a") as fh:
        for d in [int(x) for x in args.ds.split(",")]:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for family in families:
                    if (family, d, seed) in done:
                        continue
                    fh.write(json.dumps(fit_row(args.simulator, family, d, seed)) + "\n")
                    fh.flush()


def summary(paths: list[str], levels: list[float]) -> None:
    rows = _rows(paths)
    failed = [r for r in rows if r.get("status") == "failed"]
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    print(f"{len(failed)} refused data sets: " + "; ".join(
        f"{r['simulator']} {r['family']} d={r['d']} seed {r['seed']}" for r in failed))
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["simulator"], r["d"]), []).append(r)
    header = " | ".join(f"flagged right / wrong at {lv:g}" for lv in levels)
    print("| simulator | d | fits | right (SHD <= 1): median, 90 %, 95 % of cal "
          f"| wrong (SHD >= 2): n, median cal | {header} |")
    for (sim, d), rs in sorted(groups.items()):
        right = np.array([r["cal"] for r in rs if r["shd"] <= 1])
        wrong = np.array([r["cal"] for r in rs if r["shd"] >= 2])
        q = np.quantile(right, [0.5, 0.9, 0.95]) if right.size else [np.nan] * 3
        cells = [f"{np.mean(right >= lv):.0%} / "
                 f"{np.mean(wrong >= lv) if wrong.size else np.nan:.0%}" for lv in levels]
        print(f"| {sim} | {d} | {len(rs)} | {q[0]:.2f}, {q[1]:.2f}, {q[2]:.2f} | {wrong.size}, "
              f"{np.median(wrong) if wrong.size else np.nan:.2f} | " + " | ".join(cells) + " |")


def _flagged(r: dict, disagreement: float, condition: float) -> bool:
    """The default verdict on a row, re-decided at the order check's levels given."""
    others = {k for k in r["issues"] if k != "unreliable_order"}
    return bool(others) or r["cal"] >= disagreement or r["cond"] >= condition or bool(r["weak"])


def compare(paths: list[str]) -> None:
    """Fits flagged with the levels of d = 5 (fixed) and with :func:`order_levels` of d."""
    from creator_plugin.quality import order_levels

    rows = [r for r in _rows(paths) if r.get("status", "ok") == "ok"]
    print("| simulator | d | fits | SHD <= 1 | SHD >= 2 | flagged, SHD <= 1: fixed | "
          "SHD >= 2: fixed | SHD <= 1: growing | SHD >= 2: growing |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (sim, d) in sorted({(r["simulator"], r["d"]) for r in rows}):
        rs = [r for r in rows if r["simulator"] == sim and r["d"] == d]
        right = [r for r in rs if r["shd"] <= 1]
        wrong = [r for r in rs if r["shd"] >= 2]
        cells = []
        for levels in (order_levels(5), order_levels(d)):
            for group in (right, wrong):
                k = sum(_flagged(r, *levels) for r in group)
                cells.append(f"{k} ({k / max(len(group), 1):.0%})")
        print(f"| {sim} | {d} | {len(rs)} | {len(right)} | {len(wrong)} | " + " | ".join(cells)
              + " |")


def refinement(paths: list[str], d: int = 10, family: str | None = None) -> None:
    """Rows of ``disentangle="evidence"`` against the current defaults' (without
    ``measured``, or of ``family`` only)."""
    from creator_plugin.quality import order_levels

    rows = row_files.read_jsonl(paths)
    rows = [r for r in rows if r["d"] == d and r.get("status", "ok") == "ok"
            and (r["family"] == family if family else r["family"] != "measured")]
    levels = order_levels(d)
    print("| simulator | settings | fits | mean SHD | SHD <= 1 | SHD >= 2 | "
          "flagged, SHD <= 1 | flagged, SHD >= 2 |")
    print("|---|---|---|---|---|---|---|---|")
    for sim in sorted({r["simulator"] for r in rows}):
        for label, key in (("evidence", settings_of(d, {"refine__disentangle": False})),
                           ("current", settings_of(d))):
            rs = [r for r in rows if r["simulator"] == sim and r["settings"] == key]
            right = [r for r in rs if r["shd"] <= 1]
            wrong = [r for r in rs if r["shd"] >= 2]
            cells = [f"{k} ({k / max(len(g), 1):.0%})"
                     for g in (right, wrong) for k in [sum(_flagged(r, *levels) for r in g)]]
            mean = np.mean([r["shd"] for r in rs]) if rs else np.nan
            print(f"| {sim} | {label} | {len(rs)} | {mean:.2f} | {len(right)} | {len(wrong)} | "
                  + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--simulator", choices=["package", "independent"], required=True)
    r.add_argument("--families", default=None)
    r.add_argument("--ds", default="5,7,10")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--seeds", type=int, default=20)
    r.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("paths", nargs="+")
    s.add_argument("--levels", default="4.5,6,8,10,12")
    c = sub.add_parser("compare")
    c.add_argument("paths", nargs="+")
    f = sub.add_parser("refinement")
    f.add_argument("paths", nargs="+")
    f.add_argument("--family", default=None,
                   help="only this family (default: every family but measured)")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    elif args.command == "compare":
        compare(args.paths)
    elif args.command == "refinement":
        refinement(args.paths, family=args.family)
    else:
        summary(args.paths, [float(x) for x in args.levels.split(",")])


if __name__ == "__main__":
    main()
