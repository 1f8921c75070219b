"""Named, standardised loadings and per-environment tables (creator_plugin.interpret)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from creator_plugin import interpret, metrics, simulate
from creator_plugin.sem import pooled_sd

# Three pure indicators per latent, in very different units.
UNITS = np.array([1.0, 100.0, 0.01, 100.0, 1.0, 1.0, 0.01, 1.0, 100.0])
NAMES = [f"{t}_{u}" for t in ("a", "b", "c") for u in ("m1", "m2", "m3")]


@pytest.fixture(scope="module")
def indicators(fit):
    sim = simulate(n_latent=3, n_environments=4, n_samples=1500, random_state=3)
    rng = np.random.default_rng(0)
    H = np.kron(np.eye(3), np.ones((3, 1))) * rng.uniform(0.5, 1.5, (9, 1))
    X = [(Y @ H.T + 0.2 * rng.standard_normal((Y.shape[0], 9))) * UNITS for Y in sim.Y]
    return sim, X, fit(X, 3)


def test_pattern_loadings_find_each_latents_own_measurements(indicators):
    sim, _, model = indicators
    table = interpret.loadings(model, feature_names=NAMES)
    assert list(table.index) == NAMES and list(table.columns) == ["L1", "L2", "L3"]
    alignment = metrics.align_to_truth(model, sim.adjacency, sim.Y)
    raw = pd.DataFrame(model.mixing_, index=NAMES, columns=table.columns)
    raw_right = 0
    for i, latent in enumerate(table.columns):
        own = set(NAMES[3 * alignment.matching[i]: 3 * alignment.matching[i] + 3])
        assert set(table[latent].abs().nlargest(3).index) == own
        raw_right += set(raw[latent].abs().nlargest(3).index) == own
    assert raw_right < 3  # in raw units the x100 columns win: the issue this fixes


def test_loadings_do_not_depend_on_units(indicators, fit):
    _, X, model = indicators
    rescaled = fit([x / UNITS for x in X], 3)
    np.testing.assert_allclose(interpret.loadings(rescaled), interpret.loadings(model),
                               atol=1e-6)
    assert not np.allclose(rescaled.mixing_, model.mixing_)


def test_loadings_ignore_per_environment_offsets(indicators, fit):
    # Offsets outside the mixing matrix (e.g. each lab's calibration) move no latent.
    _, X, model = indicators
    rng = np.random.default_rng(1)
    shifted = fit([x + rng.normal(0, 5, 9) * UNITS for x in X], 3)
    np.testing.assert_allclose(interpret.loadings(shifted), interpret.loadings(model),
                               atol=1e-6)


def test_structure_loadings_are_within_environment_correlations(indicators):
    _, X, model = indicators
    table = interpret.loadings(model, kind="structure").to_numpy()
    xc = np.vstack([x - x.mean(axis=0) for x in X])
    lc = np.vstack([L - L.mean(axis=0) for L in model.latents_])
    empirical = (xc.T @ lc / len(xc)) / np.outer(pooled_sd(X), pooled_sd(model.latents_))
    np.testing.assert_allclose(table, empirical, atol=1e-10)


def test_per_environment_tables(sim3, fit):
    X, labels = sim3.stacked()
    env = np.array(["lab_a", "lab_b", "lab_c", "lab_d"])[labels]
    model = fit(X + 5.0 * (labels == 2)[:, None], 3, environments=env)
    for table, attr in ((interpret.noise_scales(model), "noise_scales_"),
                        (interpret.intercepts(model), "intercepts_")):
        assert list(table.index) == ["lab_a", "lab_b", "lab_c", "lab_d"]
        assert list(table.columns) == ["L1", "L2", "L3"]
        np.testing.assert_allclose(table.to_numpy(), np.vstack(getattr(model, attr)))
    sds = interpret.latent_sds(model)
    n = np.array([len(L) for L in model.latents_])
    np.testing.assert_allclose((n[:, None] * sds.to_numpy() ** 2).sum(axis=0) / n.sum(), 1.0)
    means = interpret.intercepts(model)
    for label, L in zip(means.index, model.latents_):
        np.testing.assert_allclose(means.loc[label], L.mean(axis=0), atol=1e-10)
    assert (means.loc["lab_c"] - means.drop("lab_c").mean()).abs().max() > 1.0  # the shift


def test_names_from_the_result_and_dataframe(sim3, fit):
    columns = ["temp", "ph", "flow", "load"]
    X = [pd.DataFrame(x, columns=columns) for x in sim3.X]
    model = fit(X, 3)
    named = interpret.loadings(model, names=["cause", "middle", "effect"])
    assert list(named.columns) == ["cause", "middle", "effect"]
    if getattr(model, "feature_names_in_", None) is None:
        pytest.xfail("CREATOR does not record feature_names_in_ from DataFrames yet")
    assert list(interpret.loadings(model).index) == columns


def test_bad_arguments(sim3, fit):
    model = fit(sim3.X, 3)
    with pytest.raises(ValueError, match="kind must be one of"):
        interpret.loadings(model, kind="raw")
    with pytest.raises(ValueError, match="feature_names has 2 entries"):
        interpret.loadings(model, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="names must be unique"):
        interpret.noise_scales(model, names=["a", "a", "b"])
    with pytest.raises(TypeError, match="fitted CREATOR"):
        interpret.loadings(object())
