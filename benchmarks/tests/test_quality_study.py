"""The issue-13 benchmark code: the verdict's workloads and the n_latent grid."""

import pytest
from quality import (
    instability_table,
    level_table,
    run_verdict_benchmark,
    summarize_hard,
    verdict_cells,
)
from select_n_latent import (
    dimension_cells,
    run_dimension_benchmark,
    summarize,
)


def test_verdict_cells():
    assert len(verdict_cells("gaussian")) == 8
    assert {(c["d"], c["K"]) for c in verdict_cells("default")} == {
        (d, f * d) for d in range(2, 6) for f in (1, 2)}
    assert verdict_cells("hard_setting2") == [{"workload": "hard_setting2", "d": 5, "K": 5}]
    with pytest.raises(ValueError, match="workload"):
        verdict_cells("easy")


@pytest.mark.slow
def test_hard_setting2_rows_and_re_decided_levels():
    rows = run_verdict_benchmark("hard_setting2", [90], n=1000)
    (row,) = rows
    assert row["workload"] == "hard_setting2" and row["shd"] >= 3  # a wrong fit
    assert row["calibrated_disagreement"] >= 4.5 and "unreliable_order" in row["issues"]
    assert "hard_setting2 workload" in summarize_hard(rows)
    # Re-deciding the order check with levels nothing reaches unflags it.
    table = level_table(rows, [float("inf")], [float("inf")])
    assert "| inf | inf | 0.0% | - |" in table  # no fit with SHD <= 1


@pytest.mark.slow
def test_resampling_rows_match_the_estimator_and_re_decide():
    from creator_plugin import CREATOR, simulate

    (row,) = run_verdict_benchmark("hard", [1347], n=1000, resamples=4)
    sim = simulate(5, 5, 1000, random_state=1347)
    # The benchmark runs the estimator's check (other resample seeds): both flag the fit.
    model = CREATOR(5, quality_resamples=4, random_state=1347).fit(sim.X)
    assert row["shd"] >= 3 and row["resamples"] == 4
    assert 0.5 <= row["instability"] and "unstable_result" in row["issues"]
    assert len(row["resample_differences"].split(";")) == 4
    assert model.diagnostics_["quality"]["checks"]["stability"]["instability"] >= 0.5
    table = instability_table(rows := [row], [0.5, float("inf")], [float("inf")])
    assert "| 4 | inf | 0.5 | 100.0% | - |" in table
    assert "| 4 | inf | inf | 0.0% | - |" in table  # nothing else flags it
    assert "| 2 | inf | 0.5 |" in table and len(rows) == 1


def test_dimension_benchmark_rows_and_summary():
    cells = dimension_cells((2,), (2,), ("3d",), (0.05,))
    assert cells == [{"d": 2, "K": 4, "p": 6, "noise": 0.05}]
    rows = run_dimension_benchmark([0, 1], cells=cells)
    assert [r["seed"] for r in rows] == [0, 1]
    assert all(r["correct"] == (r["chosen"] == 2) for r in rows)
    assert "2 models, seeds 0-1" in summarize(rows)
