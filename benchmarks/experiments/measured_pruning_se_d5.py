"""Diagnosis: are ``measured``'s extra edges the corrected moments' sampling error?

With the true directions and ``measurement_noise="auto"``
(``measured_noise_oracle_d5.py``: the estimate of the noise is as good as
the true variances), ``measured`` keeps more edges than its graph has. For
every pair the pruning tests on those directions (d = K = 5, n = 1000,
tuning seeds only), this records the statistic in units of the level, whether
the pair is a true edge, and the statistic's SD over row resamples of every
environment with the directions and the noise estimate fixed (``B``
resamples): an extra edge within a few SDs of the level is the sampling
error of the corrected regressions, one many SDs above it is their bias.
The same without the correction is recorded beside it.

    python measured_pruning_se_d5.py {package,independent} FIRST COUNT B OUT.jsonl
    python measured_pruning_se_d5.py summary OUT.jsonl [...]
"""
import json
import os
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

import creator_plugin._fit as fitmod
from creator_plugin._config import FitConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracle_directions_diag import TRUTH, _causal_order, _order, _use, oracle_ordering  # noqa: E402
from zoo import TUNING_SEEDS, data_of  # noqa: E402


def pair_records(X, A, seed: int, n_boot: int, auto: bool) -> tuple[list[dict], list | None]:
    """Every tested pair of the true-direction fit (statistic / level, truth, bootstrap SD,
    every environment's share of the statistic), and the noise estimate's shrinkage."""
    config = FitConfig(5, quality=False, **({"measurement_noise": "auto", "polish": False}
                                          if auto else {}))
    level = fitmod._threshold(config, len(X))
    _use(oracle_ordering)()
    try:
        stage = fitmod.order_stage(X, config, seed, key=False)
    finally:
        _use(_order)()
    _, decisions, tested, _ = fitmod._prune_stage(stage, config, level)
    shares = _residual_shares(tested, decisions)
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_boot):
        rows = tuple(x[rng.integers(0, len(x), len(x))] for x in stage.reduced)
        boot.append([q["statistic"] for q in
                     fitmod._prune_stage(replace(stage, reduced=rows), config, level)[1]])
    sd = np.std(np.array(boot), axis=0, ddof=1)
    order = _causal_order(np.asarray(A) != 0)
    shrinkage = None if stage.noise is None else stage.noise.shrinkage.round(4).tolist()
    return [{"parent": q["parent"], "child": q["child"],
             "true": bool(A[order[q["parent"]], order[q["child"]]]),
             "ratio": q["statistic"] / level, "sd": float(s) / level, "edge": q["edge"],
             "env_shares": [round(float(v), 4) for v in share]}
            for q, s, share in zip(decisions, sd, shares)], shrinkage


def _residual_shares(tested: np.ndarray, decisions: list[dict]) -> list[np.ndarray]:
    """Every environment's share of each pair's squared residual (the rule's statistic)."""
    kept: dict = {}
    shares = []
    for q in decisions:
        i, j = q["child"], q["parent"]
        basis = [tested[:, i, i], *kept.get(i, [])]
        Q, _ = np.linalg.qr(np.column_stack(basis))
        b = tested[:, i, j]
        r = b - Q @ (Q.T @ b)
        shares.append(r**2 / max(float(r @ r), 1e-300))
        if q["edge"]:
            kept.setdefault(i, []).append(b)
    return shares


def run(sim: str, first: int, count: int, n_boot: int, out: str) -> None:
    seeds = range(first, first + count)
    if seeds.start < TUNING_SEEDS.start or seeds.stop > TUNING_SEEDS.stop:
        raise SystemExit("tuning seeds only")
    warnings.simplefilter("ignore")
    with open(out, "a") as fh:
        for seed in seeds:
            X, A, Y = data_of(sim, "measured", 5, 5, 1000, seed)
            A = np.asarray(A) != 0
            TRUTH.update(A=A, Y=Y)
            auto, shrinkage = pair_records(X, A, seed, n_boot, True)
            row = {"simulator": sim, "seed": seed, "shrinkage": shrinkage, "auto": auto,
                   "raw": pair_records(X, A, seed, n_boot, False)[0]}
            fh.write(json.dumps(row) + "\n")
            fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    print("| simulator | moments | extra edges | their statistic / level (median) "
          "| their distance above the level in SDs (median; ≤ 2 / ≤ 3) "
          "| missed edges | true non-edges within 2 SDs above the level, not kept |")
    print("|---|---|---|---|---|---|---|")
    for sim in sorted({r["simulator"] for r in rows}):
        for kind in ("raw", "auto"):
            qs = [q for r in rows if r["simulator"] == sim for q in r[kind]]
            extra = [q for q in qs if q["edge"] and not q["true"]]
            missed = [q for q in qs if q["true"] and not q["edge"]]
            z = np.array([(q["ratio"] - 1) / max(q["sd"], 1e-12) for q in extra])
            ratio = np.median([q["ratio"] for q in extra]) if extra else float("nan")
            print(f"| {sim} | {kind} | {len(extra)} | {ratio:.2f} "
                  f"| {np.median(z) if z.size else float('nan'):.1f}; "
                  f"{np.sum(z <= 2)} / {np.sum(z <= 3)} | {len(missed)} | |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
