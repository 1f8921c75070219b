"""Rows of the studies: JSON-lines files, plain or gzip-compressed, under one name.

Large row files under ``benchmarks/results/`` are stored gzip-compressed
(``name.jsonl.gz``) and the pages keep citing them as ``name.jsonl``: every
study script reads and appends rows through :func:`resolve`, which returns the
name as given when that file exists and the compressed file otherwise. New
rows are appended to whichever file is there (a compressed file gets one more
gzip member, which every gzip reader reads as one stream). A pattern such as
``fresh_*.jsonl`` that the shell left unexpanded (it matches only compressed
files) is expanded by :func:`read_jsonl` to the files it names, compressed or
not.
"""

from __future__ import annotations

import glob
import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO


def resolve(path: str | Path) -> Path:
    """``path`` if it exists or ends in ``.gz``; else ``path.gz`` if that exists; else ``path``."""
    path = Path(path)
    if path.exists() or path.suffix == ".gz":
        return path
    packed = path.with_name(path.name + ".gz")
    return packed if packed.exists() else path


def exists(path: str | Path) -> bool:
    """Whether the rows of ``path`` exist (plain or compressed)."""
    return resolve(path).exists()


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Open the rows of ``path`` as text (``"r"``, ``"a"`` or ``"w"``), compressed or not."""
    real = resolve(path)
    if real.suffix == ".gz":
        return gzip.open(real, mode + "t", encoding="utf-8")
    return open(real, mode, encoding="utf-8")


def read_lines(path: str | Path) -> list[str]:
    """The non-empty lines of the rows of ``path``."""
    with open_text(path) as fh:
        return [line for line in fh.read().splitlines() if line.strip()]


def expand(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The row files named by one path or pattern, or by several.

    A name that exists, or whose compressed file exists, stands for itself; a
    pattern (``*``, ``?`` or ``[``) that names no file as written is matched
    against plain and compressed files alike, each file once, in sorted order.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Path] = []
    for path in map(str, paths):
        if exists(path) or not any(c in path for c in "*?["):
            out.append(resolve(path))
            continue
        found = {}
        for name in sorted(glob.glob(path) + glob.glob(path + ".gz")):
            found.setdefault(name.removesuffix(".gz"), Path(name))
        if not found:
            raise FileNotFoundError(f"no row file matches {path}")
        out += [found[k] for k in sorted(found)]
    return out


def read_jsonl(paths: str | Path | Iterable[str | Path]) -> list[dict]:
    """Every row of one file or of several (names or patterns, see :func:`expand`), in order."""
    return [json.loads(line) for p in expand(paths) for line in read_lines(p)]


def append_jsonl(path: str | Path, rows: Iterable[dict], **dumps) -> None:
    """Append rows (one JSON object a line), creating the file and its folder if needed."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open_text(path, "a") as fh:
        for row in rows:
            fh.write(json.dumps(row, **dumps) + "\n")


def append_fits(out: str | Path, columns: list[str], keys: Iterable[tuple], fit,
                shown: tuple[str, ...] = ("version", "family", "seed", "route", "shd")) -> None:
    """Fit every key not yet in the CSV file ``out`` and append its rows as each fit ends.

    Parameters
    ----------
    out : str or Path
        The CSV file of rows, created with its header (and its folder) if missing.
    columns : list of str
        The file's columns; every row ``fit`` returns has these keys.
    keys : iterable of tuple
        ``(version, family, seed)`` of each fit, in the order they are run; a key whose
        row is already in ``out`` is skipped, so a rerun resumes.
    fit : callable
        ``fit(version, family, seed)`` returns the list of rows of that key (the first
        one that key's, any others written beside it).
    shown : tuple of str
        The columns of each row printed as one JSON line when it is written.
    """
    import csv

    import pandas as pd

    out = Path(out)
    done = set()
    if out.exists():
        old = pd.read_csv(out)
        done = set(zip(old.version, old.family, old.seed))
    new = not out.exists()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, columns)
        if new:
            writer.writeheader()
        for key in keys:
            if tuple(key) in done:
                continue
            for row in fit(*key):
                writer.writerow(row)
                print(json.dumps({k: row.get(k) for k in shown}), flush=True)
            fh.flush()
