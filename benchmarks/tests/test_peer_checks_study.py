"""The peers page's LiNGCReL agreement and RLCD tables are those of their committed rows."""

from pathlib import Path

import numpy as np
import pandas as pd
from lingcrel_agreement import _row_index, _true_alignment, table
from rlcd_table import markdown

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = (ROOT / "docs" / "results" / "peers.md").read_text()
PROSE = " ".join(PAGE.split())


def test_agreement_tables_are_on_the_page():
    rows = pd.read_csv(RESULTS / "lingcrel_agreement" / "agreement.csv")
    assert rows.groupby("setup").size().to_dict() == {
        "default workload": 20, "one noise law per node (setting 2)": 20,
        "leaderboard (d = 3)": 22}
    for block in table(rows).split("\n\n"):
        assert " ".join(block.split()) in PROSE, f"not on the page:\n{block}"


def test_rlcd_table_is_on_the_page():
    rows = [pd.read_csv(RESULTS / "rlcd" / name / "results.csv") for name in ("pure", "default")]
    assert all(len(r[r.method == "RLCD"]) == 20 * r["n_latent"].nunique() for r in rows)
    for block in markdown(rows).split("\n\n"):
        assert block in PAGE, f"not on the page:\n{block}"


def test_row_index_finds_a_row_up_to_sign():
    rows = np.array([[1.0, 0.0], [0.3, -2.0]])
    assert _row_index(-rows[1], rows) == 1 and _row_index(rows[0] * 1.0, rows) == 0


def test_true_alignment_follows_the_noises():
    rng = np.random.default_rng(0)
    z = [rng.laplace(size=(400, 3)) for _ in range(2)]
    x = [zk @ rng.standard_normal((3, 3)) for zk in z]
    W = [np.linalg.inv(np.linalg.lstsq(zk, xk, rcond=None)[0]).T for zk, xk in zip(z, x)]
    # environment 1's rows in another order: its row j is the unmixing row of noise perm[j]
    perm = [2, 0, 1]
    rows = np.stack([W[0], W[1][perm]])
    right = _true_alignment(rows, x, z)
    assert right[0].tolist() == [0, 1, 2]
    assert [perm[j] for j in right[1]] == [0, 1, 2]


def test_tables_count_what_they_say():
    rows = pd.DataFrame([
        {"setup": "s", "same_order": True, "same_alignment": True, "min_cos": 0.999,
         "author_keeps_our_alignment": True,
         "max_weight_diff": 0.01, "ours_valid": True, "author_valid": True,
         "ours_alignment_right": True, "author_alignment_right": True,
         "given_min_cos": 0.999, "given_max_weight_diff": 0.01, "cause": np.nan},
        {"setup": "s", "same_order": False, "same_alignment": False, "min_cos": 0.2,
         "author_keeps_our_alignment": False,
         "max_weight_diff": 3.0, "ours_valid": False, "author_valid": True,
         "ours_alignment_right": False, "author_alignment_right": True,
         "given_min_cos": 0.95, "given_max_weight_diff": 0.5, "cause": "alignment"}])
    text = table(rows)
    assert "| s | 2 | 1 | 1 | 1 | — | 1 / 2 | 1 / 2 |" in text
    assert "| s | 1 | 0 | 0 | 0 | 1 | 1 / 0 / 0 |" in text
    assert "| s | 2 | 1 | 0.9745 | 1 | 0.255 |" in text
