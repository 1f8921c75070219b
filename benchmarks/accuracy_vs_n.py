"""Accuracy of CREATOR against the rows per environment, for several d (K = d).

Usage (the curves of the accuracy results page)::

    python benchmarks/accuracy_vs_n.py --ds 5 7 10 --ns 500 1000 2000 5000 --seeds 20 \
        --first-seed 1000 --csv benchmarks/results/accuracy_vs_n.csv \
        --figure benchmarks/results/accuracy_vs_n.png

Every fit is a row of ``creator_plugin.benchmark.grid.run_grid`` (grid
``"n_curve"``); the data of seed s are ``simulate(d, d, n, setting=...,
edge_prob=..., random_state=s)`` and the fit is ``CREATOR(d,
random_state=s)``. ``--edge-prob D=P`` gives d = D its own edge probability
(e.g. a sparser graph for d = 15). ``--append`` adds rows to an existing CSV
(cells run separately) and redraws the table and figure from all of them.
Failed fits are rows of the CSV (``status``, ``error``), counted in the
table's last column, marked in the table and figure, and listed on stdout.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from creator_plugin.benchmark.grid import run_grid


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of fits that succeeded."""
    return df[df["status"] == "ok"]


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


__all__ = ["n_curve_grid", "n_curve_markdown", "n_curve_failures", "n_curve_figure"]


def n_curve_grid(
    ds: Sequence[int] = (5, 7, 10, 15),
    ns: Sequence[int] = (500, 1000, 2000, 5000),
    *,
    setting: int = 1,
    edge_prob: float | dict[int, float] = 0.5,
) -> list[dict]:
    """One cell per (d, n) with K = d environments.

    Parameters
    ----------
    ds : sequence of int
        Numbers of latent nodes (and of environments).
    ns : sequence of int
        Rows per environment.
    setting : int, default=1
        Simulation setting (see :func:`creator_plugin.simulate`).
    edge_prob : float or dict, default=0.5
        Edge probability of the random DAG; a dict gives one per d (d
        missing from it use 0.5).

    Returns
    -------
    list of dict
        Cells with ``grid="n_curve"`` and ``seeding="seed"``: the data of
        seed s are ``simulate(d, d, n, setting=..., edge_prob=...,
        random_state=s)``, as a user would simulate them.
    """
    probs = edge_prob if isinstance(edge_prob, dict) else {}
    default = 0.5 if isinstance(edge_prob, dict) else float(edge_prob)
    return [
        {"grid": "n_curve", "seeding": "seed", "n_latent": d, "n_environments": d,
         "n_samples": n, "setting": setting, "edge_prob": float(probs.get(d, default))}
        for d in ds
        for n in ns
    ]


def _curve_stats(df):
    """Means over the successful fits of every (d, edge prob., n), with the failed count.

    Every cell that ran appears, also one whose fits all failed (its means are NaN).
    """
    keys = ["n_latent", "edge_prob", "n_samples"]
    stats = _ok(df).groupby(keys).agg(
        shd=("shd", "mean"), locr2=("locr2", "mean"), exact=("exact_dag", "mean"),
        edges=("n_true_edges", "mean"), seconds=("seconds", "mean"), seeds=("seed", "count"),
    )
    failed = (df["status"] != "ok").groupby([df[k] for k in keys]).sum()
    stats = stats.reindex(failed.index)
    stats["seeds"] = stats["seeds"].fillna(0).astype(int)
    stats["failed"] = failed.astype(int)
    return stats


def n_curve_markdown(df) -> str:
    """Markdown table: one row per (d, n) with mean SHD, LocR², exact-DAG share and s/fit.

    Means are over the successful fits; the last column counts the fits and
    the failed ones, and a cell with failures has its mean SHD marked ``†``
    (the failed seeds are not in the mean, so it is not a mean over every
    seed). The errors themselves are in the CSV's ``error`` column.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`~creator_plugin.benchmark.grid.run_grid` over
        :func:`n_curve_grid` cells.

    Returns
    -------
    str
    """
    rows = []
    for (d, p, n), r in _curve_stats(df).iterrows():
        mark = " †" if r.failed else ""
        rows.append([str(d), f"{p:g}", str(n), f"{r.shd:.2f}{mark}", f"{r.locr2:.3f}",
                     f"{r.exact:.2f}", f"{r.edges:.1f}", f"{r.seconds:.2f}",
                     f"{int(r.seeds) + int(r.failed)} ({int(r.failed)})"])
    return _table(["d = K", "edge prob.", "n per env.", "mean SHD", "mean LocR²",
                   "exact DAG", "true edges", "s/fit", "fits (failed)"], rows)


def n_curve_failures(df) -> str:
    """One line per failed fit (d, n, seed and the error), or ``""`` when none failed.

    Parameters
    ----------
    df : pandas.DataFrame
        As for :func:`n_curve_markdown`.

    Returns
    -------
    str
    """
    failed = df[df["status"] != "ok"]
    return "\n".join(
        f"failed: d={r.n_latent} n={r.n_samples} seed={r.seed}: {r.error}"
        for r in failed.itertuples()
    )


def n_curve_figure(df, path: str | Path, dpi: int = 100) -> Path:
    """Mean SHD (left) and mean LocR² (right) against n, one line per d.

    A point whose cell had failed fits is drawn hollow (its mean leaves
    those seeds out).

    Parameters
    ----------
    df : pandas.DataFrame
        As for :func:`n_curve_markdown`.
    path : str or Path
        Output PNG.
    dpi : int, default=100

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = _curve_stats(df).reset_index().dropna(subset=["shd"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for (d, p), g in stats.groupby(["n_latent", "edge_prob"]):
        label = f"d = K = {d}" + ("" if p == 0.5 else f" (edge prob. {p:g})")
        hit = g[g["failed"] > 0]
        for ax, col in zip(axes, ("shd", "locr2")):
            line, = ax.plot(g["n_samples"], g[col], marker="o", label=label)
            ax.plot(hit["n_samples"], hit[col], "o", markersize=9, markerfacecolor="white",
                    color=line.get_color())
    ns = sorted(stats["n_samples"].unique())
    for ax, name in zip(axes, ("mean SHD", "mean LocR²")):
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.minorticks_off()
        ax.set_xlabel("rows per environment (n)")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ds", type=int, nargs="+", default=[5, 7, 10])
    parser.add_argument("--ns", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--setting", type=int, default=1)
    parser.add_argument("--edge-prob", nargs="*", default=[],
                        help="per-d edge probabilities as D=P (others: 0.5)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", default="benchmarks/results/accuracy_vs_n.csv")
    parser.add_argument("--figure", default="benchmarks/results/accuracy_vs_n.png")
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args(argv)
    probs = {int(k): float(v) for k, v in (item.split("=") for item in args.edge_prob)}
    cells = n_curve_grid(args.ds, args.ns, setting=args.setting, edge_prob=probs)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    df = pd.DataFrame(run_grid(cells, seeds, ["CREATOR"], n_jobs=args.n_jobs, progress=True))
    csv = Path(args.csv)
    if args.append and csv.exists():
        df = pd.concat([pd.read_csv(csv), df], ignore_index=True)
    csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv, index=False)
    print(n_curve_markdown(df))
    failures = n_curve_failures(df)
    print(failures or "failed fits: none")
    print(f"figure: {n_curve_figure(df, args.figure)}")


if __name__ == "__main__":
    main()
