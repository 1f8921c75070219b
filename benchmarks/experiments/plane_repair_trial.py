"""Trial: repair a source permuted in some environments between two adjacent positions.

Diagnosis (benchmarks/LOG.md, "Sources permuted in one environment at d = 10"):
an ordering step can extract, in one loud environment, the noise of the node
the next step extracts everywhere else (91016: positions 1 and 2 hold noises
3 and 7 in nine environments and 7 and 3 in environment 5). The search over
all directions cannot reach the consistent one from any start.

The two directions of adjacent positions i, i + 1 span a plane that contains
both nodes' noises (after the earlier positions are regressed out) whichever
of them each position extracts, and every later position's residual depends
on the plane only, not on the basis chosen in it. In the plane the search is
one-dimensional, so it can be exhaustive: in every environment, the plane's
residual (whitened) has two ICA sources (FastICA, log-cosh); the consistency
score of the direction at angle t, ``sum_k (1 - max_c corr^2)``, is evaluated
on a grid of angles and refined locally. When the best angle extracts another
source than position i's direction in some environment and scores lower,
position i takes the best direction and position i + 1 the plane's other
basis vector (its free part is fixed by the canonical form later). Pairs are
visited left to right, passes repeated until nothing changes (at most d).
Applied before the polish.

Tuning sets only::

    python plane_repair_trial.py zoo 0 30 OUT.jsonl
    python plane_repair_trial.py zoo-independent 0 30 OUT.jsonl
    python plane_repair_trial.py d10 91000 80 OUT.jsonl
    python plane_repair_trial.py d10 0 50 OUT.jsonl
    python plane_repair_trial.py one_gaussian 2000 100 OUT.jsonl
"""
import os
import sys

import numpy as np
from scipy import linalg, optimize

import creator_plugin.ordering as ordmod
from creator_plugin.independence import ica_consistency_sources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import cli  # noqa: E402

_polish = ordmod.polish_directions
CFG = {"minority": False, "search": "descent"}
GRID = np.linspace(0.0, np.pi, 361)[:-1]


def _plane(X_red, grams, alphas, i):
    """Per environment: the plane's residual data (n_k, 2) in the basis of positions i, i + 1,
    and its two ICA directions (2, 2) in that basis."""
    R_plane, ica_plane = [], []
    for x, S in zip(X_red, grams):
        n = x.shape[0]
        A = alphas[:, : i + 2]
        L = np.linalg.cholesky(A.T @ S @ A / n)
        T = linalg.solve_triangular(L, A.T, lower=True).T  # X @ T: orthonormal residuals
        u = x @ T[:, i: i + 2]
        M = L[i: i + 2, i: i + 2].T  # residual of X @ (a alpha_i + b alpha_i+1) = u @ M @ (a, b)
        W, _ = ordmod._fastica_logcosh(u.T, np.array([[1.0, 0.3], [-0.2, 1.0]]),
                                       tol=1e-6, max_iter=400)
        dirs = np.linalg.solve(M, W.T)
        R_plane.append(u @ M)
        ica_plane.append(dirs / np.linalg.norm(dirs, axis=0))
    return R_plane, ica_plane


def _grid_best(R_plane, ica_plane):
    """The grid's best angle of the plane (in the basis of the two positions), refined locally."""
    def score(t):
        t = np.atleast_1d(t)
        return ica_consistency_sources(R_plane, np.vstack([np.cos(t), np.sin(t)]), ica_plane)[0]
    s = score(GRID)
    j = int(np.argmin(s))
    h = GRID[1] - GRID[0]
    res = optimize.minimize_scalar(lambda t: score(t)[0], bounds=(GRID[j] - h, GRID[j] + h),
                                   method="bounded")
    t = float(res.x) if res.fun < s[j] else float(GRID[j])
    return np.array([[np.cos(t)], [np.sin(t)]])


def plane_repair(X_red, alphas):
    d = alphas.shape[1]
    K = len(X_red)
    alphas = np.array(alphas, dtype=float)
    grams = [x.T @ x for x in X_red]
    for _ in range(d):
        changed = False
        for i in range(d - 1):
            R_plane, ica_plane = _plane(X_red, grams, alphas, i)
            current = np.array([[1.0], [0.0]])
            if CFG["search"] == "grid":
                dirs = _grid_best(R_plane, ica_plane)
                scores = ica_consistency_sources(R_plane, dirs, ica_plane)[0]
            else:
                starts = np.hstack([current] + ica_plane)
                dirs, scores = ordmod.consistency_descent(
                    R_plane, ica_plane, starts, max_iter=ordmod.DESCENT_MAX_ITER,
                    tol=ordmod.DESCENT_TOL)
            cur_score, cur_src = ica_consistency_sources(R_plane, current, ica_plane)
            _, src = ica_consistency_sources(R_plane, dirs, ica_plane)
            differ = (src != cur_src[0]).sum(axis=1)
            limit = K / 2 if CFG["minority"] else K + 1
            ok = (differ > 0) & (differ < limit) & (scores < cur_score[0] - 1e-9)
            if ok.any():
                c = int(np.flatnonzero(ok)[np.argmin(scores[ok])])
                a, b = alphas[:, i].copy(), alphas[:, i + 1].copy()
                v = dirs[:, c]
                alphas[:, i] = v[0] * a + v[1] * b
                alphas[:, i + 1] = -v[1] * a + v[0] * b
                alphas[:, i: i + 2] /= np.linalg.norm(alphas[:, i: i + 2], axis=0)
                changed = True
        if not changed:
            break
    return alphas


def repaired_polish(X_red, alphas, **kw):
    return _polish(X_red, plane_repair(X_red, alphas), **kw)


def _use(fn, minority=False, search="descent"):
    def setup():
        ordmod.polish_directions = fn
        CFG["minority"], CFG["search"] = minority, search
    return setup


def main() -> None:
    cli({
        "default": _use(_polish),
        "grid": _use(repaired_polish, False, "grid"),
        "grid_minority": _use(repaired_polish, True, "grid"),
        "descent": _use(repaired_polish, False),
        "descent_minority": _use(repaired_polish, True)},
        _use(_polish))


if __name__ == "__main__":
    main()
