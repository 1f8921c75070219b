"""Summary of ``track_search_trial.py`` rows: mean SHD without and with, per family.

Usage::

    python track_search_summary.py ROWS.jsonl [...]
"""
import json
import sys
from collections import defaultdict

import numpy as np


def main() -> None:
    for path in sys.argv[1:]:
        rows = [json.loads(line) for line in open(path)]
        groups = defaultdict(list)
        for r in rows:
            groups[r["family"]].append(r)
        print(path)
        for fam, rs in groups.items():
            b = np.array([r["base"]["shd"] for r in rs])
            t = np.array([r["track"]["shd"] for r in rs])
            ob = np.mean([r["base"]["order"] for r in rs])
            ot = np.mean([r["track"]["order"] for r in rs])
            cpu = sum(r["track"]["cpu"] for r in rs) / sum(r["base"]["cpu"] for r in rs)
            changed = [(r["seed"], r["base"]["shd"], r["track"]["shd"]) for r in rs
                       if r["base"]["shd"] != r["track"]["shd"]]
            print(f"  {fam:15s} n={len(rs)} shd {b.mean():.3f} -> {t.mean():.3f} "
                  f"better/worse {(t < b).sum()}/{(t > b).sum()} order {ob:.2f}->{ot:.2f} "
                  f"cpu x{cpu:.2f} changed {changed[:12]}")


if __name__ == "__main__":
    main()
