"""CREATOR on the Open LLM Leaderboard, beside LiNGCReL, MultiGroupDirectLiNGAM and RLCD.

Pass the path of ``data/open_llm_leaderboard.csv`` from
github.com/hlzhang109/causal-eval (commit and SHA-256: docs/results/leaderboard.md).
The rows are grouped into environments by base-model shape (architecture and
parameter count, at least 100 models each); every method fits three latents,
named by the benchmark each correlates with most, and CREATOR is also fitted
with the number ``select_n_latent`` chooses. Its verdict and bootstrap are
printed beside the graphs.

Without a path the script writes a small synthetic file with the same
columns and runs on it (its numbers mean nothing about language models).
"""

import argparse
import tempfile
from pathlib import Path

import pandas as pd

from creator_plugin.casestudy.leaderboard import (
    LEADERBOARD_SHA256,
    PUBLISHED_CHAIN,
    leaderboard_walkthrough,
    load_open_llm_leaderboard,
    write_example_leaderboard,
)


def main(path: str | None, resamples: int) -> None:
    if path is None:
        path = write_example_leaderboard(Path(tempfile.mkdtemp()) / "example_leaderboard.csv")
        print(f"No file given: a synthetic file with the leaderboard's columns, {path}")
    data = load_open_llm_leaderboard(path)
    same = "the published file" if data.sha256 == LEADERBOARD_SHA256 else "not the published file"
    print(f"SHA-256 {data.sha256} ({same})")
    print(data)
    tables = leaderboard_walkthrough(data, n_resamples=resamples)
    with pd.option_context("display.width", 200, "display.max_colwidth", 90):
        sel = tables["selection"]
        print(f"\nselect_n_latent: {sel['n_latent'].iloc[0]} ({sel['decided_by'].iloc[0]})")
        print(sel[["k", "model", "p_value"]].to_string(index=False))
        print("\nGraphs (latents named by the benchmark they correlate with most):")
        print(tables["methods"][["method", "edges", "order", "published_pairs"]]
              .to_string(index=False))
        print("\nCREATOR's verdict:")
        for _, row in tables["methods"].dropna(subset=["issues"]).iterrows():
            print(f"  {row['method']}: {'trusted' if row['trusted'] else row['issues']}")
        print(f"\nBootstrap of CREATOR with 3 latents ({resamples} resamples):")
        print(tables["bootstrap"].to_string(index=False))
    chain = " -> ".join("/".join(group) for group in PUBLISHED_CHAIN)
    print(f"\nPublished chain of capabilities: {chain}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", help="data/open_llm_leaderboard.csv")
    parser.add_argument("--resamples", type=int, default=10)
    args = parser.parse_args()
    main(args.csv, args.resamples)
