"""Trial: weight the ICA-consistency score's environments by their row counts.

The score sums ``1 - max corr^2`` over environments with equal weights; an
environment of 300 rows has a noisier ICA than one of 3000. Variant ``n``:
weights ``c_k = K n_k / sum(n)`` (sum K; exactly 1 when every environment has
the same size, so only fits with unequal sizes can change); variant ``sqrt``:
``c_k`` proportional to ``sqrt(n_k)``, also summing to K. Applied to the
candidates' scores and to the consistency descent (experiment-only patch; the
package is unchanged). Tuning seeds only.

    python benchmarks/experiments/env_weights_trial.py VARIANT SIM FIRST LAST OUT
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import zoo  # noqa: E402

from creator_plugin import CREATOR, independence, ordering  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402

VARIANT = sys.argv[1]


def env_weights(R_list):
    n = np.array([R.shape[0] for R in R_list], dtype=float)
    raw = n if VARIANT == "n" else np.sqrt(n)
    return len(n) * raw / raw.sum()


def weighted_scores(R_list, candidates, ica_dirs, *, rng=None, basis=None):
    c = env_weights(R_list)
    scores = np.zeros(candidates.shape[1])
    for ck, R, A in zip(c, R_list, ica_dirs):
        sigma = R.T @ R / R.shape[0]
        cov = candidates.T @ sigma @ A
        var_c = np.einsum("ic,ij,jc->c", candidates, sigma, candidates)
        var_a = np.einsum("ic,ij,jc->c", A, sigma, A)
        corr2 = cov**2 / np.maximum(np.outer(var_c, var_a), independence._EPS)
        scores += ck * (1.0 - np.minimum(corr2.max(axis=1), 1.0))
    return scores


def weighted_descent(R_list, ica_dirs, starts, *, max_iter=100, tol=1e-8):
    cw = env_weights(R_list)
    S = np.stack([R.T @ R / R.shape[0] for R in R_list])
    A = np.stack(ica_dirs)
    K, d, _ = A.shape
    var = np.einsum("kic,kij,kjc->kc", A, S, A)
    Ut = np.einsum("kij,kjc->kci", S, A) / np.sqrt(np.maximum(var, 1e-300))[:, :, None]
    env = np.arange(K)
    ridge = 1e-9 * np.trace(S, axis1=1, axis2=2).sum() * np.eye(d)
    m = Ut.shape[1]
    range_basis = np.linalg.eigh(S.sum(axis=0))[1][:, d - m:] if m < d else None

    def correlations(a):
        Sa = np.einsum("kij,sj->ski", S, a)
        q = np.maximum(np.einsum("ski,si->sk", Sa, a), 1e-300)
        products = np.einsum("si,kci->skc", a, Ut)
        return Sa, q, products**2 / q[:, :, None]

    def evaluate(a):
        Sa, q, c2 = correlations(a)
        return Sa, q, np.argmax(c2, axis=2), 1.0 - np.minimum(c2.max(axis=2), 1.0)

    a = (starts / np.linalg.norm(starts, axis=0)).T
    Sa, q, closest, f = evaluate(a)
    score_ = (f * cw).sum(axis=1)
    active = np.arange(a.shape[0])
    for _ in range(max_iter):
        if not active.size:
            break
        x, w = a[active], cw[None, :] / q[active]
        Uc = Ut[env[None, :], closest[active]]
        Q = np.tensordot(w, S, axes=(1, 0)) - np.swapaxes(Uc * w[:, :, None], 1, 2) @ Uc
        g = np.einsum("sij,sj->si", Q, x) - np.einsum("sk,ski->si", w * f[active], Sa[active])
        step = -ordering._solve_each(Q + ridge, g)
        if range_basis is not None:
            step = (step @ range_basis) @ range_basis.T
        slope = np.sum(g * step, axis=1)
        t = np.ones(active.size)
        accepted = np.zeros(active.size, dtype=bool)
        new, new_score = x.copy(), score_[active].copy()
        for _ in range(12):
            trial = x + t[:, None] * step
            trial /= np.linalg.norm(trial, axis=1, keepdims=True)
            ts = ((1.0 - np.minimum(correlations(trial)[2].max(axis=2), 1.0)) * cw).sum(axis=1)
            ok = ~accepted & (ts <= score_[active] + 2e-4 * t * slope)
            new[ok], new_score[ok] = trial[ok], ts[ok]
            accepted |= ok
            if accepted.all():
                break
            t = np.where(accepted, t, t / 4)
        moved = np.abs(new - x).max(axis=1)
        a[active], score_[active] = new, new_score
        Sa, q, closest, f = evaluate(a)
        active = active[accepted & (moved >= tol)]
    a *= np.sign(a[np.arange(a.shape[0]), np.argmax(np.abs(a), axis=1)])[:, None]
    return a.T.copy(), score_


if VARIANT != "off":
    independence.SCORERS["ica_consistency"] = weighted_scores

    ordering.consistency_descent = weighted_descent


def main():
    sim, first, last, out = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    fams = sys.argv[6].split(",") if len(sys.argv) > 6 else ["unequal_n"]
    with open(out, "a") as fh:
        for seed in range(first, last + 1):
            for fam in fams:
                X, A, Y = zoo.data_of(sim, fam, 5, 5, 1000, seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = CREATOR(5, random_state=seed).fit(X)
                s = score(A, Y, m.adjacency_matrix_, m.latents_, m.causal_order_)
                fh.write(json.dumps({"variant": VARIANT, "simulator": sim, "family": fam,
                                     "seed": seed, "shd": int(s["shd"]),
                                     "correct_order": bool(s["correct_order"]),
                                     "locr2": float(s["locr2"])}) + "\n")
                fh.flush()


if __name__ == "__main__":
    main()
