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
import tokenize
import zipfile
from pathlib import Path

import numpy as np

from .options import OrderingOptions, RefineOptions, upgrade_parameters

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "save", "load"]

#: Identifies a creator-plugin model file; stored in its metadata.
FORMAT_NAME = "creator-plugin-model"
#: Version of the layout; bumped when the layout changes incompatibly. Version 2
#: stores the options objects (``ordering``, ``refine``) as their fields; version 1
#: files, with the earlier constructor's parameters, load in the current spelling
#: (:func:`creator_plugin.options.upgrade_parameters`).
FORMAT_VERSION = 2

_META = "__metadata__"
_ARRAY = "__ndarray__"
_OPTIONS = "__options__"
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
    if not isinstance(allow_pickle, (bool, np.bool_)):
        # A string such as "no" is truthy: only a real bool may switch code execution on.
        raise TypeError(f"allow_pickle must be True or False; got {allow_pickle!r}.")
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
        "params": _encode(_options_as_fields(params), "params", arrays),
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


def _options_as_fields(params: dict) -> dict:
    """The parameters with every options object as ``{_OPTIONS: class name, **fields}``."""
    return {k: {_OPTIONS: type(v).__name__, **v.to_dict()}
            if isinstance(v, (OrderingOptions, RefineOptions)) else v
            for k, v in params.items()}


def _options_from_fields(params: dict) -> dict:
    """The inverse of :func:`_options_as_fields` (an unknown class is a corrupt file)."""
    out = {}
    for k, v in params.items():
        if isinstance(v, dict) and _OPTIONS in v:
            kind = {"OrderingOptions": OrderingOptions, "RefineOptions": RefineOptions}.get(
                v[_OPTIONS])
            if kind is None:
                raise _Corrupt(f"its parameter {k!r} names an unknown options class")
            v = kind(**{f: x for f, x in v.items() if f != _OPTIONS})
        out[k] = v
    return out


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


#: Largest metadata entry read (bytes) and deepest nesting accepted in it.
MAX_METADATA_BYTES = 64 << 20
MAX_METADATA_DEPTH = 32
#: Largest uncompressed-to-compressed size ratio accepted for a member above 1 MiB:
#: fitted float arrays compress by a few times at most, so more is a decompression bomb.
MAX_COMPRESSION_RATIO = 50


def _load_npz(path: Path, cls):
    try:
        with zipfile.ZipFile(path) as zf:
            members = {i.filename: i for i in zf.infolist()}
            meta_raw = _read_member(zf, members, _META, limit=MAX_METADATA_BYTES)
            if meta_raw is None:
                raise _Corrupt("it is an npz archive without creator-plugin metadata")
            if meta_raw.dtype != np.uint8 or meta_raw.ndim != 1:
                raise _Corrupt("its metadata entry is not a byte string")
            meta = json.loads(meta_raw.tobytes().decode("utf-8"))
            _check_depth(meta, MAX_METADATA_DEPTH)
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
            for key in ("params", "attributes"):
                if not isinstance(meta.get(key), dict):
                    raise _Corrupt(f"its metadata entry {key!r} is not a mapping")
            # Only the members the metadata refers to are read (others are ignored).
            arrays = {}
            for key in sorted(_array_keys(meta)):
                arr = _read_member(zf, members, key, limit=None)
                if arr is None:
                    raise _Corrupt(f"the array {key!r} its metadata refer to is missing")
                arrays[key] = arr
        params = upgrade_parameters(_options_from_fields(_decode(meta["params"], arrays)))
        model = cls(**params)
        model._validate_params()
        for name, value in _decode(meta["attributes"], arrays).items():
            if not name.endswith("_") or name.startswith("_"):
                raise _Corrupt(f"it sets {name!r}, which is not a fitted attribute")
            if name == "column_names_in_":
                value = _names_from_json(value)
            if not _derived(cls, name):  # older files stored what is now computed
                setattr(model, name, value)
        output_config = _decode(meta.get("output_config", {}), arrays)
        if output_config:
            if not isinstance(output_config, dict) or not all(
                    isinstance(v, str) for v in output_config.values()):
                raise _Corrupt("its output configuration is not a mapping of strings")
            model._sklearn_output_config = output_config
        _check_consistent(model)
    except _Corrupt as exc:
        raise ValueError(f"{path} is not a valid creator-plugin model file: {exc}.") from None
    except RecursionError:
        raise ValueError(
            f"{path} is not a valid creator-plugin model file: its metadata are nested too "
            "deeply.") from None
    except MemoryError:
        raise ValueError(
            f"{path} is not a valid creator-plugin model file: it declares arrays too large "
            "to load.") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, KeyError, TypeError,
            ValueError, UnicodeDecodeError, AttributeError, IndexError, OverflowError,
            NotImplementedError, tokenize.TokenError) as exc:
        # zipfile, numpy's header parser, json and the estimator raise all of these on
        # damaged files (sklearn's InvalidParameterError is a ValueError; numpy's header
        # filter raises tokenize's error on an unbalanced header).
        detail = " ".join(str(exc).split())  # one line, whatever the library printed
        if len(detail) > 300:
            detail = detail[:300] + " ..."
        raise ValueError(
            f"{path} is not a valid creator-plugin model file (corrupt or truncated: "
            f"{type(exc).__name__}: {detail})."
        ) from None
    return model


def _read_member(zf: zipfile.ZipFile, members: dict, key: str, *, limit: int | None):
    """The array stored as ``key``, after checking its declared sizes; None if absent.

    The ``.npy`` header (dtype, shape) is read first and must agree with the
    member's declared uncompressed size; object arrays are refused; a large
    member may not claim more than ``MAX_COMPRESSION_RATIO`` times its
    compressed size; nothing is decompressed beyond the declared size.
    """
    info = members.get(f"{key}.npy")
    if info is None:
        return None
    if limit is not None and info.file_size > limit:
        raise _Corrupt(f"the entry {key!r} declares {info.file_size} bytes (at most {limit})")
    if info.file_size > (1 << 20) and info.file_size > MAX_COMPRESSION_RATIO * max(
            info.compress_size, 1):
        raise _Corrupt(
            f"the entry {key!r} declares {info.file_size} bytes from {info.compress_size} "
            "compressed (a decompression bomb?)")
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise _Corrupt(f"the entry {key!r} has an unsupported .npy version {version}")
        if dtype.hasobject:
            raise _Corrupt(f"the entry {key!r} holds Python objects")
        count = int(np.prod(shape, dtype=object)) if shape else 1
        nbytes = count * dtype.itemsize
        if fh.tell() + nbytes != info.file_size:
            raise _Corrupt(
                f"the entry {key!r} declares shape {shape} of {dtype}, which does not match "
                "its stored size")
        data = fh.read(nbytes)
        if len(data) != nbytes:
            raise _Corrupt(f"the entry {key!r} is truncated")
    order = "F" if fortran else "C"
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy(order="K")


def _check_depth(value, limit: int) -> None:
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            raise _Corrupt(f"its metadata are nested deeper than {limit} levels")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)


def _array_keys(value) -> set[str]:
    keys, stack = set(), [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if _ARRAY in v:
                if not isinstance(v[_ARRAY], str):
                    raise _Corrupt("an array reference in its metadata is not a name")
                keys.add(v[_ARRAY])
            else:
                stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return keys


def _derived(cls, name: str) -> bool:
    """Whether a fitted attribute is computed on access (e.g. ``noise_``), not stored."""
    return isinstance(getattr(cls, name, None), property)


def _describe(v) -> str:
    """A one-line description of a stored value for an error message."""
    if isinstance(v, np.ndarray):
        return f"an array of shape {v.shape}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_consistent(model) -> None:
    """The fitted attributes have the types, shapes and values a fitted model has.

    Every array a model computes with is real floating point (the graph an
    integer 0/1 matrix of an acyclic graph), finite, and of the shape the
    model's ``n_latent_``, ``n_features_in_`` and ``n_environments_`` imply;
    then the relations between them hold (:func:`_check_relations`).
    """
    need = ("components_", "mixing_", "mean_", "adjacency_matrix_", "n_features_in_",
            "n_environments_", "environment_labels_", "weights_", "intercepts_",
            "noise_scales_")
    missing = [n for n in need if not hasattr(model, n)]
    if missing:
        raise _Corrupt(f"fitted attributes {missing} are missing")
    d = getattr(model, "n_latent_", model.n_latent)
    p = model.n_features_in_
    if not _is_int(d) or not _is_int(p) or not 1 <= d <= p:
        raise _Corrupt(f"n_latent_={_describe(d)} and n_features_in_={_describe(p)} are not "
                       "integers with 1 <= n_latent_ <= n_features_in_")
    if _is_int(model.n_latent) and model.n_latent != d:
        raise _Corrupt(f"n_latent_={d} contradicts the parameter n_latent={model.n_latent}")
    K = model.n_environments_
    if not _is_int(K) or K < 1:
        raise _Corrupt(f"n_environments_={_describe(K)} is not a positive integer")
    shapes = {"components_": (d, p), "mixing_": (p, d), "mean_": (p,),
              "feature_sd_": (p,), "feature_latent_cov_": (p, d)}
    for name, shape in shapes.items():
        if name not in ("components_", "mixing_", "mean_") and not hasattr(model, name):
            continue
        _check_float(getattr(model, name), name, shape)
    adj = model.adjacency_matrix_
    if not isinstance(adj, np.ndarray) or adj.shape != (d, d):
        raise _Corrupt(f"adjacency_matrix_ has shape {getattr(adj, 'shape', None)}, "
                       f"expected {(d, d)}")
    if adj.dtype.kind not in "biu" or not np.isin(adj, (0, 1)).all():
        raise _Corrupt("adjacency_matrix_ is not a 0/1 integer matrix")
    if not _acyclic(adj):
        raise _Corrupt("adjacency_matrix_ has a cycle")
    order = getattr(model, "causal_order_", None)
    if order is not None:
        if (not isinstance(order, list) or not all(_is_int(i) for i in order)
                or sorted(int(i) for i in order) != list(range(d))):
            raise _Corrupt("causal_order_ is not an ordering of the latents")
        pos = {int(v): i for i, v in enumerate(order)}
        if any(pos[i] > pos[j] for i, j in zip(*np.nonzero(adj))):
            raise _Corrupt("causal_order_ contradicts adjacency_matrix_")
    if hasattr(model, "edge_confidence_"):  # an older file has none: it loads without it
        _check_float(model.edge_confidence_, "edge_confidence_", (d, d))
        if not ((model.edge_confidence_ >= 0) & (model.edge_confidence_ <= 1)).all():
            raise _Corrupt("edge_confidence_ has values outside [0, 1]")
    per_env = {"weights_": (d, d), "intercepts_": (d,), "noise_scales_": (d,)}
    for name, shape in per_env.items():
        _check_list(getattr(model, name), name, K)
        for k, arr in enumerate(getattr(model, name)):
            _check_float(arr, f"{name}[{k}]", shape)
    if hasattr(model, "latents_"):
        _check_list(model.latents_, "latents_", K)
        for k, arr in enumerate(model.latents_):
            _check_float(arr, f"latents_[{k}]", (None, d))
    _check_labels(model.environment_labels_, K)
    _check_changes(model, K, d)
    names = getattr(model, "feature_names_in_", None)
    if names is not None and (not isinstance(names, np.ndarray) or names.shape != (p,)
                              or not all(isinstance(n, str) for n in names)):
        raise _Corrupt(f"feature_names_in_ is not {p} strings")
    _check_columns(model, p)
    diagnostics = getattr(model, "diagnostics_", None)
    if diagnostics is not None and not isinstance(diagnostics, dict):
        raise _Corrupt("diagnostics_ is not a mapping")
    _check_relations(model, d)


def _check_changes(model, K: int, d: int) -> None:
    """``changed_mechanisms_``, when stored (files written before it have none): a (K, d)
    boolean array."""
    changed = getattr(model, "changed_mechanisms_", None)
    if changed is None:
        return
    if (not isinstance(changed, np.ndarray) or changed.dtype != bool
            or changed.shape != (K, d)):
        raise _Corrupt(f"changed_mechanisms_ is {_describe(changed)}, not a boolean array of "
                       f"shape {(K, d)}")


def _check_relations(model, d: int) -> None:
    """What a fit guarantees across attributes: weights on edges only, an invertible code."""
    adj = model.adjacency_matrix_
    for k, W in enumerate(model.weights_):
        off = (W != 0) & (adj == 0)
        if off.any():
            i, j = (int(v) for v in np.argwhere(off)[0])
            raise _Corrupt(f"weights_[{k}] has weight {W[i, j]:.3g} from latent {i} to {j}, "
                           f"where adjacency_matrix_ has no edge ({int(off.sum())} such "
                           "entries)")
    for k, s in enumerate(model.noise_scales_):
        if (s < 0).any():
            raise _Corrupt(f"noise_scales_[{k}] has negative scales")
    for name, axis in (("mixing_", 1), ("components_", 0)):
        rank = _rank_in_any_units(getattr(model, name), axis)
        if rank < d:
            raise _Corrupt(f"{name} has rank {rank}, not {d}: it does not map the {d} latents "
                           "one to one")


def _rank_in_any_units(M: np.ndarray, axis: int) -> int:
    """Numerical rank of ``M`` whatever the units of the features.

    A feature's entries (a row of ``mixing_``, ``axis=1``; a column of
    ``components_``, ``axis=0``) are scaled to unit norm first: data in other
    units (``X @ D``, ``D`` diagonal) have a model with ``D`` times the
    mixing's rows and ``D^-1`` times the components' columns, which is exactly
    as invertible, however far apart the columns' scales (1e-200 beside 1).
    """
    # by the largest entry first: the squares of entries near 1e-200 underflow
    big = np.max(np.abs(M), axis=axis, keepdims=True)
    unit = M / np.where(big > 0, big, 1.0)
    norms = np.linalg.norm(unit, axis=axis, keepdims=True)
    unit /= np.where(norms > 0, norms, 1.0)
    return int(np.linalg.matrix_rank(unit))


def _check_labels(labels, K: int) -> None:
    """One distinct label per environment, each a string, an integer or a float."""
    if not isinstance(labels, list) or len(labels) != K:
        raise _Corrupt(f"environment_labels_ is not a list with one label per environment "
                       f"({K}; n_environments_)")
    for lab in labels:
        if not isinstance(lab, (str, int, float)) or (isinstance(lab, float)
                                                      and not np.isfinite(lab)):
            raise _Corrupt(f"environment_labels_ holds {_describe(lab)}; labels are strings, "
                           "integers or finite floats")
    kinds = {type(lab) for lab in labels}
    if str in kinds and len(kinds) > 1:
        raise _Corrupt("environment_labels_ mixes strings with numbers")
    if len({(type(lab), lab) for lab in labels}) != K:
        raise _Corrupt("environment_labels_ has a label twice")


def _names_from_json(value):
    """``column_names_in_`` as saved: JSON has lists where the names had tuples."""
    if not isinstance(value, list):
        raise _Corrupt("column_names_in_ is not a list of names")

    def restore(v):
        return tuple(restore(e) for e in v) if isinstance(v, list) else v

    return [restore(v) for v in value]


def _check_columns(model, p: int) -> None:
    """``column_names_in_``: p supported, distinct names, the same as ``feature_names_in_``."""
    from ._validation import column_keys

    keys = getattr(model, "column_names_in_", None)
    if keys is None:
        return
    if not isinstance(keys, list) or len(keys) != p:
        raise _Corrupt(f"column_names_in_ is not a list of {p} names")
    try:
        plain = column_keys(_Columns(keys), "column_names_in_")
    except (TypeError, ValueError) as exc:
        raise _Corrupt(str(exc).rstrip(".")) from None
    if plain != keys or any(type(a) is not type(b) for a, b in zip(plain, keys)):
        raise _Corrupt("column_names_in_ holds names that are not plain values")
    names = getattr(model, "feature_names_in_", None)
    if names is not None and list(names) != keys:
        raise _Corrupt("feature_names_in_ and column_names_in_ differ")


class _Columns:
    """A stand-in frame for :func:`creator_plugin._validation.column_keys`."""

    dtypes = ()

    def __init__(self, columns: list):
        self.columns = columns


def _check_list(value, name: str, K) -> None:
    if not isinstance(value, list) or (K is not None and len(value) != K):
        raise _Corrupt(f"{name} is not a list with one entry per environment")


def _check_float(arr, name: str, shape: tuple) -> None:
    if not isinstance(arr, np.ndarray) or arr.dtype.kind != "f":
        kind = getattr(getattr(arr, "dtype", None), "name", type(arr).__name__)
        raise _Corrupt(f"{name} is {kind}, not a real floating-point array")
    if arr.ndim != len(shape) or any(s is not None and a != s for a, s in zip(arr.shape, shape)):
        raise _Corrupt(f"{name} has shape {arr.shape}, expected {shape}")
    if not np.isfinite(arr).all():
        raise _Corrupt(f"{name} holds NaN or infinite values")


def _acyclic(adj: np.ndarray) -> bool:
    """Kahn's algorithm on a 0/1 adjacency matrix."""
    indeg = adj.sum(axis=0).astype(int)
    ready = [i for i in range(adj.shape[0]) if indeg[i] == 0]
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for j in np.nonzero(adj[i])[0]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(int(j))
    return seen == adj.shape[0]


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
