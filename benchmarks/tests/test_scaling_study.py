"""The scaling benchmark: one fresh process per size, ratios and exponents from one run."""

from __future__ import annotations

import math

import pytest
from scaling import scaling_figure, scaling_markdown, scaling_series


@pytest.mark.slow
def test_scaling_series_measures_each_size_in_its_own_process(tmp_path):
    rows = scaling_series("n", [300, 900])
    assert [r["value"] for r in rows] == [300, 900]
    first, second = rows
    assert first["time_ratio"] == 1.0 and first["exponent"] is None
    assert second["size_ratio"] == 3.0
    assert second["exponent"] == pytest.approx(
        math.log(second["seconds"] / first["seconds"]) / math.log(3.0))
    for r in rows:
        assert r["input_mb"] == pytest.approx(5 * r["value"] * 5 * 8 / 2**20)
        # The model keeps latents_ (as large as the input at p = d) and small matrices.
        assert r["input_mb"] <= r["traced_kept_mb"] < r["traced_peak_mb"]
        assert r["rss_peak_mb"] > r["rss_before_mb"] > 0
    table = scaling_markdown(rows)
    assert table.count("\n") == 3 and "| n | 900 |" in table
    scaling_figure(rows, tmp_path / "scaling.png")
    assert (tmp_path / "scaling.png").stat().st_size > 10_000
