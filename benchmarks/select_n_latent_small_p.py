"""n_latent with few measurements: select_n_latent at p = 2d, and off-by-one at p = d + 2.

``select`` mode: d = 3, p = 6, K = 3, n = 1000, 10 % measurement noise; counts
the choices. ``off_by_one`` mode: d = 3, 4, 5, p = d + GAP, noise 0 or 10 %,
``n_latent_evidence`` for d - 1 and d + 1; counts the fits flagged as too few /
too many.

Run: ``python benchmarks/select_n_latent_small_p.py select --seeds 3000-3099`` and
``python benchmarks/select_n_latent_small_p.py off_by_one --seeds 3000-3019 --gap 2``.
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

from creator_plugin import simulate
from creator_plugin.dimension import n_latent_evidence, select_n_latent


def select(seeds) -> None:
    picks, rules = Counter(), Counter()
    for s in seeds:
        sim = simulate(3, 3, 1000, n_features=6, measurement_noise=0.1, random_state=s)
        r = select_n_latent(sim.X)
        picks[r.n_latent] += 1
        rules[r.decided_by] += 1
    print("choices:", dict(picks), "rules:", dict(rules))


def off_by_one(seeds, gap: int) -> None:
    hit, total = Counter(), Counter()
    for d in (3, 4, 5):
        for noise in (0.0, 0.1):
            for off in (-1, 1):
                for s in seeds:
                    sim = simulate(d, d, 1000, n_features=d + gap, measurement_noise=noise,
                                   random_state=s)
                    status = n_latent_evidence(sim.X, d + off)["status"]
                    hit[(d, noise, off)] += status == ("too_few" if off < 0 else "too_many")
                    total[(d, noise, off)] += 1
    for key in total:
        print("d, noise, offset", key, f"{hit[key]} / {total[key]}")
    print("all", sum(hit.values()), "/", sum(total.values()))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["select", "off_by_one"])
    parser.add_argument("--seeds", default="3000-3019", help="a range a-b (inclusive)")
    parser.add_argument("--gap", type=int, default=2, help="p - d in off_by_one mode")
    args = parser.parse_args(argv)
    a, b = (int(v) for v in args.seeds.split("-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if args.mode == "select":
            select(range(a, b + 1))
        else:
            off_by_one(range(a, b + 1), args.gap)


if __name__ == "__main__":
    main()
