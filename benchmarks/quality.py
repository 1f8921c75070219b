"""Calibration of the fit-quality verdict.

Usage (tuning block, then a fresh block)::

    python benchmarks/quality.py --workload gaussian --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload default --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload homogeneous --first-seed 0 --seeds 200
    python benchmarks/quality.py --workload hard --first-seed 0 --seeds 600 --levels
    python benchmarks/quality.py --workload hard_setting2 --first-seed 0 --seeds 200 --levels
    python benchmarks/quality.py --workload hard --first-seed 0 --seeds 600 --resamples 8
    # ... and the same with --first-seed 1000
    python benchmarks/quality.py --overhead --first-seed 1000  # fit time, verdict on vs off

Prints a Markdown summary (with ``--levels`` for ``hard``, the trade-off
of the order check's levels) and optionally writes every fit to CSV.
Re-run after the ordering step changes: the order check's levels depend on
how often it fails.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Iterable
from itertools import product

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from creator_plugin import metrics
from creator_plugin.estimator import CREATOR, WeakEvidenceWarning
from creator_plugin.quality import assess_fit, order_levels
from creator_plugin.simulation import simulate
from creator_plugin.stability import resample_stability

__all__ = [
    "WORKLOADS",
    "instability_table",
    "level_table",
    "overhead_table",
    "run_verdict_benchmark",
    "summarize_hard",
    "summarize_rates",
    "verdict_cells",
]

WORKLOADS = ("gaussian", "default", "homogeneous", "hard", "hard_setting2")


def verdict_cells(workload: str) -> list[dict]:
    """The cells of a workload: ``{"workload", "d", "K"}``.

    ``"gaussian"`` and ``"default"``: d in 2..5, K in {d, 2d},
    ``"homogeneous"``: d in 2..5, K = 4.
    ``"hard"`` and ``"hard_setting2"``: d = K = 5.
    """
    if workload in ("gaussian", "default"):
        return [{"workload": workload, "d": d, "K": f * d} for d, f in product(range(2, 6), (1, 2))]
    if workload == "homogeneous":
        return [{"workload": workload, "d": d, "K": 4} for d in range(2, 6)]
    if workload in ("hard", "hard_setting2"):
        return [{"workload": workload, "d": 5, "K": 5}]
    raise ValueError(f"workload must be one of {WORKLOADS}, got {workload!r}.")


def _data(cell: dict, seed: int, n: int):
    d, K = cell["d"], cell["K"]
    if cell["workload"] == "gaussian":
        sim = simulate(d, K, n, noise_shape=2.0, random_state=seed)
        return sim.X, sim.Y, sim.adjacency
    if cell["workload"] == "homogeneous":
        sim = simulate(d, 1, K * n, random_state=seed)
        return np.array_split(sim.X[0], K), np.array_split(sim.Y[0], K), sim.adjacency
    setting = 2 if cell["workload"] == "hard_setting2" else 1
    sim = simulate(d, K, n, setting=setting, random_state=seed)
    return sim.X, sim.Y, sim.adjacency


def _refit(d: int):
    def refit(sample, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = CREATOR(d, quality=False, random_state=seed).fit(sample)
        return m.adjacency_matrix_, m.mean_, m.components_
    return refit


def _one(cell: dict, seed: int, n: int, levels: dict, resamples: int) -> dict:
    X, Y, adjacency = _data(cell, seed, n)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CREATOR(cell["d"], quality=False, random_state=seed).fit(X)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    # The check CREATOR(quality_resamples=resamples) runs inside its fit (the
    # resamples are seeded with the seed here, from the fit's stream there).
    stability = resample_stability(
        X, model.adjacency_matrix_, model.latents_, _refit(cell["d"]), resamples,
        random_state=seed,
    ) if resamples else None
    if resamples:
        levels = {"disagreement_level": order_levels(cell["d"], thorough=True)[0], **levels}
    verdict = assess_fit(
        model.latents_, X=X, ordering_steps=model.diagnostics_["ordering"],
        pruning=model.diagnostics_["pruning"], stability=stability, random_state=seed, **levels,
    )
    verdict_seconds = time.perf_counter() - start
    ev = metrics.evaluate(adjacency, Y, model.adjacency_matrix_, model.latents_,
                          model.causal_order_)
    c = verdict.checks
    return {
        **cell, "seed": seed, "n": n, "shd": ev["shd"], "locr2": ev["locr2"],
        "topological_divergence": ev["topological_divergence"],
        "fit_seconds": fit_seconds, "verdict_seconds": verdict_seconds,
        "issues": ";".join(verdict.kinds),
        "weak_evidence_warning": any(issubclass(w.category, WeakEvidenceWarning) for w in caught),
        "p_gaussian": c["gaussianity"]["p_value"],
        "p_homogeneous": c["heterogeneity"]["p_value"],
        "scaled_disagreement": c["ica_agreement"]["scaled"],
        "calibrated_disagreement": c["ica_agreement"]["calibrated"],
        "max_condition": max(c["conditioning"]["condition_numbers"]),
        "weak_steps": len(c["weak_ordering_steps"]),
        "effect_ratio": (c.get("effect_strength") or {}).get("ratio"),
        "n_latent_status": c["n_latent"]["status"],
        "resamples": resamples,
        "instability": stability["instability"] if stability else float("nan"),
        "resample_differences": ";".join(map(str, stability["differences"])) if stability else "",
    }


def run_verdict_benchmark(
    workload: str, seeds: Iterable[int], *, n: int = 1000, n_jobs: int | None = 1,
    levels: dict | None = None, resamples: int = 0,
) -> list[dict]:
    """Fit CREATOR and assess every fit of a workload.

    Parameters
    ----------
    workload : {"gaussian", "default", "homogeneous", "hard"}
    seeds : iterable of int
    n : int, default=1000
        Rows per environment.
    n_jobs : int, optional
        joblib workers.
    levels : dict, optional
        Keyword arguments for :func:`assess_fit` (its levels).
    resamples : int, default=0
        Run the verdict's resampling check with this many resamples
        (``CREATOR(quality_resamples=resamples)``); its refits count in the
        verdict's seconds.

    Returns
    -------
    list of dict
        One row per fit: cell, seed, SHD, LocR^2, seconds of the fit and of
        the verdict, the issues found and the statistics behind them.
    """
    tasks = [(c, s) for c in verdict_cells(workload) for s in seeds]
    return Parallel(n_jobs=n_jobs)(
        delayed(_one)(c, s, n, levels or {}, resamples) for c, s in tasks
    )


def _seed_range(rows: list[dict]) -> str:
    seeds = sorted({r["seed"] for r in rows})
    return f"seeds {seeds[0]}-{seeds[-1]}"


def _overhead(rows: list[dict]) -> str:
    fit = np.array([r["fit_seconds"] for r in rows])
    ver = np.array([r["verdict_seconds"] for r in rows])
    return (f"mean fit {fit.mean():.3f} s, mean verdict {ver.mean():.3f} s: fit + verdict = "
            f"{(fit.sum() + ver.sum()) / fit.sum():.2f} x the fit alone")


def summarize_rates(rows: list[dict], kind: str) -> str:
    """Markdown: per cell, the share of fits with any issue and with ``kind``."""
    lines = [
        f"{rows[0]['workload']} workload, {_seed_range(rows)}, n = {rows[0]['n']}; "
        + _overhead(rows) + ".",
        "",
        f"| d | K | fits | any issue | {kind} | WeakEvidenceWarning (fit) | mean SHD |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in sorted({(r["d"], r["K"]) for r in rows}):
        sub = [r for r in rows if (r["d"], r["K"]) == key]
        lines.append(
            f"| {key[0]} | {key[1]} | {len(sub)} | {np.mean([bool(r['issues']) for r in sub]):.1%} "
            f"| {np.mean([kind in r['issues'].split(';') for r in sub]):.1%} "
            f"| {np.mean([r['weak_evidence_warning'] for r in sub]):.1%} "
            f"| {np.mean([r['shd'] for r in sub]):.2f} |"
        )
    return "\n".join(lines)


def summarize_hard(rows: list[dict]) -> str:
    """Markdown: flagged shares among fits with SHD >= 3 and with SHD <= 1, by issue kind."""
    bad = [r for r in rows if r["shd"] >= 3]
    good = [r for r in rows if r["shd"] <= 1]
    kinds = ("not_identifiable", "no_heterogeneity", "unreliable_order", "weak_effects",
             "n_latent_mismatch", "unstable_result")

    def share(sub, pred):
        return f"{np.mean([pred(r) for r in sub]):.1%}" if sub else "-"

    lines = [
        f"{rows[0]['workload']} workload, d = K = 5, n = {rows[0]['n']}, {_seed_range(rows)} "
        f"({len(rows)} fits); "
        + _overhead(rows) + ".",
        "",
        "| fits | count | any issue | " + " | ".join(kinds) + " |",
        "|---|---|---|" + "---|" * len(kinds),
    ]
    for name, sub in (("SHD >= 3", bad), ("SHD <= 1", good)):
        lines.append(
            f"| {name} | {len(sub)} | {share(sub, lambda r: bool(r['issues']))} | "
            + " | ".join(share(sub, lambda r, k=k: k in r["issues"].split(";")) for k in kinds)
            + " |"
        )
    if bad:
        lines += ["", "Fits with SHD >= 3 (seed: SHD, issues): " + ", ".join(
            f"{r['seed']}: {r['shd']}, {r['issues'] or 'none'}" for r in bad)]
    return "\n".join(lines)


def level_table(
    rows: list[dict], disagreement_levels: Iterable[float], condition_levels: Iterable[float]
) -> str:
    """Markdown: how the order check's two levels trade detections against false alarms.

    The disagreement level applies to the calibrated disagreement of
    :func:`creator_plugin.quality.ica_agreement`.

    Re-decides ``"unreliable_order"`` from the recorded statistics (the other
    issues as recorded).
    """
    bad = [r for r in rows if r["shd"] >= 3]
    good = [r for r in rows if r["shd"] <= 1]

    def flagged(r, t, c):
        others = {k for k in r["issues"].split(";") if k and k != "unreliable_order"}
        order = (r["calibrated_disagreement"] >= t or r["max_condition"] >= c
                 or r["weak_steps"] > 0)
        return bool(others) or order

    lines = [
        "| disagreement level | condition level | SHD >= 3 flagged | SHD <= 1 flagged |",
        "|---|---|---|---|",
    ]
    def share(sub, t, c):
        return f"{np.mean([flagged(r, t, c) for r in sub]):.1%}" if sub else "-"

    for t, c in product(disagreement_levels, condition_levels):
        lines.append(f"| {t:g} | {c:.3g} | {share(bad, t, c)} | {share(good, t, c)} |")
    return "\n".join(lines)


def instability_table(
    rows: list[dict], levels: Iterable[float], disagreement_levels: Iterable[float] = (4.5, 3.0),
    condition_level: float = 10**6,
) -> str:
    """Markdown: the thorough verdict's levels and resample count against detections.

    Re-decides ``"unreliable_order"`` (from the recorded statistics, at every
    calibrated-disagreement level) and ``"unstable_result"`` (from the
    recorded per-resample differences, at every instability level, for the
    first B resamples, B = 2, 4, ... up to the count recorded: resample b is
    the same in a run with fewer resamples); the other issues as recorded.
    """
    bad = [r for r in rows if r["shd"] >= 3]
    good = [r for r in rows if r["shd"] <= 1]
    recorded = min(r["resamples"] for r in rows)

    def flagged(r, t, level, B):
        others = {k for k in r["issues"].split(";")
                  if k and k not in ("unstable_result", "unreliable_order")}
        order = (r["calibrated_disagreement"] >= t or r["max_condition"] >= condition_level
                 or r["weak_steps"] > 0)
        diffs = [int(x) for x in str(r["resample_differences"]).split(";") if x][:B]
        return bool(others) or order or not diffs or np.mean(diffs) / r["d"] >= level

    def share(sub, t, level, B):
        return f"{np.mean([flagged(r, t, level, B) for r in sub]):.1%}" if sub else "-"

    lines = [
        "| resamples | disagreement level | instability level | SHD >= 3 flagged "
        "| SHD <= 1 flagged |",
        "|---|---|---|---|---|",
    ]
    for B, t, level in product(range(2, recorded + 1, 2), disagreement_levels, levels):
        lines.append(f"| {B} | {t:g} | {level:g} | {share(bad, t, level, B)} "
                     f"| {share(good, t, level, B)} |")
    return "\n".join(lines)


def overhead_table(
    widths: Iterable[int] = (5, 50), seeds: Iterable[int] = range(5), *, d: int = 5,
    n: int = 1000, measurement_noise: float = 0.05,
) -> str:
    """Markdown: seconds of ``CREATOR(d).fit`` with ``quality=False`` and ``True``.

    Both fits run on the same data one after the other, so the ratio is
    measured under the same load; p = d needs no factor-model test beyond
    the Ledermann bound, a large p makes the ``n_latent`` check the
    verdict's main cost.
    """
    seeds = list(seeds)
    lines = [
        f"d = K = {d}, n = {n}, measurement noise {measurement_noise:g}, seeds "
        f"{seeds[0]}-{seeds[-1]}:",
        "",
        "| p | fit, quality=False (s) | fit, quality=True (s) | ratio |",
        "|---|---|---|---|",
    ]
    for p in widths:
        off = on = 0.0
        for seed in seeds:
            sim = simulate(d, d, n, n_features=p, measurement_noise=measurement_noise,
                           random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                CREATOR(d, quality=False, random_state=seed).fit(sim.X)
                off += time.perf_counter() - start
                start = time.perf_counter()
                CREATOR(d, random_state=seed).fit(sim.X)
                on += time.perf_counter() - start
        k = len(seeds)
        lines.append(f"| {p} | {off / k:.3f} | {on / k:.3f} | {on / off:.2f} |")
    return "\n".join(lines)

_KIND = {"gaussian": "not_identifiable", "default": "not_identifiable",
         "homogeneous": "no_heterogeneity"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--workload", choices=WORKLOADS)
    what.add_argument("--overhead", action="store_true",
                      help="time CREATOR's fit with and without the verdict (p = 5 and 50)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--n", type=int, default=1000, help="rows per environment")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--levels", action="store_true",
                        help="(hard) print detections and false alarms for other levels")
    parser.add_argument("--resamples", type=int, default=0,
                        help="run the resampling check (CREATOR(quality_resamples=...)); with "
                             "--levels, also print its trade-off for fewer resamples")
    parser.add_argument("--timing-models", type=int, default=5,
                        help="(overhead) models per width, from --first-seed")
    parser.add_argument("--csv", help="write one row per fit here")
    args = parser.parse_args(argv)
    if args.overhead:
        print(overhead_table(seeds=range(args.first_seed, args.first_seed + args.timing_models)))
        return
    rows = run_verdict_benchmark(
        args.workload, range(args.first_seed, args.first_seed + args.seeds), n=args.n,
        n_jobs=args.n_jobs, resamples=args.resamples,
    )
    if args.workload.startswith("hard"):
        print(summarize_hard(rows))
        if args.levels:
            print()
            print(level_table(rows, (3, 4, 4.5, 5, 6), (10**4.5, 10**5, 10**6, float("inf"))))
            if args.resamples:
                print()
                print(instability_table(rows, (0.4, 0.5, 0.6)))
    else:
        print(summarize_rates(rows, _KIND[args.workload]))
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
