"""Read a fit without the truth: named, standardised loadings and per-environment tables.

Recovered latent labels are arbitrary (``L1..Ld``, numbered in a topological
order); a user names a latent by the measurements it drives. The decoder
``mixing_`` is in the measurements' own units, so with columns in mixed units
the largest raw loadings belong to whichever columns have the largest
numbers. :func:`loadings` puts every loading in standardised units instead.

Every table is a :class:`pandas.DataFrame` indexed by names: the
measurements' names (``feature_names_in_`` when the model was fitted on a
DataFrame, else ``x0..x{p-1}`` as scikit-learn names unnamed columns, or the
``feature_names`` passed), the latent names (``L1..Ld`` or the result's
``node_names``) and the environment labels (``environment_labels_``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ._containers import latent_names as _default_names
from .sem import pooled_sd

__all__ = [
    "measurement_names",
    "latent_names",
    "loadings",
    "noise_scales",
    "intercepts",
    "latent_sds",
]

LOADING_KINDS = ("pattern", "structure")


def fitted_estimator(model):
    """The fitted estimator behind ``model`` (a CREATOR or a result holding one)."""
    est = getattr(model, "estimator", model)
    if not hasattr(est, "get_params") or not hasattr(est, "n_latent"):
        raise TypeError(
            "model must be a fitted CREATOR (or a result holding one as .estimator); "
            f"got {type(model).__name__}."
        )
    check_is_fitted(est, "mixing_")
    return est


def _check_names(names, n: int, what: str) -> list[str]:
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{what} must be a list of strings, not a single string.")
    names = [str(x) for x in names]
    if len(names) != n:
        raise ValueError(f"{what} has {len(names)} entries; the model has {n}.")
    if len(set(names)) != n:
        raise ValueError(f"{what} must be unique; got {names}.")
    return names


def measurement_names(model, names: Sequence[str] | None = None) -> list[str]:
    """Names of the measurements the model was fitted on.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    names : list of str, optional
        Explicit names (checked against the number of columns).

    Returns
    -------
    list of str
        ``names`` if given, else ``feature_names_in_`` (set when the model
        was fitted on a DataFrame), else ``x0..x{p-1}``.
    """
    est = fitted_estimator(model)
    p = est.mixing_.shape[0]
    if names is None:
        names = getattr(est, "feature_names_in_", None)
    if names is None:
        return [f"x{j}" for j in range(p)]
    return _check_names(names, p, "feature_names")


def latent_names(model, names: Sequence[str] | None = None) -> list[str]:
    """Names of the latent nodes: ``names``, the result's ``node_names``, or ``L1..Ld``."""
    est = fitted_estimator(model)
    if names is None:
        names = getattr(model, "node_names", None)
    if names is None:
        return _default_names(est.n_latent_).tolist()
    return _check_names(names, est.n_latent_, "names")


def loadings(
    model,
    *,
    kind: str = "pattern",
    feature_names: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Standardised loadings of every measurement on every latent.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    kind : {"pattern", "structure"}, default="pattern"
        ``"pattern"``: the coefficients of the within-environment regression
        of measurement j on all latents, in standardised units: how many of
        its pooled within-environment SDs measurement j moves when latent i
        moves by one of its SDs and the other latents stay put. In the model
        ``x = H y`` this is the column of ``H`` in standardised units, so it
        shows which measurements a latent drives *directly*: use it to name
        the latents. ``"structure"``: the pooled within-environment
        correlation of measurement j with latent i. It also counts what a
        latent shares with its causes and effects: with ``L1 -> L2``, the
        measurements of L2 correlate with L1 too, so they can top L1's list.
    feature_names : list of str, optional
        Measurement names (default :func:`measurement_names`).
    names : list of str, optional
        Latent names (default :func:`latent_names`).

    Returns
    -------
    pandas.DataFrame (p, d)
        Index: measurement names; columns: latent names. Unit-free, so
        columns in different units compare directly. A column constant
        within every environment (ignored by the fit) gets NaN.

    Notes
    -----
    Everything is within environments (``feature_latent_cov_``,
    ``feature_sd_`` and the latents' covariance, each pooled over the
    environments after centring every environment on its own mean): the
    environments shift the means, and only the variation within an
    environment is what the latents explain. Pattern loadings can exceed 1
    in absolute value when latents are correlated; structure loadings
    cannot.
    """
    if kind not in LOADING_KINDS:
        raise ValueError(f"kind must be one of {LOADING_KINDS}; got {kind!r}.")
    est = fitted_estimator(model)
    index = measurement_names(model, feature_names)
    columns = latent_names(model, names)
    sd_x = np.asarray(est.feature_sd_, dtype=float)
    cov_xl = np.asarray(est.feature_latent_cov_, dtype=float)
    cov_latents = _pooled_within_cov(est.latents_)
    sd_latents = np.sqrt(np.diag(cov_latents))
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "pattern":
            coefficients = np.linalg.solve(cov_latents, cov_xl.T).T
            values = coefficients * sd_latents[None, :] / sd_x[:, None]
        else:
            values = cov_xl / np.outer(sd_x, sd_latents)
    values[sd_x == 0, :] = np.nan
    return pd.DataFrame(values, index=pd.Index(index, name="measurement"),
                        columns=pd.Index(columns, name="latent"))


def _pooled_within_cov(arrays: list[np.ndarray]) -> np.ndarray:
    centred = np.vstack([a - a.mean(axis=0) for a in arrays])
    return centred.T @ centred / centred.shape[0]


def _per_environment(model, values, names) -> pd.DataFrame:
    est = fitted_estimator(model)
    return pd.DataFrame(
        np.vstack([np.asarray(v, dtype=float) for v in values]),
        index=pd.Index(list(est.environment_labels_), name="environment"),
        columns=pd.Index(latent_names(model, names), name="latent"),
    )


def noise_scales(model, *, names: Sequence[str] | None = None) -> pd.DataFrame:
    """SD of every latent's exogenous noise in every environment (``noise_scales_``).

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    names : list of str, optional
        Latent names.

    Returns
    -------
    pandas.DataFrame (K, d)
        Index: environment labels; columns: latent names. In units of the
        latent (its pooled within-environment SD).
    """
    return _per_environment(model, fitted_estimator(model).noise_scales_, names)


def intercepts(model, *, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of every latent in every environment (``intercepts_``).

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    names : list of str, optional
        Latent names.

    Returns
    -------
    pandas.DataFrame (K, d)
        Index: environment labels; columns: latent names. In units of the
        latent (its pooled within-environment SD), relative to the pooled
        mean of the training data (``transform`` centres by ``mean_``), so
        the means of the environments average to 0 weighted by their sizes.
    """
    return _per_environment(model, fitted_estimator(model).intercepts_, names)


def latent_sds(model, *, names: Sequence[str] | None = None) -> pd.DataFrame:
    """SD of every latent within every environment (of ``latents_[k]``).

    With :func:`intercepts` this gives each environment's own scale:
    "environment mean + k SD" of latent i in environment e is
    ``intercepts(model).loc[e, i] + k * latent_sds(model).loc[e, i]``.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    names : list of str, optional
        Latent names.

    Returns
    -------
    pandas.DataFrame (K, d)
        Index: environment labels; columns: latent names. In units of the
        latent (its pooled within-environment SD, so the sizes-weighted
        mean of the squares is 1).
    """
    est = fitted_estimator(model)
    return _per_environment(model, [pooled_sd([L]) for L in est.latents_], names)
