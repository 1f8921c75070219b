"""Per-direction noise levels for the choice inside a surrounded intersection, on cached fits.

Adds variants to ``disentangle_precision.py`` (same caches, same metric). The
current ``"evidence"`` option (``conv_soft``) weights each of the r directions
``v_l`` of a surrounded intersection by ``mu_i / (s_l + mu_i)`` with one noise
level ``mu_i`` per node (the unit rows' residual outside their subspaces). The
variants here give each direction its own level, the total-least-squares
angle error of ``v_l`` in every subspace ``V_j`` (``j in {i} U ch(i)``):
``V_j`` is the top-``dim_j`` right singular space of the unit rows ``U_j``
(K, d); a direction of ``V_j`` along which the rows spread ``|U_j v|^2`` is
tilted out of ``V_j`` by noise of per-entry variance ``sigma_j^2`` by an
expected squared sine of ``sigma_j^2 (d - dim_j) / |U_j v|^2``, and
``sigma_j^2 (d - dim_j) = RSS_j / (K - dim_j)``. So the expected singular
value of ``M`` along a direction that is in every subspace is::

    tau_l = sum_j RSS_j / ((K - dim_j) |U_j V_j V_j' v_l|^2)

Variants (``how``):

* ``tls``:      w_l = tau_l / (s_l + tau_l)
* ``tls_cap``:  the same with each subspace's term capped at 1 (a squared
  sine is at most 1)
* ``tls_max``:  level max(mu_i, tau_l) (the current level, raised for a
  direction the environments vary little along)
* ``tls_exp``:  w_l = exp(-s_l / (2 tau_l)) (Gaussian evidence)

Usage::

    python disentangle_direction.py CACHE_GLOB OUT.jsonl variant [variant ...]
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disentangle_precision as dp  # noqa: E402

from creator_plugin.disentangle import (  # noqa: E402
    _unit_rows,
    subspace_residuals,
    surrounded_sets,
)


def _rows_and_rss(B, bases):
    """Per node the unit rows ``U_j`` and their residual sum of squares outside ``V_j``."""
    K, d, _ = B.shape
    return [_unit_rows(B, j) for j in range(d)], list(K * subspace_residuals(B, bases))


def c_direction(B, A, how):
    K, d, _ = B.shape
    bases = dp.bases_default(B, A)
    sur = surrounded_sets(A)
    units, rss = _rows_and_rss(B, bases)
    dims = [V.shape[1] for V in bases]
    C = np.zeros((d, d))
    eye = np.eye(d)
    for i in range(d):
        js = [i, *np.flatnonzero(A[i])]
        M = sum(eye - bases[j] @ bases[j].T for j in js)
        _, sv, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        N = vt[-r:].T
        if r == 1:
            C[:, i] = N[:, 0] / np.linalg.norm(N[:, 0])
            continue
        if not A[i].any():
            c = N @ (N.T @ eye[i])
            C[:, i] = c / np.linalg.norm(c)
            continue
        s = sv[-r:]
        terms = np.zeros((len(js), r))
        for a, j in enumerate(js):
            V = bases[j]
            spread = np.sum((units[j] @ V @ (V.T @ N)) ** 2, axis=0)  # (r,)
            lev = rss[j] / max(K - dims[j], 1)
            terms[a] = lev / np.maximum(spread, 1e-12)
        if how == "tls_cap":
            terms = np.minimum(terms, 1.0)
        tau = np.maximum(terms.sum(0), 1e-12)
        if how == "tls_max":
            mu = max(sum(rss[j] / K for j in js), 1e-12)
            tau = np.maximum(tau, mu)
        if how in ("tls", "tls_cap", "tls_max"):
            w = tau / (s + tau)
        elif how == "tls_exp":
            w = np.exp(-s / (2 * tau))
        else:
            raise ValueError(how)
        c = N @ (w * (N.T @ eye[i]))
        if np.linalg.norm(c) < 1e-12:
            c = N[:, -1]
        C[:, i] = c / np.linalg.norm(c)
    return C


def c_jackknife(B, A, how):
    """Per-direction level from leaving one environment out.

    For each direction ``v_l`` of the full-data intersection, ``q_lk = v_l' M^(-k) v_l``
    with ``M^(-k)`` built from the subspaces fitted without environment k.
    ``jk_sd``: level ``tau_l`` = jackknife SD of ``q_l``; ``jk_add``: ``mu_i + tau_l``;
    ``jk_min``: the node level ``mu_i`` with ``s_l`` replaced by ``min_k q_lk``.
    Weights ``level / (s + level)``.
    """
    K, d, _ = B.shape
    bases = dp.bases_default(B, A)
    sur = surrounded_sets(A)
    units, rss = _rows_and_rss(B, bases)
    loo = {}

    def loo_proj(j):
        if j not in loo:
            dim = bases[j].shape[1]
            P = []
            for k in range(K):
                _, _, vt = np.linalg.svd(np.delete(units[j], k, axis=0), full_matrices=False)
                V = vt[:dim].T
                P.append(V @ V.T)
            loo[j] = np.stack(P)
        return loo[j]

    C = np.zeros((d, d))
    eye = np.eye(d)
    for i in range(d):
        js = [i, *np.flatnonzero(A[i])]
        M = sum(eye - bases[j] @ bases[j].T for j in js)
        _, sv, vt = np.linalg.svd(M)
        r = min(len(sur[i]) + 1, d)
        N = vt[-r:].T
        if r == 1 or not A[i].any():
            c = N @ (N.T @ eye[i]) if r > 1 else N[:, 0]
            C[:, i] = c / np.linalg.norm(c)
            continue
        s = sv[-r:]
        Mk = sum(eye[None] - loo_proj(j) for j in js)  # (K, d, d)
        q = np.einsum("dl,kde,el->kl", N, Mk, N)  # (K, r)
        sd = np.sqrt((K - 1) / K * np.sum((q - q.mean(0)) ** 2, axis=0))
        mu = max(sum(rss[j] / K for j in js), 1e-12)
        if how == "jk_sd":
            lev, ss = np.maximum(sd, 1e-12), s
        elif how == "jk_add":
            lev, ss = mu + sd, s
        elif how == "jk_min":
            lev, ss = mu, np.maximum(q.min(0), 0.0)
        else:
            raise ValueError(how)
        w = lev / (ss + lev)
        c = N @ (w * (N.T @ eye[i]))
        if np.linalg.norm(c) < 1e-12:
            c = N[:, -1]
        C[:, i] = c / np.linalg.norm(c)
    return C


for _how in ("jk_sd", "jk_add", "jk_min"):
    dp.VARIANTS[f"dir_{_how}"] = (lambda h: lambda c: c_jackknife(c["B"], c["A"], h))(_how)

for _how in ("tls", "tls_cap", "tls_max", "tls_exp"):
    dp.VARIANTS[f"dir_{_how}"] = (lambda h: lambda c: c_direction(c["B"], c["A"], h))(_how)

if __name__ == "__main__":
    dp.main()
