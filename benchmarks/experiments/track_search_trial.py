"""Trial: search the per-environment source assignments of the consistency descent's minima.

Diagnosis (benchmarks/LOG.md, "Permuted noises in one environment at d = 10"
and "Tracks of sources across environments"): at d = 10 an ordering step can
extract, in one environment whose latents have variances orders of magnitude
above the others', another true noise than in the other environments. The
consistency score prefers the direction that extracts the same noise
everywhere, but no descent start reaches it: every single-environment ICA
candidate is too imprecise along that environment's loud directions, and the
descent keeps the assignment its start implies there.

This trial wraps ``ordering.consistency_descent``: for the ``top`` best minima
it tries, in every environment k and for every other ICA source c of k, the
descent with k's source held at c (every other environment held at the
minimum's closest source), then the free descent, and keeps the best result
when its score is lower than the minimum's; ``rounds`` repeats this on the
improved minima (a second environment may be permuted). The search is the
descent's own criterion; nothing else changes.

Usage (rows are appended)::

    python track_search_trial.py d10 FIRST COUNT OUT.jsonl [top] [rounds]
    python track_search_trial.py zoo FIRST COUNT OUT.jsonl [top] [rounds]
    python track_search_trial.py zoo-independent FIRST COUNT OUT.jsonl [top] [rounds]
    python track_search_trial.py d10-independent FIRST COUNT OUT.jsonl [top] [rounds] [keep]

``top`` 0 runs no search: only the rule for the joint re-estimation (``keep``,
the default; anything else turns it off): when the re-estimated direction's
closest ICA source differs from its start's in some environment and the start's
consistency score is lower, the start is kept.
"""
import json
import os
import sys
import time
import warnings

import numpy as np

import creator_plugin.ordering as ordmod
from creator_plugin import simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.independence import ica_consistency_scores
from creator_plugin.metrics import evaluate
from creator_plugin.simulation import simulate_family

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import independent_simulator  # noqa: E402

BAR = ["paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n"]
_orig_desc = ordmod.consistency_descent
_orig_joint = ordmod.joint_direction
CFG = {"top": 3, "rounds": 2, "on": True, "log": None, "iters": 30, "keep": True, "ica": None}


def held_descent(R_list, ica_dirs, starts, held, iters):
    """The descent's Gauss-Newton steps with every environment's ICA source held.

    starts (s, d); held (s, K) indices of the ICA direction per environment.
    Returns the directions (s, d) and the held scores (s,).
    """
    S = np.stack([R.T @ R / R.shape[0] for R in R_list])
    A = np.stack(ica_dirs)
    K, d, m = A.shape
    var = np.einsum("kic,kij,kjc->kc", A, S, A)
    Ut = np.einsum("kij,kjc->kci", S, A) / np.sqrt(np.maximum(var, 1e-300))[:, :, None]
    U = Ut[np.arange(K)[None, :], held]  # (s, K, d)
    ridge = 1e-9 * np.trace(S, axis1=1, axis2=2).sum() * np.eye(d)
    range_basis = np.linalg.eigh(S.sum(axis=0))[1][:, d - m:] if m < d else None

    def parts(a):
        Sa = np.einsum("kij,sj->ski", S, a)
        q = np.maximum(np.einsum("ski,si->sk", Sa, a), 1e-300)
        c2 = np.einsum("si,ski->sk", a, U) ** 2 / q
        return Sa, q, 1.0 - np.minimum(c2, 1.0)

    a = starts / np.linalg.norm(starts, axis=1, keepdims=True)
    Sa, q, f = parts(a)
    score = f.sum(axis=1)
    active = np.ones(a.shape[0], dtype=bool)
    for _ in range(iters):
        if not active.any():
            break
        w = 1.0 / q
        Q = np.tensordot(w, S, axes=(1, 0)) - np.swapaxes(U * w[:, :, None], 1, 2) @ U
        g = np.einsum("sij,sj->si", Q, a) - np.einsum("sk,ski->si", w * f, Sa)
        step = -ordmod._solve_each(Q + ridge, g)
        if range_basis is not None:
            step = (step @ range_basis) @ range_basis.T
        slope = np.sum(g * step, axis=1)
        t = np.ones(a.shape[0])
        accepted = np.zeros(a.shape[0], dtype=bool)
        new, new_score = a.copy(), score.copy()
        for _ in range(12):
            trial = a + t[:, None] * step
            trial /= np.linalg.norm(trial, axis=1, keepdims=True)
            ts = parts(trial)[2].sum(axis=1)
            ok = active & ~accepted & (ts <= score + 2e-4 * t * slope)
            new[ok], new_score[ok] = trial[ok], ts[ok]
            accepted |= ok
            if accepted[active].all():
                break
            t = np.where(accepted, t, t / 4)
        moved = np.abs(new - a).max(axis=1)
        a, score = new, new_score
        Sa, q, f = parts(a)
        active &= accepted & (moved >= 1e-8)
    return a, score


def closest_sources(R_list, ica_dirs, a):
    """(s, K): index of each environment's ICA direction closest to every direction."""
    out = []
    for R, A in zip(R_list, ica_dirs):
        sigma = R.T @ R / R.shape[0]
        cov = a @ sigma @ A
        va = np.einsum("si,ij,sj->s", a, sigma, a)
        vA = np.einsum("ic,ij,jc->c", A, sigma, A)
        out.append(np.argmax(cov ** 2 / np.maximum(np.outer(va, vA), 1e-300), axis=1))
    return np.stack(out, axis=1)


def joint_kept(R_list, w0, found, **kw):
    """The joint re-estimation, or its start when it changes the start's source somewhere
    and scores worse than it (with the step's ICA directions of the last descent)."""
    w, c2 = _orig_joint(R_list, w0, found, **kw)
    ica = CFG["ica"]
    if not (CFG["on"] and CFG["keep"]) or ica is None:
        return w, c2
    pair = np.stack([w0 / np.linalg.norm(w0), w])
    src = closest_sources(R_list, ica, pair)
    if (src[0] != src[1]).any():
        sc = ica_consistency_scores(R_list, pair.T, ica)
        if sc[0] < sc[1]:
            if CFG["log"] is not None:
                CFG["log"].append(("kept_start", float(sc[0]), float(sc[1])))
            return pair[0], 1.0
    return w, c2


def patched(R_list, ica_dirs, starts, **kw):
    CFG["ica"] = ica_dirs
    dirs, scores = _orig_desc(R_list, ica_dirs, starts, **kw)
    K, m = len(ica_dirs), ica_dirs[0].shape[1]
    if not CFG["on"] or m < 2:
        return dirs, scores
    dirs, scores = dirs.copy(), scores.copy()
    todo = list(np.argsort(scores, kind="stable")[: CFG["top"]])
    for _ in range(CFG["rounds"]):
        improved = []
        for c in todo:
            a = dirs[:, c]
            own = closest_sources(R_list, ica_dirs, a[None, :])[0]
            held, starts_h = [], []
            for k in range(K):
                for src in range(m):
                    if src != own[k]:
                        h = own.copy()
                        h[k] = src
                        held.append(h)
                        starts_h.append(a)
            ah, _ = held_descent(R_list, ica_dirs, np.array(starts_h), np.array(held),
                                 CFG["iters"])
            a2, s2 = _orig_desc(R_list, ica_dirs, ah.T, **kw)
            best = int(np.argmin(s2))
            if s2[best] < scores[c] - 1e-9:
                if CFG["log"] is not None:
                    CFG["log"].append((int(c), float(scores[c]), float(s2[best])))
                dirs[:, c], scores[c] = a2[:, best], s2[best]
                improved.append(c)
        todo = improved
        if not todo:
            break
    return dirs, scores


def main() -> None:
    ordmod.consistency_descent = patched
    ordmod.joint_direction = joint_kept
    warnings.simplefilter("ignore")
    mode, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if len(sys.argv) > 5:
        CFG["top"] = int(sys.argv[5])
    if len(sys.argv) > 6:
        CFG["rounds"] = int(sys.argv[6])
    if len(sys.argv) > 7:
        CFG["keep"] = sys.argv[7] == "keep"
    jobs = ([(None, s) for s in range(first, first + count)] if mode.startswith("d10") else
            [(f, s) for f in BAR for s in range(first, first + count)])
    with open(out, "a") as fh:
        for family, seed in jobs:
            Z = None
            if family is None and mode == "d10":
                d, sim = 10, simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
                X, A, Y, Z = sim.X, sim.adjacency, sim.Y, sim.Z
            elif family is None:
                d, sim = 10, independent_simulator.simulate("paper", 10, 10, 2000, seed=seed)
                X, A, Y = sim.X, sim.adjacency, sim.latents
            elif mode == "zoo":
                d, sim = 5, simulate_family(family, 5, 5, 1000, random_state=seed)
                X, A, Y, Z = sim.X, sim.adjacency, sim.Y, sim.Z
            else:
                d, sim = 5, independent_simulator.simulate(family, 5, 5, 1000, seed=seed)
                X, A, Y = sim.X, sim.adjacency, sim.latents
            rec = {"seed": seed, "family": family or mode, "top": CFG["top"],
                   "rounds": CFG["rounds"], "keep": CFG["keep"]}
            for on in (False, True):
                CFG["on"], CFG["log"] = on, []
                t0 = time.process_time()
                r = fit_arrays(X, FitConfig(d, quality=False, keep_features=True),
                               random_state=seed)
                cpu = time.process_time() - t0
                ev = evaluate(A, Y, r.adjacency, r.latents)
                row = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                       "locr2": round(float(ev["locr2"]), 4), "cpu": round(cpu, 3),
                       "repairs": sum(1 for e in CFG["log"] if e[0] != "kept_start"),
                       "kept_start": sum(1 for e in CFG["log"] if e[0] == "kept_start")}
                if Z is not None:
                    C = np.stack([np.abs(np.corrcoef(zh.T, zt.T)[:d, d:])
                                  for zh, zt in zip(r.ordering.noises, Z)]).mean(0)
                    row["ncm"] = round(float(C.max(1).min()), 4)
                rec["track" if on else "base"] = row
            fh.write(json.dumps(rec) + "\n")
            fh.flush()


if __name__ == "__main__":
    main()
