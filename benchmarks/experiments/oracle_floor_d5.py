"""Diagnosis: how far below the d = 5 bar can the steps after the ordering go?

For every bar family of the zoo (d = K = 5, n = 1000), each data set is fitted
twice with every default: as is, and with the ordering's directions replaced
by the true ones (``oracle_directions_diag.oracle_ordering``: the
least-squares map from the reduced data to the true latents, in a causal
order of the true graph, canonical form). With a perfect ordering, what is
left of the SHD is the pruning's, the graph revision's and the
disentanglement's: a floor that no better ordering can go below. Tuning
seeds only (0-99).

    python oracle_floor_d5.py run {package,independent} FIRST COUNT OUT.jsonl
    python oracle_floor_d5.py summary OUT.jsonl [...]
    python oracle_floor_d5.py population OUT.jsonl [...]

``population`` applies the default pruning rule and level to the true
latents themselves: in a causal order of the true graph, each latent's noise
is its residual on its true parents (per environment, least squares on the
data set's rows), the noises are regressed on the latents, standardised and
pruned as in a fit. The SHD of that graph against the truth counts the true
edges the rule cannot see at its level on this workload (their weights vary
too little across the environments, relative to the noise scales): they are
missed by any fit whose pruning uses this rule and level, however good its
ordering and features. It is compared, data set by data set, with the
fits of ``run``.
"""
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate
from creator_plugin.pruning import default_threshold, prune, standardised_coefficients
from creator_plugin.sem import regression_matrices

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracle_directions_diag import TRUTH, _causal_order, _order, _use, oracle_ordering  # noqa: E402
from zoo import BAR_FAMILIES, TUNING_SEEDS, data_of, settings_of  # noqa: E402


def run(sim_name: str, first: int, count: int, out: str) -> None:
    seeds = range(first, first + count)
    if seeds.start < TUNING_SEEDS.start or seeds.stop > TUNING_SEEDS.stop:
        raise SystemExit("tuning seeds only")
    warnings.simplefilter("ignore")
    done = set()
    if Path(out).exists():
        # rows of the current defaults are kept; after a change of defaults all are fitted again
        lines = Path(out).read_text().splitlines()
        done = {(r["family"], r["seed"]) for r in map(json.loads, lines)
                if r.get("settings") == settings_of(5)}
    with open(out, "a") as fh:
        for seed in seeds:
            for family in BAR_FAMILIES:
                if (family, seed) in done:
                    continue
                X, A, Y = data_of(sim_name, family, 5, 5, 1000, seed)
                TRUTH.update(A=np.asarray(A), Y=Y)
                row = {"simulator": sim_name, "family": family, "seed": seed,
                       "settings": settings_of(5)}
                for name, fn in (("default", _order), ("oracle", oracle_ordering)):
                    _use(fn)()
                    try:
                        res = fit_arrays(X, FitConfig(5, quality=False), random_state=seed)
                    finally:
                        _use(_order)()
                    ev = evaluate(A, Y, res.adjacency, res.latents)
                    row[name] = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                                 "locr2": round(float(ev["locr2"]), 4),
                                 "n_edges": int(np.count_nonzero(res.adjacency))}
                row["n_true_edges"] = int(np.asarray(A).astype(bool).sum())
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = _current_rows(paths)
    print("| simulator | family | fits | default SHD (order) | true directions SHD (order) "
          "| true directions: fits with SHD >= 2 | edges kept - true edges (true directions) |")
    print("|---|---|---|---|---|---|---|")
    for sim in sorted({r["simulator"] for r in rows}):
        for fam in [*BAR_FAMILIES, "all"]:
            rs = [r for r in rows if r["simulator"] == sim and (fam == "all" or r["family"] == fam)]
            if not rs:
                continue
            d = [r["default"] for r in rs]
            o = [r["oracle"] for r in rs]
            surplus = np.mean([r["oracle"]["n_edges"] - r["n_true_edges"] for r in rs])
            print(f"| {sim} | {fam} | {len(rs)} | {np.mean([x['shd'] for x in d]):.2f} "
                  f"({np.mean([x['order'] for x in d]):.0%}) "
                  f"| {np.mean([x['shd'] for x in o]):.2f} "
                  f"({np.mean([x['order'] for x in o]):.0%}) | {sum(x['shd'] >= 2 for x in o)} "
                  f"| {surplus:+.2f} |")


def population_graph(A: np.ndarray, Y: list[np.ndarray]) -> tuple[np.ndarray, list[float]]:
    """The default rule's graph on the true latents (labels of ``A``), and the
    statistics of the true edges (in units of the level)."""
    A = np.asarray(A) != 0
    order = _causal_order(A)
    feats = [y[:, order] - y[:, order].mean(axis=0) for y in Y]
    Ao = A[np.ix_(order, order)]
    noises = []
    for f in feats:
        z = f.copy()
        for i in range(f.shape[1]):
            parents = np.flatnonzero(Ao[:, i])
            if parents.size:
                w = np.linalg.lstsq(f[:, parents], f[:, i], rcond=None)[0]
                z[:, i] = f[:, i] - f[:, parents] @ w
        noises.append(z)
    B = standardised_coefficients(regression_matrices(noises, feats), noises, feats)
    level = default_threshold("residual", len(Y))
    adj, decisions = prune(B, rule="residual", threshold=level)
    out = np.zeros_like(adj)
    out[np.ix_(order, order)] = adj
    edges = [x["statistic"] / level for x in decisions if Ao[x["parent"], x["child"]]]
    return out, edges


def _current_rows(paths: list[str]) -> list[dict]:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    return [r for r in rows if r.get("settings") == settings_of(5)]


def population(paths: list[str]) -> None:
    rows = _current_rows(paths)
    print("| simulator | family | fits | true directions SHD | population SHD (missed, extra) "
          "| fits whose true-direction errors are all population errors "
          "| true edges with statistic < 0.5 / 0.75 / 1 level |")
    print("|---|---|---|---|---|---|---|")
    cells: dict = {}
    stats: dict = {}
    for r in rows:
        _, A, Y = data_of(r["simulator"], r["family"], 5, 5, 1000, r["seed"])
        A = np.asarray(A) != 0
        G, edge_stats = population_graph(A, Y)
        G = G != 0
        stats.setdefault((r["simulator"], r["family"]), []).extend(edge_stats)
        missed, extra = int((A & ~G).sum()), int((G & ~A).sum())
        cells.setdefault((r["simulator"], r["family"]), []).append(
            (r["oracle"]["shd"], missed + extra, missed, extra))
    for (sim, fam), v in sorted(cells.items()):
        v = np.array(v)
        wrong = v[v[:, 0] >= 1]
        covered = int(np.sum(wrong[:, 1] >= wrong[:, 0])) if wrong.size else 0
        e = np.array(stats[(sim, fam)])
        print(f"| {sim} | {fam} | {len(v)} | {v[:, 0].mean():.2f} | {v[:, 1].mean():.2f} "
              f"({v[:, 2].sum()}, {v[:, 3].sum()}) | {covered} of {len(wrong)} "
              f"| {np.sum(e < 0.5)} / {np.sum(e < 0.75)} / {np.sum(e < 1)} of {e.size} |")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "population":
        population(sys.argv[2:])
    else:
        summary(sys.argv[2:])
