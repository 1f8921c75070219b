"""``search_graph=False`` against ``True`` on the same data sets (the defaults otherwise).

Usage::

    OMP_NUM_THREADS=1 python search_check.py run SET FIRST COUNT OUT.jsonl
    python search_check.py summary OUT.jsonl [...]

SET as in ``branch_probe.py`` (``d10``, ``d10-independent``, ``d7``, ``d15``,
``bar``, ...). Every other parameter is the package's default, so at
7 <= d <= 15 with K >= d both settings branch (and with the search every
branch is searched before the models are compared). One row per data set
with both settings' SHD, correct order, LocR², verdict and CPU seconds; a data
set the fit refuses is kept apart as ``failed``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import revise_default_check  # noqa: E402
from branch_check import blocks_and_flags, compared_rows  # noqa: E402

# explicit on both sides, so the check means the same whatever the default is
SETTINGS = {"off": {"refine__search_graph": False}, "search": {"refine__search_graph": True}}


def run(which: str, first: int, count: int, out: str) -> None:
    revise_default_check.run(which, first, count, out, settings=SETTINGS)


def summary(paths: list[str]) -> None:
    rows = compared_rows(paths)
    print("| cell | data sets | off | search | difference (SE) | better / worse "
          "| correct order | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    cells = sorted({r["cell"] for r in rows})
    for cell in cells + ["pooled"]:
        rs = [r for r in rows if cell in ("pooled", r["cell"])]
        a = np.array([r["off"]["shd"] for r in rs], float)
        b = np.array([r["search"]["shd"] for r in rs], float)
        diff = b - a
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        order = (f"{sum(r['off']['correct_order'] for r in rs)} → "
                 f"{sum(r['search']['correct_order'] for r in rs)}")
        cpu = sum(r["search"]["cpu"] for r in rs) / sum(r["off"]["cpu"] for r in rs)
        print(f"| {cell} | {len(rs)} | {a.mean():.3f} | {b.mean():.3f} | {diff.mean():+.3f} "
              f"({se:.3f}) | {int(np.sum(diff < 0))} / {int(np.sum(diff > 0))} | {order} | "
              f"{cpu:.2f}x |")
    blocks_and_flags(rows, list(SETTINGS), cells)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
