"""Anatomy of the d = 5 fits with SHD >= 2: which errors, and does the verdict see them?

Reads rows of ``prune_level_K.py`` (or of ``zoo.py``) for the six bar
families, refits every data set whose default fit has SHD >= 2 (the same
fit: defaults, ``random_state=seed``) and sorts its errors under the
evaluation's matching: missing true edges, extra edges, reversed edges, and
for every missing edge whether the pruning rule at its level misses it on
the true latents too (``oracle_floor_d5.population_graph``: the edge's
weights vary too little across the environments for the rule). One JSON line
per fit; ``summary`` counts the fits the verdict flags and misses by kind.

    python wrong_fit_anatomy_d5.py run ROWS.jsonl OUT.jsonl
    python wrong_fit_anatomy_d5.py summary OUT.jsonl
"""
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from creator_plugin import CREATOR
from creator_plugin.metrics import evaluate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracle_floor_d5 import population_graph  # noqa: E402
from zoo import BAR_FAMILIES, data_of  # noqa: E402


def run(rows_path: str, out: str) -> None:
    warnings.simplefilter("ignore")
    rows = [json.loads(line) for line in Path(rows_path).read_text().splitlines()]
    rows = [r for r in rows if r.get("rule", "default") == "default" and r["params"] == "{}"
            and r["family"] in BAR_FAMILIES and r.get("status") == "ok" and r["shd"] >= 2]
    with open(out, "a") as fh:
        for r in rows:
            X, A, Y = data_of(r["simulator"], r["family"], r["d"], r["K"], r["n"], r["seed"])
            model = CREATOR(r["d"], random_state=r["seed"]).fit(X)
            ev = evaluate(A, Y, model.adjacency_matrix_, model.latents_, model.causal_order_)
            T = np.asarray(A) != 0
            E = np.asarray(ev["est_adjacency_matched"]) != 0
            G, _ = population_graph(A, Y)
            G = G != 0
            reversed_ = T & E.T & ~E
            missing = T & ~E & ~reversed_
            extra = E & ~T & ~reversed_.T
            fh.write(json.dumps({
                "simulator": r["simulator"], "family": r["family"], "seed": r["seed"],
                "shd": int(ev["shd"]), "stored_shd": r["shd"],
                "correct_order": bool(ev["correct_order"]),
                "flagged": bool(model.diagnostics_["quality"]["issues"]),
                "missing": int(missing.sum()), "extra": int(extra.sum()),
                "reversed": int(reversed_.sum()),
                "missing_invisible": int((missing & ~G).sum()),
            }) + "\n")
            fh.flush()


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    print(f"{len(rows)} fits with SHD >= 2 (refitted SHD equal to the stored one in "
          f"{sum(r['shd'] == r['stored_shd'] for r in rows)})")
    print("| kind | fits | flagged |")
    print("|---|---|---|")
    kinds = {
        "wrong order": lambda r: not r["correct_order"],
        "right order, only missing edges": lambda r: r["correct_order"] and r["extra"] == 0
        and r["reversed"] == 0,
        "  of which every missing edge invisible to the rule on the true latents":
            lambda r: r["correct_order"] and r["extra"] == 0 and r["reversed"] == 0
            and r["missing_invisible"] == r["missing"],
        "right order, an extra or reversed edge": lambda r: r["correct_order"]
        and (r["extra"] > 0 or r["reversed"] > 0),
    }
    for name, test in kinds.items():
        sub = [r for r in rows if test(r)]
        print(f"| {name} | {len(sub)} | {sum(r['flagged'] for r in sub)} |")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        summary(sys.argv[2:])
