"""Would a bootstrap-calibrated pruning level help? Measure the statistic's SE.

Usage::

    python benchmarks/pruning_se.py --d 5 --first-seed 0 --seeds 100 --B 30

For every model whose order CREATOR gets right, the ordering step is rerun
with the default settings, the rows of every environment are resampled
``B`` times with the directions fixed, and the pruning statistic of every
pair is recomputed; its bootstrap SD is the SE a row-bootstrap calibration
would use. Prints each wrong decision, and each right one within 0.08 of the
level, as ``seed parent->child WRONG|ok true|absent stat se z`` with
``z = (stat - level) / se``, then a summary.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from creator_plugin import CREATOR, metrics, simulate
from creator_plugin.estimator import _pooled_sd
from creator_plugin.ordering import topological_ordering
from creator_plugin.preprocessing import reduce_environments
from creator_plugin.pruning import prune, standardised_coefficients

LEVEL = 0.2


def _statistics(noises, entangled) -> list[dict]:
    return prune(standardised_coefficients(noises, entangled), threshold=LEVEL)[1]


def run(d: int, first_seed: int, seeds: int, B: int) -> None:
    wrong_z, wrong_missing, wrong_extra, ses = [], 0, 0, []
    for seed in range(first_seed, first_seed + seeds):
        sim = simulate(d, d, 1000, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, random_state=seed).fit(sim.X)
        ev = metrics.evaluate(
            sim.adjacency, sim.Y, model.adjacency_matrix_, model.latents_, model.causal_order_
        )
        if not ev["correct_order"]:
            continue
        match = np.array(ev["matching"])
        truth = sim.adjacency[np.ix_(match, match)] != 0
        X_red, _ = reduce_environments(sim.X, d)
        order = topological_ordering(X_red, random_state=seed)
        sd = _pooled_sd(order.entangled)  # the estimator's scale of the features
        entangled = [y / sd for y in order.entangled]
        decisions = _statistics(order.noises, entangled)
        rng = np.random.default_rng(seed)
        boot = []
        for _ in range(B):
            idx = [rng.integers(0, len(z), len(z)) for z in order.noises]
            boot.append(
                [
                    x["statistic"]
                    for x in _statistics(
                        [z[i] for z, i in zip(order.noises, idx)],
                        [y[i] for y, i in zip(entangled, idx)],
                    )
                ]
            )
        se = np.array(boot).std(axis=0)
        ses.extend(se.tolist())
        for x, s in zip(decisions, se):
            true_edge = bool(truth[x["parent"], x["child"]])
            wrong = x["edge"] != true_edge
            z = (x["statistic"] - LEVEL) / max(s, 1e-12)
            if wrong:
                wrong_z.append(abs(z))
                wrong_missing += true_edge
                wrong_extra += not true_edge
            if wrong or abs(x["statistic"] - LEVEL) < 0.08:
                print(
                    seed, f"{x['parent']}->{x['child']}", "WRONG" if wrong else "ok",
                    "true" if true_edge else "absent",
                    f"stat {x['statistic']:.3f} se {s:.3f} z {z:+.1f}", flush=True,
                )
    z = np.array(wrong_z)
    print(
        f"\nwrong decisions: {len(z)} ({wrong_missing} missing, {wrong_extra} extra); "
        f"SE range {min(ses):.3f}-{max(ses):.3f}; "
        f"|z| of wrong decisions: median {np.median(z):.1f}, share below 3: {np.mean(z < 3):.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--B", type=int, default=30)
    args = parser.parse_args(argv)
    run(args.d, args.first_seed, args.seeds, args.B)


if __name__ == "__main__":
    main()
