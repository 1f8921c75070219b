"""Step 3: the evidence-weighted choice inside a surrounded intersection (the default)."""

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, RefineOptions, metrics, simulate
from creator_plugin.disentangle import disentangling_matrix, surrounded_sets


def _population_rows(seed, d=6, K=6):
    """Exact regression rows ``B[k] = M_k @ L^{-1}`` of a random model over a DAG."""
    rng = np.random.default_rng(seed)
    A = np.triu((rng.random((d, d)) < 0.6).astype(int), 1)
    Linv = np.tril(rng.normal(size=(d, d)), -1) + np.diag(rng.uniform(1, 2, d))
    rows = []
    for _ in range(K):
        W = A * rng.uniform(0.5, 2.0, (d, d)) * rng.choice([-1, 1], (d, d))
        omega = rng.uniform(0.5, 1.5, d)
        rows.append(((np.eye(d) - W).T / omega[:, None]) @ Linv)
    return A, Linv, np.stack(rows)


@pytest.mark.parametrize("seed", range(1, 7))
def test_population_choice_is_the_specification_convention(seed):
    # Exact rows: every direction of the intersection has singular value 0,
    # every weight is 1, and the matrix is the default's.
    A, Linv, B = _population_rows(seed)
    surrounded = any(surrounded_sets(A)[i] and A[i].any() for i in range(A.shape[0]))
    C0 = disentangling_matrix(B, A)
    C1 = disentangling_matrix(B, A, evidence=True)
    # (up to the floor of mu, 1e-12, against singular values of order 1e-16)
    np.testing.assert_allclose(np.abs(C1), np.abs(C0), atol=1e-3)
    assert surrounded  # every seed has a node with children and a surrounding parent


@pytest.mark.slow
def test_spurious_surrounding_parent_is_down_weighted():
    # d = K = 10 tuning seed 6: the pruning adds 1 -> 6, which makes 1 a
    # surrounding parent of 6; the default returns mostly feature 1 for node 6
    # and the LocR^2 matching swaps labels (SHD 12). The graph is the same.
    # (The graph revision removes the spurious edge, so it is off here; the
    # ordering's branches and the graph search are off too: the scenario is the
    # disentanglement's.)
    sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=6)
    out = {}
    for dis in ("subspace", "evidence"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(10, disentangle=dis, refine=RefineOptions(
                revise_graph=False, order_branches=0, search_graph=False, disentangle=False),
                random_state=6).fit(sim.X)
        out[dis] = metrics.evaluate_model(model, sim)
    assert out["subspace"]["shd"] >= 10
    assert out["evidence"]["shd"] <= 1
    assert out["evidence"]["locr2"] > out["subspace"]["locr2"] + 0.05


@pytest.mark.slow
def test_default_at_d_10_is_the_likelihood_refinement_of_the_evidence_weighting():
    # d = K = 10 tuning seed 6 (above), where the intersections differ. The
    # default ("auto") refines by the likelihood at d = 10, from the
    # evidence-weighted start, and so is not the paper's intersection.
    sim = simulate(10, 10, 2000, setting=1, edge_prob=0.5, random_state=6)
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # without the ordering's branches and the search (not the subject)
        base = RefineOptions(order_branches=0, search_graph=False)
        for name, kw in [("default", {"refine": base}),
                         ("likelihood", {"refine": base.replace(disentangle=True)}),
                         ("subspace", {"refine": base, "disentangle": "subspace"})]:
            fits[name] = CREATOR(10, random_state=6, **kw).fit(sim.X)
    a, b, c = fits["default"], fits["likelihood"], fits["subspace"]
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.diagnostics_["disentangle"] is not None
    assert c.diagnostics_["disentangle"] is None
    assert not np.allclose(a.components_, c.components_)
    assert CREATOR.paper(10).disentangle == "subspace"
