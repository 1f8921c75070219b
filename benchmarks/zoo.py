"""Accuracy of CREATOR on the workload zoo, on two simulators.

Every non-interventional family of :data:`creator_plugin.simulation.FAMILIES`
(the interventional ones are the peers study's, ``benchmarks/peers.py``) is simulated by
the package (``--simulator package``) or by ``benchmarks/independent_simulator.py``
(``--simulator independent``, written apart from the package), CREATOR is fitted
with its defaults (or with ``--params``), and one row per fit is appended to a
JSON-lines file: SHD, LocR2, exact DAG, correct order, fit seconds and the
verdict (``diagnostics_["quality"]["issues"]``, plus any warning raised). The
summary counts a fit as flagged when the verdict lists an issue, and, in a
second pair of columns, also when the ordering step raised a
``WeakEvidenceWarning``.

Seed ranges: seeds 0-99 are for choosing defaults (``benchmarks/tune_defaults.py``);
evaluation seeds start at 10000 and are never used to choose anything.

Usage::

    python benchmarks/zoo.py run --simulator package --first-seed 10000 --seeds 50
    python benchmarks/zoo.py run --simulator independent --first-seed 10000 --seeds 50
    python benchmarks/zoo.py summary benchmarks/results/zoo/package_d5.jsonl

``--params`` are ``set_params`` keywords (``'{"refine__revise_graph": false}'``;
the earlier constructor's keywords, in which older rows and commands are
written, are read too, :data:`EARLIER`). Rows already in the output file (same
family and seed, fitted with the same settings) are skipped, so an interrupted
run resumes. Every row records, besides the ``--params`` given, the
estimator's resolved settings (its parameters, in the earlier keywords, plus
:data:`NUMERICS`): after a change of defaults
or of the fit's numerics, the same command fits again instead of skipping,
and ``summary`` (and ``tune_defaults.py``) read only the rows of the current
settings; rows of earlier settings stay in the file.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.benchmark.scoring import score
from creator_plugin.refine.graph_search import AUTO_SEARCH_LATENTS
from creator_plugin.refine.likelihood import AUTO_LIKELIHOOD_LATENTS
from creator_plugin.refine.order_branches import AUTO_BRANCH_LATENTS
from creator_plugin.simulation import simulate_family

sys.path.insert(0, str(Path(__file__).resolve().parent))
import independent_simulator  # noqa: E402
import row_files  # noqa: E402

BAR_FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")
FLAG_FAMILIES = ("near_gaussian", "weak_weights", "discrete_noise")
TUNING_SEEDS = range(0, 100)
FIRST_EVALUATION_SEED = 10000
RESULTS = Path(__file__).resolve().parent / "results" / "zoo"
# Part of every row's settings key: change it whenever the fit's results change
# without a change of its parameters (a numerical correction), so that resumed
# runs fit again instead of keeping rows of the earlier code. History:
# "2026-11-28": the consistency descent steps within the residuals' column space.
# "2026-11-28b": the verdict checks effect strength (a new issue kind, no new parameter).
# "2026-11-28c": the ordering keeps a start whose joint re-estimation left its source.
# "2026-11-28d": the verdict's ICA-agreement level 5.5 (no new parameter).
NUMERICS = "2026-11-28d"


#: ``set_params`` names of the options' fields and the earlier constructor's keywords,
#: in which the rows' ``params`` and ``settings`` keys are written (so that rows
#: fitted before the options objects existed stay current: the fits are the same,
#: ``tests/identity``). A value map turns the field's value into the keyword's.
EARLIER = {
    "ordering__n_reestimate": ("n_refine", None),
    "ordering__reestimate_min_sources": ("refine_min_sources", None),
    "ordering__polish": ("polish", None),
    "ordering__weak_evidence_level": ("weak_evidence_level", None),
    "refine__revise_graph": ("revise_graph", None),
    "refine__order_branches": ("order_branches", None),
    "refine__search_graph": ("search_graph", None),
    "refine__measurement_noise": ("measurement_noise", {True: "auto", False: None}),
    "refine__disentangle": ("disentangle", {True: "likelihood", False: "evidence",
                                            "auto": "auto"}),
}


def current_params(params: dict | None) -> dict:
    """``params`` (either spelling) as ``set_params`` keywords of the current estimator.

    ``disentangle`` is read as the earlier keyword (``"evidence"``: without the
    likelihood refinement, ``"likelihood"``: with it at any d), as the rows
    written before the options objects use it.
    """
    out = {}
    for key, value in (params or {}).items():
        if key in EARLIER or (key in CREATOR(2).get_params() and key != "disentangle"):
            out[key] = value
            continue
        for nested, (earlier, values) in EARLIER.items():
            if earlier == key:
                back = {v: k for k, v in (values or {}).items()}
                if key == "disentangle" and value == "subspace":
                    out["disentangle"] = "subspace"
                elif key != "measurement_noise" or value is not None:
                    out[nested] = back.get(value, value) if values else value
                break
        else:
            raise ValueError(f"params: unknown key {key!r}")
    return out


def params_key(params: dict | None) -> str:
    """The rows' ``params`` key of ``params`` (either spelling): earlier keywords, sorted JSON."""
    out = {}
    for key, value in current_params(params).items():
        earlier, values = EARLIER.get(key, (key, None))
        out[earlier] = values.get(value, value) if values else value
    return json.dumps(out, sort_keys=True)


def estimator(d: int, params: dict | None = None, **fixed) -> CREATOR:
    """``CREATOR(d, **fixed)`` with ``params`` (either spelling) set."""
    return CREATOR(d, **fixed).set_params(**current_params(params))


def settings_of(d: int, params: dict | None = None) -> str:
    """The resolved estimator settings of ``estimator(d, params)``, as a JSON key.

    ``random_state`` is left out (it is the row's seed). The key is written
    in the earlier constructor's keywords (:data:`EARLIER`).
    """
    return _settings(d, params_key(params))


def _earlier_settings(est: CREATOR) -> dict:
    """The parameters of ``est`` as the earlier constructor's ``get_params()`` gave them."""
    resolved = est.get_params(deep=False)
    resolved.pop("ordering"), resolved.pop("refine")
    o, r = est.ordering_options, est.refine_options
    ica = {k: v for k, v, default in (("max_iter", o.ica_max_iter, 400),
                                      ("tol", o.ica_tol, 1e-5), ("fun", o.ica_fun, "logcosh"))
           if v != default}
    likelihood = {True: "likelihood", False: "evidence", "auto": "auto"}[r.disentangle]
    resolved.update(
        n_refine=o.n_reestimate, refine_min_sources=o.reestimate_min_sources, polish=o.polish,
        weak_evidence_level=o.weak_evidence_level, ica_options=ica or None,
        scorer_options=dict(o.scorer_options) or None, revise_graph=r.revise_graph,
        order_branches=r.order_branches, search_graph=r.search_graph,
        measurement_noise="auto" if r.measurement_noise else None,
        disentangle="subspace" if resolved["disentangle"] == "subspace" else likelihood)
    return resolved


@functools.cache
def _settings(d: int, key: str) -> str:
    resolved = _earlier_settings(estimator(d, json.loads(key)))
    resolved.pop("random_state", None)
    low, high = AUTO_BRANCH_LATENTS
    if resolved["order_branches"] == 0 or (
            resolved["order_branches"] == "auto" and not low <= d <= high):
        # No branches: the fit before the parameter existed ("auto" never
        # branches outside that range), so rows written then stay current.
        del resolved["order_branches"]
    low, high = AUTO_SEARCH_LATENTS
    if resolved["search_graph"] is False or (
            resolved["search_graph"] == "auto" and not low <= d <= high):
        del resolved["search_graph"]  # likewise: no search
    low, high = AUTO_LIKELIHOOD_LATENTS
    if resolved["disentangle"] == "auto" and not low <= d <= high:
        resolved["disentangle"] = "evidence"  # likewise: the default before "auto"
    resolved["numerics"] = NUMERICS
    return json.dumps(resolved, sort_keys=True, default=repr)


def current(row: dict, params_key_: str | None = None) -> bool:
    """True when ``row`` was fitted with the current settings (and these params, if given)."""
    if params_key_ is not None and params_key(json.loads(row["params"])) != params_key(
            json.loads(params_key_)):
        return False
    return row.get("settings") == _settings(row["d"], params_key(json.loads(row["params"])))


def data_of(simulator: str, family: str, d: int, K: int, n: int, seed: int):
    """``(X_list, adjacency, latents)`` of one data set."""
    if simulator == "package":
        sim = simulate_family(family, d, K, n, random_state=seed)
        return sim.X, sim.adjacency, sim.Y
    sim = independent_simulator.simulate(family, d, K, n, seed=seed)
    return sim.X, sim.adjacency, sim.latents


def fit_one(simulator: str, family: str, d: int, K: int, n: int, seed: int,
            params: dict | None = None) -> dict:
    """Fit ``estimator(d, params)`` to one data set and score it."""
    X, A, Y = data_of(simulator, family, d, K, n, seed)
    row = {"simulator": simulator, "family": family, "d": d, "K": K, "n": n, "seed": seed}
    return fit_scored(X, A, Y, row, params)


def fit_scored(X, A, Y, row: dict, params: dict | None = None) -> dict:
    """``row`` (with ``d`` and ``seed``) completed by ``estimator(d, params)``'s fit to ``X``
    and its score against the truth ``A``, ``Y``."""
    d, seed = row["d"], row["seed"]
    row = {**row, "params": params_key(params), "settings": settings_of(d, params)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            model = estimator(d, params, random_state=seed).fit(X)
        except Exception as exc:  # a crash is a result
            row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            return row
        row["seconds"] = time.perf_counter() - start
    s = score(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
    issues = (model.diagnostics_.get("quality") or {}).get("issues", [])
    kinds = sorted({i if isinstance(i, str) else i.get("kind", str(i)) for i in issues})
    row.update(
        status="ok", shd=int(s["shd"]), locr2=float(s["locr2"]), exact_dag=bool(s["exact_dag"]),
        correct_order=bool(s["correct_order"]), n_true_edges=int(np.asarray(A).sum()),
        issues=";".join(kinds), flagged=bool(kinds),
        warned=bool(caught), warnings=";".join(sorted({w.category.__name__ for w in caught})),
    )
    return row


def run(args: argparse.Namespace) -> None:
    out = Path(args.out or RESULTS / f"{args.simulator}_d{args.d}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    params = json.loads(args.params) if args.params else {}
    key = params_key(params)
    done = set()
    for r in row_files.read_jsonl(out) if row_files.exists(out) else []:
        if r["d"] == args.d and current(r, key):
            done.add((r["family"], r["seed"]))
    # the interventional families have no independent simulator; the peers study covers them
    families = args.families.split(",") if args.families else [*BAR_FAMILIES, *FLAG_FAMILIES]
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    with row_files.open_text(out, "a") as fh:
        # seed-major, so a partial run covers every family evenly
        for seed in seeds:
            for fam in families:
                if (fam, seed) in done:
                    continue
                row = fit_one(args.simulator, fam, args.d, args.K or args.d, args.n, seed, params)
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summarize(rows: list[dict]) -> str:
    """Markdown table: one line per family."""
    lines = ["| family | fits | mean SHD (SE) | mean LocR² | exact DAG | correct order "
             "| SHD ≥ 2 flagged | SHD ≤ 1 flagged | SHD ≥ 2 flagged or weak evidence "
             "| SHD ≤ 1 flagged or weak evidence |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def share(sub, flag):
        return f"{sum(flag(r) for r in sub)}/{len(sub)}" if sub else "–"

    def verdict(r):
        return r["flagged"]

    def either(r):
        return r["flagged"] or "WeakEvidenceWarning" in r["warnings"]

    fams = [f for f in (*BAR_FAMILIES, *FLAG_FAMILIES) if any(r["family"] == f for r in rows)]
    fams += sorted({r["family"] for r in rows} - set(fams))
    for fam in fams:
        sub = [r for r in rows if r["family"] == fam and r["status"] == "ok"]
        failed = sum(r["family"] == fam and r["status"] != "ok" for r in rows)
        shd = np.array([r["shd"] for r in sub])
        bad = [r for r in sub if r["shd"] >= 2]
        good = [r for r in sub if r["shd"] <= 1]
        lines.append(
            f"| {fam} | {len(sub)}{f' (+{failed} failed)' if failed else ''} | {shd.mean():.2f} "
            f"({shd.std(ddof=1) / np.sqrt(len(shd)) if len(shd) > 1 else float('nan'):.2f}) "
            f"| {np.mean([r['locr2'] for r in sub]):.3f} "
            f"| {np.mean([r['exact_dag'] for r in sub]):.0%} "
            f"| {np.mean([r['correct_order'] for r in sub]):.0%} | {share(bad, verdict)} "
            f"| {share(good, verdict)} | {share(bad, either)} | {share(good, either)} |")
    seeds = sorted({r["seed"] for r in rows})
    lines.append("")
    lines.append(f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} per family at most).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="fit and append rows")
    r.add_argument("--simulator", choices=("package", "independent"), default="package")
    r.add_argument("--families", default=None, help="comma-separated (default: all)")
    r.add_argument("--first-seed", type=int, default=FIRST_EVALUATION_SEED)
    r.add_argument("--seeds", type=int, default=20)
    r.add_argument("--d", type=int, default=5)
    r.add_argument("--K", type=int, default=None, help="default K = d")
    r.add_argument("--n", type=int, default=1000)
    r.add_argument("--params", default=None, help="CREATOR keyword arguments as JSON")
    r.add_argument("--out", default=None, help="JSON-lines file (default per simulator and d)")
    s = sub.add_parser("summary", help="print the Markdown table of a rows file")
    s.add_argument("rows")
    s.add_argument("--params", default=None, help="only rows fitted with these (JSON)")
    s.add_argument("--first-seed", type=int, default=None)
    s.add_argument("--last-seed", type=int, default=None)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args)
        return
    rows = row_files.read_jsonl(args.rows)
    key = json.dumps(json.loads(args.params) if args.params else {}, sort_keys=True)
    rows = [r for r in rows if current(r, key)
            and (args.first_seed is None or r["seed"] >= args.first_seed)
            and (args.last_seed is None or r["seed"] <= args.last_seed)]
    if not rows:
        sys.exit(f"{args.rows}: no rows with params {key} and the current defaults "
                 "in that seed range.")
    print(summarize(rows))


if __name__ == "__main__":
    main()
