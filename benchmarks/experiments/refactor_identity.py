"""Check that a restructuring of the fit changes no result.

Fits a varied set of configurations on several seeds with the package on
``sys.path`` and saves every number a user sees (adjacency, components,
latents, weights, numeric diagnostics) to an ``.npz``; ``compare`` reports
the largest difference between two such files.

Usage::

    # results of this checkout and of another one (PYTHONPATH points at it)
    python benchmarks/experiments/refactor_identity.py run new.npz
    PYTHONPATH=/other/checkout python benchmarks/experiments/refactor_identity.py run old.npz
    python benchmarks/experiments/refactor_identity.py compare old.npz new.npz
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

CONFIGS = {
    "default": {},
    "paper": "paper",
    "rank": {"pruning": "rank"},
    "rank_raw": {"pruning": "rank_raw"},
    "likelihood": {"disentangle": "likelihood"},
    "hsic_rff": {"scorer": "hsic_rff"},
    "resamples2": {"quality_resamples": 2},
    "auto": {"n_latent": "auto"},
}
DATA = {  # (d, K, p, n)
    "square": (3, 4, 3, 300),
    "K<d": (4, 3, 4, 300),
    "p>d": (3, 4, 7, 300),
}
SEEDS = (0, 1, 2)


def _numbers(obj, prefix, out):
    """Every number in a nested diagnostics structure, keyed by its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            _numbers(v, f"{prefix}/{k}", out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _numbers(v, f"{prefix}/{i}", out)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "fiub":
        out[prefix] = obj.astype(float)
    elif isinstance(obj, (bool, int, float, np.number, np.bool_)):
        out[prefix] = np.asarray(float(obj))


def run(path):
    from creator_plugin import CREATOR
    from creator_plugin.simulation import simulate

    out = {}
    for data_name, (d, K, p, n) in DATA.items():
        for seed in SEEDS:
            sim = simulate(d, K, n, n_features=p, random_state=seed)
            inputs = {"numpy": sim.X}
            if data_name == "p>d" and seed == 0:
                import dask.array as da
                import pandas as pd
                inputs["pandas"] = [pd.DataFrame(x) for x in sim.X]
                inputs["dask"] = [da.from_array(x, chunks=(100, p)) for x in sim.X]
            for cfg_name, cfg in CONFIGS.items():
                for in_name, X in inputs.items():
                    if in_name != "numpy" and cfg_name not in ("default", "paper"):
                        continue
                    if cfg == "paper":
                        if data_name != "square" or seed > 0:
                            continue  # exact HSIC: slow
                        est = CREATOR.paper(d, random_state=seed)
                    else:
                        est = CREATOR(**{"n_latent": d, **cfg}, random_state=seed)
                    key = f"{data_name}|{seed}|{cfg_name}|{in_name}"
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est.fit(X)
                    except Exception as exc:  # a failure must fail the same way in both
                        out[f"{key}|error"] = np.asarray(0.0)
                        print(key, "error:", type(exc).__name__, exc, flush=True)
                        continue
                    out[f"{key}|adjacency"] = np.asarray(est.adjacency_matrix_, float)
                    out[f"{key}|components"] = np.asarray(est.components_)
                    out[f"{key}|weights"] = np.asarray(est.weights_)
                    for k, z in enumerate(est.latents_):
                        out[f"{key}|latents/{k}"] = np.asarray(z)
                    _numbers(est.diagnostics_, f"{key}|diagnostics", out)
                    print(key, flush=True)
    np.savez_compressed(path, **out)


def compare(old, new):
    a, b = np.load(old), np.load(new)
    keys_a, keys_b = set(a.files), set(b.files)
    worst, bad = 0.0, []
    for k in sorted(keys_a & keys_b):
        x, y = a[k], b[k]
        if x.shape != y.shape:
            bad.append(f"{k}: shape {x.shape} vs {y.shape}")
            continue
        diff = float(np.nanmax(np.abs(x - y))) if x.size else 0.0
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            diff = np.inf
        worst = max(worst, diff)
        if diff > 1e-12:
            bad.append(f"{k}: max |diff| = {diff:.3g}")
    missing = sorted(keys_a ^ keys_b)
    print(f"{len(keys_a & keys_b)} arrays compared, largest difference {worst:.3g}")
    for line in bad[:50]:
        print("DIFFERS", line)
    for k in missing[:50]:
        print("ONLY IN ONE", k)
    return not bad and not missing


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(0 if compare(sys.argv[2], sys.argv[3]) else 1)
