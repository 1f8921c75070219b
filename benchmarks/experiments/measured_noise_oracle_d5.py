"""Diagnosis: is ``measured``'s loss the estimate of the measurement noise?

``measurement_noise="auto"`` corrects the second moments after the ordering
with an *estimate* of every column's noise variance. This fits the
``measured`` family (d = K = 5, n = 1000, p = 20, tuning seeds only) with
the estimate replaced by the true noise variances (``oracle_noise``: every
column's residual variance on the true latents, per environment, in the
reduction's units, shrunk for positive definiteness as the estimate is),
with the ordering's own directions and with the true ones
(``oracle_directions_diag.oracle_ordering``). If the true variances leave the
family above its bar too, a better estimate cannot bring it there: what is
left is the pruning's and the revision's on features that carry measurement
noise.

    python measured_noise_oracle_d5.py {package,independent} FIRST COUNT OUT.jsonl
    python measured_noise_oracle_d5.py summary OUT.jsonl [...]
"""
import json
import os
import sys
from pathlib import Path

import numpy as np

import creator_plugin._fit as fitmod
from creator_plugin.measurement_noise import noise_of_variances

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import patch  # noqa: E402
from measured_snr_diag import run_variants  # noqa: E402
from oracle_directions_diag import TRUTH, _order, oracle_ordering  # noqa: E402

_estimate = fitmod.estimate_measurement_noise


def oracle_noise(X_list, X_red, reduction):
    """The true column noise variances (residuals on the true latents) as a ``MeasurementNoise``."""
    estimate = _estimate(X_list, X_red, reduction)
    if estimate is None:
        return None
    kept = np.isfinite(reduction.scale)
    variances = np.zeros_like(estimate.variances)
    for k, (x, y) in enumerate(zip(X_list, TRUTH["Y"])):
        Z = np.column_stack([np.ones(len(y)), y])
        e = x - Z @ np.linalg.lstsq(Z, x, rcond=None)[0]
        psi = (e**2).sum(axis=0) / (len(y) - Z.shape[1])
        variances[k, kept] = psi[kept] / reduction.scale[kept] ** 2
    return noise_of_variances(variances, estimate.model, X_red, reduction)


def _setup(order_fn, noise_fn):
    def setup():
        patch("topological_ordering", order_fn, fitmod)()
        patch("estimate_measurement_noise", noise_fn, fitmod)()
    return setup


#: name, (ordering, noise estimate), other settings. With the true directions
#: the correction's polish is off (it would re-estimate them).
VARIANTS = [
    ("default", (_order, _estimate), {}),
    ("auto", (_order, _estimate), {"measurement_noise": "auto"}),
    ("auto_true_noise", (_order, oracle_noise), {"measurement_noise": "auto"}),
    ("oracle", (oracle_ordering, _estimate), {}),
    ("oracle_auto", (oracle_ordering, _estimate), {"measurement_noise": "auto", "polish": False}),
    ("oracle_auto_true_noise", (oracle_ordering, oracle_noise),
     {"measurement_noise": "auto", "polish": False}),
]


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    names = [v[0] for v in VARIANTS]
    print("| simulator | fits | " + " | ".join(f"`{n}`" for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for sim in sorted({r["simulator"] for r in rows}):
        rs = [r for r in rows if r["simulator"] == sim]
        cells = []
        for n in names:
            shd = np.mean([r[n]["shd"] for r in rs])
            se = np.std([r[n]["shd"] for r in rs], ddof=1) / np.sqrt(len(rs))
            surplus = np.mean([r[n]["n_edges"] - r["n_true_edges"] for r in rs])
            order = np.mean([r[n]["order"] for r in rs])
            cells.append(f"{shd:.2f} ± {se:.2f} ({order:.0%}; {surplus:+.2f} edges)")
        print(f"| {sim} | {len(rs)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        run_variants([(name, _setup(*fns), kw) for name, fns, kw in VARIANTS],
                     _setup(_order, _estimate),
                     lambda A, Y: TRUTH.update(A=np.asarray(A), Y=Y))
