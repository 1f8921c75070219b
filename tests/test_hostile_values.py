"""Values that are not measurements, and errors that used to come from inside libraries.

Booleans (a CSV column of ``True``/``False`` text), ``datetime64`` and
``timedelta64`` arrays were fitted as 0/1 or nanosecond counts; a sparse
matrix of floats was refused as "dtype object"; ``bootstrap(n_jobs=0)``
raised joblib's message and ``n_jobs=1.5`` was accepted.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from creator_plugin import CREATOR, bootstrap, simulate
from creator_plugin._validation import as_float_matrix, check_environments
from creator_plugin.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

QUICK = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def sim():
    return simulate(2, 2, 100, n_features=3, random_state=0)


def _nullable_flag(x):
    df = pd.DataFrame(x, columns=["a", "b", "c"])
    df["flag"] = pd.array(x[:, 0] > 0, dtype="boolean")
    return df


@pytest.mark.parametrize("make, pattern", [
    (lambda X: [x > 0 for x in X], "booleans"),
    (lambda X: [(x * 1e9).astype("datetime64[ns]") for x in X], "dates"),
    (lambda X: [(x * 1e9).astype("timedelta64[ns]") for x in X], "durations"),
    (lambda X: [x.astype(object) > 0 for x in X], "booleans"),
    (lambda X: [pd.DataFrame(x > 0) for x in X], "boolean columns"),
    (lambda X: [_nullable_flag(x) for x in X], r"boolean columns \['flag'\]"),
    (lambda X: [scipy.sparse.csr_matrix(x) for x in X], r"sparse csr_matrix .*toarray\(\)"),
    (lambda X: [scipy.sparse.coo_array(x) for x in X], "sparse"),
    (lambda X: [np.ma.masked_greater(x, 1.0) for x in X], "masked array with"),
])
def test_non_measurements_are_refused_naming_the_argument(sim, make, pattern):
    with pytest.raises((TypeError, ValueError), match=pattern) as info:
        CREATOR(2).fit(make(sim.X))
    assert "X_list[0]" in str(info.value)


def test_stacked_and_transform_input_are_checked_too(sim):
    X, env = sim.stacked()
    with pytest.raises(TypeError, match=r"^X holds dates"):
        CREATOR(2).fit(X.astype("datetime64[s]"), environments=env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(2, random_state=0, quality=False).fit(sim.X)
    with pytest.raises(TypeError, match="^X is a sparse"):
        model.transform(scipy.sparse.csr_matrix(sim.X[0]))
    with pytest.raises(TypeError, match="^X holds booleans"):
        model.transform(sim.X[0] > 0)
    with pytest.raises(TypeError, match="^L holds durations"):
        model.inverse_transform(np.zeros((3, 2), dtype="timedelta64[s]"))


def test_a_masked_array_without_masked_entries_is_its_data(sim):
    masked = [np.ma.masked_array(x, mask=False) for x in sim.X]
    assert all(np.array_equal(a, b) for a, b in zip(check_environments(masked), sim.X))


def test_csv_column_of_true_false_text_is_refused(tmp_path, sim, capsys):
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["flag"] = np.where(X[:, 0] > 0, "True", "False")
    df["lab"] = env
    df.to_csv(tmp_path / "d.csv", index=False)
    code = main(["fit", str(tmp_path / "d.csv"), "--env-column", "lab", "--n-latent", "2",
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "['flag']" in err[0] and "True/False" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


@pytest.mark.parametrize("n_jobs, error, pattern", [
    (0, ValueError, "must not be 0"),
    ("x", TypeError, "n_jobs must be None or an integer"),
    (1.5, TypeError, "n_jobs must be None or an integer"),
    (True, TypeError, "n_jobs must be None or an integer"),
])
def test_bootstrap_checks_n_jobs_before_fitting(sim, n_jobs, error, pattern, monkeypatch):
    monkeypatch.setattr(CREATOR, "fit", lambda *a, **k: pytest.fail("fitted first"))
    with pytest.raises(error, match=pattern):
        bootstrap(sim.X, 2, estimator=CREATOR(2), n_jobs=n_jobs)


# ----------------------------------------------------------------- properties
dtypes = st.one_of(
    hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(), hnp.floating_dtypes(),
    hnp.boolean_dtypes(), hnp.complex_number_dtypes(), hnp.datetime64_dtypes(),
    hnp.timedelta64_dtypes(), hnp.byte_string_dtypes(max_len=4),
    hnp.unicode_string_dtypes(max_len=4),
)


@QUICK
@given(data=st.data(), dtype=dtypes)
def test_every_dtype_is_read_exactly_or_refused_by_name(data, dtype):
    arr = data.draw(hnp.arrays(dtype, (6, 2)))
    before = arr.copy()
    try:
        out = as_float_matrix(arr, "X")
    except (TypeError, ValueError) as exc:
        message = str(exc)
        assert message.startswith("X "), message
        kind = dtype.kind
        assert kind in "bMmcSUa" or "non-finite" in message, (dtype, message)
    else:
        assert dtype.kind in "iuf", dtype
        assert out.dtype == np.float64 and not out.flags.writeable
        np.testing.assert_array_equal(out, arr.astype(np.float64))
    np.testing.assert_array_equal(arr, before)  # never modified
