"""``creator bench``: compare CREATOR with other methods on the paper's workload.

Presets: ``--quick`` (d in 2, 3, 5, K = d, both settings, 5 seeds: a few
minutes on 2 cores), the default (the paper's main grid: d in 2, 3, 5, 7,
K in d, 2d, both settings, 20 seeds) and ``--full`` (the main grid plus the
weight-scale and noise-shape ablations and CREATOR's pruning-threshold
sensitivity). Writes ``results.csv`` (one row per method, cell and seed),
``summary.md`` and PNG figures to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Sequence
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
    parser.add_argument("--ablations", action="store_true",
                        help="add the sigma and beta ablations to the chosen preset")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds per cell (default: 5 with --quick, else 20)")
    parser.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                        help="methods to run (default: CREATOR, LiNGCReL and the two PCA + "
                             "LiNGAM baselines; 'CREATOR (paper)' is the paper's algorithm); "
                             "an unknown name lists the available ones")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="joblib workers (-1: all cores); ignored with Dask")
    dask = parser.add_mutually_exclusive_group()
    dask.add_argument("--dask-scheduler", default=None, metavar="ADDRESS",
                      help="run on a Dask cluster, e.g. tcp://host:8786 "
                           "(pip install creator-plugin[distributed])")
    dask.add_argument("--dask-local", type=int, default=None, metavar="N",
                      help="start a distributed.LocalCluster with N worker processes")
    parser.add_argument("--out", default="bench_results", help="output directory")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


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


def _unwritable(out: Path) -> str | None:
    """Why the results could not be written to ``out`` (None if they can)."""
    if out.exists() and not out.is_dir():
        return "exists and is not a directory"
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"no permission to write in {parent}"
    return None


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
        fits are results: they are rows of the CSV, counted in the summary
        and reported on stderr.
    """
    if args.seeds is not None and args.seeds < 1:
        print("error: --seeds must be >= 1", file=sys.stderr)
        return 2
    if args.n_jobs == 0:
        print("error: --n-jobs must not be 0 (1 for serial, -1 for all cores)", file=sys.stderr)
        return 2
    problem = _unwritable(Path(args.out))
    if problem:  # found now, not after hours of fits
        print(f"error: --out {args.out}: {problem}", file=sys.stderr)
        return 2

    import pandas as pd

    from .baselines import METHODS
    from .grid import ablation_grid, full_grid, paper_grid, quick_grid, run_grid

    unknown = [m for m in args.methods or () if m not in METHODS]
    if unknown:
        print(f"error: unknown methods {unknown}; available: {list(METHODS)}", file=sys.stderr)
        return 2

    if args.quick:
        cells = quick_grid()
    elif args.full:
        cells = full_grid()
    else:
        cells = paper_grid()
    if args.ablations and not args.full:
        cells += ablation_grid()
    seeds = args.seeds if args.seeds is not None else (5 if args.quick else 20)
    start = time.perf_counter()
    with _backend(args):
        rows = run_grid(cells, seeds, args.methods, n_jobs=args.n_jobs,
                        progress=not args.no_progress)
    elapsed = time.perf_counter() - start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows)
    df.to_csv(out / "results.csv", index=False, float_format="%.6g")
    from .figures import summary_markdown

    summary = summary_markdown(df)
    (out / "summary.md").write_text(summary)
    print(summary)
    print(f"{len(df)} fits in {elapsed:.0f} s; results: {out / 'results.csv'}")
    if not args.no_figures:
        from .figures import make_figures

        for path in make_figures(df, out):
            print(f"figure: {path}")
    n_failed = int((df["status"] != "ok").sum())
    if n_failed:
        print(f"warning: {n_failed} fits failed; see the 'error' column", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
