"""Record of the likelihood disentanglement trial (BENCHMARKS.md, "Accuracy at larger d").

Usage: python disentangle_variant.py MODE D N FIRST_SEED COUNT OUT.jsonl

MODE is ``subspace`` (the default) or ``likelihood``; the data of seed s are
``simulate(D, D, N, setting=1, edge_prob=0.5, random_state=s)`` and the fit
``CREATOR(D, disentangle=MODE, quality=False, random_state=s)`` (the verdict
does not change the fit). One JSON line per fit: SHD, LocR², seconds and
``diagnostics_["disentangle"]``. The records beside this script:
``disentangle_tuning_seeds0-49.jsonl`` (d = 5, 7 at n = 1000, both modes;
d = 10 at n = 2000, likelihood; the subspace d = 10 tuning fits are
``../disentangle_diagnosis/tuning_0-49.jsonl``) and ``disentangle_fresh.jsonl``
(d = 10, n = 2000, seeds 1000-1059 and 2000-2019, both modes).
"""

import json
import sys
import time
import warnings

from creator_plugin import CREATOR, metrics, simulate


def main() -> None:
    mode = sys.argv[1]
    d, n, first, count = (int(a) for a in sys.argv[2:6])
    warnings.simplefilter("ignore")
    with open(sys.argv[6], "a") as fh:
        for seed in range(first, first + count):
            sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
            start = time.perf_counter()
            m = CREATOR(d, random_state=seed, quality=False, disentangle=mode).fit(sim.X)
            seconds = time.perf_counter() - start
            ev = metrics.evaluate(sim.adjacency, sim.Y, m.adjacency_matrix_, m.latents_,
                                  m.causal_order_)
            fh.write(json.dumps({
                "mode": mode, "d": d, "n": n, "seed": seed, "shd": int(ev["shd"]),
                "locr2": float(ev["locr2"]), "s": seconds,
                "ref": m.diagnostics_.get("disentangle"),
            }) + "\n")
            fh.flush()


if __name__ == "__main__":
    main()
