"""Frozen check: the features refined by the likelihood of their graph, against the default.

``CREATOR(refine=RefineOptions(disentangle=True))``: the ``"evidence"``
intersection, then the Gaussian likelihood of the pruned SEM in all
environments maximised over the disentangling matrix (BFGS at the graph
revision's tolerance; the refinement's guard falls back to the intersection).
Each data set is fitted without the refinement (the default when the rows
were measured) and with it (same random state); one row per data set with
both fits' SHD, order, LocR² and seconds::

    OMP_NUM_THREADS=1 python likelihood_features_check.py run SET FIRST COUNT OUT.jsonl
    python likelihood_features_check.py summary OUT.jsonl [...]

SET as in ``final_refinement_probe.py`` (``d10``, ``d10-independent``,
``zoo-SIMULATOR-FAMILY`` at d = K = 5, n = 1000).
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import final_refinement_probe as frp  # noqa: E402
import row_files  # noqa: E402
from final_refinement_probe import data  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402

#: The fits compared. "default" is the default of the time the rows were measured, the
#: intersection alone: the refinement has been the default from 8 to 12 latents since
#: (``RefineOptions(disentangle="auto")``), so the defaults would compare it with itself.
VARIANTS = {"default": {"refine__disentangle": False}, "likelihood": {"refine__disentangle": True}}


def row(which: str, seed: int) -> dict:
    d, X, A, Y = data(which, seed)
    out = {"set": which, "seed": seed}
    for name, params in VARIANTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.process_time()
            model = CREATOR(d, random_state=seed, quality=False).set_params(**params).fit(X)
            cpu = time.process_time() - start
        s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
        out[name] = {"shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
                     "locr2": float(s["locr2"]), "cpu": cpu}
    return out


def run(which: str, first: int, count: int, out: str) -> None:
    frp.run(which, first, count, out, row_of=row)


def summary(paths: list[str]) -> None:
    rows = row_files.read_jsonl(paths)
    print("| set | data sets | default SHD | option SHD | better / worse | right orders "
          "default / option | LocR² default / option | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    sets = sorted({r["set"] for r in rows}) + ["all"]
    for s in sets:
        rs = [r for r in rows if s in ("all", r["set"])]
        b = np.array([r["default"]["shd"] for r in rs])
        a = np.array([r["likelihood"]["shd"] for r in rs])
        ratio = (np.sum([r["likelihood"]["cpu"] for r in rs])
                 / np.sum([r["default"]["cpu"] for r in rs]))
        print(f"| {s} | {len(rs)} | {b.mean():.3f} | {a.mean():.3f} | {int((a < b).sum())} / "
              f"{int((a > b).sum())} | {sum(r['default']['correct_order'] for r in rs)} / "
              f"{sum(r['likelihood']['correct_order'] for r in rs)} | "
              f"{np.mean([r['default']['locr2'] for r in rs]):.3f} / "
              f"{np.mean([r['likelihood']['locr2'] for r in rs]):.3f} | {ratio:.2f} |")
        if s in ("d10", "d10-independent"):
            for i in range(0, len(rs), 20):
                blk = rs[i:i + 20]
                print(f"|   blocks of 20 from {blk[0]['seed']} | {len(blk)} | "
                      f"{np.mean([r['default']['shd'] for r in blk]):.2f} | "
                      f"{np.mean([r['likelihood']['shd'] for r in blk]):.2f} | | | | |")
    diff = np.array([r["likelihood"]["shd"] - r["default"]["shd"] for r in rows])
    print(f"pooled difference {diff.mean():+.3f} (SE {diff.std(ddof=1) / np.sqrt(len(diff)):.3f})")
    print("changed:", [(r["set"], r["seed"], r["default"]["shd"], r["likelihood"]["shd"])
                       for r in rows if r["default"]["shd"] != r["likelihood"]["shd"]])


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        summary(sys.argv[2:])
