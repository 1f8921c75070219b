"""The first calls users try: causal-learn's keywords, n_latent="auto", a label column.

``creator(data, c_indx, n_latent=4, alpha=0.05)`` raised ``TypeError``, as
did ``creator(data, c_indx)``; ``CREATOR(3).fit(df, environments="lab")``
refused the column name the CLI accepts; ``transform(df)`` with the label
column still in it said "X has 4 columns; the model expects 3".
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from causallearn.search.ConstraintBased.CDNOD import cdnod

from creator_plugin import CREATOR, simulate
from creator_plugin.adapters.causallearn import (
    CDNOD_IGNORED,
    REFERENCE_ALPHA,
    alpha_threshold,
    creator,
)
from creator_plugin.pruning import default_threshold


@pytest.fixture(scope="module")
def stacked():
    sim = simulate(2, 3, 200, random_state=1)
    return sim.stacked()


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [w for w in caught if w.category is UserWarning]


def test_cdnod_keywords_are_those_of_the_installed_causal_learn():
    params = set(inspect.signature(cdnod).parameters) - {"data", "c_indx", "kwargs"}
    assert params == {*CDNOD_IGNORED, "alpha", "show_progress"}


def test_alpha_and_cdnod_keywords_accepted_with_one_warning(stacked):
    data, env = stacked
    cg, caught = _quiet(creator, data, env[:, None], 2, alpha=0.05, quality=False, indep_test="kci",
                        stable=True, uc_rule=1, uc_priority=3, mvcdnod=False,
                        correction_name="MV_Crtn_Fisher_Z", background_knowledge=None,
                        verbose=True, show_progress=False, random_state=0)
    ignored = [w for w in caught if "ignores cdnod" in str(w.message)]
    assert len(ignored) == 1
    assert all(k in str(ignored[0].message) for k in CDNOD_IGNORED)
    plain, _ = _quiet(creator, data, env, 2, quality=False, show_progress=False,
                      random_state=0)
    np.testing.assert_array_equal(cg.adjacency_matrix, plain.adjacency_matrix)
    np.testing.assert_array_equal(cg.latents, plain.latents)


def test_n_latent_defaults_to_auto(stacked):
    data, env = stacked
    cg, _ = _quiet(creator, data, env, quality=False, show_progress=False, random_state=0)
    assert cg.estimator.n_latent == "auto" and cg.estimator.n_latent_ == 2
    assert [n.get_name() for n in cg.G.get_nodes()] == ["L1", "L2"]


def test_unknown_keywords_still_raise(stacked):
    data, env = stacked
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['kernelX'\]"):
        creator(data, env, 2, kernelX="Gaussian")
    with pytest.raises(TypeError, match="both alpha and prune_threshold"):
        creator(data, env, 2, alpha=0.01, prune_threshold=0.3)
    with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\)"):
        creator(data, env, 2, alpha=1.5)
    with pytest.raises(TypeError, match="pass alpha by keyword"):
        creator(data, env, 0.05)  # cdnod's third positional argument


def test_alpha_maps_to_the_pruning_level(stacked):
    data, env = stacked
    K = len(np.unique(env))
    assert alpha_threshold(REFERENCE_ALPHA, K) == pytest.approx(default_threshold("residual", K))
    levels = [alpha_threshold(a, K) for a in (0.5, 0.1, 0.05, 0.01, 1e-3, 1e-6)]
    assert levels == sorted(levels)  # smaller alpha, higher level, fewer edges
    cg, _ = _quiet(creator, data, env, 2, alpha=1e-3, quality=False, show_progress=False,
                   random_state=0)
    assert cg.estimator.prune_threshold == pytest.approx(alpha_threshold(1e-3, K))
    assert alpha_threshold(0.01, K, "rank") == pytest.approx(
        default_threshold("rank", K) * alpha_threshold(0.01, K) / default_threshold(
            "residual", K))


def test_a_label_column_is_taken_by_name_and_named_when_left_in(stacked):
    data, env = stacked
    df = pd.DataFrame(data, columns=["a", "b"])
    df["lab"] = np.array(["x", "y", "z"])[env]
    model, _ = _quiet(CREATOR(2, random_state=0, quality=False).fit, df, environments="lab")
    assert model.environment_labels_ == ["x", "y", "z"]
    with pytest.raises(ValueError, match=r"not fitted on: \['lab'\]"):
        model.transform(df)
    np.testing.assert_allclose(model.transform(df[["a", "b"]]), np.vstack(model.latents_),
                               atol=1e-10)
