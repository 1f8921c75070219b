"""Trial: revise the pruned graph by a penalised likelihood of the disentangled SEM.

Reads the caches of ``disentangle_precision_cache.py`` (entangled features,
pruned graph, truth). For a graph G over positions the disentangling matrix
``C(G)`` is the default's (the evidence-weighted intersection); the features
``Ytilde_k C(G)`` are then fitted by the linear SEM over G in every environment
(weights and noise variances free per environment), and

    score(G) = sum_k n_k (sum_j log s_kj - log det(C^T S_k C)) + pen * |E| * sum_k log n_k

(``pen = 1``: BIC, K weights per edge). A greedy search flips one decision at a
time (only pairs whose pruning statistic lies within a factor ``band`` of the
level) while the score drops. Usage::

    python graph_selection.py CACHE_GLOB OUT.jsonl [band] [pen] [refine]

Rows are appended; a row of the same family, seed, band, penalty and refinement
already in OUT is then dropped, so running a command again replaces its rows.
"""
from __future__ import annotations

import glob
import json
import re
import sys
from pathlib import Path

import numpy as np

from creator_plugin.disentangle import disentangling_matrix
from creator_plugin.pruning import default_threshold, prune
from creator_plugin.refine import likelihood
from creator_plugin.refine.likelihood import SCORE_GTOL, refine_disentangling

sys.path.insert(0, __file__.rsplit("/", 1)[0])
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402
from disentangle_precision import b_from_chol, keep_last, load, moments, score  # noqa: E402


def sem_criterion(C, S, n, A):
    """sum_k n_k (sum_j log s_kj - log det G_k), G_k = C^T S_k C."""
    G = np.einsum("ia,kij,jb->kab", C, S, C)
    d = A.shape[0]
    total = 0.0
    for k in range(len(n)):
        _, logdet = np.linalg.slogdet(G[k])
        logs = 0.0
        for j in range(d):
            pa = np.flatnonzero(A[:, j])
            s = G[k, j, j]
            if pa.size:
                g = G[k][np.ix_(pa, pa)]
                c = G[k, pa, j]
                s = s - c @ np.linalg.solve(g, c)
            logs += np.log(max(s, 1e-300))
        total += n[k] * (logs - logdet)
    return float(total)


def bfgs_refined(C, S, n, A, guard):
    level = likelihood.LATER_WEIGHT_LEVEL
    if not guard:
        likelihood.LATER_WEIGHT_LEVEL = np.inf
    try:
        # the revision's own tolerance (SCORE_GTOL, 1e-6; rows before it
        # existed were refined to 1e-9)
        C, _ = refine_disentangling(C, S, n, A, method="BFGS", gtol=SCORE_GTOL)
    finally:
        likelihood.LATER_WEIGHT_LEVEL = level
    return C


def graph_score(A, B, S, n, pen, refine):
    C = disentangling_matrix(B, A, evidence=True)
    if refine < 0:
        # -1: the refinement by dense BFGS, guarded; -2: the same, unguarded
        C = bfgs_refined(C, S, n, A, guard=refine == -1)
    elif refine:
        # refine >= 10: the same search with at most `refine` L-BFGS iterations
        C, _ = refine_disentangling(C, S, n, A, **({"max_iter": refine} if refine >= 10 else {}))
    return sem_criterion(C, S, n, A) + pen * A.sum() * np.log(n).sum(), C


def refined(A, S, n, start, max_iter):
    """The unguarded optimum of the likelihood refinement: (criterion in sem units, C)."""
    level, likelihood.LATER_WEIGHT_LEVEL = likelihood.LATER_WEIGHT_LEVEL, np.inf
    try:
        C, _ = refine_disentangling(start, S, n, A, max_iter=max_iter)
    finally:
        likelihood.LATER_WEIGHT_LEVEL = level
    return sem_criterion(C, S, n, A), C


def cheap_search(A0, B, S, n, cand, pen, max_iter):
    """Rank flips at the current optimum's C (no re-optimisation), refine only the best."""
    penalty = pen * np.log(n).sum()
    A = A0.copy()
    f, C = refined(A, S, n, disentangling_matrix(B, A, evidence=True), max_iter)
    best = f + penalty * A.sum()
    flips = []
    cand = list(cand)
    while cand:
        trial = []
        for (j, i) in cand:
            A1 = A.copy()
            A1[j, i] = 1 - A1[j, i]
            trial.append((sem_criterion(C, S, n, A1) + penalty * A1.sum(), (j, i), A1))
        _, ji, A1 = min(trial, key=lambda r: r[0])
        f1, C1 = refined(A1, S, n, C, max_iter)
        if f1 + penalty * A1.sum() >= best:
            break
        best, A, C = f1 + penalty * A1.sum(), A1, C1
        flips.append([int(ji[0]), int(ji[1])])
        cand.remove(ji)
    return A, flips


def run(path, band, pen, refine):
    z = load(path)
    ent = z["ent"]
    S, L, n = moments(ent)
    B = b_from_chol(L)
    K, d, _ = B.shape
    A0, dec = prune(z["tested"], threshold=default_threshold("residual", K))
    # the pruned graph (caches written before it was stored: the fit's, then unrevised)
    assert (A0 == (z["pruned"] if "pruned" in z.files else z["adjacency"] != 0)).all()
    t = dec[0]["threshold"]
    cand = [(q["parent"], q["child"]) for q in dec
            if t / band <= q["statistic"] <= t * band]
    Cn = z["noise_corr"]
    pi = Cn.argmax(1)
    bij = len(set(pi.tolist())) == len(pi)
    At = z["true_adjacency"] != 0
    seed = int(re.search(r"_s(\d+)\.npz", path).group(1))
    A = A0.copy()
    best, C = graph_score(A, B, S, n, pen, refine)
    C0 = C
    flips = []
    if 2 <= refine < 10:
        A, flips = cheap_search(A0, B, S, n, cand, pen, 3000 if refine == 2 else 1000)
        C = disentangling_matrix(B, A, evidence=True)
    while refine < 2 or refine >= 10:
        trial = []
        for (j, i) in cand:
            A1 = A.copy()
            A1[j, i] = 1 - A1[j, i]
            s1, c1 = graph_score(A1, B, S, n, pen, refine)
            trial.append((s1, (j, i), A1, c1))
        if not trial:
            break
        s1, ji, A1, c1 = min(trial, key=lambda r: r[0])
        if s1 >= best:
            break
        best, A, C = s1, A1, c1
        flips.append([int(ji[0]), int(ji[1])])
        cand.remove(ji)
    rec0 = score(z, At, pi, bij, A0.astype(bool), C0)
    rec1 = score(z, At, pi, bij, A.astype(bool), C)
    rec2 = score(z, At, pi, bij, A.astype(bool), disentangling_matrix(B, A, evidence=True))
    true_score = None
    if bij:
        At_pos = At[np.ix_(pi, pi)].astype(int)
        true_score = graph_score(At_pos, B, S, n, pen, refine)[0] - graph_score(
            A0, B, S, n, pen, refine)[0]
    fam = re.search(r"d\d+_?(.*)_n\d+_s", path.rsplit("/", 1)[-1]).group(1) or "default"
    return {"seed": seed, "family": fam, "fit_shd": int(z["fit_shd"]), "band": band,
            "pen": pen, "refine": refine,
            "n_cand": len([1 for q in dec if t / band <= q["statistic"] <= t * band]),
            "flips": flips, "shd0": rec0["shd"], "shd1": rec1["shd"], "shd2": rec2["shd"],
            "locr2_2": rec2["locr2"],
            "locr2_0": rec0["locr2"], "locr2_1": rec1["locr2"],
            "shd_noise0": rec0.get("shd_noise"), "shd_noise1": rec1.get("shd_noise"),
            "true_minus_pruned": true_score}


def main():
    paths = sorted(glob.glob(sys.argv[1]))
    out = sys.argv[2]
    band = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    pen = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    refine = int(sys.argv[5]) if len(sys.argv) > 5 else False
    with row_files.open_text(out, "a") as fh:
        for p in paths:
            r = run(p, band, pen, refine)
            fh.write(json.dumps(r) + "\n")
            fh.flush()
            print(r["seed"], r["shd0"], r["shd1"], r["flips"], r["true_minus_pruned"], flush=True)
    keep_last(out, ("family", "seed", "band", "pen", "refine"))


if __name__ == "__main__":
    main()
