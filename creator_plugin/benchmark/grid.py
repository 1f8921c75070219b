"""Grid runner: methods x cells x seeds, tidy rows, joblib or Dask.

A *cell* is a flat dict. Its keys are

* ``"grid"``: the name of the grid it belongs to (``"main"``, ``"sigma"``,
  ``"beta"``, ``"threshold"``, ...), a label only;
* keyword arguments of :func:`creator_plugin.simulate` (``n_latent``,
  ``n_environments``, ``n_samples``, ``setting``, ``weight_scale``,
  ``noise_shape``, ...): they define the simulated data;
* optionally ``"methods"``: a tuple of method names, restricting the cell to
  those methods (the threshold-sensitivity cells only make sense for CREATOR);
* optionally ``"seeding"``: ``"hash"`` (default) or ``"seed"``, how the data
  seed is derived (see :func:`data_seed`);
* any other key is passed to the method as a keyword argument (for example
  ``prune_threshold`` and ``pruning`` for CREATOR).

The data of a (cell, seed) are simulated with a seed derived from the
simulation keys of the cell and the seed only, so every method, and every
method setting, sees the same data: the comparison is paired. A cell that
differs only by method keywords (the threshold cells) re-uses the data of the
main cell with the same simulation keys.
"""

from __future__ import annotations

import inspect
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Sequence
from itertools import product

import numpy as np
from joblib import Parallel, delayed

from .. import metrics, simulate
from .baselines import DEFAULT_METHODS, METHODS

__all__ = [
    "Cell",
    "SIGMAS",
    "BETAS",
    "THRESHOLDS",
    "ablation_grid",
    "data_seed",
    "full_grid",
    "paper_grid",
    "quick_grid",
    "run_grid",
    "run_one",
    "tasks_of",
    "threshold_grid",
]

Cell = dict
"""A flat dict describing one cell of a grid (see the module docstring)."""

#: The paper's weight scales (weak-edge ablation).
SIGMAS: tuple[float, ...] = (0.005, 0.007, 0.01, 0.03, 0.05, 0.07, 0.1, 0.3, 0.5)
#: The paper's generalised-normal shapes (2 is Gaussian).
BETAS: tuple[float, ...] = (2.0, 2.1, 2.5)
#: CREATOR's pruning levels tried in the sensitivity grid, per rule.
THRESHOLDS: dict[str, tuple[float, ...]] = {
    "residual": (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7),
    "rank": (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 2.8),
}

_SIM_KEYS = frozenset(inspect.signature(simulate).parameters) - {"random_state"}
_LABEL_KEYS = frozenset({"grid", "methods", "seeding"})


def paper_grid(
    ds: Sequence[int] = (2, 3, 5, 7), settings: Sequence[int] = (1, 2), n_samples: int = 1000
) -> list[Cell]:
    """The paper's main grid: d x {K = d, 2d} x setting.

    Parameters
    ----------
    ds : sequence of int, default=(2, 3, 5, 7)
        Numbers of latent nodes.
    settings : sequence of int, default=(1, 2)
        Simulation settings (1: noise laws differ across environments; 2: the
        same law in every environment, LiNGCReL's assumption).
    n_samples : int, default=1000
        Rows per environment.

    Returns
    -------
    list of Cell
        One cell per (d, setting, K), ``grid="main"``.
    """
    return [
        {"grid": "main", "n_latent": d, "n_environments": K, "n_samples": n_samples,
         "setting": s}
        for d, s in product(ds, settings)
        for K in (d, 2 * d)
    ]


def ablation_grid(
    d: int = 5, sigmas: Sequence[float] = SIGMAS, betas: Sequence[float] = BETAS
) -> list[Cell]:
    """Weak edges (weight scale sigma) and near-Gaussian noise (shape beta).

    Parameters
    ----------
    d : int, default=5
        Latent nodes; K = d environments, setting 1, n = 1000 (the paper's).
    sigmas, betas : sequence of float
        Values of ``weight_scale`` (grid ``"sigma"``) and ``noise_shape``
        (grid ``"beta"``).

    Returns
    -------
    list of Cell
    """
    base = {"n_latent": d, "n_environments": d, "n_samples": 1000, "setting": 1}
    cells = [{"grid": "sigma", **base, "weight_scale": s} for s in sigmas]
    cells += [{"grid": "beta", **base, "noise_shape": b} for b in betas]
    return cells


def threshold_grid(
    d: int = 5, thresholds: dict[str, Sequence[float]] | None = None
) -> list[Cell]:
    """CREATOR's pruning-threshold sensitivity at d = K = d, setting 1.

    The cells carry ``pruning`` and ``prune_threshold`` (passed to CREATOR)
    and ``methods=("CREATOR",)``; their data are those of the main cell
    (d, K=d, setting 1), so the default level reproduces that cell.

    Parameters
    ----------
    d : int, default=5
        Latent nodes (and environments).
    thresholds : dict, optional
        ``{rule: levels}``; default :data:`THRESHOLDS`.

    Returns
    -------
    list of Cell
    """
    thresholds = THRESHOLDS if thresholds is None else thresholds
    return [
        {"grid": "threshold", "n_latent": d, "n_environments": d, "n_samples": 1000,
         "setting": 1, "methods": ("CREATOR",), "pruning": rule, "prune_threshold": t}
        for rule, levels in thresholds.items()
        for t in levels
    ]


def quick_grid() -> list[Cell]:
    """A few-minute preset: d in {2, 3, 5}, K = d, both settings.

    Returns
    -------
    list of Cell
    """
    return [c for c in paper_grid(ds=(2, 3, 5)) if c["n_environments"] == c["n_latent"]]


def full_grid() -> list[Cell]:
    """Main grid, sigma and beta ablations and the threshold sensitivity.

    Returns
    -------
    list of Cell
    """
    return paper_grid() + ablation_grid() + threshold_grid()


def _sim_params(cell: Cell) -> dict:
    return {k: v for k, v in cell.items() if k in _SIM_KEYS}


def _fit_params(cell: Cell) -> dict:
    return {k: v for k, v in cell.items() if k not in _SIM_KEYS and k not in _LABEL_KEYS}


def data_seed(cell: Cell, seed: int) -> int:
    """Deterministic seed of the simulated data of one (cell, seed).

    By default a CRC32 of the cell's simulation keys and ``seed``: it
    depends on nothing else (not the method, the process or the backend),
    and different cells get unrelated data. With ``cell["seeding"] ==
    "seed"`` it is ``seed`` itself, i.e. the data are
    ``simulate(**keys, random_state=seed)``, as a user would simulate them
    (the convention of ``benchmarks/accuracy.py``).

    Parameters
    ----------
    cell : Cell
    seed : int

    Returns
    -------
    int
    """
    seeding = cell.get("seeding", "hash")
    if seeding == "seed":
        return int(seed)
    if seeding != "hash":
        raise ValueError(f"cell['seeding'] must be 'hash' or 'seed', got {seeding!r}.")
    key = repr(sorted(_sim_params(cell).items())) + f"|{seed}"
    return zlib.crc32(key.encode())


def run_one(
    method: str, cell: Cell, seed: int, methods: dict[str, Callable] | None = None
) -> dict:
    """Simulate one (cell, seed), fit one method, return one tidy row.

    Parameters
    ----------
    method : str
        A key of ``methods``.
    cell : Cell
        See the module docstring.
    seed : int
        Seed index; the method gets it as ``random_state``.
    methods : dict, optional
        Method table; default :data:`creator_plugin.benchmark.baselines.METHODS`.

    Returns
    -------
    dict
        The cell's keys (``methods`` excluded), ``method``, ``seed``,
        ``data_seed``, ``status`` (``"ok"`` or ``"failed"``), ``error``,
        ``seconds`` (wall time of the fit alone), and for a successful fit
        ``shd``, ``locr2``, ``topological_divergence``, ``exact_dag``,
        ``correct_order`` and ``n_true_edges``. A method (or the simulation,
        or the evaluation) that raises gives a row with ``status="failed"``
        and the error message, never an exception.
    """
    methods = METHODS if methods is None else methods
    params = _sim_params(cell)
    dseed = data_seed(cell, seed)
    row = {"method": method, **{k: v for k, v in cell.items() if k != "methods"},
           "seed": seed, "data_seed": dseed}
    elapsed = float("nan")
    try:
        sim = simulate(**params, random_state=dseed)
        start = time.perf_counter()
        adj, latents, order = methods[method](
            sim.X, params["n_latent"], seed, **_fit_params(cell)
        )
        elapsed = time.perf_counter() - start
        ev = metrics.evaluate(sim.adjacency, sim.Y, adj, latents, order)
    except Exception as exc:  # a crashed fit is a result, recorded and never dropped
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc(limit=4), seconds=elapsed)
        return row
    row.update(
        status="ok", error="", traceback="", seconds=elapsed, shd=int(ev["shd"]),
        locr2=float(ev["locr2"]),
        topological_divergence=int(ev["topological_divergence"]),
        exact_dag=bool(ev["exact_dag"]), correct_order=bool(ev["correct_order"]),
        n_true_edges=int(np.sum(sim.adjacency)),
    )
    return row


def tasks_of(
    cells: Iterable[Cell], seeds: Iterable[int], names: Sequence[str]
) -> list[tuple[str, Cell, int]]:
    """The (method, cell, seed) tasks of a grid, in a fixed order.

    A cell with a ``methods`` key only runs the requested methods among it.

    Parameters
    ----------
    cells : iterable of Cell
    seeds : iterable of int
    names : sequence of str
        Requested methods.

    Returns
    -------
    list of (str, Cell, int)
    """
    seed_list = list(seeds)
    return [
        (m, c, s)
        for c in cells
        for s in seed_list
        for m in names
        if "methods" not in c or m in c["methods"]
    ]


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

    Parameters
    ----------
    cells : iterable of Cell
        See the module docstring.
    seeds : int or iterable of int
        ``n`` means seeds ``0..n-1``.
    methods : iterable of str, optional
        Method names (default: :data:`~creator_plugin.benchmark.baselines.DEFAULT_METHODS`
        with the default table, else every method of the table).
    n_jobs : int, optional
        joblib workers. Under ``with joblib.parallel_config(backend="dask"):``
        and an open ``distributed.Client`` the tasks run on the Dask cluster
        instead (``n_jobs=None`` then uses all its workers).
    method_table : dict, optional
        ``{name: fit(X_list, n_latent, random_state, **kw) -> (adjacency,
        latents, order)}``; default
        :data:`creator_plugin.benchmark.baselines.METHODS`.
    progress : bool, default=False
        Show a tqdm progress bar (with ETA) over the fits.

    Returns
    -------
    list of dict
        One row per task (see :func:`run_one`), in task order. Results do not
        depend on the backend or on ``n_jobs``: every task seeds itself from
        its (cell, seed).

    Raises
    ------
    ValueError
        If a requested method is not in the table.
    """
    table = METHODS if method_table is None else method_table
    if methods is None:
        methods = DEFAULT_METHODS if method_table is None else table
    names = list(methods)
    unknown = [m for m in names if m not in table]
    if unknown:
        raise ValueError(f"Unknown methods {unknown}; available: {list(table)}.")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    tasks = tasks_of(cells, seed_list, names)
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(run_one)(m, c, s, method_table) for m, c, s in tasks
    )
    if progress:
        from tqdm.auto import tqdm

        gen = tqdm(gen, total=len(tasks), desc="benchmark", unit="fit", smoothing=0.05)
    return list(gen)
