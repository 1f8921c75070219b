"""Integration tests of the adapters with the real libraries.

Ground truth comes from an easy simulated case that CREATOR recovers exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from causallearn.graph.GraphClass import CausalGraph
from causallearn.graph.NodeType import NodeType
from causallearn.graph.SHD import SHD
from dowhy import CausalModel, gcm

from creator_plugin import CREATOR, metrics, simulate
from creator_plugin.adapters import (
    creator,
    general_graph_to_adjacency,
    general_graph_to_networkx,
    intervene_observations,
    to_dowhy_causal_model,
    to_gcm,
    to_general_graph,
    to_linear_gaussian_bn,
    to_networkx,
    to_pgmpy_dag,
    to_pydot,
)

# d = 3, K = 4, n = 2000, seed 8: the true DAG is the chain 1 -> 2 -> 0. Nodes 1
# and 2 have no surrounding parents, so their recovered features are pure
# rescalings of the true ones; node 0 (a sink) is identified only up to a mix
# with its parent 2. CREATOR recovers this DAG with SHD 0.
D, K, N, SEED = 3, 4, 2000, 8


@dataclass
class Case:
    sim: object
    est: CREATOR
    matching: list[int]  # matching[i] = true node of recovered latent i
    names: list[str]

    def recovered_of(self, true_node: int) -> int:
        return self.matching.index(true_node)

    def scale(self, k: int, true_node: int) -> tuple[float, float]:
        """Slope and intercept of recovered feature on the true one in env k."""
        i = self.recovered_of(true_node)
        slope, intercept = np.polyfit(self.sim.Y[k][:, true_node], self.est.latents_[k][:, i], 1)
        return float(slope), float(intercept)

    def total_effect(self, k: int, t: int, o: int) -> float:
        """True total effect of true node t on true node o in env k."""
        return float(np.linalg.inv(np.eye(D) - self.sim.W[k])[t, o])

    def recovered_total_effect(self, k: int, t: int, o: int) -> float:
        """The same effect in units of the recovered features (t, o unsurrounded)."""
        return self.total_effect(k, t, o) * self.scale(k, o)[0] / self.scale(k, t)[0]


def make_case(fit) -> Case:
    sim = simulate(n_latent=D, n_environments=K, n_samples=N, random_state=SEED)
    est = fit(sim.X, D)
    ev = metrics.evaluate_model(est, sim)
    assert ev["shd"] == 0, f"precondition: CREATOR should recover this easy DAG, got {ev}"
    return Case(sim, est, [int(m) for m in ev["matching"]], [f"L{i + 1}" for i in range(D)])


# The pair used for effects: true 1 -> 2, both unsurrounded (pure rescalings).
TRUE_T, TRUE_O = 1, 2
ENV = 2  # the environment with the largest effect (about -1.3 recovered units)


@pytest.fixture(scope="module")
def case(fit) -> Case:
    return make_case(fit)


@pytest.fixture(scope="module")
def cg(case):
    data, env = case.sim.stacked()
    return creator(data, env[:, None], n_latent=D, show_progress=False, random_state=0)


def _true_graph_in_recovered_names(case) -> np.ndarray:
    """True DAG relabelled so recovered latent i carries true node matching[i]."""
    m = case.matching
    return case.sim.adjacency[np.ix_(m, m)]


# ---------------------------------------------------------------- (1a) causal-learn
def test_causallearn_shd_against_truth_is_zero(case, cg):
    truth = to_general_graph(_true_graph_in_recovered_names(case), case.names)
    assert SHD(truth, cg.G).get_shd() == 0
    # A deliberately wrong graph is detected by the same class.
    wrong = to_general_graph(_true_graph_in_recovered_names(case).T, case.names)
    assert SHD(truth, wrong).get_shd() == int(case.sim.adjacency.sum())


def test_creator_result_is_a_causallearn_graph(case, cg):
    assert isinstance(cg, CausalGraph)
    assert [n.get_name() for n in cg.G.get_nodes()] == ["L1", "L2", "L3"]
    assert all(n.get_node_type() == NodeType.LATENT for n in cg.G.get_nodes())
    A = cg.estimator.adjacency_matrix_
    for i, j in np.argwhere(A):
        assert cg.G.graph[i, j] == -1 and cg.G.graph[j, i] == 1
        assert cg.G.is_directed_from_to(cg.G.get_nodes()[i], cg.G.get_nodes()[j])
    adj, names = general_graph_to_adjacency(cg.G)
    np.testing.assert_array_equal(adj, A)
    assert names == cg.node_names
    # latents follow data's row order and equal the estimator's transform
    data, _ = case.sim.stacked()
    np.testing.assert_allclose(cg.latents, cg.estimator.transform(data))
    # same fit as the list interface
    np.testing.assert_array_equal(A, case.est.adjacency_matrix_)
    # causal-learn's own CausalGraph helpers work on the result
    assert sorted(map(tuple, cg.find_fully_directed())) == sorted(map(tuple, np.argwhere(A)))


def test_creator_accepts_flat_c_indx_node_names_and_labels(case):
    data, env = case.sim.stacked()
    labels = np.array(["a", "b", "c", "d"])[env]
    res = creator(data, labels, n_latent=D, node_names=["u", "v", "w"], show_progress=False,
                  random_state=0)
    assert [n.get_name() for n in res.G.get_nodes()] == ["u", "v", "w"]
    assert res.estimator.environment_labels_ == ["a", "b", "c", "d"]
    g = to_networkx(res, environment="c")
    assert set(g.nodes) == {"u", "v", "w"}
    with pytest.raises(ValueError, match="Unknown environment"):
        to_networkx(res, environment=0)


def test_show_progress_prints_to_stderr(case, capsys):
    data, env = case.sim.stacked()
    creator(data, env, n_latent=D, show_progress=True, random_state=0)
    err = capsys.readouterr().err
    assert "CREATOR" in err and "edges" in err


def test_general_graph_roundtrip_and_networkx(case):
    A = _true_graph_in_recovered_names(case)
    G = to_general_graph(A, ["a", "b", "c"], latent=False)
    assert all(n.get_node_type() == NodeType.MEASURED for n in G.get_nodes())
    adj, names = general_graph_to_adjacency(G)
    np.testing.assert_array_equal(adj, A)
    g = general_graph_to_networkx(G)
    assert set(g.edges) == {(names[i], names[j]) for i, j in np.argwhere(A)}
    assert nx.get_node_attributes(g, "node_type") == dict.fromkeys(names, "MEASURED")


def test_pydot_drawing(cg):
    dot = to_pydot(cg).to_string()
    assert "shape=square" in dot and "arrowhead=normal" in dot
    assert dot.count("->") == int(cg.estimator.adjacency_matrix_.sum())


# ------------------------------------------------------------- networkx and pgmpy
def test_networkx_graph_carries_per_environment_parameters(case):
    est = case.est
    g = to_networkx(est, environment=ENV)
    assert list(g.nodes) == case.names
    assert g.graph["environments"] == [0, 1, 2, 3]
    for i, j in np.argwhere(est.adjacency_matrix_):
        e = g.edges[case.names[i], case.names[j]]
        assert e["weights"] == pytest.approx([W[i, j] for W in est.weights_])
        assert e["weight"] == pytest.approx(est.weights_[ENV][i, j])
    for i, name in enumerate(case.names):
        assert g.nodes[name]["noise_scales"] == pytest.approx([s[i] for s in est.noise_scales_])
    assert nx.is_directed_acyclic_graph(g)


def test_pgmpy_dag_and_network(case):
    from pgmpy.base import DAG
    from pgmpy.models import LinearGaussianBayesianNetwork

    dag = to_pgmpy_dag(case.est)
    assert isinstance(dag, DAG)
    assert set(dag.edges) == set(to_networkx(case.est).edges)
    bn = to_linear_gaussian_bn(case.est, environment=ENV)
    assert isinstance(bn, LinearGaussianBayesianNetwork)
    assert bn.check_model()
    it, io = case.recovered_of(TRUE_T), case.recovered_of(TRUE_O)
    cpd = bn.get_cpds(case.names[io])
    coef = dict(zip(cpd.evidence, cpd.beta[1:], strict=True))
    assert coef[case.names[it]] == pytest.approx(case.est.weights_[ENV][it, io], abs=1e-6)


# ------------------------------------------------------------------- (1b) DoWhy
def test_dowhy_backdoor_estimate_matches_true_effect_in_recovered_units(case):
    """Tolerance: 0.05 recovered units (the true effect is about -1.3 in env 2)."""
    it, io = case.recovered_of(TRUE_T), case.recovered_of(TRUE_O)
    for k in range(K):
        cm = to_dowhy_causal_model(case.est, case.names[it], case.names[io], environment=k)
        assert isinstance(cm, CausalModel)
        estimand = cm.identify_effect()
        value = cm.estimate_effect(estimand, method_name="backdoor.linear_regression").value
        truth = case.recovered_total_effect(k, TRUE_T, TRUE_O)
        assert value == pytest.approx(truth, abs=0.05), (k, value, truth)


def test_dowhy_refuter_runs(case):
    it, io = case.recovered_of(TRUE_T), case.recovered_of(TRUE_O)
    cm = to_dowhy_causal_model(case.est, case.names[it], case.names[io], environment=ENV)
    estimand = cm.identify_effect()
    est = cm.estimate_effect(estimand, method_name="backdoor.linear_regression")
    ref = cm.refute_estimate(estimand, est, method_name="random_common_cause",
                             num_simulations=5, random_seed=0)
    assert ref.new_effect == pytest.approx(est.value, abs=0.02)


# --------------------------------------------------------------------- (1c) gcm
@pytest.fixture(scope="module")
def intervention(case):
    it = case.recovered_of(TRUE_T)
    _, c_t = case.scale(ENV, TRUE_T)
    value = c_t + 1.5
    scm = to_gcm(case.est, environment=ENV)
    samples = intervene_observations(case.est, {case.names[it]: value}, environment=ENV,
                                     n_samples=20000, random_state=0, scm=scm)
    return value, scm, samples


def test_gcm_model_is_fitted_with_linear_mechanisms(case, intervention):
    _, scm, _ = intervention
    assert isinstance(scm, gcm.InvertibleStructuralCausalModel)
    for node in scm.graph.nodes:
        mech = scm.causal_mechanism(node)
        if scm.graph.in_degree(node) == 0:
            assert isinstance(mech, gcm.EmpiricalDistribution)
        else:
            assert isinstance(mech, gcm.AdditiveNoiseModel)
    # counterfactuals need the invertible model: they run
    df = pd.DataFrame(case.est.latents_[ENV][:5], columns=case.names)
    cf = gcm.counterfactual_samples(scm, {case.names[0]: lambda x: x + 1}, observed_data=df)
    assert cf.shape == (5, D)


def test_gcm_interventional_mean_matches_analytic(case, intervention):
    """Tolerance: 0.05 recovered units (Monte Carlo SE is about 0.005)."""
    value, _, samples = intervention
    io = case.recovered_of(TRUE_O)
    a_t, c_t = case.scale(ENV, TRUE_T)
    a_o, c_o = case.scale(ENV, TRUE_O)
    analytic = c_o + a_o * case.total_effect(ENV, TRUE_T, TRUE_O) * (value - c_t) / a_t
    assert samples.latents[case.names[io]].mean() == pytest.approx(analytic, abs=0.05)


def test_intervention_pushed_to_observations_matches_truth(case, intervention):
    """E[x | do] against H E[y | do] from the simulator, within 2% of its norm."""
    value, _, samples = intervention
    a_t, c_t = case.scale(ENV, TRUE_T)
    u = (value - c_t) / a_t  # the same intervention on the true latent
    expected = case.sim.H @ (np.linalg.inv(np.eye(D) - case.sim.W[ENV])[TRUE_T] * u)
    got = samples.observations.mean(axis=0)
    assert samples.observations.shape == (20000, case.sim.H.shape[0])
    assert np.linalg.norm(got - expected) <= 0.02 * np.linalg.norm(expected)


# ------------------------------------------------------------------- (1d) pgmpy
def test_pgmpy_simulate_do_agrees_with_gcm(case, intervention):
    """Interventional means of every latent agree within 0.05 recovered units."""
    value, _, samples = intervention
    it = case.recovered_of(TRUE_T)
    bn = to_linear_gaussian_bn(case.est, environment=ENV)
    sim_do = bn.simulate(20000, do={case.names[it]: value}, seed=0)
    np.testing.assert_allclose(sim_do[case.names].mean().to_numpy(),
                               samples.latents[case.names].mean().to_numpy(), atol=0.05)
