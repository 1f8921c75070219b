"""The clamped reading: environments whose interventions hold latents constant.

An intervention that clamps latents to constants leaves an environment
varying only in the directions of its free latents: with ``x = mixing @ y``
and ``y_i`` constant for every clamped ``i``, the environment's centred data
span ``span{mixing[:, i] : i free}``. Such an environment is rank deficient
(it varies in fewer than d directions) and CREATOR's ordering, which runs
ICA within every environment, cannot use it. What it still tells is that
subspace. This module reads it:

1. **Rule** (read from the data, never from d or K): an environment is
   clamped when its own centred data have fewer than d singular values above
   :data:`creator_plugin.preprocessing.ENVIRONMENT_RANK_TOL` (1e-12) of the
   largest; the reading runs when every environment is clamped (the shared
   reduction cannot resolve them). Data where some environments are clamped
   and others vary in every direction are still refused: combining this
   reading with CREATOR's steps on the full-rank ones is not implemented.
2. **Subspaces**: in the pooled reduced coordinates, environment k's
   subspace is spanned by the leading ``r_k`` eigenvectors of its covariance
   (``r_k`` its rank).
3. **Columns**: every one-dimensional subspace, and every one-dimensional
   intersection of subspaces (intersections repeated while new ones appear,
   two subspaces meeting where their principal angles have a sine below
   :data:`ANGLE_TOL`), is one latent's mixing column. Distinct columns
   (a sine of the angle between them above :data:`ANGLE_TOL`) are kept in
   the order found, at most d linearly independent ones; when fewer than d
   are found, the rest of the encoder is the orthogonal complement of the
   found ones in the reduced coordinates, and those latents are named as
   not identified.
4. **Clamped cells**: latent i is clamped in environment k when its SD
   there is at most :data:`CLAMP_SD_TOL` of its pooled within-environment
   SD.
5. **Graph**: none is read. Within an environment with one free latent the
   covariance carries no edge information; the environments' means carry
   only ``intercept + sum of parent weights times the clamp values`` of each
   free latent, one equation for all its parent weights. The fitted graph is
   empty and the diagnostics say that the graph is not identified.
"""

from __future__ import annotations

import numpy as np

from .preprocessing import ENVIRONMENT_RANK_TOL

__all__ = ["ANGLE_TOL", "CLAMP_SD_TOL", "ENVIRONMENT_RANK_TOL", "changed_cells", "clamped_cells",
           "environment_subspaces", "intersect", "mixing_columns", "reduced_encoder",
           "regime_message"]

#: Sine of a principal angle below which two subspaces are read as sharing
#: that direction (and two columns as the same one).
ANGLE_TOL = 1e-6

#: A latent's SD within an environment, as a share of its pooled
#: within-environment SD, at or below which it counts as clamped there.
CLAMP_SD_TOL = 1e-6

#: The most subspaces the intersection step keeps (a guard on its cost).
MAX_SUBSPACES = 256


def environment_subspaces(X_red: list[np.ndarray], ranks: list[int],
                          n_latent: int) -> list[np.ndarray | None]:
    """Orthonormal bases (d, r_k) of the clamped environments' subspaces; None if full rank.

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        Reduced, per-environment centred data.
    ranks : list of int
        Every environment's own rank.
    n_latent : int

    Returns
    -------
    list of ndarray or None
    """
    out = []
    for x, r in zip(X_red, ranks):
        if r >= n_latent:
            out.append(None)
            continue
        ev, vec = np.linalg.eigh(x.T @ x)
        out.append(vec[:, ::-1][:, :max(r, 0)])
    return out


def intersect(a: np.ndarray, b: np.ndarray, tol: float = ANGLE_TOL) -> np.ndarray:
    """Orthonormal basis of the intersection of ``span(a)`` and ``span(b)`` (orthonormal bases).

    The principal vectors whose principal angle has a sine below ``tol``.
    """
    if a.shape[1] == 0 or b.shape[1] == 0:
        return a[:, :0]
    u, s, _ = np.linalg.svd(a.T @ b, full_matrices=False)
    sine = np.sqrt(np.clip(1.0 - s**2, 0.0, None))
    return a @ u[:, sine < tol]


def _same(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    return a.shape == b.shape and np.linalg.svd(a.T @ b, compute_uv=False).min() > np.sqrt(
        max(1.0 - tol**2, 0.0))


def mixing_columns(subspaces: list[np.ndarray], n_latent: int,
                   tol: float = ANGLE_TOL) -> tuple[np.ndarray, list[int]]:
    """The mixing columns the subspaces identify, and the environment each was first read in.

    Parameters
    ----------
    subspaces : list of ndarray (d, r)
        Orthonormal bases of the clamped environments' subspaces.
    n_latent : int
    tol : float, default=ANGLE_TOL

    Returns
    -------
    columns : ndarray (d, m), m <= d
        Unit columns, linearly independent, in the order found.
    sources : list of int
        For every column, the position in ``subspaces`` of the first
        subspace it lies in.
    """
    pool = [s for s in subspaces if 0 < s.shape[1] < n_latent]
    fresh = list(pool)
    while fresh and len(pool) < MAX_SUBSPACES:
        new = []
        for a in fresh:
            for b in pool:
                c = intersect(a, b, tol)
                if 0 < c.shape[1] < min(a.shape[1], b.shape[1]) and not any(
                        _same(c, s, tol) for s in pool + new):
                    new.append(c)
        pool += new
        fresh = new
    columns, sources = [], []
    for s in pool:
        if s.shape[1] != 1:
            continue
        v = s[:, 0]
        if columns:
            basis = np.linalg.qr(np.column_stack(columns))[0]
            if np.linalg.norm(v - basis @ (basis.T @ v)) < tol:
                continue  # the same column again, or a combination of found ones
        if len(columns) == n_latent:
            break
        columns.append(v)
        sources.append(next(i for i, b in enumerate(subspaces)
                            if np.linalg.norm(v - b @ (b.T @ v)) < tol ** 0.5))
    return (np.column_stack(columns) if columns else np.zeros((n_latent, 0))), sources


def reduced_encoder(columns: np.ndarray, n_latent: int) -> np.ndarray:
    """``(d, d)`` encoder in reduced coordinates: ``latent = encoder @ x_red``.

    The inverse of the found columns completed by the orthonormal complement
    of their span (the latents of the complement are not identified).
    """
    m = columns.shape[1]
    if m < n_latent:
        q = np.linalg.qr(np.column_stack([columns, np.eye(n_latent)]))[0] if m else np.eye(
            n_latent)
        complement = q[:, m:n_latent] if m else q
        columns = np.column_stack([columns, complement])
    return np.linalg.inv(columns)


def clamped_cells(latents: list[np.ndarray], tol: float = CLAMP_SD_TOL) -> np.ndarray:
    """``(K, d)`` bool: latent i is constant in environment k (SD within it over the pooled SD)."""
    sd = np.array([L.std(axis=0) for L in latents])
    n = np.array([L.shape[0] for L in latents], dtype=float)
    pooled = np.sqrt((n[:, None] * sd**2).sum(axis=0) / n.sum())
    return sd <= tol * np.where(pooled > 0, pooled, 1.0)


def changed_cells(latents: list[np.ndarray], clamped: np.ndarray, reference: int,
                  tol: float = CLAMP_SD_TOL) -> np.ndarray:
    """``(K, d)`` bool: latent i's mechanism in k differs from the reference's.

    Changed where the latent is clamped in one of the two environments and
    free in the other, or clamped in both at different values (means apart
    by more than ``tol`` of its pooled SD). Free in both: not read (False),
    since the free latents' weights are not identified.
    """
    means = np.array([L.mean(axis=0) for L in latents])
    sd = np.sqrt(np.mean([L.var(axis=0) for L in latents], axis=0))
    sd = np.where(sd > 0, sd, 1.0)
    out = clamped != clamped[reference]
    both = clamped & clamped[reference]
    out |= both & (np.abs(means - means[reference]) > tol * sd)
    out[reference] = False
    return out


def regime_message(clamped: np.ndarray, n_identified: int, n_latent: int) -> str:
    """The verdict's sentence about clamped interventions and what the reading identifies."""
    parts = [f"environment {k}: latents {np.flatnonzero(row).tolist()}"
             for k, row in enumerate(clamped) if row.any()]
    return (
        "The environments look interventional with clamped multi-node interventions: "
        "every environment varies in fewer than all latent directions, as when "
        "interventions hold latents constant (clamped, in the fitted latents' labels: "
        + "; ".join(parts) + "). CREATOR's clamped reading "
        f"(used for this fit) identifies {n_identified} of the {n_latent} latents from the "
        "directions each environment varies in, up to scale and shift; it identifies no "
        "edge: with one free latent per environment the within-environment covariances "
        "carry none and the environment means carry only sums of parent weights, so the "
        "graph is left empty (this reading reads no edge from environments with several "
        "free latents either). Pooled ICA (FastICA on all rows together, each environment "
        "not centred) can also fit these latents, the clamping making their pooled "
        "distributions far from Gaussian; it identifies no graph either. A method built "
        "for clamped multi-node interventions that reads the graph (Multi-Node-CRL, Bing "
        "et al. 2024) is not part of this package."
    )
