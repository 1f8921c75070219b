"""Workloads of ``creator bench`` besides the paper's grid: simulated cells and a user's data.

Simulated cells
---------------
:func:`simulation_cells` builds grid cells (see
:mod:`creator_plugin.benchmark.grid`) from lists of simulation settings --
d, K, n, p, setting, edge probability, measurement noise, mixing matrix --
one cell per combination.

A user's data with a truth file
-------------------------------
:func:`read_csv_workload` reads three CSV files:

* **data** (``--data``): a header row; one column of environment labels
  (``--env-column``, any values: rows with equal labels form one
  environment, environments are taken in sorted label order), every other
  column a numeric measurement. The format of ``creator fit``.
* **truth adjacency** (``--truth-adjacency``): a square d x d matrix with a
  header row of latent names and the same names as the first column;
  entry ``[row, column]`` non-zero iff latent *row* -> latent *column*. The
  ``adjacency.csv`` that ``creator fit`` writes has this format.
* **truth latents** (``--truth-latents``, optional): one row per data row,
  in the same order, with one numeric column per latent named as in the
  adjacency file (other columns, e.g. the environment column, are ignored).

Without truth latents only order-free graph metrics can be computed (see
:mod:`creator_plugin.benchmark.scoring`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

import numpy as np

__all__ = ["DataWorkload", "read_csv_workload", "simulation_cells"]


@dataclass
class DataWorkload:
    """A fixed data set with its ground truth, benchmarked like a simulated cell.

    Attributes
    ----------
    name : str
        Label of the rows (the data file's name).
    X_list : list of ndarray (n_k, p)
        Measurements per environment.
    truth_adjacency : ndarray (d, d) of int
        ``[i, j] == 1`` iff true latent i -> j.
    truth_latents : list of ndarray (n_k, d) or None
        True latents per environment, if known.
    environment_labels : list
        Label of every environment, in the order of ``X_list``.
    latent_names : list of str
        Names of the true latents.
    feature_names : list of str
    """

    name: str
    X_list: list[np.ndarray]
    truth_adjacency: np.ndarray
    truth_latents: list[np.ndarray] | None
    environment_labels: list = field(default_factory=list)
    latent_names: list[str] = field(default_factory=list)
    feature_names: list[str] = field(default_factory=list)

    @property
    def n_latent(self) -> int:
        """Number of true latents d."""
        return int(self.truth_adjacency.shape[0])

    def __repr__(self) -> str:  # rows carry the name, not the arrays
        return (f"DataWorkload({self.name!r}, K={len(self.X_list)}, d={self.n_latent}, "
                f"truth_latents={self.truth_latents is not None})")


def _read_csv(path, option: str):
    from .._csv import read_csv

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{option}: file {path} does not exist.")
    try:
        return read_csv(path)
    except Exception as exc:  # pandas' parser errors have many types
        raise ValueError(f"{option}: cannot read {path} as CSV ({exc}).") from None


def _truth_adjacency(path) -> tuple[np.ndarray, list[str]]:
    df = _read_csv(path, "--truth-adjacency")
    if df.shape[1] < 2:
        raise ValueError(f"--truth-adjacency: {path} needs a first column of latent names and "
                         "one column per latent.")
    df = df.set_index(df.columns[0])
    names = [str(c) for c in df.columns]
    rows = [str(r) for r in df.index]
    if rows != names:
        raise ValueError(f"--truth-adjacency: {path} must be square with the same latent names "
                         f"as header and first column; header {names}, first column {rows}.")
    try:
        values = df.to_numpy(dtype=float)
    except ValueError:
        raise ValueError(f"--truth-adjacency: {path} has non-numeric entries.") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"--truth-adjacency: {path} has missing or infinite entries.")
    A = (values != 0).astype(int)
    if np.any(np.diag(A)):
        raise ValueError(f"--truth-adjacency: {path} has self-loops (non-zero diagonal).")
    import networkx as nx

    if not nx.is_directed_acyclic_graph(nx.from_numpy_array(A, create_using=nx.DiGraph)):
        raise ValueError(f"--truth-adjacency: {path} is not a DAG (it has a directed cycle).")
    return A, names


def read_csv_workload(
    data,
    env_column: str,
    truth_adjacency,
    truth_latents=None,
    n_latent: int | None = None,
) -> DataWorkload:
    """Read a user's data set and its truth (formats in the module docstring).

    Parameters
    ----------
    data : path
        Measurements with an environment column.
    env_column : str
        Name of the environment column.
    truth_adjacency : path
        True latent DAG.
    truth_latents : path, optional
        True latent values, row-aligned with ``data``.
    n_latent : int, optional
        If given, must equal the number of latents in ``truth_adjacency``.

    Returns
    -------
    DataWorkload

    Raises
    ------
    ValueError
        Naming the option and what is wrong with its file.
    """
    from types import SimpleNamespace

    from .._csv import UserError, read_table

    # The same column rules as `creator fit`: a headerless first column (a pandas
    # index) is dropped, the environment column is read as text, features are numeric.
    table = SimpleNamespace(data=data, env_column=env_column, index_col=None, columns=None,
                            drop_columns=None, encoding="utf-8")
    try:
        feats, env_col, _ = read_table(table)
    except UserError as exc:
        raise ValueError(f"--data: {exc}") from None
    X = feats.to_numpy(dtype=float)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"--data: {data} has missing or infinite measurements.")
    env = env_col.to_numpy()
    import pandas as pd

    labels = sorted(pd.unique(env).tolist(), key=str)
    n_rows = len(env)
    A, names = _truth_adjacency(truth_adjacency)
    if n_latent is not None and n_latent != len(names):
        raise ValueError(f"--n-latent {n_latent} contradicts --truth-adjacency, which has "
                         f"{len(names)} latents {names}.")
    masks = [env == lab for lab in labels]
    Y_list = None
    if truth_latents is not None:
        lat = _read_csv(truth_latents, "--truth-latents")
        missing = [n for n in names if n not in lat.columns]
        if missing:
            raise ValueError(f"--truth-latents: {truth_latents} lacks columns {missing} "
                             f"(one per latent of --truth-adjacency: {names}).")
        if len(lat) != n_rows:
            raise ValueError(f"--truth-latents: {truth_latents} has {len(lat)} rows, --data "
                             f"has {n_rows}; they must be row-aligned.")
        try:
            Y = lat[names].to_numpy(dtype=float)
        except ValueError:
            raise ValueError(f"--truth-latents: {truth_latents} has non-numeric values.") from None
        if not np.all(np.isfinite(Y)):
            raise ValueError(f"--truth-latents: {truth_latents} has missing or infinite values.")
        Y_list = [Y[mk] for mk in masks]
    return DataWorkload(
        name=Path(data).name, X_list=[X[mk] for mk in masks], truth_adjacency=A,
        truth_latents=Y_list, environment_labels=labels, latent_names=names,
        feature_names=[str(c) for c in feats.columns],
    )


def simulation_cells(
    ds: Sequence[int],
    *,
    Ks: Sequence[int] | None = None,
    ns: Sequence[int] = (1000,),
    ps: Sequence[int] | None = None,
    settings: Sequence[int] = (1,),
    edge_probs: Sequence[float] = (0.5,),
    measurement_noises: Sequence[float] = (0.0,),
    mixing: str = "gaussian",
    indicators_per_latent: Sequence[int] = (3,),
    grid: str = "custom",
    families: Sequence[str] | None = None,
    noises: Sequence[str] | None = None,
) -> list[dict]:
    """Grid cells for every combination of the given simulation settings.

    Parameters
    ----------
    ds : sequence of int
        Latent nodes d.
    Ks : sequence of int, optional
        Environments; default K = d for every d (K = d + 1 for the
        interventional families: an observational environment plus one
        intervention per latent).
    ns : sequence of int, default=(1000,)
        Rows per environment.
    ps : sequence of int, optional
        Measurements (``n_features``); default p = d (``mixing="gaussian"``)
        or d times the indicators per latent (``"pure"``).
    settings, edge_probs, measurement_noises : sequences
        :func:`creator_plugin.simulate`'s ``setting``, ``edge_prob`` and
        ``measurement_noise``.
    mixing : {"gaussian", "pure"}, default="gaussian"
        The mixing matrix (:func:`creator_plugin.simulate`).
    indicators_per_latent : sequence of int, default=(3,)
        Used with ``mixing="pure"`` only.
    grid : str, default="custom"
        The cells' grid label.
    families : sequence of str, optional
        Workload families of :func:`creator_plugin.simulation.simulate_family`
        (one cell per family and d, K, n, p; ``settings``, ``edge_probs``,
        ``measurement_noises`` and ``mixing`` are then the family's own and
        must be left at their defaults).
    noises : sequence of str, optional
        ``"gaussian"`` and/or ``"laplace"``: one cell per noise law for the
        field's own generators (``lincd``, ``lscale_i``, ``umni_crl``,
        ``multi_node_crl``; :mod:`creator_plugin.benchmark.field_generators`),
        which are the only families that take it.

    Returns
    -------
    list of dict
        Cells; only settings that differ from :func:`creator_plugin.simulate`'s
        defaults are keys (so the data seeds of equal cells agree).
    """
    if noises is not None and families is None:
        raise ValueError("noises: only the field's families take a noise law (give families).")
    if families is not None:
        from ..simulation import FAMILIES, FIELD_FAMILIES
        from . import field_generators

        if noises is not None:
            other = [f for f in families if f not in FIELD_FAMILIES]
            if other:
                raise ValueError(f"noises: family {other[0]!r} fixes its own noise laws; only "
                                 f"{list(FIELD_FAMILIES)} take one.")
            bad = [z for z in noises if z not in field_generators.NOISES]
            if bad:
                raise ValueError(f"noises: unknown noise {bad[0]!r}; choose from "
                                 f"{list(field_generators.NOISES)}.")
        unknown = [f for f in families if f not in FAMILIES and f not in FIELD_FAMILIES]
        if unknown:
            raise ValueError(f"families: unknown family {unknown[0]!r}; choose from "
                             f"{sorted({*FAMILIES, *FIELD_FAMILIES})}.")
        if (tuple(settings) != (1,) or tuple(edge_probs) != (0.5,)
                or tuple(measurement_noises) != (0.0,) or mixing != "gaussian"):
            raise ValueError("families: a family fixes its own setting, edge probability, "
                             "measurement noise and mixing; leave them at their defaults.")
        from ..interventional import INTERVENTIONAL_FAMILIES

        cells = []
        for fam, d, n, z in product(families, ds, ns, noises or (None,)):
            # an interventional family needs the observational environment
            # plus one per latent for its methods (LinCD, LSCALE-I, UMNI-CRL)
            default_K = (d + 1 if fam in INTERVENTIONAL_FAMILIES
                         or fam in ("lincd", "lscale_i", "umni_crl") else d)
            for K in (Ks if Ks is not None else (default_K,)):
                base = {"grid": grid, "family": fam, "n_latent": d, "n_environments": K,
                        "n_samples": n, **({} if z is None else {"noise": z})}
                cells += [{**base, "n_features": p} for p in ps] if ps is not None else [base]
        return cells
    cells = []
    pure = mixing == "pure"
    for d, n, s, e, m in product(ds, ns, settings, edge_probs, measurement_noises):
        for K in (Ks if Ks is not None else (d,)):
            extras = [{}]
            if pure:
                extras = [{"mixing": "pure", "indicators_per_latent": i}
                          for i in indicators_per_latent]
            elif ps is not None:
                extras = [{"n_features": p} for p in ps]
            for extra in extras:
                cell = {"grid": grid, "n_latent": d, "n_environments": K, "n_samples": n,
                        "setting": s}
                if e != 0.5:
                    cell["edge_prob"] = e
                if m != 0.0:
                    cell["measurement_noise"] = m
                cells.append({**cell, **extra})
    return cells
