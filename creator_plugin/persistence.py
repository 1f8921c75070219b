"""Saving fitted models and writing results atomically ("nothing lost")."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import joblib

__all__ = ["save", "load", "atomic_output_dir"]


def save(model, path: str | os.PathLike) -> Path:
    """Write a fitted model to ``path`` with joblib, atomically.

    The model is written to a temporary file in the same directory and
    renamed into place, so a crash never leaves a half-written file.

    Parameters
    ----------
    model : CREATOR
        A fitted estimator (any picklable object works).
    path : str or path-like

    Returns
    -------
    Path
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    os.close(fd)
    try:
        joblib.dump(model, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def load(path: str | os.PathLike):
    """Load a model written by :func:`save` (or ``joblib.dump``).

    Only load files you trust: joblib files are pickles.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No saved model at {path}.")
    return joblib.load(path)


@contextlib.contextmanager
def atomic_output_dir(path: str | os.PathLike, *, force: bool = False) -> Iterator[Path]:
    """Create an output directory all at once, or not at all.

    Yields a temporary sibling directory to write into; on success it is
    renamed to ``path`` (replacing an existing directory only when ``force``);
    on any error it is removed and ``path`` is left as it was.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``force`` is False.
    """
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(
            f"Output directory {path} already exists; pass --force (force=True) to replace it."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.replace(path, old / "previous")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
