"""Would a bootstrap-calibrated pruning level help? Measure the statistic's SE.

Flawed, kept as the record of what was measured: the resamples hold the
fitted noises and features fixed, and the noises are exact linear maps of
the features (Gram-Schmidt residuals with coefficients estimated once), so
their regression is the same on every resample and the "SE" leaves out the
sampling error of those coefficients, which is most of it. The statistic's
sampling error is measured correctly by
``benchmarks/experiments/pruning_null_se_d5.py`` (benchmarks/LOG.md,
"The pruning statistic against its sampling error").

Usage::

    python benchmarks/pruning_se.py --d 5 --first-seed 0 --seeds 100 --B 30

Prints each wrong pruning decision of the correctly ordered default fits,
and each right one within 0.08 of the level, as
``seed parent->child WRONG|ok true|absent stat se z`` with
``z = (stat - level) / se``, then a summary (see
:mod:`creator_plugin.benchmark.pruning_se`).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterable

import numpy as np

from creator_plugin import metrics, simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin._validation import check_environments
from creator_plugin.pruning import prune, standardised_coefficients
from creator_plugin.sem import regression_matrices

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
            fit = fit_arrays(check_environments(sim.X, n_latent=d),
                             FitConfig(d, prune_threshold=level, keep_features=True),
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

LEVEL = 0.2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--B", type=int, default=30)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = pruning_se_rows(args.d, seeds, args.B, LEVEL)
    wrong = [r for r in rows if r["edge"] != r["true_edge"]]
    for r in rows:
        if r in wrong or abs(r["statistic"] - LEVEL) < 0.08:
            print(r["seed"], f"{r['parent']}->{r['child']}", "WRONG" if r in wrong else "ok",
                  "true" if r["true_edge"] else "absent",
                  f"stat {r['statistic']:.3f} se {r['se']:.3f} z {r['z']:+.1f}")
    z = np.abs([r["z"] for r in wrong])
    ses = [r["se"] for r in rows]
    print(f"\nwrong decisions: {len(wrong)} ({sum(r['true_edge'] for r in wrong)} missing, "
          f"{sum(not r['true_edge'] for r in wrong)} extra); SE range {min(ses):.3f}-"
          f"{max(ses):.3f}; |z| of wrong decisions: median {np.median(z):.1f}, share below 3: "
          f"{np.mean(z < 3):.2f}")


if __name__ == "__main__":
    main()
