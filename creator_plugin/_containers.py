"""scikit-learn's feature-name and output-container conventions for CREATOR.

Input names are checked the way scikit-learn checks them (its public
``validate_data``); outputs follow ``set_output`` (or the global
``sklearn.set_config(transform_output=...)``).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._set_output import ADAPTERS_MANAGER, _get_output_config
from sklearn.utils.validation import validate_data

from ._validation import column_names

__all__ = ["check_input_names", "check_latent_names", "latent_names", "wrap_observations",
           "wrap_latent_list"]

_REORDER_HINT = "Select the fitted columns in their fitted order: X[model.feature_names_in_]."


def latent_names(n_latent: int) -> np.ndarray:
    """``L1..Ld``: the latent names of every output (the adapters' node names too)."""
    return np.asarray([f"L{i + 1}" for i in range(n_latent)], dtype=object)


def check_input_names(estimator, X) -> None:
    """scikit-learn's check of ``X``'s column names against ``feature_names_in_``.

    Permuted, missing or unseen names raise scikit-learn's ``ValueError``
    (with a hint how to reorder); an array for a model fitted on a DataFrame
    (or the reverse) gives scikit-learn's ``UserWarning``.
    """
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
    expected = latent_names(estimator.n_latent)
    if names is not None and (len(names) != len(expected) or np.any(names != expected)):
        raise ValueError(
            f"L has columns {names.tolist()}; the latents are {expected.tolist()} in this "
            "order (the output of transform)."
        )


def _dense_output(estimator) -> str:
    return _get_output_config("transform", estimator)["dense"]


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
    if names is None:
        names = np.asarray([f"x{i}" for i in range(values.shape[1])], dtype=object)
    return ADAPTERS_MANAGER.adapters[dense].create_container(
        values, original_input, columns=lambda: names
    )


def wrap_latent_list(estimator, latents: list[np.ndarray], X_list) -> list:
    """``fit_transform``'s list output: every environment in the configured container."""
    dense = _dense_output(estimator)
    if dense == "default":
        return latents
    adapter = ADAPTERS_MANAGER.adapters[dense]
    names = estimator.get_feature_names_out()
    return [adapter.create_container(L, x, columns=lambda: names)
            for L, x in zip(latents, X_list)]
