"""The LiNGCReL reconstruction checked against its author's code (docs/results/peers.md).

The reconstruction (:func:`creator_plugin.benchmark.baselines.lingcrel_steps`)
and the LiNGCReL steps of ``scripts/utils_full.py`` in
github.com/hlzhang109/causal-eval (commit ca2a96b; Jin, Syrgkanis, Kakade &
Zhang 2025) get **the same input**: the reconstruction's per-environment ICA
unmixing rows (step 2, before alignment). Then

* the author's ``process_matrices`` aligns and orders them (the node closest
  to rank one over every tuple of one row per environment, d^K candidates
  per step), ``recover_H`` recovers the shared mixing rows and
  ``recover_Bk`` the per-environment weights;
* the reconstruction aligns them by their distributions, orders them
  greedily by the ratio of the second to the first singular value, and
  writes its rows in its ordered directions.

Both answers are in environment 0's labels, so no matching is needed. Per
input the rows record the two orders, whether the two alignments agree, the
smallest |cosine| between matched mixing rows (the reconstruction's ordered
directions against the author's ``H``), the largest weight difference
(``[k][j, i]``: effect of node j on node i in environment k, signs aligned
through the mixing rows), and, on simulated data, whether each order is a
topological order of the true graph (environment 0's sources matched to the
true noises by |correlation|). ``cause`` names the first step at which the
two disagree.

On the leaderboard the author's notebook (``scripts/main.ipynb``) aligns
and orders differently: it tries every permutation of every environment's
rows and keeps the one whose worst inexactness (``return_crl_results``) is
smallest; ``notebook_order`` is that order on the same input (6^K
permutations for K environments).

Inputs: 20 seeds of the package's default workload (``simulate()``: d = 5,
K = 5, p = 5, 1000 rows; every noise law drawn per environment and node), 20
seeds of the same with one noise law per node shared by the environments
(``simulate(setting=2)``: the assumption of the LiNGCReL paper, under which
the reconstruction aligns the environments), and the author's own setup, the
leaderboard's environments (base-model shapes with at least 100 models, d =
3; every subset of at least four environments, as the notebook tries).

Usage (the author's code is imported from a local checkout; it needs
seaborn importable, e.g. ``pip install --target /tmp/authdeps --no-deps
seaborn`` and ``PYTHONPATH=/tmp/authdeps``)::

    python benchmarks/lingcrel_agreement.py --author-code /path/to/causal-eval/scripts \\
        --leaderboard /path/to/causal-eval/data/open_llm_leaderboard.csv \\
        --out benchmarks/results/lingcrel_agreement/agreement.csv
    python benchmarks/lingcrel_agreement.py --table \\
        benchmarks/results/lingcrel_agreement/agreement.csv
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from creator_plugin import simulate
from creator_plugin.benchmark.baselines import lingcrel_steps

ORDER_SHARE, COS_LEVEL, WEIGHT_LEVEL = 0.95, 0.99, 0.02


def _author(path: str):
    import matplotlib

    matplotlib.use("Agg")
    sys.path.insert(0, str(Path(path).resolve()))
    return importlib.import_module("utils_full")


def _row_index(row: np.ndarray, rows: np.ndarray) -> int:
    """Which of ``rows`` ``row`` is, up to sign."""
    diff = np.minimum(np.abs(rows - row).max(axis=1), np.abs(rows + row).max(axis=1))
    return int(np.argmin(diff))


def _author_steps(U, rows: np.ndarray) -> dict:
    """The author's ordering, alignment, mixing rows and weights on ``rows`` (K, d, d)."""
    K, d, _ = rows.shape
    visited, _, mats = U.process_matrices([r.copy() for r in rows])
    H, _ = U.recover_H(mats)
    node_at = [visited[d - 1 - r] for r in range(d)]  # mats/H row r holds this node
    assign = np.array([[_row_index(mats[k][node_at.index(i)], rows[k]) for i in range(d)]
                       for k in range(K)])
    directions = np.zeros((d, d))
    for r in range(d):
        directions[node_at[r]] = H[r]
    weights = np.zeros((K, d, d))
    for k in range(K):
        B = U.recover_Bk(mats[k], H)
        for ri in range(d):
            for rj in range(ri + 1, d):  # later rows: earlier in the order
                weights[k, node_at[rj], node_at[ri]] = -B[ri, rj] / B[ri, ri]
    return {"order": [int(v) for v in visited], "assign": assign, "directions": directions,
            "weights": weights}


def _notebook_order(U, rows: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The notebook's alignment: every permutation of every environment's rows, the one
    with the smallest worst inexactness; the order is its last row first. Also returns the
    mixing rows ``recover_H`` gives it, by node."""
    K, d, _ = rows.shape
    best, best_value = None, np.inf
    for perms in itertools.product(itertools.permutations(range(d)), repeat=K):
        mats = [rows[k][list(p)] for k, p in enumerate(perms)]
        H, _ = U.recover_H(mats)
        value = max(U.return_crl_results(H, None, mats, list(range(K))))
        if value < best_value:
            best, best_value, best_H = perms, value, H
    order = [int(v) for v in best[0][::-1]]
    directions = np.zeros((d, d))
    for r in range(d):
        directions[order[d - 1 - r]] = best_H[r]
    return order, directions


def _named(order: list[int], directions: np.ndarray, reduced, X_list, names) -> str:
    """The order, every node named by the score its latent (``reduced @ direction``)
    correlates with most, rows pooled after centring each environment."""
    Z = np.vstack([r - r.mean(axis=0) for r in reduced]) @ directions.T
    X = np.vstack([x - x.mean(axis=0) for x in X_list])
    C = np.corrcoef(Z.T, X.T)[: len(order), len(order):]
    return " < ".join(names[int(np.argmax(np.abs(C[i])))] for i in order)


def _true_order_check(order: list[int], sources: np.ndarray, noises: np.ndarray,
                      adjacency: np.ndarray) -> bool:
    """Is ``order`` (source labels) a topological order of the truth, sources matched to
    the true noises by |correlation|?"""
    d = adjacency.shape[0]
    C = np.abs(np.corrcoef(sources.T, noises.T)[:d, d:])
    r, c = linear_sum_assignment(-C)
    true_of = dict(zip(r.tolist(), c.tolist()))
    pos = {true_of[v]: t for t, v in enumerate(order)}
    return all(pos[i] < pos[j] for i, j in zip(*np.nonzero(adjacency)))


def _true_alignment(rows: np.ndarray, reduced, noises) -> np.ndarray:
    """``[k][i]``: the row of environment k whose source is environment 0's source i's
    true noise (every environment's sources matched to its true noises by |correlation|)."""
    d = rows.shape[1]
    noise_of = []
    for W, x, z in zip(rows, reduced, noises):
        C = np.abs(np.corrcoef((x @ W.T).T, z.T)[:d, d:])
        r, c = linear_sum_assignment(-C)
        noise_of.append(dict(zip(r.tolist(), c.tolist())))
    row_of = [{v: j for j, v in m.items()} for m in noise_of]
    return np.array([[row_of[k][noise_of[0][i]] for i in range(d)] for k in range(len(rows))])


def compare(U, X_list, d: int, seed: int, truth=None, names=None) -> dict:
    steps = lingcrel_steps(X_list, d, seed)
    rows, K = steps["rows"], len(X_list)
    ours_assign = np.array([[_row_index(steps["aligned"][k][i], rows[k]) for i in range(d)]
                            for k in range(K)])
    start = time.perf_counter()
    author = _author_steps(U, rows)
    author_seconds = time.perf_counter() - start
    cos = np.abs(np.sum(steps["directions"] * author["directions"], axis=1))
    sign = np.sign(np.sum(steps["directions"] * author["directions"], axis=1))
    flipped = author["weights"] * sign[None, :, None] * sign[None, None, :]
    same_order = steps["order"] == author["order"]
    same_alignment = bool((ours_assign == author["assign"]).all())
    weight_diff = float(np.abs(steps["weights"] - flipped).max())
    row = {"d": d, "K": K, "seed": seed, "ours_order": json.dumps(steps["order"]),
           "author_order": json.dumps(author["order"]), "same_order": same_order,
           "same_alignment": same_alignment,
           "alignment_agreement": float((ours_assign == author["assign"]).mean()),
           "min_cos": float(cos.min()), "max_weight_diff": weight_diff,
           "author_seconds": author_seconds}
    if truth is not None:
        adjacency, noises = truth
        sources = steps["reduced"][0] @ rows[0].T
        row["ours_valid"] = _true_order_check(steps["order"], sources, noises[0], adjacency)
        row["author_valid"] = _true_order_check(author["order"], sources, noises[0], adjacency)
        right = _true_alignment(rows, steps["reduced"], noises)
        row["ours_alignment_right"] = bool((ours_assign == right).all())
        row["author_alignment_right"] = bool((author["assign"] == right).all())
    # the author's search started from the reconstruction's alignment: does it keep it?
    given = _author_steps(U, steps["aligned"])
    row["author_keeps_our_alignment"] = bool((given["assign"] == np.arange(d)[None, :]).all())
    # the author's mixing rows and weights on the reconstruction's aligned rows and order
    mats = [steps["aligned"][k][steps["order"][::-1]] for k in range(K)]
    H, _ = U.recover_H(mats)
    node_at = steps["order"][::-1]
    dirs = np.zeros((d, d))
    for r in range(d):
        dirs[node_at[r]] = H[r]
    w = np.zeros((K, d, d))
    for k in range(K):
        B = U.recover_Bk(mats[k], H)
        for ri in range(d):
            for rj in range(ri + 1, d):
                w[k, node_at[rj], node_at[ri]] = -B[ri, rj] / B[ri, ri]
    dots = np.sum(steps["directions"] * dirs, axis=1)
    w = w * np.sign(dots)[None, :, None] * np.sign(dots)[None, None, :]
    row["given_min_cos"] = float(np.abs(dots).min())
    row["given_max_weight_diff"] = float(np.abs(steps["weights"] - w).max())
    if names is not None:  # the leaderboard: the notebook's search, and every order named
        nb_order, nb_directions = _notebook_order(U, rows)
        row["notebook_order"] = json.dumps(nb_order)
        row["notebook_same_order"] = nb_order == steps["order"]
        row["notebook_same_as_author"] = nb_order == author["order"]
        red = steps["reduced"]
        row["ours_named"] = _named(steps["order"], steps["directions"], red, X_list, names)
        row["author_named"] = _named(author["order"], author["directions"], red, X_list, names)
        row["notebook_named"] = _named(nb_order, nb_directions, red, X_list, names)
    if not same_alignment:
        cause = "alignment"
    elif not same_order:
        cause = "ordering criterion"
    elif cos.min() < COS_LEVEL:
        cause = "mixing rows"
    elif weight_diff > WEIGHT_LEVEL:
        cause = "weights"
    else:
        cause = ""
    row["cause"] = cause
    return row


def run(args) -> pd.DataFrame:
    U = _author(args.author_code)
    rows = []
    for setting, setup in ((1, "default workload"), (2, "one noise law per node (setting 2)")):
        for seed in range(args.seeds):
            sim = simulate(setting=setting, random_state=seed)
            row = compare(U, sim.X, sim.params["n_latent"], seed, (sim.adjacency, sim.Z))
            rows.append({"setup": setup,
                         "input": f"simulate(setting={setting}, random_state={seed})", **row})
            print(rows[-1], flush=True)
    if args.leaderboard:
        from creator_plugin.casestudy.leaderboard import load_open_llm_leaderboard

        data = load_open_llm_leaderboard(args.leaderboard)
        K = len(data.X_list)
        for size in range(4, K + 1):
            for subset in itertools.combinations(range(K), size):
                X = [data.X_list[k] for k in subset]
                row = compare(U, X, 3, 0, names=data.feature_names)
                label = " | ".join(data.environments[k] for k in subset)
                rows.append({"setup": "leaderboard (d = 3)", "input": label, **row})
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> str:
    """The page's tables: end to end, and the later steps on the same aligned rows."""
    def count(g, col, pred=bool):
        return int(g[col].map(pred).sum()) if col in g and g[col].notna().all() else None

    lines = ["| setup | inputs | same order | same alignment | author's search given our "
             "alignment keeps it | same order as the notebook's search | alignment right "
             "(ours / author's) | order a topological order of the truth (ours / author's) |",
             "|---|---|---|---|---|---|---|---|"]

    def pair(g, a, b):
        return f"{count(g, a)} / {count(g, b)}" if count(g, a) is not None else "—"

    for setup, g in df.groupby("setup", sort=False):
        nb = count(g, "notebook_same_order")
        lines.append(f"| {setup} | {len(g)} | {count(g, 'same_order')} | "
                     f"{count(g, 'same_alignment')} | {count(g, 'author_keeps_our_alignment')} | "
                     f"{'—' if nb is None else nb} | "
                     f"{pair(g, 'ours_alignment_right', 'author_alignment_right')} | "
                     f"{pair(g, 'ours_valid', 'author_valid')} |")
    causes = ["alignment", "ordering criterion", "mixing rows", "weights", ""]
    lines += ["", "| setup | " + " | ".join(c or "none (all agree)" for c in causes)
              + " | alignment misses: ours wrong / author's wrong / both |",
              "|---|" + "---|" * (len(causes) + 1)]
    for setup, g in df.groupby("setup", sort=False):
        cells = [str(int((g["cause"].fillna("") == c).sum())) for c in causes]
        miss = g[g["cause"] == "alignment"]
        if "ours_alignment_right" in g and g["ours_alignment_right"].notna().all():
            o = ~miss["ours_alignment_right"].astype(bool)
            a = ~miss["author_alignment_right"].astype(bool)
            split = f"{int((o & ~a).sum())} / {int((a & ~o).sum())} / {int((o & a).sum())}"
        else:
            split = "—"
        lines.append(f"| {setup} | " + " | ".join(cells) + f" | {split} |")
    for setup, g in df.groupby("setup", sort=False):
        crit = g[g["cause"] == "ordering criterion"]
        if len(crit) and "ours_valid" in g and g["ours_valid"].notna().all():
            both = int((crit["ours_valid"].astype(bool) & crit["author_valid"].astype(bool)).sum())
            lines.append(f"\n{setup}: of the {len(crit)} ordering-criterion misses, {both} have "
                         "two topological orders of the true graph (a tie the criteria break "
                         "differently).")
    if "notebook_named" in df:
        from creator_plugin.casestudy.leaderboard import published_pairs

        lb = df[df["notebook_named"].notna()]
        for col, who in (("notebook_named", "the notebook's search"),
                         ("author_named", "`process_matrices`"), ("ours_named", "ours")):
            pairs = lb[col].map(lambda s: published_pairs(s.split(" < ")))
            lines.append(f"\nLeaderboard, {who}: the published chain in {int((pairs == 3).sum())} "
                         f"of {len(lb)} orders (2 of its 3 pairs in {int((pairs == 2).sum())}).")
    lines += ["", "| setup | inputs | mixing rows \\|cos\\| ≥ 0.99 | smallest \\|cos\\| "
              "(median) | weights within 0.02 | largest weight difference (median) |",
              "|---|---|---|---|---|---|"]
    for setup, g in df.groupby("setup", sort=False):
        lines.append(
            f"| {setup} | {len(g)} | {count(g, 'given_min_cos', lambda v: v >= COS_LEVEL)} | "
            f"{g['given_min_cos'].median():.4f} | "
            f"{count(g, 'given_max_weight_diff', lambda v: v <= WEIGHT_LEVEL)} | "
            f"{g['given_max_weight_diff'].median():.3g} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--author-code", help="the scripts/ folder of causal-eval")
    parser.add_argument("--leaderboard", help="data/open_llm_leaderboard.csv")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", default="benchmarks/results/lingcrel_agreement/agreement.csv")
    parser.add_argument("--table", help="print the summary table of these rows and exit")
    args = parser.parse_args(argv)
    if args.table:
        print(table(pd.read_csv(args.table)))
        return 0
    if not args.author_code:
        parser.error("--author-code is required (or --table)")
    df = run(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(table(df))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
