"""Input validation shared by the estimator, the CLI and the adapters.

Every check raises a ``ValueError`` or ``TypeError`` whose message names the
argument and what was wrong, so users never see a numpy traceback from deep
inside the algorithm.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence

import numpy as np

from ._params import Interval, InvalidParameterError, validate_parameters
from ._passes import is_dask

__all__ = [
    "MEMORY_FALLBACK_BYTES",
    "Interval",
    "check_environments",
    "check_labels",
    "check_memory",
    "check_n_latent",
    "check_options",
    "column_keys",
    "column_names",
    "environment_labels",
    "feature_names",
    "input_columns",
    "min_samples_per_environment",
    "name_difference",
    "names_equal",
    "physical_memory_bytes",
    "split_environment_column",
]


def min_samples_per_environment(n_latent: int) -> int:
    """Smallest number of rows an environment may have for ``n_latent`` latents.

    ICA on ``d`` sources and the per-environment regressions of the pruning
    step are meaningless with fewer than a handful of rows per dimension.
    """
    return max(10, 5 * n_latent)


def as_float_matrix(a, name: str):
    """A 2-D float64 array, read-only: ``a`` itself (as a view) when it already is one.

    The fit reads its inputs in blocks and never writes to them, so float64
    input is not copied; the read-only flag makes any accidental write an
    error instead of a change to the caller's data. Other dtypes and pandas
    objects are converted (a copy). Dask arrays stay lazy (see
    :func:`_as_float_dask`). Booleans, dates and durations, text, sparse
    matrices and masked entries are refused: none of them is a measurement
    read as it is.
    """
    if isinstance(a, (str, bytes)) or a is None:
        raise TypeError(f"{name} must be a 2-D numeric array, got {type(a).__name__}.")
    if is_dask(a):
        return _as_float_dask(a, name)
    _refuse_sparse_or_masked(a, name)
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
    _refuse_non_numbers(arr, name)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must contain only numbers; got dtype {arr.dtype}"
                f"{_object_kinds(arr)}."
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


def _refuse_sparse_or_masked(a, name: str) -> None:
    """Sparse matrices and masked arrays: numpy would read them wrongly without a word."""
    import scipy.sparse

    if scipy.sparse.issparse(a):
        raise TypeError(
            f"{name} is a sparse {type(a).__name__} ({a.dtype}); CREATOR needs dense data: "
            f"pass {name}.toarray()."
        )
    if isinstance(a, np.ma.MaskedArray):
        masked = int(np.ma.getmaskarray(a).sum())
        if masked:
            raise ValueError(
                f"{name} is a masked array with {masked} masked entries, which numpy would "
                "read as numbers; fill them (np.ma.filled) or drop those rows first."
            )


_NOT_NUMBERS = {
    "b": "booleans (True/False)",
    "M": "dates (datetime64)",
    "m": "durations (timedelta64)",
}


def _refuse_non_numbers(arr: np.ndarray, name: str) -> None:
    """Booleans, dates and durations convert to floats, but they are not measurements."""
    kind = arr.dtype.kind
    if kind == "O" and arr.size:
        sample = arr.ravel()
        if any(isinstance(v, (bool, np.bool_)) for v in sample):
            kind = "b"
        elif any(isinstance(v, (np.datetime64, np.timedelta64)) for v in sample):
            kind = "M"
    if kind in _NOT_NUMBERS:
        raise TypeError(
            f"{name} holds {_NOT_NUMBERS[kind]} (dtype {arr.dtype}), not measurements; "
            "convert them to numbers yourself if they are meant as such (e.g. "
            "x.astype(float)), or drop them."
        )


def _object_kinds(arr: np.ndarray) -> str:
    """`` holding <types>`` for an object array: what kept it from being numbers."""
    if arr.dtype != object:
        return ""
    kinds = sorted({type(v).__name__ for v in arr.ravel()[:1000]
                    if not isinstance(v, numbers.Real)})
    return f" holding {', '.join(kinds)}" if kinds else ""


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
    if a.dtype.kind in _NOT_NUMBERS:
        raise TypeError(f"{name} holds {_NOT_NUMBERS[a.dtype.kind]} (dtype {a.dtype}), not "
                        "measurements; convert them to numbers yourself if they are meant as "
                        "such.")
    if not np.issubdtype(a.dtype, np.number):
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
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    flags = [c for c, dt in df.dtypes.items() if is_bool_dtype(dt)]
    if flags:
        raise TypeError(
            f"{name} has boolean columns {flags} (True/False), not measurements; convert them "
            "to numbers yourself if they are meant as such "
            "(e.g. df.astype({column: float})), or drop them."
        )
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


def _is_frame(x) -> bool:
    return hasattr(x, "columns") and hasattr(x, "dtypes")


_NAME_TYPES = "strings, integers, floats (not NaN), booleans or tuples of these (a MultiIndex)"


def _plain_name(v):
    """A column name as a plain Python value, or raise naming what is wrong with it.

    str, bool, int and float (numpy scalars included) become the Python type;
    a tuple (a MultiIndex entry) a tuple of those. NaN is refused (it is not
    equal to itself, so it cannot be matched), and so is any other type.
    """
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, (float, np.floating)):
        if v != v:
            raise ValueError("NaN")
        return float(v)
    if isinstance(v, tuple):
        return tuple(_plain_name(e) for e in v)
    raise TypeError(type(v).__name__)


def _typed(v):
    """A key equal only for names of the same type and value: 1, 1.0 and True differ."""
    if isinstance(v, tuple):
        return ("tuple", tuple(_typed(e) for e in v))
    return (type(v).__name__, v)


def names_equal(a, b) -> bool:
    """Whether two lists of plain names (:func:`column_keys`) are the same, in order."""
    return len(a) == len(b) and all(_typed(x) == _typed(y) for x, y in zip(a, b))


def column_keys(x, name: str) -> list | None:
    """The column names of a DataFrame as plain Python values; None for an array.

    Supported names are strings, integers, floats (not NaN), booleans, numpy
    scalars of these and tuples of them (a MultiIndex). Names are compared
    by type and value, so ``1``, ``1.0`` and ``True`` are three names.

    Raises
    ------
    TypeError
        A name of another type, or strings mixed with other types (as
        scikit-learn refuses them).
    ValueError
        A NaN name, or a name that occurs twice.
    """
    if not _is_frame(x):
        return None
    raw = list(x.columns)
    keys = []
    for pos, v in enumerate(raw):
        try:
            keys.append(_plain_name(v))
        except ValueError:
            raise ValueError(
                f"{name} has a NaN column name (column {pos}, {v!r}); columns are matched by "
                f"name, so every name must be one of {_NAME_TYPES}: rename it."
            ) from None
        except TypeError as exc:
            raise TypeError(
                f"{name} has a column name of type {exc.args[0]} (column {pos}, {v!r}); "
                f"supported names are {_NAME_TYPES}: rename it, e.g. "
                "df.columns = [str(c) for c in df.columns]."
            ) from None
    is_str = [isinstance(k, str) for k in keys]
    if any(is_str) and not all(is_str):
        others = sorted({type(k).__name__ for k in keys if not isinstance(k, str)})
        raise TypeError(
            f"{name} has column names that mix strings with {others}; use strings only "
            "(e.g. df.columns = df.columns.astype(str))."
        )
    seen: dict = {}
    dup = []
    for k in keys:
        t = _typed(k)
        if t in seen and k not in dup:
            dup.append(k)
        seen[t] = True
    if dup:
        raise ValueError(f"{name} has duplicated column names {dup}; columns are matched by "
                         "name across environments, so names must be unique.")
    return keys


def column_names(x, name: str) -> np.ndarray | None:
    """Column names of a DataFrame-like ``x`` as scikit-learn reads them.

    Returns an object array of the names when they are all strings, None
    for arrays and for frames whose names are not strings (e.g. ``0..p-1``;
    :func:`column_keys` keeps those).

    Raises
    ------
    TypeError, ValueError
        As :func:`column_keys`: unsupported, mixed, NaN or duplicated names.
    """
    keys = column_keys(x, name)
    if not keys or not all(isinstance(k, str) for k in keys):
        return None
    return np.asarray(keys, dtype=object)


def _align_by_name(X: Sequence, name: str) -> list:
    """Environments with column names, reordered to the first one's order.

    DataFrames that list the same columns in another order are reordered by
    name, whatever the type of the names (strings, integers as in
    ``pd.DataFrame(array)``, floats, tuples of a MultiIndex); a different
    set of columns, or frames mixed with unnamed arrays, is an error naming
    the columns.
    """
    keys = [column_keys(x, f"{name}[{k}]") for k, x in enumerate(X)]
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
    out = []
    for k, (x, n) in enumerate(zip(X, keys)):
        if names_equal(n, ref):
            out.append(x)
            continue
        missing, extra = name_difference(ref, n)
        if missing or extra:
            raise ValueError(
                f"{name}[{k}] has other columns than {name}[0]: missing {missing}, "
                f"unexpected {extra}. Every environment must measure the same columns."
            )
        pos = {_typed(c): i for i, c in enumerate(n)}
        order = [pos[_typed(c)] for c in ref]
        out.append(x.iloc[:, order] if hasattr(x, "iloc") else x[[n[i] for i in order]])
    return out


def name_difference(fitted: list, given: list) -> tuple[list, list]:
    """Names of ``fitted`` missing from ``given``, and names of ``given`` not in ``fitted``."""
    a, b = {_typed(c) for c in fitted}, {_typed(c) for c in given}
    return [c for c in fitted if _typed(c) not in b], [c for c in given if _typed(c) not in a]


def input_columns(X) -> list | None:
    """The column names of validated input (see :func:`column_keys`), any supported type.

    ``X`` is what :func:`check_environments` accepted: one frame, or a list
    whose environments all carry the same names (the first one's order).
    """
    if _is_frame(X):
        return column_keys(X, "X")
    if isinstance(X, Sequence) and len(X):
        return column_keys(X[0], "X_list[0]")
    return None


def feature_names(X) -> np.ndarray | None:
    """``feature_names_in_`` of validated input: the names when all are strings, else None."""
    keys = input_columns(X)
    if not keys or not all(isinstance(k, str) for k in keys):
        return None
    return np.asarray(keys, dtype=object)


def split_environment_column(X, environments):
    """``(X without the column, its labels)`` when ``environments`` names a column of ``X``.

    A DataFrame ``X`` may carry its environment labels as a column:
    ``fit(df, environments="lab")`` fits the other columns with the labels
    of ``df["lab"]``. Anything else is returned as it is.

    Raises
    ------
    ValueError
        ``environments`` is a string, ``X`` is a DataFrame and has no such
        column.
    """
    if not _is_frame(X) or not _is_name(environments):
        return X, environments
    keys = column_keys(X, "X")
    target = _plain_name(environments)
    matches = [i for i, k in enumerate(keys) if _typed(k) == _typed(target)]
    if not matches:
        if isinstance(environments, str):
            raise ValueError(
                f"environments={environments!r} is not a column of X (columns: {keys}); pass "
                "the name of the column holding the labels, or one label per row."
            )
        return X, environments
    keep = [i for i in range(len(keys)) if i != matches[0]]
    return X.iloc[:, keep], X.iloc[:, matches[0]]


def _is_name(v) -> bool:
    """A scalar that can name a column (not a vector of labels)."""
    if isinstance(v, (str, bool, np.bool_, numbers.Integral, float, np.floating, tuple)):
        try:
            _plain_name(v)
        except (TypeError, ValueError):
            return False
        return True
    return False


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
        raise TypeError("environments must be a vector of labels, not a single string (the "
                        "name of a column is accepted by CREATOR.fit when X is a DataFrame).")
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


def reference_position(reference, labels: list) -> int:
    """The position in ``labels`` (``environment_labels_``) of the reference environment.

    None is the first; a string matches a string label, a number (not a bool) a
    numeric one. Anything else is a ``ValueError`` naming ``reference`` and the labels.
    """
    if reference is None:
        return 0
    for k, lab in enumerate(labels):
        same_kind = (isinstance(lab, str) and isinstance(reference, str)) or (
            isinstance(lab, numbers.Real) and not isinstance(lab, bool)
            and isinstance(reference, numbers.Real) and not isinstance(reference, bool))
        if same_kind and lab == reference:
            return k
    shown = labels if len(labels) <= 10 else labels[:10] + ["..."]
    raise ValueError(f"reference={reference!r} is not one of the environment labels {shown} "
                     "(environment_labels_).")


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
        column_keys(X, "X")
        data = as_float_matrix(X, "X")
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
        X_list = [as_float_matrix(x, f"{name}[{k}]") for k, x in enumerate(aligned)]
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
    """Validate a dict of options against parameter constraints (:mod:`._params`).

    Parameters
    ----------
    name : str
        The parameter holding the options (e.g. ``"scorer_options"``).
    options : dict or None
    constraints : dict
        Allowed keys and their constraints
        (:mod:`creator_plugin._params` style).
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
    validate_parameters(constraints, dict(options), caller_name=f"{owner} {name}")
    return dict(options)


#: The memory assumed where the physical memory cannot be read (``os.sysconf`` is
#: POSIX): 16 GiB. Allocations estimated above it are refused there.
MEMORY_FALLBACK_BYTES = 16 << 30


def physical_memory_bytes() -> int:
    """The machine's physical memory in bytes (:data:`MEMORY_FALLBACK_BYTES` if unknown)."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return MEMORY_FALLBACK_BYTES
    return pages * size if pages > 0 and size > 0 else MEMORY_FALLBACK_BYTES


def _size(nbytes: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


def check_memory(call: str, estimate, sizes: Mapping[str, int],
                 minimums: Mapping[str, int], shown: Mapping[str, str] | None = None) -> None:
    """Refuse, before allocating, what would need more than the physical memory.

    Parameters
    ----------
    call : str
        The function, as messages name it (e.g. ``"simulate"``).
    estimate : callable
        ``estimate(**sizes)``: the bytes the call would allocate.
    sizes : mapping
        The size arguments of the call (ints).
    minimums : mapping
        For the arguments a message may tell to lower, their smallest value:
        the message names the one whose minimum saves the most memory.
    shown : mapping, optional
        How the message shows an argument, where not as its value in ``sizes``.

    Raises
    ------
    ValueError
        The estimate exceeds :func:`physical_memory_bytes`, naming the
        argument to lower.
    """
    nbytes = int(estimate(**sizes))
    limit = physical_memory_bytes()
    if nbytes <= limit:
        return
    culprit = max(minimums, key=lambda k: nbytes - int(estimate(**{**sizes, k: minimums[k]})))
    text = {k: f"{k}={v}" for k, v in sizes.items()} | dict(shown or {})
    raise ValueError(
        f"{call} with {', '.join(text.values())} would need about {_size(nbytes)} of memory, "
        f"more than this machine's {_size(limit)} of physical memory; lower {culprit}."
    )
