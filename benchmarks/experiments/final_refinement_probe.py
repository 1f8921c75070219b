"""Probe: the default fit's final features refined by the Gaussian likelihood of their graph.

Question (tuning seeds first): on d = 10 tuning seed 92002 the default fit has
the true graph up to relabelling but a feature that carries a fixed share of
another latent (SHD 13); a fit with the same graph and order and clean
features (SHD 0) has the same fitted score, because that score is read at the
optimum of the likelihood refinement (``refine.likelihood.fitted_score``), not
at the features. Does moving the features to that optimum mend such fits, and does
it break others? For each data set: the default fit (``quality=False``), its
features in causal order, and the same features after
``refine.likelihood.refine_disentangling`` from the identity (BFGS at the
revision's tolerance, the refinement's own guard), with the default's graph.
One row per data set (SHD, order, LocR² before and after; whether the guard
kept the refined matrix; the refinement's seconds)::

    OMP_NUM_THREADS=1 python final_refinement_probe.py run SET FIRST COUNT OUT.jsonl
    python final_refinement_probe.py summary OUT.jsonl [...]

SET: ``d10``, ``d10-independent`` (as in ``branch_probe.py``), or
``zoo-SIMULATOR-FAMILY`` for the zoo's families at d = K = 5, n = 1000
(e.g. ``zoo-package-paper``).
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
sys.path.insert(0, str(HERE.parent))
import revise_default_check  # noqa: E402
import row_files  # noqa: E402
import zoo  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402
from creator_plugin.refine.likelihood import SCORE_GTOL, refine_disentangling  # noqa: E402


def data(which: str, seed: int):
    if which.startswith("zoo-"):
        _, simulator, family = which.split("-", 2)
        return 5, *zoo.data_of(simulator, family, 5, 5, 1000, seed)
    _cell, d, X, A, Y = next(iter(revise_default_check.data_sets(which, seed)))
    return d, X, A, Y


def row(which: str, seed: int) -> dict:
    d, X, A, Y = data(which, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        model = CREATOR(d, random_state=seed, quality=False).fit(X)
        cpu = time.process_time() - start
    order = list(model.causal_order_)
    latents = [L[:, order] for L in model.latents_]
    graph = (model.adjacency_matrix_[np.ix_(order, order)] != 0).astype(int)
    covariances = np.array([np.cov(L, rowvar=False) for L in latents])
    n = np.array([L.shape[0] for L in latents], dtype=float)
    start = time.process_time()
    R, info = refine_disentangling(np.eye(d), covariances, n, graph, method="BFGS",
                                   gtol=SCORE_GTOL)
    refine_cpu = time.process_time() - start
    before = score(A, Y, graph, latents, list(range(d)))
    after = score(A, Y, graph, [L @ R for L in latents], list(range(d)))
    return {"set": which, "seed": seed, "cpu": cpu, "refine_cpu": refine_cpu,
            "kept": bool(info["kept"]), "start": float(info["start"]),
            "final": float(info["final"]),
            **{f"{k}_{name}": (bool(s[k]) if k == "correct_order" else float(s[k]))
               for name, s in (("before", before), ("after", after))
               for k in ("shd", "locr2", "correct_order")}}


def run(which: str, first: int, count: int, out: str, row_of=None) -> None:
    """Append ``row_of(which, seed)`` (default: this probe's row) for every seed not
    already in ``out``."""
    row_of = row_of or row
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if row_files.exists(path):
        done = {(r["set"], r["seed"]) for r in row_files.read_jsonl(path)}
    with row_files.open_text(path, "a") as fh:
        for seed in range(first, first + count):
            if (which, seed) not in done:
                fh.write(json.dumps(row_of(which, seed)) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = row_files.read_jsonl(paths)
    print("| set | data sets | SHD before | SHD after | better / worse | right orders "
          "before / after | LocR² before / after | kept | refinement s (mean) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in sorted({r["set"] for r in rows}):
        rs = [r for r in rows if r["set"] == s]
        b = np.array([r["shd_before"] for r in rs])
        a = np.array([r["shd_after"] for r in rs])
        print(f"| {s} | {len(rs)} | {b.mean():.3f} | {a.mean():.3f} | {int((a < b).sum())} / "
              f"{int((a > b).sum())} | {sum(r['correct_order_before'] for r in rs)} / "
              f"{sum(r['correct_order_after'] for r in rs)} | "
              f"{np.mean([r['locr2_before'] for r in rs]):.3f} / "
              f"{np.mean([r['locr2_after'] for r in rs]):.3f} | "
              f"{sum(r['kept'] for r in rs)} | {np.mean([r['refine_cpu'] for r in rs]):.2f} |")
    changed = [(r["set"], r["seed"], r["shd_before"], r["shd_after"]) for r in rows
               if r["shd_before"] != r["shd_after"]]
    print("changed:", changed)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        summary(sys.argv[2:])
