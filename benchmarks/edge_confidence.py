"""Edge-level confidence of one fit against the truth, on the workload zoo.

Every fit is the default estimator (``--refine auto``) or the core alone
(``--refine none``), fitted once per data set of the zoo
(``benchmarks/zoo.py``: the package's simulator or
``benchmarks/independent_simulator.py``). One row per fit records the
fit's ``edge_confidence_`` and its evidence (``diagnostics_["edge_confidence"]``),
and the truth in the fit's labels: the true graph relabelled through the
LocR² matching of :func:`creator_plugin.metrics.match_latents` (every fit
is kept, whatever its matching), so that ``truth[a, b]`` says whether the
latents matched to a and b have a true edge a -> b.

Seeds: the map from evidence to probabilities was fitted on the tuning
seeds of :data:`TUNING` (``fit-map``) and frozen in
``creator_plugin/confidence.py``; the evaluation seeds start at
:data:`FIRST_EVALUATION_SEED`.

Usage::

    python benchmarks/edge_confidence.py run --simulator package --d 5 --n 1000 \\
        --first-seed 400000 --seeds 100 --refine auto --out ROWS.jsonl
    python benchmarks/edge_confidence.py summary ROWS.jsonl [...]
    python benchmarks/edge_confidence.py fit-map TUNING_ROWS.jsonl [...]

Rows already in the output file (same simulator, family, d, n, seed and
refine) are skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.metrics import match_latents

sys.path.insert(0, str(Path(__file__).resolve().parent))
import row_files  # noqa: E402
from zoo import BAR_FAMILIES, FLAG_FAMILIES, data_of  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "edge_confidence"
#: Seeds the map was fitted on (per d); never evaluated.
TUNING = {5: range(0, 100), 10: range(0, 30)}
FIRST_EVALUATION_SEED = 400000


def estimator(d: int, refine: str, seed: int) -> CREATOR:
    """The fit of a row: the default, or the core alone (``refine="none"``)."""
    return CREATOR(d, refine="auto" if refine == "auto" else None, random_state=seed)


def truth_in_fit_labels(A: np.ndarray, Y: list, latents: list) -> tuple[np.ndarray, np.ndarray]:
    """The true graph in the fit's labels (through the LocR² matching), and that matrix."""
    matching, M = match_latents(A, Y, latents)
    T = (np.asarray(A) != 0).astype(int)[np.ix_(matching, matching)]
    return T, M


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
    T, M = truth_in_fit_labels(A, Y, model.latents_)
    diag = model.diagnostics_
    row.update(
        status="ok", seconds=seconds, adjacency=model.adjacency_matrix_.tolist(),
        truth=T.tolist(), locr2_matrix=np.round(M, 4).tolist(),
        confidence=(np.round(model.edge_confidence_, 6).tolist()
                    if hasattr(model, "edge_confidence_") else None),
        evidence=diag.get("edge_confidence"),
        steps=[{k: s.get(k) for k in ("best_score", "runner_up_gap", "refined_scores")}
               for s in diag["ordering"]],
        issues=";".join(sorted({i["kind"] for i in (diag.get("quality") or {})
                                .get("issues", [])})),
        revision=diag.get("graph_revision"), search=diag.get("graph_search"),
        branches=diag.get("order_branches"),
    )
    return row


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    key = ("simulator", "family", "d", "n", "seed", "refine")
    done = {tuple(r[k] for k in key) for r in row_files.read_jsonl(out)} \
        if row_files.exists(out) else set()
    families = args.families.split(",") if args.families else list(BAR_FAMILIES)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for family in families:
            if (args.simulator, family, args.d, args.n, seed, args.refine) in done:
                continue
            row = fit_row(args.simulator, family, args.d, args.n, seed, args.refine)
            with row_files.open_text(out, "a") as fh:
                fh.write(json.dumps(row) + "\n")


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
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args)


if __name__ == "__main__":
    main()
