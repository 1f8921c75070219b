"""Probe: can a fit tell that measurement noise buries one of its recovered noises?

On ``measured`` (p = 4d, Gaussian measurement noise) the wrong fits are the
data sets where some node's noise is barely recoverable in some environment
(``measured_snr_diag.py``: R^2 of the least-squares recovery of the true
noise below 0.9). This computes, from the fit and the data alone, the share
of each recovered noise's variance that is measurement noise:

* the measurement noise's variance per column and environment is the
  package's estimate (:func:`creator_plugin.measurement_noise.estimate_measurement_noise`
  on the fit's reduction: the part of each environment's covariance outside
  the pooled top-d principal subspace of the standardised columns);
* a recovered noise is ``latent_i - sum_j W_k[j, i] latent_j``, a linear map
  ``v`` of the standardised data; its measurement-noise variance is
  ``sum_j psi_kj v_j^2``, its variance the sample variance.

``r2_est = 1 - share``; a fit's signal is its minimum over nodes and
environments. Rows: seed, family, simulator, SHD, order, ``min_r2_est`` and
the fit's verdict. Usage (tuning seeds only)::

    OMP_NUM_THREADS=1 python buried_noise_probe.py run SIM FAMILIES FIRST COUNT OUT.jsonl
    python buried_noise_probe.py table OUT.jsonl [...]
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR, RefineOptions
from creator_plugin.benchmark.scoring import score
from creator_plugin.preprocessing import reduce_environments
from creator_plugin.refine.measurement_noise import estimate_measurement_noise

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402
from zoo import data_of  # noqa: E402


def min_r2_estimate(model, X_list) -> float | None:
    d = model.components_.shape[0]
    X_red, reduction = reduce_environments(X_list, d)
    noise = estimate_measurement_noise(X_list, X_red, reduction)
    if noise is None:  # p == d: nothing discarded, nothing to estimate
        return None
    psi, sd = noise.variances, reduction.scale  # per column, in units of sd
    V = (model.components_ * sd).T  # (p, d): latent = V^T z
    worst = 1.0
    for k, x in enumerate(X_list):
        z = (np.asarray(x, float) - model.mean_) / sd
        maps = V @ (np.eye(d) - model.weights_[k])  # (p, d): noise_i = maps[:, i]^T z
        e = z @ maps
        var = e.var(axis=0)
        share = (psi[k][:, None] * maps ** 2).sum(axis=0) / var
        worst = min(worst, float((1.0 - share).min()))
    return worst


def run(sim: str, families: str, first: int, count: int, out: str, auto: bool = False) -> None:
    warnings.simplefilter("ignore")
    with row_files.open_text(out, "a") as fh:
        for seed in range(first, first + count):
            for fam in families.split(","):
                X, A, Y = data_of(sim, fam, 5, 5, 1000, seed)
                m = CREATOR(5, random_state=seed,
                            refine=RefineOptions(measurement_noise=auto)).fit(X)
                sc = score(A, Y, m.adjacency_matrix_, m.latents_, m.causal_order_)
                issues = (m.diagnostics_.get("quality") or {}).get("issues", [])
                fh.write(json.dumps({
                    "simulator": sim, "family": fam, "seed": seed, "shd": int(sc["shd"]),
                    "correct_order": bool(sc["topological_divergence"] == 0),
                    "flagged": bool(issues), "issues": [i["kind"] for i in issues],
                    "min_r2_est": (m.diagnostics_["measurement_noise"]["min_signal_share"]
                                   if auto else min_r2_estimate(m, X))}) + "\n")
                fh.flush()


def table(paths: list[str]) -> None:
    rows = row_files.read_jsonl(paths)
    rows = [r for r in rows if r["min_r2_est"] is not None]
    wrong = [r for r in rows if r["shd"] >= 2]
    right = [r for r in rows if r["shd"] <= 1]
    fw, fr = sum(r["flagged"] for r in wrong), sum(r["flagged"] for r in right)
    print(f"{len(rows)} fits with p > d: {len(wrong)} with SHD >= 2 ({fw} flagged by the "
          f"verdict), {len(right)} with SHD <= 1 ({fr})")
    print("| level | SHD >= 2 flagged (verdict or signal) | SHD <= 1 flagged (verdict or signal) |")
    print("|---|---|---|")
    for level in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5):
        fw = sum(r["flagged"] or r["min_r2_est"] < level for r in wrong)
        fr = sum(r["flagged"] or r["min_r2_est"] < level for r in right)
        print(f"| {level} | {fw} / {len(wrong)} | {fr} / {len(right)} |")
    print()
    print("fits by min_r2_est:", [(round(r["min_r2_est"], 2), r["shd"], r["flagged"])
                                  for r in sorted(rows, key=lambda r: r["min_r2_est"])])


def bins(paths: list[str], edges=(0.0, 0.5, 0.9, 1.01)) -> None:
    rows = row_files.read_jsonl(paths)
    rows = [r for r in rows if r["min_r2_est"] is not None]
    print("| smallest signal share | fits | mean SHD | wrong orders | SHD >= 2 | flagged |")
    print("|---|---|---|---|---|---|")
    for lo, hi in zip(edges[:-1], edges[1:]):
        rs = [r for r in rows if lo <= r["min_r2_est"] < hi]
        if rs:
            shd = np.mean([r["shd"] for r in rs])
            print(f"| {lo:g} to {min(hi, 1):g} | {len(rs)} | {shd:.2f} | "
                  f"{sum(not r['correct_order'] for r in rs)} | {sum(r['shd'] >= 2 for r in rs)} | "
                  f"{sum(r['flagged'] for r in rs)} |")


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] in ("run", "run-auto"):
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
            auto=sys.argv[1] == "run-auto")
    elif len(sys.argv) >= 3 and sys.argv[1] == "bins":
        bins(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
