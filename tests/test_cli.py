"""The ``creator`` command line: demo and fit, through the installed entry point.

Every user error is one line on stderr with exit status 2, and no run ever
deletes or changes a file it did not write.
"""

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.cli import main


def _creator(*args, **kw):
    exe = shutil.which("creator")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "creator_plugin.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.slow
def test_demo_runs_and_prints_metrics():
    out = _creator("demo")
    assert out.returncode == 0, out.stderr
    for needle in ("True latent DAG", "Recovered DAG", "SHD", "LocR^2", "Topological divergence"):
        assert needle in out.stdout


@pytest.fixture
def csv_file(tmp_path):
    sim = simulate(3, 3, 400, n_features=5, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    df.insert(2, "lab", np.array(["a", "b", "c"])[labels])
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_fit_writes_outputs(csv_file, tmp_path):
    out_dir = tmp_path / "out"
    res = _creator("fit", str(csv_file), "--env-column", "lab", "--n-latent", "3",
                   "--out", str(out_dir))
    assert res.returncode == 0, res.stderr
    latents = pd.read_csv(out_dir / "latents.csv")
    assert list(latents.columns) == ["lab", "L1", "L2", "L3"]
    assert len(latents) == 1200
    adj = pd.read_csv(out_dir / "adjacency.csv", index_col=0)
    assert adj.shape == (3, 3) and set(np.unique(adj.to_numpy())) <= {0, 1}
    diag = json.loads((out_dir / "diagnostics.json").read_text())
    assert len(diag["pruning"]) == 3 and diag["environment_labels"] == ["a", "b", "c"]
    assert (out_dir / "weights.csv").exists()
    model = CREATOR.load(out_dir / "model.npz")  # the safe format
    assert list(model.feature_names_in_) == ["x0", "x1", "x2", "x3", "x4"]
    assert json.loads((out_dir / ".creator-output.json").read_text())["parameters"]["n_latent"] == 3


def _args(csv_file, out, *extra):
    return ["fit", str(csv_file), "--env-column", "lab", "--n-latent", "3", "--out", str(out),
            *extra]


def _one_error_line(capsys, needle):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert needle in err, err
    return err


def _tree(root):
    """Checksum and mtime of every file under root."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = (hashlib.sha256(fh.read()).hexdigest(),
                                                 os.stat(p).st_mtime_ns)
    return out


def test_fit_refuses_existing_dir_without_force(csv_file, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("precious")
    assert main(_args(csv_file, out_dir)) == 2
    _one_error_line(capsys, "already exists")
    assert main(_args(csv_file, out_dir, "--force")) == 2  # not written by creator
    _one_error_line(capsys, "not written by creator")
    assert sorted(p.name for p in out_dir.iterdir()) == ["keep.txt"]
    assert (out_dir / "keep.txt").read_text() == "precious"


def test_force_onto_directory_holding_the_input_changes_nothing(tmp_path, capsys):
    work = tmp_path / "project"
    work.mkdir()
    sim = simulate(3, 3, 300, n_features=4, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=list("abcd"))
    df["lab"] = labels
    df.to_csv(work / "data.csv", index=False)
    (work / "analysis.py").write_text("print('my own work')")
    (work / "sub").mkdir()
    (work / "sub" / "notes.md").write_text("notes")
    before = _tree(tmp_path)
    for out in (work, work / "sub", tmp_path):  # holds the input / is beside it / above it
        code = main(["fit", str(work / "data.csv"), "--env-column", "lab", "--n-latent", "3",
                     "--out", str(out), "--force"])
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        if out == work / "sub":
            assert code == 2 and "not written by creator" in err
        else:
            assert code == 2 and "contains the input file" in err
    assert _tree(tmp_path) == before


def test_out_current_directory_refused(csv_file, tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)

    def no_fit(*args, **kwargs):
        raise AssertionError("--out is checked before the fit")

    monkeypatch.setattr(CREATOR, "fit", no_fit)
    assert main(_args(csv_file, ".", "--force")) == 2
    _one_error_line(capsys, "current directory")
    assert list(run_dir.iterdir()) == []


def test_force_replaces_own_output(csv_file, tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(_args(csv_file, out_dir)) == 0
    first = json.loads((out_dir / ".creator-output.json").read_text())["run_id"]
    assert main(_args(csv_file, out_dir, "--force", "--seed", "1")) == 0
    marker = json.loads((out_dir / ".creator-output.json").read_text())
    assert marker["run_id"] != first and marker["parameters"]["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "out"]
    (out_dir / "my_plot.png").write_bytes(b"mine")
    capsys.readouterr()  # the fits' own warnings
    assert main(_args(csv_file, out_dir, "--force")) == 2
    _one_error_line(capsys, "my_plot.png")
    assert (out_dir / "my_plot.png").read_bytes() == b"mine"


def test_directory_created_during_the_fit_is_kept(csv_file, tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "out"
    real_fit = CREATOR.fit

    def fit_while_someone_writes(self, *args, **kwargs):
        out_dir.mkdir()
        (out_dir / "theirs.csv").write_text("theirs")
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(CREATOR, "fit", fit_while_someone_writes)
    assert main(_args(csv_file, out_dir)) == 2
    _one_error_line(capsys, "appeared while this run was going on")
    assert [p.name for p in out_dir.iterdir()] == ["theirs.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "out"]


@pytest.mark.slow
def test_concurrent_runs_exactly_one_wins(csv_file, tmp_path):
    out_dir = tmp_path / "out"
    exe = shutil.which("creator")
    cmd = [exe] if exe else [sys.executable, "-m", "creator_plugin.cli"]
    for trial in range(3):
        target = out_dir / str(trial)
        procs = [subprocess.Popen([*cmd, *_args(csv_file, target)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        codes = sorted(c for c, _ in results)
        assert codes == [0, 2], results
        lines = next(err for c, err in results if c == 2).strip().splitlines()
        # One error; before it, at most a note that the winner's temporary
        # directory belongs to a process that still runs (the loser can start
        # while the winner writes).
        assert "appeared" in lines[-1] or "exists" in lines[-1], lines
        for note in lines[:-1]:
            assert note.startswith("warning: ") and "which still runs" in note, lines
        assert len(lines) <= 2, lines
        assert CREATOR.load(target / "model.npz").n_latent == 3
        assert sorted(p.name for p in out_dir.iterdir()) == [str(t) for t in range(trial + 1)]


def test_disk_full_is_one_line_and_leaves_nothing(csv_file, tmp_path, monkeypatch, capsys):
    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "latents.csv")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert main(_args(csv_file, tmp_path / "out" / "deeper")) == 2
    _one_error_line(capsys, "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


def test_permission_errors_are_one_line(csv_file, tmp_path, monkeypatch, capsys):
    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(csv_file))

    with monkeypatch.context() as m:
        m.setattr(pd, "read_csv", denied)
        assert main(_args(csv_file, tmp_path / "o")) == 2
        _one_error_line(capsys, "Permission denied")
    with monkeypatch.context() as m:
        m.setattr(os, "access", lambda *a, **k: False)
        assert main(_args(csv_file, tmp_path / "o")) == 2
        _one_error_line(capsys, "no permission to write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


@pytest.mark.parametrize("kind,needle", [
    ("empty", "is empty"),
    ("header_only", "no data rows"),
    ("binary", "binary file"),
    ("latin1", "not utf-8 text"),
    ("ragged", "not a readable CSV"),
    ("text_in_numbers", "non-numeric feature columns ['x1']"),
    ("missing_labels", "has 2 empty cells"),
    ("no_features", "no feature columns"),
])
def test_bad_csv_is_one_line(tmp_path, capsys, kind, needle):
    path = tmp_path / "bad.csv"
    good = "lab,x0,x1\n" + "".join(f"{'ab'[i % 2]},{i},{i * i % 7}\n" for i in range(40))
    content = {
        "empty": b"",
        "header_only": b"lab,x0,x1\n",
        "binary": bytes(range(256)) * 8,
        "latin1": good.replace("lab", "lab\xe9").encode("latin-1"),
        "ragged": b"lab,x0,x1\na,1,2\nb,1,2,3,4\n",
        "text_in_numbers": good.replace("b,1,1", "b,1,oops").encode(),
        "missing_labels": ("lab,x0,x1\n,1,2\n,3,4\n" + good.split("\n", 1)[1]).encode(),
        "no_features": b"lab\na\nb\n",
    }[kind]
    path.write_bytes(content)
    env = "lab\xe9" if kind == "latin1" else "lab"
    assert main(["fit", str(path), "--env-column", env, "--n-latent", "2",
                 "--out", str(tmp_path / "o")]) == 2
    _one_error_line(capsys, needle)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv,needle", [
    (["demo", "--n-latent", "0"], "must be >= 1"),
    (["demo", "--n-environments", "1"], "must be >= 2"),
    (["demo", "--n-samples", "5"], "rows"),
    (["demo", "--seed", "-1"], "must be >= 0"),
    (["demo", "--n-latent", "x"], "invalid integer"),
    (["fit", "data.csv"], "required"),
    (["fit", __file__, "--env-column", "lab", "--n-latent", "2", "--out", "o",
      "--encoding", "klingon"], "unknown --encoding"),
    (["fit", "data.csv", "--env-column", "lab", "--n-latent", "0", "--out", "o"], ">= 1"),
    (["bench", "--seeds", "0"], "--seeds"),
    (["bench", "--n-jobs", "0"], "--n-jobs"),
    (["nope"], "invalid choice"),
])
def test_bad_arguments_are_one_line(argv, needle, capsys):
    with pytest.raises(SystemExit) as info:
        code = main(argv)
        raise SystemExit(code)
    assert info.value.code == 2
    _one_error_line(capsys, needle)


def test_bench_out_checked_before_running(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    assert main(["bench", "--quick", "--seeds", "1", "--out", str(blocker)]) == 2
    _one_error_line(capsys, "not a directory")
    assert blocker.read_text() == "mine"


def test_bench_never_writes_into_a_directory_it_did_not_write(tmp_path, capsys):
    """An existing directory is refused before any fit and left untouched; --force
    replaces only a directory an earlier run wrote."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.csv").write_text("my own results")
    small = ["bench", "--d", "2", "--n", "200", "--seeds", "1", "--methods", "CREATOR",
             "--no-figures", "--no-progress"]
    for force in ([], ["--force"]):
        assert main([*small, "--out", str(mine), *force]) == 2
        _one_error_line(capsys, str(mine))
        assert (mine / "results.csv").read_text() == "my own results"
    ours = tmp_path / "ours"
    assert main([*small, "--out", str(ours)]) == 0
    first = (ours / "results.csv").read_text()
    capsys.readouterr()
    assert main([*small, "--out", str(ours)]) == 2  # exists: not replaced without --force
    _one_error_line(capsys, "exists")
    assert main([*small, "--out", str(ours), "--force"]) == 0
    assert (ours / "results.csv").read_text().splitlines()[0] == first.splitlines()[0]


@pytest.mark.slow
def test_column_selection_and_index(tmp_path, capsys):
    sim = simulate(3, 3, 300, n_features=4, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["lab"] = np.array(["u", "v", "w"])[labels]
    df["comment"] = "free text"
    df["row_id"] = np.arange(len(df)) + 1000
    df.to_csv(tmp_path / "with_index.csv")  # pandas writes its index as an unnamed column
    base = ["--env-column", "lab", "--n-latent", "3"]
    assert main(["fit", str(tmp_path / "with_index.csv"), *base, "--out", str(tmp_path / "o1"),
                 "--drop-columns", "comment", "row_id"]) == 0
    err = capsys.readouterr().err
    assert "first column" in err and "not used as a feature" in err
    model = CREATOR.load(tmp_path / "o1" / "model.npz")
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]  # not 'Unnamed: 0'
    assert pd.read_csv(tmp_path / "o1" / "latents.csv", index_col=0).index.tolist() == \
        list(range(len(df)))
    assert main(["fit", str(tmp_path / "with_index.csv"), *base, "--out", str(tmp_path / "o2"),
                 "--columns", "d", "c", "b", "a", "--index-col", "row_id"]) == 0
    model = CREATOR.load(tmp_path / "o2" / "model.npz")
    assert list(model.feature_names_in_) == ["d", "c", "b", "a"]
    latents = pd.read_csv(tmp_path / "o2" / "latents.csv")
    assert list(latents.columns) == ["row_id", "lab", "L1", "L2", "L3"]
    assert latents["row_id"].tolist() == (np.arange(len(df)) + 1000).tolist()
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "with_index.csv"), *base, "--out", str(tmp_path / "o3"),
                 "--columns", "a", "zzz"]) == 2
    _one_error_line(capsys, "'zzz' is not a column")


def test_warnings_name_columns_by_name(tmp_path, capsys):
    sim = simulate(3, 3, 300, n_features=4, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.insert(1, "thermostat", 21.5)
    df["lab"] = labels
    df.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--env-column", "lab", "--n-latent", "3",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "['thermostat'] are constant within every environment" in err, err


def test_fit_reports_bad_input(csv_file, tmp_path, capsys):
    assert main(["fit", str(csv_file), "--env-column", "nope", "--n-latent", "3",
                 "--out", str(tmp_path / "o")]) == 2
    _one_error_line(capsys, "--env-column 'nope'")
    assert main(["fit", str(csv_file), "--env-column", "lab", "--n-latent", "9",
                 "--out", str(tmp_path / "o")]) == 2
    _one_error_line(capsys, "n_latent=9 exceeds")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_fit_revise_graph_reaches_the_estimator(csv_file, tmp_path):
    assert main(_args(csv_file, tmp_path / "out", "--revise-graph")) == 0
    diag = json.loads((tmp_path / "out" / "diagnostics.json").read_text())
    assert set(diag["graph_revision"]) == {"candidates", "flips", "scores", "margins",
                                           "n_scores", "stopped"}
    assert CREATOR.load(tmp_path / "out" / "model.npz").refine_options.revise_graph is True
    assert main(_args(csv_file, tmp_path / "default")) == 0
    default = json.loads((tmp_path / "default" / "diagnostics.json").read_text())
    assert default["graph_revision"] is None  # three environments: "auto" does not revise
    assert CREATOR.load(tmp_path / "default" / "model.npz").refine_options.revise_graph == "auto"
    assert main(_args(csv_file, tmp_path / "plain", "--no-revise-graph")) == 0
    plain = json.loads((tmp_path / "plain" / "diagnostics.json").read_text())
    assert plain["graph_revision"] is None
    assert CREATOR.load(tmp_path / "plain" / "model.npz").refine_options.revise_graph is False


def test_fit_search_graph_reaches_the_estimator(csv_file, tmp_path):
    assert main(_args(csv_file, tmp_path / "out", "--search-graph")) == 0
    diag = json.loads((tmp_path / "out" / "diagnostics.json").read_text())
    assert set(diag["graph_search"]) == {"candidates", "flips", "scores", "n_scores", "stopped"}
    assert CREATOR.load(tmp_path / "out" / "model.npz").refine_options.search_graph is True
    assert main(_args(csv_file, tmp_path / "default")) == 0
    default = json.loads((tmp_path / "default" / "diagnostics.json").read_text())
    assert default["graph_search"] is None  # few latents: not even "auto" searches
    assert CREATOR.load(tmp_path / "default" / "model.npz").refine_options.search_graph == "auto"
    assert main(_args(csv_file, tmp_path / "plain", "--no-search-graph")) == 0
    assert CREATOR.load(tmp_path / "plain" / "model.npz").refine_options.search_graph is False


def test_fit_order_branches_reaches_the_estimator(csv_file, tmp_path, capsys):
    assert main(_args(csv_file, tmp_path / "out", "--order-branches", "1")) == 0
    diag = json.loads((tmp_path / "out" / "diagnostics.json").read_text())
    assert set(diag["order_branches"]) == {"base_score", "branches", "chosen"}
    assert len(diag["order_branches"]["branches"]) <= 1
    assert CREATOR.load(tmp_path / "out" / "model.npz").refine_options.order_branches == 1
    capsys.readouterr()
    for bad in ("-1", "two"):
        with pytest.raises(SystemExit) as exc:
            main(_args(csv_file, tmp_path / "bad", "--order-branches", bad))
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "--order-branches" in err and "'auto' or an integer >= 0" in err
        assert not (tmp_path / "bad").exists()
    # the default is "auto" (no branches at this file's number of latents)
    assert main(_args(csv_file, tmp_path / "auto")) == 0
    assert CREATOR.load(tmp_path / "auto" / "model.npz").refine_options.order_branches == "auto"


def test_fit_quality_resamples_reaches_the_verdict(csv_file, tmp_path):
    assert main(_args(csv_file, tmp_path / "out", "--quality-resamples", "2")) == 0
    diag = json.loads((tmp_path / "out" / "diagnostics.json").read_text())
    stability = diag["quality"]["checks"]["stability"]
    assert stability["n_resamples"] == 2
    assert len(stability["differences"]) + len(stability["failures"]) == 2
    model = CREATOR.load(tmp_path / "out" / "model.npz")
    assert model.quality_resamples == 2


@pytest.mark.parametrize("sep,word", [(";", "semicolons"), ("\t", "tabs")])
def test_a_file_not_separated_by_commas_is_named_as_such(tmp_path, capsys, sep, word):
    sim = simulate(2, 2, 50, random_state=0)
    df = pd.concat([pd.DataFrame(x, columns=["a", "b"]).assign(lab=k) for k, x in enumerate(sim.X)])
    df.to_csv(tmp_path / "d.csv", index=False, sep=sep)
    assert main(["fit", str(tmp_path / "d.csv"), "--env-column", "lab", "--n-latent", "2",
                 "--out", str(tmp_path / "o")]) == 2
    _one_error_line(capsys, f"holds {word}: it is not comma-separated")
    assert not (tmp_path / "o").exists()
