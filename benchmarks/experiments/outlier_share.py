"""One gross outlier: how much of a latent's variance one row carries, clean and corrupted.

A candidate check for the verdict, measured here and not (yet) part of it:
``dominant_row`` is the largest share of a fitted latent's pooled
within-environment sum of squares that a single row carries. This script
fits CREATOR with every default and records it:

* ``clean``: the zoo's nine families at d = K = 5 on both simulators (the
  spread of the share on data without errors, heavy tails included);
* ``corrupt``: the same data sets of the ``paper`` family with one entry of
  one random row set to ``magnitude`` times its column's SD (a data error),
  for several magnitudes, with the SHD, the LocR^2 and the issues the verdict
  raised.

    python outlier_share.py clean FIRST COUNT OUT.jsonl
    python outlier_share.py corrupt FIRST COUNT OUT.jsonl
    python outlier_share.py summary OUT.jsonl [...]
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR, metrics
from creator_plugin.preprocessing import _dominant_row

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo import data_of  # noqa: E402

FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n",
            "near_gaussian", "weak_weights", "discrete_noise")
MAGNITUDES = (10, 30, 100, 1000)


def dominant_row(latents: list[np.ndarray]) -> dict:
    """Largest share of a latent's pooled within-environment sum of squares in one row."""
    centred = [np.asarray(L, float) - np.asarray(L, float).mean(axis=0) for L in latents]
    share, k, i, j = _dominant_row(centred)
    return {"share": share, "environment": k, "row": i, "latent": j}


def _fit(X, adjacency, Y, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = CREATOR(5, random_state=seed).fit(X)
        except ValueError as exc:
            return {"status": f"error: {str(exc)[:80]}"}
    ev = metrics.evaluate(adjacency, Y, model.adjacency_matrix_, model.latents_,
                          model.causal_order_)
    return {"status": "ok", "share": dominant_row(model.latents_)["share"], "shd": ev["shd"],
            "locr2": round(ev["locr2"], 4),
            "issues": sorted({i["kind"] for i in model.diagnostics_["quality"]["issues"]})}


def clean(first, count, path):
    with path.open("a") as fh:
        for sim in ("package", "independent"):
            for family in FAMILIES:
                for seed in range(first, first + count):
                    X, A, Y = data_of(sim, family, 5, 5, 1000, seed)
                    row = {"mode": "clean", "simulator": sim, "family": family, "seed": seed}
                    fh.write(json.dumps({**row, **_fit(X, A, Y, seed)}) + "\n")
                    fh.flush()


def corrupt(first, count, path):
    with path.open("a") as fh:
        for sim in ("package", "independent"):
            for seed in range(first, first + count):
                X, A, Y = data_of(sim, "paper", 5, 5, 1000, seed)
                rng = np.random.default_rng(seed)
                k, j = int(rng.integers(len(X))), int(rng.integers(X[0].shape[1]))
                i = int(rng.integers(X[k].shape[0]))
                for magnitude in MAGNITUDES:
                    Xc = [x.copy() for x in X]
                    Xc[k][i, j] = Xc[k][:, j].mean() + magnitude * Xc[k][:, j].std()
                    row = {"mode": "corrupt", "simulator": sim, "family": "paper", "seed": seed,
                           "magnitude": magnitude, "where": [k, i, j]}
                    fh.write(json.dumps({**row, **_fit(Xc, A, Y, seed)}) + "\n")
                    fh.flush()


def summary(paths):
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    ok = [r for r in rows if r["status"] == "ok"]
    print("Clean data: largest single-row share per family (both simulators)")
    print("| family | fits | median | 99th percentile | max |")
    print("|---|---|---|---|---|")
    for fam in FAMILIES:
        s = [r["share"] for r in ok if r["mode"] == "clean" and r["family"] == fam]
        if s:
            print(f"| {fam} | {len(s)} | {np.median(s):.4f} | {np.quantile(s, 0.99):.4f} "
                  f"| {max(s):.4f} |")
    print()
    print("One corrupted entry (paper family)")
    print("| magnitude (SDs) | data sets | fit failed | median share | min share "
          "| mean SHD | mean LocR² | any issue |")
    print("|---|---|---|---|---|---|---|---|")
    for mag in MAGNITUDES:
        rs = [r for r in rows if r["mode"] == "corrupt" and r["magnitude"] == mag]
        good = [r for r in rs if r["status"] == "ok"]
        if not rs:
            continue
        print(f"| {mag} | {len(rs)} | {len(rs) - len(good)} "
              f"| {np.median([r['share'] for r in good]):.3f} "
              f"| {min(r['share'] for r in good):.3f} "
              f"| {np.mean([r['shd'] for r in good]):.2f} "
              f"| {np.mean([r['locr2'] for r in good]):.3f} "
              f"| {sum(bool(r['issues']) for r in good)} |")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "summary":
        summary(sys.argv[2:])
    else:
        {"clean": clean, "corrupt": corrupt}[command](
            int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
