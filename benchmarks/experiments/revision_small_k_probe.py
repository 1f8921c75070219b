"""Probe: the graph revision at d = 2 and 3 (tuning seeds only).

On the method grid the revision raised the mean SHD in four of the eight
cells at d = 2 and 3. This fits ``simulate(d, K, 1000, setting=s)`` for
d = 2, 3, K = d, 2d, s = 1, 2 with ``revise_graph=False`` and with the
default, one JSON line per data set, and prints per cell the mean SHD of
both, the fits better / worse with the revision and the net number of
edges it adds. Usage::

    OMP_NUM_THREADS=1 python revision_small_k_probe.py run FIRST COUNT OUT.jsonl
    python revision_small_k_probe.py table OUT.jsonl [...]
"""
from __future__ import annotations

import collections
import json
import sys
import warnings

from creator_plugin import CREATOR, simulate
from creator_plugin.benchmark.scoring import score


def run(first: int, count: int, out: str) -> None:
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            for d in (2, 3):
                for K in (d, 2 * d):
                    for s in (1, 2):
                        sim = simulate(d, K, 1000, setting=s, random_state=seed)
                        row = {"seed": seed, "d": d, "K": K, "setting": s}
                        for name, revise in (("off", False), ("auto", "auto")):
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                m = CREATOR(d, random_state=seed, revise_graph=revise).fit(sim.X)
                            sc = score(sim.adjacency, sim.Y, m.adjacency_matrix_, m.latents_,
                                       m.causal_order_)
                            rev = m.diagnostics_["graph_revision"] or {}
                            row[name] = {"shd": int(sc["shd"]), "flips": rev.get("flips", []),
                                         "n_true": int(sim.adjacency.sum()),
                                         "n_est": int(m.adjacency_matrix_.sum())}
                        fh.write(json.dumps(row) + "\n")


def table(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    cells = collections.defaultdict(list)
    for r in rows:
        cells[(r["d"], r["K"], r["setting"])].append(r)
    print("| d | K | setting | fits | mean SHD off | default | better / worse | net edges added |")
    print("|---|---|---|---|---|---|---|---|")
    for (d, K, s), v in sorted(cells.items()):
        off = sum(r["off"]["shd"] for r in v) / len(v)
        auto = sum(r["auto"]["shd"] for r in v) / len(v)
        better = sum(r["auto"]["shd"] < r["off"]["shd"] for r in v)
        worse = sum(r["auto"]["shd"] > r["off"]["shd"] for r in v)
        added = sum(r["auto"]["n_est"] - r["off"]["n_est"] for r in v)
        print(f"| {d} | {K} | {s} | {len(v)} | {off:.2f} | {auto:.2f} | {better} / {worse} "
              f"| {added:+d} |")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        run(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
