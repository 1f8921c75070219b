"""Where the LLM case study loses the signal: linearity and verdict per layer and sketch step.

On the frozen design's fresh corpus seeds (benchmarks/results/llm/design.json)
every story is encoded once and read at every layer of the packaged encoder
(0 = the token embeddings, 6 = the last layer, the headline's), at four
points of the processing:

* ``pooled``: the unsketched mean-pooled states (384 numbers);
* ``first step``: the token states after the first step of the paper's
  sketch (the (tokens x 384) states times a (tokens x 2) Gaussian matrix,
  flattened to 768 numbers);
* ``paper sketch``: after the full two-step sketch to p = 30 (the first step
  times a 768 x 30 Gaussian matrix) -- the headline's representation at layer 6;
* ``pooled+sketch`` (exploration): the pooled states times one 384 x 30
  Gaussian matrix, which separates "projected to 30" from "weighted by token
  position".

The sketch matrices are the headline's (:func:`creator_plugin.casestudy.llm.sketch_draws`
and the same draws from ``SeedSequence([seed, draw, 1])``), ``draws`` of them per
seed; the pooled states have one run per seed. Only the layer-6 paper sketch
is the headline's representation; every other (layer, stage) is an exploration.

How linear the states are in the part grades (the true features; every
environment's states and grades are centred first, since CREATOR centres
every environment):

* ``cv_r2_<part>``: cross-validated R^2 of the part's grade predicted from the
  states by ridge regression (standardised states, ridge penalty chosen by
  efficient leave-one-out inside each training fold, 5 shuffled folds):
  1 - sum of squared out-of-fold errors / sum of squares of the grade. Is the
  grade linearly readable from the states at all?
* ``top3_<part>``: R^2 of the grade on the states' top-3 principal components
  (pooled over environments). CREATOR with three latents works in that
  subspace, so this is whether the grade lies in it.
* ``top3_share``: share of the variance of the top-3 principal component
  scores that is linear in the three grades (OLS of the 3 scores on the 3
  grades: explained sum of squares / total sum of squares). 1 means the top-3
  subspace is the grades' span; 0 means it carries none of them.
* ``r2_story``: share of the total variance of the states linear in the grades;
  ``gap3``: eigenvalue 3 / eigenvalue 4 of the pooled covariance.

What CREATOR's fit-quality verdict says: ``CREATOR(3, random_state=seed)`` is
fitted to the states and its ``diagnostics_['quality']`` is read:
``gauss_p`` (Gaussianity test of the recovered noises; above 0.01 the verdict
says "not identifiable"), ``het_p`` (equal-covariance test across
environments; above 0.01 "no heterogeneity"), ``ica_disagreement`` (calibrated
ICA disagreement; 4.5 or more is an "unreliable order"), ``n_latent_status``
and ``n_latent_p`` (the factor-model evidence for three latents), and
``issues`` (the kinds raised). Scored against the true grades:
``locr2_truth``, ``shd_truth``.

Writes benchmarks/results/llm/signal_rows.csv (one row per seed, layer, stage,
draw), signal_table.md (means over seeds and draws) and docs/figures/llm_signal.png.
Run: ``python benchmarks/llm_signal.py``.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from creator_plugin import CREATOR
from creator_plugin.casestudy.corpus import PARTS, TRUE_ADJACENCY, generate_corpus
from creator_plugin.casestudy.embedding import (
    HIDDEN_SIZE,
    N_LAYERS,
    encode,
    load_encoder,
    second_step_matrix,
)
from creator_plugin.casestudy.llm import FIRST_STEP_WIDTH, MAX_LENGTH, SKETCH_DIM, sketch_draws
from creator_plugin.metrics import evaluate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "llm"
FIGURE = ROOT / "docs" / "figures" / "llm_signal.png"
STAGES = ("pooled", "first step", "paper sketch", "pooled+sketch")
ALPHAS = np.logspace(-2, 5, 15)


def _centred(arrays: list[np.ndarray]) -> np.ndarray:
    return np.vstack([a - a.mean(axis=0) for a in arrays])


def _r2(y: np.ndarray, X: np.ndarray) -> float:
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return float(1.0 - ((y - X @ coef) ** 2).sum() / (y**2).sum())


def linearity(X_list: list[np.ndarray], grades: list[np.ndarray], seed: int) -> dict:
    """The linearity measures of the module docstring for one representation."""
    X, G = _centred(X_list), _centred([g.astype(float) for g in grades])
    folds = KFold(5, shuffle=True, random_state=seed)
    model = make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS))
    out = {}
    for j, part in enumerate(PARTS):
        pred = cross_val_predict(model, X, G[:, j], cv=folds)
        out[f"cv_r2_{part}"] = float(1.0 - ((G[:, j] - pred) ** 2).sum()
                                     / ((G[:, j] - G[:, j].mean()) ** 2).sum())
    U, s, _ = np.linalg.svd(X, full_matrices=False)
    top = U[:, :3] * s[:3]
    for j, part in enumerate(PARTS):
        out[f"top3_{part}"] = _r2(G[:, j], top)
    coef, *_ = np.linalg.lstsq(G, top, rcond=None)
    out["top3_share"] = float(1.0 - ((top - G @ coef) ** 2).sum() / (top**2).sum())
    out["r2_story"] = _r2(X, G)
    out["gap3"] = float(s[2] ** 2 / s[3] ** 2)
    return out


def verdict(X_list: list[np.ndarray], grades: list[np.ndarray], seed: int) -> dict:
    """CREATOR's fit on the representation: its verdict's checks and the truth score."""
    model = CREATOR(3, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the verdict is read from the diagnostics
        model.fit(X_list)
    q = model.diagnostics_["quality"]
    checks = q["checks"]
    truth = evaluate(TRUE_ADJACENCY, [g.astype(float) for g in grades],
                     model.adjacency_matrix_, model.latents_, model.causal_order_)
    return {"gauss_p": checks["gaussianity"]["p_value"],
            "het_p": checks["heterogeneity"]["p_value"],
            "ica_disagreement": checks["ica_agreement"]["calibrated"],
            "n_latent_status": checks.get("n_latent", {}).get("status"),
            "n_latent_p": checks.get("n_latent", {}).get("p_value"),
            "issues": ";".join(sorted({i["kind"] for i in q["issues"]})),
            "n_edges": int(np.sum(model.adjacency_matrix_ != 0)),
            "locr2_truth": truth["locr2"], "shd_truth": truth["shd"]}


def representations(pooled: dict, first: dict, seed: int, draws: int):
    """(layer, stage, draw, X_list) for every point measured; ``pooled`` and
    ``first`` are split by environment."""
    for layer in range(N_LAYERS + 1):
        yield layer, "pooled", -1, pooled[layer]
        for r in range(draws):
            # The headline's generator for draw r draws the pooled-sketch matrix
            # first, then the second-step one: drawn in the same order here.
            rng = np.random.default_rng(np.random.SeedSequence([seed, r, 1]))
            G = second_step_matrix(HIDDEN_SIZE, SKETCH_DIM, rng)
            G2 = second_step_matrix(FIRST_STEP_WIDTH * HIDDEN_SIZE, SKETCH_DIM, rng)
            yield layer, "first step", r, first[(layer, r)]
            yield layer, "paper sketch", r, [x @ G2 for x in first[(layer, r)]]
            yield layer, "pooled+sketch", r, [x @ G for x in pooled[layer]]


def measure(design: dict, log=print) -> pd.DataFrame:
    """Every row of signal_rows.csv."""
    h = design["headline"]
    enc = load_encoder()
    rows = []
    for seed in design["corpus_seeds"]:
        start = time.perf_counter()
        corpus = generate_corpus(h["n_per_style"], h["n_sentences"], random_state=int(seed))
        sizes = np.cumsum([len(s) for s in corpus.stories])[:-1]
        pooled, first = encode([t for s in corpus.stories for t in s], enc,
                               layers=tuple(range(N_LAYERS + 1)),
                               first_steps=sketch_draws(int(seed), h["draws"]),
                               max_length=MAX_LENGTH)
        pooled = {k: np.split(v, sizes) for k, v in pooled.items()}
        first = {k: np.split(v, sizes) for k, v in first.items()}
        log(f"seed {seed}: encoded in {time.perf_counter() - start:.0f} s")
        for layer, stage, draw, X_list in representations(pooled, first, int(seed), h["draws"]):
            rows.append({"seed": int(seed), "layer": layer, "stage": stage, "draw": draw,
                         "p": X_list[0].shape[1],
                         **linearity(X_list, corpus.grades, int(seed)),
                         **verdict(X_list, corpus.grades, int(seed))})
        log(f"seed {seed}: done in {time.perf_counter() - start:.0f} s")
    return pd.DataFrame(rows)


def _issue_counts(sub: pd.DataFrame) -> str:
    kinds = [k for v in sub["issues"].fillna("") for k in str(v).split(";") if k]
    short = {"not_identifiable": "NI", "no_heterogeneity": "NH", "unreliable_order": "UO",
             "n_latent_mismatch": "NL", "invariant_mechanisms": "IM",
             "mean_shifts_ignored": "MS", "weak_effects": "WE"}
    return ", ".join(f"{short.get(k, k)} {kinds.count(k)}" for k in sorted(set(kinds))) or "–"


def table(rows: pd.DataFrame, design: dict) -> str:
    """Markdown: the means over seeds (and sketch draws) per stage and layer."""
    h = design["headline"]
    lines = [
        f"Corpus seeds {design['corpus_seeds']} (the frozen design's), {h['n_per_style']} "
        f"stories per style, {h['draws']} sketch draws; rows: signal_rows.csv; command: "
        "python benchmarks/llm_signal.py. Means over seeds and draws (runs per cell: "
        f"{len(design['corpus_seeds'])} for pooled, {len(design['corpus_seeds']) * h['draws']}"
        " otherwise). Only 'paper sketch' at layer 6 is the "
        "headline's representation; everything else is an exploration.", "",
        "Issue kinds (counts over the cell's runs): NI not identifiable (Gaussianity "
        "p > 0.01), NH no heterogeneity, UO unreliable order, NL n_latent mismatch, "
        "IM invariant mechanisms, MS mean shifts ignored, WE every effect near the pruning "
        "level.", "",
        "| stage | layer | p | CV R² of grades (BG, CD, ED) | grade R² on top-3 PCs "
        "(BG, CD, ED) | top-3 share in grades | λ3/λ4 | Gaussianity p (median) | "
        "heterogeneity p (median) | ICA disagreement (median) | n_latent: too few | "
        "issues raised | mean edges | LocR² (truth) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for stage in STAGES:
        for layer in range(N_LAYERS + 1):
            g = rows[(rows.stage == stage) & (rows.layer == layer)]
            if g.empty:
                continue
            cv = ", ".join(f"{g[f'cv_r2_{p}'].mean():.2f}" for p in PARTS)
            top = ", ".join(f"{g[f'top3_{p}'].mean():.2f}" for p in PARTS)
            lines.append(
                f"| {stage} | {layer} | {g.p.iloc[0]} | {cv} | {top} | "
                f"{g.top3_share.mean():.2f} | {g.gap3.mean():.2f} | "
                f"{g.gauss_p.median():.2g} | {g.het_p.median():.2g} | "
                f"{g.ica_disagreement.median():.1f} | "
                f"{int((g.n_latent_status == 'too_few').sum())}/{len(g)} | "
                f"{_issue_counts(g)} | {g.n_edges.mean():.2f} | {g.locr2_truth.mean():.2f} |")
    return "\n".join(lines) + "\n"


def figure(rows: pd.DataFrame, path: Path) -> None:
    """Linearity and verdict checks per layer, one line per stage (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(17, 4))
    layers = np.arange(N_LAYERS + 1)
    for i, stage in enumerate(STAGES):
        g = rows[rows.stage == stage].groupby("layer")
        style = dict(marker="o", ms=3, color=f"C{i}", label=stage,
                     ls="--" if stage == "pooled+sketch" else "-")
        cv = g[[f"cv_r2_{p}" for p in PARTS]].mean().mean(axis=1)
        axes[0].plot(layers, cv.reindex(layers), **style)
        axes[1].plot(layers, g.top3_share.mean().reindex(layers), **style)
        axes[2].plot(layers, g.gauss_p.median().reindex(layers), **style)
        axes[3].plot(layers, g.locr2_truth.mean().reindex(layers), **style)
    axes[0].set_title("Grades readable from the states\n(CV ridge R², mean of BG, CD, ED)")
    axes[1].set_title("Top-3 subspace in the grades' span\n(share of its variance)")
    axes[2].set_title("Verdict: Gaussianity test of the noises\n(median p; above 0.01: "
                      "not identifiable)")
    axes[2].set_yscale("log")
    axes[2].axhline(0.01, color="grey", ls=":", lw=1)
    axes[3].set_title("CREATOR's latents vs the true grades\n(LocR²)")
    for ax in axes:
        ax.set_xlabel("encoder layer (6 = last)")
        ax.set_xticks(layers)
    for ax in (axes[0], axes[1], axes[3]):
        ax.set_ylim(-0.05, 1.0)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    torch.set_num_threads(1)
    design = json.loads((OUT / "design.json").read_text())
    start = time.perf_counter()
    rows = measure(design)
    rows.to_csv(OUT / "signal_rows.csv", index=False)
    text = table(rows, design)
    (OUT / "signal_table.md").write_text(text)
    figure(rows, FIGURE)
    print(text)
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
