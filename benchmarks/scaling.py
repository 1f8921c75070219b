"""Scaling benchmark: fit time and memory as d, p and n grow, each size in its own process.

Usage::

    python benchmarks/scaling.py                                  # d, p and n series
    python benchmarks/scaling.py --axis p --values 1000 20000     # one series, chosen sizes
    python benchmarks/scaling.py --out benchmarks/results/scaling --repeats 2
    python benchmarks/scaling.py --axis --compare-reductions     # Gram route vs randomized_svd

Writes OUT.csv, OUT.md (the table) and OUT.png (time ratio against size
ratio, log-log, and the memory a fit adds relative to its input), and prints
the table with the machine's load average before and after. Series and fixed
settings: ``creator_plugin.benchmark.scaling.AXES``.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin.benchmark.scaling import (
    AXES,
    compare_reductions,
    scaling_figure,
    scaling_markdown,
    scaling_series,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axis", choices=list(AXES), nargs="*", default=list(AXES))
    parser.add_argument("--values", type=float, nargs="*", default=None,
                        help="sizes of the (single) --axis; default AXES[axis]['values']")
    parser.add_argument("--repeats", type=int, default=1,
                        help="timed fits per size, the fastest counts")
    parser.add_argument("--out", default="benchmarks/results/scaling")
    parser.add_argument("--compare-reductions", action="store_true",
                        help="also time the reduction of p=20,000 columns two ways")
    args = parser.parse_args(argv)
    if args.values and len(args.axis) != 1:
        parser.error("--values needs exactly one --axis")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, numpy {np.__version__}; "
          f"load average before: {os.getloadavg()}")
    if args.compare_reductions:
        rows = compare_reductions()
        top = rows[0]["eigenvalues"][:50]
        print("| reduction, p=20,000, N=2,500 | s | traced peak MB | max rel. diff of the "
              "leading 5 / 50 eigenvalues |\n|---|---|---|---|")
        for r in rows:
            diff = np.abs(r["eigenvalues"][:50] / top - 1)
            print(f"| {r['method']} | {r['seconds']:.2f} | {r['traced_peak_mb']:.0f} | "
                  f"{diff[:5].max():.1e} / {diff.max():.1e} |", flush=True)
    rows = []
    for axis in args.axis:
        values = [int(v) for v in args.values] if args.values else None
        rows += scaling_series(axis, values, repeats=args.repeats)
        print(scaling_markdown([r for r in rows if r["axis"] == axis]), flush=True)
    if not rows:
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(scaling_markdown(rows) + "\n")
    scaling_figure(rows, out.with_suffix(".png"))
    print(f"load average after: {os.getloadavg()}; wrote {out}.csv, .md, .png")


if __name__ == "__main__":
    main()
