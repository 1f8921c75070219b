"""Drop a child whose subspace does not share the node's feature, then intersect.

Lab variant of step 3 (``disentangling_matrix(..., evidence=True)``), evaluated
on the caches of ``disentangle_precision_cache.py`` without refitting. For a
node i with children, the intersection of ``V_j`` over ``{i} U ch(i)`` has, in
the population, ``|sur(i)| + 1`` singular values 0 of ``M = sum_j (I - V_j V_j^T)``.
When the largest of them exceeds ``tau`` times the subspaces' own noise level
(``mu``, as in the evidence weighting), the children do not share an
intersection of that size: an edge ``i -> j`` the pruning added (or a wrong
``V_j``). The child whose removal lowers that singular value most is dropped
(and ``sur(i)`` recomputed), until the rest is consistent. ``graph`` also
removes the dropped edges from the output graph; ``feature`` only changes
the features. Usage::

    python disentangle_consistency.py "CACHE_GLOB" OUT.jsonl TAU [TAU ...]
"""
import glob
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disentangle_precision import b_from_chol, bases_default, load, moments, score  # noqa: E402

from creator_plugin.disentangle import disentangling_matrix, subspace_residuals  # noqa: E402


def _sur_i(A, i):
    ch_i = set(np.flatnonzero(A[i]))
    return [int(j) for j in np.flatnonzero(A[:, i]) if ch_i <= set(np.flatnonzero(A[j]))]


def consistent(B, A, tau):
    """``(C, A_out)``: the evidence-weighted intersection after dropping inconsistent children."""
    K, d, _ = B.shape
    A = np.asarray(A) != 0
    bases = bases_default(B, A)
    resid = subspace_residuals(B, bases)
    eye = np.eye(d)
    A_out = A.copy()
    C = np.zeros((d, d))
    for i in range(d):
        Ai = A.copy()
        while True:
            ch = list(np.flatnonzero(Ai[i]))
            js = [i, *ch]
            r = min(len(_sur_i(Ai, i)) + 1, d)
            M = sum(eye - bases[j] @ bases[j].T for j in js)
            _, sv, vt = np.linalg.svd(M)
            mu = max(float(resid[js].sum()), 1e-12)
            if not ch or sv[-r] <= tau * mu:
                break
            best, best_val = None, np.inf
            for j in ch:
                A2 = Ai.copy()
                A2[i, j] = False
                r2 = min(len(_sur_i(A2, i)) + 1, d)
                M2 = M - (eye - bases[j] @ bases[j].T)
                s2 = np.linalg.svd(M2, compute_uv=False)
                mu2 = max(float(resid[[i, *np.flatnonzero(A2[i])]].sum()), 1e-12)
                val = s2[-r2] / mu2
                if val < best_val:
                    best, best_val = j, val
            Ai[i, best] = False
            A_out[i, best] = False
        N = vt[-r:].T
        if r == 1:
            c = N[:, 0]
        elif len(js) > 1:
            c = N @ (mu / (sv[-r:] + mu) * (N.T @ eye[i]))
        else:
            c = N @ (N.T @ eye[i])
        n = np.linalg.norm(c)
        C[:, i] = c / n if n > 1e-12 else N[:, -1]
    return C, A_out


def run(path, taus):
    z = load(path)
    ent = z["ent"]
    A = z["adjacency"] != 0
    _, L, _ = moments(ent)
    B = b_from_chol(L)
    At = z["true_adjacency"] != 0
    pi = z["noise_corr"].argmax(1)
    bij = len(set(pi.tolist())) == len(pi)
    seed = int(re.search(r"_s(\d+)\.npz", path).group(1))
    family = re.search(r"d\d+_(.*)_n\d+_s", path)
    out = []
    variants = [("evidence", disentangling_matrix(B, A, evidence=True), A)]
    for tau in taus:
        C, A2 = consistent(B, A, tau)
        variants += [(f"feature_{tau:g}", C, A), (f"graph_{tau:g}", C, A2)]
    for name, C, adj in variants:
        out.append({"seed": seed, "family": family.group(1) if family else None,
                    "variant": name, "dropped": int(A.sum() - adj.sum()),
                    **score(z, At, pi, bij, adj, C)})
    return out


def main():
    paths = sorted(glob.glob(sys.argv[1]))
    taus = [float(t) for t in sys.argv[3:]]
    with open(sys.argv[2], "a") as fh:
        for p in paths:
            for rec in run(p, taus):
                fh.write(json.dumps(rec) + "\n")
            fh.flush()


if __name__ == "__main__":
    main()
