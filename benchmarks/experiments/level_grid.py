"""Re-decide the thorough verdict on resample_features.py records at a grid of levels.

Usage: python level_grid.py RECORDS.jsonl ...

Prints, per workload (setting, n) and pooled, the share of fits with SHD >= 3
that are flagged and of fits with SHD <= 1 that are flagged, for B = 4 and 8
resamples, calibrated-disagreement levels 3-4.5 and instability levels 0.3-0.5
(condition level 10^6 and the weak-step level 0.1 as in the verdict).
"""

import json
import sys

import numpy as np


def flagged(r: dict, disagreement: float, instability: float, B: int) -> bool:
    others = {k for k in r["issues"] if k != "unreliable_order"}
    order = (r["cal"] >= disagreement or r["cond"] >= 1e6
             or any(b / 5 > 0.1 for b in r["best"][:-1]))
    return bool(others) or order or np.mean(r["boot_shd"][:B]) / 5 >= instability


def main() -> None:
    rows = []
    for path in sys.argv[1:]:
        with open(path) as fh:
            rows += [json.loads(line) for line in fh if '"shd"' in line]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["setting"], r["n"]), []).append(r)
    groups["ALL"] = rows
    print("B disagreement instability | " + " | ".join(str(k) for k in groups))
    for B in (4, 8):
        for t in (3, 3.5, 4, 4.5):
            for level in (0.3, 0.35, 0.4, 0.5):
                cells = []
                for sub in groups.values():
                    bad = [r for r in sub if r["shd"] >= 3]
                    good = [r for r in sub if r["shd"] <= 1]
                    nb = sum(flagged(r, t, level, B) for r in bad)
                    ng = sum(flagged(r, t, level, B) for r in good)
                    cells.append(f"{nb / len(bad):.0%} {ng / len(good):.1%}")
                print(f"{B} {t} {level} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
