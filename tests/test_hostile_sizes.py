"""Sizes checked before allocating, against the machine's physical memory.

``simulate(n_latent=10**6)`` and ``n_samples=10**12`` raised a raw
``MemoryError``; ``intervene_observations(n_samples=10**9)`` tried to
allocate 22 GiB and ran for minutes. The memory reading is monkeypatched
here (``creator_plugin._validation.physical_memory_bytes``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, _validation, simulate
from creator_plugin._simdata import simulation_bytes
from creator_plugin.interventional import simulate_multi_node, simulate_single_node
from creator_plugin.simulation import simulate_dask, simulate_family

QUICK = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
GIB = 1 << 30


@pytest.mark.parametrize("call, kwargs, culprit", [
    (simulate, dict(n_latent=10**6), "n_latent"),
    (simulate, dict(n_samples=10**12), "n_samples"),
    (simulate, dict(n_environments=10**9), "n_environments"),
    (simulate, dict(n_features=10**9), "n_features"),
    (simulate, dict(n_samples=[10**12, 10, 10, 10, 10]), "n_samples"),
    (simulate_family, dict(family="paper", n_samples=10**11), "n_samples"),
    (simulate_single_node, dict(n_samples=10**11), "n_samples"),
    (simulate_multi_node, dict(n_latent=10**6), "n_environments"),  # K = d + 1 by default
    (simulate_dask, dict(n_samples=10**14), "n_samples"),
])
def test_huge_simulations_are_refused_at_once_naming_the_argument(call, kwargs, culprit):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"physical memory; lower {culprit}"):
        call(**kwargs)
    assert time.perf_counter() - start < 5


def test_the_limit_is_the_physical_memory(monkeypatch):
    monkeypatch.setattr(_validation, "physical_memory_bytes", lambda: 64 << 20)
    with pytest.raises(ValueError, match=r"more than this machine's 64 MiB .*lower n_samples"):
        simulate(3, 3, 10**6)
    simulate(3, 3, 1000, random_state=0)  # 0.3 MiB: fine
    monkeypatch.setattr(_validation, "physical_memory_bytes", lambda: 1 << 40)
    assert simulate(2, 2, 10, random_state=0).X[0].shape == (10, 2)


def test_the_check_draws_nothing():
    a = simulate(3, 4, 200, random_state=5)
    b = simulate(3, 4, 200, random_state=5)
    for x, y in zip(a.X, b.X):
        np.testing.assert_array_equal(x, y)


def test_memory_reading_falls_back_where_unknown(monkeypatch):
    import os

    def unknown(name):
        raise ValueError(name)

    monkeypatch.setattr(os, "sysconf", unknown)
    assert _validation.physical_memory_bytes() == _validation.MEMORY_FALLBACK_BYTES


def test_intervene_observations_refuses_before_sampling(monkeypatch):
    from creator_plugin.adapters import dowhy as adapter

    sim = simulate(2, 2, 200, n_features=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(2, random_state=0, quality=False).fit(sim.X)
    monkeypatch.setattr(adapter, "to_gcm", lambda *a, **k: pytest.fail("sampled first"))
    start = time.perf_counter()
    with pytest.raises(ValueError, match="intervene_observations with n_samples=1000000000.*"
                                         "lower n_samples"):
        adapter.intervene_observations(model, {"L1": 1.0}, n_samples=10**9)
    assert time.perf_counter() - start < 5
    monkeypatch.setattr(_validation, "physical_memory_bytes", lambda: 1 << 20)
    with pytest.raises(ValueError, match="1 MiB of physical memory"):
        adapter.intervene_observations(model, {"L1": 1.0}, n_samples=10**5)


@QUICK
@given(d=st.integers(1, 12), K=st.integers(1, 12), n=st.integers(2, 20_000),
       extra=st.integers(0, 12), limit=st.integers(1 << 16, 16 << 20))
def test_refused_exactly_when_the_estimate_exceeds_the_limit(d, K, n, extra, limit):
    p = d + extra
    estimate = simulation_bytes(d, K, n, p)
    original = _validation.physical_memory_bytes
    _validation.physical_memory_bytes = lambda: limit
    try:
        if estimate > limit:
            with pytest.raises(ValueError, match="lower (n_latent|n_environments|n_samples|"
                                                 "n_features)"):
                simulate(d, K, n, n_features=p, random_state=0)
        else:
            sim = simulate(d, K, n, n_features=p, random_state=0)
            assert [x.shape for x in sim.X] == [(n, p)] * K
            assert sum(x.nbytes + y.nbytes + z.nbytes
                       for x, y, z in zip(sim.X, sim.Y, sim.Z)) <= estimate
    finally:
        _validation.physical_memory_bytes = original
