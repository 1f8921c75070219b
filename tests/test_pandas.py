"""scikit-learn's pandas conventions: feature names, alignment by name, set_output."""

import copy

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from creator_plugin import CREATOR, metrics, simulate

COLS = ["temp", "ph", "light", "salt"]
N = 400


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 3, N, n_features=4, random_state=0)


@pytest.fixture(scope="module")
def frames(sim):
    return [pd.DataFrame(x, columns=COLS, index=1000 * k + np.arange(len(x)))
            for k, x in enumerate(sim.X)]


@pytest.fixture(scope="module")
def named(frames, fit):
    return fit(frames, 3)


def test_feature_names_in_from_dataframes(named, sim, fit):
    assert list(named.feature_names_in_) == COLS
    assert named.feature_names_in_.dtype == object
    unnamed = fit(sim.X, 3)
    assert not hasattr(unnamed, "feature_names_in_")
    np.testing.assert_allclose(unnamed.components_, named.components_, atol=1e-12)
    # A refit on arrays forgets the names.
    again = copy.deepcopy(named).fit(sim.X)
    assert not hasattr(again, "feature_names_in_")


def test_permuted_environments_aligned_by_name(sim, frames, named, fit):
    shuffled = [f[list(np.roll(COLS, k))] for k, f in enumerate(frames)]  # other orders
    model = fit(shuffled, 3)
    assert list(model.feature_names_in_) == COLS  # the first environment's order
    np.testing.assert_array_equal(model.adjacency_matrix_, named.adjacency_matrix_)
    for a, b in zip(model.latents_, named.latents_):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert metrics.evaluate_model(model, sim)["shd"] == 0


def test_different_column_sets_are_an_error_naming_them(frames):
    bad = [frames[0], frames[1].rename(columns={"ph": "pH"}), *frames[2:]]
    with pytest.raises(ValueError, match=r"X_list\[1\].*missing \['ph'\].*unexpected \['pH'\]"):
        CREATOR(3).fit(bad)
    with pytest.raises(ValueError, match=r"X_list\[1\] has column names but X_list\[0\] does not"):
        CREATOR(3).fit([frames[0].to_numpy(), *frames[1:]])
    with pytest.raises(ValueError, match="duplicated column names"):
        CREATOR(3).fit([f.set_axis(["a", "a", "b", "c"], axis=1) for f in frames])
    with pytest.raises(TypeError, match="mix strings"):
        CREATOR(3).fit([f.set_axis(["a", 1, "b", "c"], axis=1) for f in frames])


def test_transform_checks_names_as_scikit_learn(named, frames):
    X = frames[1]
    np.testing.assert_allclose(named.transform(X), named.latents_[1], atol=1e-12)
    with pytest.raises(ValueError, match="(?s)same order as they were in fit.*feature_names_in_"):
        named.transform(X[COLS[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        named.transform(X.rename(columns={"ph": "pH"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.transform(X.to_numpy())


def test_get_feature_names_out(named):
    assert list(named.get_feature_names_out()) == ["L1", "L2", "L3"]
    assert list(named.get_feature_names_out(COLS)) == ["L1", "L2", "L3"]
    with pytest.raises(ValueError, match="input_features"):
        named.get_feature_names_out(COLS[::-1])


@pytest.mark.slow
def test_set_output_pandas(frames, sim, named, fit):
    model = copy.deepcopy(named).set_output(transform="pandas")
    Z = model.transform(frames[2])
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == ["L1", "L2", "L3"]
    assert Z.index.equals(frames[2].index)
    back = model.inverse_transform(Z)
    assert isinstance(back, pd.DataFrame) and list(back.columns) == COLS
    assert back.index.equals(frames[2].index)
    np.testing.assert_allclose(back.to_numpy(),
                               model.inverse_transform(Z.to_numpy()).to_numpy())
    lst = CREATOR(3, random_state=0).set_output(transform="pandas").fit_transform(frames)
    assert [type(z) for z in lst] == [pd.DataFrame] * 3
    assert all(z.index.equals(f.index) for z, f in zip(lst, frames))
    stacked = pd.concat(frames)
    labels = np.repeat(["a", "b", "c"], N)
    Zs = CREATOR(3, random_state=0).set_output(transform="pandas").fit_transform(
        stacked, environments=labels)
    assert isinstance(Zs, pd.DataFrame) and Zs.index.equals(stacked.index)
    # Fitted on arrays: scikit-learn's default input names; default output stays arrays.
    plain = CREATOR(3, random_state=0).set_output(transform="pandas")
    plain.fit(sim.X)
    assert list(plain.inverse_transform(Z).columns) == ["x0", "x1", "x2", "x3"]
    assert isinstance(named.inverse_transform(Z), np.ndarray)


def test_inverse_transform_checks_latent_names(named, frames):
    Z = pd.DataFrame(named.transform(frames[0]), columns=["L1", "L2", "L3"])
    np.testing.assert_allclose(named.inverse_transform(Z), named.inverse_transform(Z.to_numpy()))
    with pytest.raises(ValueError, match=r"L has columns \['L3', 'L2', 'L1'\]"):
        named.inverse_transform(Z[["L3", "L2", "L1"]])


def test_pipeline_with_set_output(frames):
    stacked = pd.concat(frames)
    labels = np.repeat([0, 1, 2], N)
    pipe = make_pipeline(StandardScaler(), CREATOR(3, random_state=0)).set_output(
        transform="pandas")
    Z = pipe.fit_transform(stacked, creator__environments=labels)
    assert list(Z.columns) == ["L1", "L2", "L3"]
    assert list(pipe[-1].feature_names_in_) == COLS
