"""The method protocol of ``creator bench``: what can be benchmarked, and how it is named.

A method is one of two things.

**A fit function** ``fit(X_list, n_latent, random_state, **kwargs)`` returning
``(adjacency, latents, order)`` or ``(adjacency, latents, order, info)``:

* ``X_list``: list of K float arrays ``(n_k, p)``, one per environment;
* ``n_latent``: int, the number of latent nodes d of the truth;
* ``random_state``: int, the benchmark's seed index (every random choice of
  the method should flow from it);
* ``kwargs``: the method keywords of the grid cell (e.g. ``tau``);
* ``adjacency``: array ``(m, m)``, ``[i, j] != 0`` iff estimated latent i ->
  estimated latent j (this project's convention; lingam's
  ``adjacency_matrix_`` is the transpose);
* ``latents``: list of K arrays ``(n_k, m)``, estimated latent i in column i,
  rows as in ``X_list``;
* ``order``: a topological order of the m estimated latents, or None (a
  topological sort of ``adjacency`` is then used);
* ``info``: optional dict of JSON-serialisable extras, written to the row's
  ``info`` column (GIN records its clusters there); its key
  ``edge_confidence`` (an (m, m) nested list, the probability of every edge)
  is not: it gives the row's ``undecided_edges``, the number of ordered
  pairs whose confidence lies strictly between 0.1 and 0.9 (the built-in
  ``"CREATOR"`` returns its ``edge_confidence_`` so; NaN for a method
  without one).

``m`` may differ from d (GIN finds its own number of clusters); see
:mod:`creator_plugin.benchmark.scoring` for how such a result is scored.

**A scikit-learn-style estimator**: a class, or an unfitted instance, whose
``fit(X_list)`` takes the list of environments and sets ``adjacency_matrix_``
(same convention), ``latents_`` (list of K arrays) and optionally
``causal_order_``. A class is constructed with the keywords ``n_latent`` and
``random_state`` (each only if its constructor accepts it) plus the cell's
method keywords; an instance is cloned (:func:`sklearn.base.clone`) and gets
the same values through ``set_params``. :class:`creator_plugin.CREATOR` is
such a class.

A method is named on the command line by a built-in name (:data:`METHODS`
in :mod:`creator_plugin.benchmark.baselines`) or by an import path
``"package.module:attribute"`` to a fit function, an estimator class or an
estimator instance; :func:`resolve_methods` turns names into fit functions.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping

import numpy as np

__all__ = [
    "DEFAULT_TIME_LIMITS",
    "EstimatorFit",
    "as_fit",
    "load_method",
    "resolve_methods",
    "time_limits_for",
]

#: Per-fit time limits (seconds) that apply unless the caller sets its own:
#: causal-learn's GIN runs O(n^2) independence tests over subsets of the
#: measurements and can take hours, and RLCD's rank tests grow
#: combinatorially with the measurements (a fit over the limit is killed and
#: its row says "timeout").
DEFAULT_TIME_LIMITS: dict[str, float] = {"GIN": 600.0, "RLCD": 600.0}


class EstimatorFit:
    """A fit function (see the module docstring) around an estimator class or instance.

    Parameters
    ----------
    estimator : type or estimator instance
        Has ``fit(X_list)``, and after fitting ``adjacency_matrix_``,
        ``latents_`` and optionally ``causal_order_``.
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def __repr__(self) -> str:
        return f"EstimatorFit({self.estimator!r})"

    def _build(self, n_latent: int, random_state, kwargs: dict):
        est = self.estimator
        if inspect.isclass(est):
            accepted = inspect.signature(est).parameters
            fixed = {k: v for k, v in (("n_latent", n_latent), ("random_state", random_state))
                     if k in accepted}
            return est(**fixed, **kwargs)
        from sklearn.base import clone

        model = clone(est)
        params = model.get_params(deep=False)
        fixed = {k: v for k, v in (("n_latent", n_latent), ("random_state", random_state))
                 if k in params}
        return model.set_params(**fixed, **kwargs)

    def __call__(self, X_list, n_latent, random_state, **kwargs):
        model = self._build(n_latent, random_state, kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model.fit(X_list)
        for attr in ("adjacency_matrix_", "latents_"):
            if not hasattr(model, attr):
                raise TypeError(
                    f"{type(model).__name__}.fit did not set {attr}; a benchmarked estimator "
                    "must set adjacency_matrix_ and latents_ (see creator_plugin.benchmark."
                    "methods)."
                )
        order = getattr(model, "causal_order_", None)
        return (np.asarray(model.adjacency_matrix_), list(model.latents_),
                None if order is None else [int(i) for i in order])


def as_fit(obj) -> Callable:
    """A fit function from a fit function, an estimator class or an estimator instance.

    Parameters
    ----------
    obj : callable, type or estimator
        An object with a ``fit`` method that is a class or not a plain
        function is an estimator; any other callable is a fit function.

    Returns
    -------
    callable
        ``fit(X_list, n_latent, random_state, **kwargs)``.

    Raises
    ------
    TypeError
        If ``obj`` is neither.
    """
    if inspect.isclass(obj) or (hasattr(obj, "fit") and not inspect.isroutine(obj)):
        if not hasattr(obj, "fit"):
            raise TypeError(f"{obj!r} is a class without a fit method: not a method.")
        return EstimatorFit(obj)
    if callable(obj):
        return obj
    raise TypeError(
        f"{obj!r} is neither a fit function nor an estimator (see creator_plugin.benchmark."
        "methods for the protocol)."
    )


def load_method(path: str) -> Callable:
    """Import ``"package.module:attribute"`` and return its fit function.

    Parameters
    ----------
    path : str
        Module and attribute separated by one colon; the attribute may be
        dotted (``"pkg.mod:Class.factory"``).

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If the path is malformed or cannot be imported.
    """
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"method {path!r}: an import path must look like 'package.module:name'.")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"method {path!r}: cannot import {module_name!r} ({exc}).") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(
                f"method {path!r}: {module_name!r} has no attribute {attr!r}.") from None
    try:
        return as_fit(obj)
    except TypeError as exc:
        raise ValueError(f"method {path!r}: {exc}") from None


def resolve_methods(
    methods: Iterable, table: Mapping[str, Callable]
) -> dict[str, Callable]:
    """Fit functions of the requested methods, keyed by the names rows will carry.

    Parameters
    ----------
    methods : iterable of str or callable
        Names of ``table``, import paths ``"module:attribute"``, or (from
        Python) fit functions, estimator classes or instances, named by their
        ``__name__`` (or class name).
    table : mapping
        Built-in methods, ``{name: fit}``.

    Returns
    -------
    dict
        ``{name: fit}`` in the requested order.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the built-in ones), a bad
        import path, or two methods with the same name.
    """
    out: dict[str, Callable] = {}
    for spec in methods:
        if isinstance(spec, str):
            if spec in table:
                name, fit = spec, table[spec]
            elif ":" in spec:
                name, fit = spec, load_method(spec)
            else:
                raise ValueError(
                    f"Unknown methods ['{spec}']; available: {list(table)}, or an import path "
                    "'package.module:name' to a fit function or estimator."
                )
        else:
            fit = as_fit(spec)
            name = getattr(spec, "__name__", type(spec).__name__)
        if name in out:
            raise ValueError(f"method {name!r} is requested twice.")
        out[name] = fit
    return out


def time_limits_for(
    names: Iterable[str], time_limit: float | Mapping[str, float] | None
) -> dict[str, float | None]:
    """The per-fit time limit of every method.

    Parameters
    ----------
    names : iterable of str
        Method names.
    time_limit : float, mapping or None
        One limit for every method, ``{name: limit}`` for some (the others
        keep :data:`DEFAULT_TIME_LIMITS`), or None (the defaults only).

    Returns
    -------
    dict
        ``{name: seconds or None}``; None means the fit runs in the calling
        process without a limit.

    Raises
    ------
    ValueError
        If a limit is not positive or names a method that is not requested.
    """
    names = list(names)
    limits: dict[str, float | None] = {n: DEFAULT_TIME_LIMITS.get(n) for n in names}
    if time_limit is None:
        return limits
    given = time_limit if isinstance(time_limit, Mapping) else dict.fromkeys(names, time_limit)
    for name, value in given.items():
        if name not in limits:
            raise ValueError(f"time limit for {name!r}, which is not a requested method "
                             f"({names}).")
        if value is not None and not float(value) > 0:
            raise ValueError(f"time limit for {name!r} must be > 0 seconds, got {value!r}.")
        limits[name] = None if value is None else float(value)
    return limits
