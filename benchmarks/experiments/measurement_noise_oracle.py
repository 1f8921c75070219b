"""Where the measurement noise costs accuracy: the pruning fed raw, corrected or clean moments.

For tuning seeds of the family ``measured`` (package simulator, where the clean data
``Y H^T`` are known), the ordering stage runs on the noisy data; the pruning then reads
the second moments of the reduced data (a) as they are (the fit's default), (b) minus the
estimated noise (``measurement_noise="auto"``), (c) of the clean data projected the same
way (an oracle), each with the canonical form and noise maps recomputed from the same
moments. The graphs are scored against the truth with the default fit's latents (the
positions are the same). Usage: python measurement_noise_oracle.py 0 30 (tuning seeds only).
"""
import sys
import warnings

import numpy as np

from creator_plugin import metrics
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays, order_stage
from creator_plugin._validation import check_environments
from creator_plugin.measurement_noise import (
    corrected_ordering,
    corrected_pruning_moments,
    estimate_measurement_noise,
)
from creator_plugin.pruning import default_threshold, prune
from creator_plugin.simulation import simulate_family


class _Fixed:
    """A MeasurementNoise stand-in whose signal grams are given."""

    def __init__(self, grams):
        self.grams = grams

    def signal_grams(self, _):
        return self.grams


def adjacency(stage, noise, K):
    X_red = stage.reduced
    order = stage.ordering if noise is None else corrected_ordering(stage.ordering, X_red, noise)
    grams = [x.T @ x for x in X_red] if noise is None else noise.signal_grams(None)
    _, tested, _, _ = corrected_pruning_moments(grams, [len(x) for x in X_red], order.alphas,
                                                order.noise_maps)
    return prune(tested, rule="residual", threshold=default_threshold("residual", K))[0]


warnings.simplefilter("ignore")
seeds = range(int(sys.argv[1]), int(sys.argv[2]))
assert seeds.stop <= 100
tot = np.zeros(4)
for seed in seeds:
    sim = simulate_family("measured", 5, 5, 1000, random_state=seed)
    X = check_environments(sim.X, n_latent=5)
    cfg = FitConfig(5)
    r = fit_arrays(X, cfg, random_state=seed)
    stage = order_stage(X, cfg, seed)
    red = stage.reduction
    est = estimate_measurement_noise(X, list(stage.reduced), red)
    P = red.projection / red.scale[:, None]
    clean = [(Y @ sim.H.T - (Y @ sim.H.T).mean(0)) @ P for Y in sim.Y]
    variants = [None, _Fixed(est.signal_grams([x.T @ x for x in stage.reduced])),
                _Fixed([c.T @ c for c in clean])]
    shd = [metrics.evaluate(sim.adjacency, sim.Y, r.adjacency, r.latents)["shd"]]
    shd += [metrics.evaluate(sim.adjacency, sim.Y, adjacency(stage, v, 5), r.latents)["shd"]
            for v in variants]
    tot += shd
    print(seed, shd, flush=True)
n = len(seeds)
print("mean SHD: fit", tot[0] / n, "raw moments", tot[1] / n, "corrected", tot[2] / n,
      "clean oracle", tot[3] / n)
