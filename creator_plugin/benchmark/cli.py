"""``creator bench``: compare CREATOR with other methods, on simulated data or yours.

Workloads (one of):

* presets: ``--quick`` (d in 2, 3, 5, K = d, both settings, 5 seeds: a few
  minutes on 2 cores), the default (the paper's main grid: d in 2, 3, 5, 7,
  K in d, 2d, both settings, 50 seeds as the paper) and ``--full`` (the main
  grid plus the weight-scale and noise-shape ablations at K = d and 2d and
  CREATOR's pruning-threshold sensitivity) and ``--tau-table`` (the paper
  preset at the paper's tau levels, the default beside it, on the paper's
  cell); ``--ablations`` adds the ablations to a preset;
* simulated cells of your choice: ``--d``, ``--K``, ``--n``, ``--p``,
  ``--setting``, ``--edge-prob``, ``--measurement-noise``, ``--mixing pure
  --indicators-per-latent M`` (one cell per combination);
* your data with its truth: ``--data CSV --env-column COL --truth-adjacency
  CSV [--truth-latents CSV]`` (file formats: ``creator_plugin.benchmark.workloads``).

Methods (``--methods``): built-in names or import paths ``package.module:name``
to a fit function or an estimator (the protocol:
``creator_plugin.benchmark.methods``). Every table is aligned to the truth
through the LocR² matching of ``creator_plugin.metrics``. Writes
``results.csv`` (one row per method, cell and seed; failed and timed-out
fits are rows too), ``summary.md`` and PNG figures to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

__all__ = ["DESCRIPTION", "add_arguments", "build_parser", "main", "run"]

DESCRIPTION = __doc__


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone argument parser of ``creator bench``.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(prog="creator bench", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``creator bench`` to ``parser``.

    Nothing heavy is imported here, so the main ``creator`` parser stays
    cheap to build.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true",
                        help="d in 2,3,5, K=d, both settings, 5 seeds (a few minutes)")
    preset.add_argument("--full", action="store_true",
                        help="main grid + sigma/beta ablations + pruning-threshold sensitivity")
    preset.add_argument("--tau-table", action="store_true",
                        help="the paper's tau table: the paper preset at every tau of the "
                             "paper, the default beside it, same data (d=K=5, n=1000, setting "
                             "1; exact HSIC: about 10 s per paper fit)")
    parser.add_argument("--ablations", action="store_true",
                        help="add the sigma and beta ablations (K = d and 2d) to the preset")
    sim = parser.add_argument_group(
        "simulated cells (instead of a preset; one cell per combination)")
    sim.add_argument("--d", type=int, nargs="+", metavar="D", help="latent nodes")
    sim.add_argument("--K", type=int, nargs="+", metavar="K",
                     help="environments (default: K = d; K = d + 1 for the interventional "
                          "families)")
    sim.add_argument("--n", type=int, nargs="+", metavar="N",
                     help="rows per environment (default 1000)")
    sim.add_argument("--p", type=int, nargs="+", metavar="P",
                     help="measurements (default p = d; not with --mixing pure)")
    sim.add_argument("--setting", type=int, nargs="+", choices=(1, 2), metavar="S",
                     help="1: noise laws differ across environments (default); 2: one law "
                          "per node")
    sim.add_argument("--edge-prob", type=float, nargs="+", metavar="E",
                     help="edge probability (default 0.5)")
    sim.add_argument("--measurement-noise", type=float, nargs="+", metavar="M",
                     help="measurement noise SD relative to each column's SD (default 0)")
    sim.add_argument("--mixing", choices=("gaussian", "pure"), default=None,
                     help="mixing matrix: 'gaussian' (dense, the paper's) or 'pure' (every "
                          "measurement has one latent parent: GIN's assumption)")
    sim.add_argument("--family", nargs="+", default=None, metavar="NAME",
                     help="workload families of the zoo (creator_plugin.simulation.FAMILIES: "
                          "paper, heavy_tails, wide_scales, signed_weights, measured, unequal_n, "
                          "near_gaussian, weak_weights, discrete_noise, and the interventional "
                          "single_node_hard, single_node_hard_laplace, single_node_soft, "
                          "multi_node; and the field's own generators, FIELD_FAMILIES: lincd, "
                          "lscale_i, umni_crl, multi_node_crl); one cell per family")
    sim.add_argument("--noise", nargs="+", default=None, choices=("gaussian", "laplace"),
                     help="noise law of the field's own generators (lincd, lscale_i, umni_crl, "
                          "multi_node_crl; default gaussian, the authors'); one cell per law")
    sim.add_argument("--indicators-per-latent", type=int, nargs="+", metavar="M",
                     help="measurements per latent with --mixing pure (default 3)")
    data = parser.add_argument_group("your data with its truth (instead of a preset)")
    data.add_argument("--data", metavar="CSV",
                      help="measurements and one environment column (as for `creator fit`)")
    data.add_argument("--env-column", metavar="COL", help="name of the environment column")
    data.add_argument("--truth-adjacency", metavar="CSV",
                      help="true latent DAG: d x d, header and first column the latent names, "
                           "[row, col] != 0 iff row -> col")
    data.add_argument("--truth-latents", metavar="CSV",
                      help="true latents, one row per data row, one column per latent name "
                           "(without it only order-free graph metrics are computed)")
    data.add_argument("--n-latent", type=int, default=None,
                      help="number of latents (default: that of --truth-adjacency)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds per cell (default: 50 for the presets, as the paper; 5 "
                             "with --quick, simulated cells or --data)")
    parser.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                        help="built-in names (default: CREATOR, LiNGCReL and the two PCA + "
                             "LiNGAM baselines; also 'CREATOR (paper)' and GIN) or import "
                             "paths package.module:name; an unknown name lists the built-in "
                             "ones")
    parser.add_argument("--list-methods", action="store_true",
                        help="list the built-in methods, what each assumes and the extra it "
                             "needs, then exit")
    parser.add_argument("--time-limit", nargs="+", default=None, metavar="SECONDS|NAME=SECONDS",
                        help="per-fit time limit for every method (one number) or for named "
                             "methods (GIN=120); a limited fit runs in its own process and is "
                             "killed at the limit (its row says 'timeout'). GIN has 600 s "
                             "unless set")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="joblib workers (-1: all cores); ignored with Dask")
    dask = parser.add_mutually_exclusive_group()
    dask.add_argument("--dask-scheduler", default=None, metavar="ADDRESS",
                      help="run on a Dask cluster, e.g. tcp://host:8786 "
                           "(pip install creator-plugin[distributed])")
    dask.add_argument("--dask-local", type=int, default=None, metavar="N",
                      help="start a distributed.LocalCluster with N worker processes")
    parser.add_argument("--out", default="bench_results",
                        help="output directory; must not exist (see --force)")
    parser.add_argument("--force", action="store_true",
                        help="replace --out if an earlier creator run wrote it (and nothing "
                             "else is in it); any other directory is refused")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


_SIM_FLAGS = ("d", "K", "n", "p", "setting", "edge_prob", "measurement_noise", "mixing", "family",
              "indicators_per_latent", "noise")
_DATA_FLAGS = ("env_column", "truth_adjacency", "truth_latents", "n_latent")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _time_limit(values: list[str] | None) -> float | dict[str, float] | None:
    """``["60"]`` -> 60.0; ``["GIN=60", "X=5"]`` -> {"GIN": 60.0, "X": 5.0}."""
    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        try:
            return float(values[0])
        except ValueError:
            raise ValueError(f"--time-limit {values[0]!r} is not a number of seconds.") from None
    out = {}
    for v in values:
        name, sep, sec = v.rpartition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = float(sec)
        except ValueError:
            raise ValueError(f"--time-limit {v!r}: give one number, or NAME=SECONDS per "
                             "method.") from None
    return out


def _cells(args: argparse.Namespace) -> tuple[list[dict], int]:
    """The cells of the requested workload and the default number of seeds."""
    from .grid import ablation_grid, full_grid, paper_grid, quick_grid, tau_grid
    from .workloads import read_csv_workload, simulation_cells

    presets = [f for f in ("quick", "full", "ablations", "tau_table") if getattr(args, f)]
    sim = [f for f in _SIM_FLAGS if getattr(args, f) is not None]
    if args.data is not None:
        if presets or sim:
            raise ValueError(f"--data cannot be combined with {_flag((presets + sim)[0])}.")
        missing = [f for f in ("env_column", "truth_adjacency") if getattr(args, f) is None]
        if missing:
            raise ValueError(f"--data needs {_flag(missing[0])}.")
        workload = read_csv_workload(args.data, args.env_column, args.truth_adjacency,
                                     args.truth_latents, args.n_latent)
        return [{"grid": "data", "workload": workload}], 5
    given = [f for f in _DATA_FLAGS if getattr(args, f) is not None]
    if given:
        raise ValueError(f"{_flag(given[0])} needs --data.")
    if sim:
        if presets:
            raise ValueError(f"{_flag(sim[0])} defines the cells; it cannot be combined with "
                             f"{_flag(presets[0])}.")
        if args.d is None:
            raise ValueError("simulated cells need --d.")
        if args.mixing == "pure" and args.p is not None:
            raise ValueError("--p cannot be combined with --mixing pure (p = d x "
                             "--indicators-per-latent).")
        if args.indicators_per_latent is not None and args.mixing != "pure":
            raise ValueError("--indicators-per-latent needs --mixing pure.")
        for name in ("d", "K", "n", "p", "indicators_per_latent"):
            if any(v < 1 for v in getattr(args, name) or ()):
                raise ValueError(f"{_flag(name)} must be >= 1.")
        if any(not 0 <= e <= 1 for e in args.edge_prob or ()):
            raise ValueError("--edge-prob must be in [0, 1].")
        if any(m < 0 for m in args.measurement_noise or ()):
            raise ValueError("--measurement-noise must be >= 0.")
        cells = simulation_cells(
            args.d, Ks=args.K, ns=args.n or (1000,), ps=args.p, settings=args.setting or (1,),
            edge_probs=args.edge_prob or (0.5,),
            measurement_noises=args.measurement_noise or (0.0,),
            mixing=args.mixing or "gaussian",
            indicators_per_latent=args.indicators_per_latent or (3,),
            families=args.family, noises=args.noise,
        )
        return cells, 5
    if args.quick:
        cells, seeds = quick_grid(), 5
    elif args.full:
        cells, seeds = full_grid(), 50
    elif args.tau_table:
        cells, seeds = tau_grid(), 50
    else:
        cells, seeds = paper_grid(), 50
    if args.ablations and not args.full:
        cells += ablation_grid()
    return cells, seeds


def _backend(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """joblib's Dask backend on a cluster, or nothing (plain joblib)."""
    if not (args.dask_scheduler or args.dask_local):
        return contextlib.nullcontext()
    try:
        import distributed
    except ImportError as exc:  # optional extra
        raise SystemExit("The Dask options need `distributed`: "
                         "pip install creator-plugin[distributed]") from exc
    import joblib

    stack = contextlib.ExitStack()
    if args.dask_local:
        cluster = stack.enter_context(distributed.LocalCluster(
            n_workers=args.dask_local, threads_per_worker=1, dashboard_address=None))
        client = stack.enter_context(distributed.Client(cluster))
    else:
        client = stack.enter_context(distributed.Client(args.dask_scheduler))
    print(f"Dask: {client}", file=sys.stderr)
    stack.enter_context(joblib.parallel_config(backend="dask"))
    return stack


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``creator bench`` with the given arguments.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``bench`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        See :func:`run`.
    """
    return run(build_parser().parse_args(argv))


def _list_methods() -> None:
    """Print every built-in method with the first line of its docstring and its extra."""
    from .baselines import DEFAULT_METHODS, METHODS, REQUIRES

    for name, fit in METHODS.items():
        doc = (fit.__doc__ or "").strip().splitlines()
        needs = f" [needs {REQUIRES[name]}: creator-plugin[bench]]" if name in REQUIRES else ""
        default = " (default)" if name in DEFAULT_METHODS else ""
        print(f"{name}{default}: {doc[0] if doc else ''}{needs}")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by parsed ``creator bench`` arguments.

    Parameters
    ----------
    args : argparse.Namespace
        From a parser set up by :func:`add_arguments`.

    Returns
    -------
    int
        Exit status: 0, or 2 for a user error (reported on stderr). Failed
        and timed-out fits are results: they are rows of the CSV, counted in
        the summary and reported on stderr.
    """
    if args.seeds is not None and args.seeds < 1:
        print("error: --seeds must be >= 1", file=sys.stderr)
        return 2
    if args.n_jobs == 0:
        print("error: --n-jobs must not be 0 (1 for serial, -1 for all cores)", file=sys.stderr)
        return 2
    from .._csv import write_csv
    from ..output_dir import OutputDir, OutputDirError

    if getattr(args, "list_methods", False):
        _list_methods()
        return 0
    import pandas as pd

    from .baselines import DEFAULT_METHODS, METHODS, REQUIRES
    from .grid import run_grid
    from .methods import resolve_methods, time_limits_for

    try:
        cells, default_seeds = _cells(args)
        methods = args.methods
        if methods is None:
            methods = list(DEFAULT_METHODS)
            if args.tau_table:
                methods.append("CREATOR (paper)")
        names = list(resolve_methods(methods, METHODS))
        time_limit = _time_limit(args.time_limit)
        time_limits_for(names, time_limit)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    needed = {REQUIRES[m] for m in names if m in REQUIRES}
    if not args.no_figures:
        needed.add("matplotlib")
    missing = sorted(m for m in needed if find_spec(m) is None)
    if missing:
        print(f"error: creator bench needs {', '.join(missing)}, which is not installed: "
              'pip install "creator-plugin[bench]"', file=sys.stderr)
        return 2
    try:  # checked now, not after hours of fits (after the installation: fix that first)
        out = OutputDir(args.out, force=args.force,
                        inputs=[p for p in (getattr(args, "data", None),
                                            getattr(args, "truth_adjacency", None),
                                            getattr(args, "truth_latents", None)) if p])
    except OutputDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seeds = args.seeds if args.seeds is not None else default_seeds
    start = time.perf_counter()
    with _backend(args):
        rows = run_grid(cells, seeds, methods, n_jobs=args.n_jobs, time_limit=time_limit,
                        progress=not args.no_progress)
    elapsed = time.perf_counter() - start
    df = pd.DataFrame(rows)
    from .figures import summary_markdown

    summary = summary_markdown(df)
    parameters = {"command": "bench", "argv": {k: v for k, v in vars(args).items()
                                               if isinstance(v, (str, int, float, bool, list,
                                                                 type(None)))}}
    try:
        with out.write(parameters) as tmp:
            write_csv(df, tmp / "results.csv", index=False, float_format="%.6g")
            (tmp / "summary.md").write_text(summary)
            figures = []
            if not args.no_figures:
                from .figures import make_figures

                figures = [Path(f).name for f in make_figures(df, tmp)]
    except OutputDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary)
    print(f"{len(df)} fits in {elapsed:.0f} s; results: {out.path / 'results.csv'}")
    for name in figures:
        print(f"figure: {out.path / name}")
    for status, what in (("failed", "failed; see the 'error' column"),
                         ("timeout", "hit their time limit (rows with status 'timeout')")):
        n = int((df["status"] == status).sum())
        if n:
            print(f"warning: {n} fits {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
