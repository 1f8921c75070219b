"""The field's own data generators, as workload families of the zoo.

The linear CRL methods of the literature are benchmarked by their authors on
generators of their own. This module draws what those generators draw --
graph law, weight ranges, noise scales, intervention kinds, strengths and
targets, mixing matrix -- so that every method of ``creator bench`` can run
on them. Nothing of the authors' code is used; the laws were read from it
and are checked against it by the moments and laws of the data
(``benchmarks/field_generators_validation.py``, results on the peers page).

Every generator takes ``noise="gaussian"`` (the authors' law) or
``"laplace"`` (the same variance, Laplace-distributed: the same design with
non-Gaussian noise) and returns a :class:`creator_plugin.simulation.Simulation`
(``x = H y``; ``y = W_k^T y + Omega_k z`` with ``z`` of unit variance;
``params["targets"][k]`` lists the nodes intervened on in environment k).

``lincd`` -- Squires, Seigal, Bhate & Uhler (ICML 2023), ``src/rand.py``
    ``rand_model`` with the experiment script's density 0.75: arcs ``i < j``
    each with probability 0.75 (node ``i``'s equation reads node ``j``, so
    ``j -> i``), weights uniform on ``+-[0.25, 1]``, latent precision
    ``B^T B`` with ``B = round(Omega^(1/2) (I - A), 3)`` and ``Omega^(1/2)``
    diagonal uniform on ``[2, 4]`` (noise SD ``1 / Omega^(1/2)``);
    environment ``k >= 1`` intervenes on node ``k - 1`` (hard: its row of
    ``B`` becomes ``round(U(6, 8), 2)`` on the diagonal); the encoder ``H``
    of the paper is uniform on ``[-2, 2]`` (d x p), each row divided by its
    entry of largest modulus, and the mixing is its pseudo-inverse.
``lscale_i`` -- Varici, Acartuerk, Shanmugam, Kumar & Tajer (JMLR 2025),
    ``LSCALE-I/l_scale_i_test.py`` with ``scm/linear.py``: arcs ``i -> j``
    for ``i < j`` with probability 0.5, weights ``+-U(0.5, 1.5)``, noise
    variances ``U(0.5, 1.5)``; environment ``k >= 1`` intervenes on node
    ``k - 1``, hard (incoming edges removed) with the noise variance
    multiplied by 5; mixing ``utils.generate_mixing``: the first d columns of
    a Haar-random orthogonal p x p matrix times a d x d matrix uniform on
    ``[-0.5, 0.5]`` (redrawn until its singular values' ratio is >= 0.1),
    each column divided by its largest modulus.
``umni_crl`` -- Varici, Acartuerk, Shanmugam & Tajer (NeurIPS 2024),
    ``UMNI-CRL/umni_crl_test.py``: the latent model and mixing of
    ``lscale_i``; environment ``j >= 1`` intervenes on the nodes of column
    ``j - 1`` of ``D = I | triu(U <= 0.5)`` with its columns randomly
    permuted (unknown multi-node targets, linearly independent); soft (the
    script's default): the incoming weights are halved and the noise
    variance multiplied by 0.25.
``multi_node_crl`` -- Bing, Ninad, Wahl & Runge (CLeaR 2024),
    ``multi_node_crl/data/saved_scms.py`` (``rand_d_*``) with
    ``utils/data_gen_utils.py``: arcs from lower to higher nodes with
    probability 0.75, weights uniform on ``[0.1, 1]``, noise SD 0.1; K = d
    environments, none observational, environment k clamps every node but
    ``d - 1 - k`` to the constant 1 (do-interventions on d - 1 nodes);
    square mixing (p = d) ``x = z L`` with ``L`` uniform on ``[0, 1)`` and its
    diagonal replaced by its rows' absolute sums.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
from scipy.stats import ortho_group

from ._random import as_generator
from ._simdata import Simulation

__all__ = [
    "FIELD_GENERATORS",
    "NOISES",
    "simulate_lincd",
    "simulate_lscale_i",
    "simulate_multi_node_crl",
    "simulate_umni_crl",
]

NOISES = ("gaussian", "laplace")


def _check(n_latent, n_environments, n_samples, n_features, noise, *, default_K, default_p,
           min_K=2):
    d = int(n_latent)
    if d < 1:
        raise ValueError(f"n_latent must be >= 1, got {n_latent!r}.")
    K = default_K if n_environments is None else int(n_environments)
    if K < min_K:
        raise ValueError(f"n_environments must be >= {min_K}, got {n_environments!r}.")
    sizes = [int(n_samples)] * K if np.isscalar(n_samples) else [int(s) for s in n_samples]
    if len(sizes) != K or min(sizes) < 2:
        raise ValueError(f"n_samples must be an int >= 2 or one such int per environment, "
                         f"got {n_samples!r}.")
    p = default_p if n_features is None else int(n_features)
    if p < d:
        raise ValueError(f"n_features={p} must be >= n_latent={d}.")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}.")
    return d, K, sizes, p


def _noise(rng, noise, n, d):
    """Unit-variance noise: standard normal, or Laplace with scale 1/sqrt(2)."""
    if noise == "gaussian":
        return rng.standard_normal((n, d))
    return rng.laplace(0.0, 1.0 / np.sqrt(2.0), (n, d))


def _latents(rng, noise, W, om, n):
    d = W.shape[0]
    Z = _noise(rng, noise, n, d)
    return Z, (Z * om) @ np.linalg.inv(np.eye(d) - W)


def _order(A):
    d = A.shape[0]
    rest, order = list(range(d)), []
    while rest:
        j = next(i for i in rest if not A[rest, i].any())
        order.append(j)
        rest.remove(j)
    return order


def _generate_mixing(rng, p, d):
    """Haar-orthogonal column space times a well-conditioned square mixing, max-modulus 1."""
    Q = ortho_group.rvs(dim=p, random_state=rng) if p > 1 else np.ones((1, 1))
    R = rng.random((d, d)) - 0.5
    sv = np.linalg.svd(R, compute_uv=False)
    while sv[-1] / sv[0] < 0.1:
        R = rng.random((d, d)) - 0.5
        sv = np.linalg.svd(R, compute_uv=False)
    G = Q[:, :d] @ R
    return G / np.max(np.abs(G), axis=0)


def _simulation(env, A, H, order, noise, params):
    """``env``: list of (targets, W, om, Z, Y) per environment."""
    X = [Y @ H.T for *_, Y in env]
    d = A.shape[0]
    return Simulation(
        X, A, [e[1] for e in env], [np.diag(e[2]) for e in env], H, [e[4] for e in env],
        [e[3] for e in env], order, [[noise] * d for _ in env], ["field"] * len(env),
        {**params, "noise": noise, "targets": [sorted(map(int, e[0])) for e in env]},
    )


def simulate_lincd(n_latent=5, n_environments=None, n_samples=2000, *, n_features=None,
                   random_state=None, noise="gaussian") -> Simulation:
    """LinCD's generator (module docstring): one hard intervention per latent, in order.

    Parameters
    ----------
    n_latent : int, default=5
    n_environments : int, optional
        K including the observational environment (default ``n_latent + 1``;
        more environments repeat the targets in order).
    n_samples : int or list of int, default=2000
    n_features : int, optional
        p (default ``2 * n_latent``, the authors' experiment: 5 latents, 10
        measurements).
    random_state : int, Generator or None
    noise : {"gaussian", "laplace"}, default="gaussian"

    Returns
    -------
    Simulation
    """
    d, K, sizes, p = _check(n_latent, n_environments, n_samples, n_features, noise,
                            default_K=int(n_latent) + 1, default_p=2 * int(n_latent))
    rng = as_generator(random_state)
    arcs = np.triu(rng.random((d, d)) < 0.75, k=1)  # arc (i, j): node i reads node j
    amat = arcs * rng.uniform(0.25, 1.0, (d, d)) * rng.choice([-1.0, 1.0], (d, d))
    omega_half = rng.uniform(2.0, 4.0, d)
    B_obs = np.round(np.diag(omega_half) @ (np.eye(d) - amat), 3)
    enc = rng.uniform(-2.0, 2.0, (d, p))
    enc = enc / enc[np.arange(d), np.argmax(np.abs(enc), axis=1)][:, None]
    H = np.linalg.pinv(enc)
    A = arcs.T.astype(int)  # j -> i
    env = []
    for k, n in enumerate(sizes):
        B = B_obs.copy()
        targets = [] if k == 0 else [(k - 1) % d]
        for i in targets:
            B[i] = 0.0
            B[i, i] = np.round(rng.uniform(6.0, 8.0), 2)
        W = (-B / np.diag(B)[:, None]).T  # W[j, i]: weight of j -> i
        np.fill_diagonal(W, 0.0)
        om = 1.0 / np.diag(B)
        Z, Y = _latents(rng, noise, W, om, n)
        env.append((targets, W, om, Z, Y))
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  generator="lincd", intervention="hard")
    return _simulation(env, A, H, _order(A), noise, params)


def _linear_scm(rng, d):
    """``scm/linear.py``'s LinearSCM: arcs i -> j (i < j) w.p. 0.5, weights +-U(0.5, 1.5)."""
    A = np.triu(rng.random((d, d)) <= 0.5, k=1).astype(int)
    W0 = A * np.sign(rng.random((d, d)) - 0.5) * (0.5 + rng.random((d, d)))
    variances = rng.random(d) + 0.5
    return A, W0, variances


def _score_family(rng, d, sizes, p, noise, env_targets, intervention, var_change, A, W0,
                  variances, params):
    H = _generate_mixing(rng, p, d)
    env = []
    for targets, n in zip(env_targets, sizes):
        W, var = W0.copy(), variances.copy()
        for i in targets:
            W[:, i] = 0.0 if intervention == "hard" else 0.5 * W0[:, i]
            var[i] *= var_change
        Z, Y = _latents(rng, noise, W, np.sqrt(var), n)
        env.append((targets, W, np.sqrt(var), Z, Y))
    return _simulation(env, A, H, _order(A), noise, {**params, "intervention": intervention})


def simulate_lscale_i(n_latent=5, n_environments=None, n_samples=2000, *, n_features=None,
                      random_state=None, noise="gaussian",
                      intervention="hard") -> Simulation:
    """LSCALE-I's generator (module docstring): one intervention per latent, in order.

    Parameters
    ----------
    n_latent : int, default=5
    n_environments : int, optional
        K including the observational environment (default ``n_latent + 1``).
    n_samples : int or list of int, default=2000
    n_features : int, optional
        p (default ``2 * n_latent``).
    random_state : int, Generator or None
    noise : {"gaussian", "laplace"}, default="gaussian"
    intervention : {"hard", "soft"}, default="hard"
        The test script's default is hard; soft halves the incoming weights.
        Both multiply the target's noise variance by 5.

    Returns
    -------
    Simulation
    """
    d, K, sizes, p = _check(n_latent, n_environments, n_samples, n_features, noise,
                            default_K=int(n_latent) + 1, default_p=2 * int(n_latent))
    if intervention not in ("hard", "soft"):
        raise ValueError(f"intervention must be 'hard' or 'soft', got {intervention!r}.")
    rng = as_generator(random_state)
    A, W0, variances = _linear_scm(rng, d)
    env_targets = [[]] + [[(k - 1) % d] for k in range(1, K)]
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  generator="lscale_i")
    return _score_family(rng, d, sizes, p, noise, env_targets, intervention, 5.0, A, W0,
                         variances, params)


def simulate_umni_crl(n_latent=5, n_environments=None, n_samples=2000, *, n_features=None,
                      random_state=None, noise="gaussian",
                      intervention="soft") -> Simulation:
    """UMNI-CRL's generator (module docstring): unknown multi-node interventions.

    Parameters
    ----------
    n_latent : int, default=5
    n_environments : int, optional
        K including the observational environment (default ``n_latent + 1``;
        more environments repeat the target sets in order).
    n_samples : int or list of int, default=2000
    n_features : int, optional
        p (default ``2 * n_latent``).
    random_state : int, Generator or None
    noise : {"gaussian", "laplace"}, default="gaussian"
    intervention : {"soft", "hard"}, default="soft"
        The test script's default is soft (incoming weights halved); hard
        removes them. Both multiply the targets' noise variances by 0.25.

    Returns
    -------
    Simulation
        ``params["D"]``: the d x d target matrix (column j: targets of
        environment j + 1).
    """
    d, K, sizes, p = _check(n_latent, n_environments, n_samples, n_features, noise,
                            default_K=int(n_latent) + 1, default_p=2 * int(n_latent))
    if intervention not in ("hard", "soft"):
        raise ValueError(f"intervention must be 'hard' or 'soft', got {intervention!r}.")
    rng = as_generator(random_state)
    A, W0, variances = _linear_scm(rng, d)
    columns = rng.permutation(d)
    D = np.eye(d, dtype=bool) | np.triu(rng.random((d, d)) <= 0.5)
    D = D[:, columns]  # unit upper-triangular before the permutation: always invertible
    env_targets = [[]] + [np.flatnonzero(D[:, (k - 1) % d]).tolist() for k in range(1, K)]
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  generator="umni_crl", D=D.astype(int).tolist())
    return _score_family(rng, d, sizes, p, noise, env_targets, intervention, 0.25, A, W0,
                         variances, params)


def simulate_multi_node_crl(n_latent=5, n_environments=None, n_samples=2000, *,
                            n_features=None, random_state=None,
                            noise="gaussian") -> Simulation:
    """Multi-Node-CRL's generator (module docstring): d - 1 latents clamped per environment.

    Parameters
    ----------
    n_latent : int, default=5
    n_environments : int, optional
        K (default ``n_latent``; more environments repeat the pattern).
    n_samples : int or list of int, default=2000
    n_features : int, optional
        Must be ``n_latent`` (the authors' mixing is square).
    random_state : int, Generator or None
    noise : {"gaussian", "laplace"}, default="gaussian"

    Returns
    -------
    Simulation
        ``Omega[k]`` is 0 at the clamped nodes; ``params["clamp_value"]`` is 1.
    """
    d, K, sizes, p = _check(n_latent, n_environments, n_samples, n_features, noise,
                            default_K=int(n_latent), default_p=int(n_latent), min_K=1)
    if p != d:
        raise ValueError(f"n_features must be n_latent={d} (a square mixing), got {p}.")
    rng = as_generator(random_state)
    A = np.triu(rng.random((d, d)) < 0.75, k=1).astype(int)  # i -> j for i < j
    W0 = A * rng.uniform(0.1, 1.0, (d, d))
    L = rng.random((d, d))
    np.fill_diagonal(L, np.abs(L).sum(axis=1))
    H = L.T  # x = z L
    env = []
    for k, n in enumerate(sizes):
        free = d - 1 - (k % d)
        targets = [i for i in range(d) if i != free]
        Z = _noise(rng, noise, n, d)
        Y = np.ones((n, d))
        Y[:, free] = W0[:, free].sum() + 0.1 * Z[:, free]
        W = np.zeros((d, d))
        W[:, free] = W0[:, free]
        om = np.zeros(d)
        om[free] = 0.1
        env.append((targets, W, om, Z, Y))
    params = dict(n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
                  generator="multi_node_crl", intervention="do", clamp_value=1.0)
    return _simulation(env, A, H, _order(A), noise, params)


def _family(fn, name):
    def family(n_latent=5, n_environments=None, n_samples=1000, *, n_features=None,
               random_state=None, noise="gaussian") -> Simulation:
        sim = fn(n_latent, n_environments, n_samples, n_features=n_features,
                 random_state=random_state, noise=noise)
        sim.params = {**sim.params, "family": name, "measurement_noise": 0.0}
        return sim

    family.__name__ = f"family_{name}"
    family.__doc__ = (f"The zoo's ``{name}`` family: :func:`{fn.__name__}` with its defaults "
                      "(``noise`` 'gaussian' or 'laplace').")
    return family


#: The field's generators as families of :func:`creator_plugin.simulation.simulate_family`
#: (read-only: :data:`creator_plugin.simulation.FIELD_FAMILIES` names them).
FIELD_GENERATORS = MappingProxyType({
    "lincd": _family(simulate_lincd, "lincd"),
    "lscale_i": _family(simulate_lscale_i, "lscale_i"),
    "umni_crl": _family(simulate_umni_crl, "umni_crl"),
    "multi_node_crl": _family(simulate_multi_node_crl, "multi_node_crl"),
})
