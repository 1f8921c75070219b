"""Few rows per environment: the factor tests with and without the row budget.

The factor tests behind ``select_n_latent`` and the verdict's ``n_latent``
check use at most ``ROWS_PER_TESTED_COLUMN`` (3) rows of the smallest
environment per tested column. The rule was chosen on seeds 2000-2039
(d = 3, K = 4, 5 % measurement noise, n = 30-120 rows per environment, p =
n / 4 to n / 2.5). This script measures it on fresh seeds and on other
workloads, against the tests without the budget (every column up to
``max_columns`` = 60, as before): for each data set, the number of latents
``select_n_latent`` chooses (None when it took more than ``TIMEOUT``
seconds), whether the true ``n_latent`` is reported as
leaving out signal (``n_latent_evidence`` status ``"too_few"``: a false
alarm of the verdict) and whether ``n_latent = d - 1`` is (power).

Workloads: the zoo's ``measured`` family (p = 4d, 5 % measurement noise) on
both simulators at d = 5, K = 5; the package's ``simulate`` with p = n
and p = 2n measurements (5 % measurement noise), d = 3 and 5, K = 4; and
with 15 or 20 rows per environment and p = 12 or 50 (d = 3, K = 4), where
the rule alone would leave too few columns to test three latents.

    python rows_per_column.py choose            # the tuning runs the rule was chosen on
    python rows_per_column.py run FIRST_SEED SEEDS OUT.jsonl
    python rows_per_column.py summary OUT.jsonl
"""
from __future__ import annotations

import signal
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import dimension, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import independent_simulator  # noqa: E402
import row_files  # noqa: E402

from creator_plugin.simulation import simulate_family  # noqa: E402

#: The rule's rows per tested column (the package's) and a value so small that the
#: budget never binds: every column up to ``max_columns`` is tested, as before the rule.
BUDGET = dimension.ROWS_PER_TESTED_COLUMN
NO_BUDGET = 1e-9


def cells() -> list[dict]:
    out = [{"workload": f"measured ({sim})", "simulator": sim, "d": 5, "K": 5, "n": n}
           for sim in ("package", "independent") for n in (30, 45, 60, 120)]
    out += [{"workload": f"simulate p = {ratio}n", "simulator": "simulate", "d": d, "K": 4,
             "n": n, "ratio": ratio} for d in (3, 5) for n in (40, 80, 160) for ratio in (1, 2)]
    # Very few rows: the row rule alone would leave too few columns to test d = 3.
    out += [{"workload": f"simulate p = {p}", "simulator": "simulate", "d": 3, "K": 4, "n": n,
             "p": p} for n in (15, 20) for p in (12, 50)]
    return out


def data(cell: dict, seed: int) -> list[np.ndarray]:
    if cell["simulator"] == "package":
        return simulate_family("measured", cell["d"], cell["K"], cell["n"], random_state=seed).X
    if cell["simulator"] == "independent":
        return independent_simulator.simulate("measured", cell["d"], cell["K"], cell["n"],
                                              seed=seed).X
    p = cell["p"] if "p" in cell else cell["ratio"] * cell["n"]
    return simulate(cell["d"], cell["K"], cell["n"], n_features=p, measurement_noise=0.05,
                    random_state=seed).X


#: Seconds a single call may take; without the budget, data whose every
#: per-environment test is (wrongly) rejected go on to the shared-subspace
#: test, whose fit on 40 or more columns took more than ten minutes on one.
TIMEOUT = 15


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _timed(fn, *args, **kwargs):
    """``fn(...)``, or None after ``TIMEOUT`` seconds."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        return fn(*args, **kwargs)
    except _Timeout:
        return None
    finally:
        signal.alarm(0)


def measure(X: list[np.ndarray], d: int) -> dict:
    """Both variants' choice, false alarm at d and detection at d - 1 (None: timed out)."""
    out = {}
    for variant, rows_per_column in (("budget", BUDGET), ("no_budget", NO_BUDGET)):
        dimension.ROWS_PER_TESTED_COLUMN = rows_per_column
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sel = _timed(dimension.select_n_latent, X, random_state=0)
                at_d = dimension.n_latent_evidence(X, d, random_state=0)
                below = dimension.n_latent_evidence(X, d - 1, random_state=0)
        finally:
            dimension.ROWS_PER_TESTED_COLUMN = BUDGET
        out[variant] = {"chosen": None if sel is None else int(sel.n_latent),
                        "false_alarm": at_d["status"] == "too_few",
                        "power": below["status"] == "too_few",
                        "columns": int(at_d["n_columns_tested"])}
    return out


def run(first: int, count: int, path: Path) -> None:
    done = set()
    if row_files.exists(path):
        done = {(r["workload"], r["d"], r["n"], r["seed"])
                for r in row_files.read_jsonl(path)}
    for cell in cells():
        for seed in range(first, first + count):
            key = (cell["workload"], cell["d"], cell["n"], seed)
            if key in done:
                continue
            row = {**cell, "seed": seed, **measure(data(cell, seed), cell["d"])}
            row_files.append_jsonl(path, [row])


def summary(paths: list[str]) -> str:
    rows = row_files.read_jsonl(paths)
    lines = ["| workload | d | n per environment | data sets | columns tested (budget / none) "
             "| `select_n_latent` right: budget | none | true d flagged: budget | none "
             "| d - 1 flagged: budget | none |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = list(dict.fromkeys((r["workload"], r["d"], r["n"]) for r in rows))
    for w, d, n in keys:
        rs = [r for r in rows if (r["workload"], r["d"], r["n"]) == (w, d, n)]

        def count(variant, what, rs=rs, d=d):
            if what == "right":
                late = sum(r[variant]["chosen"] is None for r in rs)
                right = sum(r[variant]["chosen"] == d for r in rs)
                return f"{right}" + (f" ({late} timed out)" if late else "")
            return sum(r[variant][what] for r in rs)

        cols = f"{rs[0]['budget']['columns']} / {rs[0]['no_budget']['columns']}"
        lines.append(f"| {w} | {d} | {n} | {len(rs)} | {cols} | "
                     + " | ".join(f"{count(v, what)}" for what in ("right", "false_alarm", "power")
                                  for v in ("budget", "no_budget")) + " |")
    return "\n".join(lines)


def choose() -> None:
    """Seeds 2000-2039, d = 3, K = 4: false rejections of the true model and
    detections of d - 1, with every column tested, at 2.5, 3 and 4 rows per column."""
    dimension.ROWS_PER_TESTED_COLUMN = NO_BUDGET
    for n in (30, 45, 60, 90, 120):
        for rows_per_column in (2.5, 3, 4):
            p = int(n / rows_per_column)
            if p < 7:
                continue
            false = found = 0
            for s in range(2000, 2040):
                X = simulate(3, 4, n, n_features=p, measurement_noise=0.05, random_state=s).X
                false += dimension.n_latent_evidence(X, 3, random_state=0, max_columns=None)[
                    "status"] == "too_few"
                found += dimension.n_latent_evidence(X, 2, random_state=0, max_columns=None)[
                    "status"] == "too_few"
            print(f"n = {n}, p = {p} ({n / p:.1f} rows per column): true model rejected in "
                  f"{false} of 40, d - 1 in {found} of 40", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "choose":
        choose()
    elif sys.argv[1] == "run":
        run(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
    else:
        print(summary(sys.argv[2:]))
