"""Reading a measurement table from CSV: the column rules of ``creator fit`` and ``bench``.

The environment column is read as text, verbatim; a headerless first column
(as pandas writes its index) is not a feature; features must be numeric.
Every mistake is a :class:`UserError` with a one-line message.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


class UserError(Exception):
    """A mistake in the command's input: reported as one line on stderr, exit status 2."""


def _read_table(args: argparse.Namespace):
    """The CSV of ``creator fit`` or ``dims``: (features, environment labels, row index)."""
    import pandas as pd

    path = Path(args.data)
    if not path.is_file():
        raise UserError(f"DATA file {path} does not exist or is not a file.")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
        # NUL bytes mean binary data, unless the encoding itself uses them (UTF-16/32).
        if b"\0" in head and "\0" in head.decode(args.encoding, errors="replace")[:-2]:
            raise UserError(f"{path} is a binary file, not a CSV text file.")
        with open(path, encoding=args.encoding, newline="") as fh:
            header = next(csv.reader(fh), [])
        duplicated = sorted({c for c in header if c and header.count(c) > 1})
        if duplicated:
            raise UserError(f"{path} has duplicated column names {duplicated}; every column "
                            "needs its own name.")
        df = pd.read_csv(path, encoding=args.encoding)
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
        # "NA" is a lab's name, and only an empty cell is a missing label.
        labels = pd.read_csv(path, encoding=args.encoding, usecols=[args.env_column],
                             dtype=str, keep_default_na=False, na_filter=False)
        df[args.env_column] = labels[args.env_column].replace("", None).to_numpy()
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
