"""Probe: the ordering's closest calls taken the other way, the models told apart by likelihood.

Question (tuning seeds only): where a step of the ordering chose between
re-estimated directions whose consistency scores were close, does taking the
runner-up give a better model, and does the penalised, profiled Gaussian
likelihood of the final models (``restart_probe.model_score``, unguarded)
tell which one is better? Usage::

    OMP_NUM_THREADS=1 python branch_probe.py run SET FIRST COUNT OUT.jsonl [BRANCHES]
    python branch_probe.py summary OUT.jsonl [...]

SET as in ``revise_default_check.py``, or ``d7``, ``d7-independent``, ``d15``, ``d20``
(:func:`data_sets`). For each data set: the default fit,
then for each of the BRANCHES (default 2) steps with the smallest ratio
between the runner-up's and the winner's refined score (ratio above
``1 + 1e-6``, so that the two are different directions), the same fit with
that step's runner-up taken (``topological_ordering(step_choices=...)``).
One row per data set: every fit's SHD, order, seconds, score and the step's
ratio.
"""
from __future__ import annotations

import json
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import zoo  # noqa: E402
from restart_probe import model_score  # noqa: E402
from revise_default_check import data_sets as check_sets  # noqa: E402

import creator_plugin._fit as _fit  # noqa: E402
from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402
from creator_plugin.revision import REVISION_PENALTY  # noqa: E402

ORIGINAL = _fit.topological_ordering


def data_sets(which: str, seed: int):
    """``revise_default_check``'s sets, and ``d7`` / ``d7-independent`` (d = K = 7,
    n = 1000: ``simulate(7, 7, 1000, setting=1)``, the independent ``paper``),
    ``d15`` (``simulate(15, 15, 2000, edge_prob=0.3)``), ``d15-independent``
    (the independent ``paper`` at d = K = 15, n = 2000) and ``d20``
    (``simulate(20, 20, 5000, edge_prob=0.2)``); ``dDkK`` (d latents, K
    environments, n = 2000: ``simulate(d, K, 2000)``) and ``dDkK-independent``."""
    if which == "d7":
        sim = simulate(7, 7, 1000, setting=1, random_state=seed)
        yield "package d7", 7, sim.X, sim.adjacency, sim.Y
    elif which == "d7-independent":
        yield ("independent d7 paper", 7, *zoo.data_of("independent", "paper", 7, 7, 1000, seed))
    elif which == "d15":
        sim = simulate(15, 15, 2000, edge_prob=0.3, random_state=seed)
        yield "package d15", 15, sim.X, sim.adjacency, sim.Y
    elif which == "d15-independent":
        yield ("independent d15 paper", 15,
               *zoo.data_of("independent", "paper", 15, 15, 2000, seed))
    elif re.fullmatch(r"d\d+k\d+(-independent)?", which):  # e.g. d10k5: d = 10, K = 5
        d, K = map(int, re.findall(r"\d+", which))
        n = 2000
        if which.endswith("-independent"):
            yield (f"independent d{d} K{K} paper", d,
                   *zoo.data_of("independent", "paper", d, K, n, seed))
        else:
            sim = simulate(d, K, n, random_state=seed)
            yield f"package d{d} K{K}", d, sim.X, sim.adjacency, sim.Y
    elif which == "d20":
        sim = simulate(20, 20, 5000, edge_prob=0.2, random_state=seed)
        yield "package d20", 20, sim.X, sim.adjacency, sim.Y
    else:
        yield from check_sets(which, seed)
MIN_RATIO = 1 + 1e-6


def fit(d: int, seed: int, X, A, Y, choices: dict | None = None,
        basis: np.ndarray | None = None) -> tuple[dict, object]:
    def forced(*args, **kwargs):  # order_stage passes its own step_choices (None)
        return ORIGINAL(*args, **{**kwargs, "step_choices": choices})

    _fit.topological_ordering = forced if choices else ORIGINAL
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.process_time()
            # the branches are this probe's own (the default's would branch again)
            model = CREATOR(d, random_state=seed, order_branches=0).fit(X)
            cpu = time.process_time() - start
            t0 = time.process_time()
            sc, guarded = model_score(model)
            score_cpu = time.process_time() - t0
    finally:
        _fit.topological_ordering = ORIGINAL
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
    return ({"shd": int(s["shd"]), "correct_order": bool(s["correct_order"]),
             "locr2": float(s["locr2"]), "flagged": bool(issues), "cpu": cpu,
             "score": sc, "guarded_score": guarded, "score_cpu": score_cpu,
             "edges": int(np.count_nonzero(model.adjacency_matrix_)),
             "order_score": order_score(model),
             "ica_calibrated": float(model.diagnostics_["quality"]["checks"]["ica_agreement"]
                                     ["calibrated"]),
             "ng_score": nongaussian_score(model, model.mixing_ if basis is None else basis)},
            model)


def entropy_spacing(z: np.ndarray) -> float:
    """Vasicek's m-spacing estimate of the differential entropy of a sample (m = sqrt(n))."""
    z = np.sort(np.asarray(z, dtype=float))
    n = z.size
    m = max(1, int(round(np.sqrt(n))))
    lo = z[np.maximum(np.arange(n) - m, 0)]
    hi = z[np.minimum(np.arange(n) + m, n - 1)]
    return float(np.mean(np.log(np.maximum(hi - lo, 1e-300) * n / (2 * m))))


def nongaussian_score(model, basis: np.ndarray) -> float:
    """``-2`` times the model's log-likelihood with each noise's entropy estimated, plus BIC.

    The features are ``components_ @ x``; per environment the SEM noises are
    the residuals of each feature on its parents (least squares); the
    log-likelihood of the data in the shared reduced space is ``sum_k n_k
    (log|det(components_ @ basis)| - sum_i H(e_ik))`` up to a constant
    common to all models of the same data (``basis`` is fixed per data set).
    """
    A = np.asarray(model.adjacency_matrix_) != 0
    logdet = np.linalg.slogdet(model.components_ @ basis)[1]
    total, n_log = 0.0, 0.0
    for L in model.latents_:
        L = L - L.mean(axis=0)
        n = L.shape[0]
        n_log += np.log(n)
        H = 0.0
        for i in range(A.shape[0]):
            pa = np.flatnonzero(A[:, i])
            e = L[:, i] - (L[:, pa] @ np.linalg.lstsq(L[:, pa], L[:, i], rcond=None)[0]
                           if pa.size else 0.0)
            H += entropy_spacing(e)
        total += n * (logdet - H)
    return float(-2 * total + REVISION_PENALTY * int(A.sum()) * n_log)


def order_score(model) -> float:
    """The ordering's own criterion summed over its steps (each step's chosen score)."""
    total = 0.0
    for st in model.diagnostics_["ordering"]:
        rs = st.get("refined_scores")
        total += float(rs[st["refined_chosen"]]) if rs else float(st["best_score"])
    return total


def close_calls(model) -> list[tuple[float, int]]:
    """``(ratio, step)`` of the steps with two distinct re-estimated directions, closest first."""
    out = []
    for st in model.diagnostics_["ordering"]:
        rs = np.sort(np.asarray(st.get("refined_scores") or [], dtype=float))
        if rs.size >= 2 and rs[0] > 0:
            above = rs[rs > rs[0] * MIN_RATIO]
            if above.size:
                out.append((float(above[0] / rs[0]), int(st["step"])))
    return sorted(out)


def run(which: str, first: int, count: int, out: str, branches: int = 2) -> None:
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            for cell, d, X, A, Y in data_sets(which, seed):
                base, model = fit(d, seed, X, A, Y)
                alts = []
                for ratio, step in close_calls(model)[:branches]:
                    # the rank of the first direction that differs from the winner
                    rs = np.sort(model.diagnostics_["ordering"][step]["refined_scores"])
                    rank = int(np.flatnonzero(rs > rs[0] * MIN_RATIO)[0])
                    row, _ = fit(d, seed, X, A, Y, {step: rank}, basis=model.mixing_)
                    alts.append({"step": step, "ratio": ratio, "rank": rank, **row})
                fh.write(json.dumps({"set": which, "cell": cell, "seed": seed,
                                     "base": base, "branches": alts}) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    for cell in sorted({r["cell"] for r in rows}):
        rs = [r for r in rows if r["cell"] == cell]
        base = np.array([r["base"]["shd"] for r in rs], float)
        print(f"## {cell}: {len(rs)} data sets; default mean SHD {base.mean():.3f}, "
              f"wrong orders {sum(not r['base']['correct_order'] for r in rs)}, "
              f"cpu {np.mean([r['base']['cpu'] for r in rs]):.2f} s")
        for b, key in ((1, "score"), (2, "score"), (2, "guarded_score")):
            for level in (1.05, 1.2, 1.5, 2.0, np.inf):
                pick = []
                extra = 0.0
                for r in rs:
                    fits = [r["base"]] + [a for a in r["branches"][:b] if a["ratio"] <= level]
                    extra += sum(a["cpu"] for a in fits[1:]) / r["base"]["cpu"]
                    pick.append(min(fits, key=lambda f: f[key]))
                shd = np.array([f["shd"] for f in pick], float)
                print(f"branches {b} by {key}, ratio <= {level}: mean SHD {shd.mean():.3f} "
                      f"(better {int(np.sum(shd < base))} / worse {int(np.sum(shd > base))}), "
                      f"wrong orders {sum(not f['correct_order'] for f in pick)}, "
                      f"extra fits {extra / len(rs):.2f}")
            oracle = np.array([min([r["base"]["shd"]] + [a["shd"] for a in r["branches"][:b]])
                               for r in rs], float)
            print(f"branches {b}, best by SHD (oracle): {oracle.mean():.3f}")
        print()


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
            int(sys.argv[6]) if len(sys.argv) > 6 else 2)
    else:
        summary(sys.argv[2:])
