"""The ordering step's joint multi-environment refinement (``n_refine``)."""

from __future__ import annotations

import numpy as np
import pytest

from creator_plugin import CREATOR, OrderingOptions, simulate
from creator_plugin.joint_ica import joint_direction
from creator_plugin.ordering import _distinct_best, topological_ordering
from creator_plugin.preprocessing import reduce_environments


def _shared_source_data(seed: int = 0, K: int = 4, n: int = 2000, m: int = 3):
    """K environments; source 0 has the same unmixing row everywhere.

    ``R_k = S_k @ A_k.T`` with ``A_k``'s first column fixed, the others
    drawn per environment, so ``w_true = inv(A_k).T[:, 0]`` up to scale in
    every environment (it extracts ``S_k[:, 0]``).
    """
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, m))  # shared unmixing; row 0 is the root's
    R_list, sources = [], []
    for _ in range(K):
        S = np.column_stack(
            [rng.laplace(size=n), rng.uniform(-1, 1, n), rng.exponential(size=n) - 1]
        )
        Wk = W.copy()
        Wk[1:] += rng.standard_normal((m - 1, m))  # other rows change across environments
        R = S @ np.linalg.inv(Wk).T
        R_list.append(R - R.mean(axis=0))
        sources.append(S[:, 0])
    return R_list, sources, W[0] / np.linalg.norm(W[0])


def _corr2(R_list, w, sources):
    x = np.concatenate([R @ w for R in R_list])
    s = np.concatenate(sources)
    return np.corrcoef(x, s)[0, 1] ** 2


def test_joint_direction_recovers_shared_source_from_perturbed_start():
    R_list, sources, w_true = _shared_source_data()
    rng = np.random.default_rng(1)
    w0 = w_true + 0.25 * rng.standard_normal(3)
    w, corr2 = joint_direction(R_list, w0, np.zeros((3, 0)))
    assert _corr2(R_list, w, sources) > 0.999
    assert _corr2(R_list, w, sources) > _corr2(R_list, w0, sources)
    assert abs(w @ w_true) > 0.999
    assert 0.0 < corr2 <= 1.0 + 1e-12
    assert np.isclose(np.linalg.norm(w), 1.0)


def test_joint_direction_ignores_scale_and_sign_of_start():
    R_list, _, w_true = _shared_source_data(seed=2)
    w0 = w_true + np.array([0.1, -0.2, 0.05])
    a, _ = joint_direction(R_list, w0, np.zeros((3, 0)))
    b, _ = joint_direction(R_list, -7.0 * w0, np.zeros((3, 0)))
    assert abs(a @ b) > 1 - 1e-6


def test_joint_direction_works_in_complement_of_found_directions():
    # After the first source is found, residuals annihilate its direction;
    # the refined direction must not depend on components along it.
    R_list, _, _ = _shared_source_data(seed=3)
    found = np.array([[1.0], [0.0], [0.0]])
    proj = np.eye(3) - found @ found.T
    R_res = [R @ proj for R in R_list]
    w0 = np.array([0.3, 1.0, -0.5])
    a, _ = joint_direction(R_res, w0, found)
    b, _ = joint_direction(R_res, w0 + 5.0 * found[:, 0], found)
    np.testing.assert_allclose([R @ a for R in R_res], [R @ b for R in R_res], atol=1e-6)


def test_distinct_best_skips_candidates_of_the_same_source():
    R_list, _, w_true = _shared_source_data(seed=4)
    other = np.array([0.0, 1.0, 0.0])
    cands = np.column_stack([w_true, 1.001 * w_true + 1e-4, other, -w_true])
    scores = np.array([0.1, 0.2, 0.3, 0.05])
    picked = _distinct_best(R_list, cands, scores, 3)
    assert picked == [3, 2]  # 0 and 1 duplicate 3's source; only two distinct


def test_distinct_best_picks_what_the_all_pairs_matrix_picks():
    # The candidates' correlations are formed one visited candidate at a time;
    # the picks are those of the full matrix of all pairs (the former form).
    rng = np.random.default_rng(7)
    R_list = [rng.standard_normal((200, 5)) * rng.uniform(0.5, 2.0, 5) for _ in range(3)]
    base = rng.standard_normal((5, 4))
    cands = np.hstack([base + 0.05 * rng.standard_normal((5, 4)) for _ in range(6)])
    sigma = sum(R.T @ R for R in R_list)
    cov = cands.T @ sigma @ cands
    sd = np.sqrt(np.diag(cov))
    corr2 = (cov / np.outer(sd, sd)) ** 2
    for _ in range(5):
        scores = rng.uniform(size=cands.shape[1])
        for n in (1, 3, 6):
            expected = []
            for c in np.argsort(scores, kind="stable"):
                if not expected or corr2[c, expected].max() < 0.9:
                    expected.append(int(c))
                if len(expected) == n:
                    break
            assert _distinct_best(R_list, cands, scores, n) == expected


@pytest.mark.slow
def test_n_refine_zero_keeps_the_raw_winner_and_default_records_refinement():
    sim = simulate(4, 4, 800, random_state=5)
    X_red, _ = reduce_environments(sim.X, 4)
    raw = topological_ordering(X_red, random_state=0, n_reestimate=0)
    for step in raw.steps:
        assert "refined_scores" not in step
        # the raw winner has the smallest raw score
        assert step["scores"][step["chosen"]] == pytest.approx(min(step["scores"]))
    ref = topological_ordering(X_red, random_state=0)
    assert all("refined_scores" in s for s in ref.steps[:-1])
    assert all(len(s["refined_from"]) <= 3 for s in ref.steps[:-1])


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_n_refine_validation(bad):
    sim = simulate(2, 2, 200, random_state=0)
    with pytest.raises(ValueError, match="n_reestimate"):
        CREATOR(2, ordering=OrderingOptions(n_reestimate=bad)).fit(sim.X)


@pytest.mark.slow
def test_refine_min_sources_re_estimates_only_while_that_many_sources_are_left():
    sim = simulate(5, 5, 800, random_state=3)
    X_red, _ = reduce_environments(sim.X, 5)
    every = topological_ordering([x.copy() for x in X_red], random_state=0,
                                 reestimate_min_sources=2)
    later = topological_ordering([x.copy() for x in X_red], random_state=0,
                                 reestimate_min_sources=4)
    for i, (a, b) in enumerate(zip(every.steps[:-1], later.steps[:-1])):
        m = 5 - i  # sources left at step i
        if m >= 4 or i == 0:  # re-estimated in both
            assert b["joint_corr2"] == a["joint_corr2"]
            assert b["refined_scores"] == a["refined_scores"]
        else:
            # the starts kept as they are: the re-scored values are the pool's scores
            assert b["joint_corr2"] == [1.0] * len(b["refined_from"])
            pool = np.concatenate([b["scores"], b["descended_scores"]])
            np.testing.assert_allclose(b["refined_scores"], pool[b["refined_from"]],
                                       rtol=1e-9, atol=1e-12)
    assert later.steps[0]["chosen"] == every.steps[0]["chosen"]


def test_refine_min_sources_through_the_estimator_and_its_validation():
    sim = simulate(3, 3, 400, random_state=1)
    every = CREATOR(3, random_state=0,
                    ordering=OrderingOptions(reestimate_min_sources=2)).fit(sim.X)
    first = CREATOR(3, random_state=0,
                    ordering=OrderingOptions(reestimate_min_sources=4)).fit(sim.X)

    def re_estimated(model):
        return [s["joint_corr2"] != [1.0] * len(s["refined_from"])
                for s in model.diagnostics_["ordering"][:-1]]
    # At d = 3 no step has 4 sources left: only the first step is re-estimated.
    assert re_estimated(every) == [True, True]
    assert re_estimated(first) == [True, False]
    assert CREATOR(3).get_params()["ordering__reestimate_min_sources"] == 4
    for bad in (1, 0, 2.5, "4"):
        with pytest.raises(ValueError, match="reestimate_min_sources"):
            CREATOR(3, ordering=OrderingOptions(reestimate_min_sources=bad)).fit(sim.X)
