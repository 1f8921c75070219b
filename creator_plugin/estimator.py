"""The CREATOR estimator: validates, calls the fit's numerics, holds the result."""

from __future__ import annotations

import inspect
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._config import FitConfig
from ._containers import (
    check_input_names,
    check_latent_names,
    latent_names,
    wrap_latent_list,
    wrap_observations,
)
from ._fit import fit_arrays
from ._params import InvalidParameterError, Options, validate_parameters
from ._passes import is_dask
from ._random import as_generator
from ._validation import (
    Interval,
    as_float_matrix,
    check_environments,
    check_options,
    environment_labels,
    feature_names,
    input_columns,
    reference_position,
    split_environment_column,
)
from .dimension import select_n_latent
from .exceptions import FitQualityWarning, IdentifiabilityWarning, WeakEvidenceWarning
from .independence import SCORER_OPTIONS, SCORERS
from .options import EARLIER_KEYWORDS, OrderingOptions, RefineOptions
from .pruning import PRUNING_RULES
from .sem import sem_noise

__all__ = ["CREATOR", "FitQualityWarning", "IdentifiabilityWarning", "OrderingOptions",
           "RefineOptions", "WeakEvidenceWarning"]

class _InitSignature:
    """The class's signature is its ``__init__``'s (``__new__`` only checks keywords)."""

    def __get__(self, obj, cls):
        if obj is not None:
            raise AttributeError("__signature__")
        sig = inspect.signature(cls.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])


def _check_earlier_keywords(params: dict, owner: str) -> None:
    """A ``TypeError`` naming the current spelling of an earlier constructor keyword."""
    for key in params:
        if key in EARLIER_KEYWORDS:
            raise TypeError(
                f"{owner} has no parameter {key!r}: it is {EARLIER_KEYWORDS[key]} "
                "(creator_plugin.OrderingOptions / RefineOptions; "
                "creator_plugin.options.upgrade_parameters translates a dict of them).")


class _ListFitTransform:
    """``fit_transform`` outside scikit-learn's automatic output wrapping.

    ``set_output`` wraps the return value of a ``fit_transform`` defined on a
    ``TransformerMixin`` subclass as one container; CREATOR's is a list for
    list input, so it wraps each environment itself.
    """

    def fit_transform(self, X, y=None, *, environments=None):
        """Fit, then return the latents.

        Returns a list of ``(n_k, d)`` arrays for list input, and one
        ``(n, d)`` array in the row order of ``X`` when ``environments`` is
        given; with ``set_output(transform="pandas")`` DataFrames with
        columns ``L1..Ld`` and the input's index.
        """
        self.fit(X, environments=environments)
        if environments is None:
            return wrap_latent_list(self, [L.copy() for L in self.latents_], X)
        return self.transform(split_environment_column(X, environments)[0])


class CREATOR(_ListFitTransform, TransformerMixin, BaseEstimator):
    """Linear causal representation learning from multiple environments.

    CREATOR (Causal REpresentation leArning via Topological ORdering, pruning
    and disentanglement) recovers d latent features and their causal DAG
    from K environments generated as ``x = H y``, ``y = W_k^T y + Omega_k z``
    with a shared DAG and mixing ``H``, environment-specific weights and
    non-Gaussian noise: the paper's three steps (order the latents by ICA
    candidates and an independence score, prune the complete DAG, disentangle
    by subspace intersection), then the optional ``refine`` steps. The result
    is identified up to the surrounded-node equivalence: latent labels are
    arbitrary and a feature may mix in parents that surround it (docs/model.md).

    Parameters
    ----------
    n_latent : int or "auto"
        Number of latent features d; ``"auto"`` chooses it from the data
        (:func:`creator_plugin.select_n_latent`; the evidence is
        ``diagnostics_["n_latent_selection"]``).
    scorer : {"ica_consistency", "hsic", "hsic_rff"}, default="ica_consistency"
        The ordering's score of ICA candidates (:mod:`creator_plugin.independence`):
        consistency as a source across environments (fast; the most accurate
        measured), the paper's exact HSIC, or a linear-time approximation.
    ordering : OrderingOptions or None, default=None
        Re-estimation, polish, FastICA and scorer settings of the ordering
        (:class:`creator_plugin.OrderingOptions`; None: its defaults).
    pruning : {"residual", "rank", "rank_raw"}, default="residual"
        Edge rule on scale-free coefficients (:func:`creator_plugin.pruning.prune`);
        ``"rank_raw"``, the paper's rank test on raw coefficients, switches the
        whole fit to the paper's mode (:meth:`paper`).
    prune_threshold : float or "auto", default="auto"
        The rule's level; ``"auto"``: ``0.2 * sqrt(K / 5)`` for
        ``"residual"``, 0.2 for the rank rules.
    disentangle : {"evidence", "subspace"}, default="evidence"
        Inside a surrounded intersection, weight its directions by the
        evidence that every subspace shares them, or project the feature's own
        coordinate onto it (the paper's convention).
    refine : "auto", None or RefineOptions, default="auto"
        The steps beyond the paper (:mod:`creator_plugin.refine`): graph
        revision, order branches, graph search, likelihood disentanglement,
        measurement-noise correction. ``"auto"`` runs each where it was
        measured to help; None is the core alone;
        :class:`creator_plugin.RefineOptions` sets each.
    standardize : bool, default=True
        Scale every column to unit pooled within-environment SD first.
    quality : bool, default=True
        Assess the fit: ``diagnostics_["quality"]``, and a
        :class:`~creator_plugin.FitQualityWarning` per issue found.
    quality_resamples : int, default=0
        The thorough verdict: also refit on this many bootstrap resamples
        (8 are enough; in-memory arrays only).
    random_state : int, numpy Generator, RandomState or None, default=None
        Seeds every random choice.

    Attributes
    ----------
    n_latent_ : int
    adjacency_matrix_ : ndarray (d, d) of int
        ``[i, j] == 1``: latent i -> latent j (upper triangular: latents in
        causal order, ``causal_order_`` is ``[0, ..., d-1]``); ``edge_confidence_``
        the probability of every edge, from this fit (residual pruning;
        :mod:`creator_plugin.confidence`).
    latents_ : list of ndarray (n_k, d)
        Features per environment (``transform(X_list[k])``); ``noise_`` the exogenous noises,
        ``weights_``, ``noise_scales_`` and ``intercepts_`` the SEM per environment, and
        ``changed_mechanisms_[k, i]`` whether latent i's in k differs from ``fit``'s ``reference``.
    components_ : ndarray (d, p)
        Encoder ``latent = components_ @ (x - mean_)``; ``mixing_`` the
        decoder, ``feature_sd_`` and ``feature_latent_cov_`` the loadings' parts.
    diagnostics_ : dict
        Every step's record, the verdict and the warnings (docs/model.md).

    Examples
    --------
    >>> from creator_plugin import CREATOR, simulate
    >>> sim = simulate(n_latent=3, n_environments=3, n_samples=1000, random_state=0)
    >>> model = CREATOR(n_latent=3, random_state=0).fit(sim.X)
    >>> model.adjacency_matrix_.shape
    (3, 3)

    Results: docs/results/index.md (each refine step: docs/results/refine.md).
    """

    _parameter_constraints: dict = {
        "n_latent": [Interval(Integral, 1, None, closed="left"), Options({"auto"})],
        "scorer": [Options(set(SCORERS))],
        "ordering": [OrderingOptions, None],
        "pruning": [Options(set(PRUNING_RULES))],
        "prune_threshold": [Interval(Real, 0, None, closed="left"), Options({"auto"})],
        "disentangle": [Options({"evidence", "subspace"})],
        "refine": [Options({"auto"}), RefineOptions, None],
        "standardize": ["boolean"],
        "quality": ["boolean"],
        "quality_resamples": [Interval(Integral, 0, None, closed="left")],
        "random_state": [
            Interval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState,
            np.random.Generator, None,
        ],
    }

    __signature__ = _InitSignature()

    def __new__(cls, *args, **kwargs):
        # The earlier constructor's keywords get a TypeError naming their spelling now
        # (the constructor itself takes its parameters by name, without **kwargs).
        _check_earlier_keywords(kwargs, cls.__name__)
        return super().__new__(cls)

    def __init__(
        self,
        n_latent: int | str,
        *,
        scorer: str = "ica_consistency",
        ordering: OrderingOptions | None = None,
        pruning: str = "residual",
        prune_threshold: float | str = "auto",
        disentangle: str = "evidence",
        refine: RefineOptions | str | None = "auto",
        standardize: bool = True,
        quality: bool = True,
        quality_resamples: int = 0,
        random_state=None,
    ):
        self.n_latent = n_latent
        self.scorer = scorer
        self.ordering = ordering
        self.pruning = pruning
        self.prune_threshold = prune_threshold
        self.disentangle = disentangle
        self.refine = refine
        self.standardize = standardize
        self.quality = quality
        self.quality_resamples = quality_resamples
        self.random_state = random_state

    def _validate_params(self) -> None:
        """Check every parameter (the message names it; an earlier value, its spelling now)."""
        if self.disentangle in ("auto", "likelihood"):
            raise InvalidParameterError(
                f"The 'disentangle' parameter of {type(self).__name__} must be 'evidence' or "
                f"'subspace'. Got {self.disentangle!r}: "
                + ("the default, disentangle='evidence' with refine='auto', refines the features "
                   "by the likelihood where it was measured to help."
                   if self.disentangle == "auto" else
                   "the likelihood refinement is refine=RefineOptions(disentangle=True)."))
        validate_parameters(self._parameter_constraints, self.get_params(deep=False),
                            type(self).__name__)
        refine = self.refine_options
        for name in ("revise_graph", "search_graph"):
            value = getattr(refine, name)
            if not isinstance(value, str) and value and self.pruning != "residual":
                raise ValueError(
                    f"RefineOptions({name}=True) needs pruning='residual', got "
                    f"pruning={self.pruning!r}: it flips decisions whose statistic is near the "
                    "level, and the rank rules' statistics are counts.")

    @property
    def ordering_options(self) -> OrderingOptions:
        """``ordering`` resolved: the :class:`OrderingOptions` a fit uses."""
        return OrderingOptions() if self.ordering is None else self.ordering

    @property
    def refine_options(self) -> RefineOptions:
        """``refine`` resolved: the :class:`RefineOptions` a fit uses (``"auto"``, None)."""
        if isinstance(self.refine, RefineOptions):
            return self.refine
        return RefineOptions.none() if self.refine is None else RefineOptions()

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters; with ``deep``, also ``ordering__*`` and ``refine__*``.

        The nested names are the fields of :attr:`ordering_options` and
        :attr:`refine_options` (``"auto"`` and None resolved), which
        :meth:`set_params` and a grid search accept.
        """
        params = super().get_params(deep=False)
        if deep:
            for name, options in (("ordering", self.ordering_options),
                                  ("refine", self.refine_options)):
                if isinstance(options, (OrderingOptions, RefineOptions)):
                    params.update({f"{name}__{k}": v for k, v in options.get_params().items()})
        return params

    def set_params(self, **params) -> CREATOR:
        """Set parameters; ``ordering__<field>`` and ``refine__<field>`` set one option's field.

        ``CREATOR(5).set_params(refine__revise_graph=False)`` gives
        ``refine=RefineOptions(revise_graph=False)`` (from the resolved
        options: ``refine=None`` starts from every step off). The earlier
        constructor's keywords raise a ``TypeError`` naming their spelling now.

        Returns
        -------
        self : CREATOR
        """
        _check_earlier_keywords(params, type(self).__name__)
        nested: dict[str, dict] = {}
        plain = {}
        for key, value in params.items():
            name, sep, field = key.partition("__")
            if sep:
                nested.setdefault(name, {})[field] = value
            else:
                plain[key] = value
        unknown = sorted(set(nested) - {"ordering", "refine"})
        if unknown:
            raise ValueError(f"Invalid parameter {unknown[0]!r} for estimator {self}: only "
                             "ordering__<field> and refine__<field> are nested parameters.")
        super().set_params(**plain)
        for name, fields_ in nested.items():
            base = self.ordering_options if name == "ordering" else self.refine_options
            setattr(self, name, base.replace(**fields_))
        return self

    @classmethod
    def paper(cls, n_latent: int, *, tau: float = 1.0, random_state=None) -> CREATOR:
        """The paper's algorithm as published, for comparison and reproduction.

        Exact-HSIC scores on the residuals measurement by measurement
        (``scorer="hsic"``), the best raw ICA candidate at every step and no
        joint polish (``ordering=OrderingOptions(n_reestimate=0, polish=False)``),
        the projection of a feature's own coordinate inside a surrounded
        intersection (``disentangle="subspace"``), the paper's rank test with
        an absolute singular-value threshold ``tau`` on the raw regression
        coefficients (``pruning="rank_raw"``), no standardisation of the
        measurements (``standardize=False``) and no step beyond the paper
        (``refine=None``).

        Parameters
        ----------
        n_latent : int
            Number of latent features d.
        tau : float, default=1.0
            The paper's singular-value threshold (its sensitivity table uses
            0.1 to 2.8).
        random_state : int, numpy Generator or None

        Returns
        -------
        CREATOR
            An unfitted estimator; ``get_params()`` shows every setting.
        """
        return cls(
            n_latent, scorer="hsic", ordering=OrderingOptions(n_reestimate=0, polish=False),
            disentangle="subspace", pruning="rank_raw", prune_threshold=tau, refine=None,
            standardize=False, random_state=random_state,
        )

    def fit(self, X, y=None, *, environments=None, reference=None) -> CREATOR:
        """Fit CREATOR to multi-environment data.

        Parameters
        ----------
        X : list of array-like (n_k, p), or array-like (n, p)
            One array per environment, or one stacked array together with
            ``environments``. float64 arrays are used without a copy and
            never modified; other real dtypes are read as float64 (data
            stored in float32 keep its rounding: columns that are exact
            combinations of others up to that rounding count as such in the
            ``n_latent`` checks). The arrays of a list may be dask arrays: every
            pass over the data then runs through dask (on a ``distributed``
            cluster if one is active) and only ``(n_k, d)`` results are
            materialised (README, "Data larger than memory").
        y : None
            Ignored (scikit-learn convention).
        environments : array-like (n,) or column name, optional
            Environment label of each row when ``X`` is a single array; when
            ``X`` is a DataFrame, the name of its column of labels (the
            other columns are the measurements).
        reference : label, optional
            The reference environment of ``changed_mechanisms_`` (for an
            interventional design, the observational one): a label of
            ``environments`` (or a position of the list ``X``). Default: the
            first of ``environment_labels_``.

        Returns
        -------
        self : CREATOR
        """
        self._validate_params()
        check_options("ordering.scorer_options", self.ordering_options.scorer_options,
                      SCORER_OPTIONS[self.scorer], "CREATOR")
        auto = isinstance(self.n_latent, str)
        X, environments = split_environment_column(X, environments)
        X_list = check_environments(X, environments, n_latent=None if auto else self.n_latent)
        names, columns = feature_names(X), input_columns(X)
        labels = environment_labels(environments, len(X_list))
        position = reference_position(reference, labels)  # checked before the fit's time
        selection = None
        if auto:
            selection = select_n_latent(
                X_list, standardize=self.standardize, random_state=self.random_state)
            X_list = check_environments(X_list, n_latent=selection.n_latent)
        n_latent = selection.n_latent if auto else self.n_latent
        if self.quality and self.quality_resamples and any(map(is_dask, X_list)):
            raise ValueError(
                "quality_resamples needs in-memory arrays (it draws rows by index); with dask "
                "arrays set quality_resamples=0 and run creator_plugin.bootstrap under a Dask "
                "backend instead.")
        config = FitConfig.from_estimator(self, n_latent, check_n_latent=not auto)
        result = fit_arrays(X_list, config, random_state=as_generator(self.random_state),
                            reference=position)
        messages = [w.render(names) for w in result.warnings]
        for w, message in zip(result.warnings, messages):
            warnings.warn(message, w.category, stacklevel=2)
        self.environment_labels_ = labels
        self.n_environments_ = len(X_list)
        self.n_features_in_ = X_list[0].shape[1]
        self.n_latent_ = n_latent
        for attr, value in (("feature_names_in_", names), ("column_names_in_", columns)):
            if value is not None:
                setattr(self, attr, value)
            elif hasattr(self, attr):
                delattr(self, attr)  # a refit on arrays has no names
        self.adjacency_matrix_ = result.adjacency
        self.causal_order_ = list(range(n_latent))
        self.components_ = result.components
        self.mixing_ = result.mixing
        self.mean_ = result.mean
        self.feature_sd_ = result.reduction.within_sd
        self.feature_latent_cov_ = result.feature_latent_cov
        self.latents_ = result.latents
        self.intercepts_ = result.sem.intercepts
        self.weights_ = result.sem.weights
        self.noise_scales_ = result.sem.noise_scales
        if result.edge_confidence is not None:
            self.edge_confidence_ = result.edge_confidence
        elif hasattr(self, "edge_confidence_"):
            del self.edge_confidence_  # a refit with a rank rule has none
        self.changed_mechanisms_ = result.changes.changed.copy()
        self.diagnostics_ = {**result.diagnostics, "warnings": messages}
        if selection is not None:
            self.diagnostics_["n_latent_selection"] = selection.to_dict()
        return self

    @property
    def noise_(self) -> list[np.ndarray]:
        """Recovered exogenous noise per environment (see the class's Attributes)."""
        check_is_fitted(self, "latents_")
        return sem_noise(self.latents_, self.intercepts_, self.weights_)

    # ------------------------------------------------------------- persistence
    def save(self, path, *, format: str = "npz") -> None:
        """Save the fitted model to ``path``, atomically.

        Parameters
        ----------
        path : str or path-like
            A new file or an existing regular file (replaced).
        format : {"npz", "joblib"}, default="npz"
            ``"npz"`` stores arrays and JSON metadata and is safe to load
            from anyone; ``"joblib"`` is a pickle, which can run code when
            loaded (see :meth:`load`).
        """
        from .persistence import save

        check_is_fitted(self, "components_")
        save(self, path, format=format)

    @classmethod
    def load(cls, path, *, allow_pickle: bool = False) -> CREATOR:
        """Load a model saved with :meth:`save`.

        Parameters
        ----------
        path : str or path-like
        allow_pickle : bool, default=False
            Also accept ``format="joblib"`` files. Loading a pickle runs code
            chosen by whoever wrote the file: only for files you trust.

        Raises
        ------
        ValueError
            The file is empty, corrupt, truncated, of another format, or a
            pickle while ``allow_pickle`` is False; the message names it.
        """
        from .persistence import load

        return load(path, allow_pickle=allow_pickle, cls=cls)

    # --------------------------------------------------------------- transform
    def _check_X(self, X, name: str = "X", n_cols: int | None = None) -> np.ndarray:
        if isinstance(X, (list, tuple)) and X and all(np.ndim(x) == 2 for x in X):
            raise ValueError(
                f"{name} is a list of {len(X)} arrays; this method maps one array of rows "
                f"(n, {n_cols or self.n_features_in_}) from any environment. For one result "
                "per environment call it on each: "
                f"[model.{'inverse_transform' if name == 'L' else 'transform'}(x) for x in "
                f"{'L_list' if name == 'L' else 'X_list'}].")
        if name == "X":
            check_input_names(self, X)
        arr = as_float_matrix(X, name)
        n_cols = self.n_features_in_ if n_cols is None else n_cols
        if arr.shape[1] != n_cols:
            raise ValueError(f"{name} has {arr.shape[1]} columns; the model expects {n_cols}.")
        return arr

    def transform(self, X):
        """Map samples (of any environment) to the latent features.

        Parameters
        ----------
        X : array-like or DataFrame (n, p)
            A DataFrame's column names must be the training columns' names
            (``column_names_in_``, whatever their type) in their order; an
            error names any column missing or unexpected.

        Returns
        -------
        ndarray (n, d), or a DataFrame with columns ``L1..Ld`` under
        ``set_output(transform="pandas")``
        """
        check_is_fitted(self, "components_")
        arr = self._check_X(X)
        return (arr - self.mean_) @ self.components_.T

    def inverse_transform(self, L):
        """Map latent features back to observation space.

        Parameters
        ----------
        L : array-like or DataFrame (n, d)
            String column names, if any, must be ``L1..Ld`` in order.

        Returns
        -------
        ndarray (n, p), or, under ``set_output(transform="pandas")``, a
        DataFrame with columns ``feature_names_in_`` (``x0..x{p-1}`` for a
        model fitted on arrays) and ``L``'s index.
        """
        check_is_fitted(self, "mixing_")
        check_latent_names(self, L)
        values = self._check_X(L, "L", self.n_latent_) @ self.mixing_.T + self.mean_
        return wrap_observations(self, values, L)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the latent features, ``L1..Ld``.

        Parameters
        ----------
        input_features : array-like of str, optional
            Checked against ``feature_names_in_`` (or ``n_features_in_``), as
            scikit-learn does; it does not change the output.

        Returns
        -------
        ndarray (d,) of str
        """
        check_is_fitted(self, "components_")
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            fitted = getattr(self, "feature_names_in_", None)
            if len(given) != self.n_features_in_ or (
                fitted is not None and np.any(given != fitted)
            ):
                raise ValueError("input_features is not equal to feature_names_in_.")
        return latent_names(self.n_latent_)
