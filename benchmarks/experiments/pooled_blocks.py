"""The fresh blocks of the six families inside the assumptions, side by side and pooled.

Four blocks of 50 seeds per family were drawn at d = K = 5, n = 1000, on both
simulators, and fitted with the current defaults (nothing was chosen on any
of them): 10000-10049, 30000-30049, 111000-111049 and 112000-112049. Each
block was fitted by the run that drew it; this script only reads their rows
(``zoo.current`` rows with ``--params '{}'``, the defaults) and prints, per
family and simulator, every block's mean SHD and the pooled mean over the
200 fits with its standard error and correct-order share, then the verdict
over all the blocks' fits (fits with SHD >= 2 flagged, fits with SHD <= 1
flagged).

    python pooled_blocks.py ROWS.jsonl [...]

Rows are told apart by their seed's block (the seed rounded down to a
multiple of 1000); a (simulator, family, seed) fitted twice is read once.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import row_files  # noqa: E402
from zoo import current  # noqa: E402

#: The families with an accuracy bar (inside CREATOR's assumptions).
BAR_FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured",
                "unequal_n")


def load(paths: list[str]) -> dict[tuple, dict]:
    """Rows of the defaults on the bar families, keyed by (simulator, family, seed)."""
    rows = {}
    for path in paths:
        for r in row_files.read_jsonl(path):
            if (r["family"] in BAR_FAMILIES and r["d"] == 5 and r["params"] == "{}"
                    and r["status"] == "ok" and current(r)):
                rows[(r["simulator"], r["family"], r["seed"])] = r
    return rows


def block_of(seed: int) -> int:
    """First seed of the block of 1000 that ``seed`` belongs to."""
    return seed - seed % 1000


def table(rows: dict[tuple, dict], shd_bar: float = 0.3, order_bar: float = 0.95) -> str:
    """Markdown: per family and simulator, every block's mean SHD, then the pooled figures."""
    blocks = sorted({block_of(k[2]) for k in rows})
    head = ("| simulator | family | " + " | ".join(f"{b}" for b in blocks)
            + " | pooled fits | pooled mean SHD (SE) | pooled correct order "
            "| blocks meeting both targets |")
    lines = [head, "|---|---|" + "---|" * (len(blocks) + 4)]
    for sim in sorted({k[0] for k in rows}, key=lambda s: (s != "package", s)):
        for fam in BAR_FAMILIES:
            cell = {b: [r for k, r in rows.items() if k[:2] == (sim, fam)
                        and block_of(k[2]) == b] for b in blocks}
            every = [r for rs in cell.values() for r in rs]
            if not every:
                continue
            shd = np.array([r["shd"] for r in every], float)
            se = shd.std(ddof=1) / np.sqrt(len(shd)) if len(shd) > 1 else float("nan")
            met = sum(bool(rs) and np.mean([r["shd"] for r in rs]) <= shd_bar
                      and np.mean([r["correct_order"] for r in rs]) >= order_bar
                      for rs in cell.values())
            means = " | ".join(f"{np.mean([r['shd'] for r in rs]):.2f}" if rs else "–"
                               for rs in cell.values())
            lines.append(
                f"| {sim} | {fam} | {means} | {len(shd)} | {shd.mean():.2f} ({se:.2f}) "
                f"| {np.mean([r['correct_order'] for r in every]):.1%} "
                f"| {met} of {sum(bool(rs) for rs in cell.values())} |")
    return "\n".join(lines)


def verdict(rows: dict[tuple, dict]) -> str:
    """The verdict's detection and false alarms over every row, and per block."""
    out = []
    for name, keep in [("all blocks", lambda b: True)] + [
            (f"block {b}", lambda x, b=b: x == b)
            for b in sorted({block_of(k[2]) for k in rows})]:
        rs = [r for k, r in rows.items() if keep(block_of(k[2]))]
        wrong = [r for r in rs if r["shd"] >= 2]
        right = [r for r in rs if r["shd"] <= 1]
        fw, fr = sum(r["flagged"] for r in wrong), sum(r["flagged"] for r in right)
        out.append(f"{name}: {fw} of {len(wrong)} fits with SHD >= 2 flagged "
                   f"({fw / max(len(wrong), 1):.0%}); {fr} of {len(right)} with SHD <= 1 "
                   f"({fr / max(len(right), 1):.1%})")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    rows = load(argv)
    print(table(rows))
    print()
    print(verdict(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
