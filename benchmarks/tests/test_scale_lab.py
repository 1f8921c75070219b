"""The scale lab: one subprocess fit with its CPU time, memory and stage shares, resumable."""

from __future__ import annotations

import importlib

import pandas as pd
import pytest
import scale_lab


def test_every_stage_names_a_function_of_the_package():
    # The sampler attributes CPU time by function names; those of the current
    # modules must exist (the others are f741e1b's names of the same stages).
    earlier = {"_prune_stage", "_search_stage"}
    modules = [importlib.import_module(f"creator_plugin.{m}") for m in (
        "preprocessing", "ordering", "joint_ica", "independence", "pruning", "_fit",
        "sem", "quality", "dimension", "refine.revision", "refine.graph_search")]
    names = {n for m in modules for n in dir(m)}
    assert set(scale_lab.STAGES) - earlier <= names


@pytest.mark.slow
def test_a_fit_is_recorded_once_and_resumed(tmp_path):
    out = tmp_path / "rows.csv"
    args = ["--d", "4", "--n", "300", "--seeds", "1", "--out", str(out)]
    scale_lab.main(args)
    scale_lab.main(args)  # already there: nothing fitted again
    rows = pd.read_csv(out)
    assert len(rows) == 1
    row = rows.iloc[0]
    stages = sum(row[f"s_{s}"] for s in scale_lab.STAGE_NAMES)
    assert stages == pytest.approx(row.cpu, rel=0.05)
    assert row.extra_mb > 0 and row.data_mb == pytest.approx(4 * 300 * 4 * 8 / 2**20)
    assert "| this | 4 | 1 |" in scale_lab.summary([str(out)])
