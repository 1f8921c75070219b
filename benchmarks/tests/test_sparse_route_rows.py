"""The route's row files (``sparse_changes_zoo.py``, ``sparse_route_false.py``) are written by
one resumable loop: a row per fit as it ends, a rerun fits only the keys not yet there."""

import argparse

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
