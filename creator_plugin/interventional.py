"""Interventional workloads: the data models of the field's linear CRL methods.

CREATOR's own workload (:func:`creator_plugin.simulate`) changes every edge
weight and every noise law across environments. The interventional methods
of the literature (LinCD, Squires et al. 2023; LSCALE-I and UMNI-CRL,
Varici et al.) assume something else: an **observational** environment plus
environments in which only the **intervened** nodes change. The generators
here produce that kind of data with the same ground truth as
:func:`creator_plugin.simulate` (a :class:`creator_plugin.simulation.Simulation`),
so every benchmarked method can run on every workload.

The model in every environment ``k`` is ``y = W_k^T y + Omega_k z`` (row
form ``Y = Z Omega_k (I - W_k)^{-1}``), ``x = H y`` with ``H`` of standard
normal entries, as in :func:`creator_plugin.simulate`. Environment 0 is
observational: ``W_0 = A * M`` with ``|M|`` uniform in ``[0.5, 1.5]`` and a
random sign, noise scales uniform in ``[0.5, 1.5]``. An intervention on node
``i`` changes column ``i`` of ``W`` (its incoming edges) and ``Omega[i, i]``,
nothing else:

* **hard**: the incoming edges are removed and the noise scale is redrawn
  uniform in ``[1.5, 2.5]`` (a perfect, "stochastic hard" intervention);
* **soft**: the incoming weights are redrawn (same law as ``W_0``) and the
  noise scale is redrawn uniform in ``[1.5, 2.5]``.

Noise: ``"gaussian"`` (every method's identifiability then rests on the
interventions alone) or any law of
:data:`creator_plugin.simulation.NOISE_DISTRIBUTIONS` (e.g. ``"laplace"``),
standardised to mean 0 and variance 1, the same law for every node and
environment.

The intervention targets are recorded in ``params["targets"]``: one list of
nodes per environment (``[]`` for the observational one).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ._random import as_generator
from ._simdata import NOISE_DISTRIBUTIONS, Simulation, check_simulation_size

__all__ = [
    "INTERVENTIONAL_FAMILIES",
    "family_multi_node",
    "family_single_node_hard",
    "family_single_node_hard_laplace",
    "family_single_node_soft",
    "simulate_multi_node",
    "simulate_single_node",
]

_HARD_SCALE = (1.5, 2.5)


def _check(n_latent, n_environments, n_samples, n_features, noise, intervention):
    d, K = int(n_latent), int(n_environments)
    if d < 1:
        raise ValueError(f"n_latent must be >= 1, got {n_latent!r}.")
    if K < 2:
        raise ValueError(f"n_environments must be >= 2 (one observational, at least one "
                         f"interventional), got {n_environments!r}.")
    p = d if n_features is None else int(n_features)
    if p < d:
        raise ValueError(f"n_features={p} must be >= n_latent={d}.")
    check_simulation_size("the interventional simulation", d, K, n_samples, p)
    sizes = [int(n_samples)] * K if np.isscalar(n_samples) else [int(s) for s in n_samples]
    if len(sizes) != K or min(sizes) < 2:
        raise ValueError(f"n_samples must be an int >= 2 or one such int per environment, "
                         f"got {n_samples!r}.")
    if noise != "gaussian" and noise not in NOISE_DISTRIBUTIONS:
        raise ValueError(f"noise must be 'gaussian' or one of {sorted(NOISE_DISTRIBUTIONS)}, "
                         f"got {noise!r}.")
    if intervention not in ("hard", "soft"):
        raise ValueError(f"intervention must be 'hard' or 'soft', got {intervention!r}.")
    return d, K, sizes, p


def _base(rng, d, edge_prob):
    perm = rng.permutation(d)
    upper = np.triu(rng.random((d, d)) < edge_prob, k=1).astype(int)
    A = np.zeros((d, d), dtype=int)
    A[np.ix_(perm, perm)] = upper
    return A, [int(v) for v in perm]


def _weights(rng, A):
    d = A.shape[0]
    return A * rng.uniform(0.5, 1.5, (d, d)) * rng.choice([-1.0, 1.0], (d, d))


def _intervene(rng, A, W0, om0, targets, intervention):
    W, om = W0.copy(), om0.copy()
    for i in targets:
        if intervention == "hard":
            W[:, i] = 0.0
        else:
            W[:, i] = _weights(rng, A)[:, i]
        om[i] = rng.uniform(*_HARD_SCALE)
    return W, om


def _draw_noise(rng, noise, n, d):
    if noise == "gaussian":
        return rng.standard_normal((n, d))
    Z = np.column_stack([NOISE_DISTRIBUTIONS[noise](rng, n) for _ in range(d)])
    return (Z - Z.mean(axis=0)) / Z.std(axis=0)


def _build(rng, A, order, env_targets, sizes, p, noise, intervention, params):
    d = A.shape[0]
    W0 = _weights(rng, A)
    om0 = rng.uniform(0.5, 1.5, d)
    H = rng.standard_normal((p, d))
    W, Om, Y, Z, X = [], [], [], [], []
    for targets, n in zip(env_targets, sizes):
        Wk, omk = _intervene(rng, A, W0, om0, targets, intervention)
        Zk = _draw_noise(rng, noise, n, d)
        Yk = Zk @ np.diag(omk) @ np.linalg.inv(np.eye(d) - Wk)
        W.append(Wk)
        Om.append(np.diag(omk))
        Z.append(Zk)
        Y.append(Yk)
        X.append(Yk @ H.T)
    laws = [[noise] * d for _ in env_targets]
    params = {**params, "targets": [list(map(int, t)) for t in env_targets]}
    return Simulation(X, A, W, Om, H, Y, Z, order, laws, ["uniform_signed"] * len(X), params)


def simulate_single_node(
    n_latent: int = 5,
    n_environments: int | None = None,
    n_samples: int | list[int] = 2000,
    *,
    n_features: int | None = None,
    random_state=None,
    intervention: str = "hard",
    noise: str = "gaussian",
    edge_prob: float = 0.5,
) -> Simulation:
    """Observational environment plus one single-node intervention per latent.

    The data model of LinCD and LSCALE-I (module docstring): environment 0
    is observational, environment ``k >= 1`` intervenes on one node; the
    targets are a random permutation of the nodes (every node is intervened
    on once when ``n_environments = n_latent + 1``; with more environments
    the permutation repeats, with fewer some nodes are never intervened on).

    Parameters
    ----------
    n_latent : int, default=5
        d.
    n_environments : int, optional
        K, including the observational one (default ``n_latent + 1``).
    n_samples : int or list of int, default=2000
        Rows per environment.
    n_features : int, optional
        p (default d); must be >= d.
    random_state : int, Generator or None
    intervention : {"hard", "soft"}, default="hard"
    noise : str, default="gaussian"
        ``"gaussian"`` or a law of :data:`creator_plugin.simulation.NOISE_DISTRIBUTIONS`.
    edge_prob : float, default=0.5
        Erdos-Renyi edge probability.

    Returns
    -------
    Simulation
        ``params["targets"][k]`` lists the nodes intervened on in environment k.
    """
    K_in = int(n_latent) + 1 if n_environments is None else n_environments
    d, K, sizes, p = _check(n_latent, K_in, n_samples, n_features, noise, intervention)
    rng = as_generator(random_state)
    A, order = _base(rng, d, edge_prob)
    perm = rng.permutation(d)
    env_targets = [[]] + [[int(perm[(k - 1) % d])] for k in range(1, K)]
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  intervention=intervention, noise=noise, edge_prob=edge_prob,
                  model="single_node")
    return _build(rng, A, order, env_targets, sizes, p, noise, intervention, params)


def simulate_multi_node(
    n_latent: int = 5,
    n_environments: int | None = None,
    n_samples: int | list[int] = 2000,
    *,
    n_features: int | None = None,
    random_state=None,
    intervention: str = "hard",
    noise: str = "laplace",
    edge_prob: float = 0.5,
    target_prob: float = 0.5,
) -> Simulation:
    """Observational environment plus unknown multi-node interventions.

    The data model of UMNI-CRL (module docstring): environment ``k >= 1``
    intervenes on a random set of nodes, each node with probability
    ``target_prob``; the sets are redrawn until the first ``n_latent``
    interventional environments' target indicators form an invertible
    ``d x d`` matrix (UMNI-CRL's condition: the interventions are
    "linearly independent").

    Parameters
    ----------
    n_latent : int, default=5
    n_environments : int, optional
        K, including the observational one (default ``n_latent + 1``).
    n_samples : int or list of int, default=2000
    n_features : int, optional
    random_state : int, Generator or None
    intervention : {"hard", "soft"}, default="hard"
    noise : str, default="laplace"
    edge_prob : float, default=0.5
    target_prob : float, default=0.5
        Probability that a node is a target of an environment, in (0, 1].

    Returns
    -------
    Simulation
    """
    K_in = int(n_latent) + 1 if n_environments is None else n_environments
    d, K, sizes, p = _check(n_latent, K_in, n_samples, n_features, noise, intervention)
    if not 0.0 < float(target_prob) <= 1.0:
        raise ValueError(f"target_prob must be in (0, 1], got {target_prob!r}.")
    rng = as_generator(random_state)
    A, order = _base(rng, d, edge_prob)
    m = min(d, K - 1)
    for _ in range(1000):
        T = rng.random((K - 1, d)) < target_prob
        T[T.sum(axis=1) == 0, rng.integers(d)] = True
        if np.linalg.matrix_rank(T[:m].astype(float)) == m:
            break
    env_targets = [[]] + [np.flatnonzero(row).tolist() for row in T]
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  intervention=intervention, noise=noise, edge_prob=edge_prob,
                  target_prob=target_prob, model="multi_node")
    return _build(rng, A, order, env_targets, sizes, p, noise, intervention, params)


# ---------------------------------------------------------------------------
# The same data models as named workload families of the zoo
# (:data:`creator_plugin.simulation.FAMILIES`), with the zoo's signature
# ``fn(n_latent, n_environments, n_samples, *, n_features=None,
# random_state=None)``; :mod:`creator_plugin.simulation` lists them in its
# read-only FAMILIES (this module builds on :mod:`creator_plugin._simdata`
# only, so the import runs one way).
# ---------------------------------------------------------------------------


def _as_family(sim: Simulation, family: str) -> Simulation:
    sim.params = {**sim.params, "family": family, "measurement_noise": 0.0}
    return sim


def family_single_node_hard(n_latent=5, n_environments=None, n_samples=1000, *, n_features=None,
                            random_state=None) -> Simulation:
    """Observational environment plus hard single-node interventions, Gaussian noise.

    :func:`simulate_single_node` with ``intervention="hard"``,
    ``noise="gaussian"``: environment 0 observational, environment ``k >= 1``
    removes the incoming edges of one node and redraws its noise scale
    (``U(1.5, 2.5)``); the targets are a random permutation of the nodes,
    so the default ``n_environments = n_latent + 1`` intervenes on every
    node once. The data model of LinCD and LSCALE-I. Outside CREATOR's assumptions
    (Gaussian noise; only the intervened node changes between environments).
    """
    return _as_family(simulate_single_node(
        n_latent, n_environments, n_samples, n_features=n_features, random_state=random_state,
        intervention="hard", noise="gaussian"), "single_node_hard")


def family_single_node_hard_laplace(n_latent=5, n_environments=None, n_samples=1000, *,
                                    n_features=None, random_state=None) -> Simulation:
    """As ``single_node_hard``, with Laplace noise (standardised) at every node."""
    return _as_family(simulate_single_node(
        n_latent, n_environments, n_samples, n_features=n_features, random_state=random_state,
        intervention="hard", noise="laplace"), "single_node_hard_laplace")


def family_single_node_soft(n_latent=5, n_environments=None, n_samples=1000, *, n_features=None,
                            random_state=None) -> Simulation:
    """Observational environment plus soft single-node interventions, Laplace noise.

    :func:`simulate_single_node` with ``intervention="soft"``,
    ``noise="laplace"``: an intervention redraws the intervened node's
    incoming weights (``+-U(0.5, 1.5)``) and its noise scale (``U(1.5, 2.5)``).
    The data model of LSCALE-I (soft).
    """
    return _as_family(simulate_single_node(
        n_latent, n_environments, n_samples, n_features=n_features, random_state=random_state,
        intervention="soft", noise="laplace"), "single_node_soft")


def family_multi_node(n_latent=5, n_environments=None, n_samples=1000, *, n_features=None,
                      random_state=None) -> Simulation:
    """Observational environment plus unknown hard multi-node interventions, Laplace noise.

    :func:`simulate_multi_node` with ``intervention="hard"``,
    ``noise="laplace"``, ``target_prob=0.5``: environment ``k >= 1``
    intervenes on a random set of nodes (linearly independent target sets).
    The data model of UMNI-CRL.
    """
    return _as_family(simulate_multi_node(
        n_latent, n_environments, n_samples, n_features=n_features, random_state=random_state,
        intervention="hard", noise="laplace"), "multi_node")


#: The interventional families: name -> generator (also in
#: :data:`creator_plugin.simulation.FAMILIES` and ``FLAG_FAMILIES``; read-only).
INTERVENTIONAL_FAMILIES = MappingProxyType({
    "single_node_hard": family_single_node_hard,
    "single_node_hard_laplace": family_single_node_hard_laplace,
    "single_node_soft": family_single_node_soft,
    "multi_node": family_multi_node,
})
