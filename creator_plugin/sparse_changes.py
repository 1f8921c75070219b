"""Mechanism changes against a reference environment, and the route for sparse changes.

CREATOR's pruning and disentanglement read how every latent's mechanism
varies across the environments (the paper's node-level non-degeneracy:
latent i's mechanism takes ``|pa(i)| + 1`` independent forms). Interventional
data break that: an intervention changes the mechanisms of a few latents in
one environment and leaves the others as they are in the reference
(observational) environment. This module reads which mechanisms change and,
when most do not, replaces steps 2 and 3 (docs/model.md, "Sparse changes").

**The change test** (:func:`mechanism_changes`). With the order found, the
feature of position i regressed on the earlier features in environment k
gives coefficients ``beta_ki`` and an innovation variance ``s2_ki``; both
are the same as the reference's exactly when latent i's incoming weights and
noise scale are (the comparison does not depend on how the entangled
features mix the earlier latents). Cell (k, i) is a change when the Wald
statistic of ``(beta_ki - beta_ri, log s2_ki - log s2_ri)``, with
heteroskedasticity-robust variances of the coefficients and the
kurtosis-corrected variance of ``log s2``, has a chi-square p-value below
:data:`CHANGE_LEVEL`. A cell whose innovation variance is below
:data:`CLAMP_LEVEL` times the latent's largest is *clamped* (the latent is
held constant there, a rank-deficient environment): clamped against free is
a change, clamped against clamped is not, and a clamped earlier latent
drops out of the regressions of that environment.

**The route** (:func:`takes_route`): when some cells change, fewer than
:data:`SPARSE_SHARE` of the non-reference cells, and every other
non-reference cell is *shown* unchanged: its equivalence ratio (the upper
confidence bounds, at level :data:`EQUIVALENCE_LEVEL`, of the change of its
conditional mean in innovation SDs and of its log innovation variance, over
the margins :data:`COEFFICIENT_MARGIN` and :data:`SCALE_MARGIN`) is below 1.
A cell that is neither a change nor shown unchanged (too few rows to tell)
keeps the fit on the paper's route: the lack of evidence of change is not
read as sparsity. The levels were set on tuning data (the peers table's
interventional generators, d = 5, seeds 50000 to 50019 and 310000 to
310019; the paper family at 300 and 500 rows, seeds 700000 to 700029) and
then frozen; the evaluation drew fresh seeds.

**The route check** (:func:`route_check`): the route's graph is right only
when the environments that change a latent remove its incoming edges; the
verdict raises the paper route's issues for mechanisms of few forms when the
data do not confirm this.

* Disentanglement (:func:`sparse_disentangling`), position by position: the
  latent of position i is its feature minus its regression on the earlier
  latents in the environments where it is clamped, or else in those where
  its mechanism changes (pooled), or else in the reference. Under a hard
  intervention (incoming edges removed) or a clamp in some environment this
  is the latent itself, up to scale; under a soft one it mixes in the
  latent's parents.
* Pruning (:func:`sparse_pruning`): edge ``j -> i`` when latent i's
  regression on the earlier latents, in the environments left, has a
  coefficient of j that differs from zero by more than :data:`EDGE_Z_LEVEL`
  standard errors (those of both regressions) and whose size, in the
  innovation's SDs per SD of latent j, exceeds the effect level. An edge
  whose weight is the same in every environment but one is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

__all__ = [
    "CHANGE_LEVEL", "CLAMP_LEVEL", "COEFFICIENT_MARGIN", "EDGE_EFFECT_LEVEL", "EDGE_Z_LEVEL",
    "EQUIVALENCE_LEVEL", "SCALE_MARGIN", "SPARSE_SHARE",
    "MechanismChanges", "mechanism_changes", "route_check", "sparse_disentangling",
    "sparse_pruning", "takes_route",
]

#: p-value below which a cell's mechanism differs from the reference's.
CHANGE_LEVEL = 1e-6
#: Innovation variance, as a share of the latent's largest over environments,
#: at or below which the latent counts as clamped in an environment.
CLAMP_LEVEL = 1e-3
#: Share of changed non-reference cells from which the fit no longer takes the route.
SPARSE_SHARE = 0.5
#: Equivalence margin of an incoming coefficient's change (innovation SDs per SD
#: of the regressor in the reference environment).
COEFFICIENT_MARGIN = 0.25
#: Equivalence margin of the change of the log innovation variance.
SCALE_MARGIN = 0.4
#: One-sided level of each equivalence bound.
EQUIVALENCE_LEVEL = 0.05
#: Standard errors an edge's coefficient must differ from zero by.
EDGE_Z_LEVEL = 4.0
#: Size an edge's coefficient must exceed (innovation SDs per SD of the parent).
EDGE_EFFECT_LEVEL = 0.15


@dataclass(frozen=True)
class MechanismChanges:
    """Which latents' mechanisms differ from the reference environment's.

    Attributes
    ----------
    reference : int
        The reference environment (a position in the fit's environments).
    changed : ndarray (K, d) of bool
        ``changed[k, i]``: latent i's mechanism (incoming weights or noise
        scale) in environment k differs from the reference's; the
        reference's row is all False.
    clamped : ndarray (K, d) of bool
        Latent i is held constant in environment k.
    statistic : ndarray (K, d)
        The Wald statistic of each cell (inf: clamped against free; 0 for
        the reference and for clamped against clamped).
    dof : ndarray (K, d) of int
        Its degrees of freedom.
    p_value : ndarray (K, d)
    share : float
        Share of the non-reference cells that changed (0 for one environment).
    bound : ndarray (K, d)
        The cell's equivalence ratio: the largest, over its incoming
        coefficients and its log innovation variance, of the one-sided
        upper confidence bound (level :data:`EQUIVALENCE_LEVEL`) of the
        change's size over its margin (:data:`COEFFICIENT_MARGIN`,
        :data:`SCALE_MARGIN`); below 1, the data show that the mechanism did
        not change by more than the margins (0 for the reference and for
        clamped against clamped, inf for clamped against free).
    """

    reference: int
    changed: np.ndarray
    clamped: np.ndarray
    statistic: np.ndarray
    dof: np.ndarray
    p_value: np.ndarray
    share: float
    bound: np.ndarray | None = None

    @property
    def unchanged(self) -> np.ndarray:
        """``(K, d)`` bool: cells shown not to change (equivalence ratio below 1)."""
        if self.bound is None:
            return np.zeros_like(self.changed)
        return (self.bound < 1.0) & ~self.changed

    @property
    def undecided(self) -> int:
        """Non-reference cells neither changed nor shown unchanged."""
        rest = np.delete(~self.changed & ~self.unchanged, self.reference, axis=0)
        return int(rest.sum())

    @property
    def sparse(self) -> bool:
        """Some cells change, fewer than :data:`SPARSE_SHARE` of the non-reference ones,
        and every other non-reference cell is shown unchanged (its equivalence ratio
        below 1): positive evidence of sparsity, not the lack of evidence of change."""
        return (bool(self.changed.any()) and self.share < SPARSE_SHARE
                and self.bound is not None and self.undecided == 0)

    def to_dict(self) -> dict:
        """Plain-Python form (``diagnostics_["mechanism_changes"]``)."""
        return {
            "reference": self.reference, "changed": self.changed.tolist(),
            "clamped": self.clamped.tolist(),
            "statistic": np.where(np.isfinite(self.statistic), self.statistic, -1.0).tolist(),
            "dof": self.dof.tolist(), "p_value": self.p_value.tolist(),
            "share": self.share, "sparse": self.sparse, "level": CHANGE_LEVEL,
            "share_level": SPARSE_SHARE, "clamp_level": CLAMP_LEVEL,
            "equivalence": None if self.bound is None else np.where(
                np.isfinite(self.bound), self.bound, -1.0).tolist(),
            "undecided": self.undecided, "equivalence_level": EQUIVALENCE_LEVEL,
            "coefficient_margin": COEFFICIENT_MARGIN, "scale_margin": SCALE_MARGIN,
        }


def _ols(S: np.ndarray, y: int, cols: list[int]) -> tuple[np.ndarray, float]:
    """Coefficients and residual variance of column ``y`` on ``cols`` from a covariance."""
    if not cols:
        return np.zeros(0), float(S[y, y])
    b = np.linalg.lstsq(S[np.ix_(cols, cols)], S[cols, y], rcond=None)[0]
    return b, float(S[y, y] - S[cols, y] @ b)


def _robust(F: np.ndarray, y: int, cols: list[int], b: np.ndarray, s2: float):
    """Sandwich covariance of ``b`` and the variance of ``log s2`` (kurtosis-corrected)."""
    n = F.shape[0]
    X = F[:, cols]
    r = F[:, y] - X @ b
    if cols:
        bread = np.linalg.pinv(X.T @ X / n)
        Xr = X * r[:, None]
        V = bread @ (Xr.T @ Xr / n) @ bread / n
    else:
        V = np.zeros((0, 0))
    kurtosis = float(np.mean(r**4)) / max(s2, 1e-300) ** 2
    return V, max(kurtosis - 1.0, 1e-12) / n


def _ncx2_cdf(x: float, q: int, nc: float) -> float:
    """The noncentral chi-square CDF at ``x`` (``q`` degrees of freedom, ``nc >= 0``).

    SciPy's public scalar function ``special.chndtr`` (``special.chdtr`` at
    ``nc = 0``), about 50 times quicker per call than ``stats.ncx2.cdf``,
    whose per-call argument handling dominated :func:`_equivalence`'s root
    search at small d. Their values differ by at most about 1e-13 (SciPy 1.13).
    """
    if nc == 0:
        return float(special.chdtr(q, x))
    return float(special.chndtr(x, q, nc))


#: ``stats.norm.isf(EQUIVALENCE_LEVEL)``, the scale bound's z.
_EQUIVALENCE_Z = float(stats.norm.isf(EQUIVALENCE_LEVEL))


def _equivalence(wald: float, q: int, rows: float, dl: float, var_dl: float) -> float:
    """A cell's equivalence ratio (:class:`MechanismChanges`' ``bound``).

    Coefficients: the upper confidence bound ``lambda_U`` of the noncentrality
    of the Wald statistic ``wald`` (``q`` degrees of freedom; the ``lambda``
    with ``P(chi2_q(lambda) <= wald) = level``) per effective row
    ``rows = 1 / (1 / n_k + 1 / n_r)``: ``sqrt(lambda_U / rows)`` is the SD of
    the conditional mean's change in innovation SDs when the regressors have
    the same covariance in both environments. Scale: ``|dl| + z sd(dl)``.
    Each over its margin; neither depends on how the regressors mix the
    earlier latents.
    """
    ratio = (abs(dl) + _EQUIVALENCE_Z * np.sqrt(var_dl)) / SCALE_MARGIN
    if q and stats.chi2.cdf(wald, q) > EQUIVALENCE_LEVEL:  # so wald > 0 below
        hi = wald + 10.0 * np.sqrt(wald) + 50.0
        while _ncx2_cdf(wald, q, hi) > EQUIVALENCE_LEVEL:
            hi *= 2.0
        lam = optimize.brentq(lambda x: _ncx2_cdf(wald, q, x) - EQUIVALENCE_LEVEL,
                              0.0, hi, xtol=1e-6)
        ratio = max(ratio, float(np.sqrt(lam / rows)) / COEFFICIENT_MARGIN)
    return float(ratio)


def mechanism_changes(X_red: list[np.ndarray], alphas: np.ndarray,
                      reference: int = 0) -> MechanismChanges:
    """The change test of every (environment, latent) cell (module docstring).

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
        Centred reduced data of the K environments.
    alphas : ndarray (d, d)
        The ordering's directions, in the order found (column i: position i).
    reference : int, default=0
        The reference environment.

    Returns
    -------
    MechanismChanges
    """
    K, d = len(X_red), alphas.shape[1]
    F = [x @ alphas for x in X_red]
    S = [f.T @ f / f.shape[0] for f in F]
    clamped = np.zeros((K, d), dtype=bool)
    stat, dof = np.zeros((K, d)), np.ones((K, d), dtype=int)
    p, bound = np.ones((K, d)), np.zeros((K, d))
    for i in range(d):
        cols = [[j for j in range(i) if not clamped[k, j]] for k in range(K)]
        fits = [_ols(S[k], i, cols[k]) for k in range(K)]
        s2 = np.array([max(s, 0.0) for _, s in fits])
        clamped[:, i] = s2 <= CLAMP_LEVEL * s2.max()
        robust = [None if clamped[k, i] else _robust(F[k], i, cols[k], fits[k][0], s2[k])
                  for k in range(K)]
        r = reference
        for k in range(K):
            if k == r:
                continue
            if clamped[k, i] or clamped[r, i]:
                stat[k, i] = np.inf if clamped[k, i] != clamped[r, i] else 0.0
                p[k, i] = 0.0 if clamped[k, i] != clamped[r, i] else 1.0
                bound[k, i] = np.inf if clamped[k, i] != clamped[r, i] else 0.0
                continue
            common = [j for j in cols[k] if j in cols[r]]
            ik = [cols[k].index(j) for j in common]
            ir = [cols[r].index(j) for j in common]
            db = fits[k][0][ik] - fits[r][0][ir]
            V = robust[k][0][np.ix_(ik, ik)] + robust[r][0][np.ix_(ir, ir)]
            wald = float(db @ np.linalg.lstsq(V, db, rcond=None)[0]) if common else 0.0
            dl = np.log(s2[k]) - np.log(s2[r])
            stat[k, i] = wald + dl**2 / (robust[k][1] + robust[r][1])
            dof[k, i] = len(common) + 1
            p[k, i] = float(stats.chi2.sf(stat[k, i], dof[k, i]))
            rows = 1.0 / (1.0 / F[k].shape[0] + 1.0 / F[r].shape[0])
            bound[k, i] = _equivalence(wald, len(common), rows, dl, robust[k][1] + robust[r][1])
    changed = p < CHANGE_LEVEL
    changed[reference] = False
    share = float(np.delete(changed, reference, axis=0).mean()) if K > 1 else 0.0
    bound[reference] = 0.0
    return MechanismChanges(int(reference), changed, clamped, stat, dof, p, share, bound)


def takes_route(changes: MechanismChanges | None) -> bool:
    """Whether a fit replaces steps 2 and 3 by the sparse-change route."""
    return changes is not None and changes.sparse


def route_check(latents: list[np.ndarray], adjacency: np.ndarray,
                changes: MechanismChanges) -> dict:
    """Whether the data confirm what the route's graph rests on (module docstring).

    The route reads latent i from the environments that change it and the
    edges into it from the others; that is latent i itself only when those
    environments remove its incoming edges (a hard intervention). The data
    confirm it for a latent with parents on the route's graph when it is
    clamped in some environment, or when it changes in two or more
    environments and in each of them, alone, its regression on the earlier
    latents is shown to vanish (equivalence ratio below 1, as the change
    test's, against the zero mechanism). With one changing environment per
    latent a soft intervention (the incoming weights changed, not removed)
    fits the data as well, and the check fails.

    Parameters
    ----------
    latents : list of ndarray (n_k, d)
        The route's latents, in the order's positions.
    adjacency : ndarray (d, d)
        The route's graph (``[j, i]``: ``j -> i``).
    changes : MechanismChanges

    Returns
    -------
    dict
        ``passed`` (bool), ``unconfirmed`` (the positions not confirmed),
        ``ratios`` (per position, the largest equivalence ratio over its
        changing environments; None when not tested) and ``two_forms``
        (every latent changes in at most one environment: the change test
        reads at most two forms of every mechanism).
    """
    d = adjacency.shape[0]
    unconfirmed, ratios = [], [None] * d
    for i in range(d):
        envs = np.flatnonzero(changes.changed[:, i])
        if not envs.size or not adjacency[:, i].any() or changes.clamped[:, i].any():
            continue
        if envs.size < 2:
            unconfirmed.append(i)
            continue
        worst = 0.0
        for k in envs:
            Z = latents[k] - latents[k].mean(axis=0)
            S = Z.T @ Z / Z.shape[0]
            cols = list(range(i))
            b, s2 = _ols(S, i, cols)
            V, _ = _robust(Z, i, cols, b, max(s2, 1e-300))
            wald = float(b @ np.linalg.lstsq(V, b, rcond=None)[0])
            worst = max(worst, _equivalence(wald, i, float(Z.shape[0]), 0.0, 0.0))
        ratios[i] = worst
        if worst >= 1.0:
            unconfirmed.append(i)
    two_forms = bool((changes.changed.sum(axis=0) <= 1).all())
    return {"passed": not unconfirmed, "unconfirmed": unconfirmed, "ratios": ratios,
            "two_forms": two_forms}


def _groups(changes: MechanismChanges, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Environments whose regression defines latent i (module docstring), and the others."""
    K = changes.changed.shape[0]
    for mask in (changes.clamped[:, i], changes.changed[:, i]):
        if mask.any() and not mask.all():
            return np.flatnonzero(mask), np.flatnonzero(~mask)
    defining = np.zeros(K, dtype=bool)
    defining[changes.reference] = True
    return np.flatnonzero(defining), np.flatnonzero(~defining)


def _pooled(F: list[np.ndarray], envs: np.ndarray, y: np.ndarray, X: np.ndarray,
            varying: float = CLAMP_LEVEL):
    """Pooled regression of ``F_k @ y`` on ``F_k @ X`` over ``envs`` (each centred).

    Regressors that barely vary in these environments (variance at most
    ``varying`` times their variance over all environments) are left out
    (coefficient 0, infinite standard error). Returns the coefficients, their
    sandwich covariance, the residual variance and the regressors' SDs.
    """
    m = X.shape[1]
    rows_x = np.vstack([F[k] @ X for k in envs])
    rows_y = np.concatenate([F[k] @ y for k in envs])
    n = rows_x.shape[0]
    var_all = sum(np.sum((f @ X) ** 2, axis=0) for f in F) / sum(f.shape[0] for f in F)
    sd = np.sqrt(np.mean(rows_x**2, axis=0)) if m else np.zeros(0)
    keep = np.flatnonzero(sd**2 > varying * np.maximum(var_all, 1e-300))
    b = np.zeros(m)
    V = np.diag(np.full(m, np.inf))
    if keep.size:
        Xk = rows_x[:, keep]
        bread = np.linalg.pinv(Xk.T @ Xk / n)
        b[keep] = bread @ (Xk.T @ rows_y / n)
        r = rows_y - Xk @ b[keep]
        Xr = Xk * r[:, None]
        V[np.ix_(keep, keep)] = bread @ (Xr.T @ Xr / n) @ bread / n
    else:
        r = rows_y
    return b, V, float(np.mean(r**2)), sd


def sparse_disentangling(X_red: list[np.ndarray], alphas: np.ndarray,
                         changes: MechanismChanges) -> np.ndarray:
    """The disentangling matrix of the route, in the coordinates of ``X_red @ alphas``.

    Column i is position i's feature minus its pooled regression on the
    earlier latents in the environments that define it (module docstring),
    so the matrix is unit lower triangular in the order.

    Returns
    -------
    C : ndarray (d, d)
        ``latents_k = (X_red[k] @ alphas) @ C``.
    """
    d = alphas.shape[1]
    F = [x @ alphas for x in X_red]
    C = np.eye(d)
    for i in range(1, d):
        defining, _ = _groups(changes, i)
        gamma = _pooled(F, defining, C[:, i], C[:, :i])[0]
        C[:, i] = np.eye(d)[:, i] - C[:, :i] @ gamma
    return C


def sparse_pruning(X_red: list[np.ndarray], alphas: np.ndarray, C: np.ndarray,
                   changes: MechanismChanges,
                   effect_level: float = EDGE_EFFECT_LEVEL) -> tuple[np.ndarray, list[dict]]:
    """The route's edge decisions over the order's positions (module docstring).

    Parameters
    ----------
    X_red : list of ndarray (n_k, d)
    alphas : ndarray (d, d)
    C : ndarray (d, d)
        :func:`sparse_disentangling`'s matrix.
    changes : MechanismChanges
    effect_level : float, default=EDGE_EFFECT_LEVEL

    Returns
    -------
    adjacency : ndarray (d, d) of int
        ``[j, i] == 1`` iff ``j -> i``.
    decisions : list of dict
        Per pair: ``parent``, ``child``, ``statistic`` (the coefficient's size,
        innovation SDs per SD of the parent), ``threshold`` (the effect level),
        ``z`` (the coefficient over its standard error), ``z_level`` and
        ``edge``.
    """
    d = alphas.shape[1]
    F = [x @ alphas for x in X_red]
    adjacency = np.zeros((d, d), dtype=int)
    decisions = []
    for i in range(1, d):
        defining, rest = _groups(changes, i)
        z = np.zeros(i)
        effect = np.zeros(i)
        if rest.size:
            b_def, V_def, _, _ = _pooled(F, defining, C[:, i], C[:, :i])
            b, V, s2, sd = _pooled(F, rest, C[:, i], C[:, :i])
            se = np.sqrt(np.diag(V) + np.diag(V_def))
            with np.errstate(invalid="ignore", divide="ignore"):
                z = np.where(np.isfinite(se) & (se > 0), np.abs(b) / se, 0.0)
            effect = np.abs(b) * sd / np.sqrt(max(s2, 1e-300))
        for j in range(i - 1, -1, -1):
            edge = bool(z[j] > EDGE_Z_LEVEL and effect[j] > effect_level)
            adjacency[j, i] = int(edge)
            decisions.append({"parent": j, "child": i, "statistic": float(effect[j]),
                              "threshold": float(effect_level), "z": float(z[j]),
                              "z_level": EDGE_Z_LEVEL, "edge": edge})
    return adjacency, decisions
