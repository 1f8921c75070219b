"""Edge-level confidence of one fit against the truth, on the workload zoo.

Every fit is the default estimator (``--refine auto``) or the core alone
(``--refine none``), fitted once per data set of the zoo's bar families
(``benchmarks/zoo.py``: the package's simulator or
``benchmarks/independent_simulator.py``). One row per fit records the fit's
``edge_confidence_``, its evidence (``diagnostics_["edge_confidence"]``) and
the truth in the fit's labels: the true graph relabelled through the LocR²
matching of :func:`creator_plugin.metrics.match_latents` (every fit is kept,
whatever its matching), so that ``truth[a][b]`` says whether the latents
matched to a and b have a true edge a -> b.

Seeds: the map from evidence to probabilities
(``creator_plugin.confidence.MAP``) was fitted by ``fit-map`` on the rows of
the tuning seeds :data:`TUNING_SEEDS` and frozen before any evaluation seed
(from :data:`FIRST_EVALUATION_SEED`) was drawn.

Usage::

    python benchmarks/edge_confidence.py run --simulator package --first-seed 400000 \\
        --seeds 100 --out benchmarks/results/edge_confidence/package_d5.jsonl.gz
    python benchmarks/edge_confidence.py fit-map TUNING_ROWS.jsonl [...]
    python benchmarks/edge_confidence.py summary ROWS.jsonl [...] --csv OUT.csv \\
        --pairs-csv PAIRS.csv.gz
    python benchmarks/edge_confidence.py timing --d 5 --n 1000 --seeds 30 --repeats 3
    python benchmarks/edge_confidence.py doubt TUNING_ROWS.jsonl [...] --out OUT.jsonl
    python benchmarks/edge_confidence.py reliability auto=PAIRS.csv.gz none=PAIRS2.csv.gz \\
        --csv OUT.csv --figure OUT.png

Rows already in the output file (same simulator, family, d, n, seed and
refine) are skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR, confidence
from creator_plugin.metrics import match_latents

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_files  # noqa: E402
from zoo import BAR_FAMILIES, FLAG_FAMILIES, data_of  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "edge_confidence"
#: Seeds the map was fitted on (410000-410199 at d = 5, from 411000 at d = 10); never
#: evaluated.
TUNING_SEEDS = frozenset(range(410000, 410200)) | frozenset(range(411000, 411100))
FIRST_EVALUATION_SEED = 400000
LOW, HIGH = confidence.UNDECIDED
KEY = ("simulator", "family", "d", "n", "seed", "refine")


def estimator(d: int, refine: str, seed: int) -> CREATOR:
    """The fit of a row: the default, or the core alone (``refine="none"``)."""
    return CREATOR(d, refine="auto" if refine == "auto" else None, random_state=seed)


def fit_row(simulator: str, family: str, d: int, n: int, seed: int, refine: str) -> dict:
    """One fit of one data set, with its confidence, its evidence and the truth."""
    X, A, Y = data_of(simulator, family, d, d, n, seed)
    row = {"simulator": simulator, "family": family, "d": d, "K": d, "n": n, "seed": seed,
           "refine": refine}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        try:
            model = estimator(d, refine, seed).fit(X)
        except Exception as exc:  # a crash is a result
            row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            return row
        seconds = time.perf_counter() - start
    matching, M = match_latents(A, Y, model.latents_)
    truth = (np.asarray(A) != 0).astype(int)[np.ix_(matching, matching)]
    diag = model.diagnostics_
    evidence = diag.get("edge_confidence")
    row.update(
        status="ok", seconds=round(seconds, 4), adjacency=model.adjacency_matrix_.tolist(),
        truth=truth.tolist(), matched_locr2=round(float(M[np.arange(d), matching].mean()), 4),
        confidence=(np.round(model.edge_confidence_, 5).tolist()
                    if hasattr(model, "edge_confidence_") else None),
        evidence=evidence, fit_stats=fit_statistics(model),
    )
    return row


def noise_dependence(latents: list) -> dict:
    """Residual dependence of a fit's recovered noises: per environment the Gram-Schmidt
    noises of the latents in their order (:func:`creator_plugin.quality.ordered_noises`,
    white), and per pair ``a < b`` the fourth-order cross-cumulants ``E[z_a^2 z_b^2] - 1``,
    ``E[z_a^3 z_b]``, ``E[z_a z_b^3]`` (zero for independent noises) in units of their
    sampling SD; ``max_z`` the largest over pairs and environments, ``per_latent`` its
    largest per latent (over its pairs), ``mean_z2`` the mean square."""
    from creator_plugin.quality import ordered_noises

    zs = []
    d = latents[0].shape[1]
    per = np.zeros(d)
    for Z in ordered_noises(latents):
        n = Z.shape[0]
        for a in range(d):
            for b in range(a + 1, d):
                for prod in (Z[:, a] ** 2 * Z[:, b] ** 2 - 1.0, Z[:, a] ** 3 * Z[:, b],
                             Z[:, a] * Z[:, b] ** 3):
                    z = float(abs(prod.mean()) / max(prod.std() / np.sqrt(n), 1e-12))
                    zs.append(z)
                    per[a], per[b] = max(per[a], z), max(per[b], z)
    zs = np.asarray(zs)
    return {"max_z": float(zs.max()) if zs.size else 0.0,
            "mean_z2": float(np.mean(zs ** 2)) if zs.size else 0.0,
            "per_latent": np.round(per, 4).tolist()}


def fit_statistics(model) -> dict:
    """Fit-level statistics read from one fit without the truth (candidates for a doubt
    term of the confidence): the verdict's checks (ICA agreement of the recovered noises,
    conditioning, Gaussianity, heterogeneity, effect strength), the ordering's scores per
    step (best raw score, re-estimated scores, joint correlations, descended minimum), the
    polish's contrast, the graph revision's flips and :func:`noise_dependence`."""
    diag = model.diagnostics_
    checks = (diag.get("quality") or {}).get("checks", {})
    K = len(model.latents_)
    agree = checks.get("ica_agreement", {})
    dis = np.asarray(agree.get("disagreement") or [[0.0]])
    n = min(L.shape[0] for L in model.latents_)
    d = model.latents_[0].shape[1]
    steps = []
    for st in diag.get("ordering") or []:
        ref = sorted(st.get("refined_scores") or [])
        steps.append({"best": st.get("best_score", 0.0) / K,
                      "refined": [round(x / K, 6) for x in ref[:2]],
                      "corr2": min(st.get("joint_corr2") or [1.0]),
                      "descended": (min(st["descended_scores"]) / K
                                    if st.get("descended_scores") else None)})
    polish = diag.get("polish") or {}
    revision = diag.get("graph_revision") or {}
    return {
        "ica_calibrated": agree.get("calibrated"),
        "ica_scaled_per_latent": np.round(n * dis.max(axis=0) / max(d - 1, 1), 4).tolist(),
        "condition_log10": float(np.log10(max(max((checks.get("conditioning") or {}).get(
            "condition_numbers") or [1.0]), 1.0))),
        "gaussianity_p": (checks.get("gaussianity") or {}).get("p_value"),
        "heterogeneity_scale": (checks.get("heterogeneity") or {}).get("scale"),
        "effect_ratio": (checks.get("effect_strength") or {}).get("ratio"),
        "issues": sorted({i["kind"] for i in (diag.get("quality") or {}).get("issues", [])}),
        "steps": steps, "polish_contrast": polish.get("contrast"),
        "polish_start": polish.get("contrast_start"),
        "revision_flips": len(revision.get("flips") or []),
        "n_ica_not_converged": diag.get("n_ica_not_converged"),
        "noise_dependence": noise_dependence(model.latents_),
    }


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = ({tuple(r[k] for k in KEY) for r in row_files.read_jsonl(out)}
            if row_files.exists(out) else set())
    families = args.families.split(",") if args.families else list(BAR_FAMILIES)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rows = [fit_row(args.simulator, family, args.d, args.n, seed, args.refine)
                for family in families
                if (args.simulator, family, args.d, args.n, seed, args.refine) not in done]
        if rows:
            row_files.append_jsonl(out, rows)


def pairs_of(rows: list[dict], recompute: bool = False, doubt: bool = True) -> list[dict]:
    """One record per ordered pair (a, b), a != b, of every fit: truth, decision, confidence,
    and whether the decision lies within 3 standard errors of the pruning level (with
    ``recompute``, the confidence recomputed from the evidence; without ``doubt``, without
    the latents' doubt term of :func:`creator_plugin.confidence.doubt_factor`)."""
    out = []
    for r in rows:
        if r.get("status") != "ok" or r.get("confidence") is None:
            continue
        T, E = np.asarray(r["truth"]), np.asarray(r["adjacency"])
        evidence = r["evidence"] if doubt else {**r["evidence"], "doubt": None}
        C = (confidence.edge_confidence(evidence, r["K"]) if recompute or not doubt
             else np.asarray(r["confidence"]))
        near = np.zeros_like(T, dtype=bool)
        for q in r["evidence"]["pairs"]:
            if abs(q["statistic"] - q["threshold"]) <= 3 * q["se"]:
                near[q["parent"], q["child"]] = True
        d = T.shape[0]
        for a in range(d):
            for b in range(d):
                if a != b:
                    out.append({"simulator": r["simulator"], "family": r["family"],
                                "seed": r["seed"], "a": a, "b": b, "truth": int(T[a, b]),
                                "edge": int(E[a, b]), "c": float(C[a, b]),
                                "near": bool(near[a, b])})
    return out


def ece(c: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over ``bins`` equal-width bins of [0, 1]."""
    if c.size == 0:
        return float("nan")
    idx = np.minimum((c * bins).astype(int), bins - 1)
    return float(sum(abs(c[idx == b].mean() - y[idx == b].mean()) * np.mean(idx == b)
                     for b in range(bins) if np.any(idx == b)))


def metrics_of(pairs: list[dict]) -> dict:
    """The acceptance's numbers on a set of pairs."""
    c = np.array([p["c"] for p in pairs])
    y = np.array([p["truth"] for p in pairs])
    e = np.array([p["edge"] for p in pairs])
    near = np.array([p["near"] for p in pairs])
    wrong = e != y
    und = (c > LOW) & (c < HIGH)
    hi, lo = c >= HIGH, c <= LOW
    return {
        "fits": len({(p["simulator"], p["family"], p["seed"]) for p in pairs}),
        "pairs": int(c.size), "true_edges": int(y.sum()), "ece": ece(c, y),
        "near_pairs": int(near.sum()), "ece_near": ece(c[near], y[near]),
        "precision_at_0.9": float(y[hi].mean()) if hi.any() else float("nan"),
        "n_at_0.9": int(hi.sum()),
        "non_edge_rate_at_0.1": float(1 - y[lo].mean()) if lo.any() else float("nan"),
        "n_at_0.1": int(lo.sum()),
        "wrong": int(wrong.sum()), "wrong_undecided_share":
            float(und[wrong].mean()) if wrong.any() else float("nan"),
        "undecided": int(und.sum()),
        "undecided_allowance": float(2 * wrong.sum() + 0.02 * c.size),
    }


def breakdown(pairs: list[dict]) -> dict:
    """The wrong decisions by kind (a reversal: the reversed pair is wrong too; else a false
    edge or a missed one), each split into undecided and confident; and the largest share of
    wrong decisions any band ``a < c < b`` of the confidence marks undecided within the
    sharpness allowance (2 x wrong + 2 % of the pairs)."""
    by_fit: dict = {}
    for p in pairs:
        by_fit.setdefault((p["simulator"], p["family"], p["seed"]), {})[p["a"], p["b"]] = p
    kinds: dict = {}
    for fit in by_fit.values():
        for (a, b), p in fit.items():
            if p["edge"] == p["truth"]:
                continue
            other = fit[b, a]
            kind = ("reversal" if other["edge"] != other["truth"]
                    else "false edge" if p["edge"] else "missed edge")
            where = "undecided" if LOW < p["c"] < HIGH else "confident"
            kinds[f"{kind}, {where}"] = kinds.get(f"{kind}, {where}", 0) + 1
    c = np.array([p["c"] for p in pairs])
    wrong = np.array([p["edge"] != p["truth"] for p in pairs])
    allowance = 2 * wrong.sum() + 0.02 * c.size
    best = (0.0, None)
    for lo in (0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001):
        for hi in (0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999):
            und = (c > lo) & (c < hi)
            if und.sum() <= allowance and und[wrong].mean() > best[0]:
                best = (float(und[wrong].mean()), (lo, hi))
    return {**dict(sorted(kinds.items())), "best_share_within_allowance": round(best[0], 4),
            "its_band": best[1]}


def summary(args: argparse.Namespace) -> None:
    pairs = pairs_of(row_files.read_jsonl(args.rows), recompute=args.recompute,
                     doubt=not args.without_doubt)
    table = []
    for sim in sorted({p["simulator"] for p in pairs}):
        sp = [p for p in pairs if p["simulator"] == sim]
        for fam in [f for f in (*BAR_FAMILIES, *FLAG_FAMILIES)
                    if any(p["family"] == f for p in sp)]:
            table.append({"simulator": sim, "family": fam,
                          **metrics_of([p for p in sp if p["family"] == fam])})
        bar = [p for p in sp if p["family"] in BAR_FAMILIES]
        if bar:
            table.append({"simulator": sim, "family": "pooled bar families", **metrics_of(bar)})
    if args.breakdown:
        for sim in sorted({p["simulator"] for p in pairs}):
            print(sim, json.dumps(breakdown([p for p in pairs if p["simulator"] == sim
                                             and p["family"] in BAR_FAMILIES])))
    fields = _print_table(table)
    if args.pairs_csv:
        import gzip

        with gzip.open(args.pairs_csv, "wt", newline="") as fh:
            w = csv.DictWriter(fh, ["simulator", "family", "seed", "a", "b", "truth", "edge",
                                    "c", "near"])
            w.writeheader()
            for p in pairs:
                w.writerow({**p, "c": round(p["c"], 5), "near": int(p["near"])})
    if args.csv:
        _write_table(args.csv, table, fields, args.command, digits=4)


#: Per kind of pair, the positions (in :func:`creator_plugin.confidence.pair_features`)
#: of the coefficients held non-negative: the confidence of ``j -> i`` never
#: falls as the evidence of the edge (statistic, Wald statistic, distance to
#: the level) grows, for either decision.
MONOTONE = {"upper": (0, 1, 2, 3, 5, 6, 7), "lower": ()}


def logistic_fit(x: np.ndarray, y: np.ndarray, nonnegative=(), C: float = 1.0,
                 scale: np.ndarray | None = None) -> np.ndarray:
    """Maximum-likelihood logistic coefficients (intercept first) with an L2 penalty
    ``|beta|^2 / (2 C)`` on the slopes and the slopes ``nonnegative`` held >= 0; with
    ``scale``, of the log-odds ``scale * (beta_0 + x beta)`` (a factor per row that the
    fitted map's log-odds are multiplied by, as the doubt factor is)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    X = np.column_stack([np.ones(len(x)), x])
    if scale is not None:
        X = X * np.asarray(scale, dtype=float)[:, None]

    def loss(beta):
        t = X @ beta
        p = expit(t)
        value = np.sum(np.logaddexp(0, t) - y * t) + beta[1:] @ beta[1:] / (2 * C)
        grad = X.T @ (p - y)
        grad[1:] += beta[1:] / C
        return value, grad

    bounds = [(None, None)] + [(0, None) if k in nonnegative else (None, None)
                               for k in range(x.shape[1])]
    return minimize(loss, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                    bounds=bounds, options={"maxiter": 5000}).x


def evidence_with_doubt(row: dict) -> dict:
    """A row's evidence with the latents' doubt: the stored one, else (rows written before
    the fit stored it) the fit statistics' per-latent scaled ICA disagreement, the same
    statistic read at the smallest environment's row count."""
    ev = row["evidence"]
    if ev.get("doubt") is None and (row.get("fit_stats") or {}).get("ica_scaled_per_latent"):
        ev = {**ev, "doubt": row["fit_stats"]["ica_scaled_per_latent"]}
    return ev


def doubt_factor_of(evidence: dict) -> np.ndarray:
    """The (d, d) :func:`creator_plugin.confidence.doubt_factor` of a record (1 without a
    doubt)."""
    d = len(evidence["margins"])
    if evidence.get("doubt") is None:
        return np.ones((d, d))
    adjacency = np.zeros((d, d), dtype=int)
    for q in evidence["pairs"]:
        adjacency[q["parent"], q["child"]] = int(q["edge"])
    return confidence.doubt_factor(evidence["doubt"], adjacency)


def fit_map(args: argparse.Namespace) -> None:
    """Fit the map's logistic coefficients on tuning rows (seeds in :data:`TUNING_SEEDS`),
    the doubt factor inside the likelihood (the map's log-odds times the factor are the
    confidence's)."""
    rows = [r for r in row_files.read_jsonl(args.rows)
            if r.get("status") == "ok" and r["seed"] in TUNING_SEEDS and r.get("evidence")]
    feats = {"upper": [], "lower": []}
    evidence = [evidence_with_doubt(r) for r in rows]
    for r, ev in zip(rows, evidence):
        T = np.asarray(r["truth"])
        F = doubt_factor_of(ev)
        for side, (a, b, x) in confidence.pair_features(ev):
            feats[side].append((F[a, b], *x, T[a, b]))
    medians = [np.median(ev["doubt"]) for ev in evidence if ev.get("doubt") is not None]
    if medians:
        print(f"# median over the fits of the median latent doubt: {np.median(medians):.3f}")
    for side, data in feats.items():
        data = np.asarray(data, dtype=float)
        coef = logistic_fit(data[:, 1:-1], data[:, -1], MONOTONE[side], args.C,
                            scale=data[:, 0])
        dims = sorted({len(r["truth"]) for r in rows})
        print(f"# {side}: {len(rows)} fits (d = {dims}), {len(data)} pairs, "
              f"{int(data[:, -1].sum())} true edges")
        print(f'    "{side}": {tuple(round(float(c), 4) for c in coef)},')


def wrong_features(rows: list[dict], fit_level: bool = False
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Per ordered pair of every fit with evidence: the features a map could read (both of
    :func:`creator_plugin.confidence.pair_features`' entries on the pair, ``|z|``, the two
    ordering margins, the two features' measurement-noise ratios; with ``fit_level``, from
    :func:`fit_statistics` also the log of the calibrated ICA disagreement, the largest and
    summed step scores, the noises' cross-cumulant statistic, the conditioning and the log of
    the two latents' per-latent ICA disagreements, smaller and larger), whether the returned
    decision is wrong, the confidence, and the pair's (simulator, family, seed, kind)."""
    X, wrong, conf, keys = [], [], [], []
    for r in rows:
        if r.get("status") != "ok" or not r.get("evidence"):
            continue
        ev, T = r["evidence"], np.asarray(r["truth"])
        E, C = np.asarray(r["adjacency"]), np.asarray(r["confidence"])
        ratio = np.asarray(ev.get("noise_ratio") or np.zeros(T.shape[0]))
        # log(ratio - 1) of every ordering step's margin, capped as the map reads it
        margins = [float(np.log(max(min(confidence.MARGIN_CAP if m is None else m,
                                        confidence.MARGIN_CAP) - 1.0, 0.0) + 1e-3))
                   for m in ev["margins"]]
        feats = {}
        for kind, (a, b, x) in confidence.pair_features(ev):
            feats[a, b] = (kind, x)
        zs = {(q["parent"], q["child"]): abs(q["statistic"] - q["threshold"]) / max(q["se"], 1e-12)
              for q in ev["pairs"]}
        for (a, b), (kind, _x) in feats.items():
            j, i = (a, b) if kind == "upper" else (b, a)
            up = feats[j, i][1]
            lo = feats[i, j][1]
            X.append([*up, *lo, min(zs[j, i], 10.0), margins[j], margins[i],
                      float(np.log1p(ratio[j])), float(np.log1p(ratio[i])),
                      float(kind == "upper")])
            if fit_level:
                fs = r["fit_stats"]
                per = np.log1p(np.asarray(fs["ica_scaled_per_latent"]))
                X[-1] += [float(np.log(max(fs["ica_calibrated"], 1e-9))),
                          max(st["best"] for st in fs["steps"][:-1]),
                          sum(st["best"] for st in fs["steps"][:-1]),
                          fs["noise_dependence"]["mean_z2"], fs["condition_log10"],
                          min(per[a], per[b]), max(per[a], per[b])]
            w = int(E[a, b] != T[a, b])
            wrong.append(w)
            conf.append(float(C[a, b]))
            rev = E[b, a] != T[b, a]
            keys.append((r["simulator"], r["family"], r["seed"],
                         "" if not w else "reversal" if rev else
                         "false edge" if E[a, b] else "missed edge"))
    return np.asarray(X), np.asarray(wrong), np.asarray(conf), keys


def floor(args: argparse.Namespace) -> None:
    """How many wrong decisions any map of the per-pair evidence could leave undecided
    within the sharpness allowance (2 x wrong + 2 % of the pairs), per simulator: (a) any
    band of the current confidence; (b) the pairs ranked by a logistic model of "the
    decision is wrong" on :func:`wrong_features` (quadratic terms, fitted on half the seeds
    and applied to the other half, both ways), the top ``allowance`` taken undecided: a
    generous estimate of what any map of these features reaches, monotone or not (the
    current confidence's logit, its absolute value and square are among the features)."""
    rows = [r for r in row_files.read_jsonl(args.rows) if r.get("family") in BAR_FAMILIES]
    X, wrong, conf, keys = wrong_features(rows, fit_level=args.fit_level)
    logit = np.log(np.clip(conf, 1e-6, 1 - 1e-6) / np.clip(1 - conf, 1e-6, 1))
    X = np.column_stack([X, X ** 2, logit, np.abs(logit), logit ** 2])
    X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-9)
    sims = np.array([k[0] for k in keys])
    seeds = np.array([k[2] for k in keys])
    out = []
    for sim in sorted(set(sims)):
        m = sims == sim
        w, c = wrong[m], conf[m]
        allowance = int(2 * w.sum() + 0.02 * m.sum())
        band = breakdown_band(c, w, allowance)
        score = np.zeros(m.sum())
        half = seeds[m] % 2 == 0
        for part in (half, ~half):
            beta = logistic_fit(X[m][~part], w[~part], C=args.C)
            score[part] = beta[0] + X[m][part] @ beta[1:]
        top = np.argsort(-score)[:allowance]
        caught = np.zeros(m.sum(), bool)
        caught[top] = True
        kinds = {}
        for k, cw, cc in zip([k for k, mm in zip(keys, m) if mm], caught, c):
            if k[3]:
                confident = not (LOW < cc < HIGH)
                key = f"{k[3]}: wrong / confident now / caught by the ranking"
                t = kinds.setdefault(key, [0, 0, 0])
                t[0] += 1
                t[1] += int(confident)
                t[2] += int(cw)
        out.append({"simulator": sim, "fits": len({k[1:3] for k, mm in zip(keys, m) if mm}),
                    "pairs": int(m.sum()), "wrong": int(w.sum()), "allowance": allowance,
                    "undecided_now_share": round(float(((c > LOW) & (c < HIGH))[w == 1].mean()), 4),
                    "best_band_share": band[0], "best_band": band[1],
                    "ranking_share": round(float(caught[w == 1].mean()), 4), **kinds,
                    "command": args.command})
    for o in out:
        print(json.dumps(o))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("".join(json.dumps(o) + "\n" for o in out))


def _step_ratio(steps: list[dict]) -> float:
    """``-log(ratio - 1)`` of the closest call among the ordering's re-estimated steps."""
    ratios = [st["refined"][1] / max(st["refined"][0], 1e-12) for st in steps[:-1]
              if len(st["refined"]) == 2]
    return float(-np.log(max(min(ratios, default=10.0) - 1.0, 1e-3)))


#: Fit-level candidates of a doubt term, read from :func:`fit_statistics` (larger: more
#: doubt), with what each is.
DOUBT_CANDIDATES = {
    "ica_calibrated": ("verdict's calibrated ICA disagreement (mean over noises)",
                       lambda fs: fs["ica_calibrated"]),
    "ica_worst_latent": ("largest per-latent scaled ICA disagreement",
                         lambda fs: max(fs["ica_scaled_per_latent"])),
    "ica_second_latent": ("second largest per-latent scaled ICA disagreement",
                          lambda fs: sorted(fs["ica_scaled_per_latent"])[-2]),
    "condition_log10": ("log10 of the latents' worst condition number",
                        lambda fs: fs["condition_log10"]),
    "gaussianity_log10_p": ("log10 p of the Gaussianity test",
                            lambda fs: float(np.log10(max(fs["gaussianity_p"], 1e-6)))),
    "weak_heterogeneity": ("-log of the heterogeneity test's scale",
                           lambda fs: -float(np.log(fs["heterogeneity_scale"] or 1e-9))),
    "weak_effects": ("-log of the strongest edge's ratio to the level",
                     lambda fs: -float(np.log(fs["effect_ratio"] or 1e-9))),
    "step_score_max": ("largest ordering step's best consistency score / K",
                       lambda fs: max(st["best"] for st in fs["steps"][:-1])),
    "step_score_sum": ("sum over steps of the best consistency score / K",
                       lambda fs: sum(st["best"] for st in fs["steps"][:-1])),
    "refined_score_max": ("largest re-estimated winner's score / K",
                          lambda fs: max((st["refined"][0] for st in fs["steps"][:-1]
                                          if st["refined"]), default=0.0)),
    "closest_call": ("-log(ratio - 1) of the closest re-estimated call", lambda fs:
                     _step_ratio(fs["steps"])),
    "joint_corr2_gap": ("1 - smallest joint re-estimation corr^2",
                        lambda fs: 1 - min(st["corr2"] for st in fs["steps"][:-1])),
    "descent_residual": ("largest step's best consistency-descent score / K",
                         lambda fs: max((st["descended"] or 0.0) for st in fs["steps"][:-1])),
    "polish_gain": ("polish's contrast gain", lambda fs: (fs["polish_contrast"] or 0.0)
                    - (fs["polish_start"] or 0.0)),
    "revision_flips": ("graph revision's flips", lambda fs: fs["revision_flips"]),
    "noise_cumulant_z2": ("mean squared z of the noises' fourth-order cross-cumulants",
                          lambda fs: fs["noise_dependence"]["mean_z2"]),
    "noise_cumulant_zmax": ("largest z of the noises' fourth-order cross-cumulants",
                            lambda fs: fs["noise_dependence"]["max_z"]),
    "verdict_issues": ("number of the verdict's issue kinds", lambda fs: len(fs["issues"])),
}


def auc(score, label) -> float:
    """Area under the ROC curve of ``score`` for ``label`` (ties count one half)."""
    from scipy.stats import rankdata

    score, label = np.asarray(score, float), np.asarray(label, bool)
    pos, neg = int(label.sum()), int((~label).sum())
    if not pos or not neg:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[label].sum() - pos * (pos + 1) / 2) / (pos * neg))


def with_doubt(row: dict) -> np.ndarray:
    """The row's confidence with the doubt term: recomputed from its evidence, the latents'
    doubt read from the evidence or, in rows written before the term, from
    :func:`fit_statistics` (the same statistic, to 4 decimals)."""
    ev = dict(row["evidence"])
    if ev.get("doubt") is None:
        ev["doubt"] = row["fit_stats"]["ica_scaled_per_latent"]
    return confidence.edge_confidence(ev, row["K"])


def doubt(args: argparse.Namespace) -> None:
    """The fit-level candidates of a doubt term on rows with :func:`fit_statistics` (tuning
    seeds): per simulator, each candidate's AUC for the fits holding a confident wrong
    decision (c <= 0.1 or c >= 0.9) and for those holding a confident wrong pair of a
    reversed edge, and the share of the confident wrong pairs in the 5 % of fits the
    candidate doubts most; then :func:`metrics_of` (pooled bar families) and the largest
    undecided / allowance ratio over the families, of the confidence without and with the
    doubt term (:func:`with_doubt`)."""
    rows = [r for r in row_files.read_jsonl(args.rows) if r.get("status") == "ok"
            and r.get("family") in BAR_FAMILIES and r.get("fit_stats")]
    out = []
    for sim in sorted({r["simulator"] for r in rows}):
        sub = [r for r in rows if r["simulator"] == sim]
        bad, rev, conf_wrong = [], [], []
        for r in sub:
            T, E, C = (np.asarray(r[k]) for k in ("truth", "adjacency", "confidence"))
            wrong = (E != T) & ~np.eye(T.shape[0], dtype=bool)
            sure = (C <= LOW) | (C >= HIGH)
            conf_wrong.append(int((wrong & sure).sum()))
            bad.append(conf_wrong[-1] > 0)
            rev.append(bool((wrong & wrong.T & sure).any()))
        conf_wrong = np.asarray(conf_wrong)
        for name, (what, read) in DOUBT_CANDIDATES.items():
            v = np.array([read(r["fit_stats"]) for r in sub], dtype=float)
            top = np.argsort(-v, kind="stable")[:-(-len(v) // 20)]  # ties: the first fits
            out.append({"simulator": sim, "candidate": name, "what": what, "fits": len(sub),
                        "fits_with_confident_wrong": int(np.sum(bad)),
                        "fits_with_confident_reversal": int(np.sum(rev)),
                        "auc_confident_wrong": round(auc(v, bad), 4),
                        "auc_confident_reversal": round(auc(v, rev), 4),
                        "top5pct_share_of_confident_wrong_pairs":
                            round(float(conf_wrong[top].sum() / max(conf_wrong.sum(), 1)), 4)})
        for label in ("without doubt", "with doubt"):
            pairs = []
            for r in sub:
                C = np.asarray(r["confidence"]) if label == "without doubt" else with_doubt(r)
                pairs += pairs_of([{**r, "confidence": C.tolist()}])
            worst = max(
                sum(LOW < p["c"] < HIGH for p in fam) / (
                    2 * sum(p["edge"] != p["truth"] for p in fam) + 0.02 * len(fam))
                for fam in ([p for p in pairs if p["family"] == f] for f in BAR_FAMILIES)
                if fam)
            out.append({"simulator": sim, "candidate": f"rule: {label}",
                        **metrics_of(pairs), "worst_undecided_over_allowance": round(worst, 4)})
    for o in out:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in o.items()}))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("".join(json.dumps({**o, "command": args.command}) + "\n"
                                          for o in out))


def breakdown_band(c: np.ndarray, wrong: np.ndarray, allowance: float) -> tuple:
    """The largest share of wrong decisions any band ``lo < c < hi`` of the confidence
    marks undecided with at most ``allowance`` undecided pairs, and its band."""
    wrong = wrong.astype(bool)
    best = (0.0, None)
    grid = np.unique(np.concatenate([[0.0, 1.0], np.quantile(c, np.linspace(0, 1, 401),
                                                                method="nearest")]))
    lows, highs = grid[grid <= 0.5], grid[grid >= 0.5]
    for lo in lows:
        for hi in highs:
            und = (c > lo) & (c < hi)
            if und.sum() <= allowance and und[wrong].mean() > best[0]:
                best = (round(float(und[wrong].mean()), 4), (round(float(lo), 5),
                                                             round(float(hi), 5)))
    return best


def compare_bootstrap(args: argparse.Namespace) -> None:
    """Per data set: one default fit's ``edge_confidence_`` and, on the same fit,
    ``bootstrap(X, resamples, estimator=model).get_probabilities()``, both against the truth
    in the fit's labels, with the CPU time of each (rows appended per fit; resumable)."""
    from creator_plugin import bootstrap

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = ({(r["family"], r["seed"]) for r in row_files.read_jsonl(out)}
            if row_files.exists(out) else set())
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for family in args.families.split(","):
            if (family, seed) in done:
                continue
            X, A, Y = data_of(args.simulator, family, args.d, args.d, args.n, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cpu = time.process_time()
                model = CREATOR(args.d, random_state=seed).fit(X)
                fit_s = time.process_time() - cpu
                result = bootstrap(X, args.resamples, estimator=model, random_state=seed)
                boot_s = time.process_time() - cpu - fit_s
            matching, _ = match_latents(A, Y, model.latents_)
            truth = (np.asarray(A) != 0).astype(int)[np.ix_(matching, matching)]
            row_files.append_jsonl(out, [{
                "simulator": args.simulator, "family": family, "d": args.d, "n": args.n,
                "seed": seed, "resamples": args.resamples, "truth": truth.tolist(),
                "adjacency": model.adjacency_matrix_.tolist(),
                "confidence": np.round(model.edge_confidence_, 5).tolist(),
                "bootstrap": np.round(result.get_probabilities(), 5).tolist(),
                "fit_cpu_s": round(fit_s, 3), "bootstrap_cpu_s": round(boot_s, 3)}])


def compare_summary(args: argparse.Namespace) -> None:
    """The comparison's numbers per family and pooled: ECE, Brier score, the useful and
    sharp numbers of :func:`metrics_of` for each of the two probabilities."""
    rows = row_files.read_jsonl(args.rows)
    table = []
    for fam in [*dict.fromkeys(r["family"] for r in rows), "pooled"]:
        sub = [r for r in rows if fam in ("pooled", r["family"])]
        for source in ("confidence", "bootstrap"):
            pairs = []
            for r in sub:
                T, E, C = (np.asarray(r[k]) for k in ("truth", "adjacency", source))
                d = T.shape[0]
                pairs += [{"simulator": r["simulator"], "family": r["family"],
                           "seed": r["seed"], "a": a, "b": b, "truth": int(T[a, b]),
                           "edge": int(E[a, b]), "c": float(C[a, b]), "near": False}
                          for a in range(d) for b in range(d) if a != b]
            m = metrics_of(pairs)
            c = np.array([p["c"] for p in pairs])
            y = np.array([p["truth"] for p in pairs])
            m = {k: v for k, v in m.items() if k not in ("near_pairs", "ece_near")}
            table.append({"family": fam, "probability": source, **m,
                          "brier": float(np.mean((c - y) ** 2)),
                          "cpu_s_per_fit": float(np.mean([r["fit_cpu_s"] if source ==
                                                          "confidence" else r["bootstrap_cpu_s"]
                                                          for r in sub]))})
    fields = _print_table(table)
    if args.csv:
        _write_table(args.csv, table, fields, args.command, digits=4)


def _print_table(table: list[dict]) -> list[str]:
    """Write the table's rows to stdout as CSV (floats to 4 digits); return its fields."""
    fields = list(table[0])
    writer = csv.DictWriter(sys.stdout, fields)
    writer.writeheader()
    for t in table:
        writer.writerow({k: round(v, 4) if isinstance(v, float) else v for k, v in t.items()})
    return fields


def timing(args: argparse.Namespace) -> None:
    """Best-of-``repeats`` time (wall and CPU of this process) of default fits with and
    without the confidence (without:
    :mod:`creator_plugin.confidence`'s two steps replaced by ones that return nothing, which
    the fit reads as a fit without confidence)."""
    datasets = [data_of("package", "paper", args.d, args.d, args.n, s)[0]
                for s in range(FIRST_EVALUATION_SEED, FIRST_EVALUATION_SEED + args.seeds)]
    steps = (confidence.confidence_record, confidence.edge_confidence)

    def total():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start, cpu = time.perf_counter(), time.process_time()
            for s, X in enumerate(datasets):
                CREATOR(args.d, random_state=s).fit(X)
            return time.perf_counter() - start, time.process_time() - cpu

    best = {}
    try:
        for _ in range(args.repeats):
            for label in ("with", "without"):
                confidence.confidence_record, confidence.edge_confidence = (
                    steps if label == "with" else (lambda *a, **k: None,) * 2)
                wall, cpu = total()
                best[label] = min(best.get(label, np.inf), wall)
                best[label + "_cpu"] = min(best.get(label + "_cpu", np.inf), cpu)
    finally:
        confidence.confidence_record, confidence.edge_confidence = steps
    out = {"d": args.d, "n": args.n, "seeds": args.seeds, "repeats": args.repeats,
           "with_s": round(best["with"], 3), "without_s": round(best["without"], 3),
           "ratio": round(best["with"] / best["without"], 4),
           "with_cpu_s": round(best["with_cpu"], 3), "without_cpu_s": round(best["without_cpu"], 3),
           "cpu_ratio": round(best["with_cpu"] / best["without_cpu"], 4),
           "command": args.command}
    print(json.dumps(out))
    if args.out:
        Path(args.out).write_text(json.dumps(out) + "\n")


#: Bin edges of the reliability diagrams: ten equal-width bins of [0, 1].
BINS = 10


def read_pairs(path: str | Path) -> list[dict]:
    """The ordered pairs of a pairs CSV (``summary --pairs-csv``, plain or gzip-compressed)
    or of a file of per-fit rows (``run --out``, JSON lines)."""
    import gzip

    path = Path(path)
    if ".jsonl" in path.name:
        return pairs_of(row_files.read_jsonl(path))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        return [{**r, "seed": int(r["seed"]), "truth": int(r["truth"]), "edge": int(r["edge"]),
                 "c": float(r["c"]), "near": bool(int(r["near"]))} for r in csv.DictReader(fh)]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95 % by default) of a frequency ``k / n``."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def reliability_bins(c: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[dict]:
    """Per equal-width bin of the confidence: its count, mean confidence, the observed
    frequency of true edges and that frequency's 95 % Wilson interval (the bins of
    :func:`ece`; a confidence of exactly 1 falls in the last bin)."""
    idx = np.minimum((np.asarray(c) * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        inside = idx == b
        n, k = int(inside.sum()), int(np.asarray(y)[inside].sum())
        lo, hi = wilson(k, n)
        out.append({"bin": b, "lo": b / bins, "hi": (b + 1) / bins, "count": n,
                    "mean_confidence": float(np.mean(c[inside])) if n else float("nan"),
                    "observed_frequency": k / n if n else float("nan"),
                    "wilson_lo": lo, "wilson_hi": hi})
    return out


def reliability_table(inputs: dict[str, list[dict]]) -> list[dict]:
    """The binned table of every input (label -> pairs), simulator and family, with the
    pooled bar families; each row carries its group's ECE."""
    table = []
    for label, pairs in inputs.items():
        for sim in sorted({p["simulator"] for p in pairs}, key=lambda s: (s != "package", s)):
            sp = [p for p in pairs if p["simulator"] == sim]
            families = [f for f in (*BAR_FAMILIES, *FLAG_FAMILIES)
                        if any(p["family"] == f for p in sp)]
            groups = [(f, [p for p in sp if p["family"] == f]) for f in families]
            bar = [p for p in sp if p["family"] in BAR_FAMILIES]
            if bar and len(groups) > 1:
                groups.append(("pooled bar families", bar))
            for fam, group in groups:
                c = np.array([p["c"] for p in group])
                y = np.array([p["truth"] for p in group])
                error = ece(c, y)
                fits = len({(p["family"], p["seed"]) for p in group})
                for row in reliability_bins(c, y):
                    table.append({"refine": label, "simulator": sim, "family": fam,
                                  "fits": fits, "pairs": int(c.size), "ece": error, **row})
    return table


def reliability_figure(table: list[dict], path: str | Path) -> None:
    """One panel per family: observed frequency of true edges against mean confidence per
    bin (95 % Wilson intervals), one line per input and simulator, with the bin counts
    (log scale) beneath."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = list(dict.fromkeys(r["family"] for r in table))
    families.sort(key=lambda f: f == "pooled bar families")
    series = list(dict.fromkeys((r["refine"], r["simulator"]) for r in table))
    cols = min(4, len(families))
    rows = -(-len(families) // cols)
    fig = plt.figure(figsize=(3.6 * cols, 4.6 * rows))
    outer = fig.add_gridspec(rows, cols, hspace=0.3, wspace=0.28)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 1 / BINS / (len(series) + 1)
    for f, fam in enumerate(families):
        inner = outer[f // cols, f % cols].subgridspec(2, 1, height_ratios=[3, 1], hspace=0.08)
        top = fig.add_subplot(inner[0])
        bottom = fig.add_subplot(inner[1], sharex=top)
        top.plot([0, 1], [0, 1], ":", color="grey", lw=1)
        for s, (label, sim) in enumerate(series):
            sub = [r for r in table if r["family"] == fam and (r["refine"], r["simulator"])
                   == (label, sim)]
            if not sub:
                continue
            kept = [r for r in sub if r["count"]]
            x = np.array([r["mean_confidence"] for r in kept])
            obs = np.array([r["observed_frequency"] for r in kept])
            err = np.array([[o - r["wilson_lo"], r["wilson_hi"] - o]
                            for o, r in zip(obs, kept)]).T.clip(min=0)
            top.errorbar(x, obs, yerr=err, fmt="o-", ms=3.5, lw=1.2, capsize=2,
                         color=colours[s % len(colours)],
                         label=f"{label}, {sim} (ECE {sub[0]['ece']:.3f})")
            bottom.bar([r["lo"] + (s + 0.5) * width for r in sub], [r["count"] for r in sub],
                       width=width, align="edge", color=colours[s % len(colours)])
        top.set_xlim(0, 1)
        top.set_ylim(-0.02, 1.02)
        top.set_title(fam, fontsize=10)
        top.legend(fontsize=6.5, loc="upper left")
        top.tick_params(labelbottom=False)
        bottom.set_yscale("log")
        bottom.set_ylim(bottom=0.5)  # a bin of one pair shows
        bottom.set_xticks(np.linspace(0, 1, 6))
        bottom.set_xlabel("confidence (10 equal-width bins)", fontsize=8)
        if f % cols == 0:
            top.set_ylabel("observed share of true edges", fontsize=8)
            bottom.set_ylabel("pairs", fontsize=8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def reliability(args: argparse.Namespace) -> None:
    inputs: dict[str, list[dict]] = {}
    for spec in args.inputs:
        label, _, path = spec.rpartition("=")
        inputs.setdefault(label or Path(path).name.split(".")[0], []).extend(read_pairs(path))
    table = reliability_table(inputs)
    fields = list(table[0])
    print("refine simulator family fits pairs ECE; per band [0, 0.1) / [0.1, 0.9) / "
          "[0.9, 1]: pairs, mean confidence, share true")
    for r in table:
        if r["bin"] == 0:
            group = [t for t in table if (t["refine"], t["simulator"], t["family"])
                     == (r["refine"], r["simulator"], r["family"])]
            bands = []
            for band in (group[:1], group[1:-1], group[-1:]):
                n = sum(t["count"] for t in band)
                mean = sum(t["mean_confidence"] * t["count"] for t in band if t["count"])
                true = sum(t["observed_frequency"] * t["count"] for t in band if t["count"])
                bands.append(f"{n} {mean / n:.3f} {true / n:.3f}" if n else "0 - -")
            print(f"{r['refine']} {r['simulator']} {r['family'].replace(' ', '_')} {r['fits']} "
                  f"{r['pairs']} {r['ece']:.4f}; " + " / ".join(bands))
    if args.csv:
        _write_table(args.csv, table, fields, args.command, digits=5)
    if args.figure:
        reliability_figure(table, args.figure)


def _write_table(path, table: list[dict], fields: list[str], command: str,
                 digits: int) -> None:
    """Write ``table`` to ``path`` as CSV, floats rounded to ``digits``, with the command."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fields + ["command"])
        w.writeheader()
        for t in table:
            w.writerow({**{k: round(v, digits) if isinstance(v, float) else v
                           for k, v in t.items()}, "command": command})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="fit and append rows")
    r.add_argument("--simulator", choices=("package", "independent"), default="package")
    r.add_argument("--families", default=None,
                   help=f"comma-separated (default: the bar families; flag families: "
                        f"{','.join(FLAG_FAMILIES)})")
    r.add_argument("--first-seed", type=int, default=FIRST_EVALUATION_SEED)
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--d", type=int, default=5)
    r.add_argument("--n", type=int, default=1000)
    r.add_argument("--refine", choices=("auto", "none"), default="auto")
    r.add_argument("--out", required=True)
    s = sub.add_parser("summary", help="calibration numbers of rows")
    s.add_argument("rows", nargs="+")
    s.add_argument("--csv", default=None, help="the table, with the command")
    s.add_argument("--pairs-csv", default=None,
                   help="every ordered pair (gzip-compressed CSV): truth, decision, confidence")
    s.add_argument("--breakdown", action="store_true",
                   help="the wrong decisions by kind, and the best band within the allowance")
    s.add_argument("--recompute", action="store_true",
                   help="recompute the confidence from the stored evidence with the current map")
    s.add_argument("--without-doubt", action="store_true",
                   help="recompute the confidence without the latents' doubt term")
    f = sub.add_parser("fit-map", help="fit the map on tuning rows")
    f.add_argument("rows", nargs="+")
    f.add_argument("--C", type=float, default=1.0)
    b = sub.add_parser("bootstrap", help="edge_confidence_ against bootstrap on the same fits")
    b.add_argument("--simulator", choices=("package", "independent"), default="package")
    b.add_argument("--families", default="paper")
    b.add_argument("--first-seed", type=int, default=400700)
    b.add_argument("--seeds", type=int, default=10)
    b.add_argument("--resamples", type=int, default=50)
    b.add_argument("--d", type=int, default=5)
    b.add_argument("--n", type=int, default=1000)
    b.add_argument("--out", required=True)
    bs = sub.add_parser("bootstrap-summary", help="numbers of the bootstrap comparison")
    bs.add_argument("rows", nargs="+")
    bs.add_argument("--csv", default=None, help="the table, with the command")
    fl = sub.add_parser("floor", help="how many wrong decisions any map could leave undecided")
    fl.add_argument("rows", nargs="+")
    fl.add_argument("--C", type=float, default=1.0)
    fl.add_argument("--out", default=None, help="write the rows (JSON lines) here too")
    fl.add_argument("--fit-level", action="store_true",
                    help="add the fit-level statistics of rows written with them")
    db = sub.add_parser("doubt", help="fit-level candidates of a doubt term (tuning rows)")
    db.add_argument("rows", nargs="+")
    db.add_argument("--out", default=None, help="write the rows (JSON lines) here too")
    t = sub.add_parser("timing", help="fit time with and without the confidence")
    t.add_argument("--d", type=int, default=5)
    t.add_argument("--n", type=int, default=1000)
    t.add_argument("--seeds", type=int, default=30)
    t.add_argument("--repeats", type=int, default=3)
    t.add_argument("--out", default=None, help="write the result (JSON) here too")
    g = sub.add_parser("reliability", help="reliability diagrams per family, binned table")
    g.add_argument("inputs", nargs="+", metavar="[LABEL=]PAIRS",
                   help="pairs CSV (summary --pairs-csv) or per-fit rows, with a label "
                        "(e.g. auto=pairs_d5.csv.gz); files with one label are pooled")
    g.add_argument("--csv", default=None, help="the binned table, with the command")
    g.add_argument("--figure", default=None, help="the diagrams (PNG)")
    args = parser.parse_args(argv)
    # The command that wrote a table: the arguments given to main, not the
    # process's (a test runner's or a worker's).
    args.command = " ".join(["python", "benchmarks/edge_confidence.py",
                             *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    {"run": run, "summary": summary, "fit-map": fit_map, "timing": timing, "floor": floor,
     "bootstrap": compare_bootstrap, "bootstrap-summary": compare_summary, "doubt": doubt,
     "reliability": reliability}[args.cmd](args)


if __name__ == "__main__":
    main()
