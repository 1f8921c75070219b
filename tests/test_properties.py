"""Property-based invariance tests (hypothesis, bounded for CI speed)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from creator_plugin import CREATOR, simulate

SIM = simulate(3, 4, 1500, n_features=5, random_state=1)
D, K, P = 3, 4, 5
PROPS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Some hypothesis draws give a weak-evidence notice; invariance is what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _fit(X_list):
    return CREATOR(D, random_state=0).fit(X_list)


BASE = _fit(SIM.X)


def _assert_same_up_to_labels(model, latents_in_base_order, base=BASE, min_corr=0.99):
    """Graphs isomorphic under the latent matching; matched latents |corr| ~ 1."""
    a = np.vstack(base.latents_)
    b = np.vstack(latents_in_base_order)
    corr = np.corrcoef(a, b, rowvar=False)[:D, D:]
    rows, cols = linear_sum_assignment(np.abs(corr), maximize=True)
    perm = cols[np.argsort(rows)]
    assert np.all(np.abs(corr[np.arange(D), perm]) > min_corr), corr
    np.testing.assert_array_equal(model.adjacency_matrix_[np.ix_(perm, perm)],
                                  base.adjacency_matrix_)


@pytest.mark.slow
@PROPS
@given(st.permutations(range(K)))
def test_environment_order(perm):
    model = _fit([SIM.X[k] for k in perm])
    back = [None] * K
    for pos, k in enumerate(perm):
        back[k] = model.latents_[pos]
    _assert_same_up_to_labels(model, back)


@pytest.mark.slow
@PROPS
@given(st.integers(0, 2**31 - 1))
def test_row_order_within_environments(seed):
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(len(x)) for x in SIM.X]
    model = _fit([x[p] for x, p in zip(SIM.X, perms)])
    back = [L[np.argsort(p)] for L, p in zip(model.latents_, perms)]
    _assert_same_up_to_labels(model, back)


@PROPS
@given(
    st.lists(st.floats(1e-3, 1e3), min_size=P, max_size=P),
    st.permutations(range(P)),
    st.lists(st.floats(-1e3, 1e3), min_size=P, max_size=P),
)
@pytest.mark.slow
def test_column_rescaling_permutation_and_shift(scales, cols, shifts):
    X = [(x * np.asarray(scales) + np.asarray(shifts))[:, list(cols)] for x in SIM.X]
    model = _fit(X)
    _assert_same_up_to_labels(model, model.latents_)


def test_same_random_state_identical_and_inputs_untouched():
    copies = [x.copy() for x in SIM.X]
    a, b = _fit(SIM.X), _fit(SIM.X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    for x, c in zip(SIM.X, copies):
        np.testing.assert_array_equal(x, c)
