"""How far are wrong pruning decisions from the level, in bootstrap standard errors?

For every model whose order the default fit gets right, the rows of every
environment are resampled with the fit's directions fixed, and the pruning
statistic of every pair is recomputed; its bootstrap SD is the SE that a
row-bootstrap calibration of the level would use.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from .. import metrics, simulate
from .._fit import fit_arrays
from .._validation import check_environments
from ..pruning import prune, standardised_coefficients
from ..sem import regression_matrices

__all__ = ["pruning_se_rows"]


def _statistics(noises, entangled, level: float) -> list[float]:
    B = regression_matrices(noises, entangled)
    decisions = prune(standardised_coefficients(B, noises, entangled), threshold=level)[1]
    return [x["statistic"] for x in decisions]


def pruning_se_rows(
    d: int, seeds: Iterable[int], B: int = 30, level: float = 0.2
) -> list[dict]:
    """One row per pruning decision of the correctly ordered default fits.

    Parameters
    ----------
    d : int
        Latents and environments (K = d, n = 1000, setting 1, data and fit
        seeded with the seed).
    seeds : iterable of int
    B : int, default=30
        Bootstrap resamples per model.
    level : float, default=0.2
        The residual rule's level.

    Returns
    -------
    list of dict
        ``seed``, ``parent``, ``child``, ``true_edge``, ``edge``,
        ``statistic``, ``se`` (bootstrap SD of the statistic) and ``z``
        (``(statistic - level) / se``).
    """
    rows = []
    for seed in seeds:
        sim = simulate(d, d, 1000, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_arrays(check_environments(sim.X, n_latent=d), d,
                             prune_threshold=level, keep_features=True,
                             random_state=np.random.default_rng(seed))
        ev = metrics.evaluate(sim.adjacency, sim.Y, fit.adjacency, fit.latents, list(range(d)))
        if not ev["correct_order"]:
            continue
        match = np.array(ev["matching"])
        truth = sim.adjacency[np.ix_(match, match)] != 0
        noises, entangled = fit.ordering.noises, fit.entangled
        rng = np.random.default_rng(seed)
        boot = []
        for _ in range(B):
            idx = [rng.integers(0, len(z), len(z)) for z in noises]
            boot.append(_statistics([z[i] for z, i in zip(noises, idx)],
                                    [y[i] for y, i in zip(entangled, idx)], level))
        se = np.array(boot).std(axis=0)
        for x, s in zip(fit.decisions, se):
            rows.append({
                "seed": seed, "parent": x["parent"], "child": x["child"],
                "true_edge": bool(truth[x["parent"], x["child"]]), "edge": x["edge"],
                "statistic": x["statistic"], "se": float(s),
                "z": (x["statistic"] - level) / max(float(s), 1e-12),
            })
    return rows
