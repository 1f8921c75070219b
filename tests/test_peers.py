"""The field's linear CRL methods re-implemented for the benchmark, their workloads and scoring."""

from __future__ import annotations

import numpy as np
import pytest

from creator_plugin.benchmark.baselines import METHODS
from creator_plugin.benchmark.lincd import fit_lincd, graph_from_B0, lincd_from_precisions
from creator_plugin.benchmark.lscale import closest_dag, fit_lscale_i, lscale_i_from_moments
from creator_plugin.benchmark.scoring import correlation_matrix, correlation_scores, score
from creator_plugin.interventional import simulate_multi_node, simulate_single_node


def _latent_covariances(sim):
    d = sim.adjacency.shape[0]
    out = []
    for W, Om in zip(sim.W, sim.Omega):
        M = np.linalg.inv(np.eye(d) - W)  # row form Y = Z Om M
        out.append(M.T @ Om @ Om @ M)
    return out


def _closure(A):
    R = (np.asarray(A) != 0).astype(int)
    for _ in range(R.shape[0]):
        R = ((R + R @ R) > 0).astype(int)
    return R


# ---------------------------------------------------------------- workloads
def test_single_node_changes_only_the_target():
    sim = simulate_single_node(4, None, 50, n_features=6, random_state=3, intervention="soft")
    assert len(sim.X) == 5 and sim.X[0].shape == (50, 6)
    assert sim.params["targets"][0] == [] and sorted(t[0] for t in sim.params["targets"][1:]) \
        == [0, 1, 2, 3]
    for k in range(1, 5):
        (t,) = sim.params["targets"][k]
        changed_w = np.flatnonzero(np.any(sim.W[k] != sim.W[0], axis=0))
        assert set(changed_w) <= {t}
        changed_om = np.flatnonzero(np.diag(sim.Omega[k]) != np.diag(sim.Omega[0]))
        assert list(changed_om) == [t]
    np.testing.assert_allclose(sim.Y[2] @ sim.H.T, sim.X[2])


def test_hard_intervention_cuts_parents_and_laws():
    sim = simulate_single_node(5, None, 20, random_state=0, noise="laplace", edge_prob=0.9)
    for k in range(1, 6):
        (t,) = sim.params["targets"][k]
        assert not np.any(sim.W[k][:, t])
    assert sim.noise_laws[0] == ["laplace"] * 5


def test_multi_node_targets_are_independent():
    sim = simulate_multi_node(4, None, 30, random_state=1)
    T = np.zeros((4, 4))
    for k, targets in enumerate(sim.params["targets"][1:]):
        T[k, targets] = 1
    assert np.linalg.matrix_rank(T) == 4


@pytest.mark.parametrize("kwargs, word", [
    (dict(n_environments=1), "n_environments"),
    (dict(noise="cauchy"), "noise"),
    (dict(intervention="partial"), "intervention"),
    (dict(n_features=2), "n_features"),
])
def test_generator_errors(kwargs, word):
    with pytest.raises(ValueError, match=word):
        simulate_single_node(3, **{"n_samples": 10, **kwargs})


# ---------------------------------------------------------------- scoring
def test_correlation_scoring_on_known_matchings():
    rng = np.random.default_rng(0)
    A = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    Y = [rng.standard_normal((200, 3)) for _ in range(2)]
    perm = [2, 0, 1]  # estimated latent i is true latent perm[i]
    est = [y[:, perm] * np.array([-2.0, 0.5, 3.0]) + 1.0 for y in Y]
    B = A[np.ix_(perm, perm)]
    out = correlation_scores(A, Y, B, est)
    assert out["mcc"] == pytest.approx(1.0)
    assert out["shd_corr"] == 0
    assert sorted(map(tuple, out["matching"])) == [(0, 2), (1, 0), (2, 1)]
    # one reversed edge (true 0 -> 1 becomes 1 -> 0) and one missing (0 -> 2)
    B_true_labels = np.array([[0, 0, 0], [1, 0, 1], [0, 0, 0]])
    out = correlation_scores(A, Y, B_true_labels[np.ix_(perm, perm)], est)
    assert out["shd_corr"] == 2
    # one estimated latent fewer: the unmatched true node scores 0
    out = correlation_scores(A, Y, np.zeros((2, 2)), [e[:, :2] for e in est])
    assert out["mcc"] == pytest.approx(2 / 3)
    assert out["shd_corr"] == 3
    C = correlation_matrix(Y, est)
    assert C.shape == (3, 3) and np.all(C <= 1 + 1e-12)


def test_benchmark_score_reports_mcc_for_every_method():
    rng = np.random.default_rng(1)
    A = np.array([[0, 1], [0, 0]])
    Y = [rng.standard_normal((100, 2))]
    row = score(A, Y, A, Y)
    assert row["mcc"] == pytest.approx(1.0) and row["shd_corr"] == 0
    assert np.isnan(score(A, None, A, Y)["mcc"])


# ---------------------------------------------------------------- LinCD
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lincd_population_exact(seed):
    sim = simulate_single_node(5, None, 500, n_features=7, random_state=seed, edge_prob=0.6)
    G = sim.H
    Thetas = [np.linalg.pinv(G @ C @ G.T) for C in _latent_covariances(sim)]
    sol = lincd_from_precisions(Thetas[0], Thetas[1:], 5)
    est = [y @ G.T @ sol["H"].T for y in sim.Y]
    out = correlation_scores(sim.adjacency, sim.Y, graph_from_B0(sol["B0"], 0.1), est)
    assert out["mcc"] == pytest.approx(1.0, abs=1e-8)
    assert out["shd_corr"] == 0
    # the targets are the intervened latents, under the same matching
    match = dict(out["matching"])
    assert [match[t] for t in sol["targets"]] == [t[0] for t in sim.params["targets"][1:]]
    # the model reproduces every precision
    H, B0 = sol["H"], sol["B0"]
    np.testing.assert_allclose(H.T @ B0.T @ B0 @ H, Thetas[0], atol=1e-8)
    for Bk, Th in zip(sol["B"], Thetas[1:]):
        np.testing.assert_allclose(H.T @ Bk.T @ Bk @ H, Th, atol=1e-8)


def test_lincd_fit_function_and_errors():
    sim = simulate_single_node(3, None, 3000, n_features=5, random_state=4)
    adj, latents, order, info = fit_lincd(sim.X, 3)
    assert adj.shape == (3, 3) and len(latents) == 4 and sorted(order) == [0, 1, 2]
    assert sorted(info["targets"]) == [0, 1, 2]
    assert correlation_scores(sim.adjacency, sim.Y, adj, latents)["mcc"] > 0.9
    with pytest.raises(ValueError, match="n_latent"):
        fit_lincd(sim.X[:3], 3)


# ---------------------------------------------------------------- LSCALE-I
def _population_moments(sim):
    covx = [sim.H @ C @ sim.H.T for C in _latent_covariances(sim)]
    d = sim.adjacency.shape[0]
    basis = np.linalg.eigh(sum(covx))[1][:, ::-1][:, :d]
    covs = np.stack([basis.T @ C @ basis for C in covx])
    P = np.linalg.inv(covs)
    R = np.stack([(Pm - P[0]) @ covs[0] @ (Pm - P[0]) for Pm in P[1:]])
    return covs, R, basis


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_lscale_hard_population_exact(seed):
    sim = simulate_single_node(5, None, 500, n_features=8, random_state=seed)
    covs, R, basis = _population_moments(sim)
    sol = lscale_i_from_moments(covs, R, basis, hard=True, atol_edge=1e-8)
    est = [y @ sim.H.T @ sol["encoder"].T for y in sim.Y]
    out = correlation_scores(sim.adjacency, sim.Y, sol["graph"].astype(int), est)
    assert out["mcc"] == pytest.approx(1.0, abs=1e-8)
    assert out["shd_corr"] == 0
    # latent m is the node intervened on in environment m + 1
    assert dict(out["matching"]) == {m: sim.params["targets"][m + 1][0] for m in range(5)}


def test_lscale_soft_population_guarantee():
    """Soft interventions: each latent up to mixing with its true ancestors only."""
    sim = simulate_single_node(5, None, 500, n_features=8, random_state=1, intervention="soft")
    covs, R, basis = _population_moments(sim)
    sol = lscale_i_from_moments(covs, R, basis, hard=False, atol_edge=1e-8)
    eff = sol["encoder"] @ sim.H  # (estimated, true)
    eff = eff / np.abs(eff).max(axis=1, keepdims=True)
    anc = _closure(sim.adjacency)
    for m in range(5):
        t = sim.params["targets"][m + 1][0]
        allowed = anc[:, t].astype(bool)
        allowed[t] = True
        assert np.all(np.abs(eff[m, ~allowed]) < 1e-8)
        assert abs(eff[m, t]) > 1e-3


def test_lscale_fit_function_on_samples():
    sim = simulate_single_node(4, None, 5000, n_features=6, random_state=2)
    adj, latents, order = fit_lscale_i(sim.X, 4)
    assert adj.shape == (4, 4) and sorted(order) == [0, 1, 2, 3]
    assert correlation_scores(sim.adjacency, sim.Y, adj, latents)["mcc"] > 0.9
    with pytest.raises(ValueError, match="environments"):
        fit_lscale_i(sim.X, 5)


def test_closest_dag_keeps_most_edges():
    g = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=bool)  # a 3-cycle
    out = closest_dag(g)
    assert out.sum() == 2 and np.all(out <= g)


# ---------------------------------------------------------------- GIN
def _causal_learn_gin_case2():
    """causal-learn's tests/TestGIN.py test_case2: 3 latents x 3 pure indicators."""
    n = 1000
    np.random.seed(0)  # noqa: NPY002 (causal-learn's own case, its own stream)

    def u():
        return np.random.uniform(-1, 1, size=n) ** 5  # noqa: NPY002

    def c():
        return np.random.uniform(0.5, 2.0)  # noqa: NPY002

    L1 = u()
    L2 = c() * L1 + u()
    L3 = c() * L1 + c() * L2 + u()
    X = [c() * L1 + u() for _ in range(3)] + [c() * L2 + u() for _ in range(3)] \
        + [c() * L3 + u() for _ in range(3)]
    data = np.array(X).T
    return (data - data.mean(axis=0)) / data.std(axis=0)


@pytest.mark.slow
def test_gin_by_variable_finds_the_three_clusters_of_causal_learns_case():
    pytest.importorskip("causallearn")
    from creator_plugin.benchmark.gin_corrected import gin_clusters_and_order

    ordered, unordered = gin_clusters_and_order(_causal_learn_gin_case2())
    assert ordered == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]  # the true causal order L1, L2, L3
    assert unordered == []


def test_peers_are_registered():
    for name in ("LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)", "GIN (tests by variable)"):
        assert name in METHODS


def test_bench_lists_the_methods(capsys):
    from creator_plugin.cli import main

    assert main(["bench", "--list-methods"]) == 0
    out = capsys.readouterr().out
    for name in ("CREATOR", "LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)",
                 "GIN (tests by variable)"):
        assert f"\n{name}" in f"\n{out}"
