"""Does select_n_latent find the simulator's d?

Usage (seeds that chose the settings, then fresh seeds)::

    python benchmarks/select_n_latent.py --first-seed 0 --seeds 20
    python benchmarks/select_n_latent.py --first-seed 1000 --seeds 20

Grid: d in {2, 3, 5, 7}, K in {d, 2d}, p in {d, 3d, 50}, measurement noise
in {0, 0.05, 0.1}, n = 1000 rows per environment; prints a Markdown summary
(overall, per criterion, per cell) and optionally writes every model to CSV.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Sequence
from itertools import product

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from creator_plugin.dimension import select_n_latent
from creator_plugin.simulation import simulate

__all__ = ["DIMENSION_CELLS", "dimension_cells", "run_dimension_benchmark", "summarize"]

CRITERIA = ("factor_lr_test", "onatski_ed", "ahn_horenstein_er", "ahn_horenstein_gr", "rank")


def dimension_cells(
    latents: Sequence[int] = (2, 3, 5, 7),
    env_factors: Sequence[int] = (1, 2),
    features: Sequence[str] = ("d", "3d", "50"),
    noises: Sequence[float] = (0.0, 0.05, 0.1),
) -> list[dict]:
    """The grid: d, K in {d, 2d}, p in {d, 3d, 50}, noise.

    ``features`` entries are ``"d"``, ``"3d"`` or a fixed number of columns
    (``"50"``, ``"1000"``).

    Returns
    -------
    list of dict
        ``{"d", "K", "p", "noise"}`` per cell.
    """
    width = {"d": lambda d: d, "3d": lambda d: 3 * d}
    return [
        {"d": d, "K": f * d, "p": width[w](d) if w in width else int(w), "noise": float(m)}
        for d, f, w, m in product(latents, env_factors, features, noises)
    ]


DIMENSION_CELLS = dimension_cells()


def _one(cell: dict, seed: int, n: int, alpha: float) -> dict:
    sim = simulate(
        cell["d"], cell["K"], n, n_features=cell["p"], measurement_noise=cell["noise"],
        random_state=seed,
    )
    start = time.perf_counter()
    sel = select_n_latent(sim.X, alpha=alpha, random_state=seed)
    seconds = time.perf_counter() - start
    return {
        **cell, "seed": seed, "n": n, "chosen": sel.n_latent, "correct": sel.n_latent == cell["d"],
        "decided_by": sel.decided_by, "seconds": seconds,
        **{f"pick_{c}": sel.criteria[c] for c in CRITERIA},
    }


def run_dimension_benchmark(
    seeds: Iterable[int], *, cells: list[dict] | None = None, n: int = 1000,
    alpha: float = 0.01, n_jobs: int | None = 1,
) -> list[dict]:
    """Run :func:`select_n_latent` on every cell and seed.

    Returns
    -------
    list of dict
        One row per model: the cell, ``seed``, ``chosen``, ``correct``,
        ``decided_by``, ``seconds`` and ``pick_<criterion>`` for every
        criterion.
    """
    tasks = [(c, s) for c in (cells or DIMENSION_CELLS) for s in seeds]
    return Parallel(n_jobs=n_jobs)(delayed(_one)(c, s, n, alpha) for c, s in tasks)


def summarize(rows: list[dict]) -> str:
    """Markdown: overall accuracy, every criterion by kind of model, and per cell."""
    seeds = sorted({r["seed"] for r in rows})
    correct = np.array([r["correct"] for r in rows])
    kinds = {
        "p > d, measurement noise": lambda r: r["p"] > r["d"] and r["noise"] > 0,
        "p > d, noise-free": lambda r: r["p"] > r["d"] and r["noise"] == 0,
        "p = d": lambda r: r["p"] == r["d"],
    }
    lines = [
        f"{len(rows)} models, seeds {seeds[0]}-{seeds[-1]}: select_n_latent picks the true d "
        f"in **{correct.mean():.1%}** ({int(correct.sum())}/{len(rows)}); mean "
        f"{np.mean([r['seconds'] for r in rows]):.2f} s per call.",
        "",
        "Share of models where each criterion picks the true d (a criterion that gives no "
        "pick counts as wrong):",
        "",
        "| models | count | **choice** | " + " | ".join(CRITERIA) + " |",
        "|---|---|---|" + "---|" * len(CRITERIA),
    ]
    for name, keep in kinds.items():
        sub = [r for r in rows if keep(r)]
        if not sub:
            continue
        lines.append(
            f"| {name} | {len(sub)} | **{np.mean([r['correct'] for r in sub]):.1%}** | "
            + " | ".join(f"{np.mean([r[f'pick_{c}'] == r['d'] for r in sub]):.1%}"
                         for c in CRITERIA) + " |"
        )
    noises = sorted({r["noise"] for r in rows})
    lines += [
        "",
        "Accuracy of the choice per cell (noise = measurement noise SD relative to each "
        "column's SD); wrong picks as `chosen (seed)`:",
        "",
        "| d | K | p | " + " | ".join(f"noise {m:g}" for m in noises) + " | wrong picks |",
        "|---|---|---|" + "---|" * len(noises) + "---|",
    ]
    for d, K, p in sorted({(r["d"], r["K"], r["p"]) for r in rows}):
        sub = [r for r in rows if (r["d"], r["K"], r["p"]) == (d, K, p)]
        accs = [np.mean([r["correct"] for r in sub if r["noise"] == m]) for m in noises]
        wrong = ", ".join(f"{r['chosen']} ({r['seed']}, noise {r['noise']:g})"
                          for r in sub if not r["correct"])
        lines.append(f"| {d} | {K} | {p} | " + " | ".join(f"{a:.0%}" for a in accs)
                     + f" | {wrong or '-'} |")
    return "\n".join(lines)

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n", type=int, default=1000, help="rows per environment")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", help="write one row per model here")
    parser.add_argument("--features", nargs="+", default=["d", "3d", "50"],
                        help='column counts: "d", "3d" or numbers (wide data: 100 384 1000)')
    parser.add_argument("--ds", nargs="+", type=int, default=[2, 3, 5, 7])
    parser.add_argument("--env-factors", nargs="+", type=int, default=[1, 2],
                        help="K = factor * d")
    args = parser.parse_args(argv)
    cells = dimension_cells(args.ds, args.env_factors, args.features)
    rows = run_dimension_benchmark(
        range(args.first_seed, args.first_seed + args.seeds), cells=cells, n=args.n,
        alpha=args.alpha, n_jobs=args.n_jobs,
    )
    print(summarize(rows))
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
