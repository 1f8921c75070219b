"""Trial: correct the pruning step's covariances for measurement noise (family measured).

The noise variance of environment k is estimated as (trace S_k - trace(P S_k P')) / (p - d)
in standardised units; the noise maps, regressions and scales of the pruning step are
recomputed from the corrected covariances (fallback to the fit's graph when a corrected
covariance is not positive definite). Usage: python measurement_noise_correction.py measured 0 30
(tuning seeds only).
"""
import sys
import warnings

import numpy as np

from creator_plugin import metrics
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays, order_stage
from creator_plugin._validation import check_environments
from creator_plugin.ordering import _ordered_noise_maps
from creator_plugin.pruning import default_threshold, prune
from creator_plugin.simulation import simulate_family


def corrected_adjacency(X, stage, K):
    red, order = stage.reduction, stage.ordering
    proj = red.projection
    p, d = proj.shape
    U, _ = np.linalg.qr(proj)
    M = proj.T @ proj
    G, ns = [], []
    for k, x in enumerate(X):
        xs = (x - red.env_means[k]) / red.scale
        S = xs.T @ xs / len(x)
        s2 = (np.trace(S) - np.trace(U.T @ S @ U)) / (p - d) if p > d else 0.0
        xr = stage.reduced[k]
        G.append(xr.T @ xr - len(x) * s2 * M)
        ns.append(len(x))
    N = sum(ns)
    alphas = order.alphas
    T = _ordered_noise_maps(G, ns, alphas)
    fsd = np.sqrt(sum(np.diag(alphas.T @ g @ alphas) for g in G) / N)
    a = alphas / fsd
    B = np.stack([np.linalg.solve(a.T @ g @ a, a.T @ g @ t).T for g, t in zip(G, T)])
    zsd = np.sqrt(sum(np.diag(t.T @ g @ t) for g, t in zip(G, T)) / N)
    ss = np.zeros(d)
    for g in G:
        C = a.T @ g @ a
        ss[0] += C[0, 0]
        for j in range(1, d):
            ss[j] += C[j, j] - C[j, :j] @ np.linalg.solve(C[:j, :j], C[:j, j])
    innov = np.sqrt(ss / N)
    tested = B * innov[None, None, :] / zsd[None, :, None]
    return prune(tested, rule="residual", threshold=default_threshold("residual", K))[0]


warnings.simplefilter('ignore')
fam = sys.argv[1]
seeds = range(int(sys.argv[2]), int(sys.argv[3]))
tot = np.zeros(2)
for seed in seeds:
    sim = simulate_family(fam, 5, 5, 1000, random_state=seed)
    X = check_environments(sim.X, n_latent=5)
    cfg = FitConfig(5)
    r = fit_arrays(X, cfg, random_state=seed)
    stage = order_stage(X, cfg, seed)
    try:
        A2 = corrected_adjacency(X, stage, len(X))
    except np.linalg.LinAlgError:
        A2 = r.adjacency
        print('fallback')
    e1 = metrics.evaluate(sim.adjacency, sim.Y, r.adjacency, r.latents)['shd']
    e2 = metrics.evaluate(sim.adjacency, sim.Y, A2, r.latents)['shd']
    tot += [e1, e2]
    print(seed, e1, e2, flush=True)
print(fam, 'mean SHD default', tot[0]/len(seeds), 'corrected', tot[1]/len(seeds))
