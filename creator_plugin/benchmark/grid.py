"""Grid runner: methods x cells x seeds, tidy rows, joblib or Dask."""

from __future__ import annotations

import time
import traceback
import zlib
from collections.abc import Callable, Iterable
from itertools import product

import numpy as np
from joblib import Parallel, delayed

from .. import metrics, simulate
from .baselines import METHODS

__all__ = ["Cell", "paper_grid", "quick_grid", "run_grid", "run_one"]

# A cell is a dict of simulate() keyword arguments plus "grid" (its name).
Cell = dict


def paper_grid(ds=(2, 3, 5, 7), settings=(1, 2)) -> list[Cell]:
    """The paper's main grid: d x {K = d, 2d} x setting, n = 1000."""
    return [
        {"grid": "main", "n_latent": d, "n_environments": K, "n_samples": 1000, "setting": s}
        for d, s in product(ds, settings)
        for K in (d, 2 * d)
    ]


def ablation_grid(d: int = 5) -> list[Cell]:
    """Weak edges (sigma) and near-Gaussian noise (beta) at d = K = 5, setting 1."""
    sig = [0.005, 0.007, 0.01, 0.03, 0.05, 0.07, 0.1, 0.3, 0.5]
    cells = [{"grid": "sigma", "n_latent": d, "n_environments": d, "n_samples": 1000,
              "setting": 1, "weight_scale": s} for s in sig]
    cells += [{"grid": "beta", "n_latent": d, "n_environments": d, "n_samples": 1000,
               "setting": 1, "noise_shape": b} for b in (2.0, 2.1, 2.5)]
    return cells


def quick_grid() -> list[Cell]:
    """A few-minute preset: d in {2, 3, 5}, K = d, both settings."""
    return [c for c in paper_grid(ds=(2, 3, 5)) if c["n_environments"] == c["n_latent"]]


def _data_seed(cell: Cell, seed: int) -> int:
    """Deterministic seed of the simulated data of one (cell, seed)."""
    key = repr(sorted((k, v) for k, v in cell.items() if k != "grid")) + f"|{seed}"
    return zlib.crc32(key.encode())


def run_one(method: str, cell: Cell, seed: int, methods: dict | None = None) -> dict:
    """Simulate one (cell, seed), fit one method, return one tidy row.

    A method that raises gives a row with ``status="failed"`` and the error.
    """
    methods = METHODS if methods is None else methods
    params = {k: v for k, v in cell.items() if k != "grid"}
    sim = simulate(**params, random_state=_data_seed(cell, seed))
    row = {"method": method, **cell, "seed": seed}
    start = time.perf_counter()
    try:
        adj, latents, order = methods[method](sim.X, params["n_latent"], seed)
        elapsed = time.perf_counter() - start
        ev = metrics.evaluate(sim.adjacency, sim.Y, adj, latents, order)
    except Exception as exc:  # recorded, never dropped
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc(limit=3), seconds=time.perf_counter() - start)
        return row
    row.update(
        status="ok", error="", traceback="", seconds=elapsed, shd=ev["shd"],
        locr2=ev["locr2"], topological_divergence=ev["topological_divergence"],
        exact_dag=ev["exact_dag"], correct_order=ev["correct_order"],
        n_true_edges=int(np.sum(sim.adjacency)),
    )
    return row


def run_grid(
    cells: Iterable[Cell],
    seeds: int | Iterable[int],
    methods: Iterable[str] | None = None,
    *,
    n_jobs: int | None = None,
    method_table: dict[str, Callable] | None = None,
    progress: bool = False,
) -> list[dict]:
    """Run every (method, cell, seed); rows come back in a deterministic order.

    Parallelism is joblib's: ``n_jobs`` workers, or whatever backend is active
    (``with joblib.parallel_config(backend="dask"):`` and an open
    ``distributed.Client`` runs it on a Dask cluster). Results do not depend
    on the backend: every task seeds itself from (cell, seed).
    """
    table = METHODS if method_table is None else method_table
    names = list(table) if methods is None else list(methods)
    unknown = [m for m in names if m not in table]
    if unknown:
        raise ValueError(f"Unknown methods {unknown}; available: {list(table)}.")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    tasks = [(m, c, s) for c in cells for s in seed_list for m in names]
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(run_one)(m, c, s, method_table) for m, c, s in tasks
    )
    if progress:
        from tqdm.auto import tqdm

        gen = tqdm(gen, total=len(tasks), desc="benchmark", unit="fit")
    return list(gen)
