"""``creator bench``: run the method comparison grid and write results and figures."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from .baselines import METHODS
from .grid import ablation_grid, paper_grid, quick_grid, run_grid

__all__ = ["main", "summarise"]


def summarise(df):
    """Markdown table: mean SHD, LocR^2, exact-DAG and correct-order shares, s/fit."""
    ok = df[df["status"] == "ok"]
    keys = ["grid", "n_latent", "n_environments", "setting", "method"]
    keys = [k for k in keys if k in ok.columns]
    agg = ok.groupby(keys, dropna=False).agg(
        seeds=("seed", "count"), shd=("shd", "mean"), locr2=("locr2", "mean"),
        exact_dag=("exact_dag", "mean"), correct_order=("correct_order", "mean"),
        seconds=("seconds", "mean"),
    ).reset_index()
    failed = int((df["status"] != "ok").sum())
    cols = list(agg.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for rec in agg.itertuples(index=False):
        lines.append("| " + " | ".join(
            f"{v:.3f}" if isinstance(v, float) else str(v) for v in rec) + " |")
    return "\n".join(lines) + f"\n\nfailed fits: {failed}\n"


def _backend(args):
    if args.dask_scheduler or args.dask_local:
        import distributed
        import joblib

        stack = contextlib.ExitStack()
        if args.dask_local:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=args.dask_local, threads_per_worker=1, dashboard_address=None))
            stack.enter_context(distributed.Client(cluster))
        else:
            stack.enter_context(distributed.Client(args.dask_scheduler))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        return stack
    return contextlib.nullcontext()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="creator bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="d in 2,3,5, K=d, 5 seeds")
    parser.add_argument("--ablations", action="store_true", help="also sigma and beta grids")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 20)")
    parser.add_argument("--methods", nargs="*", default=None, choices=list(METHODS))
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--dask-scheduler", default=None, help="address of a Dask scheduler")
    parser.add_argument("--dask-local", type=int, default=None, help="start a LocalCluster")
    parser.add_argument("--out", default="bench_results", help="output directory")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    args = parser.parse_args(argv)

    import pandas as pd

    cells = quick_grid() if args.quick else paper_grid()
    if args.ablations:
        cells += ablation_grid()
    seeds = args.seeds if args.seeds is not None else (5 if args.quick else 20)
    with _backend(args):
        rows = run_grid(cells, seeds, args.methods, n_jobs=args.n_jobs, progress=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows)
    df.to_csv(out / "results.csv", index=False)
    summary = summarise(df)
    (out / "summary.md").write_text(summary)
    print(summary)
    print(f"results: {out / 'results.csv'}")
    if not args.no_figures:
        from .figures import make_figures

        for path in make_figures(df, out):
            print(f"figure: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
