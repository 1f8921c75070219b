"""Diagnosis: how much of each latent noise the measurements of ``measured`` still carry.

``measured`` adds Gaussian noise with 5 % of each measurement's standard
deviation. A measurement's variance is dominated by the environment's loudest
latents (chains of large weights make some latents' variances orders of
magnitude above a root's), so a quiet node's noise can be buried. For every
fit: per environment and node, the R^2 of the best linear recovery of the
node's true noise from all p measurements (least squares on the data, an
upper bound on what any linear method can extract), its minimum over
environments and nodes, and the default fit's SHD and order.

    python measured_snr_diag.py {package,independent} FIRST COUNT OUT.jsonl
"""
import json
import os
import sys
import warnings

import numpy as np

from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_criteria_diag import true_noises  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from zoo import data_of  # noqa: E402


def run_variants(variants, restore, on_data=None) -> None:
    """Fit every ``measured`` data set of the command line once per variant, one row each.

    ``variants``: ``(name, setup, settings)``; ``setup()`` patches the
    variant in, ``settings`` are extra ``FitConfig`` fields; ``restore()`` runs
    after the last; ``on_data(A, Y)`` first, with the data set's truth.
    """
    warnings.simplefilter("ignore")
    sim_name, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            X, A, Y = data_of(sim_name, "measured", 5, 5, 1000, seed)
            if on_data is not None:
                on_data(A, Y)
            row = {"simulator": sim_name, "seed": seed}
            for name, setup, settings in variants:
                setup()
                res = fit_arrays(X, FitConfig(5, quality=False, **settings), random_state=seed)
                ev = evaluate(A, Y, res.adjacency, res.latents)
                row[name] = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                             "locr2": round(float(ev["locr2"]), 4),
                             "n_edges": int(np.count_nonzero(res.adjacency))}
            restore()
            row["n_true_edges"] = int(np.count_nonzero(A))
            fh.write(json.dumps(row) + "\n")
            fh.flush()


def main() -> None:
    warnings.simplefilter("ignore")
    sim_name, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            X, A, Y = data_of(sim_name, "measured", 5, 5, 1000, seed)
            Z = true_noises(A, Y)
            r2 = []
            for x, z in zip(X, Z):
                xc, zc = x - x.mean(axis=0), z - z.mean(axis=0)
                fit = xc @ np.linalg.lstsq(xc, zc, rcond=None)[0]
                r2.append(1.0 - np.sum((zc - fit) ** 2, axis=0) / np.sum(zc**2, axis=0))
            r2 = np.array(r2)
            res = fit_arrays(X, FitConfig(5, quality=False), random_state=seed)
            ev = evaluate(A, Y, res.adjacency, res.latents)
            fh.write(json.dumps({"simulator": sim_name, "seed": seed, "shd": int(ev["shd"]),
                                 "order": bool(ev["correct_order"]),
                                 "min_r2": round(float(r2.min()), 4),
                                 "r2": np.round(r2, 4).tolist()}) + "\n")


if __name__ == "__main__":
    main()
