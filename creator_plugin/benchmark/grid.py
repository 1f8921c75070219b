"""Grid runner: methods x cells x seeds, tidy rows, joblib or Dask.

A *cell* is a flat dict. Its keys are

* ``"grid"``: the name of the grid it belongs to (``"main"``, ``"sigma"``,
  ``"beta"``, ``"threshold"``, ...), a label only;
* keyword arguments of :func:`creator_plugin.simulate` (``n_latent``,
  ``n_environments``, ``n_samples``, ``setting``, ``weight_scale``,
  ``noise_shape``, ...): they define the simulated data; or ``"family"``, a
  workload family of :func:`creator_plugin.simulation.simulate_family`, with
  ``n_latent``, ``n_environments``, ``n_samples`` and optionally
  ``n_features``;
* optionally ``"methods"``: a tuple of method names, restricting the cell to
  those methods (the threshold-sensitivity cells only make sense for CREATOR);
* optionally ``"seeding"``: ``"hash"`` (default) or ``"seed"``, how the data
  seed is derived (see :func:`data_seed`);
* optionally ``"workload"``: a
  :class:`~creator_plugin.benchmark.workloads.DataWorkload` (a user's data
  with its truth) instead of simulated data; the seeds then only vary the
  methods' ``random_state``;
* any other key is passed to the method as a keyword argument (for example
  ``prune_threshold`` and ``pruning`` for CREATOR, ``tau`` for the paper
  preset).

The data of a (cell, seed) are simulated with a seed derived from the
simulation keys of the cell and the seed only, so every method, and every
method setting, sees the same data: the comparison is paired. A cell that
differs only by method keywords (the threshold cells) re-uses the data of the
main cell with the same simulation keys.
"""

from __future__ import annotations

import inspect
import json
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Sequence
from itertools import product

import numpy as np
from joblib import Parallel, delayed

from .. import simulate
from ..confidence import undecided_pairs
from ..simulation import simulate_family
from .baselines import DEFAULT_METHODS, METHODS
from .isolation import FitTimeout, call_with_time_limit
from .methods import resolve_methods, time_limits_for
from .scoring import score

__all__ = [
    "Cell",
    "SIGMAS",
    "BETAS",
    "PAPER_TAUS",
    "THRESHOLDS",
    "ablation_grid",
    "data_seed",
    "full_grid",
    "paper_grid",
    "quick_grid",
    "run_grid",
    "run_one",
    "tasks_of",
    "tau_grid",
    "threshold_grid",
]

Cell = dict
"""A flat dict describing one cell of a grid (see the module docstring)."""

#: The paper's weight scales (weak-edge ablation).
SIGMAS: tuple[float, ...] = (0.005, 0.007, 0.01, 0.03, 0.05, 0.07, 0.1, 0.3, 0.5)
#: The paper's generalised-normal shapes (2 is Gaussian).
BETAS: tuple[float, ...] = (2.0, 2.1, 2.5)
#: The paper's singular-value thresholds tau (its sensitivity table).
PAPER_TAUS: tuple[float, ...] = (0.1, 0.4, 0.7, 1.0, 1.3, 1.6, 1.9, 2.2, 2.5, 2.8)
#: CREATOR's pruning levels tried in the sensitivity grid, per rule (the rank
#: rule on standardised coefficients at the paper's tau levels).
THRESHOLDS: dict[str, tuple[float, ...]] = {
    "residual": (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7),
    "rank": PAPER_TAUS,
}

_SIM_KEYS = (frozenset(inspect.signature(simulate).parameters) - {"random_state"}
             | {"family", "noise"})
_LABEL_KEYS = frozenset({"grid", "methods", "seeding", "workload"})


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
    d: int = 5,
    sigmas: Sequence[float] = SIGMAS,
    betas: Sequence[float] = BETAS,
    Ks: Sequence[int] | None = None,
) -> list[Cell]:
    """Weak edges (weight scale sigma) and near-Gaussian noise (shape beta).

    Parameters
    ----------
    d : int, default=5
        Latent nodes; setting 1, n = 1000 (the paper's).
    sigmas, betas : sequence of float
        Values of ``weight_scale`` (grid ``"sigma"``) and ``noise_shape``
        (grid ``"beta"``).
    Ks : sequence of int, optional
        Numbers of environments; default ``(d, 2 * d)``, as the paper.

    Returns
    -------
    list of Cell
    """
    Ks = (d, 2 * d) if Ks is None else Ks
    cells = []
    for K in Ks:
        base = {"n_latent": d, "n_environments": K, "n_samples": 1000, "setting": 1}
        cells += [{"grid": "sigma", **base, "weight_scale": s} for s in sigmas]
        cells += [{"grid": "beta", **base, "noise_shape": b} for b in betas]
    return cells


def tau_grid(d: int = 5, taus: Sequence[float] = PAPER_TAUS) -> list[Cell]:
    """The paper's tau table: the paper preset at every tau, the default beside it.

    The paper's cell (d = K = ``d``, n = 1000, setting 1). Every cell has the
    simulation keys of the main grid's cell, so all of them, and the main
    grid's cell, share the data of a seed.

    Parameters
    ----------
    d : int, default=5
    taus : sequence of float, default=:data:`PAPER_TAUS`

    Returns
    -------
    list of Cell
        ``grid="tau"``: one cell per tau with ``methods=("CREATOR (paper)",)``
        and ``tau``, and one with ``methods=("CREATOR",)``.
    """
    base = {"grid": "tau", "n_latent": d, "n_environments": d, "n_samples": 1000, "setting": 1}
    return [{**base, "methods": ("CREATOR (paper)",), "tau": t} for t in taus] + [
        {**base, "methods": ("CREATOR",)}]


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


def _simulated(cell: Cell, seed: int):
    """Data and truth of one (cell, seed): ``(X_list, truth_adjacency, truth_latents, dseed)``."""
    workload = cell.get("workload")
    if workload is not None:
        return workload.X_list, workload.truth_adjacency, workload.truth_latents, None
    dseed = data_seed(cell, seed)
    params = _sim_params(cell)
    if "family" in params:
        sim = simulate_family(**params, random_state=dseed)
    else:
        sim = simulate(**params, random_state=dseed)
    return sim.X, sim.adjacency, sim.Y, dseed


def _row_labels(cell: Cell) -> dict:
    out = {k: v for k, v in cell.items() if k not in ("methods", "workload")}
    if cell.get("workload") is not None:
        out["data"] = cell["workload"].name
        out.setdefault("n_latent", cell["workload"].n_latent)
        out.setdefault("n_environments", len(cell["workload"].X_list))
    return out


def run_one(
    method: str,
    cell: Cell,
    seed: int,
    methods: dict[str, Callable] | None = None,
    time_limit: float | None = None,
) -> dict:
    """Simulate (or take) the data of one (cell, seed), fit one method, return one tidy row.

    Parameters
    ----------
    method : str
        A key of ``methods``.
    cell : Cell
        See the module docstring.
    seed : int
        Seed index; the method gets it as ``random_state``.
    methods : dict, optional
        ``{name: fit}`` (the protocol of :mod:`creator_plugin.benchmark.methods`);
        default :data:`creator_plugin.benchmark.baselines.METHODS`.
    time_limit : float, optional
        Seconds; if given the fit runs in a separate process that is killed
        at the limit (:func:`creator_plugin.benchmark.isolation.call_with_time_limit`).

    Returns
    -------
    dict
        The cell's keys (``methods`` excluded; a data workload appears as
        ``data``, its name), ``method``, ``seed``, ``data_seed`` (None for a
        data workload), ``status`` (``"ok"``, ``"failed"`` or
        ``"timeout"``), ``error``, ``seconds`` (wall time of the fit alone),
        ``time_limit`` and ``info`` (the method's extras as JSON), and for a
        successful fit the metrics of
        :func:`creator_plugin.benchmark.scoring.score` and
        ``undecided_edges``: the number of ordered pairs of latents whose
        edge confidence lies strictly between 0.1 and 0.9 (NaN for a method
        that reports no confidence; :mod:`creator_plugin.benchmark.methods`).
        A method (or the simulation, or the scoring) that raises gives a row with
        ``status="failed"`` and the error message, one over its time limit a
        row with ``status="timeout"``; never an exception.
    """
    methods = METHODS if methods is None else methods
    row = {"method": method, **_row_labels(cell), "seed": seed, "data_seed": None,
           "time_limit": time_limit}
    elapsed = float("nan")
    try:
        X_list, truth_adjacency, truth_latents, row["data_seed"] = _simulated(cell, seed)
        n_latent = int(np.asarray(truth_adjacency).shape[0])
        args, kwargs = (X_list, n_latent, seed), _fit_params(cell)
        if time_limit is None:
            start = time.perf_counter()
            result = methods[method](*args, **kwargs)
            elapsed = time.perf_counter() - start
        else:
            result, elapsed = call_with_time_limit(methods[method], args, kwargs, time_limit)
        if not isinstance(result, tuple) or len(result) not in (3, 4):
            raise TypeError("a method must return (adjacency, latents, order) or "
                            f"(adjacency, latents, order, info), got {type(result).__name__}.")
        adjacency, latents, order, *info = result
        scores = score(truth_adjacency, truth_latents, adjacency, latents, order)
    except FitTimeout as exc:
        row.update(status="timeout", error=str(exc), traceback="", seconds=float("nan"),
                   info="")
        return row
    except Exception as exc:  # a crashed fit is a result, recorded and never dropped
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc(limit=4), seconds=elapsed, info="")
        return row
    extras, confidence = (info[0] if info else None), None
    if isinstance(extras, dict) and "edge_confidence" in extras:  # a column, not an extra
        confidence = np.asarray(extras["edge_confidence"], dtype=float)
        extras = {k: v for k, v in extras.items() if k != "edge_confidence"} or None
    row.update(status="ok", error="", traceback="", seconds=elapsed,
               info="" if extras is None else json.dumps(extras, default=str), **scores,
               undecided_edges=(float("nan") if confidence is None
                                else len(undecided_pairs(confidence))))
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
    methods: Iterable | None = None,
    *,
    n_jobs: int | None = None,
    method_table: dict[str, Callable] | None = None,
    time_limit: float | dict[str, float] | None = None,
    progress: bool = False,
) -> list[dict]:
    """Run every (method, cell, seed); rows come back in a deterministic order.

    Parameters
    ----------
    cells : iterable of Cell
        See the module docstring.
    seeds : int or iterable of int
        ``n`` means seeds ``0..n-1``.
    methods : iterable, optional
        Names of the table, import paths ``"module:attribute"`` or (from
        Python) fit functions and estimators
        (:func:`creator_plugin.benchmark.methods.resolve_methods`). Default:
        :data:`~creator_plugin.benchmark.baselines.DEFAULT_METHODS` with the
        default table, else every method of the table.
    n_jobs : int, optional
        joblib workers. Under ``with joblib.parallel_config(backend="dask"):``
        and an open ``distributed.Client`` the tasks run on the Dask cluster
        instead (``n_jobs=None`` then uses all its workers).
    method_table : dict, optional
        ``{name: fit}`` of the built-in names; default
        :data:`creator_plugin.benchmark.baselines.METHODS`.
    time_limit : float or dict, optional
        Per-fit limit in seconds, for every method or ``{name: seconds}``;
        methods without one keep
        :data:`~creator_plugin.benchmark.methods.DEFAULT_TIME_LIMITS` (GIN).
        A limited fit runs in its own process, killed at the limit.
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
        If a requested method is unknown or a time limit is invalid.
    """
    table = METHODS if method_table is None else method_table
    if methods is None:
        methods = DEFAULT_METHODS if method_table is None else list(table)
    resolved = resolve_methods(methods, table)
    names = list(resolved)
    limits = time_limits_for(names, time_limit)
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    tasks = tasks_of(cells, seed_list, names)
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(run_one)(m, c, s, {m: resolved[m]}, limits[m]) for m, c, s in tasks
    )
    if progress:
        from tqdm.auto import tqdm

        gen = tqdm(gen, total=len(tasks), desc="benchmark", unit="fit", smoothing=0.05)
    return list(gen)
