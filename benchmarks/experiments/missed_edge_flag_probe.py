"""Probe: would a flag for "a pair below the level far outside its sampling error" help the verdict?

Acceptance item 4 asks the default verdict to flag 70 % of the d = 5 fits
with SHD >= 2; it flags about half. Outside ``measured`` most of the ones it
misses have the right order and miss an edge whose weights vary too little
across the environments for the pruning level. Such an edge's coefficients
can still be far outside their sampling error (``pruning_null_se_d5.py``).
Every default fit (with its verdict) records, for every tested pair, the
statistic in units of the level and the chi-square p-value of its
coefficients against their sampling error (``pruning_wald_trial``'s test,
with a level that keeps every decision of the default rule). The candidate
flags are read from those rows afterwards (``summary``): a fit is flagged
when some pair without an edge has a statistic of at least ``f`` times the
level and a p-value below ``alpha``. Tuning seeds only.

    python missed_edge_flag_probe.py run {package,independent} FIRST COUNT OUT.jsonl
    python missed_edge_flag_probe.py summary OUT.jsonl [...]
"""
import json
import os
import sys
import warnings
from pathlib import Path

import creator_plugin._fit as fitmod
from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pruning_wald_trial  # noqa: E402
from zoo import BAR_FAMILIES, TUNING_SEEDS, data_of  # noqa: E402

#: p-values are recorded; the decisions are the default rule's (every p < 2).
_RECORDING = pruning_wald_trial._variant(1.0, 2.0)


def run(sim: str, first: int, count: int, out: str) -> None:
    seeds = range(first, first + count)
    if seeds.start < TUNING_SEEDS.start or seeds.stop > TUNING_SEEDS.stop:
        raise SystemExit("tuning seeds only")
    warnings.simplefilter("ignore")
    original = fitmod._prune_stage
    with open(out, "a") as fh:
        for seed in seeds:
            for family in BAR_FAMILIES:
                X, A, Y = data_of(sim, family, 5, 5, 1000, seed)
                fitmod._prune_stage = _RECORDING
                try:
                    model = CREATOR(5, random_state=seed).fit(X)
                finally:
                    fitmod._prune_stage = original
                s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
                issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
                pairs = [[round(q["statistic"] / q["threshold"], 4), q["p_value"], q["edge"]]
                         for q in model.diagnostics_["pruning"]]
                fh.write(json.dumps({"simulator": sim, "family": family, "seed": seed,
                                     "shd": int(s["shd"]), "flagged": bool(issues),
                                     "pairs": pairs}) + "\n")
                fh.flush()


def flag(pairs, f: float, alpha: float) -> bool:
    return any(not edge and ratio >= f and p < alpha for ratio, p, edge in pairs)


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    wrong = [r for r in rows if r["shd"] >= 2]
    right = [r for r in rows if r["shd"] <= 1]
    print(f"{len(rows)} fits: {len(wrong)} with SHD >= 2, {len(right)} with SHD <= 1")
    print("| flag | wrong fits flagged | right fits flagged |")
    print("|---|---|---|")
    print(f"| verdict | {sum(r['flagged'] for r in wrong)} | {sum(r['flagged'] for r in right)} |")
    for f in (0.25, 0.5, 0.75):
        for alpha in (1e-3, 1e-6, 1e-10):
            w = sum(r["flagged"] or flag(r["pairs"], f, alpha) for r in wrong)
            g = sum(r["flagged"] or flag(r["pairs"], f, alpha) for r in right)
            print(f"| verdict or (statistic >= {f} level, p < {alpha:g}) "
                  f"| {w} ({w / len(wrong):.0%}) | {g} ({g / len(right):.1%}) |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
