"""Aligning a result to a known truth: metrics.align_to_truth and the causal-learn graph."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from causallearn.graph.SHD import SHD

from creator_plugin import CREATOR, metrics, simulate
from creator_plugin.adapters import aligned_general_graph, creator, to_general_graph

TRUE_NAMES = ["Y1", "Y2", "Y3", "Y4"]


@pytest.fixture(scope="module")
def cases(fit):
    """Seed 0: exact recovery with a non-trivial relabelling; seed 9: one edge wrong."""
    out = {}
    for seed in (0, 9):
        sim = simulate(n_latent=4, n_environments=4, n_samples=600, random_state=seed)
        out[seed] = (sim, fit(sim.X, 4))
    return out


@pytest.mark.parametrize("seed,expected_shd", [(0, 0), (9, 1)])
def test_causallearn_shd_of_aligned_graph_is_the_package_shd(cases, seed, expected_shd):
    sim, model = cases[seed]
    own = metrics.evaluate_model(model, sim)["shd"]
    truth = to_general_graph(sim.adjacency, TRUE_NAMES)
    aligned = aligned_general_graph(model, sim.adjacency, sim.Y, TRUE_NAMES)
    assert SHD(truth, aligned).get_shd() == own == expected_shd
    # Label by label, the same fit looks much worse: the labels are arbitrary.
    naive = SHD(truth, to_general_graph(model.adjacency_matrix_, TRUE_NAMES)).get_shd()
    assert naive > own


def test_alignment_is_evaluates_matching(cases):
    sim, model = cases[9]
    ev = metrics.evaluate_model(model, sim)
    al = metrics.align_to_truth(model, sim.adjacency, sim.Y)
    np.testing.assert_array_equal(al.matching, ev["matching"])
    np.testing.assert_array_equal(al.adjacency, ev["est_adjacency_matched"])
    np.testing.assert_array_equal(al.matching[al.permutation], np.arange(4))
    np.testing.assert_allclose(np.sort(al.locr2), np.sort(ev["locr2_per_latent"]))


def test_permutation_puts_features_in_true_order(cases):
    sim, model = cases[0]  # exact recovery, labels permuted
    al = metrics.align_to_truth(model, sim.adjacency, sim.Y)
    assert not np.array_equal(al.permutation, np.arange(4))
    assert np.all(al.locr2 > 0.95), al.locr2
    # A root is surrounded by nobody: its matched feature is the true root itself.
    for root in np.flatnonzero(sim.adjacency.sum(axis=0) == 0):
        for Y, L in zip(sim.Y, model.latents_):
            assert abs(np.corrcoef(Y[:, root], L[:, al.permutation[root]])[0, 1]) > 0.99


def test_aligned_graph_from_causallearn_style_result():
    sim = simulate(n_latent=3, n_environments=4, n_samples=800, random_state=8)
    data, env = sim.stacked()
    cg = creator(data, env[:, None], n_latent=3, show_progress=False, random_state=0)
    names = ["a", "b", "c"]
    aligned = aligned_general_graph(cg, sim.adjacency, sim.Y, names)
    assert [n.get_name() for n in aligned.get_nodes()] == names
    own = metrics.evaluate_model(cg.estimator, sim)["shd"]
    assert SHD(to_general_graph(sim.adjacency, names), aligned).get_shd() == own


def test_alignment_rejects_bad_input(cases):
    sim, model = cases[0]
    with pytest.raises(ValueError, match="environments"):
        metrics.align_to_truth(model, sim.adjacency, sim.Y[:2])
    with pytest.raises(ValueError, match="true_adjacency"):
        metrics.align_to_truth(model, np.zeros((3, 3)), sim.Y)
    with pytest.raises(TypeError, match="fitted CREATOR"):
        metrics.align_to_truth(object(), sim.adjacency, sim.Y)
    with pytest.raises(ValueError, match="node_names has 3"):
        aligned_general_graph(model, sim.adjacency, sim.Y, ["a", "b", "c"])


def test_metrics_reject_what_would_give_a_silent_number(cases):
    sim, model = cases[0]
    A = sim.adjacency
    with pytest.raises(ValueError, match="est_adjacency contains NaN"):
        metrics.shd(A, np.full(A.shape, np.nan))
    with pytest.raises(ValueError, match="true_adjacency must be a square"):
        metrics.shd(np.zeros(4), A)
    # An order must be a permutation: a repeated or missing node used to count 0.
    for bad in ([0, 0, 1, 2], [0, 1, 2], [0, 1, 2, 4], [0.5, 1, 2, 3]):
        with pytest.raises(ValueError, match=r"order must be a permutation of 0\.\.3"):
            metrics.topological_divergence(bad, A)
    backwards = [float(i) for i in reversed(list(nx.topological_sort(nx.DiGraph(A))))]
    assert metrics.topological_divergence(backwards, A) == int(A.sum()) > 0
    with pytest.raises(ValueError, match="est_order must be a permutation"):
        metrics.evaluate(A, sim.Y, model.adjacency_matrix_, model.latents_, [0, 1, 1, 2])
    cyclic = np.roll(np.eye(4, dtype=int), 1, axis=1)  # 0 -> 1 -> 2 -> 3 -> 0
    with pytest.raises(ValueError, match="directed cycle"):
        metrics.evaluate(A, sim.Y, cyclic, model.latents_)
    assert metrics.evaluate(A, sim.Y, cyclic, model.latents_, [0, 1, 2, 3])["shd"] >= 1
    with pytest.raises(ValueError, match=r"est_latents\[1\] contains NaN"):
        metrics.evaluate(A, sim.Y, model.adjacency_matrix_,
                         [y if k != 1 else np.full_like(y, np.nan)
                          for k, y in enumerate(model.latents_)])
    with pytest.raises(TypeError, match="call fit first"):
        metrics.evaluate_model(CREATOR(4), sim)
