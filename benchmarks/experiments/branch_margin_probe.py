"""Probe: which searched branch to keep, and by how much must it win?

Question (tuning seeds only): the default fit at 8 <= d <= 12 searches every
branch of the ordering (``order_branches``) by its fitted score
(``search_graph``) and keeps the branch whose searched score is lowest. That
mends some wrong orders the unsearched scores chose and makes a few. Between
that and searching only the branch the unsearched scores choose lies a
family of rules: keep the chosen branch unless another searched branch beats
its searched score by a margin of M edge prices (M = 0 is the default,
M = inf the chosen branch only). One default fit per data set gives every
rule, since the fit scores every branch before and after its search.

For each data set the default ``CREATOR(d, random_state=seed)`` is fitted
with ``_fit._structure`` wrapped so that every branch's model is recorded:
its fitted score before the search (the search's first score) and after it,
the searched graph's SHD and order against the truth, and the flips. One row
per data set. Usage::

    OMP_NUM_THREADS=1 python branch_margin_probe.py run SET FIRST COUNT OUT.jsonl
    python branch_margin_probe.py summary OUT.jsonl [...]

SET as in ``branch_probe.py`` (``d10``, ``d10-independent``, ``d8k8``,
``d12k12``, ...). ``summary`` prints, per margin, the mean SHD, and the data
sets better and worse than the default's rule.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import branch_probe as bp  # noqa: E402

import creator_plugin._fit as _fit  # noqa: E402
from creator_plugin import CREATOR  # noqa: E402
from creator_plugin.benchmark.scoring import score  # noqa: E402
from creator_plugin.revision import REVISION_PENALTY  # noqa: E402

MARGINS = (0.0, 1.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0, np.inf)
ORIGINAL_STRUCTURE, ORIGINAL_MODELS = _fit._structure, _fit._models


def fit_row(d: int, seed: int, X, A, Y) -> dict:
    """The default fit, every branch's scores and searched graph recorded."""
    branches, data = [], {}

    def models(X_list, config, holder, threshold):
        data["X"] = X_list
        return ORIGINAL_MODELS(X_list, config, holder, threshold)

    def structure(stage, config, threshold, *, score=False):
        s = ORIGINAL_STRUCTURE(stage, config, threshold, score=score)
        red = s.stage.reduction
        n_rows = np.array([x.shape[0] for x in s.stage.reduced])
        mean = n_rows @ red.env_means / int(n_rows.sum())
        latents = _fit._encode_decode(data["X"], mean, s.components, red)[0]
        m = _metrics(A, Y, s.adjacency, latents)
        search = s.search or {}
        branches.append({"unsearched": float(search["scores"][0]) if search else s.score,
                         "searched": s.score, "flips": len(search.get("flips", [])), **m})
        return s

    _fit._structure, _fit._models = structure, models
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, random_state=seed).fit(X)
    finally:
        _fit._structure, _fit._models = ORIGINAL_STRUCTURE, ORIGINAL_MODELS
    final = _metrics(A, Y, model.adjacency_matrix_, model.latents_)
    record = model.diagnostics_["order_branches"]
    price = REVISION_PENALTY * sum(np.log(x.shape[0]) for x in X)
    return {"seed": seed, "d": d, "price": float(price), "final": final,
            "chosen": record["chosen"] if record else 0, "branches": branches,
            "cpu": time.process_time() - start}


def _metrics(A, Y, adjacency, latents) -> dict:
    s = score(A, Y, adjacency, latents, list(range(adjacency.shape[0])))
    return {"shd": int(s["shd"]), "correct_order": bool(s["correct_order"])}


def kept(row: dict, margin: float) -> int:
    """The branch a rule with this margin keeps."""
    b = row["branches"]
    if len(b) == 1:
        return 0
    unsearched = [x["unsearched"] for x in b]
    searched = [x["searched"] for x in b]
    chosen = _first_min(unsearched)
    best = _first_min(searched)
    if searched[best] < searched[chosen] - margin * row["price"]:
        return best
    return chosen


def _first_min(values: list[float]) -> int:
    """The estimator's choice: a later branch replaces an earlier one only if lower by
    more than rounding."""
    best = 0
    for i, v in enumerate(values[1:], start=1):
        if v < values[best] - 1e-8 * max(1.0, abs(values[best])):
            best = i
    return best


def run(which: str, first: int, count: int, out: str) -> None:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if path.exists():
        done = {json.loads(line)["seed"] for line in path.read_text().splitlines()}
    with path.open("a") as fh:
        for seed in range(first, first + count):
            if seed in done:
                continue
            for cell, d, X, A, Y in bp.data_sets(which, seed):
                row = {"set": which, "cell": cell, **fit_row(d, seed, X, A, Y)}
                fh.write(json.dumps(row) + "\n")
                fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    mismatch = [r["seed"] for r in rows if r["branches"][kept(r, 0.0)]["shd"] != r["final"]["shd"]]
    print(f"{len(rows)} data sets; the M = 0 rule differs from the fit's own SHD in "
          f"{len(mismatch)}: {mismatch}")
    base = np.array([r["branches"][kept(r, 0.0)]["shd"] for r in rows])
    print("| margin (edge prices) | mean SHD | better / worse than M = 0 | wrong orders "
          "| seeds changed |")
    print("|---|---|---|---|---|")
    for m in MARGINS:
        ks = [kept(r, m) for r in rows]
        shd = np.array([r["branches"][k]["shd"] for r, k in zip(rows, ks)])
        wrong = sum(not r["branches"][k]["correct_order"] for r, k in zip(rows, ks))
        changed = [f"{r['seed']}: {b}→{s}" for r, b, s in zip(rows, base, shd) if b != s]
        print(f"| {m:g} | {shd.mean():.3f} | {(shd < base).sum()} / {(shd > base).sum()} | "
              f"{wrong} | {', '.join(changed)} |")
    gaps = []
    for r in rows:
        c = _first_min([x["unsearched"] for x in r["branches"]])
        b = _first_min([x["searched"] for x in r["branches"]])
        if b != c:
            gap = (r["branches"][c]["searched"] - r["branches"][b]["searched"]) / r["price"]
            gaps.append((gap, r["seed"], r["branches"][c]["shd"], r["branches"][b]["shd"]))
    print("data sets where the searched scores overturn the unsearched choice "
          "(gap in edge prices, seed, SHD chosen → SHD kept):")
    for g in sorted(gaps):
        print(f"  {g[0]:10.1f}  {g[1]}  {g[2]} → {g[3]}")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "summary":
        summary(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
