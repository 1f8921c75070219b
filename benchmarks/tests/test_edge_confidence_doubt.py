"""The edge-confidence lab's doubt study: its AUC and the doubt read from older rows."""

from __future__ import annotations

import numpy as np
import pytest
from edge_confidence import auc, with_doubt


def test_auc_counts_ties_as_one_half():
    assert auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    assert auc([1, 1, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.5)
    assert np.isnan(auc([1, 2], [1, 1]))


def test_rows_without_the_doubt_read_it_from_the_fit_statistics():
    pair = {"parent": 0, "child": 1, "statistic": 1.5, "se": 0.02, "wald": 5000.0, "dof": 4,
            "threshold": 0.2, "pruned": True, "edge": True}
    row = {"K": 5, "evidence": {"pairs": [pair], "margins": [None, None]},
           "fit_stats": {"ica_scaled_per_latent": [1.0, 1.0]}}
    clean = with_doubt(row)
    row["fit_stats"]["ica_scaled_per_latent"] = [500.0, 500.0]
    doubted = with_doubt(row)
    assert clean[0, 1] > 0.9 and 0.5 < doubted[0, 1] < 0.9
    row["evidence"]["doubt"] = [1.0, 1.0]  # the evidence's own doubt comes first
    assert with_doubt(row)[0, 1] == pytest.approx(clean[0, 1])
