"""Seconds per fit with and without ``revise_graph=True``, interleaved in one process.

Usage::

    OMP_NUM_THREADS=1 python revision_cost.py FIRST COUNT [D ...]

The six bar families at d = 5 (package simulator), ``simulate(10, 10, 2000)``
at d = 10 and ``simulate(20, 20, 5000, edge_prob=0.2)`` at d = 20 (the D
given, default 5 and 10), seeds FIRST..FIRST+COUNT-1; CPU seconds of each fit, the verdict
included; prints the median ratio per d.
"""
import sys
import time
import warnings

import numpy as np

from creator_plugin import CREATOR, simulate
from creator_plugin.simulation import simulate_family

FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")


def cpu(X, d, seed, **params):
    start = time.process_time()
    CREATOR(d, random_state=seed, **params).fit(X)
    return time.process_time() - start


def main() -> None:
    first, count = map(int, sys.argv[1:3])
    ds = [int(v) for v in sys.argv[3:]] or [5, 10]
    warnings.simplefilter("ignore")
    for d in ds:
        ratios, base, opt = [], [], []
        for seed in range(first, first + count):
            if d == 5:
                data = [simulate_family(f, 5, 5, 1000, random_state=seed).X for f in FAMILIES]
            elif d == 10:
                data = [simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed).X]
            else:
                data = [simulate(d, d, 5000, setting=1, edge_prob=0.2, random_state=seed).X]
            for X in data:
                t0 = cpu(X, d, seed)
                t1 = cpu(X, d, seed, revise_graph=True)
                base.append(t0)
                opt.append(t1)
                ratios.append(t1 / t0)
        print(f"d = {d}: {len(ratios)} fits, median CPU s default {np.median(base):.3f}, "
              f"revise_graph {np.median(opt):.3f}; mean {np.mean(base):.3f} / {np.mean(opt):.3f}; "
              f"ratio of means {np.mean(opt) / np.mean(base):.2f}, median per-fit ratio "
              f"{np.median(ratios):.2f}", flush=True)


if __name__ == "__main__":
    main()
