"""Trial: the ICA-consistency score with environments weighted by their rows.

The score sums ``1 - max corr²`` over environments with equal weights, so an
environment of 300 rows, whose ICA directions are the least precise, counts
as much as one of 3000. This trial weights environment k by ``K n_k / sum n``
(equal sizes: every weight is exactly 1, so nothing changes) in the score of
the candidates, of the re-estimates and in the keep rule; the consistency
descent itself still minimises the unweighted sum, and its minima are scored
again with the weights. Tuning seeds only::

    python weighted_consistency_trial.py package 0 50 OUT.jsonl
    python weighted_consistency_trial.py independent 0 50 OUT.jsonl

One row per seed of the zoo's ``unequal_n`` family with both variants' SHD,
correct order and LocR².
"""
import json
import os
import sys
import warnings

import numpy as np

import creator_plugin.independence as indmod
import creator_plugin.ordering as ordmod
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.metrics import evaluate
from creator_plugin.simulation import simulate_family

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import independent_simulator  # noqa: E402

_sources = indmod.ica_consistency_sources
_descent = ordmod.consistency_descent


def row_weights(R_list) -> np.ndarray:
    """``K n_k / sum n``: exactly 1 for every environment when the sizes are equal."""
    n = np.array([R.shape[0] for R in R_list], dtype=float)
    return len(R_list) * n / n.sum()


def weighted(weights_of):
    """The score with environment k's term weighted by ``weights_of(R_list)[k]``,
    and the consistency descent whose minima are scored with it."""

    def sources_fn(R_list, candidates, ica_dirs):
        weights = weights_of(R_list)
        scores = np.zeros(candidates.shape[1])
        sources = np.zeros((candidates.shape[1], len(R_list)), dtype=int)
        for k, (R, A) in enumerate(zip(R_list, ica_dirs)):
            part, one = _sources([R], candidates, [A])
            sources[:, k] = one[:, 0]
            scores += weights[k] * part
        return scores, sources

    def descent_fn(R_list, ica_dirs, starts, **kw):
        directions, _ = _descent(R_list, ica_dirs, starts, **kw)
        return directions, sources_fn(R_list, directions, ica_dirs)[0]

    return sources_fn, descent_fn


def patch(weights_of=None) -> None:
    """Weight the score's environments by ``weights_of``; None restores the package's score."""
    sources_fn, descent_fn = (_sources, _descent) if weights_of is None else weighted(weights_of)
    indmod.ica_consistency_sources = sources_fn
    ordmod.ica_consistency_sources = sources_fn
    ordmod.consistency_descent = descent_fn


def main() -> None:
    warnings.simplefilter("ignore")
    simulator, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            if simulator == "package":
                sim = simulate_family("unequal_n", 5, 5, 1000, random_state=seed)
                X, A, Y = sim.X, sim.adjacency, sim.Y
            else:
                sim = independent_simulator.simulate("unequal_n", 5, 5, 1000, seed=seed)
                X, A, Y = sim.X, sim.adjacency, sim.latents
            rec = {"simulator": simulator, "family": "unequal_n", "seed": seed,
                   "sizes": [int(x.shape[0]) for x in X]}
            for name, weights_of in (("equal", None), ("weighted", row_weights)):
                patch(weights_of)
                r = fit_arrays(X, FitConfig(5, quality=False), random_state=seed)
                ev = evaluate(A, Y, r.adjacency, r.latents)
                rec[name] = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                             "locr2": round(float(ev["locr2"]), 4)}
            patch()
            fh.write(json.dumps(rec) + "\n")
            fh.flush()


if __name__ == "__main__":
    main()
