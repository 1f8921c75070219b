"""Adapter input validation, non-mutation of user objects, warnings, lazy imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import networkx as nx
import numpy as np
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.adapters import (
    adjacency_from_networkx,
    creator,
    general_graph_to_adjacency,
    intervene_observations,
    latent_dataframe,
    to_dowhy_causal_model,
    to_gcm,
    to_general_graph,
    to_linear_gaussian_bn,
    to_networkx,
    to_pgmpy_dag,
)


@pytest.fixture(scope="module")
def est(fit):
    sim = simulate(n_latent=3, n_environments=4, n_samples=500, random_state=8)
    return fit(sim.X, 3)


ALL_ADAPTERS = [
    lambda m: to_networkx(m),
    lambda m: to_pgmpy_dag(m),
    lambda m: to_linear_gaussian_bn(m),
    lambda m: to_dowhy_causal_model(m, "L1", "L2"),
    lambda m: to_gcm(m),
    lambda m: intervene_observations(m, {"L1": 0.0}, n_samples=10),
    lambda m: latent_dataframe(m),
]


@pytest.mark.parametrize("adapter", ALL_ADAPTERS)
def test_unfitted_estimator_is_rejected(adapter):
    with pytest.raises(ValueError, match="not fitted"):
        adapter(CREATOR(3))


@pytest.mark.parametrize("adapter", ALL_ADAPTERS)
def test_wrong_object_is_rejected(adapter):
    with pytest.raises(TypeError, match="fitted creator_plugin.CREATOR"):
        adapter(np.eye(3))


@pytest.mark.parametrize("environment", [4, -1, "0", 1.5])
def test_unknown_environment(est, environment):
    for call in (
        lambda: to_networkx(est, environment=environment),
        lambda: to_linear_gaussian_bn(est, environment=environment),
        lambda: to_dowhy_causal_model(est, "L1", "L2", environment=environment),
        lambda: to_gcm(est, environment=environment),
    ):
        with pytest.raises(ValueError, match="Unknown environment"):
            call()


def test_unknown_node_names(est):
    with pytest.raises(ValueError, match="Unknown treatment"):
        to_dowhy_causal_model(est, "X1", "L2")
    with pytest.raises(ValueError, match="Unknown outcome"):
        to_dowhy_causal_model(est, "L1", ["L2", "nope"])
    with pytest.raises(ValueError, match="both treatment and outcome"):
        to_dowhy_causal_model(est, "L1", "L1")
    with pytest.raises(ValueError, match="Unknown intervention"):
        intervene_observations(est, {"L7": 1.0})
    with pytest.raises(ValueError, match="non-empty dict"):
        intervene_observations(est, {})
    with pytest.raises(ValueError, match="finite number"):
        intervene_observations(est, {"L1": float("nan")})
    with pytest.raises(ValueError, match="n_samples"):
        intervene_observations(est, {"L1": 1.0}, n_samples=0)


def test_bad_names(est):
    with pytest.raises(ValueError, match="3 latent nodes"):
        to_networkx(est, names=["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        to_networkx(est, names=["a", "a", "b"])
    with pytest.raises(TypeError, match="list of strings"):
        to_networkx(est, names="abc")


def test_bad_graph_inputs():
    with pytest.raises(ValueError, match="acyclic"):
        to_general_graph([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="self-loops"):
        to_general_graph(np.eye(2))
    with pytest.raises(ValueError, match="square"):
        to_general_graph(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="pass model.adjacency_matrix_"):
        to_general_graph(CREATOR(2))  # a model, not its adjacency: no "shape ()" puzzle
    from causallearn.graph.Edge import Edge
    from causallearn.graph.Endpoint import Endpoint
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphNode import GraphNode

    a, b = GraphNode("a"), GraphNode("b")
    G = GeneralGraph([a, b])
    G.add_edge(Edge(a, b, Endpoint.TAIL, Endpoint.TAIL))
    with pytest.raises(ValueError, match="not directed"):
        general_graph_to_adjacency(G)
    with pytest.raises(TypeError, match="GeneralGraph"):
        general_graph_to_adjacency(nx.DiGraph())
    with pytest.raises(ValueError, match="differ"):
        adjacency_from_networkx(nx.DiGraph([("a", "b")]), ["a", "c"])


def test_creator_bad_c_indx():
    sim = simulate(n_latent=2, n_environments=2, n_samples=200, random_state=0)
    data, env = sim.stacked()
    with pytest.raises(ValueError, match="c_indx"):
        creator(data, np.column_stack([env, env]), n_latent=2, show_progress=False)
    with pytest.raises(ValueError, match="node_names"):
        creator(data, env, n_latent=2, node_names=["a"], show_progress=False)


def test_user_objects_are_not_mutated(est):
    A = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    A_before = A.copy()
    names = ["a", "b", "c"]
    G = to_general_graph(A, names)
    names[0] = "changed"
    np.testing.assert_array_equal(A, A_before)
    assert [n.get_name() for n in G.get_nodes()] == ["a", "b", "c"]

    user_graph = nx.DiGraph([("a", "b"), ("b", "c")])
    snapshot = nx.node_link_data(user_graph, edges="links")
    adjacency_from_networkx(user_graph, ["a", "b", "c"])
    assert nx.node_link_data(user_graph, edges="links") == snapshot

    latents_before = [L.copy() for L in est.latents_]
    df = latent_dataframe(est)
    df.iloc[:, :] = 0.0
    for L, L0 in zip(est.latents_, latents_before, strict=True):
        np.testing.assert_array_equal(L, L0)

    # gcm stores mechanisms on its graph: every model must get its own graph.
    g1, g2 = to_networkx(est), to_networkx(est)
    assert g1 is not g2
    scm1, scm2 = to_gcm(est, environment=0), to_gcm(est, environment=1)
    assert scm1.graph is not scm2.graph
    assert scm1.causal_mechanism("L2") is not scm2.causal_mechanism("L2")
    edges_before = set(scm1.graph.edges)
    mech_before = {n: scm1.causal_mechanism(n) for n in scm1.graph.nodes}
    intervene_observations(est, {"L1": 1.0}, environment=0, n_samples=50, scm=scm1)
    assert set(scm1.graph.edges) == edges_before
    assert {n: scm1.causal_mechanism(n) for n in scm1.graph.nodes} == mech_before


def test_intervention_seed_is_reproducible_and_restores_global_rng(est):
    # gcm samples from numpy's legacy global RNG; the caller's stream must resume intact.
    np.random.seed(123)  # noqa: NPY002
    expected_next = np.random.random()  # noqa: NPY002
    np.random.seed(123)  # noqa: NPY002
    a = intervene_observations(est, {"L1": 1.0}, n_samples=100, random_state=5)
    assert np.random.random() == expected_next  # noqa: NPY002
    b = intervene_observations(est, {"L1": 1.0}, n_samples=100, random_state=5)
    np.testing.assert_array_equal(a.observations, b.observations)
    shift = intervene_observations(est, {"L1": lambda x: x + 1.0}, n_samples=100,
                                   random_state=5)
    assert shift.latents.shape == (100, 3)


def test_adapter_calls_raise_no_deprecation_warnings(est):
    """The adapter boundary filters known library deprecation notices."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        cm = to_dowhy_causal_model(est, "L1", "L2", environment=1)
        estimand = cm.identify_effect()
        e = cm.estimate_effect(estimand, method_name="backdoor.linear_regression")
        cm.refute_estimate(estimand, e, method_name="random_common_cause", num_simulations=2)
        bn = to_linear_gaussian_bn(est, environment=1)
        bn.simulate(100, do={"L1": 1.0}, seed=0)
        to_pgmpy_dag(est)
        intervene_observations(est, {"L1": 1.0}, environment=1, n_samples=50)


@pytest.mark.slow
def test_fresh_interpreter_with_deprecation_errors():
    """Imports included: run the adapters under ``-W error::DeprecationWarning``."""
    code = textwrap.dedent(
        """
        import sys
        import creator_plugin
        import creator_plugin.adapters
        heavy = [m for m in sys.modules if m.split('.')[0] in ('dowhy', 'pgmpy', 'causallearn')]
        assert not heavy, heavy
        from creator_plugin import simulate
        from creator_plugin.adapters import (
            creator, to_dowhy_causal_model, to_linear_gaussian_bn, intervene_observations)
        sim = simulate(n_latent=3, n_environments=4, n_samples=300, random_state=8)
        data, env = sim.stacked()
        cg = creator(data, env, n_latent=3, show_progress=False, random_state=0)
        cm = to_dowhy_causal_model(cg, "L1", "L2")
        cm.estimate_effect(cm.identify_effect(), method_name="backdoor.linear_regression")
        to_linear_gaussian_bn(cg).simulate(50, do={"L1": 0.5}, seed=0)
        intervene_observations(cg, {"L1": 0.5}, n_samples=20, random_state=0)
        print("OK")
        """
    )
    out = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("OK")
