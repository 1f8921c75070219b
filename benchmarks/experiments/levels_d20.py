"""The order check's statistics on a few default fits at d = 20 (beyond the levels' range).

``simulate(20, 20, 5000, edge_prob=0.2)`` on seeds 60000-60003 (used for
nothing else), default fits; one JSON line per fit with SHD, the calibrated
ICA disagreement, the worst latent condition number, the weak ordering
steps and the issues raised. Usage::

    python benchmarks/experiments/levels_d20.py \\
        > benchmarks/results/agreement_level/d20_60000-60003.jsonl
"""

import json
import warnings

from creator_plugin import CREATOR
from creator_plugin.metrics import evaluate_model
from creator_plugin.simulation import simulate


def main() -> None:
    warnings.simplefilter("ignore")
    for seed in range(60000, 60004):
        sim = simulate(20, 20, 5000, edge_prob=0.2, random_state=seed)
        model = CREATOR(20, random_state=seed).fit(sim.X)
        quality = model.diagnostics_["quality"]
        checks = quality["checks"]
        cond = checks["conditioning"]
        print(json.dumps({
            "seed": seed, "shd": int(evaluate_model(model, sim)["shd"]),
            "cal": checks["ica_agreement"]["calibrated"],
            "cond": cond["condition_numbers"][cond["worst_environment"]],
            "weak": checks["weak_ordering_steps"],
            "issues": sorted({i["kind"] for i in quality["issues"]}),
            "levels": checks["levels"],
        }), flush=True)


if __name__ == "__main__":
    main()
