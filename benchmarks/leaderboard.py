"""The Open LLM Leaderboard walkthrough's rows (docs/results/leaderboard.md).

Reads ``data/open_llm_leaderboard.csv`` of github.com/hlzhang109/causal-eval
(the commit and SHA-256 in :mod:`creator_plugin.casestudy.leaderboard`; the
file is not part of this project: download it and pass its path), groups its
rows by base-model shape (environments of at least 100 models), and runs
:func:`creator_plugin.casestudy.leaderboard.leaderboard_walkthrough`: CREATOR
with ``select_n_latent``, its verdict and a 50-resample bootstrap, the
LiNGCReL reconstruction, PCA + MultiGroupDirectLiNGAM and RLCD on the same
rows. Writes ``environments.csv``, ``selection.csv``, ``methods.csv``,
``latents.csv`` and ``bootstrap.csv`` to ``--out``.

Usage::

    python benchmarks/leaderboard.py --csv /path/to/open_llm_leaderboard.csv \\
        --out benchmarks/results/leaderboard

A file whose SHA-256 differs from the stated one is refused unless
``--any-file`` is given (then the rows are not the page's).
``--table DIR`` prints the page's tables from the rows in ``DIR``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from creator_plugin.casestudy.leaderboard import (
    LEADERBOARD_SHA256,
    leaderboard_walkthrough,
    load_open_llm_leaderboard,
)


def _fmt_p(p: float) -> str:
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def markdown(rows_dir) -> str:
    """The page's tables, from the rows in ``rows_dir``."""
    rows_dir = Path(rows_dir)
    env = pd.read_csv(rows_dir / "environments.csv")
    sel = pd.read_csv(rows_dir / "selection.csv")
    methods = pd.read_csv(rows_dir / "methods.csv")
    latents = pd.read_csv(rows_dir / "latents.csv")
    boot = pd.read_csv(rows_dir / "bootstrap.csv")
    out = ["| environment (architecture, parameters) | models |", "|---|---|"]
    out += [f"| {r.environment} | {r.rows} |" for r in env.itertuples()]
    out += [f"| total | {int(env.rows.sum())} |", ""]
    out += [f"`select_n_latent`: {int(sel.n_latent.iloc[0])} latents "
            f"(`{sel.decided_by.iloc[0]}`).", "",
            "| k | model tested | statistic | df | p-value |", "|---|---|---|---|---|"]
    out += [f"| {r.k} | {r.model} | {r.statistic:.1f} | {r.df} | {_fmt_p(r.p_value)} |"
            for r in sel.itertuples()]
    out += ["", "| method | edges (latents named by their closest benchmark) | order | "
            "published pairs | verdict | seconds |", "|---|---|---|---|---|---|"]
    for r in methods.itertuples():
        edges = r.edges if isinstance(r.edges, str) else "none"
        pairs = "—" if pd.isna(r.published_pairs) else f"{int(r.published_pairs)} of 3"
        if pd.isna(r.trusted):
            verdict = "—"
        else:
            verdict = "trusted" if r.trusted else f"flagged: {r.issues}"
        out.append(f"| {r.method} | {edges.replace(' -> ', ' → ')} | {r.order} | {pairs} | "
                   f"{verdict} | {r.seconds:.2g} |")
    cols = [c for c in latents.columns if c.startswith("corr ")]
    out += ["", "| method | latent | " + " | ".join(c[5:] for c in cols) + " |",
            "|---|---|" + "---|" * len(cols)]
    for r in latents.itertuples(index=False):
        vals = [getattr(r, f"_{i}") for i in range(3, 3 + len(cols))]
        best = max(range(len(vals)), key=lambda t: abs(vals[t]))
        cells = [f"**{v:.2f}**" if t == best else f"{v:.2f}" for t, v in enumerate(vals)]
        out.append(f"| {r.method} | {r.name} | " + " | ".join(cells) + " |")
    n = int(boot.resamples.iloc[0]) if len(boot) else 0
    out += ["", f"| edge | in the fit | share of {n} resamples with the edge | "
            "share with this order |", "|---|---|---|---|"]
    out += [f"| {r.source} → {r.target} | {'yes' if r.in_fit else 'no'} | {r.edge_share:.2f} | "
            f"{r.order_share:.2f} |" for r in boot.rename(
                columns={"from": "source", "to": "target"}).itertuples()]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", help="data/open_llm_leaderboard.csv")
    parser.add_argument("--out", default="benchmarks/results/leaderboard")
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--any-file", action="store_true",
                        help="accept a file with another SHA-256")
    parser.add_argument("--table", metavar="DIR", help="print the page's tables and exit")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown(args.table))
        return 0
    if not args.csv:
        parser.error("--csv is required (or --table)")
    data = load_open_llm_leaderboard(args.csv)
    if data.sha256 != LEADERBOARD_SHA256 and not args.any_file:
        parser.error(f"{args.csv} has SHA-256 {data.sha256}, not {LEADERBOARD_SHA256}.")
    print(data)
    tables = leaderboard_walkthrough(data, n_resamples=args.resamples, random_state=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(out / f"{name}.csv", index=False)
        print(f"\n{name}\n{table.to_string(index=False)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
