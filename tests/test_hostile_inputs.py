"""Inputs that used to be read wrongly without a word: labels, column names, offsets, bench data."""

import json

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 3, 300, n_features=5, random_state=3)


def _csv(tmp_path, sim, labels, name="data.csv"):
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    df["lab"] = np.asarray(labels, dtype=object)[env]
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("labels", [
    ["1", "01", "1.0"],
    ["True", "true", "TRUE"],
    ["NA", "N/A", "null"],
    ["1", "1.00", "+1"],
    ["nan", "NaN", "none"],
    [" a", "a", "a "],
    ["0", "-0", "0.0"],
    ["1e3", "1000", "1E3"],
])
def test_environment_labels_are_verbatim_text(tmp_path, sim, labels, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = _csv(tmp_path, sim, labels)
    code = main(["fit", str(path), "--env-column", "lab", "--n-latent", "3", "--out", "r"])
    assert code == 0, capsys.readouterr().err
    diag = json.loads((tmp_path / "r" / "diagnostics.json").read_text())
    assert sorted(diag["environment_labels"]) == sorted(labels)


def test_empty_label_cell_is_missing(tmp_path, sim, capsys):
    path = _csv(tmp_path, sim, ["a", "", "c"])
    assert main(["fit", str(path), "--env-column", "lab", "--n-latent", "3",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty cells" in err[0]


@pytest.mark.parametrize("make_columns", [
    lambda p: list(range(p)),
    lambda p: [0.5 * i for i in range(p)],
    lambda p: pd.MultiIndex.from_tuples([("g", i) for i in range(p)]),
    lambda p: [(i, "x") for i in range(p)],
    lambda p: [np.int64(10 + i) for i in range(p)],
])
def test_non_string_column_names_are_matched_by_name(sim, make_columns):
    cols = make_columns(sim.X[0].shape[1])
    frames = [pd.DataFrame(x, columns=cols) for x in sim.X]
    shuffled = [frames[0].iloc[:, ::-1], frames[1].iloc[:, [2, 0, 4, 1, 3]], frames[2]]
    a = CREATOR(3, random_state=0).fit(frames)
    b = CREATOR(3, random_state=0).fit(shuffled)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    for La, Lb in zip(a.latents_, b.latents_):
        np.testing.assert_allclose(La, Lb, atol=1e-8)


def test_different_non_string_columns_are_an_error(sim):
    frames = [pd.DataFrame(x) for x in sim.X]
    frames[1] = frames[1].rename(columns={4: 7})
    with pytest.raises(ValueError, match="other columns"):
        CREATOR(3).fit(frames)


def test_duplicated_non_string_columns_are_an_error(sim):
    frames = [pd.DataFrame(x, columns=[0, 1, 2, 3, 3]) for x in sim.X]
    with pytest.raises(ValueError, match="duplicated"):
        CREATOR(3).fit(frames)


@pytest.mark.parametrize("offset", [1e6, 1e10, 1e13])
def test_large_offset_column_is_kept(sim, offset):
    X = [x.copy() for x in sim.X]
    for x in X:
        x[:, 2] += offset
    model = CREATOR(3, random_state=0).fit(X)
    assert model.diagnostics_["dropped_columns"] == []


def test_rounding_level_variation_is_constant(sim):
    X = [np.c_[x, 3.0 + 1e-17 * np.arange(len(x))] for x in sim.X]
    model = CREATOR(3, random_state=0).fit(X)
    assert model.diagnostics_["dropped_columns"] == [5]


def _truth_files(tmp_path, sim, latents=True):
    names = [f"Y{i}" for i in range(3)]
    pd.DataFrame(sim.adjacency, index=names, columns=names).to_csv(tmp_path / "adj.csv")
    if latents:
        pd.DataFrame(np.vstack(sim.Y), columns=names).to_csv(tmp_path / "lat.csv", index=False)


def test_bench_data_drops_a_pandas_index_like_fit(tmp_path, sim):
    from creator_plugin.benchmark.workloads import read_csv_workload

    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    df["lab"] = np.array(["a", "b", "c"])[env]
    df.to_csv(tmp_path / "data.csv")  # with pandas' unnamed index column
    _truth_files(tmp_path, sim)
    wl = read_csv_workload(str(tmp_path / "data.csv"), "lab", str(tmp_path / "adj.csv"),
                           str(tmp_path / "lat.csv"))
    assert wl.feature_names == [f"x{i}" for i in range(5)]
    np.testing.assert_allclose(wl.X_list[0], sim.X[0])


def test_bench_data_labels_are_text(tmp_path, sim):
    from creator_plugin.benchmark.workloads import read_csv_workload

    path = _csv(tmp_path, sim, ["1", "01", "1.0"])
    _truth_files(tmp_path, sim)
    wl = read_csv_workload(str(path), "lab", str(tmp_path / "adj.csv"))
    assert sorted(wl.environment_labels) == ["01", "1", "1.0"]


def test_bench_without_truth_latents_reports_unknown(tmp_path, sim, capsys):
    path = _csv(tmp_path, sim, ["a", "b", "c"])
    _truth_files(tmp_path, sim, latents=False)
    code = main(["bench", "--data", str(path), "--env-column", "lab", "--truth-adjacency",
                 str(tmp_path / "adj.csv"), "--methods", "CREATOR", "--seeds", "1",
                 "--no-progress", "--out", str(tmp_path / "b")])
    assert code == 0, capsys.readouterr().err
    rows = pd.read_csv(tmp_path / "b" / "results.csv")
    assert rows["exact_dag"].isna().all() and rows["correct_order"].isna().all()
    lines = (tmp_path / "b" / "summary.md").read_text().splitlines()
    header = next(ln for ln in lines if "exact DAG" in ln)
    row = lines[lines.index(header) + 2]
    cells = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["exact DAG"] == "–" and cells["correct order"] == "–"


def test_utf16_csv_is_read_with_its_encoding(tmp_path, sim, capsys):
    path = _csv(tmp_path, sim, ["a", "b", "c"])
    wide = tmp_path / "wide.csv"
    wide.write_text(path.read_text(encoding="utf-8"), encoding="utf-16")
    assert main(["fit", str(wide), "--env-column", "lab", "--n-latent", "3",
                 "--out", str(tmp_path / "r"), "--encoding", "utf-16"]) == 0, \
        capsys.readouterr().err
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"x0,lab\n1\0,a\n")
    assert main(["fit", str(binary), "--env-column", "lab", "--n-latent", "1",
                 "--out", str(tmp_path / "r2")]) == 2
    assert "binary" in capsys.readouterr().err


@pytest.mark.parametrize("header", [["x0", "x0", "x2"], ["x0", "x0", "x0.1"]])
def test_duplicated_csv_column_names_are_refused(tmp_path, sim, header, capsys):
    X, env = sim.stacked()
    df = pd.DataFrame(X[:, :3], columns=header)
    df["lab"] = np.array(["a", "b", "c"], dtype=object)[env]
    path = tmp_path / "dup.csv"
    df.to_csv(path, index=False)
    assert main(["fit", str(path), "--env-column", "lab", "--n-latent", "2",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "duplicated column names ['x0']" in err[0]
    assert not (tmp_path / "r").exists()


def test_noise_free_data_in_float32_fit_like_float64():
    sim = simulate(3, 4, 400, n_features=12, random_state=0)
    single = [x.astype(np.float32) for x in sim.X]
    a = CREATOR(3, random_state=0).fit(sim.X)
    b = CREATOR(3, random_state=0).fit(single)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    assert b.diagnostics_["quality"]["issues"] == a.diagnostics_["quality"]["issues"] == []
    assert CREATOR("auto", random_state=0).fit(single).n_latent_ == 3
