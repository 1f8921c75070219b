"""How many branches? The kept model with the first B of a probe's branches (tuning rows).

Reads ``branch_probe.py`` rows run with four branches and keeps, for B = 0-4,
the model with the lowest unguarded score among the default fit and its
first B branches (a branch must be lower by more than 1e-8 relative, as in
the package). Usage::

    python branch_count_summary.py ROWS.jsonl [...]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def kept(row: dict, branches: int) -> dict:
    best = row["base"]
    for b in row["branches"][:branches]:
        if b["score"] < best["score"] - 1e-8 * max(1.0, abs(best["score"])):
            best = b
    return best


def main(paths: list[str]) -> None:
    groups = {Path(p).stem: [json.loads(line) for line in open(p)] for p in paths}
    groups["pooled"] = [r for rs in groups.values() for r in rs]
    print("| set | data sets | " + " | ".join(f"B = {b}" for b in range(5))
          + " | oracle B = 2 | oracle B = 4 | B = 4 against B = 2: better / worse |")
    print("|---|---|" + "---|" * 8)
    for name, rs in groups.items():
        shd = {b: np.array([kept(r, b)["shd"] for r in rs], float) for b in range(5)}
        oracle = {b: np.mean([min([r["base"]["shd"]] + [x["shd"] for x in r["branches"][:b]])
                              for r in rs]) for b in (2, 4)}
        better = int(np.sum(shd[4] < shd[2]))
        worse = int(np.sum(shd[4] > shd[2]))
        print(f"| {name} | {len(rs)} | " + " | ".join(f"{shd[b].mean():.3f}" for b in range(5))
              + f" | {oracle[2]:.3f} | {oracle[4]:.3f} | {better} / {worse} |")


if __name__ == "__main__":
    main(sys.argv[1:])
