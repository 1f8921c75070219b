"""The route's row files (``sparse_changes_zoo.py``, ``sparse_route_false.py``) are written by
one resumable loop: a row per fit as it ends, a rerun fits only the keys not yet there."""

import argparse
import warnings

import pandas as pd
import sparse_changes_zoo
import sparse_route_false


def _zoo_row(family, d, seed, version):
    return {"version": version, "family": family, "d": d, "seed": seed, "status": "ok",
            "route": "sparse" if seed % 2 else "paper", "shd": seed % 3,
            "correct_order": True, "seconds": 1.0, "error": ""}


def test_zoo_rows_seed_major_with_the_baseline_beside_a_taken_route(tmp_path, monkeypatch):
    monkeypatch.setattr(sparse_changes_zoo, "fit_row", _zoo_row)
    monkeypatch.setattr(sparse_changes_zoo, "baseline_row",
                        lambda b, fam, d, seed: {**_zoo_row(fam, d, seed, "without"), "shd": 7})
    out = tmp_path / "rows.csv"
    args = dict(out=str(out), first_seed=10, d=10, version="route", baseline="/b",
                families=["paper", "measured"])
    sparse_changes_zoo.run(argparse.Namespace(seeds=1, **args))
    sparse_changes_zoo.run(argparse.Namespace(seeds=2, **args))  # resumes
    df = pd.read_csv(out)
    assert list(df.columns) == sparse_changes_zoo.COLUMNS
    assert list(zip(df.version, df.family, df.seed, df.shd)) == [
        ("route", "paper", 10, 1), ("route", "measured", 10, 1), ("route", "paper", 11, 2),
        ("without", "paper", 11, 7), ("route", "measured", 11, 2), ("without", "measured", 11, 7)]


def test_false_route_rows_family_major_and_resumed(tmp_path, monkeypatch):
    calls = []

    def fit_row(family, seed, version):
        calls.append((family, seed))
        return {"version": version, "family": family, "seed": seed, "status": "ok", "shd": 1}

    monkeypatch.setattr(sparse_route_false, "fit_row", fit_row)
    out = tmp_path / "rows.csv"
    args = dict(out=str(out), first_seed=5, version="this", families=["soft d4 K5 n800",
                                                                       "paper d3 K4 n300"])
    sparse_route_false.run(argparse.Namespace(seeds=1, **args))
    sparse_route_false.run(argparse.Namespace(seeds=2, **args))
    assert calls == [("soft d4 K5 n800", 5), ("paper d3 K4 n300", 5), ("soft d4 K5 n800", 6),
                     ("paper d3 K4 n300", 6)]
    df = pd.read_csv(out)
    assert list(df.columns) == sparse_route_false.COLUMNS and len(df) == 4


def test_route_decision_is_the_route_the_fit_takes():
    # hard single-node interventions take the sparse route; the zoo's data the paper's
    from creator_plugin import CREATOR, simulate_single_node
    sim = simulate_single_node(4, 5, 1000, n_features=6, noise="laplace", random_state=0)
    zoo_X = sparse_changes_zoo.zoo.data_of("package", "paper", 4, 4, 300, 3)[0]
    for X, want in ((sim.X, "sparse"), (zoo_X, "paper")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = CREATOR(4, random_state=3).fit(X)
            got = sparse_changes_zoo.route_decision(CREATOR(4, random_state=3), X)
        assert got == fit.diagnostics_["mechanism_changes"]["route"] == want


def test_decided_rows_count_as_seeds_without_an_shd(tmp_path, monkeypatch):
    monkeypatch.setattr(sparse_changes_zoo, "fit_row", _zoo_row)
    monkeypatch.setattr(sparse_changes_zoo, "decided_row", lambda fam, d, seed, v: {
        **_zoo_row(fam, d, seed, v), "status": "decided", "shd": "", "correct_order": "",
        "route": "paper"})
    out = tmp_path / "rows.csv"
    args = dict(out=str(out), d=10, version="route", baseline=None, families=["measured"])
    sparse_changes_zoo.run(argparse.Namespace(first_seed=0, seeds=1, **args))  # fitted: SHD 0
    sparse_changes_zoo.run(argparse.Namespace(first_seed=0, seeds=3, **args), decide=True)
    rows = sparse_changes_zoo.table(out).splitlines()
    assert rows[2] == "| measured | 3 (1 fitted) | 0 | 0.00 | 0.00 | 1.00 | 1.00 |"
