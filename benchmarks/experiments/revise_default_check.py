"""The defaults against ``revise_graph=True`` on the same data sets (frozen check).

The design and its rule are in benchmarks/LOG.md ("Frozen design: the
revision on by default?"). Usage::

    OMP_NUM_THREADS=1 python revise_default_check.py run SET FIRST COUNT OUT.jsonl
    python revise_default_check.py summary OUT.jsonl [...]

SET: ``bar`` / ``bar-independent`` (the six bar families at d = K = 5,
n = 1000), ``flag`` / ``flag-independent`` (the three flag families),
``d10`` (``simulate(10, 10, 2000, setting=1, edge_prob=0.5)``),
``d10-independent`` (the independent ``paper`` at d = K = 10, n = 2000),
``grid`` (``simulate(d, d, 1000, setting=s)`` for d = 5, 7 and s = 1, 2).
One row per data set: both settings' SHD, correct order, verdict and seconds;
a data set the fit refuses (a ``ValueError`` before either setting differs)
gets a row with ``"failed"`` and is left out of the comparisons.
"""
from __future__ import annotations

import json
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import row_files  # noqa: E402
import zoo  # noqa: E402

from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402

BAR = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")
FLAG = ("near_gaussian", "weak_weights", "discrete_noise")
SETTINGS = {"default": {}, "revise": {"refine__revise_graph": True}}


def data_sets(which: str, seed: int):
    """``(cell, d, X, adjacency, latents)`` of one seed of a set.

    ``bar`` / ``flag`` (and ``-independent``): the zoo's families at d = K = 5,
    n = 1000; ``d10`` (``simulate(10, 10, 2000, setting=1, edge_prob=0.5)``) and
    ``d10-independent``; ``grid`` (``simulate(d, d, 1000, setting=s)``, d = 5, 7,
    s = 1, 2); ``d7`` / ``d7-independent`` (d = K = 7, n = 1000:
    ``simulate(7, 7, 1000, setting=1)``, the independent ``paper``), ``d15``
    (``simulate(15, 15, 2000, edge_prob=0.3)``), ``d15-independent`` (the
    independent ``paper`` at d = K = 15, n = 2000) and ``d20``
    (``simulate(20, 20, 5000, edge_prob=0.2)``); ``dDkK`` (d latents, K
    environments, n = 2000: ``simulate(d, K, 2000)``) and ``dDkK-independent``.
    """
    if which in ("bar", "bar-independent", "flag", "flag-independent"):
        simulator = "independent" if which.endswith("independent") else "package"
        for family in BAR if which.startswith("bar") else FLAG:
            yield (f"{simulator} {family}", 5, *zoo.data_of(simulator, family, 5, 5, 1000, seed))
    elif which == "d10":
        sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
        yield "package d10", 10, sim.X, sim.adjacency, sim.Y
    elif which == "d10-independent":
        yield ("independent d10 paper", 10, *zoo.data_of("independent", "paper", 10, 10, 2000,
                                                         seed))
    elif which == "grid":
        for d in (5, 7):
            for setting in (1, 2):
                sim = simulate(d, d, 1000, setting=setting, random_state=seed)
                yield f"grid d{d} setting {setting}", d, sim.X, sim.adjacency, sim.Y
    elif which == "d7":
        sim = simulate(7, 7, 1000, setting=1, random_state=seed)
        yield "package d7", 7, sim.X, sim.adjacency, sim.Y
    elif which == "d7-independent":
        yield ("independent d7 paper", 7, *zoo.data_of("independent", "paper", 7, 7, 1000, seed))
    elif which == "d15":
        sim = simulate(15, 15, 2000, edge_prob=0.3, random_state=seed)
        yield "package d15", 15, sim.X, sim.adjacency, sim.Y
    elif which == "d15-independent":
        yield ("independent d15 paper", 15,
               *zoo.data_of("independent", "paper", 15, 15, 2000, seed))
    elif re.fullmatch(r"d\d+k\d+(-independent)?", which):  # e.g. d10k5: d = 10, K = 5
        d, K = map(int, re.findall(r"\d+", which))
        n = 2000
        if which.endswith("-independent"):
            yield (f"independent d{d} K{K} paper", d,
                   *zoo.data_of("independent", "paper", d, K, n, seed))
        else:
            sim = simulate(d, K, n, random_state=seed)
            yield f"package d{d} K{K}", d, sim.X, sim.adjacency, sim.Y
    elif which == "d20":
        sim = simulate(20, 20, 5000, edge_prob=0.2, random_state=seed)
        yield "package d20", 20, sim.X, sim.adjacency, sim.Y
    else:
        raise SystemExit(f"unknown set {which!r}")


def fit(d: int, seed: int, X, A, Y, params: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        model = CREATOR(d, random_state=seed).set_params(**params).fit(X)
        cpu = time.process_time() - start
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
    return {"shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
            "locr2": float(s["locr2"]), "flagged": bool(issues), "cpu": cpu}


def run(which: str, first: int, count: int, out: str, *, settings: dict | None = None,
        fit_one=None, sets=None) -> None:
    """Fit every data set of ``which`` with each of ``settings`` (default: this check's).

    ``sets`` draws the data sets (default: this check's :func:`data_sets`).
    """
    settings, fit_one, sets = settings or SETTINGS, fit_one or fit, sets or data_sets
    with row_files.open_text(out, "a") as fh:
        for seed in range(first, first + count):
            for cell, d, X, A, Y in sets(which, seed):
                row = {"set": which, "cell": cell, "seed": seed}
                try:
                    for name, params in settings.items():
                        row[name] = fit_one(d, seed, X, A, Y, params)
                except ValueError as exc:  # data the fit refuses: a result, kept apart
                    row = {**row, "failed": f"{type(exc).__name__}: {exc}"}
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def _paired(rows: list[dict]) -> str:
    a = np.array([r["default"]["shd"] for r in rows], float)
    b = np.array([r["revise"]["shd"] for r in rows], float)
    diff = b - a
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    order_a = np.mean([r["default"]["correct_order"] for r in rows])
    order_b = np.mean([r["revise"]["correct_order"] for r in rows])
    return (f"{len(rows)} | {a.mean():.3f} | {b.mean():.3f} | {diff.mean():+.3f} ({se:.3f}) | "
            f"{int((diff < 0).sum())} / {int((diff > 0).sum())} | {order_a:.0%} | {order_b:.0%}")


def _flags(rows: list[dict], name: str) -> str:
    wrong = [r[name] for r in rows if r[name]["shd"] >= 2]
    right = [r[name] for r in rows if r[name]["shd"] <= 1]
    return (f"{sum(f['flagged'] for f in wrong)}/{len(wrong)} | "
            f"{sum(f['flagged'] for f in right)}/{len(right)}")


def summary(paths: list[str]) -> None:
    rows = row_files.read_jsonl(paths)
    failed = [r for r in rows if "failed" in r]
    rows = [r for r in rows if "failed" not in r]
    for r in failed:
        print(f"not compared: {r['cell']} seed {r['seed']} ({r['failed'][:80]}...)")
    print("| cell | data sets | default | revise_graph | difference (SE) | better / worse "
          "| order, default | order, revise |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in sorted({r["cell"] for r in rows}):
        print(f"| {cell} | " + _paired([r for r in rows if r["cell"] == cell]) + " |")
    for which in sorted({r["set"] for r in rows}):
        print(f"| all of {which} | " + _paired([r for r in rows if r["set"] == which]) + " |")
    groups = {"bar (both simulators)": ("bar", "bar-independent"),
              "d = 10 (both simulators)": ("d10", "d10-independent"),
              "flag (both simulators)": ("flag", "flag-independent")}
    for label, sets in groups.items():
        sub = [r for r in rows if r["set"] in sets]
        if sub:
            print(f"| {label} | " + _paired(sub) + " |")
    print("\nVerdict: SHD >= 2 flagged | SHD <= 1 flagged (default; revise_graph)")
    for label, sets in groups.items():
        sub = [r for r in rows if r["set"] in sets]
        if sub:
            print(f"* {label}: {_flags(sub, 'default')}; {_flags(sub, 'revise')}")
    cpu_a = sum(r["default"]["cpu"] for r in rows)
    cpu_b = sum(r["revise"]["cpu"] for r in rows)
    print(f"\nCPU: revise_graph / default = {cpu_b / cpu_a:.2f}x over {len(rows)} data sets")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
