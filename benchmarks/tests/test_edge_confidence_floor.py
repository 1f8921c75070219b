"""The edge-confidence lab's floor band and its comparison with the bootstrap, on made-up rows."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from edge_confidence import breakdown_band, main


def test_band_takes_the_most_wrong_decisions_within_the_allowance():
    c = np.array([0.01, 0.02, 0.3, 0.5, 0.7, 0.95, 0.99, 0.99])
    wrong = np.array([0, 0, 1, 0, 1, 1, 0, 0])
    share, (lo, hi) = breakdown_band(c, wrong, allowance=3)
    assert share == pytest.approx(2 / 3, abs=1e-3)
    assert lo < 0.3 and 0.7 < hi <= 0.95
    share, _ = breakdown_band(c, wrong, allowance=4)
    assert share == pytest.approx(1.0)


def test_bootstrap_summary_reads_both_probabilities(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    truth = [[0, 1], [0, 0]]
    with open(rows, "w") as fh:
        for seed in range(3):
            fh.write(json.dumps({"simulator": "package", "family": "paper", "d": 2, "n": 10,
                                 "seed": seed, "resamples": 4, "truth": truth,
                                 "adjacency": truth, "confidence": [[0, 0.95], [0.05, 0]],
                                 "bootstrap": [[0, 1.0], [0.0, 0]], "fit_cpu_s": 0.1,
                                 "bootstrap_cpu_s": 0.4}) + "\n")
    out = tmp_path / "table.csv"
    main(["bootstrap-summary", str(rows), "--csv", str(out)])
    table = list(csv.DictReader(open(out)))
    assert [(t["family"], t["probability"]) for t in table] == [
        ("paper", "confidence"), ("paper", "bootstrap"),
        ("pooled", "confidence"), ("pooled", "bootstrap")]
    assert float(table[0]["ece"]) == pytest.approx(0.05)
    assert float(table[1]["ece"]) == 0.0
    assert float(table[1]["cpu_s_per_fit"]) == pytest.approx(0.4)
    assert "bootstrap-summary" in table[0]["command"]
    capsys.readouterr()
