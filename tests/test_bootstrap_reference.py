"""Bootstrap results are labelled by the user's fit, survive any failing resample, keep names."""

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.bootstrap import bootstrap

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 4, 200, n_features=5, random_state=7)


@pytest.mark.slow
def test_fitted_estimator_is_the_reference(sim):
    model = CREATOR(3, random_state=11).fit(sim.X)
    res = bootstrap(sim.X, 3, estimator=model, random_state=0)
    assert res.full_fit is model
    res.check_model(model)
    # The resamples agree with the model's own labels: the full-fit edges carry
    # the probabilities, in the model's numbering.
    P = res.get_probabilities()
    assert P.shape == (3, 3)
    assert np.all(P[model.adjacency_matrix_ == 0] <= 1.0)


@pytest.mark.slow
def test_unfitted_estimator_uses_its_own_random_state(sim):
    est = CREATOR(3, random_state=5)
    res = bootstrap(sim.X, 2, estimator=est, random_state=0)
    ref = CREATOR(3, random_state=5).fit(sim.X)
    np.testing.assert_array_equal(res.full_fit.components_, ref.components_)
    assert not hasattr(est, "components_")  # the passed estimator is not fitted in place


@pytest.mark.slow
def test_result_of_another_fit_is_refused(sim):
    pytest.importorskip("matplotlib")
    from creator_plugin.plotting import plot_graph

    model = CREATOR(3, random_state=1).fit(sim.X)
    other = CREATOR(3, random_state=2).fit([x[::-1] for x in sim.X[::-1]])
    res = bootstrap(sim.X, 2, estimator=other, random_state=0)
    with pytest.raises(ValueError, match="belongs to another fit"):
        res.check_model(model)
    with pytest.raises(ValueError, match="belongs to another fit"):
        plot_graph(model, res)


@pytest.mark.slow
def test_full_fit_keeps_feature_names(sim):
    cols = ["a", "b", "c", "d", "e"]
    frames = [pd.DataFrame(x, columns=cols) for x in sim.X]
    res = bootstrap(frames, 2, estimator=CREATOR(3, random_state=0), random_state=0)
    assert list(res.full_fit.feature_names_in_) == cols


class _Flaky(CREATOR):
    """Raises an exception of an unusual type on every other refit."""

    calls = 0

    def fit(self, X, y=None, *, environments=None):
        if self.random_state != 0:  # a refit (the reference fit has random_state=0)
            type(self).calls += 1
            if type(self).calls % 2 == 0:
                raise KeyError("a bug in a dependency")
        return super().fit(X, y, environments=environments)


@pytest.mark.slow
def test_any_exception_in_a_resample_is_recorded(sim):
    res = bootstrap(sim.X, 6, estimator=_Flaky(3, random_state=0, quality=False),
                    random_state=0, max_failed_share=0.9)
    assert res.n_failed == 3 and res.n_succeeded == 3
    assert all("KeyError" in msg for _, msg in res.failures)
