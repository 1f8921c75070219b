"""Summary of ``graph_selection.py`` rows: per family, the default against the search.

``shd2`` is the search's graph with the default's features (the frozen
design). Usage::

    python graph_selection_summary.py ROWS.jsonl [ROWS.jsonl ...]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402


def main() -> None:
    rows = sorted(row_files.read_jsonl(sys.argv[1:]),
                  key=lambda x: (x["family"], x["seed"]))
    for fam in sorted({x["family"] for x in rows}):
        t = [x for x in rows if x["family"] == fam]
        a = np.array([x["fit_shd"] for x in t])
        b = np.array([x["shd2"] for x in t])
        diff = b - a
        se = diff.std(ddof=1) / np.sqrt(len(t))
        print(f"{fam:28s} n={len(t)} default {a.mean():.3f} search {b.mean():.3f} "
              f"diff {diff.mean():+.3f} (SE {se:.3f}) better/worse {(b < a).sum()}/{(b > a).sum()} "
              f"LocR2 {np.mean([x['locr2_2'] for x in t]):.3f}")
        if len(t) >= 40:
            cuts = range(0, len(t), 20)
            print("  blocks of 20, default", [round(a[i:i + 20].mean(), 2) for i in cuts],
                  "search", [round(b[i:i + 20].mean(), 2) for i in cuts])
    a = np.array([x["fit_shd"] for x in rows])
    b = np.array([x["shd2"] for x in rows])
    print(f"all {len(rows)} fits: default {a.mean():.3f} search {b.mean():.3f} "
          f"better/worse {(b < a).sum()}/{(b > a).sum()}")


if __name__ == "__main__":
    main()
