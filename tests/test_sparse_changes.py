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


def _changes(changed, bound):
    changed, bound = np.asarray(changed, dtype=bool), np.asarray(bound, dtype=float)
    K, d = changed.shape
    share = float(changed[1:].mean())
    z = np.zeros((K, d))
    return sparse_changes.MechanismChanges(0, changed, np.zeros((K, d), dtype=bool), z,
                                           np.ones((K, d), dtype=int), z + 1, share, bound)


def test_the_route_needs_every_other_cell_shown_unchanged():
    changed = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    shown = [[0, 0, 0], [9, 0.5, 0.9], [0.2, 9, 0.99], [0.1, 0.3, 9]]
    assert _changes(changed, shown).sparse
    one_open = [row[:] for row in shown]
    one_open[2][2] = 1.0  # neither a change nor shown unchanged
    c = _changes(changed, one_open)
    assert not c.sparse and c.undecided == 1 and c.share < sparse_changes.SPARSE_SHARE
    assert not _changes(np.zeros((4, 3)), np.zeros((4, 3))).sparse  # nothing changes


def test_few_rows_leave_the_cells_undecided_and_the_route_untaken():
    # Every mechanism changes; at 300 rows the strict change level finds fewer than half,
    # which the route once read as sparse changes (and lost).
    sim = simulate_family("paper", 4, 5, 300, random_state=700013)
    record = _fit(sim.X, 4).diagnostics_["mechanism_changes"]
    assert 0 < record["share"] < sparse_changes.SPARSE_SHARE
    assert record["route"] == "paper" and record["undecided"] > 0
    ratios = np.array(record["equivalence"])
    assert (ratios[~np.array(record["changed"])].max()) >= 1.0


def test_the_equivalence_ratio_shrinks_with_the_rows():
    ratio = sparse_changes._equivalence
    assert ratio(3.0, 3, 1000.0, 0.0, 0.0) < ratio(3.0, 3, 100.0, 0.0, 0.0)
    assert ratio(30.0, 3, 1000.0, 0.0, 0.0) > ratio(3.0, 3, 1000.0, 0.0, 0.0)
    assert ratio(0.0, 0, 1.0, 0.2, 0.0) == pytest.approx(0.2 / sparse_changes.SCALE_MARGIN)
    assert ratio(0.0, 2, 1000.0, 0.0, 0.0) == 0.0


def test_an_unconfirmed_route_keeps_the_default_issues(soft_single_node):
    # The route's reading of soft single-node data is one of several that fit.
    m = _fit(soft_single_node(4), 4)
    record = m.diagnostics_["mechanism_changes"]
    assert record["route"] == "sparse" and not record["route_check"]["passed"]
    issues = m.diagnostics_["quality"]["issues"]
    kinds = [i["kind"] for i in issues]
    assert "invariant_mechanisms" in kinds
    assert all("route for sparse changes" in i["message"] for i in issues
               if i["kind"] in ("invariant_mechanisms", "interventional_regime"))


def test_route_check_confirms_clamped_and_repeated_hard_changes():
    rng = np.random.default_rng(0)
    K, n = 4, 2000
    latents = []
    for k in range(K):
        z0 = rng.laplace(size=n)
        z1 = 0.8 * z0 + rng.laplace(size=n) if k in (0, 1) else rng.laplace(size=n)
        latents.append(np.column_stack([z0, z1]))
    adjacency = np.array([[0, 1], [0, 0]])
    changed = np.zeros((K, 2), dtype=bool)
    changed[2:, 1] = True  # removed edges in environments 2 and 3
    c = _changes(changed, np.zeros((K, 2)))
    check = sparse_changes.route_check(latents, adjacency, c)
    assert check["passed"] and check["ratios"][1] < 1.0 and not check["two_forms"]
    once = changed.copy()
    once[3, 1] = False
    once_check = sparse_changes.route_check(latents, adjacency, _changes(once, np.zeros((K, 2))))
    assert once_check["unconfirmed"] == [1] and once_check["two_forms"]
    latents[3][:, 1] = 0.5 * latents[3][:, 0] + rng.laplace(size=n)  # soft in environment 3
    assert not sparse_changes.route_check(latents, adjacency, c)["passed"]


def test_an_unconfirmed_route_of_two_forms_flags_what_the_latents_check_misses():
    from creator_plugin.quality import assess_fit
    rng = np.random.default_rng(1)
    latents = [rng.laplace(size=(500, 3)) @ np.triu(rng.uniform(0.5, 1.5, (3, 3)))
               for _ in range(4)]  # mechanisms of four forms: the latents' check is quiet
    kinds = [i.kind for i in assess_fit(latents, random_state=0).issues]
    assert "invariant_mechanisms" not in kinds
    flagged = assess_fit(latents, random_state=0, sparse_route="two forms")
    issue = next(i for i in flagged.issues if i.kind == "invariant_mechanisms")
    assert "at most one" in issue.message and "route for sparse changes" in issue.message
    quiet = assess_fit(latents, random_state=0, sparse_route="unconfirmed")
    assert "invariant_mechanisms" not in [i.kind for i in quiet.issues]
