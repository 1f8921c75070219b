"""The LLM case study on the frozen design in benchmarks/results/llm/design.json.

Runs the case study at the design's layer on its fresh corpus seeds and writes
every row to benchmarks/results/llm/headline_runs.csv (all representations of
those runs; the headline reads the design's representation, the others are
explorations) and the per-run design facts to headline_design.csv.
"""

import json
from pathlib import Path

import torch

from creator_plugin.casestudy.llm import run_case_study

OUT = Path(__file__).resolve().parent / "results" / "llm"


def main() -> None:
    torch.set_num_threads(1)
    design = json.loads((OUT / "design.json").read_text())
    h = design["headline"]
    runs, facts, timing = run_case_study(
        seeds=design["corpus_seeds"], layers=(h["layer"],), draws=h["draws"],
        n_per_style=h["n_per_style"], n_sentences=h["n_sentences"], n_proxy=h["n_proxy"],
        methods=design["methods"], log=print)
    runs.to_csv(OUT / "headline_runs.csv", index=False)
    facts.to_csv(OUT / "headline_design.csv", index=False)
    print(timing)


if __name__ == "__main__":
    main()
