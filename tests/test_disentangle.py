"""Step 3: the likelihood refinement of the disentangling matrix."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, RefineOptions, metrics, simulate
from creator_plugin.disentangle import surrounded_sets
from creator_plugin.refine.likelihood import (
    AUTO_LIKELIHOOD_LATENTS,
    LATER_WEIGHT_LEVEL,
    node_precisions,
    refine_disentangling,
    refines,
    sem_deviance,
)


def _population(d=6, K=6, seed=0):
    """Exact covariances of entangled features ``Ytilde = Y @ L.T`` (L lower triangular)."""
    rng = np.random.default_rng(seed)
    A = np.triu((rng.random((d, d)) < 0.5).astype(int), 1)
    L = np.tril(rng.normal(size=(d, d)), -1) + np.diag(rng.uniform(1, 2, d))
    S = []
    for _ in range(K):
        W = A * rng.uniform(0.5, 2.0, (d, d)) * rng.choice([-1, 1], (d, d))
        omega = rng.uniform(0.5, 1.5, d)
        inv = np.linalg.inv(np.eye(d) - W.T)  # y = W^T y + omega z
        cov_y = inv @ np.diag(omega**2) @ inv.T
        S.append(L @ cov_y @ L.T)
    return A, L, np.stack(S)


def _support_error(C, L, A):
    """Largest share of a feature outside the true features it may mix (sur-bar)."""
    mix = L.T @ C  # Yhat = Ytilde @ C = Y @ (L^T C)
    sur = surrounded_sets(A)
    worst = 0.0
    for i in range(A.shape[0]):
        outside = [t for t in range(A.shape[0]) if t != i and t not in sur[i]]
        worst = max(worst, np.abs(mix[outside, i]).max(initial=0) / np.abs(mix[:, i]).max())
    return worst


@pytest.mark.parametrize("method", ["L-BFGS-B", "BFGS"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_population_refinement_recovers_the_features_from_a_perturbed_start(seed, method):
    A, L, S = _population(seed=seed)
    d = A.shape[0]
    truth = np.linalg.inv(L.T)
    rng = np.random.default_rng(10 + seed)
    # Perturbed within the order (feature i mixed with features before it):
    # the only directions the Gaussian likelihood identifies by itself; along
    # later positions it is flat wherever a sink could absorb a node
    # independent of its parents, and there the order fixes the features.
    start = truth + 0.15 * np.triu(rng.normal(size=(d, d)), 1) * np.abs(truth).max()
    before = _support_error(start, L, A)
    assert before > 0.4
    C, info = refine_disentangling(start, S, np.full(len(S), 1000), A, method=method)
    assert info["kept"] and info["final"] < info["start"]
    # The criterion is the likelihood-ratio statistic per row: 0 at the truth.
    assert info["final"] < 1e-8
    # Near the optimum the criterion is nearly flat along a covered edge
    # (2 -> 3 with a shared parent in seed 0), so the support is recovered to
    # 5 % of the start's error there (3.6 % against 71 %) and to 1e-3 elsewhere.
    assert _support_error(C, L, A) < 0.1 * before


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 7), K=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_node_precisions_equal_one_regression_per_node(d, K, seed):
    # The batched computation (parents padded to the largest set) against a
    # least-squares regression of every node on its parents, environment by
    # environment: the same residual variances and precision matrices.
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((d, d)) < 0.5, 1)
    parents = [np.flatnonzero(A[:, j]) for j in range(d)]
    F = rng.normal(size=(K, d, d))
    G = F @ np.swapaxes(F, 1, 2) + 0.1 * np.eye(d)
    P, logs = node_precisions(G, parents)
    for k in range(K):
        P_ref, logs_ref = np.zeros((d, d)), 0.0
        for j, pa in enumerate(parents):
            v = np.zeros(d)
            v[j] = 1.0
            if pa.size:
                v[pa] = -np.linalg.lstsq(G[k][np.ix_(pa, pa)], G[k][pa, j], rcond=None)[0]
            s = v @ G[k] @ v
            P_ref += np.outer(v, v) / s
            logs_ref += np.log(s)
        np.testing.assert_allclose(P[k], P_ref, rtol=1e-7, atol=1e-9)
        assert logs[k] == pytest.approx(logs_ref, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("method", ["L-BFGS-B", "BFGS"])
def test_refinement_criterion_is_the_sem_deviance_per_row(method):
    # The descent evaluates log det(C^T S_k C) through det C; its start and
    # final values must still be the likelihood-ratio statistic per row.
    A, L, S = _population(seed=2)
    n = np.array([300.0, 700.0, 1000.0, 500.0, 800.0, 900.0])
    truth = np.linalg.inv(L.T)
    shift = np.triu(np.random.default_rng(5).normal(size=A.shape), 1)
    start = truth + 0.15 * shift * np.abs(truth).max()
    C, info = refine_disentangling(start, S, n, A, method=method)
    assert info["kept"]
    assert info["start"] == pytest.approx(sem_deviance(start, S, n, A) / n.sum(), rel=1e-9)
    assert info["final"] == pytest.approx(sem_deviance(C, S, n, A) / n.sum(), rel=1e-6, abs=1e-12)


def test_refinement_rejects_an_unknown_method():
    A, L, S = _population(seed=0)
    with pytest.raises(ValueError, match="method"):
        refine_disentangling(np.linalg.inv(L.T), S, np.full(len(S), 1000), A, method="CG")


def test_refinement_is_invariant_to_the_scale_of_the_entangled_features():
    A, L, S = _population(seed=3)
    d = A.shape[0]
    start = np.linalg.inv(L.T) + 0.1 * np.random.default_rng(0).normal(size=(d, d))
    D = np.diag(np.linspace(0.01, 100, d))
    C1, _ = refine_disentangling(start, S, np.full(len(S), 500), A)
    # Rescaling the entangled features (Ytilde D) and the start (D^-1 C)
    # gives the same features, up to each column's scale.
    C2, _ = refine_disentangling(np.linalg.solve(D, start), D @ S @ D, np.full(len(S), 500), A)
    F1, F2 = L.T @ C1, L.T @ (D @ C2)
    cos = np.abs(np.sum(F1 * F2, axis=0)) / np.linalg.norm(F1, axis=0) / np.linalg.norm(F2, axis=0)
    np.testing.assert_allclose(cos, 1.0, atol=1e-6)


def test_the_subspace_start_is_kept_at_an_optimum():
    A, L, S = _population(seed=4)
    truth = np.linalg.inv(L.T)
    C, info = refine_disentangling(truth, S, np.full(len(S), 1000), A)
    assert _support_error(C, L, A) < 1e-6
    assert info["later_weight"] < 1e-6


#: The disentanglements compared: the likelihood refinement (a refine step),
#: the evidence-weighted intersection without it, and the paper's convention.
# The disentanglement alone: the order branches and the graph search are off (at
# d = 10 they would cost minutes per fit and change nothing these tests read).
_ALONE = RefineOptions(order_branches=0, search_graph=False)
MODES = {"likelihood": {"refine": _ALONE.replace(disentangle=True)},
         "evidence": {"refine": _ALONE.replace(disentangle=False)},
         "subspace": {"disentangle": "subspace", "refine": _ALONE}}


def _fit(seed, d, n, mode):
    sim = simulate(d, d, n, setting=1, edge_prob=0.5, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = CREATOR(d, quality=False, random_state=seed, **MODES[mode]).fit(sim.X)
    return sim, m


@pytest.mark.slow
def test_likelihood_falls_back_to_the_intersection_when_an_edge_was_missed():
    # d = K = 5 seed 1: the pruning misses the true edge 0 -> 4; the likelihood
    # would absorb it by leaning on later positions (weight about 2), so the
    # fit keeps its start, the default's (evidence-weighted) intersection.
    sim, lik = _fit(1, 5, 1000, "likelihood")
    _, ev = _fit(1, 5, 1000, "evidence")
    info = lik.diagnostics_["disentangle"]
    assert info["later_weight"] > LATER_WEIGHT_LEVEL and not info["kept"]
    np.testing.assert_allclose(lik.components_, ev.components_)
    assert ev.diagnostics_["disentangle"] is None


LOW, HIGH = AUTO_LIKELIHOOD_LATENTS


@pytest.mark.parametrize("d, K, pruning, expected", [
    (LOW, LOW, "residual", True),
    (HIGH, HIGH + 3, "residual", True),
    (LOW - 1, 20, "residual", False),
    (HIGH + 1, 20, "residual", False),
    (LOW, LOW - 1, "residual", False),  # fewer environments than latents
    (LOW, LOW, "rank", False),
])
def test_auto_refines_in_its_range_of_latents_with_enough_environments(d, K, pruning, expected):
    shape = {"n_latent": d, "n_environments": K, "pruning": pruning}
    assert refines("auto", **shape) is expected
    assert refines("auto", **shape, disentangle="subspace") is False  # starts from "evidence"
    assert refines(True, **shape) is True and refines(False, **shape) is False


@pytest.mark.slow
def test_the_default_refines_at_d_8_and_not_with_fewer_environments():
    # The same data with 8 and 7 environments: the default refines (and records
    # the refinement) only in the first; in the second it is the intersection.
    sim = simulate(LOW, LOW, 500, random_state=0)
    base = RefineOptions(order_branches=0, search_graph=False)
    runs = [("auto", base, sim.X), ("fewer", base, sim.X[:-1]),
            ("fewer_evidence", base.replace(disentangle=False), sim.X[:-1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {name: CREATOR(LOW, quality=False, refine=refine, random_state=0).fit(X)
                for name, refine, X in runs}
    assert fits["auto"].diagnostics_["disentangle"] is not None
    assert fits["fewer"].diagnostics_["disentangle"] is None
    np.testing.assert_array_equal(fits["fewer"].components_,
                                  fits["fewer_evidence"].components_)


def _same_graph_both_ways(seed, other):
    """d = K = 10, n = 2000 fitted with ``"likelihood"`` and ``other``: both graphs
    must be equal; returns the two evaluations and the likelihood fit."""
    sim, lik = _fit(seed, 10, 2000, "likelihood")
    _, alt = _fit(seed, 10, 2000, other)
    np.testing.assert_array_equal(lik.adjacency_matrix_, alt.adjacency_matrix_)
    return [metrics.evaluate(sim.adjacency, sim.Y, m.adjacency_matrix_, m.latents_)
            for m in (lik, alt)], lik


@pytest.mark.slow
def test_likelihood_fixes_features_mixed_by_chains_of_large_weights():
    # d = K = 10, n = 2000, seed 8 (a seed used to choose the level): the graph is right in
    # both fits, but the subspace intersection leaves two features far from
    # their nodes (LocR^2 0.75 and 0.78), which the metric's matching turns
    # into 5 SHD; the likelihood refinement recovers them.
    (ev_l, ev_s), _ = _same_graph_both_ways(8, "subspace")
    assert ev_s["shd"] >= 5 and ev_l["shd"] == 0
    assert ev_l["locr2"] > 0.99 > ev_s["locr2"]


@pytest.mark.slow
def test_likelihood_mends_a_feature_that_carries_another_latent():
    # d = K = 10, n = 2000, seed 92002 (a tuning seed): the default's graph is
    # the true one up to relabelling, but one feature carries a fixed share of
    # another latent, so the metric's matching relabels it (SHD 13). The same
    # graph with features refined by its likelihood matches the truth.
    (ev_l, ev_e), lik = _same_graph_both_ways(92002, "evidence")
    assert ev_e["shd"] >= 10 and ev_l["shd"] == 0
    assert lik.diagnostics_["disentangle"]["kept"]


@pytest.mark.parametrize("method", ["L-BFGS-B", "BFGS"])
def test_a_numerically_singular_step_is_rejected_not_raised(method, monkeypatch):
    # A line-search step can reach a matrix whose parents' block is singular to
    # machine precision (seen in a d = 7, K = 14 fit); that point is infeasible
    # for the search (infinite criterion), not an error of the fit.
    import creator_plugin.refine.likelihood as dis

    A, L, S = _population(seed=1)
    d = A.shape[0]
    start = np.linalg.inv(L.T) + 0.1 * np.triu(np.random.default_rng(2).normal(size=(d, d)), 1)
    real_call, calls = dis.NodePrecisions.__call__, []

    def sometimes_singular(self, G):
        calls.append(1)
        if len(calls) in (3, 4):
            raise np.linalg.LinAlgError("Singular matrix")
        return real_call(self, G)

    monkeypatch.setattr(dis.NodePrecisions, "__call__", sometimes_singular)
    C, info = refine_disentangling(start, S, np.full(len(S), 1000), A, method=method)
    assert len(calls) >= 4 and np.isfinite(C).all()
    if method == "BFGS":  # the revision's: the line search backs off and goes on
        assert len(calls) > 4 and info["kept"] and info["final"] < info["start"]
    elif not info["kept"]:  # SciPy's L-BFGS-B may stop there: the start is kept
        np.testing.assert_array_equal(C, start)
