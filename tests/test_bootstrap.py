"""Bootstrap edge probabilities: confident on easy cases, spread on hard ones."""

import numpy as np
import pytest

from creator_plugin import CREATOR, metrics, simulate
from creator_plugin.bootstrap import bootstrap

# The resampled fits' identifiability notices are not what these tests are about.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _in_true_labels(sim, result):
    ev = metrics.evaluate_model(result.full_fit, sim)
    mt = np.asarray(ev["matching"])
    P = np.zeros_like(result.get_probabilities())
    P[np.ix_(mt, mt)] = result.get_probabilities()
    return P


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 3])
def test_easy_case_confident(seed):
    """d=3, K=5, n=3000. (A K=4, n=2000 case with a grandparent -> sink pair whose
    full-fit statistic is 0.075 gave that absent edge probability 0.37.)"""
    sim = simulate(3, 5, 3000, random_state=seed)
    res = bootstrap(sim.X, 20, estimator=CREATOR(3), random_state=0)
    P = _in_true_labels(sim, res)
    A = sim.adjacency.astype(bool)
    off = ~np.eye(3, dtype=bool)
    assert np.all(P[A] >= 0.9), P
    assert np.all(P[~A & off] <= 0.1), P
    assert res.order_stability() >= 0.9
    lo_hi = res.get_weight_intervals()
    assert lo_hi.shape == (5, 3, 3, 2)
    est = res.full_fit.adjacency_matrix_.astype(bool)
    assert np.all(lo_hi[:, est, 0] <= lo_hi[:, est, 1])
    dags = res.get_dag_counts(2)
    assert sum(c for _, c in res.get_dag_counts()) == 20
    assert dags[0][1] >= dags[-1][1]


@pytest.mark.slow
def test_hard_case_spread():
    sim = simulate(4, 4, 1000, weight_scale=0.1, random_state=0)
    res = bootstrap(sim.X, 20, estimator=CREATOR(4), random_state=0)
    P = res.get_probabilities()
    assert np.any((P > 0.1) & (P < 0.9)), P


@pytest.mark.slow
def test_parallel_equals_serial():
    sim = simulate(3, 3, 800, random_state=2)
    a = bootstrap(sim.X, 6, estimator=CREATOR(3), random_state=5)
    b = bootstrap(sim.X, 6, estimator=CREATOR(3), random_state=5, n_jobs=2)
    np.testing.assert_array_equal(a.adjacency_matrices, b.adjacency_matrices)
    np.testing.assert_allclose(a.weights, b.weights)
    np.testing.assert_array_equal(a.get_order_probabilities(), b.get_order_probabilities())


def test_bad_arguments():
    sim = simulate(3, 3, 300, random_state=0)
    with pytest.raises(TypeError, match="estimator="):
        bootstrap(sim.X, 5)
    with pytest.raises(ValueError, match="n_sampling"):
        bootstrap(sim.X, 0, estimator=CREATOR(3))


@pytest.mark.slow
def test_dask_local_cluster_equals_serial():
    distributed = pytest.importorskip("distributed")
    import joblib

    sim = simulate(3, 3, 600, random_state=4)
    a = bootstrap(sim.X, 4, estimator=CREATOR(3), random_state=9)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        b = bootstrap(sim.X, 4, estimator=CREATOR(3), random_state=9)
    np.testing.assert_array_equal(a.adjacency_matrices, b.adjacency_matrices)
    np.testing.assert_allclose(a.weights, b.weights)
