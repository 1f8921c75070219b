"""The branches' kept model with the verdict's flags as a second criterion (tuning rows).

Reads ``branch_probe.py`` rows (two branches) and compares, by mean SHD and
better / worse than the fit without branches, three choosers: the package's
(lowest unguarded score; a branch must be lower by more than 1e-8 relative),
``unflagged`` (the same among the models the verdict does not flag, the
package's choice when all are flagged) and ``switch_unflagged`` (the
package's choice, except that a flagged branch never replaces an unflagged
fit without branches). Usage::

    python branch_flag_chooser.py ROWS.jsonl [...]
"""
from __future__ import annotations

import json
import sys

import numpy as np


def _lowest(fits: list[dict]) -> dict:
    best = fits[0]
    for f in fits[1:]:
        if f["score"] < best["score"] - 1e-8 * max(1.0, abs(best["score"])):
            best = f
    return best


CHOOSERS = {
    "score": _lowest,
    "unflagged": lambda fits: _lowest([f for f in fits if not f["flagged"]] or fits),
    "switch_unflagged": lambda fits: (
        fits[0] if _lowest(fits)["flagged"] and not fits[0]["flagged"] else _lowest(fits)),
}


def main(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    base = np.array([r["base"]["shd"] for r in rows], float)
    print(f"{len(rows)} data sets; without branches: mean SHD {base.mean():.3f}")
    print("| chooser | mean SHD | better / worse |")
    print("|---|---|---|")
    for name, choose in CHOOSERS.items():
        shd = np.array([choose([r["base"], *r["branches"]])["shd"] for r in rows], float)
        print(f"| {name} | {shd.mean():.3f} | {int(np.sum(shd < base))} / "
              f"{int(np.sum(shd > base))} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
