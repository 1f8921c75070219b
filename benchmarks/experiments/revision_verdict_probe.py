"""Probe: the verdict of fits with ``revise_graph=True`` and the revision's margins (tuning).

With the revision on, its last round of the greedy search has scored every
near-level decision that it left as it was: ``diagnostics_["graph_revision"]
["margins"]`` gives, per such pair, how much flipping it would raise the
score, in units of one edge's BIC price. A small margin means the data hardly
prefer the chosen decision, which might flag the wrong fits (mostly pruning
errors with the right order) that the verdict misses. This records, per fit,
the SHD, the verdict's issue kinds, the order check's statistics (as
``order_level_probe.py``) and the revision's record, so that levels of both
can be evaluated offline. Usage::

    OMP_NUM_THREADS=1 python revision_verdict_probe.py run SET FIRST COUNT OUT.jsonl
    python revision_verdict_probe.py table OUT.jsonl [...]

SET as ``order_level_probe.py`` (``zoo``, ``zoo-independent``, ``grid``,
``d10``). ``table`` prints, per group and half of the seeds, the share of
fits with SHD >= 2 and of fits with SHD <= 1 flagged by the verdict with the
ICA-agreement base level (4.5 ... 6) and the margin level (none, 0.25 ... 2:
flag when the smallest margin is below it).
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from order_level_probe import _flagged, data_sets, flag_table  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402


def run(which: str, first: int, count: int, out: str) -> None:
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            for group, cell, d, X, A, Y in data_sets(which, seed):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        model = CREATOR(d, revise_graph=True, random_state=seed).fit(X)
                    except ValueError as exc:
                        fh.write(json.dumps({"set": which, "cell": cell, "seed": seed,
                                             "failed": str(exc)[:200]}) + "\n")
                        continue
                s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
                diag = model.diagnostics_
                checks = diag["quality"]["checks"]
                cond = checks["conditioning"]
                kinds = [i if isinstance(i, str) else i.get("kind", str(i))
                         for i in diag["quality"].get("issues", [])]
                rev = diag["graph_revision"] or {}
                margins = [m[2] for m in rev.get("margins", [])]
                fh.write(json.dumps({
                    "set": which, "group": group, "cell": cell, "seed": seed, "d": d,
                    "shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
                    "kinds": sorted(set(kinds)),
                    "ica_calibrated": float(checks["ica_agreement"]["calibrated"]),
                    "condition": float(cond["condition_numbers"][cond["worst_environment"]]),
                    "weak_steps": len(checks.get("weak_ordering_steps") or []),
                    "n_candidates": len(rev.get("candidates", [])),
                    "n_flips": len(rev.get("flips", [])),
                    "min_margin": min(margins) if margins else None,
                    "margins": rev.get("margins", []),
                }) + "\n")
                fh.flush()


def flagged(r: dict, base: float, margin_level: float | None) -> bool:
    """The verdict at ICA-agreement base level ``base``, or a margin below ``margin_level``."""
    small = (margin_level is not None and r["min_margin"] is not None
             and r["min_margin"] < margin_level)
    return _flagged(r, base) or small


def table(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    failed = [r for r in rows if "failed" in r]
    rows = [r for r in rows if "failed" not in r]
    print(f"{len(rows)} fits ({len(failed)} refused)")
    for base in (4.5, 5.0, 5.5, 6.0):
        print(f"\nICA-agreement base level {base:g}")
        margins = (None, 0.25, 0.5, 1.0, 2.0)
        flag_table(rows, [(f"margin {m}", lambda r, m=m, b=base: flagged(r, b, m))
                          for m in margins])
    print("\nCells: SHD >= 2 flagged, SHD <= 1 flagged.")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
