"""What every simulator of the package returns, and the size check each runs first.

:class:`Simulation` (the data and its ground truth), the noise laws the
generators share and the memory check that refuses a simulation larger than
the machine before anything is drawn. The simulators
(:mod:`creator_plugin.simulation`, :mod:`creator_plugin.interventional`,
:mod:`creator_plugin.field_generators`) build on this module, so that
:mod:`creator_plugin.simulation` can list all of their families without an
import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import check_memory

__all__ = ["NOISE_DISTRIBUTIONS", "Simulation", "check_simulation_size", "simulation_bytes"]

# Non-Gaussian noise laws (standardised to mean 0, variance 1 after drawing).
NOISE_DISTRIBUTIONS = {
    "laplace": lambda rng, n: rng.laplace(0.0, 1.0, n),
    "uniform": lambda rng, n: rng.uniform(-1.0, 1.0, n),
    "exponential": lambda rng, n: rng.exponential(1.0, n),
    "gumbel": lambda rng, n: rng.gumbel(0.0, 1.0, n),
    "beta": lambda rng, n: rng.beta(0.5, 0.5, n),
    "chi2_1": lambda rng, n: rng.chisquare(1, n),
    "gamma3": lambda rng, n: rng.gamma(3.0, 1.0, n),
    "student_t5": lambda rng, n: rng.standard_t(5, n),
    "lognormal": lambda rng, n: rng.lognormal(0.0, 0.5, n),
    "bimodal": lambda rng, n: rng.normal(0, 0.3, n) + rng.choice([-1.0, 1.0], n),
}


@dataclass
class Simulation:
    """Simulated data and its ground truth.

    Attributes
    ----------
    X : list of ndarray (n, p)
        Observations per environment.
    adjacency : ndarray (d, d) of int
        True DAG, ``[i, j] == 1`` iff latent i -> latent j.
    W : list of ndarray (d, d)
        Per-environment weights (same convention).
    Omega : list of ndarray (d, d)
        Per-environment diagonal noise scales.
    H : ndarray (p, d)
        Mixing matrix, ``x = H y``.
    Y : list of ndarray (n, d)
        True latent features.
    Z : list of ndarray (n, d)
        Standardised exogenous noise, ``y = W^T y + Omega z``.
    causal_order : list of int
        A topological order of the true DAG.
    noise_laws : list of list of str
        ``noise_laws[k][i]``: law of noise i in environment k.
    weight_laws : list of str
        Law used for each environment's weight matrix.
    params : dict
        The arguments of :func:`simulate`.
    """

    X: list[np.ndarray]
    adjacency: np.ndarray
    W: list[np.ndarray]
    Omega: list[np.ndarray]
    H: np.ndarray
    Y: list[np.ndarray]
    Z: list[np.ndarray]
    causal_order: list[int]
    noise_laws: list[list[str]]
    weight_laws: list[str]
    params: dict = field(default_factory=dict)

    def stacked(self) -> tuple[np.ndarray, np.ndarray]:
        """One ``(sum n_k, p)`` array plus the environment label of each row."""
        labels = np.concatenate([np.full(x.shape[0], k) for k, x in enumerate(self.X)])
        return np.vstack(self.X), labels


def simulation_bytes(n_latent: int, n_environments: int, n_samples: int,
                     n_features: int) -> int:
    """Bytes a simulation of ``n_environments`` x ``n_samples`` rows holds at its peak.

    Per environment W_k, Omega_k and (I - W_k)^{-1} (d x d), Y_k, Z_k and X_k
    (rows x (2d + p)) and one environment's temporaries, plus H (p x d), the
    graph's draws and about 1 KiB of Python objects per environment.
    """
    d, K, n, p = n_latent, n_environments, n_samples, n_features
    return 8 * (d * d * (3 + 3 * K) + p * d + K * n * (2 * d + p) + n * (d + p)) + 1024 * K


def check_simulation_size(call: str, n_latent: int, n_environments: int, n_samples,
                          n_features: int) -> None:
    """Refuse a simulation larger than the physical memory before drawing anything.

    ``n_samples`` is an int or a list (its mean size per environment is
    used); the message names the argument to lower.
    """
    shown = None
    if np.isscalar(n_samples):
        n = int(n_samples)
    else:
        sizes = [int(v) for v in n_samples]
        n = -(-sum(sizes) // max(len(sizes), 1))
        shown = {"n_samples": f"n_samples of {sum(sizes)} rows in all"}
    check_memory(call, simulation_bytes,
                 {"n_latent": n_latent, "n_environments": n_environments, "n_samples": n,
                  "n_features": n_features},
                 {"n_latent": 1, "n_environments": 2, "n_samples": 2, "n_features": n_latent},
                 shown)
