"""Column names of every supported type: matched in fit and transform, kept in model files.

A DataFrame's names may be strings, integers, floats (not NaN), booleans,
numpy scalars of these or tuples of them (a MultiIndex). ``transform`` used
to match only string names: integer or MultiIndex names in another order
were multiplied by the wrong columns without a word, and the names were
lost on save and load.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, simulate
from creator_plugin._validation import check_environments, column_keys

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

QUICK = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

P = 4
COLUMNS = {
    "int": [0, 1, 2, 3],
    "numpy int": [np.int64(10), np.int64(20), np.int64(30), np.int64(40)],
    "float": [0.5, 1.5, 2.5, 3.5],
    "numpy float": [np.float32(0.25), np.float32(0.5), np.float32(0.75), np.float32(1.0)],
    "bool and int": [True, False, 2, 3],
    "tuples": [("g", 0), ("g", 1), ("h", 0), ("h", 1)],
    "MultiIndex": pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1), ("b", 2)]),
    "strings": ["temp", "ph", "light", "salt"],
}


@pytest.fixture(scope="module")
def sim():
    return simulate(2, 2, 150, n_features=P, random_state=0)


def _fit(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(2, random_state=0, quality=False).fit(X)


def _position(columns, name) -> int:
    """Where ``name`` is among ``columns``, by type and value (1 is not True)."""
    return next(i for i, c in enumerate(columns) if type(c) is type(name) and c == name)


@pytest.fixture(scope="module")
def models(sim):
    return {kind: _fit([pd.DataFrame(x, columns=cols) for x in sim.X])
            for kind, cols in COLUMNS.items()}


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_transform_refuses_the_columns_in_another_order(sim, models, kind):
    model = models[kind]
    frame = pd.DataFrame(sim.X[0], columns=COLUMNS[kind])
    np.testing.assert_array_equal(model.transform(frame), model.transform(sim.X[0]))
    with pytest.raises(ValueError, match="order"):
        model.transform(frame.iloc[:, [3, 1, 2, 0]])


@pytest.mark.parametrize("kind", list(COLUMNS))
def test_names_are_kept_with_their_type_in_model_files(sim, models, kind, tmp_path):
    model = models[kind]
    expected = column_keys(pd.DataFrame(sim.X[0], columns=COLUMNS[kind]), "X")
    assert model.column_names_in_ == expected
    assert hasattr(model, "feature_names_in_") == (kind == "strings")
    model.save(tmp_path / "m.npz")
    loaded = CREATOR.load(tmp_path / "m.npz")
    assert loaded.column_names_in_ == expected
    assert [type(c) for c in loaded.column_names_in_] == [type(c) for c in expected]
    frame = pd.DataFrame(sim.X[1], columns=COLUMNS[kind])
    np.testing.assert_array_equal(loaded.transform(frame), model.transform(frame))
    with pytest.raises(ValueError, match="order"):
        loaded.transform(frame.iloc[:, ::-1])


def test_inverse_transform_frames_carry_the_names(sim, models):
    model = models["MultiIndex"]
    model.set_output(transform="pandas")
    try:
        back = model.inverse_transform(model.transform(sim.X[0]))
    finally:
        model.set_output(transform="default")
    assert list(back.columns) == list(COLUMNS["MultiIndex"])


def test_names_differing_only_in_type_do_not_match(sim, models):
    model = models["int"]  # fitted on 0, 1, 2, 3
    frame = pd.DataFrame(sim.X[0], columns=[0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"not fitted on: \[0\.0, 1\.0, 2\.0, 3\.0\]"):
        model.transform(frame)


def test_a_string_model_refuses_a_frame_with_other_names(sim, models):
    with pytest.raises(ValueError, match="not fitted on"):
        models["strings"].transform(pd.DataFrame(sim.X[0]))


@pytest.mark.parametrize("bad, error, shown", [
    (None, TypeError, "NoneType"),
    (float("nan"), ValueError, "NaN"),
    (b"raw", TypeError, "bytes"),
    (pd.Timestamp("2024-01-01"), TypeError, "Timestamp"),
    (1 + 2j, TypeError, "complex"),
    (frozenset({1}), TypeError, "frozenset"),
    (("a", float("nan")), ValueError, "NaN"),
    (("a", None), TypeError, "NoneType"),
])
def test_unsupported_names_are_refused_at_fit_naming_them(sim, bad, error, shown):
    cols = pd.Index([bad, 1, 2, 3], dtype=object, tupleize_cols=False)
    frames = [pd.DataFrame(x, columns=cols) for x in sim.X]
    with pytest.raises(error, match=shown) as info:
        CREATOR(2).fit(frames)
    assert "X_list[0]" in str(info.value) and "column 0" in str(info.value)
    stacked = pd.DataFrame(np.vstack(sim.X), columns=cols)
    with pytest.raises(error, match=shown):
        CREATOR(2).fit(stacked, environments=np.repeat([0, 1], 150))


def test_environment_column_named(sim):
    X = np.vstack(sim.X)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["lab"] = np.repeat(["x", "y"], 150)
    model = CREATOR(2, random_state=0, quality=False).fit(df, environments="lab")
    reference = CREATOR(2, random_state=0, quality=False).fit(
        df.drop(columns="lab"), environments=df["lab"].to_numpy())
    np.testing.assert_array_equal(model.components_, reference.components_)
    assert model.environment_labels_ == ["x", "y"]
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
    Z = CREATOR(2, random_state=0, quality=False).fit_transform(df, environments="lab")
    np.testing.assert_array_equal(Z, reference.transform(df.drop(columns="lab")))
    with pytest.raises(ValueError, match=r"environments='site' is not a column of X"):
        CREATOR(2).fit(df, environments="site")


def test_transform_with_the_environment_column_names_it(sim):
    df = pd.DataFrame(np.vstack(sim.X), columns=["a", "b", "c", "d"])
    df["lab"] = np.repeat(["x", "y"], 150)
    model = CREATOR(2, random_state=0, quality=False).fit(df, environments="lab")
    with pytest.raises(ValueError, match="lab"):
        model.transform(df)
    ints = CREATOR(2, random_state=0, quality=False).fit(
        pd.DataFrame(np.vstack(sim.X)), environments=np.repeat([0, 1], 150))
    wide = pd.DataFrame(np.vstack(sim.X))
    wide[9] = 1.0
    with pytest.raises(ValueError, match=r"not fitted on: \[9\]"):
        ints.transform(wide)
    with pytest.raises(ValueError, match=r"not the fitted columns \[3\]"):
        ints.transform(wide.drop(columns=3))


# ----------------------------------------------------------------- properties
scalar_names = st.one_of(
    st.text(min_size=1, max_size=6),
    st.integers(-10**6, 10**6),
    st.floats(allow_nan=False, width=64),
    st.booleans(),
)
name_lists = st.one_of(
    st.lists(st.text(min_size=1, max_size=6), min_size=P, max_size=P),
    st.lists(st.one_of(st.integers(-50, 50), st.floats(allow_nan=False), st.booleans()),
             min_size=P, max_size=P),
    st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 9)), min_size=P, max_size=P),
).filter(lambda cols: len({(type(c).__name__, c) if not isinstance(c, tuple) else c
                           for c in cols}) == P)


@QUICK
@given(cols=name_lists, orders=st.lists(st.permutations(range(P)), min_size=2, max_size=2))
def test_environments_in_any_order_are_aligned_to_the_first(sim, cols, orders):
    frames = [pd.DataFrame(x, columns=pd.Index(cols, dtype=object, tupleize_cols=False))
              for x in sim.X]
    shuffled = [f.iloc[:, list(o)] for f, o in zip(frames, orders)]
    aligned = check_environments(shuffled)
    first = [shuffled[0].columns[i] for i in range(P)]
    for x, f in zip(aligned, frames):
        keep = [_position(f.columns, c) for c in first]
        np.testing.assert_array_equal(x, f.to_numpy()[:, keep])


@pytest.mark.slow
@SLOW
@given(cols=name_lists, order=st.permutations(range(P)))
def test_transform_matches_names_of_every_type_in_every_order(sim, cols, order):
    """Budget: 30 fits of d = 2, about 15 s."""
    index = pd.Index(cols, dtype=object, tupleize_cols=False)
    model = _fit([pd.DataFrame(x, columns=index) for x in sim.X])
    frame = pd.DataFrame(sim.X[1], columns=index)
    np.testing.assert_array_equal(model.transform(frame), model.transform(sim.X[1]))
    permuted = frame.iloc[:, list(order)]
    if list(order) != list(range(P)):
        with pytest.raises(ValueError, match="order"):
            model.transform(permuted)
