"""Saving and loading fitted models in a format that cannot run code.

The default file is a NumPy ``.npz`` archive read with ``allow_pickle=False``:
every fitted array is one entry, and one more entry holds JSON metadata
(format name and version, the estimator's class and parameters, and the
fitted attributes that are plain data, such as ``diagnostics_``). Loading it
only parses arrays and JSON, so a crafted file can at worst be rejected.
joblib (pickle) files are written and read only when asked for explicitly,
because unpickling a file runs whatever code the file names.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "save", "load"]

#: Identifies a creator-plugin model file; stored in its metadata.
FORMAT_NAME = "creator-plugin-model"
#: Version of the layout; bumped when the layout changes incompatibly.
FORMAT_VERSION = 1

_META = "__metadata__"
_ARRAY = "__ndarray__"
_ZIP_MAGIC = b"PK\x03\x04"


def save(model, path: str | os.PathLike, *, format: str = "npz") -> Path:
    """Write a fitted estimator to ``path``, atomically.

    The file is written to a temporary file in the same directory, flushed
    to disk (``fsync``) and renamed into place, so a crash or a full disk
    never leaves a half-written file at ``path``.

    Parameters
    ----------
    model : CREATOR
        A fitted estimator.
    path : str or path-like
        Target file. It may exist only as a regular file (which is
        replaced); a directory, FIFO, device or symbolic link is refused.
    format : {"npz", "joblib"}, default="npz"
        ``"npz"``: arrays plus JSON metadata, safe to load from anyone.
        ``"joblib"``: a pickle, readable only with
        ``load(path, allow_pickle=True)``; loading a pickle runs code, so
        use it only for files you will not share.

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        ``format`` is unknown, ``path`` is not a regular file, or an
        attribute cannot be stored in the ``npz`` format.
    OSError
        The file could not be written (permissions, disk full, ...).
    """
    if format not in ("npz", "joblib"):
        raise ValueError(f"format must be 'npz' or 'joblib', got {format!r}.")
    path = Path(path)
    _check_regular_target(path)
    if format == "npz":
        arrays = _encode_model(model)  # before any file is touched: errors leave nothing
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if format == "npz":
                np.savez(fh, **arrays)
            else:
                import joblib

                joblib.dump(model, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return path


def load(path: str | os.PathLike, *, cls: type, allow_pickle: bool = False):
    """Load a model written by :func:`save`.

    Parameters
    ----------
    path : str or path-like
    allow_pickle : bool, default=False
        Also accept joblib/pickle files. Unpickling runs code chosen by
        whoever wrote the file: pass True only for files you wrote yourself
        or fully trust. ``npz`` files never run code either way.
    cls : type
        The estimator class to build (:meth:`creator_plugin.CREATOR.load`
        passes itself; this module does not import the estimator).

    Returns
    -------
    CREATOR

    Raises
    ------
    FileNotFoundError
        No regular file at ``path``.
    ValueError
        The file is empty, truncated, corrupt, of another format, a pickle
        while ``allow_pickle`` is False, or of a newer format version. The
        message names the file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No saved model at {path}.")
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == _ZIP_MAGIC:
        return _load_npz(path, cls)
    if not allow_pickle:
        kind = "a pickle/joblib file" if _looks_like_pickle(head) else "not a model file"
        raise ValueError(
            f"{path} is {kind}: only the safe npz format of creator-plugin is loaded by "
            "default. Loading a pickle runs code chosen by whoever wrote it; if you wrote "
            "this file yourself, pass allow_pickle=True."
        )
    return _load_joblib(path, cls)


# ----------------------------------------------------------------- encoding
def _encode_model(model) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    fitted = {k: v for k, v in vars(model).items()
              if k.endswith("_") and not k.startswith("_") and not _derived(type(model), k)}
    params = model.get_params(deep=False)
    random_state = params.get("random_state")
    if random_state is not None and not isinstance(random_state, (int, np.integer)):
        # A Generator's or RandomState's state is not data we keep: the fit is
        # already done, and a refit of the loaded model gets random_state=None.
        params["random_state"] = None
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "class": type(model).__name__,
        "params": _encode(params, "params", arrays),
        "attributes": {k: _encode(v, k, arrays) for k, v in fitted.items()},
        "output_config": _encode(getattr(model, "_sklearn_output_config", {}), "output", arrays),
    }
    arrays[_META] = np.frombuffer(json.dumps(meta, allow_nan=True).encode("utf-8"), np.uint8)
    return arrays


def _encode(value, where: str, arrays: dict):
    """JSON-able form of ``value``; arrays go to ``arrays`` under a fresh key."""
    if isinstance(value, np.ndarray):
        key = f"a{len(arrays)}"
        if value.dtype == object:
            if not all(isinstance(v, str) for v in value.ravel()):
                raise ValueError(
                    f"{where} is an object array of non-strings; the npz format cannot "
                    "store it (save(..., format='joblib') can)."
                )
            arrays[key] = value.astype(str)
            return {_ARRAY: key, "object": True}
        arrays[key] = value
        return {_ARRAY: key}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_encode(v, f"{where}[{i}]", arrays) for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{where} has non-string keys; the npz format cannot store it.")
        if _ARRAY in value:
            raise ValueError(f"{where} uses the reserved key {_ARRAY!r}.")
        return {k: _encode(v, f"{where}[{k!r}]", arrays) for k, v in value.items()}
    raise ValueError(
        f"{where} is a {type(value).__name__}; the npz format stores arrays, numbers, "
        "strings, lists and dicts only (save(..., format='joblib') stores anything)."
    )


def _decode(value, arrays):
    if isinstance(value, dict):
        if _ARRAY in value:
            arr = arrays[value[_ARRAY]]
            return arr.astype(object) if value.get("object") else arr
        return {k: _decode(v, arrays) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    return value


# ------------------------------------------------------------------ loading
class _Corrupt(Exception):
    """Internal: the file is not a valid model file (the message says why)."""


def _load_npz(path: Path, cls):
    try:
        with np.load(path, allow_pickle=False) as npz:
            if _META not in npz.files:
                raise _Corrupt("it is an npz archive without creator-plugin metadata")
            meta = json.loads(npz[_META].tobytes().decode("utf-8"))
            arrays = {k: npz[k] for k in npz.files if k != _META}
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
            raise _Corrupt("its metadata do not name the creator-plugin model format")
        version = meta.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
            raise _Corrupt(
                f"it has format version {version!r}; this creator-plugin reads versions "
                f"1..{FORMAT_VERSION} (upgrade creator-plugin to read newer files)"
            )
        if meta.get("class") != cls.__name__:
            raise _Corrupt(f"it holds a {meta.get('class')!r}, not a {cls.__name__}")
        model = cls(**_decode(meta["params"], arrays))
        for name, value in _decode(meta["attributes"], arrays).items():
            if not name.endswith("_") or name.startswith("_"):
                raise _Corrupt(f"it sets {name!r}, which is not a fitted attribute")
            if not _derived(cls, name):  # older files stored what is now computed
                setattr(model, name, value)
        output_config = _decode(meta.get("output_config", {}), arrays)
        if output_config:
            model._sklearn_output_config = output_config
        _check_consistent(model)
    except _Corrupt as exc:
        raise ValueError(f"{path} is not a valid creator-plugin model file: {exc}.") from None
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, TypeError, ValueError,
            UnicodeDecodeError, AttributeError, IndexError) as exc:
        # np.load, json and the estimator raise all of these on damaged files.
        raise ValueError(
            f"{path} is not a valid creator-plugin model file (corrupt or truncated: "
            f"{type(exc).__name__}: {exc})."
        ) from None
    return model


def _derived(cls, name: str) -> bool:
    """Whether a fitted attribute is computed on access (e.g. ``noise_``), not stored."""
    return isinstance(getattr(cls, name, None), property)


def _check_consistent(model) -> None:
    """Shapes of the arrays a model needs to transform agree with each other."""
    need = ("components_", "mixing_", "mean_", "adjacency_matrix_", "n_features_in_")
    missing = [n for n in need if not hasattr(model, n)]
    if missing:
        raise _Corrupt(f"fitted attributes {missing} are missing")
    d, p = getattr(model, "n_latent_", model.n_latent), model.n_features_in_
    shapes = {"components_": (d, p), "mixing_": (p, d), "mean_": (p,),
              "adjacency_matrix_": (d, d)}
    for name, shape in shapes.items():
        arr = getattr(model, name)
        if not isinstance(arr, np.ndarray) or arr.shape != shape:
            got = getattr(arr, "shape", type(arr).__name__)
            raise _Corrupt(f"{name} has shape {got}, expected {shape}")


def _load_joblib(path: Path, cls):
    import pickle

    import joblib

    try:
        model = joblib.load(path)
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError,
            AttributeError, ImportError, OSError, zipfile.BadZipFile) as exc:
        raise ValueError(
            f"{path} is not a valid creator-plugin model file (corrupt, truncated or not a "
            f"joblib file: {type(exc).__name__}: {exc})."
        ) from None
    except Exception as exc:  # struct.error, zlib.error, ... from damaged pickles
        raise ValueError(f"{path} is not a valid joblib file ({type(exc).__name__}: {exc}).") \
            from None
    if not isinstance(model, cls):
        raise ValueError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}.")
    return model


def _looks_like_pickle(head: bytes) -> bool:
    # Pickle protocol 2+ starts with PROTO (0x80); joblib compresses with zlib
    # (0x78) or writes its own "ZF" header.
    return head[:1] in (b"\x80", b"\x78") or head[:2] == b"ZF"


# ------------------------------------------------------------------ targets
def _check_regular_target(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise FileNotFoundError(f"Directory {path.parent} does not exist.") from None
        return
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{path} is a symbolic link; save to the file it points to instead.")
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ValueError(f"{path} is {kind}; save() replaces regular files only.")


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
