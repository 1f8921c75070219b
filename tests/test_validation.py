"""Every bad input raises a clear error naming the argument."""

import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, IdentifiabilityWarning, OrderingOptions, simulate


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 3, 300, n_features=4, random_state=0)


def test_nan(sim):
    X = [x.copy() for x in sim.X]
    X[1][5, 2] = np.nan
    with pytest.raises(ValueError, match=r"X_list\[1\].*non-finite.*1 NaN"):
        CREATOR(3).fit(X)


def test_inf(sim):
    X = [x.copy() for x in sim.X]
    X[0][0, 0] = np.inf
    with pytest.raises(ValueError, match=r"X_list\[0\].*1 inf"):
        CREATOR(3).fit(X)


def test_non_numeric(sim):
    X = [x.astype(object) for x in sim.X]
    X[2][0, 0] = "abc"
    with pytest.raises(TypeError, match=r"X_list\[2\].*numbers"):
        CREATOR(3).fit(X)


def test_single_array_without_labels(sim):
    with pytest.raises(TypeError, match="list of K arrays"):
        CREATOR(3).fit(sim.X[0])


def test_fewer_than_two_environments(sim):
    with pytest.raises(ValueError, match="at least 2 environments"):
        CREATOR(3).fit(sim.X[:1])
    X, _ = sim.stacked()
    with pytest.raises(ValueError, match="at least 2 environments"):
        CREATOR(3).fit(X, environments=np.zeros(len(X)))


def test_different_p(sim):
    X = [sim.X[0], sim.X[1][:, :3], sim.X[2]]
    with pytest.raises(ValueError, match="same number of columns"):
        CREATOR(3).fit(X)


def test_wrong_dimensionality(sim):
    with pytest.raises(ValueError, match=r"X_list\[0\] must be 2-D"):
        CREATOR(3).fit([sim.X[0][:, 0], sim.X[1]])


def test_too_few_rows(sim):
    X = [sim.X[0][:8], sim.X[1], sim.X[2]]
    with pytest.raises(ValueError, match=r"X_list\[0\] has 8 rows; at least 15"):
        CREATOR(3).fit(X)


@pytest.mark.parametrize("bad", [0, -1, 5])
def test_n_latent_out_of_range(sim, bad):
    with pytest.raises(ValueError, match="n_latent"):
        CREATOR(bad).fit(sim.X)


def test_n_latent_not_integer(sim):
    with pytest.raises(TypeError, match="'n_latent' parameter of CREATOR must be an int"):
        CREATOR(2.5).fit(sim.X)


def test_rank_deficient(sim):
    X = [np.column_stack([x[:, 0], x[:, 0], 2 * x[:, 0], x[:, 1]]) for x in sim.X]
    with pytest.raises(ValueError, match="rank deficient"):
        CREATOR(3).fit(X)


def test_environment_labels_wrong_length(sim):
    X, labels = sim.stacked()
    with pytest.raises(ValueError, match="environments must be a vector"):
        CREATOR(3).fit(X, environments=labels[:-1])


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"scorer": "mi"}, "'scorer' parameter of CREATOR must be a str among"),
        ({"pruning": "lasso"}, "'pruning' parameter"),
        ({"prune_threshold": -1.0}, "'prune_threshold' parameter"),
        ({"prune_threshold": float("nan")}, r"'prune_threshold' parameter.*Got nan"),
        ({"prune_threshold": float("inf")}, "'prune_threshold' parameter"),
        ({"prune_threshold": "0.2"}, "'prune_threshold' parameter"),
        ({"standardize": "no"}, "'standardize' parameter of CREATOR must be an instance of 'bool'"),
        ({"random_state": -1}, "'random_state' parameter"),
        ({"random_state": "seed"}, "'random_state' parameter"),
        ({"ordering": {"polish": False}}, "'ordering' parameter of CREATOR"),
        ({"refine": "off"}, "'refine' parameter of CREATOR"),
        ({"ordering": OrderingOptions(scorer_options={"n_featurs": 16})},
         r"unknown keys \['n_featurs'\]; allowed keys: none"),
        ({"scorer": "hsic_rff", "ordering": OrderingOptions(scorer_options={"n_featurs": 16})},
         r"unknown keys \['n_featurs'\]; allowed keys: max_samples, n_features"),
        ({"scorer": "hsic_rff", "ordering": OrderingOptions(scorer_options={"n_features": 0})},
         "'n_features' parameter of CREATOR ordering.scorer_options"),
    ],
)
def test_bad_parameters(sim, kw, match):
    with pytest.raises(ValueError, match=match):
        CREATOR(3, **kw).fit(sim.X)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"polish": "yes"}, "'polish' parameter of OrderingOptions"),
        ({"polish": None}, "'polish' parameter"),
        ({"n_reestimate": -1}, "'n_reestimate' parameter"),
        ({"n_reestimate": 2.0}, "'n_reestimate' parameter"),
        ({"n_reestimate": None}, "'n_reestimate' parameter"),
        ({"weak_evidence_level": float("nan")}, "'weak_evidence_level' parameter"),
        ({"weak_evidence_level": "x"}, "'weak_evidence_level' parameter"),
        ({"ica_fun": "tanh"}, "'ica_fun' parameter of OrderingOptions"),
        ({"ica_max_iter": 0}, "'ica_max_iter' parameter"),
        ({"ica_tol": float("nan")}, "'ica_tol' parameter"),
        ({"scorer_options": [("n_features", 10)]}, "'scorer_options' parameter"),
    ],
)
def test_bad_ordering_options(kw, match):
    with pytest.raises(ValueError, match=match):
        OrderingOptions(**kw)


def test_parameters_are_checked_before_any_work():
    """A bad parameter is reported even when the data are bad too (no work was done)."""
    with pytest.raises(ValueError, match="'prune_threshold' parameter"):
        CREATOR(3, prune_threshold=float("nan")).fit(None)


def test_valid_options_are_accepted(fit, sim):
    model = fit(sim.X, 3, scorer="hsic_rff",
                ordering=OrderingOptions(scorer_options={"n_features": 8, "max_samples": None},
                                         ica_max_iter=50, ica_fun="cube"),
                random_state=np.random.default_rng(1))
    assert model.adjacency_matrix_.shape == (3, 3)


def test_fewer_environments_than_latents_warns():
    sim = simulate(4, 2, 500, random_state=1)
    with pytest.warns(IdentifiabilityWarning, match="K=2"):
        CREATOR(4, random_state=0).fit(sim.X)


def test_no_identifiability_warning_when_enough_environments():
    sim = simulate(3, 4, 1000, edge_prob=0.3, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        CREATOR(3, random_state=0).fit(sim.X)


def test_transform_checks_columns(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR(3, random_state=0).fit(sim.X)
    with pytest.raises(ValueError, match="X has 3 columns; the model expects 4"):
        model.transform(sim.X[0][:, :3])
    with pytest.raises(ValueError, match="L has 2 columns; the model expects 3"):
        model.inverse_transform(np.zeros((2, 2)))


# ---------------------------------------------------------------- labels
def _stacked(sim):
    return np.vstack(sim.X), np.repeat(np.array(["a", "b", "c"], dtype=object), 300)


@pytest.mark.parametrize("missing", [None, float("nan"), "pd.NA", "categorical"])
def test_missing_labels_are_an_error_with_the_count(sim, missing):
    import pandas as pd

    X, labels = _stacked(sim)
    if missing == "categorical":
        labels = pd.Categorical(labels)
        labels[[3, 400]] = np.nan
    else:
        labels = labels.copy()
        labels[[3, 400]] = pd.NA if missing == "pd.NA" else missing
    with pytest.raises(ValueError, match="environments has 2 missing labels"):
        CREATOR(3).fit(X, environments=labels)


def test_mixed_label_types_are_an_error(sim):
    X, labels = _stacked(sim)
    labels = labels.copy()
    labels[:300] = 7
    with pytest.raises(TypeError, match="environments mixes label types.*str 'b'.*number 7"
                       "|environments mixes label types.*number 7.*str 'b'"):
        CREATOR(3).fit(X, environments=labels)


def test_labels_of_one_type_are_kept(fit, sim):
    import pandas as pd

    X, labels = _stacked(sim)
    model = fit(X, 3, environments=pd.Series(labels, dtype="category"))
    assert model.environment_labels_ == ["a", "b", "c"]
    assert all(type(v) is str for v in model.environment_labels_)
    model = fit(X, 3, environments=np.repeat([2.5, 1.0, 7.0], 300))
    assert model.environment_labels_ == [1.0, 2.5, 7.0]


def test_ragged_input_names_the_argument(sim):
    rows = sim.X[0].tolist()
    rows[5] = rows[5][:2]
    with pytest.raises(ValueError, match=r"X_list\[0\] is ragged: its rows have different "
                                         r"lengths \(2, 4\)"):
        CREATOR(3).fit([rows, sim.X[1], sim.X[2]])
    X, labels = _stacked(sim)
    with pytest.raises(ValueError, match="X is ragged"):
        CREATOR(3).fit([list(r) for r in X[:-1]] + [[1.0]], environments=labels)
    with pytest.raises(ValueError, match="environments is a ragged nested list"):
        CREATOR(3).fit(X, environments=[["a"], ["b", "c"]] + [["a"]] * 898)


def test_dataframe_with_its_label_column_gets_a_hint(sim):
    import pandas as pd

    X, labels = _stacked(sim)
    df = pd.DataFrame(X, columns=list("abcd"))
    df["lab"] = labels
    with pytest.raises(TypeError, match=r"X has non-numeric columns \['lab'\].*environments="):
        CREATOR(3).fit(df, environments=df["lab"])


def test_warnings_name_columns_by_name(sim, fit_recording):
    import pandas as pd

    frames = [pd.DataFrame(x, columns=list("abcd")).assign(thermostat=21.5) for x in sim.X]
    model, caught = fit_recording(frames, 3)
    messages = [str(w.message) for w in caught]
    assert any("Columns ['thermostat'] are constant" in m for m in messages), messages
    assert model.diagnostics_["dropped_columns"] == [4]  # positions in the data
    _, caught = fit_recording([f.to_numpy() for f in frames], 3)
    assert any("Columns [4] are constant" in str(w.message) for w in caught)


# --------------------------------------------------------------- metrics
def test_evaluate_rejects_estimates_of_another_shape(sim):
    from creator_plugin import metrics

    A, Y = sim.adjacency, sim.Y
    with pytest.raises(ValueError, match=r"est_adjacency has shape \(2, 2\) but true_adjacency "
                                         r"\(3, 3\)"):
        metrics.evaluate(A, Y, np.zeros((2, 2)), [y[:, :2] for y in Y])
    with pytest.raises(ValueError, match="true_latents has 3 environments but est_latents 2"):
        metrics.evaluate(A, Y, A, Y[:2])
    with pytest.raises(ValueError, match="environment 1 has 300 rows in true_latents but 299"):
        metrics.evaluate(A, Y, A, [Y[0], Y[1][:-1], Y[2]])
    with pytest.raises(ValueError, match=r"est_latents\[0\] has shape \(300, 2\)"):
        metrics.evaluate(A, Y, A, [y[:, :2] for y in Y])
    assert metrics.evaluate(A, Y, A, Y)["shd"] == 0
