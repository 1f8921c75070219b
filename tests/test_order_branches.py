"""``CREATOR(order_branches=...)``: the ordering's close calls taken the other way."""

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, OrderingOptions, RefineOptions, simulate
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays, order_stage
from creator_plugin._random import as_generator
from creator_plugin.refine.likelihood import fitted_score
from creator_plugin.refine.order_branches import (
    AUTO_BRANCH_LATENTS,
    AUTO_ORDER_BRANCHES,
    branches,
    close_calls,
)

# simulate(5, 5, 500, setting=1, random_state=9): the model of the closest
# call's other way scores lower than the default fit's.
SEED = 9


@pytest.fixture(scope="module")
def data():
    return simulate(5, 5, 500, setting=1, random_state=SEED).X


def _fit(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(5, random_state=SEED, quality=False, **params).fit(X)


def test_close_calls_rank_steps_by_the_gap_to_their_best_different_direction():
    steps = [
        {"step": 0, "refined_scores": [2.0, 1.0, 1.0 + 1e-9]},  # 1 + 1e-9: the same direction
        {"step": 1, "refined_scores": [3.0, 3.3]},
        {"step": 2},  # no re-estimation (the paper's mode, the last step)
        {"step": 3, "refined_scores": [1.0, 1.0]},  # one direction reached twice
    ]
    calls = close_calls(steps)
    assert [(step, rank) for _, step, rank in calls] == [(1, 1), (0, 2)]
    assert calls[0][0] == pytest.approx(1.1) and calls[1][0] == pytest.approx(2.0)


def test_auto_branches_with_seven_to_fifteen_latents_enough_environments_and_a_re_estimation():
    assert CREATOR(5).get_params()["refine__order_branches"] == "auto"
    low, high = AUTO_BRANCH_LATENTS
    assert (low, high) == (7, 15) and AUTO_ORDER_BRANCHES == 2
    expected = {1: 0, 5: 0, 6: 0, 7: 2, 10: 2, 15: 2, 16: 0, 30: 0}

    def count(setting, d, K, reestimates=True):
        return branches(setting, n_latent=d, n_environments=K, reestimates=reestimates)

    assert {d: count("auto", d, d) for d in expected} == expected
    assert count("auto", 10, 20) == 2
    assert count("auto", 10, 9) == 0  # fewer environments than latents
    assert count("auto", 10, 10, reestimates=False) == 0  # no close calls to take
    assert count(1, 30, 2) == 1
    assert count(0, 10, 10) == 0


@pytest.mark.slow
def test_auto_is_off_at_five_latents_and_the_record_is_none(data):
    a, b = _fit(data), _fit(data, refine=RefineOptions(order_branches=0))
    assert a.diagnostics_["order_branches"] is None
    np.testing.assert_array_equal(a.components_, b.components_)


@pytest.mark.slow
def test_auto_at_seven_latents_is_two_branches():
    X = simulate(7, 7, 400, setting=1, random_state=3).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = CREATOR(7, random_state=3, quality=False).fit(X)
        two = CREATOR(7, random_state=3, quality=False,
                      refine=RefineOptions(order_branches=2)).fit(X)
    record = auto.diagnostics_["order_branches"]
    assert record is not None and len(record["branches"]) == 2
    assert record == two.diagnostics_["order_branches"]
    np.testing.assert_array_equal(auto.components_, two.components_)


@pytest.mark.slow
def test_the_kept_model_is_the_branch_with_the_lowest_score(data):
    base = _fit(data)
    branched = _fit(data, refine=RefineOptions(order_branches=2))
    record = branched.diagnostics_["order_branches"]
    assert len(record["branches"]) == 2
    scores = [record["base_score"]] + [b["score"] for b in record["branches"]]
    # the lowest score wins; a later model within rounding of it does not replace it
    lowest = min(scores)
    tied = [i for i, x in enumerate(scores) if x <= lowest + 1e-8 * abs(lowest)]
    assert record["chosen"] == tied[0] > 0
    # The base score is the criterion of the default fit's own features.
    covs = np.stack([np.cov(x, rowvar=False, bias=True) for x in base.latents_])
    n_rows = [x.shape[0] for x in base.latents_]
    assert fitted_score(covs, n_rows, base.adjacency_matrix_) == pytest.approx(
        record["base_score"], rel=1e-6)
    # The kept model is the fit whose ordering takes the chosen step's other way.
    chosen = record["branches"][record["chosen"] - 1]
    config = FitConfig(n_latent=5, quality=False)
    stage = order_stage(data, config, as_generator(SEED),
                        step_choices={chosen["step"]: chosen["rank"]})
    forced = fit_arrays(data, config, ordering=stage, random_state=as_generator(SEED))
    np.testing.assert_allclose(branched.components_, forced.components, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(branched.adjacency_matrix_, forced.adjacency)
    assert not np.allclose(branched.components_, base.components_)
    # A branch never keeps a model that scores worse than the default fit.
    covs = np.stack([np.cov(x, rowvar=False, bias=True) for x in branched.latents_])
    assert fitted_score(covs, n_rows, branched.adjacency_matrix_) < record["base_score"]


@pytest.mark.slow
def test_branches_are_reproducible_and_leave_the_input_alone(data):
    before = [x.copy() for x in data]
    a = _fit(data, refine=RefineOptions(order_branches=1))
    b = _fit(data, refine=RefineOptions(order_branches=1))
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.diagnostics_["order_branches"] == b.diagnostics_["order_branches"]
    for x, y in zip(before, data):
        np.testing.assert_array_equal(x, y)


def test_the_paper_mode_has_no_close_calls_to_branch_on(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(5, pruning="rank_raw",
                        ordering=OrderingOptions(n_reestimate=0, polish=False),
                        refine=RefineOptions(revise_graph=False, order_branches=2),
                        random_state=SEED, quality=False).fit(data)
    record = model.diagnostics_["order_branches"]
    assert record["branches"] == [] and record["chosen"] == 0


@pytest.mark.parametrize("value", [-1, 1.5, "two"])
def test_order_branches_must_be_a_non_negative_integer_or_auto(data, value):
    with pytest.raises(ValueError, match="order_branches"):
        CREATOR(5, refine=RefineOptions(order_branches=value)).fit(data)


@pytest.mark.slow
def test_a_branch_whose_revision_steps_to_a_singular_matrix_is_fitted():
    # The method grid's d = 7, K = 14, setting 1, seed 43: the second branch's
    # graph revision takes a line-search step to a numerically singular
    # matrix (once a LinAlgError, and overflow warnings on the way).
    sim = simulate(7, 14, 1000, setting=1, random_state=2533054654)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.filterwarnings("ignore", category=UserWarning)
        model = CREATOR(7, random_state=43).fit(sim.X)
    assert len(model.diagnostics_["order_branches"]["branches"]) == 2
    assert np.isfinite(model.components_).all()
