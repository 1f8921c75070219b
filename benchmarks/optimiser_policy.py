"""The hand-written optimisers against SciPy's public API, in one run: CPU time and agreement.

Each of the package's own numerical routines is timed against the public SciPy
call it stands for, on the problem the fit gives it at d = 5 and at d = 40
(K = d environments), one BLAS thread, CPU time (``time.process_time``),
alternating the two, the fastest of ``--repeats`` runs each:

* ``_bfgs.minimize_bfgs`` against ``scipy.optimize.minimize(method="BFGS")``:
  the ordering's polish (:func:`creator_plugin.joint_ica.polish_directions`,
  ``d^2`` variables) from the directions of an ordering without it, on
  ``simulate(d, K=d, n)``;
* ``_lapack.eigh_syevr`` against ``scipy.linalg.eigh``: FastICA's
  decorrelation of a ``d x d`` matrix, 2,000 calls.

(The L-BFGS-B driver of the factor fit, ``_lbfgsb.minimize_lbfgsb``, was
measured by this script at commit 942547a, 1.8 times as fast as ``minimize``
at d = 5; it drove SciPy's private routine and was replaced by ``minimize``,
which returns the same iterates.)

Usage::

    OMP_NUM_THREADS=1 python benchmarks/optimiser_policy.py \\
        --out benchmarks/results/scale/optimisers.csv
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import linalg, optimize

import creator_plugin.joint_ica as joint_ica
from creator_plugin._lapack import eigh_syevr
from creator_plugin.ordering import topological_ordering
from creator_plugin.preprocessing import reduce_environments
from creator_plugin.simulation import simulate


def scipy_bfgs(fun, x0, *, gtol, maxiter, hess_inv0=None):
    options = {"gtol": gtol, "maxiter": maxiter}
    if hess_inv0 is not None:
        options["hess_inv0"] = hess_inv0
    return optimize.minimize(fun, x0, jac=True, method="BFGS", options=options)


def _best(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def polish_case(d: int, n: int, repeats: int) -> dict:
    sim = simulate(d, d, n, edge_prob=min(0.5, 3.0 / d), random_state=1)
    X_red, _ = reduce_environments(sim.X, d, standardize=True, random_state=0)
    order = topological_ordering(X_red, random_state=0, polish=False, canonical=False,
                                 materialize=False)
    times, results = {}, {}
    for name, optimiser in (("own", joint_ica.minimize_bfgs), ("scipy", scipy_bfgs)):
        original = joint_ica.minimize_bfgs
        joint_ica.minimize_bfgs = optimiser
        try:
            times[name], results[name] = _best(
                lambda: joint_ica.polish_directions(X_red, order.alphas), repeats)
        finally:
            joint_ica.minimize_bfgs = original
    (own, info_own), (ref, info_ref) = results["own"], results["scipy"]
    return {"routine": "_bfgs.minimize_bfgs (polish)", "d": d, "n": n,
            "own_s": times["own"], "scipy_s": times["scipy"],
            "max_abs_difference": float(np.abs(own - ref).max()),
            "iterations_own": info_own["iterations"], "iterations_scipy": info_ref["iterations"]}


def eigh_case(d: int, repeats: int, calls: int = 2000) -> dict:
    rng = np.random.default_rng(d)
    mats = [(lambda a: a @ a.T)(rng.normal(size=(d, d))) for _ in range(calls)]
    t_own, own = _best(lambda: [eigh_syevr(m) for m in mats], repeats)
    t_ref, ref = _best(lambda: [linalg.eigh(m) for m in mats], repeats)
    diff = max(float(np.abs(a[0] - b[0]).max()) for a, b in zip(own, ref))
    return {"routine": "_lapack.eigh_syevr (decorrelation)", "d": d, "n": 0,
            "own_s": t_own, "scipy_s": t_ref, "max_abs_difference": diff}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=1000, help="rows per environment (polish)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rows = []
    for d in (5, 40):
        rows.append(eigh_case(d, args.repeats))
        rows.append(polish_case(d, args.n, 1 if d > 10 else args.repeats))
        print(rows[-2:], flush=True)
    df = pd.DataFrame(rows)
    df["speedup"] = df.scipy_s / df.own_s
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(args.out, index=False)
    print(df[["routine", "d", "own_s", "scipy_s", "speedup", "max_abs_difference"]]
          .to_string(index=False))


if __name__ == "__main__":
    main()
