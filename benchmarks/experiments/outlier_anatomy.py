"""Diagnosis: is a d = 10 outlier a wrong graph, or the right graph on wrong features?

The benchmark's SHD matches every recovered feature to a true node (by
LocR²) and compares the graphs under that matching, so a fit whose graph is
the true one up to relabelling but two of whose features carry the same
true latent scores SHD 10 or more and a "wrong order". For each seed, the
default fit and:

* its SHD and order under the benchmark's matching, the edge counts, and
  whether the estimated DAG is isomorphic to the true one;
* per recovered feature: the smallest over environments of its largest
  |corr| with a true latent, and its matched LocR²;
* the map from the true latents to the features (``features = T y``, by
  least squares on all rows pooled; exact up to rounding in the noiseless
  simulator), each row's dominant true latent (largest ``|T_ij| sd(y_j)``,
  pooled SDs) and its share of the row's sum of those, and the true latents
  that dominate two or more features (``shared_dominant``).

One row per seed (seeds already in OUT are skipped)::

    OMP_NUM_THREADS=1 python outlier_anatomy.py SET SEED [SEED ...] OUT.jsonl

SET as in ``branch_probe.py``. Diagnosis only: nothing is chosen on it.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import networkx as nx
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import revise_default_check  # noqa: E402
import row_files  # noqa: E402

from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402
from creator_plugin.metrics import match_latents  # noqa: E402


def row(which: str, seed: int) -> dict:
    for _cell, d, X, A, Y in revise_default_check.data_sets(which, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, random_state=seed).fit(X)
        B = (model.adjacency_matrix_ != 0).astype(int)
        s = score(A, Y, B, model.latents_, model.causal_order_)
        matching, M = match_latents(A, Y, model.latents_)
        worst = []
        for i in range(d):
            per_env = [np.abs(np.corrcoef(L[:, i], T, rowvar=False)[0, 1:]).max()
                       for L, T in zip(model.latents_, Y)]
            worst.append(float(min(per_env)))
        Yall, L = np.vstack(Y), np.vstack(model.latents_)
        T = np.linalg.lstsq(Yall - Yall.mean(0), L - L.mean(0), rcond=None)[0].T
        weight = np.abs(T) * Yall.std(axis=0)
        dominant = weight.argmax(axis=1)
        share = weight.max(axis=1) / weight.sum(axis=1)
        counts = np.bincount(dominant, minlength=d)
        GA, GB = nx.DiGraph((A != 0).astype(int)), nx.DiGraph(B)
        return {"set": which, "seed": seed, "shd": int(s["shd"]),
                "correct_order": bool(s["correct_order"]),
                "isomorphic": bool(nx.is_isomorphic(GA, GB)),
                "true_edges": int((A != 0).sum()), "edges": int(B.sum()),
                "feature_min_corr": worst,
                "matched_locr2": [float(M[i, matching[i]]) for i in range(d)],
                "dominant": dominant.tolist(), "dominant_share": share.tolist(),
                "shared_dominant": np.flatnonzero(counts > 1).tolist(),
                "quality_issues": [i["kind"] for i in
                                   (model.diagnostics_.get("quality") or {}).get("issues", [])]}


if __name__ == "__main__":
    which, seeds, out = sys.argv[1], [int(s) for s in sys.argv[2:-1]], Path(sys.argv[-1])
    done = set()
    if row_files.exists(out):  # rows already there are kept, not fitted again
        done = {(r["set"], r["seed"]) for r in row_files.read_jsonl(out)}
    with row_files.open_text(out, "a") as fh:
        for seed in seeds:
            if (which, seed) in done:
                continue
            fh.write(json.dumps(row(which, seed)) + "\n")
            fh.flush()
