"""Edge confidence of one fit (creator_plugin.confidence and ``edge_confidence_``)."""

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, confidence
from creator_plugin.simulation import simulate


def _record(statistic, wald, *, edge, dof=4, threshold=0.2, margin=None, se=0.02):
    """A two-latent evidence record with one tested pair 0 -> 1."""
    return {"pairs": [{"parent": 0, "child": 1, "statistic": statistic, "se": se, "wald": wald,
                       "dof": dof, "threshold": threshold, "pruned": edge, "edge": edge}],
            "margins": [margin, None]}


def test_clear_edge_absent_edge_and_borderline_one():
    clear = confidence.edge_confidence(_record(1.5, 5000.0, edge=True), 5)
    absent = confidence.edge_confidence(_record(0.01, 3.0, edge=False), 5)
    border = confidence.edge_confidence(_record(0.21, 2.0, edge=True, se=0.15), 5)
    assert clear[0, 1] > 0.9 and absent[0, 1] < 0.1
    assert 0.1 < border[0, 1] < 0.9
    for c in (clear, absent, border):
        assert c[1, 1] == 0 and c[0, 0] == 0 and c[1, 0] < 0.1  # no doubt about the order


def test_confidence_grows_with_the_evidence():
    stats = [0.05, 0.1, 0.2, 0.4, 0.8]
    values = [confidence.edge_confidence(_record(s, 10 * s / 0.02, edge=s > 0.2), 5)[0, 1]
              for s in stats]
    assert np.all(np.diff(values) > 0)


def test_undecided_pairs_are_strictly_inside_the_band():
    c = np.array([[0, 0.1, 0.5], [0.9, 0, 0.11], [0.0, 0.89, 0]])
    assert confidence.undecided_pairs(c) == [(0, 2), (1, 2), (2, 1)]


def test_pruning_evidence_replays_the_residual_rule():
    rng = np.random.default_rng(0)
    K, d = 5, 4
    tested = rng.normal(size=(K, d, d)) * 0.3
    se = np.full((K, d, d), 0.01)
    from creator_plugin.pruning import prune

    _, decisions = prune(tested, rule="residual", threshold=0.2)
    evidence = confidence.pruning_evidence(tested, se, 0.2)
    got = {(q["parent"], q["child"]): q for q in evidence}
    for dec in decisions:
        q = got[dec["parent"], dec["child"]]
        assert q["pruned"] == dec["edge"]
        assert q["statistic"] == pytest.approx(dec["statistic"], rel=1e-12)
    assert all(q["se"] > 0 and q["wald"] >= 0 for q in evidence)


@pytest.fixture(scope="module")
def fitted():
    sim = simulate(3, 4, 300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(3, random_state=0).fit(sim.X)
    return sim, model


def test_attribute_of_a_fit(fitted):
    _, model = fitted
    c = model.edge_confidence_
    assert c.shape == (3, 3) and np.all((c >= 0) & (c <= 1)) and np.all(np.diag(c) == 0)
    A = model.adjacency_matrix_
    assert np.all(c[A == 1] > 0.5)  # the point estimate is the likelier graph here
    record = model.diagnostics_["edge_confidence"]
    assert len(record["pairs"]) == 3 and len(record["margins"]) == 3


def test_saved_and_loaded(fitted, tmp_path):
    _, model = fitted
    model.save(tmp_path / "m.npz")
    loaded = CREATOR.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.edge_confidence_, model.edge_confidence_)


@pytest.mark.slow
def test_absent_for_the_rank_rules(fitted):
    sim, model = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rank = CREATOR(3, pruning="rank", random_state=0).fit(sim.X)
        assert not hasattr(rank, "edge_confidence_")
        assert "edge_confidence" not in rank.diagnostics_
        again = CREATOR(3, random_state=0).fit(sim.X)
        again.set_params(pruning="rank").fit(sim.X)  # a refit drops the earlier one
    assert not hasattr(again, "edge_confidence_")


def test_doubt_of_poorly_unmixed_latents_shrinks_their_edges():
    rng = np.random.default_rng(0)
    sources = [rng.laplace(size=(1000, 3)) for _ in range(2)]
    doubt = confidence.latent_doubt(sources)
    assert max(doubt) < 10  # independent sources: a few units
    c, s = np.cos(0.5), np.sin(0.5)
    rotate = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    mixed = confidence.latent_doubt([S @ rotate for S in sources])
    assert mixed[0] < 10 and min(mixed[1:]) > confidence.DOUBT_LEVEL  # a mixture: tens
    clear = _record(1.5, 5000.0, edge=True)
    assert confidence.edge_confidence(clear, 5)[0, 1] > 0.9
    doubted = confidence.edge_confidence({**clear, "doubt": [2 * confidence.DOUBT_LEVEL] * 2}, 5)
    kept = confidence.edge_confidence({**clear, "doubt": [2 * confidence.DOUBT_LEVEL, 1.0]}, 5)
    assert 0.5 < doubted[0, 1] < 0.9 and 0.1 < doubted[1, 0] < 0.5  # undecided both ways
    assert kept[0, 1] > 0.9 and kept[1, 0] < 0.1  # one clean latent: no doubt
    absent = _record(0.01, 3.0, edge=False)  # a missing edge's log-odds are not shrunk
    assert np.all(confidence.doubt_factor([1e4, 1e4], np.zeros((2, 2))) == 1)
    assert confidence.edge_confidence({**absent, "doubt": [1e4, 1e4]}, 5)[0, 1] < 0.1
