"""Trial: which signals of the ordering steps tell the wrong fits the verdict misses.

The default verdict flags 39 % of the fits with SHD >= 2 on the zoo's six bar
families (the zoo page). Every fit records its ordering steps
(``diagnostics_["ordering"]``); this script reads, per fit, signals of an
unreliable step that cost nothing to compute, beside the verdict's own issues:

* ``max_chosen``: the largest ICA-consistency score of a chosen direction
  over the steps with re-estimation (a step with no consistent candidate);
* ``min_margin``: the smallest gap between the chosen re-estimate's score and
  the next best re-estimate's, relative to the chosen score plus 0.01
  (a near-tie between two sources);
* ``kept_chosen``: how many steps chose a kept start (the keep rule);
* ``n_kept``: kept starts in all.

Tuning seeds only (the zoo's 0-49)::

    python step_signals_trial.py package 0 50 OUT.jsonl
    python step_signals_trial.py independent 0 50 OUT.jsonl
"""
import json
import os
import sys
import warnings

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.metrics import evaluate

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from zoo import data_of  # noqa: E402

BAR = ["paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n"]


def signals(steps: list[dict]) -> dict:
    chosen, margins, kept_chosen, n_kept = [], [], 0, 0
    for st in steps:
        refined = st.get("refined_scores")
        if not refined:
            continue
        r = np.sort(np.asarray(refined))
        chosen.append(float(r[0]))
        if r.size > 1:
            margins.append(float((r[1] - r[0]) / (r[0] + 0.01)))
        kept = st.get("kept_starts") or []
        n_kept += len(kept)
        kept_chosen += int(int(np.argmin(refined)) in kept)
    return {"max_chosen": max(chosen, default=0.0),
            "min_margin": min(margins, default=float("inf")),
            "kept_chosen": kept_chosen, "n_kept": n_kept}


def main() -> None:
    warnings.simplefilter("ignore")
    simulator, first, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "a") as fh:
        for family in BAR:
            for seed in range(first, first + count):
                X, A, Y = data_of(simulator, family, 5, 5, 1000, seed)
                model = CREATOR(5, random_state=seed).fit(X)
                ev = evaluate(A, Y, model.adjacency_matrix_, model.latents_)
                issues = [i["kind"] for i in model.diagnostics_["quality"]["issues"]]
                fh.write(json.dumps({"simulator": simulator, "family": family, "seed": seed,
                                     "shd": int(ev["shd"]), "issues": issues,
                                     **signals(model.diagnostics_["ordering"])}) + "\n")
                fh.flush()


if __name__ == "__main__":
    main()
