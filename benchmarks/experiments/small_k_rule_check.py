"""Frozen check: should ``revise_graph="auto"`` skip the revision when K <= 3?

Design and rule are in ``benchmarks/LOG.md`` ("Frozen design: the revision
only with four or more environments"), written before the seeds were drawn.
Each data set is fitted with ``revise_graph=False`` (what the rule would do
with K <= 3) and with the current default, one JSON line per data set::

    OMP_NUM_THREADS=1 python small_k_rule_check.py run FIRST COUNT OUT.jsonl
    python small_k_rule_check.py summary OUT.jsonl [...]
"""
from __future__ import annotations

import collections
import json
import math
import sys
import time
import warnings
from pathlib import Path

from creator_plugin import CREATOR, simulate
from creator_plugin.benchmark.scoring import score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import independent_simulator  # noqa: E402

#: (simulator, d, K, setting); setting is None for the independent simulator's ``paper``
CELLS = [("package", d, K, s) for d, K in ((2, 2), (3, 3), (4, 3)) for s in (1, 2)] + [
    ("independent", d, K, None) for d, K in ((2, 2), (3, 3), (4, 3))]


def _data(sim: str, d: int, K: int, s, seed: int):
    if sim == "package":
        data = simulate(d, K, 1000, setting=s, random_state=seed)
        return data.X, data.adjacency, data.Y
    data = independent_simulator.simulate("paper", d=d, K=K, n=1000, seed=seed)
    return data.X, data.adjacency, data.latents


def run(first: int, count: int, out: str) -> None:
    with open(out, "a") as fh:
        for seed in range(first, first + count):
            for sim, d, K, s in CELLS:
                X, A, Y = _data(sim, d, K, s, seed)
                row = {"seed": seed, "simulator": sim, "d": d, "K": K, "setting": s}
                for name, revise in (("off", False), ("default", "auto")):
                    t0 = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = CREATOR(d, random_state=seed, revise_graph=revise).fit(X)
                    cpu = time.process_time() - t0
                    sc = score(A, Y, m.adjacency_matrix_, m.latents_, m.causal_order_)
                    row[name] = {"shd": int(sc["shd"]), "cpu": cpu,
                                 "n_est": int(m.adjacency_matrix_.sum())}
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p)]
    cells = collections.defaultdict(list)
    for r in rows:
        cells[(r["simulator"], r["d"], r["K"], r["setting"])].append(r)
    print("| simulator | d | K | setting | data sets | mean SHD: rule (no revision) | default "
          "| rule better / worse | CPU rule / default |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (sim, d, K, s), v in sorted(cells.items(), key=lambda kv: str(kv[0])):
        off = sum(r["off"]["shd"] for r in v) / len(v)
        dft = sum(r["default"]["shd"] for r in v) / len(v)
        better = sum(r["off"]["shd"] < r["default"]["shd"] for r in v)
        worse = sum(r["off"]["shd"] > r["default"]["shd"] for r in v)
        ratio = sum(r["off"]["cpu"] for r in v) / sum(r["default"]["cpu"] for r in v)
        print(f"| {sim} | {d} | {K} | {s if s is not None else '-'} | {len(v)} | {off:.3f} "
              f"| {dft:.3f} | {better} / {worse} | {ratio:.2f} |")
    diffs = [r["off"]["shd"] - r["default"]["shd"] for r in rows]
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1) / n)
    better = sum(x < 0 for x in diffs)
    worse = sum(x > 0 for x in diffs)
    adopt = mean <= 0 and better >= worse
    print(f"\npooled: {n} data sets, paired mean SHD difference (rule - default) {mean:+.4f} "
          f"(SE {se:.4f}); rule better in {better}, worse in {worse}")
    print("rule (fixed before the seeds): adopt if the difference is <= 0 and the rule is "
          f"better at least as often as worse -> {'ADOPT' if adopt else 'do not adopt'}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        run(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
