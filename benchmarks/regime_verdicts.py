"""Does CREATOR's verdict name the interventional regime on the field's generators?

One CREATOR fit (defaults) per (generator, seed); a row per fit with the
verdict's finding kinds, the regime it read (``checks["regime"]`` of the
verdict, with the methods it names) or, for a refused fit, the error and
whether it names the clamping regime. Generators:

* the authors' (``simulate_family(name, 5, None, 2000, n_features=10,
  noise=...)``; ``multi_node_crl`` with its square mixing, p = 5), data seed
  ``seed``, CREATOR ``random_state = seed % 10000`` (as ``peers_field.py``);
* ``default``: ``simulate(5, 6, 2000, n_features=10)`` (CREATOR's own kind
  of data: any regime finding there is a false alarm);
* ``zoo-<family>``: the zoo's bar families (``benchmarks/zoo.py``
  ``BAR_FAMILIES``, ``simulate_family(family, 5, 5, 1000)``, CREATOR
  ``random_state = seed`` as the zoo fits): false alarms too;
* ``small-d<d>-K<K>-n<n>``: ``simulate(d, K, n)`` at small d (the regime
  reading's cost there: any regime finding is a false alarm), CREATOR
  ``random_state = seed % 10000``; :data:`SMALL` lists the grid
  (``--generators small`` runs all of it).

Usage (tuning seeds 50000 + s, evaluation seeds 60000 + s)::

    OMP_NUM_THREADS=1 python benchmarks/regime_verdicts.py --first-seed 60000 --seeds 20 \\
        --out benchmarks/results/peers/field_regime_verdicts_60000.csv
    python benchmarks/regime_verdicts.py \\
        --table benchmarks/results/peers/field_regime_verdicts_60000.csv

Run it with ``PYTHONPATH`` at an earlier checkout of the package for the
"before" rows (the script needs only the public API).
"""

from __future__ import annotations

import argparse
import csv
import json
import warnings
from collections import defaultdict
from pathlib import Path

from creator_plugin import CREATOR, simulate, simulate_family

D, P, N = 5, 10, 2000
AUTHORS = [f"{fam}-{z}" for fam in ("lincd", "lscale_i", "umni_crl", "multi_node_crl")
           for z in ("gaussian", "laplace")]
BAR_FAMILIES = ("paper", "heavy_tails", "wide_scales", "signed_weights", "measured", "unequal_n")
GENERATORS = [*AUTHORS, "default", *(f"zoo-{f}" for f in BAR_FAMILIES)]
SMALL = [*(f"small-d{d}-K{2 * d}-n{n}" for d in (3, 4) for n in (250, 500, 1000, 2000)),
         *(f"small-d{d}-K{k}-n{n}" for d in (5, 6) for k in (d, 2 * d)
           for n in (250, 500, 1000, 2000))]
COLUMNS = ["generator", "seed", "status", "kinds", "regime", "methods", "error",
           "error_names_clamping"]


def n_latent(generator: str) -> int:
    """The number of latents a generator draws (and CREATOR is given)."""
    return int(generator.split("-")[1][1:]) if generator.startswith("small-") else D


def data(generator: str, seed: int):
    """The simulation of one (generator, seed) and CREATOR's ``random_state`` for it."""
    if generator.startswith("small-"):
        d, k, n = (int(part[1:]) for part in generator.split("-")[1:])
        return simulate(d, k, n, random_state=seed), seed % 10000
    if generator == "default":
        return simulate(D, 6, N, n_features=P, random_state=seed), seed % 10000
    if generator.startswith("zoo-"):
        return simulate_family(generator[4:], 5, 5, 1000, random_state=seed), seed
    family, noise = generator.rsplit("-", 1)
    return simulate_family(family, D, None, N, n_features=D if family == "multi_node_crl" else P,
                           random_state=seed, noise=noise), seed % 10000


def fit_row(generator: str, seed: int) -> dict:
    """One row: the verdict of CREATOR's fit, or the refusal."""
    sim, state = data(generator, seed)
    row = {"generator": generator, "seed": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = CREATOR(n_latent(generator), random_state=state).fit(sim.X)
        except ValueError as exc:
            text = str(exc)
            return {**row, "status": "refused", "kinds": "[]", "regime": "null",
                    "methods": "[]", "error": text,
                    "error_names_clamping": "clamp latents" in text}
    quality = model.diagnostics_.get("quality") or {}
    regime = quality.get("checks", {}).get("regime")
    kinds = list(dict.fromkeys(i["kind"] for i in quality.get("issues", [])))
    return {**row, "status": "ok", "kinds": json.dumps(kinds),
            "regime": json.dumps(regime, default=int),
            "methods": json.dumps((regime or {}).get("methods", [])), "error": "",
            "error_names_clamping": False}


def run(generators, seeds, out: Path) -> None:
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        for g in generators:
            for seed in seeds:
                writer.writerow(fit_row(g, seed))
                fh.flush()


def table(paths) -> str:
    """Markdown: per generator, fits, refusals, and fits whose verdict names the regime and
    at least one method (a refusal naming the clamping regime counted apart)."""
    counts = defaultdict(lambda: [0, 0, 0, 0])
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                c = counts[r["generator"]]
                if r["status"] == "ok":
                    c[0] += 1
                    c[1] += ("interventional_regime" in json.loads(r["kinds"])
                             and bool(json.loads(r["methods"])))
                else:
                    c[2] += 1
                    c[3] += r["error_names_clamping"] == "True"
    lines = ["| generator | CREATOR fits | naming the regime and a method | refused "
             "| refusals naming the clamping regime |", "|---|---|---|---|---|"]
    for g in [g for g in [*GENERATORS, *SMALL] if g in counts]:
        n, hit, refused, clamped = counts[g]
        share = f"{hit} ({100 * hit / n:.0f} %)" if n else "—"
        lines.append(f"| `{g}` | {n} | {share} | {refused} | {clamped} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-seed", type=int, default=60000)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--generators", nargs="*", default=GENERATORS)
    parser.add_argument("--out", default=None)
    parser.add_argument("--table", nargs="*", default=None, help="row files to summarise")
    args = parser.parse_args(argv)
    generators = [g for name in args.generators for g in (SMALL if name == "small" else [name])]
    if args.table:
        print(table(args.table))
        return
    out = Path(args.out or f"benchmarks/results/peers/field_regime_verdicts_{args.first_seed}.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    run(generators, range(args.first_seed, args.first_seed + args.seeds), out)


if __name__ == "__main__":
    main()
