"""Shared helpers of the adapters: resolve a fitted model, its names and environments.

Every adapter accepts either a fitted :class:`creator_plugin.CREATOR` or the
result of :func:`creator_plugin.adapters.causallearn.creator` (anything with a
fitted ``estimator`` attribute and ``node_names``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from creator_plugin import CREATOR
from creator_plugin._containers import latent_names

__all__ = [
    "LATENT_FEATURE_NOTE",
    "resolve_estimator",
    "resolve_names",
    "environment_index",
    "check_node_names",
    "check_nodes_known",
    "latent_dataframe",
    "quiet_library_warnings",
    "document_latents",
    "dot_quoted",
    "missing_extra",
]

LATENT_FEATURE_NOTE = """\
What "latent feature i" means: CREATOR identifies the latent DAG and features
only up to the surrounded-node equivalence. Node i is the i-th latent found
by the ordering step (so nodes are in topological order); it corresponds to
*some* true latent, not to the true latent with the same label. Its feature
is a multiple of that true latent, or, when the true node has surrounding
parents (parents whose children include all of its children; for a childless
node every parent), a linear combination of it and those parents. Each
feature is scaled to unit pooled within-environment variance, its sign makes
it correlate positively with the entangled feature of the same position, and
it is not centred per environment (``estimator.intercepts_[k]`` holds the
means in environment k). Effects, weights and noise scales are therefore in
units of the recovered features: "one unit of L2" is one pooled
within-environment standard deviation of L2, not a unit of any true
variable."""


def missing_extra(exc: ModuleNotFoundError, library: str, extra: str) -> ImportError:
    """The error to raise when an adapter's library is not installed.

    Parameters
    ----------
    exc : ModuleNotFoundError
        The failed import.
    library : str
        What the adapter needs, as users know it (e.g. ``"DoWhy"``).
    extra : str
        The creator-plugin extra that installs it (e.g. ``"dowhy"``).

    Returns
    -------
    ImportError
        Naming the library, the missing module and the install command.
    """
    return ImportError(
        f"This part of creator_plugin.adapters needs {library}, which is not installed "
        f"(no module named {exc.name!r}). Install it with: pip install \"creator-plugin[{extra}]\" "
        f"(or \"creator-plugin[all]\" for every adapter)."
    )


def dot_quoted(text: str) -> str:
    """``text`` as one quoted DOT string that Graphviz shows as it is.

    Backslashes and double quotes are escaped (so a name ending in a
    backslash, or one crafted to close the string and add attributes, stays
    one string), line breaks become Graphviz's ``\\n`` and other control
    characters are shown as ``\\xNN``; the quotes also keep a name such as
    ``<b>x</b>`` from being read as an HTML label.
    """
    out = []
    for ch in str(text):
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def document_latents(obj):
    """Append the "Latent features" section (:data:`LATENT_FEATURE_NOTE`) to a docstring."""
    body = "\n".join("    " + line if line else "" for line in LATENT_FEATURE_NOTE.splitlines())
    obj.__doc__ = (obj.__doc__ or "").rstrip() + "\n\n    Latent features\n    ---------------\n"
    obj.__doc__ += body + "\n"
    return obj


def resolve_estimator(model) -> CREATOR:
    """Return the fitted :class:`CREATOR` behind ``model``.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        A fitted estimator, or a result of the causal-learn-style search.

    Raises
    ------
    TypeError
        If ``model`` is neither.
    ValueError
        If the estimator is not fitted.
    """
    est = getattr(model, "estimator", model)
    if not isinstance(est, CREATOR):
        raise TypeError(
            "Expected a fitted creator_plugin.CREATOR or the result of "
            f"creator_plugin.adapters.causallearn.creator(); got {type(model).__name__}."
        )
    try:
        check_is_fitted(est, "adjacency_matrix_")
    except NotFittedError:
        raise ValueError(
            "This CREATOR estimator is not fitted yet: call .fit(X_list) (or "
            ".fit(X, environments=labels)) before using an adapter."
        ) from None
    return est


def check_node_names(names: Sequence[str], d: int) -> list[str]:
    """Validate ``d`` unique, non-empty string node names."""
    if isinstance(names, (str, bytes)):
        raise TypeError("node_names must be a list of strings, not a single string.")
    names = list(names)
    if len(names) != d:
        raise ValueError(f"node_names has {len(names)} entries; the model has {d} latent nodes.")
    for n in names:
        if not isinstance(n, str) or not n:
            raise ValueError(f"node_names must be non-empty strings; got {n!r}.")
    if len(set(names)) != d:
        raise ValueError(f"node_names must be unique; got {names}.")
    return names


def resolve_names(model, names: Sequence[str] | None = None) -> list[str]:
    """Node names: ``names`` if given, else the result's names, else ``L1..Ld``."""
    d = resolve_estimator(model).n_latent_
    if names is None:
        names = getattr(model, "node_names", None)
    if names is None:
        return latent_names(d).tolist()
    return check_node_names(names, d)


def environment_index(est: CREATOR, environment) -> int:
    """Position in ``est.latents_`` of the environment with label ``environment``.

    Labels are ``est.environment_labels_``: ``0..K-1`` when the model was fit
    on a list, the sorted distinct values of the environment index otherwise.
    """
    labels = list(est.environment_labels_)
    for k, lab in enumerate(labels):
        try:
            if bool(lab == environment):
                return k
        except (TypeError, ValueError):
            continue
    raise ValueError(
        f"Unknown environment {environment!r}; the model was fit on environments "
        f"{labels} (pass one of these labels)."
    )


def check_nodes_known(nodes, names: Sequence[str], what: str) -> list[str]:
    """Turn a name or list of names into a list and check each is a node."""
    if isinstance(nodes, str):
        lst = [nodes]
    else:
        try:
            lst = list(nodes)
        except TypeError:
            raise TypeError(f"{what} must be a latent node name or a list of names (the "
                            f"latent nodes are {list(names)}); got {nodes!r}.") from None
    if not lst:
        raise ValueError(f"{what} must name at least one latent node.")
    unknown = [n for n in lst if n not in names]
    if unknown:
        raise ValueError(f"Unknown {what} node(s) {unknown}; the latent nodes are {list(names)}.")
    return lst


@document_latents
def latent_dataframe(model, environment=0, names: Sequence[str] | None = None):
    """The recovered latent features of one environment as a DataFrame.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    environment : hashable, default=0
        Environment label (see ``estimator.environment_labels_``).
    names : list of str, optional
        Column names (default: the model's node names, ``L1..Ld``).

    Returns
    -------
    pandas.DataFrame (n_k, d)
        A fresh copy of ``estimator.latents_[k]``, not centred.
    """
    import pandas as pd

    est = resolve_estimator(model)
    names = resolve_names(model, names)
    k = environment_index(est, environment)
    return pd.DataFrame(np.array(est.latents_[k], copy=True), columns=names)


# Library warnings that are not the user's concern, matched by message.
_QUIET = [
    (DeprecationWarning, r"The copy keyword is deprecated"),
    (FutureWarning, r".*StructureScore"),
    (FutureWarning, r".*get_all_backdoor_adjustment_sets"),
]


@contextmanager
def quiet_library_warnings() -> Iterator[None]:
    """Silence known third-party deprecation notices (narrowly, by message)."""
    with warnings.catch_warnings():
        for category, message in _QUIET:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield
