"""UMNI-CRL for linear models, re-implemented from the paper, as a benchmark method.

Varici, Acartuerk, Shanmugam & Tajer, "Linear Causal Representation Learning
from Unknown Multi-node Interventions" (NeurIPS 2024; arXiv:2406.05937),
Algorithm 1 (UMNI-CRL), checked against the authors' code on their own
generator (the peers page has the table).

Model and assumptions
---------------------
* ``x = G z`` with ``G`` of full column rank; latents follow a linear
  causal model over a DAG on d nodes.
* **Environment 0 is observational and environments 1..d intervene on
  unknown sets of latents** whose indicator vectors are linearly independent
  (a d x d invertible target matrix D); soft interventions identify the
  latents up to mixing with their ancestors and the graph up to its
  transitive closure, hard ones add an unmixing step.
* Score functions are Gaussian estimates, ``s_k(x) = -Theta_k x`` with
  ``Theta_k`` the precision of environment k in the d-dimensional column
  space of ``G``: second moments only.

What was read from the paper and the authors' code
--------------------------------------------------
* Score differences ``ds_m = s_0 - s_m`` at the observational rows; for an
  integer weight vector ``w`` the matrix ``R_w = E_0[(sum_m w_m ds_m)(...)^T]``
  has the column space of the encoder rows of the latents ``w`` moves.
* **Causal order.** For ``t = 0..d-1``, the first ``w`` in
  ``{-kappa..kappa}^d`` (lexicographic order) whose ``R_w`` column space,
  projected off the encoder rows found so far, has rank one; that direction is
  encoder row ``t`` and ``w`` column ``t`` of the weight matrix (columns then
  divided by their gcd and negated, as the authors do). Ranks count
  eigenvalues and singular values above ``atol_eigv``. A ``R_w`` of rank 0
  keeps its whole eigenbasis (the authors' ``eigvec[:, -0:]``), and a
  column found with ``w = 0`` fails the fit, as their assertion does.
* **Ancestors.** For ``t`` from last to first and ``j > t`` not yet a
  descendant of ``t``: the combinations ``a w_t + b w_j`` (``|a| <=
  sum|w_j|``, ``1 <= b <= sum|w_t|``) are tried against the encoder rows of
  the nodes before ``j`` other than ``t`` and ``t``'s descendants; a rank-one
  projection replaces row ``j`` and column ``j`` (``t`` is then not an
  ancestor of ``j``); none makes ``t`` an ancestor of ``j`` and of ``j``'s
  descendants. The result is the soft encoder and graph.
* **Unmixing (hard).** In order, the encoder row of a node with estimated
  ancestors is corrected by the regression of its estimated latent on them
  in the first environment (of those whose causal-order weight moves it)
  where that regression differs by more than 0.1 from the observational one;
  an edge ``t -> j`` of the soft graph is then kept when the partial
  correlation of the estimated observational latents ``t`` and ``j`` given
  ``j``'s other soft-graph ancestors has a Fisher-z p-value at most
  ``atol_ci_test``.

Defaults are the authors' test script's: ``kappa=2``, ``atol_eigv=0.05``,
``atol_ci_test=0.05``. The causal-order search tries up to
``(2 kappa + 1)^d`` weight vectors per node (3125 at d = 5): the method is
for small d. Differences from the authors' code: the observational rows
both estimate the precisions and average the score differences (their test
script estimates the precisions on fresh draws of the same model), and the
column space is the top-d principal subspace of all rows (theirs: of the
first d + p rows of each environment, the same subspace on noiseless data).
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
from scipy.special import erf

from .lscale import moments_from_data

__all__ = ["fit_umni_crl", "fit_umni_crl_soft", "umni_crl_from_moments"]


class UMNIFailure(RuntimeError):
    """The causal-order search found no intervention combination for a node."""


def _rank_one_direction(deltas, S0, w, null, atol):
    """Encoder direction of ``w`` off the span whose complement is ``null``, or None."""
    D = np.tensordot(w, deltas, axes=1)
    R = D @ S0 @ D
    vals, vecs = np.linalg.eigh(R)
    rank = int(np.sum(vals > atol))
    col = vecs[:, vecs.shape[1] - rank:] if rank else vecs  # the authors' [:, -0:] keeps all
    proj = null @ (null.T @ col)
    if int(np.sum(np.linalg.svd(proj, compute_uv=False) > atol)) != 1:
        return None
    u = np.linalg.svd(col @ (col.T @ null))[0]
    return u[:, 0]


def _null_basis(rows, n):
    """Orthonormal basis of the complement of the span of ``rows`` (k, n), k <= n."""
    if len(rows) == 0:
        return np.eye(n)
    q = np.linalg.qr(np.asarray(rows).T, mode="complete")[0]
    return q[:, len(rows):]


def _causal_order(deltas, S0, atol, kappa):
    n = deltas.shape[1]
    H = np.zeros((n, n))
    Wm = np.zeros((n, n), dtype=np.int64)
    grid = list(product(range(-kappa, kappa + 1), repeat=deltas.shape[0]))
    for t in range(n):
        null = _null_basis(H[:t], n)
        for w in grid:
            u = _rank_one_direction(deltas, S0, np.array(w, dtype=float), null, atol)
            if u is not None:
                H[t], Wm[:, t] = u, w
                break
        if not np.any(Wm[:, t]):
            raise UMNIFailure(f"UMNI-CRL: no intervention combination isolates latent {t} "
                              "(the causal-order step found none of rank one).")
    for i in range(n):
        Wm[:, i] = -Wm[:, i] // math.gcd(*(int(v) for v in Wm[:, i]))
    return H, Wm


def _ancestors(deltas, S0, H_c, W_c, atol):
    n = H_c.shape[0]
    g = np.zeros((n, n), dtype=bool)
    H, Wm = H_c.copy(), W_c.copy()
    for t in reversed(range(n)):
        for j in range(t + 1, n):
            if g[t, j]:
                continue
            others = [i for i in range(j) if i != t and not g[t, i]]
            null = _null_basis(H[others], n)
            found = False
            for a, b in product(range(-int(np.abs(Wm[:, j]).sum()),
                                      int(np.abs(Wm[:, j]).sum()) + 1),
                                range(1, int(np.abs(Wm[:, t]).sum()) + 1)):
                w = a * Wm[:, t] + b * Wm[:, j]
                u = _rank_one_direction(deltas, S0, w.astype(float), null, atol)
                if u is not None:
                    H[j], Wm[:, j] = u, w
                    found = True
                    break
            if not found:
                g[t, j] = True
                g[t, :] |= g[j, :]
    return g, H, Wm


def _fisher_z_pvalue(C, i, j, cond, n):
    idx = [i, j, *cond]
    theta = np.linalg.pinv(C[np.ix_(idx, idx)])
    r = -theta[0, 1] / np.sqrt(theta[0, 0] * theta[1, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.sqrt(n - len(cond) - 3) * abs(0.5 * np.log1p(2 * r / (1 - r)))
    return float(2 * (1 - 0.5 * (1 + erf(stat / np.sqrt(2)))))


def _regression(C, an, t):
    """Coefficients of latent ``t`` on its ancestors ``an`` from the covariance ``C``."""
    try:
        return np.linalg.solve(C[np.ix_(an, an)], -C[an, t])
    except np.linalg.LinAlgError:
        raise UMNIFailure(f"UMNI-CRL: the soft step's latents {an.tolist()} (the ancestors "
                          f"of latent {t}) are linearly dependent, so the unmixing "
                          "regression has no solution.") from None


def _unmixing(covs, X0, H_s, g_s, W_c, atol_ci_test):
    n = H_s.shape[0]
    H = H_s.copy()
    for t in range(1, n):
        an = np.flatnonzero(g_s[:, t])
        if an.size == 0:
            continue
        C = H @ covs @ H.T
        u_obs = _regression(C[0], an, t)
        for m in np.flatnonzero(W_c[:, t]):
            u_m = _regression(C[m + 1], an, t)
            if np.linalg.norm(u_m - u_obs) > 0.1:
                H[t] += u_m @ H[an]
                break
    Z0 = X0 @ H.T
    corr = np.corrcoef(Z0, rowvar=False)
    g = np.zeros((n, n), dtype=bool)
    for t, j in zip(*np.nonzero(g_s)):
        rest = [i for i in np.flatnonzero(g_s[:, j]) if i != t]
        g[t, j] = _fisher_z_pvalue(corr, t, j, rest, Z0.shape[0]) <= atol_ci_test
    return g, H


def umni_crl_from_moments(
    covs: np.ndarray,
    deltas: np.ndarray,
    S0: np.ndarray,
    X0: np.ndarray,
    *,
    hard: bool = True,
    kappa: int = 2,
    atol_eigv: float = 0.05,
    atol_ci_test: float = 0.05,
) -> dict:
    """UMNI-CRL in the d coordinates of the mixing's column space (module docstring).

    Parameters
    ----------
    covs : ndarray (d + 1, d, d)
        Covariance of every environment, observational first.
    deltas : ndarray (d, d, d)
        ``Theta_m - Theta_0`` for the interventional environments: the score
        difference ``s_0 - s_m`` is ``deltas[m - 1] @ x``.
    S0 : ndarray (d, d)
        Second moment ``E_0[x x^T]`` of the observational rows.
    X0 : ndarray (n_0, d)
        Observational rows (for the hard step's tests).
    hard : bool, default=True
        Run the unmixing step for hard interventions.
    kappa : int, default=2
    atol_eigv, atol_ci_test : float, default=0.05

    Returns
    -------
    dict
        ``encoder`` (d, d), ``graph`` (d, d) bool, ``[t, j]`` iff t -> j (soft:
        t an ancestor of j); ``encoder_soft``, ``graph_soft``, ``weights``
        (the causal-order step's integer weights, column t for latent t).

    Raises
    ------
    UMNIFailure
        When the causal-order step finds no weight vector for some latent, or
        the unmixing step's regression is singular (the authors' code then
        fails too, with NumPy's singular-matrix error).
    """
    H_c, W_c = _causal_order(deltas, S0, atol_eigv, kappa)
    g_s, H_s, _ = _ancestors(deltas, S0, H_c, W_c, atol_eigv)
    out = {"encoder_soft": H_s, "graph_soft": g_s, "weights": W_c}
    if not hard:
        return {**out, "encoder": H_s, "graph": g_s}
    g_h, H_h = _unmixing(covs, X0, H_s, g_s, W_c, atol_ci_test)
    return {**out, "encoder": H_h, "graph": g_h & g_s}


def fit_umni_crl(
    X_list: list[np.ndarray],
    n_latent: int,
    random_state=None,
    *,
    hard: bool = True,
    kappa: int = 2,
    atol_eigv: float = 0.05,
    atol_ci_test: float = 0.05,
):
    """Unknown multi-node interventions (Varici et al. 2024); validated on docs/results/peers.md.

    Re-implemented from the paper and checked against the authors' code on
    their generator (the validation table is on the peers page). Needs an
    observational environment first and ``n_latent`` interventional ones.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        Observational environment first, then ``n_latent`` environments with
        linearly independent (unknown) intervention target sets.
    n_latent : int
    random_state : ignored
        UMNI-CRL is deterministic.
    hard : bool, default=True
        Assume hard interventions (unmixing step); False for soft.
    kappa : int, default=2
        Largest modulus of the weights searched in the causal-order step.
    atol_eigv, atol_ci_test : float, default=0.05

    Returns
    -------
    adjacency, latents, order, info
        ``info["weights"]``: the causal-order step's integer weights.
    """
    d = int(n_latent)
    if len(X_list) != d + 1:
        raise ValueError(f"UMNI-CRL needs n_latent + 1 = {d + 1} environments (observational "
                         f"first), got {len(X_list)}.")
    basis, covs, _ = moments_from_data(X_list, d)
    prec = np.linalg.inv(covs)
    X0 = np.asarray(X_list[0], dtype=float) @ basis
    S0 = X0.T @ X0 / X0.shape[0]
    sol = umni_crl_from_moments(covs, prec[1:] - prec[0], S0, X0, hard=hard, kappa=kappa,
                                atol_eigv=atol_eigv, atol_ci_test=atol_ci_test)
    encoder = sol["encoder"] @ basis.T
    latents = [np.asarray(x, dtype=float) @ encoder.T for x in X_list]
    return (sol["graph"].astype(int), latents, list(range(d)),
            {"weights": sol["weights"].tolist()})


def fit_umni_crl_soft(X_list, n_latent, random_state=None, *, kappa: int = 2,
                      atol_eigv: float = 0.05):
    """UMNI-CRL for soft interventions: latents up to ancestors, graph up to transitive closure."""
    return fit_umni_crl(X_list, n_latent, random_state, hard=False, kappa=kappa,
                        atol_eigv=atol_eigv)
