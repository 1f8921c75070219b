"""Diagnosis: the pruning statistic against its own sampling error.

The pruning's coefficients are, per environment, regression coefficients of
every feature on the earlier ones (the noise maps are Gram-Schmidt residuals
computed on the sample). A non-edge's coefficient is sampling error whose
size grows as the regressor's residual on the *other* regressors shrinks:
where a child copies its parent almost exactly, the parent's coefficient in
a grandchild's regression is poorly determined and the rule's statistic can
pass the level on sampling error alone.

(``benchmarks/experiments/pruning_se.py`` measured a bootstrap SD of the
statistic with the noises and the features held fixed; the regression of
those noises on those features is exact on every resample, so that SD
omitted the sampling error of the noise maps and was near 0.)

For every bar family (d = K = 5, n = 1000, tuning seeds only) and every
tested pair, with the true directions (``oracle_directions_diag``), this
records the statistic in units of the level, whether the pair is a true
edge, the rule's decision, and ``W``: the squared residual of the pair's
coefficient vector (the part the rule measures) in units of its sampling
variance, environment by environment, summed (``B`` row resamples with the
noise maps recomputed on each), with its degrees of freedom (K minus the
dimension projected out). Under no edge ``W`` is about chi-square.

    python pruning_null_se_d5.py {package,independent} FIRST COUNT B OUT.jsonl [FAMILIES [--auto]]

``--auto``: with ``measurement_noise="auto"`` (the corrected moments, the
estimate held fixed over the resamples).
    python pruning_null_se_d5.py summary OUT.jsonl [...]
"""
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

import creator_plugin._fit as fitmod
from creator_plugin._config import FitConfig
from creator_plugin.measurement_noise import corrected_pruning_moments
from creator_plugin.ordering import _ordered_noise_maps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracle_directions_diag import TRUTH, _causal_order, _order, _use, oracle_ordering  # noqa: E402
from zoo import BAR_FAMILIES, TUNING_SEEDS, data_of  # noqa: E402


def _tested(X_red, alphas, n_boot: int, rng, noise=None) -> tuple[np.ndarray, np.ndarray]:
    """The tested coefficients, and their SD per entry over row resamples (with a
    measurement-noise estimate ``noise``: from the corrected moments)."""
    n_rows = [x.shape[0] for x in X_red]

    def tested_of(grams):
        if noise is not None:
            grams = noise.signal_grams(grams)
        maps = _ordered_noise_maps(grams, n_rows, alphas)
        return corrected_pruning_moments(grams, n_rows, alphas, maps)[1]

    centred = [x - x.mean(axis=0) for x in X_red]
    base = tested_of([x.T @ x for x in centred])
    boot = []
    for _ in range(n_boot):
        rows = [x[rng.integers(0, len(x), len(x))] for x in X_red]
        try:
            boot.append(tested_of([(r - r.mean(axis=0)).T @ (r - r.mean(axis=0)) for r in rows]))
        except np.linalg.LinAlgError:  # a corrected resample that is not positive definite
            continue
    return base, np.std(np.array(boot), axis=0, ddof=1)


def pair_records(X, A, seed: int, n_boot: int, auto: bool = False) -> list[dict]:
    config = FitConfig(5, quality=False, **({"measurement_noise": "auto", "polish": False}
                                          if auto else {}))
    level = fitmod._threshold(config, len(X))
    _use(oracle_ordering)()
    try:
        stage = fitmod.order_stage(X, config, seed, key=False)
    finally:
        _use(_order)()
    X_red = list(stage.reduced)
    tested, sd = _tested(X_red, stage.ordering.alphas, n_boot, np.random.default_rng(seed),
                         stage.noise)
    _, decisions = fitmod.prune(tested, rule="residual", threshold=level)
    order = _causal_order(A)
    K = tested.shape[0]
    kept: dict = {}
    out = []
    for q in decisions:
        i, j = q["child"], q["parent"]
        basis = np.column_stack([tested[:, i, i], *kept.get(i, [])])
        Q, _ = np.linalg.qr(basis)
        P = np.eye(K) - Q @ Q.T
        r = P @ tested[:, i, j]
        # residual's covariance under independent environments: P diag(sd^2) P
        cov = P @ np.diag(sd[:, i, j] ** 2) @ P.T
        dof = K - basis.shape[1]
        W = float(r @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ r)
        if q["edge"]:
            kept.setdefault(i, []).append(tested[:, i, j])
        out.append({"parent": j, "child": i, "true": bool(A[order[j], order[i]]),
                    "ratio": q["statistic"] / level, "edge": q["edge"], "W": W, "dof": dof})
    return out


def run(sim: str, first: int, count: int, n_boot: int, out: str, families,
        auto: bool = False) -> None:
    seeds = range(first, first + count)
    if seeds.start < TUNING_SEEDS.start or seeds.stop > TUNING_SEEDS.stop:
        raise SystemExit("tuning seeds only")
    warnings.simplefilter("ignore")
    with open(out, "a") as fh:
        for seed in seeds:
            for family in families:
                X, A, Y = data_of(sim, family, 5, 5, 1000, seed)
                A = np.asarray(A) != 0
                TRUTH.update(A=A, Y=Y)
                fh.write(json.dumps({"simulator": sim, "family": family, "seed": seed,
                                     "auto": auto,
                                     "pairs": pair_records(X, A, seed, n_boot, auto)}) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    print("| simulator | family | data sets | extra edges (median p of W) | extra with p > 0.01 "
          "| true edges kept | true kept with p > 0.01 | missed |")
    print("|---|---|---|---|---|---|---|---|")
    for sim in sorted({r["simulator"] for r in rows}):
        for fam in BAR_FAMILIES:
            qs = [q for r in rows if r["simulator"] == sim and r["family"] == fam
                  for q in r["pairs"]]
            if not qs:
                continue
            p = {id(q): stats.chi2.sf(q["W"], q["dof"]) for q in qs}
            extra = [q for q in qs if q["edge"] and not q["true"]]
            kept = [q for q in qs if q["edge"] and q["true"]]
            missed = [q for q in qs if q["true"] and not q["edge"]]
            n = len({(r["seed"]) for r in rows if r["simulator"] == sim and r["family"] == fam})
            med = np.median([p[id(q)] for q in extra]) if extra else float("nan")
            print(f"| {sim} | {fam} | {n} | {len(extra)} ({med:.3f}) "
                  f"| {sum(p[id(q)] > 0.01 for q in extra)} | {len(kept)} "
                  f"| {sum(p[id(q)] > 0.01 for q in kept)} | {len(missed)} |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        fams = sys.argv[6].split(",") if len(sys.argv) > 6 else BAR_FAMILIES
        run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], fams,
            auto="--auto" in sys.argv)
