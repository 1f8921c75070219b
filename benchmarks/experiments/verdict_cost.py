"""CPU time of a default fit with and without the verdict on the zoo's bar families (d = 5).

Each (family, seed) is fitted twice in each mode and the second pair is timed
(``time.process_time``), so the ratio compares fits under the same load. The
seeds (75000-75009 by default) are used for timing only. Usage::

    python benchmarks/experiments/verdict_cost.py [FIRST_SEED] [SEEDS]
"""

import sys
import time
import warnings

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.simulation import simulate_family

FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")


def main() -> None:
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 75000
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    warnings.simplefilter("ignore")
    off, on = [], []
    for seed in range(first, first + count):
        for family in FAMILIES:
            sim = simulate_family(family, 5, 5, 1000, random_state=seed)
            for repeat in range(2):
                start = time.process_time()
                CREATOR(5, random_state=seed, quality=False).fit(sim.X)
                middle = time.process_time()
                CREATOR(5, random_state=seed).fit(sim.X)
                end = time.process_time()
                if repeat:
                    off.append(middle - start)
                    on.append(end - middle)
    off, on = np.array(off), np.array(on)
    print(f"{len(off)} fits: mean CPU s without the verdict {off.mean():.4f}, with it "
          f"{on.mean():.4f}; ratio of means {on.mean() / off.mean():.3f}, median per-fit "
          f"ratio {np.median(on / off):.3f}")


if __name__ == "__main__":
    main()
