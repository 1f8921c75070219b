"""Shared fixtures of the test suite.

Tests marked ``slow`` (``@pytest.mark.slow`` on the test itself: about a second
or more, accuracy over many fits, clusters, subprocesses) are deselected by the
quick lane ``python -m pytest -m "not slow"``; CI runs everything.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate


def _fit(X, n_latent, environments=None, **kw):
    kw.setdefault("random_state", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return CREATOR(n_latent, **kw).fit(X, environments=environments)


def _fit_recording(X, n_latent, environments=None, **kw):
    kw.setdefault("random_state", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CREATOR(n_latent, **kw).fit(X, environments=environments)
    return model, caught


@pytest.fixture(scope="session")
def fit():
    """``fit(X, n_latent, environments=None, **params)``: a fitted CREATOR.

    ``random_state`` defaults to 0; the fit's own warnings (identifiability,
    weak evidence, ...) are silenced — tests about warnings use
    :func:`fit_recording`.
    """
    return _fit


@pytest.fixture(scope="session")
def fit_recording():
    """``fit_recording(X, n_latent, environments=None, **params) -> (model, warnings)``."""
    return _fit_recording


@pytest.fixture(scope="session")
def sim3():
    """d=3, K=4, n=1000 per environment, p=4: a small model every fit gets right."""
    return simulate(3, 4, 1000, n_features=4, random_state=0)


def _soft_single_node(seed):
    sim = simulate(4, 5, 800, edge_prob=0.8, random_state=seed)
    W = [sim.W[0].copy() for _ in range(5)]
    Om = [sim.Omega[0].copy() for _ in range(5)]
    for k in range(1, 5):
        W[k][:, k - 1] = sim.W[k][:, k - 1]
        Om[k][k - 1, k - 1] = sim.Omega[k][k - 1, k - 1]
    return [z @ om @ np.linalg.inv(np.eye(4) - w) @ sim.H.T
            for z, om, w in zip(sim.Z, Om, W)]


@pytest.fixture(scope="session")
def soft_single_node():
    """``soft_single_node(seed) -> X``: d = 4, an observational environment and one per
    latent in which only that latent's incoming weights and noise scale change (soft
    single-node interventions; 800 rows each, p = 4)."""
    return _soft_single_node
