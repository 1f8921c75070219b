"""Cache the default fits' d x d ingredients of the disentanglement.

Per seed: the entangled features (unit pooled SD, as the fit uses them), the
fitted adjacency and the pruned one (before the graph's refinements), the
true latents, graph, weights and noise scales, and the noise correspondence
(step of the order <-> true node, by mean per-environment |corr| of the
ordering's noises with the simulator's). Variants of the disentanglement are
then evaluated on these without refitting (``disentangle_precision.py``). Usage::

    python disentangle_precision_cache.py D N FIRST COUNT OUTDIR [FAMILY]

Without FAMILY: ``simulate(D, D, N, setting=1, edge_prob=0.5)``; with it:
``simulate_family(FAMILY, D, D, N)`` (the zoo's package simulator); with
``independent:FAMILY`` the independent simulator's family (it does not return
the noises, so ``noise_corr`` is all zeros and the noise correspondence is
unavailable).

The fit is ``CREATOR(D, quality=False, refine=RefineOptions(order_branches=0),
random_state=seed)``. Its reduction, ordering and pruning are recomputed with
the public steps they are made of (:func:`creator_plugin.preprocessing.reduce_environments`,
:func:`creator_plugin.ordering.topological_ordering`,
:func:`creator_plugin.pruning.prune_ordering`) from the same random state, and
checked against the fit (the same score at every step of the ordering, and
the fit's latents a linear map of the recomputed entangled features).
"""
import os
import sys
import warnings

import numpy as np

from creator_plugin import CREATOR, OrderingOptions, RefineOptions, simulate
from creator_plugin.metrics import evaluate
from creator_plugin.ordering import topological_ordering
from creator_plugin.preprocessing import reduce_environments
from creator_plugin.pruning import default_threshold, prune_ordering
from creator_plugin.simulation import simulate_family

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import independent_simulator  # noqa: E402

#: Relative tolerance of the check that the recomputed stages are the fit's.
CHECK_TOL = 1e-6


def stages(X: list[np.ndarray], d: int, seed: int):
    """The default fit's reduction, ordering and pruning, by the public steps."""
    rng = np.random.default_rng(seed)
    X_red, red = reduce_environments(X, d, standardize=True, random_state=rng)
    to_reduced = red.projection / red.scale[:, None]
    o = OrderingOptions()
    order = topological_ordering(
        X_red, scorer="ica_consistency", random_state=rng, ica_max_iter=o.ica_max_iter,
        ica_tol=o.ica_tol, ica_fun=o.ica_fun, scorer_options=dict(o.scorer_options or {}),
        n_reestimate=o.n_reestimate, reestimate_min_sources=o.reestimate_min_sources,
        polish=o.polish, canonical=True, materialize=False,
        reload=lambda k: (X[k] - red.env_means[k]) @ to_reduced)
    graph = prune_ordering(X_red, order, "residual", default_threshold("residual", len(X)),
                           paper_mode=False)
    entangled = [x @ graph.alphas for x in X_red]
    noises = [x @ m for x, m in zip(X_red, order.noise_maps)]
    return entangled, noises, graph.tested, graph.adjacency, order.steps


def check_same_fit(model: CREATOR, entangled: list[np.ndarray], steps: list[dict]) -> None:
    """Raise unless ``model`` took the recomputed ordering's steps and its latents are a
    linear map of the recomputed entangled features."""
    fitted = [s["best_score"] for s in model.diagnostics_["ordering"]]
    if not np.allclose(fitted, [s["best_score"] for s in steps], rtol=CHECK_TOL, atol=0):
        raise RuntimeError("the recomputed ordering is not the fit's")
    E = np.concatenate([e - e.mean(0) for e in entangled])
    L = np.concatenate([x - x.mean(0) for x in model.latents_])
    residual = np.linalg.norm(E @ np.linalg.lstsq(E, L, rcond=None)[0] - L) / np.linalg.norm(L)
    if residual > CHECK_TOL:
        raise RuntimeError(f"the fit's latents are not a linear map of the recomputed "
                           f"features (relative residual {residual:.2e})")


def main() -> None:
    d, n, first, count = map(int, sys.argv[1:5])
    outdir = sys.argv[5]
    os.makedirs(outdir, exist_ok=True)
    family = sys.argv[6] if len(sys.argv) > 6 else None
    tag = f"_{family.replace(':', '-')}" if family else ""
    for seed in range(first, first + count):
        if family and family.startswith("independent:"):
            sim = independent_simulator.simulate(family.split(":")[1], d, d, n, seed=seed)
            sim.Y, sim.W, sim.Omega, sim.Z = sim.latents, [np.zeros((d, d))], [np.zeros(d)], None
        elif family:
            sim = simulate_family(family, d, d, n, random_state=seed)
        else:
            sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, quality=False, refine=RefineOptions(order_branches=0),
                            random_state=seed).fit(sim.X)
            entangled, noises, tested, pruned, steps = stages(sim.X, d, seed)
        check_same_fit(model, entangled, steps)
        ev = evaluate(sim.adjacency, sim.Y, model.adjacency_matrix_, model.latents_)
        Cn = np.zeros((d, d)) if sim.Z is None else np.stack(
            [np.abs(np.corrcoef(zh.T, zt.T)[:d, d:])
             for zh, zt in zip(noises, sim.Z)]).mean(0)
        np.savez(f"{outdir}/d{d}{tag}_n{n}_s{seed}.npz",
                 ent=np.concatenate(entangled), sizes=[e.shape[0] for e in entangled],
                 adjacency=model.adjacency_matrix_, pruned=pruned,
                 true_adjacency=np.asarray(sim.adjacency), Y=np.concatenate(sim.Y),
                 W=np.stack(sim.W), Omega=np.stack(sim.Omega), noise_corr=Cn,
                 fit_shd=int(ev["shd"]), fit_locr2=float(ev["locr2"]),
                 fit_matching=np.asarray(ev["matching"]),
                 tested=tested)
        print(seed, int(ev["shd"]), round(float(ev["locr2"]), 4), flush=True)


if __name__ == "__main__":
    main()
