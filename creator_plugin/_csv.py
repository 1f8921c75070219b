"""CSV files in and out: the one writer of every CSV the package writes, and the reader
of ``creator fit`` and ``bench``.

Writing (:func:`write_csv`): a text cell -- a label, a name, a message --
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
what a spreadsheet evaluates as a formula, so it gets a leading ``'``
(and so does one that already starts with ``'`` followed by such a
character, so the prefix can be told from the text). Numbers are never
changed. Reading (:func:`read_csv`, :func:`read_table`) strips that
prefix again, so ``creator`` reads its own outputs back as they were.

The environment column is read as text, verbatim; a headerless first column
(as pandas writes its index) is not a feature; features must be numeric.
Every mistake is a :class:`UserError` with a one-line message.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

__all__ = ["FORMULA_PREFIXES", "UserError", "neutralise", "read_csv", "restore", "write_csv",
           "written_by_creator"]

#: First characters that make a spreadsheet read a text cell as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_FORMULA = re.compile("'*[=+\\-@\t\r]")
_PREFIXED = re.compile("'+[=+\\-@\t\r]")


def neutralise(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet evaluates: ``'`` before a formula's first character."""
    return "'" + text if _FORMULA.match(text) else text


def restore(text: str) -> str:
    """The text :func:`neutralise` was given (other text is returned unchanged)."""
    return text[1:] if _PREFIXED.match(text) else text


def _map_text(value, fn):
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map_text(v, fn) for v in value)
    return value


def _is_text(dtype) -> bool:
    import pandas as pd

    return (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
            or isinstance(dtype, pd.CategoricalDtype))


def _same_kind(values, dtype):
    """``values`` (objects) in ``dtype`` again when that is a string dtype."""
    import pandas as pd

    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return values.astype(dtype)
    return values


def _map_frame(df, fn):
    """A copy of ``df`` with ``fn`` applied to every text cell, column name and index label."""
    out = df.copy()
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if _is_text(col.dtype):
            mapped = col.astype(object).map(lambda v: _map_text(v, fn))
            out[out.columns[j]] = _same_kind(mapped, col.dtype)
    out.columns = _map_index(out.columns, fn)
    out.index = _map_index(out.index, fn)
    return out


def _map_index(index, fn):
    import pandas as pd

    names = [_map_text(n, fn) for n in index.names]
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([_map_text(v, fn) for v in index], names=names)
    if not _is_text(index.dtype):
        return index.set_names(names)
    mapped = pd.Index([_map_text(v, fn) for v in index], dtype=object, name=names[0],
                      tupleize_cols=False)
    return _same_kind(mapped, index.dtype)


def write_csv(frame, path, *, index: bool = True, float_format: str | None = None) -> Path:
    """Write a DataFrame as CSV with every text cell safe to open in a spreadsheet.

    Parameters
    ----------
    frame : pandas.DataFrame
    path : str or path-like
    index : bool, default=True
        Write the row labels as the first column.
    float_format : str, optional
        As :meth:`pandas.DataFrame.to_csv`.

    Returns
    -------
    Path

    Notes
    -----
    A text cell holding a carriage return makes every text cell quoted
    (``csv.QUOTE_NONNUMERIC``), so that no reader takes it for a line break.
    """
    path = Path(path)
    safe = _map_frame(frame, neutralise)
    # The csv module quotes a cell holding "\n" but not one holding a lone "\r", which
    # readers take for a line break: then every text cell is quoted.
    quoting = csv.QUOTE_NONNUMERIC if _has_carriage_return(safe) else csv.QUOTE_MINIMAL
    safe.to_csv(path, index=index, float_format=float_format, quoting=quoting)
    return path


def _has_carriage_return(df) -> bool:
    labels = [*df.columns.to_flat_index(), *df.index.to_flat_index(), *df.index.names]
    texts = [v for col in range(df.shape[1]) if _is_text(df.iloc[:, col].dtype)
             for v in df.iloc[:, col]]
    return any("\r" in t for v in labels + texts for t in _texts_of(v))


def _texts_of(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return [t for v in value for t in _texts_of(v)]
    return []


def written_by_creator(path) -> bool:
    """Whether ``path`` is a file creator wrote: listed, unchanged, in its directory's marker.

    Only such a file has its text cells' leading ``'`` stripped on reading:
    in any other file a leading ``'`` is part of the text (stripping it there
    could make two labels one).
    """
    import hashlib
    import json

    path = Path(path)
    try:
        marker = json.loads((path.parent / ".creator-output.json").read_text(encoding="utf-8"))
        listed = marker["files"][path.name] if marker.get("tool") == "creator-plugin" else None
        return isinstance(listed, str) and hashlib.sha256(path.read_bytes()).hexdigest() == listed
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return False


def _unchanged(text: str) -> str:
    return text


def read_csv(path, **kwargs):
    """:func:`pandas.read_csv`; in a file creator wrote, text cells as they were given to it.

    The leading ``'`` of :func:`write_csv` is stripped from the text cells of
    a file :func:`written_by_creator`; other files are read verbatim.
    """
    import pandas as pd

    frame = pd.read_csv(path, **kwargs)
    return _map_frame(frame, restore) if written_by_creator(path) else frame


class UserError(Exception):
    """A mistake in the command's input: reported as one line on stderr, exit status 2."""


def read_table(args: argparse.Namespace):
    """The CSV of ``creator fit`` or ``dims``: (features, environment labels, row index)."""
    import pandas as pd

    path = Path(args.data)
    if not path.is_file():
        raise UserError(f"DATA file {path} does not exist or is not a file.")
    unquote = restore if written_by_creator(path) else _unchanged
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
        # NUL bytes mean binary data, unless the encoding itself uses them (UTF-16/32).
        if b"\0" in head and "\0" in head.decode(args.encoding, errors="replace")[:-2]:
            raise UserError(f"{path} is a binary file, not a CSV text file.")
        with open(path, encoding=args.encoding, newline="") as fh:
            header = [unquote(c) for c in next(csv.reader(fh), [])]
        duplicated = sorted({c for c in header if c and header.count(c) > 1})
        if duplicated:
            raise UserError(f"{path} has duplicated column names {duplicated}; every column "
                            "needs its own name.")
        df = read_csv(path, encoding=args.encoding)
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{path} is not {args.encoding} text ({exc.reason} at byte {exc.start}); save it "
            "as UTF-8 or pass --encoding."
        ) from None
    except LookupError:
        raise UserError(f"unknown --encoding {args.encoding!r}.") from None
    except pd.errors.EmptyDataError:
        raise UserError(f"{path} is empty.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{path} is not a readable CSV file: {first}") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}.") from None
    if df.empty:
        raise UserError(f"{path} has a header but no data rows.")
    if args.env_column in df.columns and list(df.columns).count(args.env_column) == 1:
        # Environment labels are text, verbatim: "1", "01" and "1.0" are three labels,
        # "NA" is a lab's name, and only an empty cell is a missing label (the prefix
        # that keeps a label from being a spreadsheet formula is not part of it).
        position = list(df.columns).index(args.env_column)
        labels = pd.read_csv(path, encoding=args.encoding, usecols=[position],
                             dtype=str, keep_default_na=False, na_filter=False)
        df[args.env_column] = labels.iloc[:, 0].map(unquote).replace("", None).to_numpy()
    return _select_columns(df, args, path)


def _select_columns(df, args: argparse.Namespace, path: Path):
    """Split the table into features, environment labels and the row index (or None)."""
    import pandas as pd

    index_col = args.index_col
    reserved = {args.env_column, index_col}
    pandas_index = str(df.columns[0]).startswith("Unnamed: 0")
    if pandas_index:
        reserved.add(df.columns[0])
        index_col = df.columns[0] if index_col is None else index_col
    _check_known(df, [args.env_column], "--env-column", path)
    index = None
    if index_col is not None:
        _check_known(df, [index_col], "--index-col", path)
        if index_col == args.env_column:
            raise UserError("--index-col and --env-column name the same column.")
        index = df[index_col]
    env = df[args.env_column]
    n_missing = int(env.isna().sum())
    if n_missing:
        raise UserError(f"--env-column {args.env_column!r} has {n_missing} empty cells; every "
                        "row needs an environment label.")
    if args.columns is not None:
        _check_known(df, args.columns, "--columns", path)
        clash = sorted(set(args.columns) & reserved, key=str)
        if clash:
            raise UserError(f"--columns lists {clash}, the environment or index column.")
        feats = df[list(dict.fromkeys(args.columns))]
    else:
        drop = list(args.drop_columns or [])
        _check_known(df, drop, "--drop-columns", path)
        feats = df.drop(columns=[c for c in df.columns if c in reserved or c in drop])
    if feats.shape[1] == 0:
        raise UserError(f"no feature columns left in {path}.")
    flags = [c for c in feats.columns if pd.api.types.is_bool_dtype(feats[c])]
    if flags:
        raise UserError(f"feature columns {flags} in {path} hold True/False text, not "
                        "measurements; drop them with --drop-columns or choose features with "
                        "--columns (write them as 0/1 if they are meant as numbers).")
    non_numeric = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if non_numeric:
        raise UserError(f"non-numeric feature columns {non_numeric} in {path}; drop them with "
                        "--drop-columns or choose features with --columns.")
    if pandas_index:
        print(f"note: the first column of {path} has no header (as pandas writes its index); "
              "it is not used as a feature (give it a header to fit it).", file=sys.stderr)
    unnamed = [c for c in feats.columns if str(c).startswith("Unnamed: ")]
    if unnamed:
        print(f"warning: feature columns {unnamed} have no header in {path}.", file=sys.stderr)
    return feats, env, index


def _check_known(df, names, option: str, path: Path) -> None:
    unknown = [c for c in names if c not in df.columns]
    if unknown:
        hint = ""
        if df.shape[1] == 1:
            seps = [name for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars"))
                    if sep in str(df.columns[0])]
            if seps:
                hint = (f" The file has one column whose name holds {seps[0]}: it is not "
                        "comma-separated; save it as a CSV with commas.")
        raise UserError(f"{option} {unknown if len(unknown) > 1 else repr(unknown[0])} is not "
                        f"a column of {path} (columns: {list(df.columns)}).{hint}")
