"""How many graphs the revision scores in default fits (the budget check; lab script).

Usage (one JSON line per data set)::

    OMP_NUM_THREADS=1 python revision_budget_check.py SET FIRST COUNT > OUT.jsonl

SET: ``d20`` (``simulate(20, 20, 5000, edge_prob=0.2)``), ``d30``
(``simulate(30, 30, 5000, edge_prob=0.1)``), ``d10``
(``simulate(10, 10, 2000, setting=1, edge_prob=0.5)``) or ``d10i`` (the
independent simulator's ``paper`` at d = K = 10, n = 2000).
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import zoo  # noqa: E402

from creator_plugin import CREATOR, simulate  # noqa: E402


def data(which: str, seed: int):
    """``(X, d)`` of one data set."""
    if which == "d20":
        return simulate(20, 20, 5000, edge_prob=0.2, random_state=seed).X, 20
    if which == "d30":
        return simulate(30, 30, 5000, edge_prob=0.1, random_state=seed).X, 30
    if which == "d10":
        return simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed).X, 10
    if which == "d10i":
        return zoo.data_of("independent", "paper", 10, 10, 2000, seed)[0], 10
    raise SystemExit(f"unknown set {which!r}")


def main(which: str, first: int, count: int) -> None:
    for seed in range(first, first + count):
        X, d = data(which, seed)
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = CREATOR(d, random_state=seed).fit(X)
            except ValueError as exc:
                print(json.dumps({"set": which, "seed": seed, "failed": str(exc)[:80]}),
                      flush=True)
                continue
        record = model.diagnostics_["graph_revision"]
        print(json.dumps({"set": which, "seed": seed, "candidates": len(record["candidates"]),
                          "n_scores": record["n_scores"], "stopped": record["stopped"],
                          "cpu": round(time.process_time() - start, 1)}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
