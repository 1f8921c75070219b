"""The defaults against ``order_branches=2`` on the same data sets (frozen check).

The design and its rule are in benchmarks/LOG.md ("Frozen design: the
ordering's close calls taken the other way"). Usage::

    OMP_NUM_THREADS=1 python branch_check.py run SET FIRST COUNT OUT.jsonl
    python branch_check.py summary OUT.jsonl [...]

SET: ``d10`` / ``d10-independent`` and ``bar`` / ``bar-independent`` as in
``revise_default_check.py``; ``d7`` / ``d7-independent`` and ``d15`` / ``d15-independent`` as in
``branch_probe.py``. One row per data set with both settings' SHD, correct
order, LocR², verdict and CPU seconds.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import revise_default_check  # noqa: E402
import row_files  # noqa: E402

# explicit on both sides, so the check means the same whatever the default is
SETTINGS = {"default": {"refine__order_branches": 0}, "branches": {"refine__order_branches": 2}}


def run(which: str, first: int, count: int, out: str) -> None:
    revise_default_check.run(which, first, count, out, settings=SETTINGS)


def _paired(rows: list[dict]) -> tuple[float, float, float, float, int, int]:
    a = np.array([r["default"]["shd"] for r in rows], float)
    b = np.array([r["branches"]["shd"] for r in rows], float)
    diff = b - a
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    return a.mean(), b.mean(), diff.mean(), se, int(np.sum(diff < 0)), int(np.sum(diff > 0))


def compared_rows(paths: list[str]) -> list[dict]:
    """The rows of ``paths``; the data sets the fit refused are printed and left out."""
    rows = row_files.read_jsonl(paths)
    for r in rows:
        if "failed" in r:
            print(f"refused: {r['cell']} seed {r['seed']}: {r['failed'][:120]}")
    return [r for r in rows if "failed" not in r]


def summary(paths: list[str]) -> None:
    rows = compared_rows(paths)
    print("| cell | data sets | default | branches | difference (SE) | better / worse "
          "| correct order | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    groups = {}
    for r in rows:
        groups.setdefault(r["cell"], []).append(r)
    pooled = {
        "d = 7 and 10 (both simulators)": [r for r in rows
                                           if r["set"].startswith(("d7", "d10"))],
        "d = 15 (both simulators)": [r for r in rows if r["set"].startswith("d15")],
        "d = 5 bar families (both simulators)": [r for r in rows if r["set"].startswith("bar")],
    }
    for name, rs in list(groups.items()) + list(pooled.items()):
        if not rs:
            continue
        a, b, diff, se, better, worse = _paired(rs)
        order = (f"{sum(r['default']['correct_order'] for r in rs)} → "
                 f"{sum(r['branches']['correct_order'] for r in rs)}")
        cpu = sum(r["branches"]["cpu"] for r in rs) / sum(r["default"]["cpu"] for r in rs)
        print(f"| {name} | {len(rs)} | {a:.3f} | {b:.3f} | {diff:+.3f} ({se:.3f}) | "
              f"{better} / {worse} | {order} | {cpu:.2f}x |")
    blocks_and_flags(rows, list(SETTINGS), [c for c in groups if "d10" in c or "d15" in c])


def blocks_and_flags(rows: list[dict], names: list[str], cells: list[str]) -> None:
    """Print each setting's mean SHD per block of 20 data sets of ``cells``, and its flags."""
    for cell in cells:
        rs = [r for r in rows if r["cell"] == cell]
        for name in names:
            blocks = " / ".join(f"{np.mean([r[name]['shd'] for r in rs[i:i + 20]]):.2f}"
                                for i in range(0, len(rs), 20))
            print(f"{cell}, {name}: blocks of 20: {blocks}")
    for name in names:
        wrong = [r[name] for r in rows if r[name]["shd"] >= 2]
        right = [r[name] for r in rows if r[name]["shd"] <= 1]
        print(f"{name}: SHD >= 2 flagged {sum(f['flagged'] for f in wrong)}/{len(wrong)}, "
              f"SHD <= 1 flagged {sum(f['flagged'] for f in right)}/{len(right)}")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        summary(sys.argv[2:])
