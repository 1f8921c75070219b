"""The defaults against a candidate: the revision on and the order check's level raised (frozen).

The design and its rule are in benchmarks/LOG.md ("Frozen design: the
revision on and the order check's ICA-agreement level at 5.5"). The candidate
is ``CREATOR(revise_graph=True)`` with the default verdict's ICA-agreement
level raised from 4.5 to :data:`CANDIDATE_BASE` at d <= 5 (growing by one per
latent beyond 5 as before). A level only changes which fits are flagged, so
the candidate's verdict is computed from each fit's recorded order-check
statistics (as ``order_level_probe.py``, whose re-thresholding reproduces
every recorded verdict; this script checks that again on every row). Usage::

    OMP_NUM_THREADS=1 python default_candidate_check.py run SET FIRST COUNT OUT.jsonl
    python default_candidate_check.py summary OUT.jsonl [...]

SET as ``revise_default_check.py`` (``bar``, ``bar-independent``, ``flag``,
``flag-independent``, ``d10``, ``d10-independent``, ``grid``).
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import revise_default_check  # noqa: E402
from order_level_probe import RECORDED_BASE, _flagged  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402

#: The candidate's ICA-agreement level at d <= 5 (the default's is 4.5):
#: the highest of 4.5, 5, 5.5, 6, 7 that flags no fewer fits with SHD >= 2
#: than 4.5 in any group of the tuning rows of fits with the revision
#: (benchmarks/results/revision_verdict/tuning_*.jsonl, seeds 0-99 and d = 10 0-49).
CANDIDATE_BASE = 5.5
SETTINGS = {"default": {}, "candidate": {"revise_graph": True}}


def fit(d: int, seed: int, X, A, Y, params: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        model = CREATOR(d, random_state=seed, **params).fit(X)
        cpu = time.process_time() - start
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    quality = model.diagnostics_["quality"]
    checks = quality["checks"]
    cond = checks["conditioning"]
    kinds = [i if isinstance(i, str) else i.get("kind", str(i)) for i in quality["issues"]]
    return {"shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
            "locr2": float(s["locr2"]), "cpu": cpu, "d": d, "kinds": sorted(set(kinds)),
            "ica_calibrated": float(checks["ica_agreement"]["calibrated"]),
            "condition": float(cond["condition_numbers"][cond["worst_environment"]]),
            "weak_steps": len(checks.get("weak_ordering_steps") or [])}


def run(which: str, first: int, count: int, out: str) -> None:
    revise_default_check.run(which, first, count, out, settings=SETTINGS, fit_one=fit)


def flagged(fit_row: dict, name: str) -> bool:
    """The verdict: the recorded one for the default, re-thresholded for the candidate."""
    if name == "default":
        return bool(fit_row["kinds"])
    return _flagged(fit_row, CANDIDATE_BASE)


def _paired(rows: list[dict]) -> tuple[str, float, float]:
    a = np.array([r["default"]["shd"] for r in rows], float)
    b = np.array([r["candidate"]["shd"] for r in rows], float)
    diff = b - a
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    order_a = np.mean([r["default"]["correct_order"] for r in rows])
    order_b = np.mean([r["candidate"]["correct_order"] for r in rows])
    text = (f"{len(rows)} | {a.mean():.3f} | {b.mean():.3f} | {diff.mean():+.3f} ({se:.3f}) | "
            f"{int((diff < 0).sum())} / {int((diff > 0).sum())} | {order_a:.0%} | {order_b:.0%}")
    return text, float(diff.mean()), float(se)


def _verdict(rows: list[dict], name: str) -> dict:
    wrong = [r[name] for r in rows if r[name]["shd"] >= 2]
    right = [r[name] for r in rows if r[name]["shd"] <= 1]
    w = sum(flagged(f, name) for f in wrong)
    f = sum(flagged(f, name) for f in right)
    return {"wrong": len(wrong), "caught": w, "missed": len(wrong) - w,
            "right": len(right), "false": f, "false_share": f / max(len(right), 1),
            "caught_share": w / max(len(wrong), 1)}


def _blocks(rows: list[dict], name: str) -> str:
    rows = sorted(rows, key=lambda r: r["seed"])
    return " / ".join(f"{np.mean([r[name]['shd'] for r in rows[i:i + 20]]):.2f}"
                      for i in range(0, len(rows), 20))


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    failed = [r for r in rows if "failed" in r]
    rows = [r for r in rows if "failed" not in r]
    mismatch = sum(_flagged(r[n], RECORDED_BASE) != bool(r[n]["kinds"])
                   for r in rows for n in SETTINGS)
    print(f"{len(rows)} data sets; re-thresholding at the recorded level ({RECORDED_BASE}) "
          f"differs from the recorded verdict in {mismatch} fits")
    for r in failed:
        print(f"not compared: {r['cell']} seed {r['seed']} ({r['failed'][:80]}...)")
    print("\n| cell | data sets | default | candidate | difference (SE) | better / worse "
          "| order, default | order, candidate |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in sorted({r["cell"] for r in rows}):
        print(f"| {cell} | " + _paired([r for r in rows if r["cell"] == cell])[0] + " |")
    groups = {"(a) bar, both simulators": ("bar", "bar-independent"),
              "(b) d = 10, both simulators": ("d10", "d10-independent"),
              "(c) grid": ("grid",),
              "(d) flag, both simulators": ("flag", "flag-independent")}
    results = {}
    for label, sets in groups.items():
        sub = [r for r in rows if r["set"] in sets]
        if sub:
            text, mean, se = _paired(sub)
            results[label] = (mean, se, sub)
            print(f"| {label} | " + text + " |")
    for which in ("d10", "d10-independent"):
        sub = [r for r in rows if r["set"] == which]
        if sub:
            print(f"\n{which}, blocks of 20: default {_blocks(sub, 'default')}; "
                  f"candidate {_blocks(sub, 'candidate')}")
    print("\nVerdict (SHD >= 2 caught / missed; SHD <= 1 flagged):")
    for label, (_, _, sub) in results.items():
        parts = []
        for name in SETTINGS:
            v = _verdict(sub, name)
            parts.append(f"{name} {v['caught']}/{v['wrong']} ({v['caught_share']:.0%}), missed "
                         f"{v['missed']}; {v['false']}/{v['right']} ({v['false_share']:.1%})")
        print(f"* {label}: " + "; ".join(parts))
    cpu_a = sum(r["default"]["cpu"] for r in rows)
    cpu_b = sum(r["candidate"]["cpu"] for r in rows)
    print(f"\nCPU: candidate / default = {cpu_b / cpu_a:.2f}x over {len(rows)} data sets")
    print("\nRule:")
    checks = []
    if "(a) bar, both simulators" in results:
        mean, se, sub = results["(a) bar, both simulators"]
        checks.append(("(a) SHD at least 2 SE below zero", mean <= -2 * se))
        va, vb = _verdict(sub, "default"), _verdict(sub, "candidate")
        checks.append(("(e) false-alarm share not above the default's",
                       vb["false_share"] <= va["false_share"]))
        checks.append(("(e) missed wrong fits not more than the default's",
                       vb["missed"] <= va["missed"]))
    for label in ("(b) d = 10, both simulators", "(c) grid"):
        if label in results:
            mean, se, _ = results[label]
            checks.append((f"{label}: not above zero by more than 1 SE", mean <= se))
    if "(d) flag, both simulators" in results:
        sub = results["(d) flag, both simulators"][2]
        va, vb = _verdict(sub, "default"), _verdict(sub, "candidate")
        checks.append(("(d) flag families: caught share not 5 points below the default's",
                       vb["caught_share"] >= va["caught_share"] - 0.05))
    for text, ok in checks:
        print(f"* {text}: {'passes' if ok else 'FAILS'}")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
