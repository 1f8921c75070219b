"""The leaderboard page's numbers are those of its committed rows."""

from pathlib import Path

import pandas as pd
from leaderboard import markdown

from creator_plugin.casestudy.leaderboard import LEADERBOARD_COMMIT, LEADERBOARD_SHA256

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "benchmarks" / "results" / "leaderboard"
PAGE = (ROOT / "docs" / "results" / "real_data_leaderboard.md").read_text()
PROSE = " ".join(PAGE.split())  # line breaks of the page's paragraphs removed


def test_every_table_of_the_page_is_generated_from_the_rows():
    for block in markdown(ROWS).split("\n\n"):
        assert block in PAGE, f"not on the page:\n{block}"


def test_the_page_names_the_file_it_was_computed_on():
    assert LEADERBOARD_SHA256 in PROSE and LEADERBOARD_COMMIT in PROSE
    env = pd.read_csv(ROWS / "environments.csv")
    assert f"the {int(env.rows.sum()):,} models of the six environments" in PROSE
    assert len(env) == 6 and env.rows.min() >= 100


def test_the_prose_quotes_the_rows():
    sel = pd.read_csv(ROWS / "selection.csv").set_index("k")
    assert f"p = {sel.loc[3, 'p_value']:.1e}" in PROSE
    methods = pd.read_csv(ROWS / "methods.csv").set_index("method")
    three = methods.loc["CREATOR (n_latent=3)", "verdict"]
    for quoted in ("38%", "14.6 >= 5.5", "p = 2.5e-84"):
        assert quoted in three
    assert "38 %" in PROSE and "14.6 against a level of 5.5" in PROSE
    six = methods.loc["CREATOR (n_latent=6)", "verdict"]
    assert "32%" in six and "18.4 >= 6.5" in six and "steps [0, 1, 2]" in six
    boot = pd.read_csv(ROWS / "bootstrap.csv")
    kept = sorted(boot.loc[boot.in_fit, "edge_share"])
    assert f"{kept[0]:.0%} and {kept[1]:.0%}".replace("%", " %") in PROSE
    assert f"more than {boot.order_share.max():.0%}".replace("%", " %") in PROSE
    lat = pd.read_csv(ROWS / "latents.csv")
    lingcrel = lat[lat.method == "LiNGCReL"].set_index("name")
    assert f"({lingcrel.loc['IFEval', 'corr IFEval']:.2f})" in PROSE
    info = methods.loc["RLCD", "info"]
    assert '"clusters": [[0, 1, 3, 4]]' in info and '"measurement_edges": 6' in info


def test_published_numbers_are_listed_with_their_source():
    published = pd.read_csv(ROWS / "published.csv").set_index("quantity")
    for quantity in ("z1 best single benchmark R2 (MMLU-PRO)", "z2 given z1 best benchmark R2 "
                     "(IFEval)", "z3 given z1 and z2 best benchmark R2 (MATH Lvl 5)",
                     "llama-3-8b", "gemma-2-9b"):
        assert str(published.loc[quantity, "value"]) in PROSE
        assert published.loc[quantity, "source"].startswith("scripts/")
