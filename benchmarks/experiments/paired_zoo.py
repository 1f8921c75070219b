"""Paired comparison of two zoo row files (same families and seeds): SHD, order, LocR2 per family.

Usage: python paired_zoo.py A.jsonl B.jsonl  (B minus A; SE of the paired mean difference)

A and B may each be several files joined by commas (e.g. both simulators'):
rows are then paired by simulator, family and seed, each simulator's families
get a line, and a last line pools every pair.

Only rows fitted with the current defaults are read (``zoo.current``).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402
from zoo import current  # noqa: E402


def load(paths):
    rows = {}
    for path in paths.split(","):
        for r in row_files.read_jsonl(path):
            if current(r):
                rows[(r["simulator"], r["family"], r["seed"])] = r
    return rows


a, b = load(sys.argv[1]), load(sys.argv[2])
keys = sorted(set(a) & set(b))
several = len({k[0] for k in keys}) > 1
groups = {(k[0], k[1]): None for k in keys}
if len(groups) > 1 and several:
    groups[("all", "")] = None
print("| family | fits | mean SHD A | mean SHD B | B - A (SE) | better / worse | "
      "correct order A | B | LocR² A | B | identical fits |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for sim, fam in groups:
    ks = [k for k in keys if (sim == "all" or k[:2] == (sim, fam))
          and a[k]["status"] == b[k]["status"] == "ok"]
    fam = "all" if sim == "all" else (f"{sim} {fam}" if several else fam)
    sa = np.array([a[k]["shd"] for k in ks], float)
    sb = np.array([b[k]["shd"] for k in ks], float)
    diff = sb - sa
    se = diff.std(ddof=1) / np.sqrt(len(ks)) if len(ks) > 1 else float("nan")
    same = sum(a[k]["shd"] == b[k]["shd"] and abs(a[k]["locr2"] - b[k]["locr2"]) < 1e-12
               for k in ks)
    print(f"| {fam} | {len(ks)} | {sa.mean():.2f} | {sb.mean():.2f} "
          f"| {diff.mean():+.2f} ({se:.2f}) "
          f"| {(diff < 0).sum()} / {(diff > 0).sum()} "
          f"| {np.mean([a[k]['correct_order'] for k in ks]):.0%} "
          f"| {np.mean([b[k]['correct_order'] for k in ks]):.0%} "
          f"| {np.mean([a[k]['locr2'] for k in ks]):.3f} "
          f"| {np.mean([b[k]['locr2'] for k in ks]):.3f} "
          f"| {same}/{len(ks)} |")
