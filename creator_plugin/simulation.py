"""The paper's synthetic workload, with the full ground truth."""

from __future__ import annotations

import numbers
from types import MappingProxyType

import numpy as np
from scipy import stats

from ._random import as_generator
from ._simdata import NOISE_DISTRIBUTIONS, Simulation, check_simulation_size
from ._validation import check_memory
from .field_generators import FIELD_GENERATORS
from .interventional import INTERVENTIONAL_FAMILIES

__all__ = [
    "Simulation",
    "simulate",
    "simulate_dask",
    "WEIGHT_DISTRIBUTIONS",
    "NOISE_DISTRIBUTIONS",
    "FAMILIES",
    "FIELD_FAMILIES",
    "FLAG_FAMILIES",
    "simulate_family",
]

# The paper's Table "Distributions and their parameters" for the edge weights.
WEIGHT_DISTRIBUTIONS = {
    "laplace": lambda rng, size: rng.laplace(0.0, 1.0, size),
    "exponential": lambda rng, size: rng.exponential(1.0, size),
    "uniform": lambda rng, size: rng.uniform(0.0, 1.0, size),
    "gumbel": lambda rng, size: rng.gumbel(0.0, 1.0, size),
    "beta": lambda rng, size: rng.beta(0.5, 0.5, size),
    "gamma1": lambda rng, size: rng.gamma(1.0, 1.0, size),
    "chi2_1": lambda rng, size: rng.chisquare(1, size),
    "chi2_3": lambda rng, size: rng.chisquare(3, size),
    "gamma3": lambda rng, size: rng.gamma(3.0, 1.0, size),
}

def _standardise(e: np.ndarray) -> np.ndarray:
    return (e - e.mean()) / e.std()


def _whole(value, name: str, low: int) -> int:
    """``value`` as an int >= ``low``; a clear error for fractions, bools and text."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, float)) or (
            isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    if int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def _check_numbers(*, edge_prob=0.5, measurement_noise=0.0, weight_scale=1.0,
                   noise_shape=None, noise_scale_range=(0.5, 1.5)) -> None:
    """The generators' real-valued parameters: finite and in range, or a clear error."""
    def real(v, name):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number; got {v!r}.")
        return float(v)

    if not 0.0 <= real(edge_prob, "edge_prob") <= 1.0:
        raise ValueError(f"edge_prob must be in [0, 1]; got {edge_prob!r}.")
    if real(measurement_noise, "measurement_noise") < 0:
        raise ValueError(f"measurement_noise must be >= 0; got {measurement_noise!r}.")
    real(weight_scale, "weight_scale")
    if noise_shape is not None and real(noise_shape, "noise_shape") <= 0:
        raise ValueError(f"noise_shape must be None or > 0; got {noise_shape!r}.")
    bounds = tuple(noise_scale_range) if np.ndim(noise_scale_range) == 1 else ()
    if len(bounds) != 2 or not 0 < real(bounds[0], "noise_scale_range[0]") <= real(
            bounds[1], "noise_scale_range[1]"):
        raise ValueError(
            f"noise_scale_range must be two numbers 0 < low <= high; got {noise_scale_range!r}.")


def simulate(
    n_latent: int = 5,
    n_environments: int = 5,
    n_samples: int | list[int] = 1000,
    *,
    n_features: int | None = None,
    setting: int = 1,
    edge_prob: float = 0.5,
    weight_scale: float = 1.0,
    noise_shape: float | None = None,
    noise_scale_range: tuple[float, float] = (0.5, 1.5),
    measurement_noise: float = 0.0,
    mixing: str = "gaussian",
    indicators_per_latent: int = 3,
    random_state=None,
) -> Simulation:
    """Simulate the paper's linear latent SEM over K environments.

    Parameters
    ----------
    n_latent : int, default=5
        Number of latent nodes d.
    n_environments : int, default=5
        Number of environments K.
    n_samples : int or list of int, default=1000
        Rows per environment (a list gives each environment its own size).
    n_features : int, optional
        Observed dimension p (default: p = d); must be >= d.
    setting : {1, 2}, default=1
        Noise laws. 1: drawn independently for every (environment, node), so
        they differ across environments (CREATOR's setting). 2: one law per
        node, the same in every environment, distinct across nodes
        (LiNGCReL's assumption).
    edge_prob : float, default=0.5
        Erdos-Renyi edge probability between any two nodes (the DAG follows a
        random order; node labels are shuffled).
    weight_scale : float, default=1.0
        sigma: every weight matrix is multiplied by it (the paper's ablation: 0.005 ... 0.5).
    noise_shape : float, optional
        beta: if given, every noise is generalised normal with this shape
        (beta = 2 is Gaussian), overriding ``setting``'s laws.
    noise_scale_range : (float, float), default=(0.5, 1.5)
        The diagonal of every Omega_k is uniform in this range.
    measurement_noise : float, default=0.0
        SD of independent Gaussian noise added to every observed column,
        relative to that column's SD.
    mixing : {"gaussian", "pure"}, default="gaussian"
        The mixing matrix H. ``"gaussian"``: standard normal entries, so
        every measurement mixes all latents (the paper's workload).
        ``"pure"``: a pure measurement model, the assumption of latent-
        variable methods such as GIN: every measurement has exactly one
        latent parent, with loading ``+-U(0.5, 1.5)``, and latent ``l`` has
        ``indicators_per_latent`` of them (measurements ``l * m, ...,
        (l + 1) * m - 1`` for ``m = indicators_per_latent``), so ``p = d *
        m``. Pure indicators are exactly collinear unless
        ``measurement_noise > 0``.
    indicators_per_latent : int, default=3
        Measurements per latent with ``mixing="pure"`` (at least 1; GIN
        needs at least 2). Ignored with ``mixing="gaussian"``.
    random_state : int, Generator or None

    Returns
    -------
    Simulation

    Notes
    -----
    Weights: each ``W_k = A * M_k`` with ``M_k`` drawn entrywise from one law
    picked at random per environment from the paper's table (Laplace(0,1),
    Exponential(1), Uniform(0,1), Gumbel(0,1), Beta(0.5,0.5), Gamma(1,1),
    Chi2(1), Chi2(3), Gamma(3,1)). ``H`` has standard normal entries
    (``mixing="gaussian"``) or one non-zero entry per row (``"pure"``).
    """
    rng = as_generator(random_state)
    d, K, p, m, sizes = _simulation_shape(
        n_latent, n_environments, n_samples, n_features, setting, mixing,
        indicators_per_latent, edge_prob=edge_prob, measurement_noise=measurement_noise,
        weight_scale=weight_scale, noise_shape=noise_shape, noise_scale_range=noise_scale_range)

    perm = rng.permutation(d)
    upper = np.triu(rng.random((d, d)) < edge_prob, k=1).astype(int)
    A = np.zeros((d, d), dtype=int)
    A[np.ix_(perm, perm)] = upper  # node perm[a] -> perm[b] for a < b
    order = [int(v) for v in perm]

    law_names = list(NOISE_DISTRIBUTIONS)
    wnames = list(WEIGHT_DISTRIBUTIONS)
    if setting == 2:
        per_node = [law_names[i] for i in rng.permutation(len(law_names))[:d]]
        if d > len(law_names):
            per_node += [f"gennorm{1 + 0.25 * j}" for j in range(d - len(law_names))]
    W, Om, Y, Z, X, laws, wlaws = [], [], [], [], [], [], []
    H = rng.standard_normal((p, d)) if mixing == "gaussian" else _pure_mixing(rng, d, m)
    for k in range(K):
        wl = wnames[rng.integers(len(wnames))]
        wlaws.append(wl)
        Wk = A * WEIGHT_DISTRIBUTIONS[wl](rng, (d, d)) * weight_scale
        omega = np.diag(rng.uniform(*noise_scale_range, d))
        if noise_shape is not None:
            lk = [f"gennorm{noise_shape}"] * d
        elif setting == 1:
            lk = [law_names[j] for j in rng.integers(len(law_names), size=d)]
        else:
            lk = per_node
        Zk, Yk, Xk = _environment_data(rng, lk, sizes[k], omega, Wk, H, measurement_noise)
        W.append(Wk)
        Om.append(omega)
        Y.append(Yk)
        Z.append(Zk)
        X.append(Xk)
        laws.append(lk)
    params = dict(
        n_latent=d, n_environments=K, n_samples=sizes, n_features=p, setting=setting,
        edge_prob=edge_prob, weight_scale=weight_scale, noise_shape=noise_shape,
        noise_scale_range=noise_scale_range, measurement_noise=measurement_noise,
        mixing=mixing,
    )
    if mixing == "pure":
        params["indicators_per_latent"] = m
    return Simulation(X, A, W, Om, H, Y, Z, order, laws, wlaws, params)


def _simulation_shape(n_latent, n_environments, n_samples, n_features, setting, mixing,
                      indicators_per_latent, **numbers) -> tuple:
    """:func:`simulate`'s arguments checked: ``(d, K, p, m, sizes)`` (``m`` for ``"pure"``)."""
    d, K = _whole(n_latent, "n_latent", 1), _whole(n_environments, "n_environments", 1)
    _check_numbers(**numbers)
    m = None
    if mixing not in ("gaussian", "pure"):
        raise ValueError(f"mixing must be 'gaussian' or 'pure', got {mixing!r}.")
    if mixing == "pure":
        m = int(indicators_per_latent)
        if m < 1:
            raise ValueError(f"indicators_per_latent must be >= 1, got {indicators_per_latent!r}.")
        if n_features is not None and int(n_features) != d * m:
            raise ValueError(
                f"n_features={n_features} contradicts mixing='pure' with "
                f"indicators_per_latent={m}: p must be n_latent * indicators_per_latent = {d * m}."
            )
        p = d * m
    else:
        p = d if n_features is None else int(n_features)
    if p < d:
        raise ValueError(f"n_features={p} must be >= n_latent={d}.")
    if setting not in (1, 2):
        raise ValueError(f"setting must be 1 or 2, got {setting!r}.")
    check_simulation_size("simulate", d, K, n_samples, p)
    sizes = [int(n_samples)] * K if np.isscalar(n_samples) else [int(s) for s in n_samples]
    if len(sizes) != K:
        raise ValueError("n_samples as a list needs one entry per environment.")
    if min(sizes) < 2:
        raise ValueError(f"n_samples must be at least 2 in every environment; got {n_samples!r}.")
    return d, K, p, m, sizes


def _environment_data(rng: np.random.Generator, laws: list[str], n: int, omega: np.ndarray,
                      W: np.ndarray, H: np.ndarray, measurement_noise: float) -> tuple:
    """One environment's standardised noises, latents and measurements (``Z, Y, X``)."""
    d = W.shape[0]
    Zk = np.column_stack([_standardise(_draw(law, rng, n)) for law in laws])
    # y = W^T y + Omega z  <=>  row form Y = Z Omega (I - W)^{-1}
    Yk = Zk @ omega @ np.linalg.inv(np.eye(d) - W)
    Xk = Yk @ H.T
    if measurement_noise > 0:
        Xk = Xk + rng.standard_normal(Xk.shape) * measurement_noise * Xk.std(axis=0)
    return Zk, Yk, Xk


def _pure_mixing(rng: np.random.Generator, d: int, m: int) -> np.ndarray:
    """``(d * m, d)``: row ``j`` loads on latent ``j // m`` only, with ``+-U(0.5, 1.5)``."""
    H = np.zeros((d * m, d))
    rows = np.arange(d * m)
    H[rows, rows // m] = rng.uniform(0.5, 1.5, d * m) * rng.choice([-1.0, 1.0], d * m)
    return H


def simulate_dask(
    n_latent: int = 5,
    n_environments: int = 5,
    n_samples: int = 100_000,
    *,
    n_features: int | None = None,
    edge_prob: float = 0.5,
    measurement_noise: float = 0.0,
    chunk_rows: int = 50_000,
    random_state=None,
) -> Simulation:
    """The workload of :func:`simulate` (setting 1) as dask arrays made block by block.

    Every block of rows is a pure function of the seed, the environment and
    the block's index, so the data never exist in memory at once and a block
    recomputed on another worker has the same numbers: a stand-in for data
    larger than memory. The laws are those of :func:`simulate` with
    ``setting=1``; the random stream is not, so the data differ from
    ``simulate``'s for the same ``random_state``.

    Parameters
    ----------
    n_latent, n_environments : int
    n_samples : int
        Rows per environment.
    n_features : int, optional
        p (default d).
    edge_prob : float, default=0.5
    measurement_noise : float, default=0.0
        SD of Gaussian noise added to every column, relative to the
        column's population SD.
    chunk_rows : int, default=50_000
        Rows per block.
    random_state : int, Generator or None

    Returns
    -------
    Simulation
        ``X`` and ``Y`` are lists of dask arrays; ``Z`` is empty (every
        noise is standardised with its own block's mean and SD).
    """
    import dask
    import dask.array as da

    rng = as_generator(random_state)
    d, K = _whole(n_latent, "n_latent", 1), _whole(n_environments, "n_environments", 1)
    n_samples = _whole(n_samples, "n_samples", 2)
    chunk_rows = _whole(chunk_rows, "chunk_rows", 1)
    _check_numbers(edge_prob=edge_prob, measurement_noise=measurement_noise)
    p = d if n_features is None else int(n_features)
    if p < d:
        raise ValueError(f"n_features={p} must be >= n_latent={d}.")
    check_memory("simulate_dask", _dask_bytes,
                 {"n_latent": d, "n_environments": K, "n_samples": n_samples, "n_features": p,
                  "chunk_rows": chunk_rows},
                 {"n_latent": 1, "n_environments": 1, "n_samples": 2, "n_features": d,
                  "chunk_rows": 1})
    perm = rng.permutation(d)
    A = np.zeros((d, d), dtype=int)
    A[np.ix_(perm, perm)] = np.triu(rng.random((d, d)) < edge_prob, k=1)
    H = rng.standard_normal((p, d))
    laws_all, wlaws = list(NOISE_DISTRIBUTIONS), list(WEIGHT_DISTRIBUTIONS)
    seed = int(rng.integers(2**31 - 1))
    W, Om, X, Y, laws, wl = [], [], [], [], [], []
    for k in range(K):
        wl.append(wlaws[rng.integers(len(wlaws))])
        Wk = A * WEIGHT_DISTRIBUTIONS[wl[-1]](rng, (d, d))
        omega = np.diag(rng.uniform(0.5, 1.5, d))
        lk = [laws_all[j] for j in rng.integers(len(laws_all), size=d)]
        mix = omega @ np.linalg.inv(np.eye(d) - Wk)  # Y = Z @ mix
        noise_sd = measurement_noise * np.sqrt(np.einsum("ij,jk,ik->i", H, mix.T @ mix, H))
        xs, ys = [], []
        for b, start in enumerate(range(0, n_samples, chunk_rows)):
            rows = min(chunk_rows, n_samples - start)
            y, x = dask.delayed(_simulate_block, nout=2, pure=True)(
                (seed, k, b), rows, lk, mix, H, noise_sd
            )
            ys.append(da.from_delayed(y, (rows, d), float))
            xs.append(da.from_delayed(x, (rows, p), float))
        W.append(Wk)
        Om.append(omega)
        X.append(da.concatenate(xs))
        Y.append(da.concatenate(ys))
        laws.append(lk)
    params = dict(
        n_latent=d, n_environments=K, n_samples=[n_samples] * K, n_features=p, setting=1,
        edge_prob=edge_prob, measurement_noise=measurement_noise, chunk_rows=chunk_rows,
    )
    return Simulation(X, A, W, Om, H, Y, [], [int(v) for v in perm], laws, wl, params)


def _dask_bytes(n_latent: int, n_environments: int, n_samples: int, n_features: int,
                chunk_rows: int) -> int:
    """Bytes of a lazy simulation: its d x d matrices, H, the task graph and one block."""
    d, K, p = n_latent, n_environments, n_features
    blocks = K * -(-n_samples // chunk_rows)
    rows = min(chunk_rows, n_samples)
    return 8 * (d * d * (2 + 4 * K) + p * d + 3 * rows * (d + p)) + 4096 * blocks


def _simulate_block(
    key: tuple, rows: int, laws: list[str], mix: np.ndarray, H: np.ndarray, noise_sd: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(key)
    Z = np.column_stack([_standardise(_draw(law, rng, rows)) for law in laws])
    Yb = Z @ mix
    Xb = Yb @ H.T
    if np.any(noise_sd > 0):
        Xb += rng.standard_normal(Xb.shape) * noise_sd
    return Yb, Xb


def _draw(law: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if law.startswith("gennorm"):
        beta = float(law[len("gennorm"):])
        return stats.gennorm.rvs(beta, size=n, random_state=rng)
    return NOISE_DISTRIBUTIONS[law](rng, n)


# ---------------------------------------------------------------------------
# The workload zoo: named families of the paper's model with other noise laws,
# weights, scales, measurements and sample sizes. Each family is a function
# ``fn(n_latent, n_environments, n_samples, *, n_features=None,
# random_state=None) -> Simulation``; ``FAMILIES`` maps names to them.
# ---------------------------------------------------------------------------

# Noise laws of the ``paper`` family (each standardised after drawing).
_PAPER_NOISES = {
    "laplace": lambda rng, n: rng.laplace(0.0, 1.0, n),
    "uniform": lambda rng, n: rng.uniform(-1.0, 1.0, n),
    "exponential": lambda rng, n: rng.exponential(1.0, n),
    "gumbel": lambda rng, n: rng.gumbel(0.0, 1.0, n),
    "chi2_1": lambda rng, n: rng.chisquare(1, n),
    "beta": lambda rng, n: rng.beta(0.5, 0.5, n),
    "gamma2": lambda rng, n: rng.gamma(2.0, 1.0, n),
    "bimodal": lambda rng, n: rng.choice([-1.0, 1.0], n) + 0.3 * rng.standard_normal(n),
}
_HEAVY_NOISES = {
    **_PAPER_NOISES,
    "student_t3": lambda rng, n: rng.standard_t(3, n),
    "student_t4": lambda rng, n: rng.standard_t(4, n),
    "student_t5": lambda rng, n: rng.standard_t(5, n),
}
# Close to Gaussian: the identifiability of the order fades (flag, not fit).
_NEAR_GAUSSIAN_NOISES = {
    "gennorm2.5": lambda rng, n: stats.gennorm.rvs(2.5, size=n, random_state=rng),
    "student_t10": lambda rng, n: rng.standard_t(10, n),
    "student_t15": lambda rng, n: rng.standard_t(15, n),
    "student_t20": lambda rng, n: rng.standard_t(20, n),
}
# Few distinct values: ties break the continuous-noise assumption (flag, not fit).
_DISCRETE_NOISES = {
    "poisson1": lambda rng, n: rng.poisson(1.0, n).astype(float),
    "three_valued": lambda rng, n: rng.integers(-1, 2, n).astype(float),
    "binary": lambda rng, n: rng.integers(0, 2, n).astype(float),
    "four_valued": lambda rng, n: rng.choice([0.0, 1.0, 2.0, 5.0], n),
}


def _paper_weights(rng: np.random.Generator, A: np.ndarray) -> tuple[np.ndarray, str]:
    names = list(WEIGHT_DISTRIBUTIONS)
    law = names[rng.integers(len(names))]
    return A * WEIGHT_DISTRIBUTIONS[law](rng, A.shape), law


def _signed_weights(rng: np.random.Generator, A: np.ndarray) -> tuple[np.ndarray, str]:
    M = rng.uniform(0.5, 1.5, A.shape) * rng.choice([-1.0, 1.0], A.shape)
    return A * M, "signed_uniform(0.5,1.5)"


def _zoo(
    family: str,
    n_latent: int,
    n_environments: int,
    n_samples: int | list[int],
    *,
    n_features: int | None,
    random_state,
    noises: dict,
    weights=_paper_weights,
    weight_scale: float = 1.0,
    scales=None,
    measurement_noise: float = 0.0,
    edge_prob: float = 0.5,
) -> Simulation:
    """Shared generator of the zoo: one random DAG, K environments, Gaussian mixing."""
    rng = as_generator(random_state)
    d, K = _whole(n_latent, "n_latent", 1), _whole(n_environments, "n_environments", 1)
    _check_numbers(edge_prob=edge_prob, measurement_noise=measurement_noise,
                   weight_scale=weight_scale)
    p = d if n_features is None else int(n_features)
    if p < d:
        raise ValueError(f"n_features={p} must be >= n_latent={d}.")
    check_simulation_size(f"simulate_family({family!r})", d, K, n_samples, p)
    sizes = [int(n_samples)] * K if np.isscalar(n_samples) else [int(s) for s in n_samples]
    if len(sizes) != K or min(sizes) < 2:
        raise ValueError("n_samples must be an int >= 2 or a list of one such int per environment.")
    perm = rng.permutation(d)
    A = np.zeros((d, d), dtype=int)
    A[np.ix_(perm, perm)] = np.triu(rng.random((d, d)) < edge_prob, k=1)
    H = rng.standard_normal((p, d))
    names = list(noises)
    if scales is None:
        scales = lambda rng, K, d: rng.uniform(0.5, 2.0, (K, d))  # noqa: E731
    omegas = scales(rng, K, d)
    W, Om, Y, Z, X, laws, wlaws = [], [], [], [], [], [], []
    for k in range(K):
        Wk, wl = weights(rng, A)
        Wk = Wk * weight_scale
        omega = np.diag(omegas[k])
        lk = [names[j] for j in rng.integers(len(names), size=d)]
        Zk = np.column_stack([_standardise(noises[law](rng, sizes[k])) for law in lk])
        Yk = Zk @ omega @ np.linalg.inv(np.eye(d) - Wk)
        Xk = Yk @ H.T
        if measurement_noise > 0:
            Xk = Xk + rng.standard_normal(Xk.shape) * measurement_noise * Xk.std(axis=0)
        W.append(Wk)
        Om.append(omega)
        Y.append(Yk)
        Z.append(Zk)
        X.append(Xk)
        laws.append(lk)
        wlaws.append(wl)
    params = dict(
        family=family, n_latent=d, n_environments=K, n_samples=sizes, n_features=p,
        edge_prob=edge_prob, weight_scale=weight_scale, measurement_noise=measurement_noise,
    )
    return Simulation(X, A, W, Om, H, Y, Z, [int(v) for v in perm], laws, wlaws, params)


def family_paper(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                 random_state=None) -> Simulation:
    """The paper's workload with a wider choice of noise laws.

    Erdos-Renyi DAG (edge probability 0.5), weights of each environment from
    one law of the paper's weight table (:data:`WEIGHT_DISTRIBUTIONS`),
    noise law drawn per (environment, node) from Laplace, uniform,
    exponential, Gumbel, chi-squared(1), Beta(0.5, 0.5), Gamma(2) and the
    bimodal ``+-1 + 0.3 N(0, 1)``; noise scales ``U(0.5, 2)``; standard
    normal mixing, ``p = d`` unless ``n_features`` is given.
    """
    return _zoo("paper", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_PAPER_NOISES)


def family_heavy_tails(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                       random_state=None) -> Simulation:
    """As ``paper``, with Student t noise (3, 4 or 5 degrees of freedom) among the laws."""
    return _zoo("heavy_tails", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_HEAVY_NOISES)


def _wide(rng: np.random.Generator, K: int, d: int) -> np.ndarray:
    # log-uniform on [0.25, 2]: the ratio of a node's scales across
    # environments reaches 8
    return np.exp(rng.uniform(np.log(0.25), np.log(2.0), (K, d)))


def family_wide_scales(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                       random_state=None) -> Simulation:
    """As ``paper``, with noise scales log-uniform on [0.25, 2] (ratios up to 8).

    The ratio of one node's noise scales across environments reaches 8.
    """
    return _zoo("wide_scales", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_PAPER_NOISES, scales=_wide)


def family_signed_weights(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                          random_state=None) -> Simulation:
    """As ``paper``, with every weight ``+-U(0.5, 1.5)`` (random sign) redrawn per environment."""
    return _zoo("signed_weights", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_PAPER_NOISES, weights=_signed_weights)


def family_measured(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                    random_state=None) -> Simulation:
    """As ``paper``, with ``p = 4 d`` measurements (unless ``n_features`` is given) and
    Gaussian measurement noise of 5% of each column's SD."""
    p = 4 * int(n_latent) if n_features is None else n_features
    return _zoo("measured", n_latent, n_environments, n_samples, n_features=p,
                random_state=random_state, noises=_PAPER_NOISES, measurement_noise=0.05)


def family_unequal_n(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                     random_state=None) -> Simulation:
    """As ``paper``, with environment sizes drawn uniformly from ``[0.3 n, 3 n]``
    (300 to 3000 rows for ``n_samples=1000``); a list ``n_samples`` is used as given."""
    rng = as_generator(random_state)
    if np.isscalar(n_samples):
        n = int(n_samples)
        sizes = [int(s) for s in rng.integers(int(0.3 * n), 3 * n + 1, int(n_environments))]
    else:
        sizes = list(n_samples)
    return _zoo("unequal_n", n_latent, n_environments, sizes, n_features=n_features,
                random_state=rng, noises=_PAPER_NOISES)


def family_near_gaussian(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                         random_state=None) -> Simulation:
    """As ``paper``, with nearly Gaussian noise: generalised normal (shape 2.5) or
    Student t with 10, 15 or 20 degrees of freedom. CREATOR's order is barely
    identifiable here; a fit should be flagged rather than trusted."""
    return _zoo("near_gaussian", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_NEAR_GAUSSIAN_NOISES)


def family_weak_weights(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                        random_state=None) -> Simulation:
    """As ``paper``, with every weight multiplied by 0.1 (edges near the detection limit)."""
    return _zoo("weak_weights", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_PAPER_NOISES, weight_scale=0.1)


def family_discrete_noise(n_latent=5, n_environments=5, n_samples=1000, *, n_features=None,
                          random_state=None) -> Simulation:
    """As ``paper``, with discrete noise: Poisson(1), or uniform on {-1, 0, 1}, {0, 1}
    or {0, 1, 2, 5}."""
    return _zoo("discrete_noise", n_latent, n_environments, n_samples, n_features=n_features,
                random_state=random_state, noises=_DISCRETE_NOISES)


#: The zoo: family name -> generator
#: ``fn(n_latent, n_environments, n_samples, *, n_features=None, random_state=None)``:
#: the families above and the interventional ones (an observational environment
#: plus single- or multi-node interventions: the data models of LinCD, LSCALE-I
#: and UMNI-CRL, :data:`creator_plugin.interventional.INTERVENTIONAL_FAMILIES`).
#: Read-only: nothing adds to it at import or run time.
FAMILIES = MappingProxyType({
    "paper": family_paper,
    "heavy_tails": family_heavy_tails,
    "wide_scales": family_wide_scales,
    "signed_weights": family_signed_weights,
    "measured": family_measured,
    "unequal_n": family_unequal_n,
    "near_gaussian": family_near_gaussian,
    "weak_weights": family_weak_weights,
    "discrete_noise": family_discrete_noise,
    **INTERVENTIONAL_FAMILIES,
})

#: The field's own generators (LinCD's, LSCALE-I's, UMNI-CRL's and Multi-Node-CRL's,
#: :mod:`creator_plugin.field_generators`), families of :func:`simulate_family` too,
#: which take a ``noise`` law.
FIELD_FAMILIES = tuple(FIELD_GENERATORS)

#: Families whose fits a verdict should flag rather than trust (the others are
#: clearly non-Gaussian with heterogeneous weights, where CREATOR should fit).
#: The interventional ones are outside CREATOR's heterogeneity condition:
#: only the intervened nodes change between environments.
FLAG_FAMILIES = ("near_gaussian", "weak_weights", "discrete_noise", "single_node_hard",
                 "single_node_hard_laplace", "single_node_soft", "multi_node")

#: Every family :func:`simulate_family` draws, by name.
_GENERATORS = MappingProxyType({**FAMILIES, **FIELD_GENERATORS})


def simulate_family(
    family: str,
    n_latent: int = 5,
    n_environments: int | None = None,
    n_samples: int | list[int] = 1000,
    *,
    n_features: int | None = None,
    random_state=None,
    noise: str | None = None,
) -> Simulation:
    """Simulate one named family of the workload zoo.

    Parameters
    ----------
    family : str
        A key of :data:`FAMILIES`: ``"paper"``, ``"heavy_tails"``,
        ``"wide_scales"``, ``"signed_weights"``, ``"measured"``,
        ``"unequal_n"`` (clearly non-Gaussian noise, heterogeneous weights),
        or ``"near_gaussian"``, ``"weak_weights"``, ``"discrete_noise"``
        (workloads outside CREATOR's assumptions, see :data:`FLAG_FAMILIES`),
        or the interventional ``"single_node_hard"`` (Gaussian noise),
        ``"single_node_hard_laplace"``, ``"single_node_soft"`` (Laplace) and
        ``"multi_node"`` (Laplace): an observational environment 0 plus
        interventions that change only the intervened nodes
        (:mod:`creator_plugin.interventional`; also flag families);
        or a name of :data:`FIELD_FAMILIES`, the field's own generators.
        Each family's generator documents its laws.
    n_latent : int, default=5
    n_environments : int, optional
        Number of environments K. Default: 5 for the zoo's families, and
        ``n_latent + 1`` for the interventional ones (the observational
        environment plus one intervention per latent, the design their
        methods assume).
    n_samples : int or list of int, default=1000
        Rows per environment.
    n_features : int, optional
        Observed dimension p (family default otherwise).
    random_state : int, Generator or None
    noise : {"gaussian", "laplace"}, optional
        For the field's own generators only (:data:`FIELD_FAMILIES`:
        ``"lincd"``, ``"lscale_i"``, ``"umni_crl"``, ``"multi_node_crl"``,
        :mod:`creator_plugin.field_generators`); default
        ``"gaussian"``, the authors' law.

    Returns
    -------
    Simulation
        ``params["family"]`` names the family.

    Examples
    --------
    >>> from creator_plugin.simulation import simulate_family
    >>> sim = simulate_family("heavy_tails", 4, 3, 200, random_state=0)
    >>> len(sim.X), sim.X[0].shape
    (3, (200, 4))
    """
    if not isinstance(family, str) or family not in _GENERATORS:
        names = sorted(_GENERATORS)
        raise ValueError(f"family must be one of {names}, got {family!r}.")
    extra = {}
    if noise is not None:
        if family not in FIELD_FAMILIES:
            raise ValueError(f"noise is for the families {list(FIELD_FAMILIES)}; {family!r} "
                             "fixes its own noise laws.")
        extra["noise"] = noise
    if n_environments is None:
        # each generator's own default (5, or n_latent + 1 for the interventional ones)
        return _GENERATORS[family](n_latent, n_samples=n_samples, n_features=n_features,
                                   random_state=random_state, **extra)
    return _GENERATORS[family](n_latent, n_environments, n_samples, n_features=n_features,
                               random_state=random_state, **extra)
