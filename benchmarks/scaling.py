"""Scaling benchmark: fit time and memory as d, p and n grow, each size in its own process.

Usage::

    python benchmarks/scaling.py                                  # d, p and n series
    python benchmarks/scaling.py --axis p --values 1000 20000     # one series, chosen sizes
    python benchmarks/scaling.py --out benchmarks/results/scaling --repeats 2

Writes OUT.csv, OUT.md (the table) and OUT.png (time ratio against size
ratio, log-log, and the memory a fit adds relative to its input), and prints
the table with the machine's load average before and after. Series and fixed
settings: ``creator_plugin.benchmark.scaling.AXES``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from creator_plugin.simulation import simulate

__all__ = [
    "AXES",
    "measure_fit",
    "scaling_figure",
    "scaling_markdown",
    "scaling_rows",
    "scaling_series",
]

#: Default series: the axis that grows, its values and the fixed settings.
AXES = {
    "d": {"values": [3, 5, 7, 10], "base": {"n": 1000, "p": None, "K": None, "noise": 0.0}},
    "p": {"values": [1000, 2000, 5000, 10000, 20000],
          "base": {"d": 5, "K": 5, "n": 500, "noise": 0.1}},
    "n": {"values": [10_000, 100_000, 1_000_000], "base": {"d": 5, "K": 5, "p": 5, "noise": 0.0}},
}

_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _status_mb(field: str) -> float:
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", text).group(1)) / 1024


def _child(spec_json: str) -> None:
    """Child process: load the saved environments, fit once, print one JSON line."""
    from creator_plugin import CREATOR

    spec = json.loads(spec_json)
    X = [np.load(f) for f in sorted(Path(spec["dir"]).glob("x*.npy"))]
    rss_before = _status_mb("VmRSS")
    if spec["trace"]:
        tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model = CREATOR(spec["d"], random_state=0, **spec["kwargs"]).fit(X)
        seconds = time.perf_counter() - start
    out = {"seconds": seconds, "rss_before_mb": rss_before, "rss_peak_mb": _status_mb("VmHWM"),
           "adjacency_edges": int(model.adjacency_matrix_.sum())}
    if spec["trace"]:
        kept, peak = tracemalloc.get_traced_memory()
        out.update(traced_peak_mb=peak / 2**20, traced_kept_mb=kept / 2**20)
    print(json.dumps(out))


def _run_child(directory: str, d: int, trace: bool, kwargs: dict) -> dict:
    spec = json.dumps({"dir": directory, "d": d, "trace": trace, "kwargs": kwargs})
    # the child imports this file by its folder, so it times the same code
    here = str(Path(__file__).resolve().parent)
    code = (f"import sys; sys.path.insert(0, {here!r}); "
            "from scaling import _child; _child(sys.argv[1])")
    res = subprocess.run([sys.executable, "-c", code, spec], capture_output=True, text=True,
                         env={**os.environ, **_THREADS}, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"scaling child failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure_fit(
    d: int, K: int, n: int, p: int | None = None, *, noise: float = 0.0, seed: int = 0,
    repeats: int = 1, **creator_kwargs,
) -> dict:
    """Time and memory of one default fit on ``simulate(d, K, n, n_features=p, ...)``.

    Parameters
    ----------
    d, K, n, p : int
        Latents, environments, rows per environment and columns (default d).
    noise : float
        ``measurement_noise`` of the simulation.
    seed : int
        ``random_state`` of the simulation (the fit uses ``random_state=0``).
    repeats : int, default=1
        Timed fits; the fastest counts (the machine may be shared).
    **creator_kwargs
        Passed to :class:`creator_plugin.CREATOR`.

    Returns
    -------
    dict
        ``input_mb`` (the arrays' size), ``seconds``, ``traced_peak_mb``
        (the most the fit held at once, numpy buffers included),
        ``traced_kept_mb`` (what it still holds after: the model),
        ``rss_before_mb`` (the child with the data loaded), ``rss_peak_mb``
        (the child's peak resident set) and ``rss_added_mb`` (their
        difference).
    """
    sim = simulate(d, K, n, n_features=p, measurement_noise=noise, random_state=seed)
    with tempfile.TemporaryDirectory(prefix="creator-scaling-") as tmp:
        for k, x in enumerate(sim.X):
            np.save(Path(tmp) / f"x{k:04d}.npy", x)
        input_mb = sum(x.nbytes for x in sim.X) / 2**20
        del sim
        timed = min((_run_child(tmp, d, False, creator_kwargs) for _ in range(repeats)),
                    key=lambda r: r["seconds"])
        traced = _run_child(tmp, d, True, creator_kwargs)
    return {
        "input_mb": input_mb, "seconds": timed["seconds"],
        "traced_peak_mb": traced["traced_peak_mb"], "traced_kept_mb": traced["traced_kept_mb"],
        "rss_before_mb": timed["rss_before_mb"], "rss_peak_mb": timed["rss_peak_mb"],
        "rss_added_mb": timed["rss_peak_mb"] - timed["rss_before_mb"],
    }


def scaling_series(axis: str, values: list[int] | None = None, *, repeats: int = 1,
                   **creator_kwargs) -> list[dict]:
    """Measure one axis of :data:`AXES`; sizes grow, everything else fixed.

    Each row holds :func:`measure_fit`'s numbers plus ``time_ratio`` and
    ``size_ratio`` (relative to the first size of the series) and
    ``exponent`` (growth exponent of the time from the previous size,
    ``log(t_i / t_{i-1}) / log(s_i / s_{i-1})``; None for the first).
    For the ``"d"`` axis K = d and p = d.
    """
    spec = AXES[axis]
    rows = []
    for v in values or spec["values"]:
        case = {**spec["base"], axis: v}
        d = case["d"]
        K = case["K"] if case.get("K") is not None else d
        p = case["p"] if case.get("p") is not None else d
        row = {"axis": axis, "value": v, "d": d, "K": K, "n": case["n"], "p": p,
               "noise": case["noise"]}
        row.update(measure_fit(d, K, case["n"], p, noise=case["noise"], repeats=repeats,
                               **creator_kwargs))
        rows.append(row)
    for prev, row in zip([None] + rows[:-1], rows):
        row["size_ratio"] = row["value"] / rows[0]["value"]
        row["time_ratio"] = row["seconds"] / rows[0]["seconds"]
        row["exponent"] = None if prev is None else (
            math.log(row["seconds"] / prev["seconds"]) / math.log(row["value"] / prev["value"])
        )
    return rows


def scaling_rows(sizes: list[int], d: int = 5, K: int = 5, **creator_kwargs) -> list[dict]:
    """One default fit per sample size (rows per environment), p = d.

    Returns
    -------
    list of dict
        Per size: ``n``, ``seconds``, ``peak_traced_mb`` and ``peak_rss_mb``
        (see :func:`measure_fit`).
    """
    rows = []
    for n in sizes:
        m = measure_fit(d, K, n, **creator_kwargs)
        rows.append({"n": n, "seconds": m["seconds"], "peak_traced_mb": m["traced_peak_mb"],
                     "peak_rss_mb": m["rss_peak_mb"]})
    return rows


def scaling_markdown(rows: list[dict]) -> str:
    """One Markdown table of :func:`scaling_series` rows (any axes)."""
    header = ["axis", "value", "d, K, n, p", "input MB", "fit s", "time / first",
              "exponent", "traced peak MB", "traced peak / input", "kept / input",
              "RSS peak MB", "RSS added / input"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        exponent = "" if r["exponent"] is None else f"{r['exponent']:.2f}"
        lines.append("| " + " | ".join([
            r["axis"], f"{r['value']:,}", f"{r['d']}, {r['K']}, {r['n']:,}, {r['p']:,}",
            f"{r['input_mb']:.1f}", f"{r['seconds']:.2f}", f"{r['time_ratio']:.2f}", exponent,
            f"{r['traced_peak_mb']:.0f}", f"{r['traced_peak_mb'] / r['input_mb']:.2f}",
            f"{r['traced_kept_mb'] / r['input_mb']:.2f}", f"{r['rss_peak_mb']:.0f}",
            f"{r['rss_added_mb'] / r['input_mb']:.2f}",
        ]) + " |")
    return "\n".join(lines)


def scaling_figure(rows: list[dict], path: str | Path) -> None:
    """Time ratio against size ratio (log-log, one panel per axis) and added memory / input."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes_present = list(dict.fromkeys(r["axis"] for r in rows))
    fig, grid = plt.subplots(2, len(axes_present), figsize=(4.2 * len(axes_present), 7),
                             squeeze=False)
    for j, axis in enumerate(axes_present):
        sub = [r for r in rows if r["axis"] == axis]
        size = np.array([r["size_ratio"] for r in sub])
        ax = grid[0, j]
        ax.loglog(size, [r["time_ratio"] for r in sub], "o-", label="fit time")
        ax.loglog(size, size, ":", color="grey", label="linear")
        for r in sub[1:]:
            ax.annotate(f"{r['exponent']:.2f}", (r["size_ratio"], r["time_ratio"]),
                        textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_title(f"{axis}: time / time at {axis}={sub[0]['value']:,}")
        ax.set_xlabel(f"{axis} / {sub[0]['value']:,}")
        ax.legend(fontsize=8)
        ax = grid[1, j]
        values = [r["value"] for r in sub]
        ax.semilogx(values, [r["traced_peak_mb"] / r["input_mb"] for r in sub], "o-",
                    label="traced peak / input")
        ax.semilogx(values, [r["rss_added_mb"] / r["input_mb"] for r in sub], "s--",
                    label="RSS added / input")
        ax.set_xlabel(axis)
        ax.set_title("memory the fit adds / input size")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axis", choices=list(AXES), nargs="*", default=list(AXES))
    parser.add_argument("--values", type=float, nargs="*", default=None,
                        help="sizes of the (single) --axis; default AXES[axis]['values']")
    parser.add_argument("--repeats", type=int, default=1,
                        help="timed fits per size, the fastest counts")
    parser.add_argument("--out", default="benchmarks/results/scaling")
    args = parser.parse_args(argv)
    if args.values and len(args.axis) != 1:
        parser.error("--values needs exactly one --axis")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, numpy {np.__version__}; "
          f"load average before: {os.getloadavg()}")
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
