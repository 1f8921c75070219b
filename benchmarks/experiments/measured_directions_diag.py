"""Diagnosis: how precise the directions are under measurement noise, stage by stage.

``oracle_directions_diag.py`` found that on the independent simulator's
``measured`` family the measurement-noise correction with the true
directions reaches SHD 0.30, and with the estimated ones 0.58. Where are the
estimated directions lost? For every fit with ``measurement_noise="auto"``
this compares, at each position of the fitted order, the noise the fit
extracts with the true noise it matches best (largest |corr|, per
environment), at three stages: the ordering's search (its directions before
any polish), after the correction's polish (``polish_signal``), and the true
directions of ``oracle_directions_diag`` in the same order (the ceiling the
measurement noise leaves). The noises are the signal's Gram-Schmidt
residuals of the directions (the correction's bookkeeping), read on the
noisy data. One row per fit: the per-position mean over environments of
1 - corr^2 at each stage, the SHD.

    python measured_directions_diag.py {package,independent} FIRST COUNT OUT.jsonl
"""
import json
import os
import sys
import warnings

import numpy as np

import creator_plugin.measurement_noise as mn
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_criteria_diag import true_noises  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from zoo import data_of  # noqa: E402

_polish = mn.polish_signal
SEEN: dict = {}


def _watch(X_red, alphas, signal, raw, **kw):
    out = _polish(X_red, alphas, signal, raw, **kw)
    SEEN.update(X=X_red, before=np.array(alphas), after=np.array(out[0]), signal=signal)
    return out


def signal_noises(X_red, signal, alphas):
    out = []
    for x, S in zip(X_red, signal):
        L = np.linalg.cholesky(alphas.T @ S @ alphas / x.shape[0])
        out.append(x @ (alphas @ np.linalg.inv(L).T))
    return out


def misfit(noises, Z):
    """Per position: mean over environments of 1 - max_j corr^2(noise, true noise j)."""
    d = Z[0].shape[1]
    per = [1.0 - (np.corrcoef(e.T, z.T)[:d, d:] ** 2).max(axis=1) for e, z in zip(noises, Z)]
    return np.mean(per, axis=0)


def main() -> None:
    warnings.simplefilter("ignore")
    sim_name, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    mn.polish_signal = _watch
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            X, A, Y = data_of(sim_name, "measured", 5, 5, 1000, seed)
            Z = true_noises(np.asarray(A), Y)
            res = fit_arrays(X, FitConfig(5, quality=False, measurement_noise="auto"),
                             random_state=seed)
            ev = evaluate(A, Y, res.adjacency, res.latents)
            Xr, S = SEEN["X"], SEEN["signal"]
            # the true directions in the fitted order: the latent each position's noise
            # matches best in most environments, mapped from the reduced data
            after = signal_noises(Xr, S, SEEN["after"])
            match = np.stack([np.abs(np.corrcoef(e.T, z.T)[:5, 5:]).argmax(axis=1)
                              for e, z in zip(after, Z)])
            order = [int(np.bincount(match[:, i], minlength=5).argmax()) for i in range(5)]
            Yc = np.vstack([y[:, order] - y[:, order].mean(axis=0) for y in Y])
            true = np.linalg.lstsq(np.vstack(Xr), Yc, rcond=None)[0]
            rows = {name: np.round(misfit(signal_noises(Xr, S, a), Z), 5).tolist()
                    for name, a in (("search", SEEN["before"]), ("polished", SEEN["after"]),
                                    ("true", true))}
            fh.write(json.dumps({"simulator": sim_name, "seed": seed, "shd": int(ev["shd"]),
                                 "order": bool(ev["correct_order"]),
                                 "fitted_order_distinct": len(set(order)) == 5,
                                 **rows}) + "\n")
            fh.flush()
    mn.polish_signal = _polish


if __name__ == "__main__":
    main()
