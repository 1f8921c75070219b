"""Reliability diagrams of the edge confidence from a pairs file: the bins, ECE, CSV, figure."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
from edge_confidence import ece, main, reliability_bins


def _pairs_file(path, rows):
    with gzip.open(path, "wt", newline="") as fh:
        w = csv.DictWriter(fh, ["simulator", "family", "seed", "a", "b", "truth", "edge", "c",
                                "near"])
        w.writeheader()
        for sim, fam, seed, c, y in rows:
            w.writerow({"simulator": sim, "family": fam, "seed": seed, "a": 0, "b": 1,
                        "truth": y, "edge": int(c >= 0.5), "c": c, "near": 0})


# paper: 4 pairs at 0.05 (none true), 4 at 0.95 (3 true), 2 at 1.0 (both true, last bin)
ROWS = ([("package", "paper", s, 0.05, 0) for s in range(4)]
        + [("package", "paper", s, 0.95, int(s < 3)) for s in range(4)]
        + [("package", "paper", s, 1.0, 1) for s in range(2)]
        + [("package", "measured", s, 0.35, int(s < 2)) for s in range(4)])


def test_bins_count_mean_and_frequency():
    c = np.array([0.05] * 4 + [0.95] * 4 + [1.0] * 2)
    y = np.array([0] * 4 + [1, 1, 1, 0] + [1, 1])
    bins = reliability_bins(c, y)
    assert [b["count"] for b in bins] == [4, 0, 0, 0, 0, 0, 0, 0, 0, 6]
    assert bins[0]["observed_frequency"] == 0 and bins[9]["observed_frequency"] == 5 / 6
    assert bins[9]["mean_confidence"] == pytest.approx((4 * 0.95 + 2) / 6)
    assert bins[9]["wilson_lo"] < 5 / 6 < bins[9]["wilson_hi"] <= 1
    assert np.isnan(bins[4]["observed_frequency"])
    # ECE is the count-weighted gap of these bins
    assert ece(c, y) == pytest.approx(0.4 * 0.05 + 0.6 * abs((4 * 0.95 + 2) / 6 - 5 / 6))


def test_reliability_writes_the_binned_table(tmp_path, capsys):
    path = tmp_path / "pairs.csv.gz"
    _pairs_file(path, ROWS)
    out = tmp_path / "bins.csv"
    main(["reliability", f"none={path}", "--csv", str(out)])
    with open(out) as fh:
        table = list(csv.DictReader(fh))
    groups = {(r["refine"], r["family"]) for r in table}
    assert groups == {("none", "paper"), ("none", "measured"),
                      ("none", "pooled bar families")}
    assert all(sum(int(r["count"]) for r in table if r["family"] == f) == n
               for f, n in (("paper", 10), ("measured", 4), ("pooled bar families", 14)))
    measured = [r for r in table if r["family"] == "measured"]
    assert float(measured[0]["ece"]) == pytest.approx(0.15)  # |0.35 - 0.5|
    assert int(measured[3]["count"]) == 4 and float(measured[3]["observed_frequency"]) == 0.5
    assert "reliability" in table[0]["command"]
    assert "measured" in capsys.readouterr().out


@pytest.mark.slow
def test_reliability_draws_one_panel_per_family(tmp_path):
    path = tmp_path / "pairs.csv.gz"
    _pairs_file(path, ROWS)
    figure = tmp_path / "figures" / "reliability.png"
    main(["reliability", f"auto={path}", f"none={path}", "--figure", str(figure)])
    assert figure.stat().st_size > 10_000
