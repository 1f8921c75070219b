"""The route for sparse mechanism changes (creator_plugin.sparse_changes).

The change test finds the targets of hard single-node interventions; on
LinCD's Laplace generator the route recovers edges the paper's route
prunes; on ``simulate`` data, whose weights change in every environment, the
route is not taken (so those fits stay the paper route's, which the identity
test checks to the bit); ``reference=``; the model file, the CLI's table and
the networkx bridge carry ``changed_mechanisms_``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, simulate, simulate_family, simulate_single_node, sparse_changes
from creator_plugin.benchmark.scoring import correlation_scores, score


def _fit(X, d, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(d, random_state=0).fit(X, **kw)


def _targets(sim, K, d):
    truth = np.zeros((K, d), dtype=bool)
    for k, t in enumerate(sim.params["targets"]):
        truth[k, t] = True
    return truth


@pytest.fixture(scope="module")
def hard():
    """Hard single-node interventions, Laplace noise: observational + one per latent."""
    sim = simulate_single_node(4, 5, 1000, n_features=6, noise="laplace", random_state=0)
    return sim, _fit(sim.X, 4)


def test_change_test_finds_the_targets_of_hard_interventions(hard):
    sim, m = hard
    record = m.diagnostics_["mechanism_changes"]
    assert record["route"] == "sparse" and record["level"] == sparse_changes.CHANGE_LEVEL
    match = correlation_scores(sim.adjacency, sim.Y, m.adjacency_matrix_, m.latents_)["matching"]
    changed = np.zeros_like(m.changed_mechanisms_)
    for est, true in match:
        changed[:, true] = m.changed_mechanisms_[:, est]
    truth = _targets(sim, 5, 4)
    assert m.changed_mechanisms_.shape == (5, 4) and m.changed_mechanisms_.dtype == bool
    assert not m.changed_mechanisms_[0].any()  # the reference row
    assert not hasattr(m, "edge_confidence_")  # the paper pruning's confidence: not this route's
    assert (changed == truth).mean() >= 0.9 and (changed & truth).sum() == truth.sum()


def test_route_recovers_edges_the_paper_route_prunes(monkeypatch):
    # LinCD's generator: each edge weight is the same in every environment but the one
    # that intervenes on its child, which the paper's pruning reads as no change.
    sim = simulate_family("lincd", 4, None, 1000, n_features=6, noise="laplace",
                          random_state=0)
    route = _fit(sim.X, 4)
    assert route.diagnostics_["mechanism_changes"]["route"] == "sparse"
    got = score(sim.adjacency, sim.Y, route.adjacency_matrix_, route.latents_)
    monkeypatch.setattr(sparse_changes, "takes_route", lambda changes: False)
    paper = _fit(sim.X, 4)
    assert paper.diagnostics_["mechanism_changes"]["route"] == "paper"
    missed = score(sim.adjacency, sim.Y, paper.adjacency_matrix_, paper.latents_)
    assert got["shd_corr"] == 0 and got["mcc"] > 0.98
    assert missed["shd_corr"] > got["shd_corr"]


def test_route_is_not_taken_when_weights_change_everywhere():
    sim = simulate(4, 4, 1000, random_state=0)
    m = _fit(sim.X, 4)
    record = m.diagnostics_["mechanism_changes"]
    assert record["route"] == "paper" and record["share"] >= sparse_changes.SPARSE_SHARE
    assert m.changed_mechanisms_.sum() == round(record["share"] * 3 * 4)


def test_reference_by_label_position_and_bad_values(hard):
    sim, first = hard
    X, labels = sim.stacked()
    names = np.array(["obs", "i1", "i2", "i3", "i4"])[labels]
    m = _fit(X, 4, environments=names, reference="i2")
    k = m.environment_labels_.index("i2")
    assert m.diagnostics_["mechanism_changes"]["reference"] == k
    assert not m.changed_mechanisms_[k].any() and m.changed_mechanisms_.any()
    by_position = _fit(sim.X, 4, reference=0)
    np.testing.assert_array_equal(by_position.adjacency_matrix_, first.adjacency_matrix_)
    np.testing.assert_array_equal(by_position.changed_mechanisms_, first.changed_mechanisms_)
    for bad in ("nope", 7, True, -1):
        with pytest.raises(ValueError, match="reference"):
            CREATOR(4).fit(sim.X, reference=bad)


def test_model_file_round_trip_and_older_files(hard, tmp_path):
    _, m = hard
    m.save(tmp_path / "m.npz")
    loaded = CREATOR.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.changed_mechanisms_, m.changed_mechanisms_)
    assert loaded.changed_mechanisms_.dtype == bool
    assert loaded.diagnostics_["mechanism_changes"]["changed"] == m.changed_mechanisms_.tolist()
    old = CREATOR.load(tmp_path / "m.npz")
    del old.changed_mechanisms_  # as written before the attribute existed
    old.save(tmp_path / "old.npz")
    assert not hasattr(CREATOR.load(tmp_path / "old.npz"), "changed_mechanisms_")
    old.changed_mechanisms_ = np.zeros((2, 4), dtype=bool)
    old.save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="changed_mechanisms_"):
        CREATOR.load(tmp_path / "bad.npz")


def test_cli_table_and_networkx_attribute(hard, tmp_path):
    from creator_plugin.adapters import to_networkx
    from creator_plugin.cli import main

    sim, m = hard
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    df.insert(0, "env", np.array(["obs", "i1", "i2", "i3", "i4"])[labels])
    df.to_csv(tmp_path / "data.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["fit", str(tmp_path / "data.csv"), "--env-column", "env", "--n-latent",
                     "4", "--reference", "obs", "--out", str(tmp_path / "out")]) == 0
        assert main(["fit", str(tmp_path / "data.csv"), "--env-column", "env", "--n-latent",
                     "4", "--reference", "none", "--out", str(tmp_path / "out2")]) == 2
    table = pd.read_csv(tmp_path / "out" / "changed_mechanisms.csv", index_col=0)
    assert list(table.columns) == ["L1", "L2", "L3", "L4"]
    assert table.index.tolist() == ["i1", "i2", "i3", "i4", "obs"]
    assert not table.loc["obs"].any() and table.to_numpy().sum() >= 3
    g = to_networkx(m)
    assert [g.nodes[f"L{i + 1}"]["changed_mechanisms"] for i in range(4)] == \
        m.changed_mechanisms_.T.tolist()
