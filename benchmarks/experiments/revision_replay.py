"""Replay the graph revision on the inputs of real fits: which graphs, at what CPU.

``CREATOR(revise_graph=True)`` hands :func:`creator_plugin.revision.revise_graph`
the pruning's regression matrices, the entangled features' covariances, the
pruned graph and its decisions. This script fits tuning data sets with the
option on, records those inputs as the fit passes them, and runs the revision
on them again under a CPU clock, so two versions of the revision (run this
script under each, e.g. with ``PYTHONPATH`` pointing at an older checkout) can
be compared on identical inputs: the same graphs, and the CPU of the revision
alone. Usage::

    OMP_NUM_THREADS=1 python revision_replay.py run SET FIRST COUNT OUT.jsonl
    python revision_replay.py compare A.jsonl B.jsonl

SET: ``package`` or ``independent`` (the six bar families at d = K = 5,
n = 1000), ``d10`` (``simulate(10, 10, 2000, setting=1, edge_prob=0.5)``) or
``d10-independent`` (the independent simulator's ``paper`` at d = K = 10,
n = 2000) or ``d20`` / ``d30`` (``simulate(d, d, 5000)`` with edge probability 0.2 /
0.1, as the scale page). One row per fit: the revised graph's edges, the candidates and the
revision's CPU seconds (the best of three replays).
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import zoo  # noqa: E402

import creator_plugin._fit as fit_module  # noqa: E402
from creator_plugin import CREATOR, simulate  # noqa: E402
from creator_plugin.revision import revise_graph  # noqa: E402

FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")


def data_sets(which: str, seed: int):
    """``(label, n_latent, X)`` of one seed of a set."""
    if which in ("package", "independent"):
        return [(f, 5, zoo.data_of(which, f, 5, 5, 1000, seed)[0]) for f in FAMILIES]
    if which == "d10":
        return [("d10", 10, simulate(10, 10, 2000, setting=1, edge_prob=0.5,
                                     random_state=seed).X)]
    if which in ("d20", "d30"):  # the scale page's workloads
        d = int(which[1:])
        edge_prob = {20: 0.2, 30: 0.1}[d]
        return [(which, d, simulate(d, d, 5000, edge_prob=edge_prob, random_state=seed).X)]
    if which == "d10-independent":
        return [("paper", 10, zoo.data_of("independent", "paper", 10, 10, 2000, seed)[0])]
    raise SystemExit(f"unknown set {which!r}")


def run(which: str, first: int, count: int, out: str) -> None:
    captured = []
    original = fit_module.revise_graph

    def capture(B, covs, n_rows, A, decisions, **kwargs):
        captured.append((np.array(B), np.array(covs), np.array(n_rows), np.array(A),
                         [dict(q) for q in decisions]))
        return original(B, covs, n_rows, A, decisions, **kwargs)

    fit_module.revise_graph = capture
    warnings.simplefilter("ignore")
    with open(out, "w") as fh:
        for seed in range(first, first + count):
            for label, d, X in data_sets(which, seed):
                captured.clear()
                CREATOR(d, random_state=seed, revise_graph=True).fit(X)
                B, covs, n_rows, A, decisions = captured[0]
                times = []
                for _ in range(3):
                    start = time.process_time()
                    revised, info = revise_graph(B, covs, n_rows, A, decisions)
                    times.append(time.process_time() - start)
                fh.write(json.dumps({
                    "set": which, "family": label, "seed": seed,
                    "edges": np.argwhere(revised != 0).tolist(),
                    "candidates": info["candidates"], "flips": info["flips"],
                    "cpu": min(times)}) + "\n")
                fh.flush()


def compare(a: str, b: str) -> None:
    rows_a = {(r["set"], r["family"], r["seed"]): r for r in map(json.loads, open(a))}
    rows_b = {(r["set"], r["family"], r["seed"]): r for r in map(json.loads, open(b))}
    for which in sorted({k[0] for k in rows_a}):
        keys = [k for k in rows_a if k[0] == which and k in rows_b]
        differ = [k for k in keys if rows_a[k]["edges"] != rows_b[k]["edges"]]
        with_candidates = sum(bool(rows_a[k]["candidates"]) for k in keys)
        cpu_a = sum(rows_a[k]["cpu"] for k in keys)
        cpu_b = sum(rows_b[k]["cpu"] for k in keys)
        print(f"{which}: {len(keys)} fits ({with_candidates} with candidates), "
              f"same graph in {len(keys) - len(differ)}; revision CPU {cpu_a:.2f} s -> "
              f"{cpu_b:.2f} s ({cpu_a / max(cpu_b, 1e-12):.2f}x)"
              + (f"; differ: {[(k[1], k[2]) for k in differ]}" if differ else ""))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
