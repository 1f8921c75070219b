"""Trial: the pruning rule with a test of each coefficient vector against its sampling error.

The default rule keeps ``j -> i`` when the RMS over environments of the part
of ``b_ij`` outside the span of the child's other vectors exceeds the level.
A non-edge's coefficient is sampling error, large where the regressor is
nearly a combination of the other regressors; a true edge whose weight
varies little across environments has a small statistic but can be many
standard errors from zero (``pruning_null_se_d5.py``: with the true
directions, most missed edges between half the level and the level are
significant, most extra edges are not).

Variant ``(floor, alpha)``: keep ``j -> i`` when the statistic exceeds
``floor`` times the level *and* ``W``, the squared residual in units of its
sampling variance, has a chi-square p-value below ``alpha`` (at most K-1
parents as before). The sampling variance of every environment's
coefficient is the classical one of least squares, ``s_i^2 [C^-1]_jj / n_k``
(``coefficient_se``; within 10 % of a row bootstrap with the noise maps
recomputed, median over entries). Everything after the pruning (revision,
disentanglement) is the default's. Tuning seeds, and the frozen check's
seeds from 112000.

    python pruning_wald_trial.py run {package,independent} FIRST COUNT OUT.jsonl \
        [FAMILIES [PARAMS [VARIANTS [D]]]]

Fits d = K = 5 (``D``: d = K = D), n = 1000 per environment.
    python pruning_wald_trial.py summary OUT.jsonl [...]
    python pruning_wald_trial.py block OUT.jsonl [...]   # the default's accuracy and verdict
"""
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

import creator_plugin._fit as fitmod
from creator_plugin.measurement_noise import pooled_innovation_sd_of

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo import BAR_FAMILIES, TUNING_SEEDS, data_of, fit_scored  # noqa: E402

_prune_stage = fitmod._prune_stage

#: name -> (floor, alpha); None is the default rule.
VARIANTS = {
    "default": None,
    "gate_a1e-2": (1.0, 1e-2),
    "gate_a1e-3": (1.0, 1e-3),
    "gate_a1e-4": (1.0, 1e-4),
    "wald_f0.5_a1e-3": (0.5, 1e-3),
    "wald_f0.5_a1e-4": (0.5, 1e-4),
    "wald_f0.25_a1e-4": (0.25, 1e-4),
}


def coefficient_se(covs: list[np.ndarray], n_rows, tested: np.ndarray,
                   raw: list[np.ndarray] | None = None) -> np.ndarray:
    """Sampling SD of every tested coefficient ``[k, i, j]`` (``j < i``).

    ``covs[k]``: covariance of the unit-variance features in environment k
    (with a measurement-noise correction, of their signal; ``raw[k]`` is
    then the covariance of the features as measured). Entry ``(i, j)`` is
    ``-c_kij tested[k, i, i] innov_j / innov_i`` with ``c_ki`` the regression
    of feature i on the earlier ones in k; its variance is
    ``s^2 [C^-1 R C^-1]_jj / n_k`` with ``C`` the regressors' covariance,
    ``R`` the same as measured and ``s^2`` the residual's variance as
    measured (the corrected regression's sandwich; ``R = C`` without a
    correction, the classical least-squares variance).
    """
    raw = covs if raw is None else raw
    K, d, _ = tested.shape
    # scatters (sums over rows), as the pruning pools them
    innov = pooled_innovation_sd_of([c * n for c, n in zip(covs, n_rows)], float(np.sum(n_rows)))
    se = np.zeros_like(tested)
    for k, (c, r, n) in enumerate(zip(covs, raw, n_rows)):
        for i in range(1, d):
            inv = np.linalg.inv(c[:i, :i])
            coef = inv @ c[:i, i]
            s2 = r[i, i] - 2.0 * coef @ r[:i, i] + coef @ r[:i, :i] @ coef
            v = np.diag(inv @ r[:i, :i] @ inv)
            se[k, i, :i] = (np.sqrt(np.maximum(s2, 0.0) * v / n)
                            * abs(tested[k, i, i]) * innov[:i] / innov[i])
    return se


def wald_prune(tested, se, threshold: float, floor: float, alpha: float):
    """The residual rule with the significance test; decisions as :func:`prune`'s."""
    K, d, _ = tested.shape
    adjacency = np.zeros((d, d), dtype=int)
    decisions = []
    for i in range(1, d):
        kept = [tested[:, i, i]]
        for j in range(i - 1, -1, -1):
            Q, _ = np.linalg.qr(np.column_stack(kept))
            P = np.eye(K) - Q @ Q.T
            r = P @ tested[:, i, j]
            stat = float(np.linalg.norm(r)) / np.sqrt(K)
            cov = P @ np.diag(se[:, i, j] ** 2) @ P
            W = float(r @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ r)
            p = float(stats.chi2.sf(W, K - len(kept))) if len(kept) < K else 1.0
            edge = stat > floor * threshold and p < alpha and len(kept) < K
            if edge:
                kept.append(tested[:, i, j])
            adjacency[j, i] = int(edge)
            decisions.append({"parent": j, "child": i, "statistic": stat,
                              "threshold": float(threshold), "edge": bool(edge),
                              "p_value": p})
    return adjacency, decisions


def _variant(floor: float, alpha: float):
    def prune_stage(stage, config, threshold):
        adjacency, decisions, tested, scales = _prune_stage(stage, config, threshold)
        a = scales[0]
        X_red = stage.reduced
        raw = [x.T @ x for x in X_red]
        grams = raw if stage.noise is None else stage.noise.signal_grams(raw)
        n_rows = [x.shape[0] for x in X_red]
        covs = [a.T @ g @ a / n for g, n in zip(grams, n_rows)]
        raw = [a.T @ g @ a / n for g, n in zip(raw, n_rows)]
        se = coefficient_se(covs, n_rows, tested, raw)
        adjacency, decisions = wald_prune(tested, se, threshold, floor, alpha)
        return adjacency, decisions, tested, scales
    return prune_stage


#: The frozen check's fresh seeds (benchmarks/LOG.md, "Frozen design: the
#: significance gate on fresh seeds"); every other seed read is a tuning seed.
FIRST_EVALUATION_SEED = 112000


def run(sim: str, first: int, count: int, out: str, families=BAR_FAMILIES,
        params: dict | None = None, names=tuple(VARIANTS), d: int = 5) -> None:
    seeds = range(first, first + count)
    tuning = seeds.start >= TUNING_SEEDS.start and seeds.stop <= TUNING_SEEDS.stop
    if not (tuning or seeds.start >= FIRST_EVALUATION_SEED):
        raise SystemExit(f"tuning seeds or seeds from {FIRST_EVALUATION_SEED} only")
    warnings.simplefilter("ignore")
    with open(out, "a") as fh:
        for seed in seeds:
            for family in families:
                X, A, Y = data_of(sim, family, d, d, 1000, seed)
                row = {"simulator": sim, "family": family, "seed": seed, "d": d,
                       "params": params or {}}
                for name in ("default", *[n for n in names if n != "default"]):
                    spec = VARIANTS[name]
                    fitmod._prune_stage = _prune_stage if spec is None else _variant(*spec)
                    try:
                        r = fit_scored(X, A, Y, {"d": d, "seed": seed}, params)
                    finally:
                        fitmod._prune_stage = _prune_stage
                    row[name] = {k: r.get(k) for k in ("shd", "correct_order", "flagged",
                                                       "seconds")}
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    names = [n for n in VARIANTS if all(n in r for r in rows)]
    print("| simulator | family | data sets | " + " | ".join(f"`{n}`" for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for sim in [*sorted({r["simulator"] for r in rows}), "all"]:
        for fam in [*BAR_FAMILIES, "all"]:
            rs = [r for r in rows if (sim == "all" or r["simulator"] == sim)
                  and (fam == "all" or r["family"] == fam)]
            if not rs or (sim == "all" and fam != "all"):
                continue
            base = np.array([r["default"]["shd"] for r in rs], float)
            cells = [f"{base.mean():.3f}"]
            for n in names[1:]:
                v = np.array([r[n]["shd"] for r in rs], float)
                diff = v - base
                cells.append(f"{v.mean():.3f} ({diff.mean():+.3f} ± "
                             f"{diff.std(ddof=1) / np.sqrt(len(rs)):.3f}; "
                             f"{int((diff < 0).sum())}/{int((diff > 0).sum())})")
            print(f"| {sim} | {fam} | {len(rs)} | " + " | ".join(cells) + " |")


def block(paths: list[str], name: str = "default") -> None:
    """One variant's accuracy and verdict per family (the zoo page's block tables)."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    print("| simulator | family | data sets | mean SHD | correct order "
          "| fits with SHD >= 2 flagged | fits with SHD <= 1 flagged |")
    print("|---|---|---|---|---|---|---|")
    for sim in sorted({r["simulator"] for r in rows}):
        for fam in [*BAR_FAMILIES, "all"]:
            rs = [r[name] for r in rows if r["simulator"] == sim
                  and (fam == "all" or r["family"] == fam)]
            if not rs:
                continue
            wrong = [r for r in rs if r["shd"] >= 2]
            right = [r for r in rs if r["shd"] <= 1]
            print(f"| {sim} | {fam} | {len(rs)} | {np.mean([r['shd'] for r in rs]):.2f} "
                  f"| {np.mean([r['correct_order'] for r in rs]):.0%} "
                  f"| {sum(r['flagged'] for r in wrong)} of {len(wrong)} "
                  f"| {sum(r['flagged'] for r in right)} of {len(right)} |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2:])
    elif sys.argv[1] == "block":
        block(sys.argv[2:])
    else:
        extra = sys.argv[6:]
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
            extra[0].split(",") if extra else BAR_FAMILIES,
            json.loads(extra[1]) if len(extra) > 1 else None,
            extra[2].split(",") if len(extra) > 2 else tuple(VARIANTS),
            int(extra[3]) if len(extra) > 3 else 5)
