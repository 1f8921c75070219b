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
    assert len(row.adjacency_sha) == 12 and not row.warmup


@pytest.mark.slow
def test_two_labels_of_one_checkout_fit_the_same_bits(tmp_path):
    out = tmp_path / "rows.csv"
    here = str(scale_lab.THIS)
    scale_lab.main(["--d", "3", "--n", "300", "--seeds", "2", "--warmup", "--out", str(out),
                    "--checkout", f"a={here}", "--checkout", f"b={here}"])
    rows = pd.read_csv(out)
    assert list(rows.version) == ["a", "b"] and rows.warmup.all()
    assert rows.adjacency_sha.nunique() == 1 and rows.latents_sha.nunique() == 1
    assert "| 3 | 3 | 300 | 1 |" in scale_lab.compare([str(out)], "a", "b")


def test_compare_pairs_the_seeds_both_versions_fitted(tmp_path):
    rows = pd.DataFrame({
        "version": ["old", "new", "new", "old", "new"],
        "d": 40, "K": 40, "n": 5000,
        "seed": [1, 1, 2, 2, 3],  # seed 3: only the new version, left out
        "cpu": [100.0, 20.0, 30.0, 90.0, 1.0],
        "shd": [0, 1, 0, 0, 9],
        "adjacency_sha": ["a", "b", "c", "c", "z"],
        "latents_sha": ["x", "y", "u", "v", "z"],
    })
    path = tmp_path / "rows.csv"
    rows.to_csv(path, index=False)
    table = scale_lab.compare([str(path)], "old", "new")
    # medians 95 / 25 = 3.80x; per seed 5x and 3x; SHD 0 / 0.5; seed 1 worse;
    # seed 2's adjacency the same, no latents the same
    assert table.splitlines()[-1] == ("| 40 | 40 | 5000 | 2 | 95 | 25 | **3.80x** (3.00x) | "
                                      "0.00 / 0.50 | 1 | 1 | 0 |")


@pytest.mark.slow
def test_repeat_records_the_fastest_of_the_fits(tmp_path, monkeypatch):
    out = tmp_path / "rows.csv"
    calls = []
    real = scale_lab.fit_in

    def spy(*args):
        calls.append(args[-1])
        return real(*args)

    monkeypatch.setattr(scale_lab, "fit_in", spy)
    scale_lab.main(["--d", "3", "--n", "300", "--seeds", "2", "--repeat", "3",
                    "--out", str(out)])
    row = pd.read_csv(out).iloc[0]
    assert calls == [3] and row["repeat"] == 3
    stages = sum(row[f"s_{s}"] for s in scale_lab.STAGE_NAMES)
    assert stages == pytest.approx(row.cpu, rel=0.05)  # the fastest fit's shares
