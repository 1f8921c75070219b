"""Variants of the subspace estimate in the disentanglement, on cached fits.

Reads the caches of ``disentangle_precision_cache.py`` (tuning seeds only) and,
for every variant, recomputes ``C`` from the same entangled features and pruned
graph, then the metric (SHD, LocR^2 under the LocR^2 matching).

Facts used (``ordering._ordered_noises``): the noise of position j in
environment k is the Gram-Schmidt residual of ``Ytilde_j`` on ``Ytilde_{<j}``,
so row j of ``B[k]`` is ``(-beta_kj, 1, 0, ...)`` with ``beta_kj`` the OLS
coefficients of ``Ytilde_j`` on ``Ytilde_{<j}`` in environment k; its sampling
covariance is ``s_kj^2 S_k[<j,<j]^{-1} / n_k`` (``s_kj^2`` the residual variance).

Usage::

    python disentangle_precision.py CACHE_GLOB OUT.jsonl variant [variant ...]
"""
from __future__ import annotations

import glob
import json
import re
import sys
from pathlib import Path

import numpy as np

from creator_plugin.disentangle import surrounded_sets
from creator_plugin.metrics import evaluate, shd
from creator_plugin.refine.likelihood import refine_disentangling

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402


# ---------------------------------------------------------------- ingredients
def moments(ent):
    """Per environment: covariance S_k (d, d), its Cholesky L_k, n_k."""
    S = np.stack([e.T @ e / e.shape[0] for e in ent])
    return S, np.linalg.cholesky(S), np.array([e.shape[0] for e in ent])


def b_from_chol(L):
    """B[k] = diag(L_k) L_k^{-1}: the regression of the ordered noises on the features."""
    return np.stack([np.diag(np.diag(f)) @ np.linalg.inv(f) for f in L])


def beta_cov(S, L, n, j):
    """(K, j, j): sampling covariance of beta_kj (OLS of feature j on features < j)."""
    s2 = L[:, j, j] ** 2
    return np.stack([s2[k] * np.linalg.inv(S[k, :j, :j]) / n[k] for k in range(len(n))])


# ----------------------------------------------------------- subspace variants
def basis_svd(rows, dim):
    _, _, vt = np.linalg.svd(rows, full_matrices=False)
    return vt[:dim].T


def bases_default(B, A, **_):
    K, d, _ = B.shape
    out = []
    for j in range(d):
        rows = B[:, j, :]
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        out.append(basis_svd(rows, min(int(A[:, j].sum()) + 1, K, d)))
    return out


def bases_weighted(B, A, S, L, n, how, **_):
    """Rows (-beta, 1) weighted by a per-environment precision before the SVD."""
    K, d, _ = B.shape
    out = []
    for j in range(d):
        rows = B[:, j, :].copy()
        dim = min(int(A[:, j].sum()) + 1, K, d)
        if j == 0:
            out.append(basis_svd(rows, dim))
            continue
        V = beta_cov(S, L, n, j)
        se = np.sqrt(np.trace(V, axis1=1, axis2=2) / j)
        norm = np.linalg.norm(rows, axis=1)
        if how == "raw":
            w = np.ones(K)
        elif how == "inv_se":          # unnormalised rows divided by their SE
            w = 1 / se
        elif how == "unit_inv_se":     # unit rows, then relative precision
            w = 1 / se * 0 + 1 / np.maximum(se / norm, 1e-300)
            w = w / norm
        elif how == "unit_inv_var":
            w = (norm / se) ** 2 / norm
        else:
            raise ValueError(how)
        out.append(basis_svd(rows * w[:, None], dim))
    return out


def affine_ml(beta, P, r, start, n_iter=500, tol=1e-12):
    """Affine subspace mu + span(U) (dim r) minimising sum_k |beta_k - mu - U a_k|^2_{P_k}."""
    K, j = beta.shape
    mu, U = start
    prev = np.inf
    for _ in range(n_iter):
        # a_k given (mu, U)
        if r:
            a = np.stack([np.linalg.solve(U.T @ P[k] @ U, U.T @ P[k] @ (beta[k] - mu))
                          for k in range(K)])
        else:
            a = np.zeros((K, 0))
        at = np.hstack([np.ones((K, 1)), a])  # (K, r+1)
        # M = [mu U] given a: sum_k (at_k at_k^T kron P_k) vec(M) = sum_k at_k kron P_k beta_k
        lhs = sum(np.kron(np.outer(at[k], at[k]), P[k]) for k in range(K))
        rhs = sum(np.kron(at[k], P[k] @ beta[k]) for k in range(K))
        M = np.linalg.lstsq(lhs, rhs, rcond=None)[0].reshape(r + 1, j).T
        mu, U = M[:, 0], M[:, 1:]
        if r:
            q, _ = np.linalg.qr(U)
            U = q
        res = sum((beta[k] - mu - U @ np.linalg.lstsq(U.T @ P[k] @ U, U.T @ P[k] @ (beta[k] - mu),
                                                          rcond=None)[0] if r else beta[k] - mu)
                  @ P[k] @ (beta[k] - mu - (U @ np.linalg.lstsq(U.T @ P[k] @ U,
                                                                U.T @ P[k] @ (beta[k] - mu),
                                                                rcond=None)[0] if r else 0))
                  for k in range(K))
        if prev - res <= tol * max(res, 1e-300):
            break
        prev = res
    return mu, U, float(res)


def bases_ml(B, A, S, L, n, **_):
    """Maximum-likelihood (generalised total least squares) affine subspace of the beta_kj."""
    K, d, _ = B.shape
    start = bases_default(B, A)
    out = []
    for j in range(d):
        dim = min(int(A[:, j].sum()) + 1, K, d)
        if j == 0 or dim >= j + 1 or dim >= K:
            out.append(start[j] if dim < j + 1 else np.eye(d)[:, :j + 1])
            continue
        beta = -B[:, j, :j]
        P = np.linalg.inv(beta_cov(S, L, n, j))
        V0 = start[j][: j + 1]  # (j+1, dim); rows beyond j are zero
        # point of V0 with coordinate j = 1 and the part of V0 with coordinate j = 0
        g = V0[j]
        x = V0 @ (g / (g @ g))
        mu0 = -x[:j]
        Q, _ = np.linalg.qr(V0 - np.outer(x, g))
        U0 = Q[:j, : dim - 1] if dim > 1 else np.zeros((j, 0))
        # complement of g inside V0: take an orthonormal basis
        if dim > 1:
            N = np.linalg.svd(np.eye(dim) - np.outer(g, g) / (g @ g))[0][:, : dim - 1]
            U0 = np.linalg.qr((V0 @ N)[:j])[0]
        mu, U, _ = affine_ml(beta, P, dim - 1, (mu0, U0))
        basis = np.zeros((d, dim))
        basis[:j, 0] = -mu
        basis[j, 0] = 1.0
        basis[:j, 1:] = U
        out.append(np.linalg.qr(basis)[0])
    return out


def leak_map(S, j):
    """(K, j, d-j-1): P_k = S_k[<j,<j]^{-1} S_k[<j,>j], the bias of beta_kj per unit of the
    true row's later coordinates (the direction's leakage of later features)."""
    return np.stack([np.linalg.solve(s[:j, :j], s[:j, j + 1:]) for s in S])


def error_cov(S, L, n, j, sigma2):
    """Sampling covariance of beta_kj plus sigma2 * P_k P_k^T (leakage, random per row)."""
    V = beta_cov(S, L, n, j)
    if sigma2 and j + 1 < S.shape[1]:
        P = leak_map(S, j)
        V = V + sigma2 * P @ np.swapaxes(P, 1, 2)
    return V


def _ml_start(V0, j, dim):
    g = V0[j]
    x = V0 @ (g / (g @ g))
    mu0 = -x[:j]
    if dim > 1:
        N = np.linalg.svd(np.eye(dim) - np.outer(g, g) / (g @ g))[0][:, : dim - 1]
        U0 = np.linalg.qr((V0 @ N)[:j])[0]
    else:
        U0 = np.zeros((j, 0))
    return mu0, U0


def fit_rows(B, A, S, L, n, sigma2, start=None):
    """Per position: (basis (d, dim), Mahalanobis residual, degrees of freedom)."""
    K, d, _ = B.shape
    start = start or bases_default(B, A)
    out = []
    for j in range(d):
        dim = min(int(A[:, j].sum()) + 1, K, d)
        if j == 0 or dim >= j + 1 or dim >= K:
            out.append((start[j] if dim < j + 1 else np.eye(d)[:, :j + 1], 0.0, 0))
            continue
        beta = -B[:, j, :j]
        P = np.linalg.inv(error_cov(S, L, n, j, sigma2))
        mu, U, res = affine_ml(beta, P, dim - 1, _ml_start(start[j][: j + 1], j, dim))
        basis = np.zeros((d, dim))
        basis[:j, 0] = -mu
        basis[j, 0] = 1.0
        basis[:j, 1:] = U
        df = K * j - (j * dim - (dim - 1) ** 2 + 0) - K * (dim - 1)
        out.append((np.linalg.qr(basis)[0], res, df))
    return out


def bases_gls(B, A, S, L, n, sigma2, **_):
    return [b for b, _, _ in fit_rows(B, A, S, L, n, sigma2)]


def bases_gls_mom(B, A, S, L, n, **_):
    """sigma2 by moments: pooled Mahalanobis residual equal to its degrees of freedom."""
    start = bases_default(B, A)
    def excess(ls):
        f = fit_rows(B, A, S, L, n, np.exp(ls), start)
        return sum(r for _, r, _ in f) - sum(df for _, _, df in f), f
    lo, hi = np.log(1e-8), np.log(1e2)
    e_lo, f_lo = excess(lo)
    if e_lo <= 0:
        return [b for b, _, _ in f_lo]
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        e, f = excess(mid)
        if e > 0:
            lo = mid
        else:
            hi = mid
    return [b for b, _, _ in f]


def bases_wleak(B, A, S, L, n, sigma2, **_):
    """Scalar weights: unnormalised rows divided by the RMS of their error covariance."""
    K, d, _ = B.shape
    out = []
    for j in range(d):
        rows = B[:, j, :]
        dim = min(int(A[:, j].sum()) + 1, K, d)
        if j == 0:
            out.append(basis_svd(rows, dim))
            continue
        V = error_cov(S, L, n, j, sigma2)
        se = np.sqrt(np.trace(V, axis1=1, axis2=2) / j)
        out.append(basis_svd(rows / se[:, None], dim))
    return out


def c_from_bases(bases, A):
    """The intersection step of ``disentangling_matrix`` on given bases."""
    d = A.shape[0]
    sur = surrounded_sets(A)
    C = np.zeros((d, d))
    eye = np.eye(d)
    for i in range(d):
        M = np.zeros((d, d))
        for j in [i, *np.flatnonzero(A[i])]:
            V = bases[j]
            M += eye - V @ V.T
        _, _, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        N = vt[-r:].T
        c = N @ (N.T @ eye[i]) if r > 1 else N[:, 0]
        C[:, i] = c / np.linalg.norm(c)
    return C


def c_convention(bases, A, how, B=None):
    """The intersection step with another choice inside a surrounded intersection.

    ``how``: ``"r1"`` -- for a node with children, the single direction of the
    smallest singular value (a surrounding parent enters only as far as the
    data put it in every subspace); childless nodes as the default.
    ``"ridge"`` -- ``c ~ (M + mu I)^{-1} e_i`` with ``mu`` the mean over the
    node's subspaces of the rows' residual variance outside their estimated
    span (the subspaces' own noise level).
    """
    d = A.shape[0]
    K = B.shape[0] if B is not None else None
    sur = surrounded_sets(A)
    C = np.zeros((d, d))
    eye = np.eye(d)
    resid = None
    if B is not None:
        resid = []
        for j in range(d):
            rows = B[:, j, :] / np.linalg.norm(B[:, j, :], axis=1, keepdims=True)
            V = bases[j]
            resid.append(float(np.sum((rows - rows @ V @ V.T) ** 2) / K))
    for i in range(d):
        M = np.zeros((d, d))
        js = [i, *np.flatnonzero(A[i])]
        for j in js:
            V = bases[j]
            M += eye - V @ V.T
        U, sv, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        if r == 1 or not A[i].any():
            N = vt[-r:].T
            c = N @ (N.T @ eye[i]) if r > 1 else N[:, 0]
        elif how == "r1":
            c = vt[-1]
        elif how in ("ridge", "ridge_sum"):
            mu = (np.mean if how == "ridge" else np.sum)([resid[j] for j in js])
            c = np.linalg.solve(M + mu * eye, eye[i])
        elif how in ("soft", "soft_mean"):
            # the r directions of the default, each weighted by the evidence that it is in
            # every subspace: mu / (sigma_l + mu), mu the subspaces' residual noise level
            mu = max((np.sum if how == "soft" else np.mean)([resid[j] for j in js]), 1e-12)
            N = vt[-r:].T
            s = sv[-r:]
            w = np.ones(r) if mu <= 0 else mu / (s + mu)
            c = N @ (w * (N.T @ eye[i]))
            if np.linalg.norm(c) < 1e-12:
                c = N[:, -1]
        else:
            raise ValueError(how)
        C[:, i] = c / np.linalg.norm(c)
    return C


# -------------------------------------------------------------------- oracles
def true_rows(z, ent, pi):
    """B*[k][j] = G^{-1} m_{k,pi(j)} in the features' coordinates (ent = Yc @ G)."""
    K, d = z["W"].shape[0], ent[0].shape[1]
    Bs = np.zeros((K, d, d))
    for k in range(K):
        Yc = z["Y"][k] - z["Y"][k].mean(0)
        G = np.linalg.lstsq(Yc, ent[k], rcond=None)[0]  # (true, pos)
        Ginv = np.linalg.inv(G)
        for j in range(d):
            t = pi[j]
            m = -z["W"][k][:, t].copy()
            m[t] += 1.0
            Bs[k, j] = Ginv @ (m / z["Omega"][k][t, t])
    return Bs


VARIANTS = {
    "default": lambda c: c_from_bases(bases_default(c["B"], c["A"]), c["A"]),
    "raw": lambda c: c_from_bases(bases_weighted(how="raw", **c), c["A"]),
    "inv_se": lambda c: c_from_bases(bases_weighted(how="inv_se", **c), c["A"]),
    "unit_inv_se": lambda c: c_from_bases(bases_weighted(how="unit_inv_se", **c), c["A"]),
    "unit_inv_var": lambda c: c_from_bases(bases_weighted(how="unit_inv_var", **c), c["A"]),
    "ml": lambda c: c_from_bases(bases_ml(**c), c["A"]),
    "gls_1e-4": lambda c: c_from_bases(bases_gls(sigma2=1e-4, **c), c["A"]),
    "wleak_1e-4": lambda c: c_from_bases(bases_wleak(sigma2=1e-4, **c), c["A"]),
    "gls_1e-3": lambda c: c_from_bases(bases_gls(sigma2=1e-3, **c), c["A"]),
    "wleak_1e-3": lambda c: c_from_bases(bases_wleak(sigma2=1e-3, **c), c["A"]),
    "gls_1e-2": lambda c: c_from_bases(bases_gls(sigma2=1e-2, **c), c["A"]),
    "wleak_1e-2": lambda c: c_from_bases(bases_wleak(sigma2=1e-2, **c), c["A"]),
    "gls_1e-1": lambda c: c_from_bases(bases_gls(sigma2=1e-1, **c), c["A"]),
    "wleak_1e-1": lambda c: c_from_bases(bases_wleak(sigma2=1e-1, **c), c["A"]),
    "conv_r1": lambda c: c_convention(bases_default(c["B"], c["A"]), c["A"], "r1"),
    "conv_ridge": lambda c: c_convention(bases_default(c["B"], c["A"]), c["A"], "ridge", c["B"]),
    "conv_ridge_sum": lambda c: c_convention(bases_default(c["B"], c["A"]), c["A"], "ridge_sum",
                                             c["B"]),
    "conv_soft": lambda c: c_convention(bases_default(c["B"], c["A"]), c["A"], "soft", c["B"]),
    "conv_soft_mean": lambda c: c_convention(bases_default(c["B"], c["A"]), c["A"], "soft_mean",
                                             c["B"]),
    "gls_mom": lambda c: c_from_bases(bases_gls_mom(**c), c["A"]),
}


def load(path):
    """A cache as a dict; ``ent`` and ``Y`` as lists of per-environment arrays."""
    z = dict(np.load(path))
    if "sizes" in z:
        cut = np.cumsum(z["sizes"])[:-1]
        z["ent"], z["Y"] = np.split(z["ent"], cut), np.split(z["Y"], cut)
    return z


def run(path, names):
    z = load(path)
    ent = z["ent"]
    A = z["adjacency"] != 0
    S, L, n = moments(ent)
    B = b_from_chol(L)
    ctx = dict(B=B, A=A, S=S, L=L, n=n)
    Cn = z["noise_corr"]
    pi = Cn.argmax(1)
    bij = len(set(pi.tolist())) == len(pi)
    At = z["true_adjacency"] != 0
    seed = int(re.search(r"_s(\d+)\.npz", path).group(1))
    recs = []
    for name in names:
        adj = A
        if name.startswith("oracleB"):
            if not bij:
                continue
            Bs = true_rows(z, ent, pi)
            if name == "oracleB_trunc":
                Bs = np.stack([np.tril(b / np.diag(b)[:, None]) for b in Bs])
            if name == "oracleB_trueA":
                adj = At[np.ix_(pi, pi)]
            C = c_from_bases(bases_default(Bs, adj), adj)
        elif name == "trueA":
            if not bij:
                continue
            adj = At[np.ix_(pi, pi)]
            C = c_from_bases(bases_default(B, adj), adj)
        elif name.startswith("lik"):
            base = name.split(":")[1] if ":" in name else "default"
            C0 = VARIANTS[base](ctx)
            C, info = refine_disentangling(C0, S, n, A)
        else:
            C = VARIANTS[name](ctx)
        recs.append({"seed": seed, "variant": name, **score(z, At, pi, bij, adj, C)})
    return recs


def score(z, At, pi, bij, adj, C):
    """SHD and LocR² of the features ``ent @ C`` with graph ``adj``; SHD in the noise labels."""
    ev = evaluate(At.astype(int), list(z["Y"]), adj.astype(int), [e @ C for e in z["ent"]])
    rec = {"shd": int(ev["shd"]), "locr2": float(ev["locr2"]),
           "same_as_noise": bool(bij and (np.asarray(ev["matching"]) == pi).all())}
    if bij:
        Bm = np.zeros_like(At, dtype=int)
        Bm[np.ix_(pi, pi)] = adj
        rec["shd_noise"] = int(shd(At, Bm))
    return rec


def main():
    paths = sorted(glob.glob(sys.argv[1]), key=lambda p: int(re.search(r"_s(\d+)\.", p).group(1)))
    names = sys.argv[3:]
    with row_files.open_text(sys.argv[2], "a") as fh:
        for p in paths:
            for rec in run(p, names):
                fh.write(json.dumps(rec) + "\n")
            fh.flush()
    keep_last(sys.argv[2], ("seed", "variant"))


def keep_last(path, fields):
    """Rewrite the rows file keeping, per key, only the last row (a re-run replaces its rows)."""
    rows = row_files.read_jsonl(path)
    last = {tuple(r.get(f) for f in fields): i for i, r in enumerate(rows)}
    with row_files.open_text(path, "w") as fh:
        for i, r in enumerate(rows):
            if last[tuple(r.get(f) for f in fields)] == i:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
