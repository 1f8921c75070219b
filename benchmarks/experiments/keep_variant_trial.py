"""Trial: what the ordering does with a start whose joint re-estimate leaves its source.

The keep rule (``ordering._keep_sources``) keeps such a start when it scores
lower than its re-estimate. On data with one Gaussian noise it costs accuracy
(benchmarks/LOG.md, "The keep rule as the default: every table measured
again"): two re-estimates leave their sources, both starts are kept, and a
kept start wins over a third start that is right but, being Gaussian, scores
worse under the consistency score. Variants, each patched in for
``_keep_sources``:

* ``none``: the re-estimates as they are (the version before the rule);
* ``keep``: the rule as it is (the default);
* ``drop``: a start whose re-estimate leaves its source takes no part in the
  step's choice while another start's re-estimate stays on its own source;
  when none stays, the keep rule applies;
* ``minority``: the keep rule only where the re-estimate leaves its start's
  source in fewer than half of the environments (a source permuted in one or
  a few environments, the case the rule was made for); a re-estimate that
  leaves it in most environments has moved to another direction altogether
  and is judged by its own score, as before the rule.

Tuning sets only (the keep rule's tuning seeds and the seeds the Gaussian
guard was designed on)::

    python keep_variant_trial.py zoo 0 30 OUT.jsonl
    python keep_variant_trial.py zoo-independent 0 30 OUT.jsonl
    python keep_variant_trial.py d10 0 50 OUT.jsonl
    python keep_variant_trial.py d10 91000 80 OUT.jsonl
    python keep_variant_trial.py one_gaussian 2000 100 OUT.jsonl
    python keep_variant_trial.py one_gaussian 96000 200 OUT.jsonl

Rows are appended, one per (set, family, seed), with every variant's SHD,
correct order, LocR² and CPU seconds.
"""
import json
import os
import sys
import time
import warnings

import numpy as np

import creator_plugin.ordering as ordmod
from creator_plugin import simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.independence import ica_consistency_sources
from creator_plugin.metrics import evaluate
from creator_plugin.simulation import simulate_family

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import independent_simulator  # noqa: E402
import verdict_checks  # noqa: E402

BAR = ["paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n"]
_keep = ordmod._keep_sources


def _none(R_list, ica_dirs, starts, refined):
    scores, _ = ica_consistency_sources(R_list, refined, ica_dirs)
    return refined.copy(), [], scores


def _drop(R_list, ica_dirs, starts, refined):
    s = starts.shape[1]
    starts = starts / np.linalg.norm(starts, axis=0)
    scores, sources = ica_consistency_sources(R_list, np.hstack([starts, refined]), ica_dirs)
    left = [c for c in range(s) if (sources[c] != sources[s + c]).any()]
    chosen = scores[s:].copy()
    directions = refined.copy()
    if len(left) < s:
        chosen[left] = np.inf
        return directions, [], chosen
    kept = [c for c in left if scores[c] < scores[s + c]]
    directions[:, kept] = starts[:, kept]
    chosen[kept] = scores[kept]
    return directions, kept, chosen


def _minority(R_list, ica_dirs, starts, refined):
    s, K = starts.shape[1], len(R_list)
    starts = starts / np.linalg.norm(starts, axis=0)
    scores, sources = ica_consistency_sources(R_list, np.hstack([starts, refined]), ica_dirs)
    differ = (sources[:s] != sources[s:]).sum(axis=1)
    kept = [c for c in range(s) if 0 < differ[c] < K / 2 and scores[c] < scores[s + c]]
    directions = refined.copy()
    directions[:, kept] = starts[:, kept]
    chosen = scores[s:].copy()
    chosen[kept] = scores[kept]
    return directions, kept, chosen


VARIANTS = {"none": _none, "keep": _keep, "drop": _drop, "minority": _minority}


def data(mode, family, seed):
    if mode == "d10":
        sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=seed)
        return 10, sim.X, sim.adjacency, sim.Y
    if mode == "zoo":
        sim = simulate_family(family, 5, 5, 1000, random_state=seed)
        return 5, sim.X, sim.adjacency, sim.Y
    if mode == "zoo-independent":
        sim = independent_simulator.simulate(family, 5, 5, 1000, seed=seed)
        return 5, sim.X, sim.adjacency, sim.latents
    if mode == "one_gaussian":
        sim = verdict_checks.make("one_gaussian", seed)
        return sim.adjacency.shape[0], sim.X, sim.adjacency, sim.Y
    raise ValueError(f"unknown set {mode!r}")


def run(mode: str, first: int, count: int, out: str, variants: dict, restore) -> None:
    """Fit every data set of ``mode`` once per variant and append one row per data set.

    ``variants`` maps a name to a function that sets the variant up before
    its fit; ``restore`` is called after the last one.
    """
    families = BAR if mode.startswith("zoo") else [mode]
    with open(out, "a") as fh:
        for family in families:
            for seed in range(first, first + count):
                d, X, A, Y = data(mode, family, seed)
                rec = {"set": mode, "family": family, "seed": seed}
                for name, setup in variants.items():
                    setup()
                    t0 = time.process_time()
                    r = fit_arrays(X, FitConfig(d, quality=False), random_state=seed)
                    cpu = time.process_time() - t0
                    ev = evaluate(A, Y, r.adjacency, r.latents)
                    rec[name] = {"shd": int(ev["shd"]), "order": bool(ev["correct_order"]),
                                 "locr2": round(float(ev["locr2"]), 4), "cpu": round(cpu, 3)}
                restore()
                fh.write(json.dumps(rec) + "\n")
                fh.flush()


def patch(name: str, fn, module=ordmod):
    """A variant's setup: ``module.<name> = fn``."""
    def setup():
        setattr(module, name, fn)
    return setup


def _use(fn):
    return patch("_keep_sources", fn)


def cli(variants: dict, restore) -> None:
    """``run`` on the command line's ``SET FIRST COUNT OUT``."""
    warnings.simplefilter("ignore")
    mode, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    run(mode, first, count, out, variants, restore)


def main() -> None:
    cli({name: _use(fn) for name, fn in VARIANTS.items()}, _use(_keep))


if __name__ == "__main__":
    main()
