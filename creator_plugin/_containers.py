"""scikit-learn's feature-name and output-container conventions for CREATOR.

Input names are checked the way scikit-learn checks them (its public
``validate_data``); outputs follow ``set_output`` (or the global
``sklearn.set_config(transform_output=...)``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import get_config
from sklearn.utils.validation import validate_data

from ._validation import column_keys, column_names, name_difference, names_equal

__all__ = ["check_input_names", "check_latent_names", "fitted_columns", "latent_names",
           "wrap_observations", "wrap_latent_list"]

_REORDER_HINT = "Select the fitted columns in their fitted order: X[model.feature_names_in_]."


def latent_names(n_latent: int) -> np.ndarray:
    """``L1..Ld``: the latent names of every output (the adapters' node names too)."""
    return np.asarray([f"L{i + 1}" for i in range(n_latent)], dtype=object)


def fitted_columns(estimator) -> list | None:
    """The training columns' names, whatever their type (None for a model fitted on arrays).

    ``column_names_in_`` when the model has it; a model saved before it
    existed has ``feature_names_in_`` (strings) or nothing.
    """
    keys = getattr(estimator, "column_names_in_", None)
    if keys is not None:
        return list(keys)
    names = getattr(estimator, "feature_names_in_", None)
    return None if names is None else list(names)


def check_input_names(estimator, X) -> None:
    """Check ``X``'s column names against the training columns'.

    A DataFrame's names must be the training names in the training order,
    whatever their type: another order, a missing or an unexpected column is
    a ``ValueError`` naming them (for string names scikit-learn's, with a
    hint how to reorder). An array for a model fitted on a DataFrame, or a
    DataFrame with string names for a model fitted on arrays, gives
    scikit-learn's ``UserWarning`` and is taken by position.
    """
    fitted = fitted_columns(estimator)
    given = column_keys(X, "X")
    if fitted is not None and given is not None:
        if names_equal(fitted, given):
            return
        if all(isinstance(c, str) for c in fitted + given):
            _sklearn_check(estimator, X)
        missing, extra = name_difference(fitted, given)
        if not missing and not extra:
            raise ValueError(
                f"X has the fitted columns in another order: {given}; the model was fitted on "
                f"{fitted} in this order. Select them in their fitted order: "
                "X[model.column_names_in_].")
        parts = ([f"columns the model was not fitted on: {extra}"] if extra else []) + (
            [f"not the fitted columns {missing}"] if missing else [])
        raise ValueError(f"X has {' and '.join(parts)}. The model was fitted on {fitted}; "
                         "drop the others (e.g. the environment column) or select "
                         "X[model.column_names_in_].")
    if fitted is None and given is not None and not all(isinstance(c, str) for c in given):
        return  # scikit-learn: a frame without string names is unnamed
    if fitted is not None and not all(isinstance(c, str) for c in fitted):
        if given is None:
            warnings.warn("X does not have valid feature names, but CREATOR was fitted with "
                          "column names; its columns are taken by position.", UserWarning,
                          stacklevel=3)
        return
    _sklearn_check(estimator, X)


def _sklearn_check(estimator, X) -> None:
    """scikit-learn's own check of string names (its messages and warnings).

    Input of the wrong shape is left to the caller's check, which names it.
    """
    try:
        if np.shape(X)[1:] != (estimator.n_features_in_,):
            return
    except (TypeError, ValueError, IndexError):
        return
    try:
        validate_data(estimator, X, reset=False, skip_check_array=True)
    except ValueError as exc:
        if "feature names" in str(exc):
            raise ValueError(f"{str(exc).rstrip()}\n{_REORDER_HINT}") from None
        raise


def check_latent_names(estimator, L) -> None:
    """Latent input (``inverse_transform``) with string column names must use ``L1..Ld``.

    Like scikit-learn's check of feature names: the names must match in
    order; unnamed input (an array, a frame with integer columns) is taken
    positionally.
    """
    names = column_names(L, "L")
    expected = latent_names(estimator.n_latent_)
    if names is not None and (len(names) != len(expected) or np.any(names != expected)):
        raise ValueError(
            f"L has columns {names.tolist()}; the latents are {expected.tolist()} in this "
            "order (the output of transform)."
        )


#: The containers ``set_output(transform=...)`` accepts.
OUTPUTS = ("default", "pandas", "polars")


def _dense_output(estimator) -> str:
    """The container asked for: the estimator's ``set_output``, else the global config."""
    config = getattr(estimator, "_sklearn_output_config", {})
    dense = config["transform"] if "transform" in config else get_config()["transform_output"]
    if dense not in OUTPUTS:
        raise ValueError(f"output config must be in {sorted(OUTPUTS)}, got {dense}")
    return dense


def _container(dense: str, values: np.ndarray, original, columns):
    """``values`` as a pandas DataFrame (with ``original``'s index, when it has one) or a
    polars DataFrame, with ``columns`` (as scikit-learn's ``set_output`` makes them)."""
    if dense == "pandas":
        import pandas as pd

        index = original.index if isinstance(original, (pd.DataFrame, pd.Series)) else None
        frame = pd.DataFrame(values, index=index, copy=False)
        frame.columns = columns
        return frame
    import polars as pl

    names = columns.tolist() if isinstance(columns, np.ndarray) else list(columns)
    return pl.DataFrame(values, schema=names, orient="row")


def wrap_observations(estimator, values: np.ndarray, original_input):
    """``inverse_transform``'s output: an array, or the configured container.

    With ``set_output(transform="pandas")`` (or "polars", or the global
    config) the result is a DataFrame whose columns are ``feature_names_in_``
    when the model was fitted on a DataFrame, ``x0..x{p-1}`` otherwise
    (scikit-learn's default input names), and whose index is ``L``'s.
    """
    dense = _dense_output(estimator)
    if dense == "default":
        return values
    names = getattr(estimator, "feature_names_in_", None)
    keys = fitted_columns(estimator)
    if dense == "pandas" and keys is not None:
        import pandas as pd

        names = pd.Index(keys)  # tuples make a MultiIndex, as they came
    elif names is None:
        names = np.asarray([f"x{i}" for i in range(values.shape[1])], dtype=object)
    return _container(dense, values, original_input, names)


def wrap_latent_list(estimator, latents: list[np.ndarray], X_list) -> list:
    """``fit_transform``'s list output: every environment in the configured container."""
    dense = _dense_output(estimator)
    if dense == "default":
        return latents
    names = estimator.get_feature_names_out()
    return [_container(dense, L, x, names) for L, x in zip(latents, X_list)]
