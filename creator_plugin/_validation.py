"""Input validation shared by the estimator, the CLI and the adapters.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the
argument and what was wrong, so users never see a numpy traceback from deep
inside the algorithm.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import (
    InvalidParameterError,
    validate_parameter_constraints,
)

from ._passes import is_dask

__all__ = [
    "Interval",
    "check_environments",
    "check_labels",
    "check_n_latent",
    "check_options",
    "column_names",
    "environment_labels",
    "feature_names",
    "min_samples_per_environment",
]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, but a boolean never satisfies it.

    ``True`` is an ``Integral`` to Python; as a count, an iteration limit or
    a level it is a mistake, so it is rejected like any other wrong type.
    """

    def is_satisfied_by(self, val) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


def min_samples_per_environment(n_latent: int) -> int:
    """Smallest number of rows an environment may have for ``n_latent`` latents.

    ICA on ``d`` sources and the per-environment regressions of the pruning
    step are meaningless with fewer than a handful of rows per dimension.
    """
    return max(10, 5 * n_latent)


def _as_float_matrix(a, name: str):
    """A 2-D float64 array, read-only: ``a`` itself (as a view) when it already is one.

    The fit reads its inputs in blocks and never writes to them, so float64
    input is not copied; the read-only flag makes any accidental write an
    error instead of a change to the caller's data. Other dtypes and pandas
    objects are converted (a copy). Dask arrays stay lazy (see
    :func:`_as_float_dask`).
    """
    if isinstance(a, (str, bytes)) or a is None:
        raise TypeError(f"{name} must be a 2-D numeric array, got {type(a).__name__}.")
    if is_dask(a):
        return _as_float_dask(a, name)
    if hasattr(a, "dtypes") and hasattr(a, "columns"):
        a = _frame_values(a, name)
    elif hasattr(a, "to_numpy"):
        a = a.to_numpy()
    try:
        arr = np.asarray(a)
    except ValueError:
        raise ValueError(f"{name} is ragged: {_row_lengths(a)}.") from None
    if arr.dtype.kind in "USa" or (arr.dtype == object and any(
            isinstance(v, (str, bytes)) for v in arr.ravel())):
        # Text is refused even when it looks like numbers, as it is in a DataFrame.
        raise TypeError(f"{name} must contain only numbers; got text (dtype {arr.dtype}).")
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must contain only numbers; got dtype {arr.dtype}."
            ) from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued; got complex dtype {arr.dtype}.")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}.")
    arr = np.asarray(arr, dtype=float).view()
    arr.flags.writeable = False
    # min and max propagate NaN and show inf without an n x p temporary.
    if arr.size and not (np.isfinite(arr.min()) and np.isfinite(arr.max())):
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(
            f"{name} contains non-finite values ({n_nan} NaN, {n_inf} inf); "
            "remove or impute them first."
        )
    return arr


def _as_float_dask(a, name: str):
    """Check a dask array's shape and dtype; it stays lazy.

    NaN and inf are found by the fit's first pass over the data.
    """
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {a.shape}.")
    if any(np.isnan(c) for c in a.shape):
        raise ValueError(
            f"{name} is a dask array with unknown chunk sizes; call its "
            "compute_chunk_sizes() first."
        )
    if np.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real-valued; got complex dtype {a.dtype}.")
    if not (np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.bool_)):
        raise TypeError(f"{name} must contain only numbers; got dtype {a.dtype}.")
    return a if a.dtype == np.float64 else a.astype(np.float64)


def _rows_by_label(data: np.ndarray, labels: np.ndarray, uniq: np.ndarray) -> list[np.ndarray]:
    """The rows of every label: a view when they are contiguous (sorted labels), else a copy."""
    out = []
    for u in uniq:
        idx = np.flatnonzero(labels == u)
        contiguous = idx[-1] - idx[0] + 1 == idx.size
        out.append(data[idx[0] : idx[-1] + 1] if contiguous else data[idx])
    return out


def _frame_values(df, name: str) -> np.ndarray:
    """A DataFrame's values as floats (missing as NaN), naming any non-numeric column."""
    from pandas.api.types import is_numeric_dtype

    bad = [c for c, dt in df.dtypes.items() if not is_numeric_dtype(dt)]
    if bad:
        raise TypeError(
            f"{name} has non-numeric columns {bad}: every column must be a measurement. If "
            "one of them holds the environment labels, drop it from the data and pass it as "
            "environments= (e.g. fit(df.drop(columns='lab'), environments=df['lab']))."
        )
    return df.to_numpy(dtype=float, na_value=np.nan)


def _row_lengths(a) -> str:
    try:
        lengths = sorted({len(row) for row in a})
    except TypeError:
        return "its rows are not all sequences of the same length"
    return f"its rows have different lengths ({', '.join(map(str, lengths))})"


def column_names(x, name: str) -> np.ndarray | None:
    """Column names of a DataFrame-like ``x`` as scikit-learn reads them.

    Returns an object array of the names when they are all strings, None
    for arrays and for frames whose names are not strings (e.g. ``0..p-1``).

    Raises
    ------
    TypeError
        Names mix strings with other types (scikit-learn refuses these too).
    ValueError
        A name occurs twice (columns could not be matched by name).
    """
    cols = getattr(x, "columns", None)
    if cols is None or len(cols) == 0:
        return None
    is_str = [isinstance(c, str) for c in cols]
    if not any(is_str):
        return None
    if not all(is_str):
        others = sorted({type(c).__name__ for c in cols if not isinstance(c, str)})
        raise TypeError(
            f"{name} has column names that mix strings with {others}; use strings only "
            "(e.g. df.columns = df.columns.astype(str))."
        )
    names = np.asarray(list(cols), dtype=object)
    uniq, counts = np.unique(names, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"{name} has duplicated column names {uniq[counts > 1].tolist()}.")
    return names


def _column_keys(x, name: str) -> list | None:
    """The column labels of a DataFrame (any hashable type), None for an array."""
    cols = getattr(x, "columns", None)
    if cols is None or not hasattr(x, "dtypes"):
        return None
    keys = list(cols)
    try:
        unique = len(set(keys)) == len(keys) and not any(
            isinstance(k, float) and k != k for k in keys)
    except TypeError:
        raise TypeError(f"{name} has unhashable column names.") from None
    if not unique:
        dup = sorted({repr(k) for k in keys if keys.count(k) > 1 or k != k})
        raise ValueError(f"{name} has duplicated or NaN column names {dup}; columns are "
                         "matched by name across environments, so names must be unique.")
    return keys


def _align_by_name(X: Sequence, name: str) -> list:
    """Environments with column names, reordered to the first one's order.

    DataFrames that list the same columns in another order are reordered by
    name, whatever the type of the names (strings, integers as in
    ``pd.DataFrame(array)``, floats, tuples of a MultiIndex); a different
    set of columns, or frames mixed with unnamed arrays, is an error naming
    the columns.
    """
    for k, x in enumerate(X):
        column_names(x, f"{name}[{k}]")  # mixed-type or duplicated string names
    keys = [_column_keys(x, f"{name}[{k}]") for k, x in enumerate(X)]
    if all(n is None for n in keys):
        return list(X)
    if any(n is None for n in keys):
        named = next(k for k, n in enumerate(keys) if n is not None)
        unnamed = next(k for k, n in enumerate(keys) if n is None)
        raise ValueError(
            f"{name}[{named}] has column names but {name}[{unnamed}] does not; pass every "
            "environment as a DataFrame with the same columns, or every one as an array."
        )
    ref = keys[0]
    for k, n in enumerate(keys):
        if set(n) != set(ref):
            missing = sorted(set(ref) - set(n), key=repr)
            extra = sorted(set(n) - set(ref), key=repr)
            raise ValueError(
                f"{name}[{k}] has other columns than {name}[0]: missing {missing}, "
                f"unexpected {extra}. Every environment must measure the same columns."
            )
    return [x if n == ref else x[ref] for x, n in zip(X, keys)]


def feature_names(X) -> np.ndarray | None:
    """The feature names of validated input (see :func:`column_names`).

    ``X`` is what :func:`check_environments` accepted: one frame, or a list
    whose environments all carry the same names (the first one's order).
    """
    if hasattr(X, "columns"):
        return column_names(X, "X")
    if isinstance(X, Sequence) and len(X):
        return column_names(X[0], "X_list[0]")
    return None


def _label_kind(v) -> str:
    if isinstance(v, str):
        return "str"
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, numbers.Number):
        return "number"
    return type(v).__name__


def check_labels(environments, n_rows: int | None = None) -> np.ndarray:
    """Validate a vector of environment labels.

    Parameters
    ----------
    environments : array-like (n,)
        One label per row: strings, numbers or booleans, all of one type.
    n_rows : int, optional
        The number of rows of the data.

    Returns
    -------
    ndarray (n,)
        The labels (strings as ``str`` dtype, numbers as a numeric dtype).

    Raises
    ------
    ValueError
        Wrong shape, a ragged nested list, a missing label (None, NaN,
        ``pd.NA``, a missing category) or an infinite one.
    TypeError
        Labels of mixed types (e.g. strings and integers) or of a type that
        is neither a string nor a number.
    """
    import pandas as pd

    if isinstance(environments, (str, bytes)):
        raise TypeError("environments must be a vector of labels, not a single string.")
    try:
        if hasattr(environments, "to_numpy"):
            labels = environments.to_numpy(dtype=object)
        else:
            labels = np.asarray(environments, dtype=object)
    except ValueError:
        raise ValueError(
            "environments is a ragged nested list; it must be a flat vector with one label "
            "per row."
        ) from None
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or (n_rows is not None and labels.shape[0] != n_rows):
        raise ValueError(
            f"environments must be a vector with one label per row of X "
            f"({n_rows} rows); got shape {labels.shape}."
        )
    if any(isinstance(v, (list, tuple, np.ndarray)) for v in labels):
        raise ValueError(
            "environments is a ragged nested list; it must be a flat vector with one label "
            "per row."
        )
    missing = np.asarray(pd.isna(labels), dtype=bool)
    if missing.any():
        raise ValueError(
            f"environments has {int(missing.sum())} missing labels (None, NaN or NA) among "
            f"{labels.shape[0]}; every row needs an environment label: drop those rows or "
            "label them."
        )
    kinds = {}
    for v in labels:
        kinds.setdefault(_label_kind(v), v)
    if len(kinds) > 1:
        examples = ", ".join(f"{k} {v!r}" for k, v in kinds.items())
        raise TypeError(
            f"environments mixes label types ({examples}); use one type for every label, "
            "e.g. all strings."
        )
    kind = next(iter(kinds), "str")
    if kind == "str":
        return labels.astype(str)
    if kind not in ("number", "bool"):
        raise TypeError(
            f"environments labels must be strings or numbers; got {kind} (convert them, "
            "e.g. with .astype(str))."
        )
    values = np.asarray(labels.tolist())
    if np.iscomplexobj(values) or (values.dtype.kind == "f" and not np.all(np.isfinite(values))):
        raise ValueError("environments contains complex or infinite labels.")
    return values


def environment_labels(environments, n_environments: int) -> list:
    """``environment_labels_`` of a fit: sorted distinct labels, or ``0..K-1``."""
    if environments is None:
        return list(range(n_environments))
    return np.unique(check_labels(environments)).tolist()


def check_n_latent(n_latent, n_features: int | None = None) -> int:
    """Validate ``n_latent`` (an integer ``1 <= n_latent <= n_features``)."""
    if isinstance(n_latent, bool) or not isinstance(n_latent, numbers.Integral):
        raise TypeError(f"n_latent must be an integer, got {n_latent!r}.")
    n_latent = int(n_latent)
    if n_latent < 1:
        raise ValueError(f"n_latent must be >= 1, got {n_latent}.")
    if n_features is not None and n_latent > n_features:
        raise ValueError(
            f"n_latent={n_latent} exceeds the number of observed features p={n_features}; "
            "CREATOR needs p >= n_latent (the mixing H must have full column rank)."
        )
    return n_latent


class ValidatedEnvironments(list):
    """The list :func:`check_environments` returns: read again, it is not scanned again.

    Every fit validates its input once; the functions it calls with the
    validated list (``select_n_latent``, the ``n_latent`` check after an
    automatic choice) recognise it and only check what is new to them.
    """


def check_environments(
    X,
    environments=None,
    *,
    n_latent: int | None = None,
    name: str = "X_list",
) -> list[np.ndarray]:
    """Turn user input into a list of K validated float arrays ``(n_k, p)``.

    Parameters
    ----------
    X : list of array-like or array-like
        Either a list of K arrays ``(n_k, p)`` (NumPy, pandas or dask) or,
        when ``environments`` is given, one array ``(n, p)``.
    environments : array-like of shape (n,), optional
        Environment label of every row of ``X``.
    n_latent : int, optional
        If given, also check ``n_latent <= p`` and that every environment has
        enough rows.
    name : str
        Argument name used in error messages.

    Returns
    -------
    list of ndarray or dask array
        Read-only float64 arrays: views of float64 input (no copy),
        converted copies otherwise; the caller's arrays are never modified.
        Dask arrays stay lazy. When the environments are DataFrames, columns
        are matched by name (to the first environment's order).
    """
    if environments is None and isinstance(X, ValidatedEnvironments):
        if n_latent is not None:
            _check_sizes(X, n_latent, name + "[{}]", list(range(len(X))))
        return X
    if environments is not None:
        if is_dask(X):
            raise TypeError(
                "X: with dask arrays pass a list of K arrays, one per environment, and no "
                "environments labels."
            )
        column_names(X, "X")
        data = _as_float_matrix(X, "X")
        labels = check_labels(environments, data.shape[0])
        uniq = np.unique(labels)
        X_list = _rows_by_label(data, labels, uniq)
        env_name = "environment with label {}"
        env_ids = list(uniq)
    else:
        if isinstance(X, np.ndarray) or hasattr(X, "to_numpy"):
            raise TypeError(
                f"{name} must be a list of K arrays (one per environment); got a single "
                "array. Pass a list, or pass environments=labels."
            )
        if not isinstance(X, Sequence) or isinstance(X, (str, bytes)):
            raise TypeError(f"{name} must be a list of K 2-D arrays, got {type(X).__name__}.")
        aligned = _align_by_name(X, name)
        X_list = [_as_float_matrix(x, f"{name}[{k}]") for k, x in enumerate(aligned)]
        env_name = name + "[{}]"
        env_ids = list(range(len(X_list)))

    if len(X_list) < 2:
        raise ValueError(
            f"CREATOR needs at least 2 environments; got {len(X_list)}. "
            "The method identifies the graph from how weights change across environments."
        )
    p_set = {x.shape[1] for x in X_list}
    if len(p_set) != 1:
        shapes = ", ".join(f"{env_name.format(e)}: p={x.shape[1]}" for e, x in zip(env_ids, X_list))
        raise ValueError(f"All environments must have the same number of columns; got {shapes}.")
    p = X_list[0].shape[1]
    if p < 1:
        raise ValueError(f"{name} has no columns.")
    if n_latent is not None:
        _check_sizes(X_list, n_latent, env_name, env_ids)
    return ValidatedEnvironments(X_list)


def _check_sizes(X_list: list, n_latent: int, env_name: str, env_ids: list) -> None:
    """``n_latent <= p`` and enough rows in every environment."""
    check_n_latent(n_latent, X_list[0].shape[1])
    need = min_samples_per_environment(n_latent)
    for e, x in zip(env_ids, X_list):
        if x.shape[0] < need:
            raise ValueError(
                f"{env_name.format(e)} has {x.shape[0]} rows; at least {need} are needed "
                f"for n_latent={n_latent} (ICA and the per-environment regressions)."
            )


def check_options(name: str, options, constraints: dict[str, list], owner: str) -> dict:
    """Validate a dict of options against scikit-learn parameter constraints.

    Parameters
    ----------
    name : str
        The parameter holding the options (e.g. ``"scorer_options"``).
    options : dict or None
    constraints : dict
        Allowed keys and their constraints
        (``sklearn.utils._param_validation`` style).
    owner : str
        Who takes the options, for the messages (e.g. ``"CREATOR"``).

    Returns
    -------
    dict
        The options (empty for None).

    Raises
    ------
    InvalidParameterError
        (a ``ValueError`` and ``TypeError``) on an unknown key or a bad value,
        naming the parameter and the key.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a dict or None. Got {options!r} instead."
        )
    unknown = sorted(map(str, set(options) - set(constraints)))
    if unknown:
        allowed = ", ".join(sorted(constraints)) or "none"
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} has unknown keys {unknown}; allowed keys: "
            f"{allowed}."
        )
    validate_parameter_constraints(constraints, dict(options), caller_name=f"{owner} {name}")
    return dict(options)
