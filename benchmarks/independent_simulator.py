"""A simulator of CREATOR's workload written apart from the package.

It re-implements the data-generating process of the paper (Section
"Experiments" and its appendix "Other results": an Erdos-Renyi DAG, weights
W_k = adjacency * M_k with M_k drawn entrywise from one law of the paper's
table chosen per environment, non-Gaussian exogenous noise, x = H y) and the
workload families of the zoo from their descriptions only. It deliberately
does **not** import ``creator_plugin.simulation``: its own noise laws are
frozen ``scipy.stats`` distributions standardised with their *population*
mean and SD (the package standardises with the sample's), its DAG is drawn
over a random order with its own stream layout, and so on. Numbers measured
on it say how much of an accuracy result is specific to the package's own
simulator.

Usage::

    from independent_simulator import simulate
    data = simulate("paper", d=5, K=5, n=1000, seed=10000)
    data.X        # list of K arrays (n_k, p)
    data.adjacency, data.latents, data.order
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["FAMILIES", "IndependentData", "simulate"]


@dataclass
class IndependentData:
    X: list  # K arrays (n_k, p)
    adjacency: np.ndarray  # (d, d), [i, j] = 1 iff i -> j
    latents: list  # K arrays (n_k, d), the true y
    order: list  # a topological order
    family: str


def _weight_law(rng):
    """One law of the paper's weight table (Table 'Distributions and their parameters')."""
    table = [
        stats.laplace(0, 1), stats.expon(scale=1), stats.uniform(0, 1), stats.gumbel_r(0, 1),
        stats.beta(0.5, 0.5), stats.gamma(1, scale=1), stats.chi2(1), stats.chi2(3),
        stats.gamma(3, scale=1),
    ]
    return table[rng.integers(len(table))]


class _Bimodal:
    """+-1 with equal probability plus 0.3 N(0, 1)."""

    def rvs(self, size, random_state):
        return random_state.choice([-1.0, 1.0], size) + 0.3 * random_state.standard_normal(size)

    def mean(self):
        return 0.0

    def std(self):
        return float(np.sqrt(1 + 0.09))


class _Discrete:
    def __init__(self, values):
        self.values = np.asarray(values, float)

    def rvs(self, size, random_state):
        return random_state.choice(self.values, size)

    def mean(self):
        return float(self.values.mean())

    def std(self):
        return float(self.values.std())


def _paper_noises():
    return [stats.laplace(), stats.uniform(-1, 2), stats.expon(), stats.gumbel_r(),
            stats.chi2(1), stats.beta(0.5, 0.5), stats.gamma(2), _Bimodal()]


def _noises(family):
    if family == "heavy_tails":
        # t3 has finite variance (3), so population standardisation works
        return _paper_noises() + [stats.t(3), stats.t(4), stats.t(5)]
    if family == "near_gaussian":
        return [stats.gennorm(2.5), stats.t(10), stats.t(12), stats.t(20)]
    if family == "discrete_noise":
        return [stats.poisson(1), _Discrete([-1, 0, 1]), _Discrete([0, 1]),
                _Discrete([0, 1, 2, 5])]
    return _paper_noises()


#: Families and what they change relative to the paper's workload.
FAMILIES = {
    "paper": "paper's weight table; noise per (environment, node) from 8 laws; scales U(0.5, 2)",
    "heavy_tails": "paper + Student t with 3-5 degrees of freedom among the noise laws",
    "wide_scales": "paper with noise scales log-uniform on [0.25, 2] (ratios up to 8)",
    "signed_weights": "weights +-U(0.5, 1.5) redrawn per environment",
    "measured": "p = 4d measurements with 5% Gaussian measurement noise",
    "unequal_n": "environment sizes uniform on [0.3 n, 3 n]",
    "near_gaussian": "generalised normal (shape 2.5) or t with 10-20 degrees of freedom",
    "weak_weights": "paper with all weights times 0.1",
    "discrete_noise": "Poisson(1) or two- to four-valued noise",
}


def simulate(family: str, d: int = 5, K: int = 5, n: int = 1000, *, seed: int = 0,
             edge_prob: float = 0.5, p: int | None = None) -> IndependentData:
    """Draw one data set of ``family`` (a key of :data:`FAMILIES`)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}.")
    # separate streams per ingredient, so families share their graph and mixing
    ss = np.random.SeedSequence([seed, 26])
    g_rng, h_rng, e_rng = (np.random.default_rng(s) for s in ss.spawn(3))
    order = list(g_rng.permutation(d))
    A = np.zeros((d, d), dtype=int)
    for a in range(d):
        for b in range(a + 1, d):
            if g_rng.uniform() < edge_prob:
                A[order[a], order[b]] = 1
    if p is None:
        p = 4 * d if family == "measured" else d
    H = h_rng.normal(size=(p, d))
    if family == "unequal_n":
        sizes = e_rng.integers(int(0.3 * n), 3 * n + 1, size=K)
    else:
        sizes = np.full(K, n)
    laws = _noises(family)
    X, Y = [], []
    for k in range(K):
        if family == "signed_weights":
            M = e_rng.uniform(0.5, 1.5, (d, d)) * np.where(e_rng.uniform(size=(d, d)) < 0.5, -1, 1)
        else:
            M = _weight_law(e_rng).rvs(size=(d, d), random_state=e_rng)
        W = A * M * (0.1 if family == "weak_weights" else 1.0)
        if family == "wide_scales":
            scale = np.exp(e_rng.uniform(np.log(0.25), np.log(2.0), d))
        else:
            scale = e_rng.uniform(0.5, 2.0, d)
        Z = np.empty((sizes[k], d))
        for i in range(d):
            law = laws[e_rng.integers(len(laws))]
            Z[:, i] = (law.rvs(size=sizes[k], random_state=e_rng) - law.mean()) / law.std()
        # y_j = sum_i W[i, j] y_i + scale_j z_j, solved node by node in causal order
        Yk = np.zeros_like(Z)
        for j in order:
            Yk[:, j] = Yk @ W[:, j] + scale[j] * Z[:, j]
        Xk = Yk @ H.T
        if family == "measured":
            Xk = Xk + 0.05 * Xk.std(axis=0) * e_rng.standard_normal(Xk.shape)
        X.append(Xk)
        Y.append(Yk)
    return IndependentData(X, A, Y, [int(o) for o in order], family)
