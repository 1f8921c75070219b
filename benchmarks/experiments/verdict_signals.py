"""Cheap signals that a d = 5 fit is wrong (SHD >= 2), beyond the built-in verdict.

For every fit (6 bar families x seeds x both simulators, d = K = 5, n = 1000)
one row is written with the truth (SHD, correct order), the verdict's flag and
issue kinds, the warning categories raised, and candidate signals:

* read from ``model.diagnostics_`` (free): per ordering step (all but the last)
  the winner's refined consistency score, the margin to the runner-up refined
  score, the winner's ``joint_corr2``, the raw best score; the verdict's
  continuous statistics (ICA-agreement, conditioning, Gaussianity and
  heterogeneity p-values); the pruning statistics' distance to the threshold;
  the polish's contrast change;
* a second ordering run (``topological_ordering`` on a fresh reduction, another
  seed, no polish) -- ``r3`` with the default refinement, ``r0`` with the
  paper's step (``n_refine=0``, cheaper) -- compared with the fit: its noises
  are matched to the fit's noises (residuals of the fit's latents on their
  predecessors, per environment; Hungarian on corr^2 averaged over
  environments), and the signals are the worst matched corr^2 and the number
  of ancestor pairs of the fitted DAG that the second order reverses. Noises
  do not depend on which valid order is found, so two valid orders agree.
  Its time is measured and reported as a ratio to the fit's time.

Seeds 0-99 only (tuning seeds): thresholds are chosen on 0-49 and checked on 50-99.

Usage (from the checkout's root, one process, OMP_NUM_THREADS=1)::

    python benchmarks/experiments/verdict_signals.py run --seeds 0-99
    python benchmarks/experiments/verdict_signals.py analyse

Rows: benchmarks/results/verdict_signals/rows.jsonl (resumable).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from zoo import BAR_FAMILIES, data_of  # noqa: E402

import creator_plugin._fit as _fit  # noqa: E402
from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.metrics import evaluate  # noqa: E402
from creator_plugin.ordering import topological_ordering  # noqa: E402
from creator_plugin.preprocessing import reduce_environments  # noqa: E402

OUT = HERE.parent / "results" / "verdict_signals"
ROWS = OUT / "rows.jsonl"
D = 5
SIMULATORS = ("package", "independent")
SECOND_SEED_OFFSET = 7_000_001  # seeds of the second ordering run (not data seeds)


_CAPTURED: dict = {}
_prune = _fit.prune


def _capturing_prune(tested, **kw):
    """The fit's pruning, keeping the tested coefficients (K, d, d) for the signals."""
    _CAPTURED["tested"] = np.array(tested, copy=True)
    return _prune(tested, **kw)


_fit.prune = _capturing_prune  # experiment-only hook, the package is unchanged


def prune_signals(tested: np.ndarray, decisions: list[dict], thr: float) -> dict:
    """How the residual rule's decisions depend on collinearity of coefficient vectors.

    Per pair j -> i: ``raw`` = RMS of b_ij, ``self`` = RMS of its part outside
    span(b_ii), ``stat`` = the rule's statistic (outside span(b_ii, kept b_il)).
    A pair with ``self`` above the level but ``stat`` below it was pruned only
    because another kept parent's vector (nearly) spans it -- the signature of
    the near-degenerate missing edges (benchmarks/LOG.md, pruning SE study).
    """
    K = tested.shape[0]
    hidden, collinear, nonedge_stat, edge_stat, nonedge_raw = [0.0], [0.0], [0.0], [np.inf], [0.0]
    for dec in decisions:
        i, j, stat = dec["child"], dec["parent"], dec["statistic"]
        b, bii = tested[:, i, j], tested[:, i, i]
        raw = np.linalg.norm(b) / np.sqrt(K)
        u = bii / max(np.linalg.norm(bii), 1e-300)
        self_res = np.linalg.norm(b - u * (u @ b)) / np.sqrt(K)
        if dec["edge"]:
            edge_stat.append(stat)
        else:
            nonedge_stat.append(stat)
            nonedge_raw.append(raw)
            hidden.append(self_res - stat)
            if self_res > thr:
                collinear.append(1 - stat / self_res)
    return {"pr_hidden_max": float(max(hidden)), "pr_collinear_max": float(max(collinear)),
            "pr_nonedge_stat_max": float(max(nonedge_stat)),
            "pr_edge_stat_min": float(min(edge_stat)) if np.isfinite(min(edge_stat)) else None,
            "pr_nonedge_raw_max": float(max(nonedge_raw))}


def _unit_columns(M: np.ndarray) -> np.ndarray:
    M = M - M.mean(axis=0)
    return M / np.maximum(np.linalg.norm(M, axis=0), 1e-300)


def fit_noises(latents: list[np.ndarray]) -> list[np.ndarray]:
    """Per environment: each latent's residual on the latents before it (unit columns)."""
    out = []
    for L in latents:
        Q, _ = np.linalg.qr(L - L.mean(axis=0))
        out.append(Q)
    return out


def second_ordering(X, latents, adjacency, seed, **kw) -> dict:
    """Order again (fresh reduction, other seed, no polish) and compare with the fit."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    X_red, _ = reduce_environments(X, D, random_state=rng)
    o = topological_ordering(X_red, random_state=rng, polish=False, canonical=False, **kw)
    Z1 = fit_noises(latents)
    M = np.zeros((D, D))
    for a, b in zip(Z1, o.noises):
        M += (a.T @ _unit_columns(b)) ** 2
    M /= len(Z1)
    rows, cols = linear_sum_assignment(M, maximize=True)
    pos2 = np.empty(D, dtype=int)
    pos2[rows] = cols  # position in the second order of the fit's latent j
    matched = M[rows, cols]
    B = (np.asarray(adjacency) != 0).astype(int)
    anc = B.copy()
    for _ in range(D):
        anc = ((anc + anc @ B) > 0).astype(int)
    i, j = np.nonzero(anc)
    ei, ej = np.nonzero(B)
    worst_step = [s["best_score"] for s in o.steps[:-1]]
    return {
        "min_corr2": float(matched.min()),
        "mean_1mcorr2": float(np.mean(1 - matched)),
        "anc_reversed": int(np.sum(pos2[j] < pos2[i])),
        "edge_reversed": int(np.sum(pos2[ej] < pos2[ei])),
        "order_moved": int(np.sum(pos2 != np.arange(D))),
        "own_best_max": float(max(worst_step) / len(X)) if worst_step else 0.0,
        "seconds": time.perf_counter() - start,
    }


def diag_signals(diag: dict, K: int) -> dict:
    steps = diag["ordering"][:-1]
    ref_best, margin, ratio, jc2, raw_best, desc_best = [], [], [], [], [], []
    for s in steps:
        raw_best.append(s["best_score"] / K)
        if "refined_scores" in s:
            r = np.asarray(s["refined_scores"]) / K
            srt = np.sort(r)
            w = int(np.argmin(r))
            ref_best.append(srt[0])
            margin.append(srt[1] - srt[0] if srt.size > 1 else np.inf)
            ratio.append(srt[0] / srt[1] if srt.size > 1 and srt[1] > 0 else 0.0)
            jc2.append(s["joint_corr2"][w])
        if "descended_scores" in s:
            desc_best.append(min(s["descended_scores"]) / K)
    q = diag.get("quality") or {}
    ch = q.get("checks", {})
    prune = diag.get("pruning") or []
    thr = diag.get("prune_threshold")
    near = [abs(np.log(max(p["statistic"], 1e-12) / thr)) for p in prune
            if p.get("statistic") is not None and thr]
    pol = diag.get("polish") or {}
    cond = ch.get("conditioning", {}).get("condition_numbers", [1.0])
    return {
        "ref_best_max": float(max(ref_best)) if ref_best else None,
        "ref_best_sum": float(sum(ref_best)) if ref_best else None,
        "ref_margin_min": float(min(margin)) if margin else None,
        "ref_ratio_max": float(max(ratio)) if ratio else None,
        "jc2_min": float(min(jc2)) if jc2 else None,
        "raw_best_max": float(max(raw_best)) if raw_best else None,
        "desc_best_max": float(max(desc_best)) if desc_best else None,
        "ica_calibrated": ch.get("ica_agreement", {}).get("calibrated"),
        "ica_scaled": ch.get("ica_agreement", {}).get("scaled"),
        "log10_cond_max": float(np.log10(max(cond))),
        "gauss_p": ch.get("gaussianity", {}).get("p_value"),
        "het_p": ch.get("heterogeneity", {}).get("p_value"),
        "mech_dep_p": ch.get("mechanisms", {}).get("dependence_p_value"),
        "prune_near_min": float(min(near)) if near else None,
        "prune_near_count": int(sum(x < np.log(2) for x in near)),
        "polish_rel_change": (float((pol["contrast"] - pol["contrast_start"])
                                    / max(abs(pol["contrast_start"]), 1e-300))
                              if pol.get("contrast_start") else None),
        "polish_kept": pol.get("kept"),
        "n_ica_not_converged": diag.get("n_ica_not_converged"),
    }


def one_row(simulator: str, family: str, seed: int) -> dict:
    X, A, Y = data_of(simulator, family, D, D, 1000, seed)
    row = {"simulator": simulator, "family": family, "seed": seed}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            model = CREATOR(D, random_state=seed).fit(X)
        except Exception as exc:  # a crash is a result
            row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            return row
        row["fit_seconds"] = time.perf_counter() - start
    row["warnings"] = ";".join(sorted({w.category.__name__ for w in caught}))
    m = evaluate(A, Y, model.adjacency_matrix_, model.latents_)
    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
    kinds = sorted({i if isinstance(i, str) else i.get("kind", str(i)) for i in issues})
    row.update(status="ok", shd=int(m["shd"]), correct_order=bool(m["correct_order"]),
               locr2=float(m["locr2"]), flagged=bool(kinds), issues=";".join(kinds))
    t = time.perf_counter()
    row.update(diag_signals(model.diagnostics_, len(X)))
    row.update(prune_signals(_CAPTURED.pop("tested"), model.diagnostics_["pruning"],
                             model.diagnostics_["prune_threshold"]))
    row["diag_seconds"] = time.perf_counter() - t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in (("r3", {}), ("r0", {"n_refine": 0})):
            sec = second_ordering(X, model.latents_, model.adjacency_matrix_,
                                  SECOND_SEED_OFFSET + seed, **kw)
            row.update({f"{name}_{k}": v for k, v in sec.items()})
    return row


def run(args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    lo, hi = (int(x) for x in args.seeds.split("-"))
    assert hi < 100, "tuning seeds only (0-99)"
    done = set()
    if ROWS.exists():
        for line in ROWS.read_text().splitlines():
            r = json.loads(line)
            done.add((r["simulator"], r["family"], r["seed"]))
    with ROWS.open("a") as fh:
        for seed in range(lo, hi + 1):
            for sim in SIMULATORS:
                for fam in BAR_FAMILIES:
                    if (sim, fam, seed) in done:
                        continue
                    fh.write(json.dumps(one_row(sim, fam, seed)) + "\n")
                    fh.flush()


# ----------------------------------------------------------------------- analysis

#: Candidate signals: (column, direction) -- "hi" flags large values, "lo" small ones.
SIGNALS = {
    "ref_best_max": "hi", "ref_best_sum": "hi", "ref_margin_min": "lo", "ref_ratio_max": "hi",
    "jc2_min": "lo", "raw_best_max": "hi", "desc_best_max": "hi", "ica_calibrated": "hi",
    "ica_scaled": "hi", "log10_cond_max": "hi", "gauss_p": "hi", "het_p": "hi",
    "prune_near_min": "lo", "prune_near_count": "hi", "polish_rel_change": "lo",
    "r3_min_corr2": "lo", "r3_mean_1mcorr2": "hi", "r3_anc_reversed": "hi",
    "r3_edge_reversed": "hi", "r3_order_moved": "hi", "r3_own_best_max": "hi",
    "r0_min_corr2": "lo", "r0_mean_1mcorr2": "hi", "r0_anc_reversed": "hi",
    "r0_edge_reversed": "hi", "r0_order_moved": "hi",
    "pr_hidden_max": "hi", "pr_collinear_max": "hi", "pr_nonedge_stat_max": "hi",
    "pr_edge_stat_min": "lo", "pr_nonedge_raw_max": "hi",
}
#: Extra seconds each signal needs beyond the fit (column of the rows).
COST = {"r3": "r3_seconds", "r0": "r0_seconds"}


#: Rules checked on both halves (added to the verdict's flags).
RULES = {
    "verdict OR ica_scaled >= 6": lambda df: (df.ica_scaled >= 6).fillna(False),
    "verdict OR ica_scaled >= 6 OR prune_near_count >= 5":
        lambda df: ((df.ica_scaled >= 6) | (df.prune_near_count >= 5)).fillna(False),
}


def verdict_without_calibrated(df):
    """The verdict's flags rebuilt without its ICA-agreement check (calibrated >= 4.5):
    conditioning >= 1e6, a weak ordering step (raw best score / K > 0.1), n_latent."""
    return ((df.log10_cond_max >= 6) | (df.raw_best_max > 0.1)
            | df.issues.str.contains("n_latent")).fillna(False)


#: Rules that replace the verdict's calibrated ICA-agreement check (not ORed with it).
REPLACEMENTS = {
    "verdict with ica check on scaled >= 6 instead of calibrated >= 4.5":
        lambda df: verdict_without_calibrated(df) | (df.ica_scaled >= 6).fillna(False),
    "verdict with ica check on scaled >= 7 instead of calibrated >= 4.5":
        lambda df: verdict_without_calibrated(df) | (df.ica_scaled >= 7).fillna(False),
}


def load():
    import pandas as pd
    rows = [json.loads(x) for x in ROWS.read_text().splitlines()]
    df = pd.DataFrame(rows)
    df = df[df.status == "ok"].copy()
    df["bad"] = df.shd >= 2
    df["tune"] = df.seed < 50
    for c in SIGNALS:
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def flags_of(df, col, thr):
    x = df[col]
    if SIGNALS[col] == "hi":
        return (x >= thr).fillna(False)
    return (x <= thr).fillna(False)


def rates(df, flag):
    bad, good = df[df.bad], df[~df.bad]
    return flag[bad.index].mean(), flag[good.index].mean(), len(bad), len(good)


def best_threshold(df, col, base, max_fp=0.05):
    """The threshold on ``col`` (OR the verdict) flagging most SHD >= 2 fits with
    at most ``max_fp`` of SHD <= 1 fits flagged (pooled over simulators)."""
    vals = np.unique(df[col].dropna())
    best = (None, -1, 1)
    for v in vals:
        f = base | flags_of(df, col, v)
        tp, fp, _, _ = rates(df, f)
        if fp <= max_fp and tp > best[1]:
            best = (float(v), tp, fp)
    return best


def analyse(args) -> None:
    df = load()
    tune, check = df[df.tune], df[~df.tune]
    base_t, base_c = tune.flagged.astype(bool), check.flagged.astype(bool)
    weak_t = base_t | tune.warnings.str.contains("WeakEvidence")
    lines = []
    ratio = lambda c: float((df[c] / df.fit_seconds).median())  # noqa: E731
    lines.append(f"fits: {len(df)}; SHD >= 2: {int(df.bad.sum())}; "
                 f"median fit {df.fit_seconds.median():.3f} s; "
                 f"second ordering cost / fit: r3 median {ratio('r3_seconds'):.2f} "
                 f"(p90 {float((df.r3_seconds / df.fit_seconds).quantile(.9)):.2f}), "
                 f"r0 median {ratio('r0_seconds'):.2f}")
    lines.append("")

    def table(name, ft, fc):
        cells = []
        for part, f in ((tune, ft), (check, fc)):
            for sim in SIMULATORS:
                sub = part[part.simulator == sim]
                tp, fp, nb, ng = rates(sub, f[sub.index])
                cells.append(f"{tp:.0%} ({round(tp * nb)}/{nb}) / {fp:.1%} ({round(fp * ng)}/{ng})")
            tp, fp, nb, ng = rates(part, f[part.index])
            cells.append(f"{tp:.0%} / {fp:.1%}")
        return f"| {name} | " + " | ".join(cells) + " |"

    lines.append("Cells: share of SHD>=2 fits flagged (n) / share of SHD<=1 fits flagged (n).")
    lines.append("| rule | 0-49 package | 0-49 independent | 0-49 pooled "
                 "| 50-99 package | 50-99 independent | 50-99 pooled |")
    lines.append("|---|---|---|---|---|---|---|")
    lines.append(table("verdict (issues)", base_t, base_c))
    lines.append(table("verdict or WeakEvidenceWarning", weak_t,
                       base_c | check.warnings.str.contains("WeakEvidence")))
    chosen = {}
    for col in SIGNALS:
        thr, tp, fp = best_threshold(tune, col, base_t, args.max_fp)
        if thr is None:
            continue
        chosen[col] = thr
        op = ">=" if SIGNALS[col] == "hi" else "<="
        lines.append(table(f"verdict OR {col} {op} {thr:.4g}", base_t | flags_of(tune, col, thr),
                           base_c | flags_of(check, col, thr)))
    # pairs: verdict OR a OR b, both thresholds searched on 0-49 (41 quantiles each)
    lines.append("")
    lines.append("Best pairs (verdict OR a OR b, thresholds on 0-49, pooled FP <= "
                 f"{args.max_fp:.0%}):")
    lines.append("| rule | 0-49 package | 0-49 independent | 0-49 pooled "
                 "| 50-99 package | 50-99 independent | 50-99 pooled |")
    lines.append("|---|---|---|---|---|---|---|")
    cols = [c for c in SIGNALS if c in chosen]
    bad = tune.bad.to_numpy()
    base = base_t.to_numpy()
    grids, flags = {}, {}
    for c in cols:
        grids[c] = np.unique(np.quantile(tune[c].dropna(), np.linspace(0, 1, 41)))
        flags[c] = np.array([flags_of(tune, c, x).to_numpy() for x in grids[c]]) | base
    results = []
    for ia, a in enumerate(cols):
        for b in cols[ia + 1:]:
            f = flags[a][:, None, :] | flags[b][None, :, :]
            tp = f[..., bad].mean(axis=-1)
            fp = f[..., ~bad].mean(axis=-1)
            tp = np.where(fp <= args.max_fp, tp, -1)
            k = np.unravel_index(np.argmax(tp), tp.shape)
            if tp[k] >= 0:
                results.append((float(tp[k]), a, b, grids[a][k[0]], grids[b][k[1]]))
    results.sort(reverse=True)
    for _tp, a, b, x, y in results[:args.top]:
        oa = ">=" if SIGNALS[a] == "hi" else "<="
        ob = ">=" if SIGNALS[b] == "hi" else "<="
        lines.append(table(f"verdict OR {a} {oa} {x:.4g} OR {b} {ob} {y:.4g}",
                           base_t | flags_of(tune, a, x) | flags_of(tune, b, y),
                           base_c | flags_of(check, a, x) | flags_of(check, b, y)))
    # the recommended rule (thresholds fixed from the searches above, see the report)
    lines.append("")
    lines.append("Recommended rule and its parts:")
    lines.append("| rule | 0-49 package | 0-49 independent | 0-49 pooled "
                 "| 50-99 package | 50-99 independent | 50-99 pooled |")
    lines.append("|---|---|---|---|---|---|---|")
    for name, fn in RULES.items():
        lines.append(table(name, base_t | fn(tune), base_c | fn(check)))
    rebuilt = (base_t != (verdict_without_calibrated(tune) | (tune.ica_calibrated >= 4.5))).sum()
    rebuilt += (base_c != (verdict_without_calibrated(check) | (check.ica_calibrated >= 4.5))).sum()
    lines.append(f"(verdict rebuilt from its statistics: {int(rebuilt)} mismatches)")
    for name, fn in REPLACEMENTS.items():
        lines.append(table(name, fn(tune), fn(check)))
    lines.append("")
    for part, f, lab in ((tune, base_t | RULES["verdict OR ica_scaled >= 6"](tune), "0-49"),
                         (check, base_c | RULES["verdict OR ica_scaled >= 6"](check), "50-99")):
        miss = part[part.bad & ~f]
        lines.append(f"{lab}: SHD>=2 fits missed by 'verdict OR ica_scaled >= 6': {len(miss)}, "
                     f"of which correct order (pruning errors): {int(miss.correct_order.sum())}; "
                     f"SHD of misses: {sorted(miss.shd.tolist())}")
    wc = df.groupby(["bad"]).warnings.value_counts()
    lines.append("")
    lines.append("Warning categories raised (by SHD >= 2):")
    lines.append("```\n" + wc.to_string() + "\n```")
    text = "\n".join(lines)
    print(text)
    (OUT / f"summary_fp{int(args.max_fp * 100)}.md").write_text(text + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seeds", default="0-99")
    a = sub.add_parser("analyse")
    a.add_argument("--max-fp", type=float, default=0.05)
    a.add_argument("--top", type=int, default=12)
    args = p.parse_args()
    {"run": run, "analyse": analyse}[args.cmd](args)


if __name__ == "__main__":
    main()
