"""Data larger than memory: dask arrays per environment, on any dask scheduler."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from creator_plugin import CREATOR, metrics, preprocessing, simulate, simulate_dask

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _fit_sync(X, d, **kw):
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(d, random_state=0, **kw).fit(X)


def _assert_same_fit(a, b, atol):
    np.testing.assert_array_equal(a.adjacency_matrix_, b.adjacency_matrix_)
    for x, y in zip(a.latents_, b.latents_):
        np.testing.assert_allclose(x, y, atol=atol)
    np.testing.assert_allclose(a.mixing_, b.mixing_, atol=atol)


@pytest.mark.slow
@pytest.mark.parametrize("standardize", [True, False])
def test_dask_fit_equals_numpy_fit(standardize, fit):
    sim = simulate(3, 3, 1500, n_features=8, measurement_noise=0.05, random_state=1)
    ref = fit(sim.X, 3, standardize=standardize)
    lazy = _fit_sync([da.from_array(x, chunks=(400, 8)) for x in sim.X], 3,
                     standardize=standardize)
    _assert_same_fit(ref, lazy, atol=1e-8)
    np.testing.assert_allclose(lazy.diagnostics_["explained_variance"],
                               ref.diagnostics_["explained_variance"], rtol=1e-8, atol=1e-12)


@pytest.mark.slow
def test_dask_many_columns_uses_randomised_svd(monkeypatch, fit):
    """Above DASK_EXACT_MAX_FEATURES columns: dask's randomised SVD, the leading spectrum."""
    monkeypatch.setattr(preprocessing, "DASK_EXACT_MAX_FEATURES", 10)
    sim = simulate(3, 3, 1000, n_features=60, measurement_noise=0.05, random_state=2)
    ref = fit(sim.X, 3)
    lazy = _fit_sync([da.from_array(x, chunks=(250, 30)) for x in sim.X], 3)
    _assert_same_fit(ref, lazy, atol=1e-5)
    spectrum = lazy.diagnostics_["explained_variance"]
    assert len(spectrum) == min(3000, 60, preprocessing.N_LEADING_EIGENVALUES)
    np.testing.assert_allclose(spectrum[:3], ref.diagnostics_["explained_variance"][:3],
                               rtol=1e-8)


def test_dask_input_errors():
    x = da.from_array(np.ones((100, 3)), chunks=50)
    with pytest.raises(TypeError, match="list of K arrays"):
        CREATOR(2).fit(x, environments=np.repeat([0, 1], 50))
    unknown = x[x[:, 0] > 0]  # boolean indexing: unknown chunk sizes
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        CREATOR(2).fit([unknown, x])
    with pytest.raises(TypeError, match="only numbers"):
        CREATOR(2).fit([x, x.astype(str)])
    bad = da.from_array(np.where(np.eye(100, 3) > 0, np.nan, 1.0), chunks=50)
    rng = np.random.default_rng(0)
    good = da.from_array(rng.standard_normal((100, 3)), chunks=50)
    with pytest.raises(ValueError, match=r"X_list\[1\] contains non-finite"):
        _fit_sync([good, bad], 2)


@pytest.mark.slow
def test_transform_of_a_dask_array_stays_lazy(fit):
    sim = simulate(3, 3, 1000, random_state=0)
    model = fit(sim.X, 3)
    out = model.transform(da.from_array(sim.X[1], chunks=300))
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), model.latents_[1], atol=1e-10)


_CAPPED = textwrap.dedent("""
    import json, re, resource, warnings
    import numpy as np, dask
    from creator_plugin import CREATOR, metrics, simulate_dask

    sim = simulate_dask(3, 3, 60_000, n_features=300, chunk_rows=2_500, random_state=0)
    def vm_data():
        status = open("/proc/self/status").read()
        return int(re.search(r"VmData:\\s+(\\d+) kB", status).group(1)) * 1024
    cap = {cap_mb} * 2**20
    resource.setrlimit(resource.RLIMIT_DATA, (vm_data() + cap, resource.RLIM_INFINITY))
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(3, random_state=0).fit(sim.X)
        Y = [np.asarray(y) for y in sim.Y]
        ev = metrics.evaluate(sim.adjacency, Y, model.adjacency_matrix_, model.latents_,
                              model.causal_order_)
        # Last: a failed allocation can leave the heap fragmented.
        try:
            sim.X[0].compute()
            one_environment_fits = True
        except MemoryError:
            one_environment_fits = False
    print(json.dumps({{"shd": ev["shd"], "locr2": ev["locr2"],
                      "data_mb": sum(x.nbytes for x in sim.X) / 2**20,
                      "one_environment_fits": one_environment_fits}}))
""")


@pytest.mark.slow
def test_out_of_core_fit_under_a_memory_cap():
    """Data 2.9x larger than the memory the process may add: the fit completes and is right.

    ``RLIMIT_DATA`` caps every allocation of the process (heap and anonymous
    maps) at 150 MB above what it uses after building the lazy data; the
    data (432 MB) are generated block by block by dask, so only blocks and
    the ``(n, d)`` results ever exist. Under the same cap, computing even one
    environment's array (144 MB) fails, so the cap is real.
    """
    cap_mb = 150
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _CAPPED.format(cap_mb=cap_mb)], capture_output=True, text=True,
        env={**os.environ, **env}, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["data_mb"] > 2.5 * cap_mb
    assert not res["one_environment_fits"]
    assert res["shd"] == 0 and res["locr2"] > 0.99


@pytest.mark.slow
def test_distributed_cluster_with_memory_limit():
    distributed = pytest.importorskip("distributed")
    sim = simulate_dask(3, 3, 40_000, n_features=40, measurement_noise=0.05,
                        chunk_rows=10_000, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, memory_limit="500MiB",
            dashboard_address=None,
        ) as cluster, distributed.Client(cluster):
            on_cluster = CREATOR(3, random_state=0).fit(sim.X)
    _assert_same_fit(on_cluster, _fit_sync(sim.X, 3), atol=1e-8)
    Y = [np.asarray(y) for y in sim.Y]
    ev = metrics.evaluate(sim.adjacency, Y, on_cluster.adjacency_matrix_, on_cluster.latents_,
                          on_cluster.causal_order_)
    assert ev["shd"] == 0 and ev["locr2"] > 0.99


def test_simulate_dask_blocks_are_reproducible():
    sim = simulate_dask(3, 2, 1000, n_features=5, chunk_rows=300, random_state=4)
    assert [x.shape for x in sim.X] == [(1000, 5)] * 2
    assert sim.X[0].numblocks == (4, 1)
    a = sim.X[1][250:350].compute()
    b = sim.X[1][250:350].compute()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(sim.X[1][:10].compute(), (sim.Y[1][:10] @ sim.H.T).compute())


@pytest.mark.slow
def test_docs_large_data_example_runs(capsys):
    pytest.importorskip("distributed")
    path = Path(__file__).resolve().parents[1] / "docs" / "large_data.md"
    blocks = re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(blocks[0], "docs/large_data.md", "exec"), {"__name__": "__docs__"})
    assert "(100000, 3)" in capsys.readouterr().out
