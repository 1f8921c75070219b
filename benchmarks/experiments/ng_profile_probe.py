"""Probe: a non-Gaussian likelihood, maximised over the features, as the branches' chooser.

Question (tuning seeds only): the branches' chooser reads a Gaussian
criterion, which sometimes prefers a branch with a wrong order. Does the
model's non-Gaussian likelihood in the shared reduced space, maximised over
the features' linear map and every environment's edge weights for the
model's graph (each noise's entropy by Hyvarinen's smooth approximation),
rank the models as their SHDs do? For each data set: the default fit
without branches, its two branches (as ``branch_probe.py``) and the true
latents with the true graph; each scored from its own features (``ng0``)
and after at most MAXITER L-BFGS iterations (``ng``), minus twice the
log-likelihood per data set plus one edge price per edge. Usage::

    OMP_NUM_THREADS=1 python ng_profile_probe.py SET SEED[,SEED...] OUT.jsonl [MAXITER]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import branch_probe as bp  # noqa: E402

from creator_plugin.revision import REVISION_PENALTY  # noqa: E402

K1 = 36 / (8 * np.sqrt(3) - 9)
K2 = 24 / (16 * np.sqrt(3) - 27)
C2 = np.sqrt(0.5)


def _neg_ent(E):
    """Each column's entropy (Hyvarinen's approximation) and its gradient in ``E`` (n x d)."""
    n = E.shape[0]
    s2 = np.mean(E * E, axis=0)
    s = np.sqrt(s2)
    U = E / s
    ex = np.exp(-U * U / 2)
    m1 = np.mean(U * ex, axis=0)
    m2 = np.mean(ex, axis=0)
    J = K1 * m1 ** 2 + K2 * (m2 - C2) ** 2
    H = 0.5 * np.log(2 * np.pi * np.e * s2) - J
    g = (2 * K1 * m1 * (1 - U * U) * ex - 2 * K2 * (m2 - C2) * U * ex) / n  # dJ/dU
    dJ = g / s - U * np.sum(g * U, axis=0) / (n * s)
    dH = E / (n * s2) - dJ
    return H, dH


def profile(Zs, A, W0, maxiter=200):
    """Maximise sum_k n_k (log|det W| - sum_i H(e_ik)) over W and per-environment weights.

    ``Zs``: centred (n_k, d) coordinates shared by every model of a data set;
    ``A``: boolean adjacency (i -> j at ``A[i, j]``). With ``maxiter=None`` the
    objective and its start are returned (a gradient check reads them); otherwise
    minus twice the log-likelihood (up to a constant) at the end, ``W`` and
    scipy's result.
    """
    d = A.shape[0]
    K = len(Zs)
    ns = np.array([len(z) for z in Zs], float)
    rows, cols = np.nonzero(A)  # edge i -> j: B[j, i]
    m = rows.size
    # initial weights: least squares per environment
    B0 = np.zeros((K, m))
    for k, Z in enumerate(Zs):
        F = Z @ W0.T
        for j in range(d):
            pa = np.flatnonzero(A[:, j])
            if pa.size:
                b = np.linalg.lstsq(F[:, pa], F[:, j], rcond=None)[0]
                for p, v in zip(pa, b):
                    B0[k, np.flatnonzero((rows == p) & (cols == j))[0]] = v
    x0 = np.concatenate([W0.ravel(), B0.ravel()])
    N = ns.sum()

    def f(x):
        W = x[:d * d].reshape(d, d)
        B = x[d * d:].reshape(K, m)
        sign, ld = np.linalg.slogdet(W)
        if sign == 0:
            return np.inf, np.zeros_like(x)
        Winv_T = np.linalg.inv(W).T
        val = -N * ld
        gW = -N * Winv_T
        gB = np.zeros((K, m))
        for k, Z in enumerate(Zs):
            Mk = np.eye(d)
            Mk[cols, rows] -= B[k]
            F = Z @ W.T
            E = F @ Mk.T
            H, dH = _neg_ent(E)
            val += ns[k] * H.sum()
            GE = ns[k] * dH
            GM = GE.T @ F
            gB[k] = -GM[cols, rows]
            gW += (GE @ Mk).T @ Z
        return val / N, np.concatenate([gW.ravel(), gB.ravel()]) / N

    if maxiter is None:
        return f, x0
    res = minimize(f, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter})
    return 2 * res.fun * N, res.x[:d * d].reshape(d, d), res


def scored(Zs, Ls, A, maxiter):
    Z, F = np.vstack(Zs), np.vstack(Ls)
    W0 = np.linalg.lstsq(Z, F - F.mean(0), rcond=None)[0].T
    f, x0 = profile(Zs, A, W0, maxiter=None)
    start = time.process_time()
    value, _, res = profile(Zs, A, W0, maxiter=maxiter)
    pen = REVISION_PENALTY * int(A.sum()) * float(np.log([len(z) for z in Zs]).sum())
    return {"ng0": float(2 * f(x0)[0] * len(Z) + pen), "ng": float(value + pen),
            "nit": int(res.nit), "cpu": time.process_time() - start}


def run(which: str, seeds: list[int], out: str, maxiter: int = 200) -> None:
    with open(out, "a") as fh:
        for seed in seeds:
            for _, d, X, A, Y in bp.data_sets(which, seed):
                row, m = bp.fit(d, seed, X, A, Y)
                Zs = [z - z.mean(0) for z in m.latents_]
                fits = [{"kind": "truth", "shd": 0,
                         **scored(Zs, [np.asarray(y) for y in Y], np.asarray(A) != 0, maxiter)},
                        {"kind": "default", "shd": row["shd"], "score": row["score"],
                         **scored(Zs, m.latents_, np.asarray(m.adjacency_matrix_) != 0, maxiter)}]
                for _, step in bp.close_calls(m)[:2]:
                    rs = np.sort(m.diagnostics_["ordering"][step]["refined_scores"])
                    rank = int(np.flatnonzero(rs > rs[0] * bp.MIN_RATIO)[0])
                    r2, m2 = bp.fit(d, seed, X, A, Y, {step: rank}, basis=m.mixing_)
                    fits.append({"kind": "branch", "shd": r2["shd"], "score": r2["score"],
                                 **scored(Zs, m2.latents_,
                                          np.asarray(m2.adjacency_matrix_) != 0, maxiter)})
                fh.write(json.dumps({"set": which, "seed": seed, "maxiter": maxiter,
                                     "fits": fits}) + "\n")
                fh.flush()
                base = fits[1]
                print(which, seed, [(f["kind"], f["shd"], round(f["ng"] - base["ng"]))
                                    for f in fits], flush=True)


if __name__ == "__main__":
    if len(sys.argv) in (4, 5):
        run(sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3],
            int(sys.argv[4]) if len(sys.argv) == 5 else 200)
    else:
        raise SystemExit(__doc__)
