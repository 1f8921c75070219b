"""The CREATOR estimator: validates, calls the fit's numerics, holds the result."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ._fit import fit_arrays
from ._random import as_generator
from ._validation import Interval, _as_float_matrix, check_environments, check_options
from .exceptions import IdentifiabilityWarning, WeakEvidenceWarning
from .independence import SCORER_OPTIONS, SCORERS
from .pruning import PRUNING_RULES

__all__ = ["CREATOR", "IdentifiabilityWarning", "WeakEvidenceWarning"]

_ICA_CONSTRAINTS = {
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "fun": [StrOptions({"logcosh", "exp", "cube"})],
}


class CREATOR(TransformerMixin, BaseEstimator):
    """Linear causal representation learning from multiple environments.

    CREATOR (Causal REpresentation leArning via Topological ORdering, pruning
    and disentanglement) recovers d latent features and their causal DAG
    from K environments generated as ``x = H y``, ``y = W_k^T y + Omega_k z``
    with a shared DAG, shared mixing ``H``, environment-specific weights and
    non-Gaussian noise. The result is identified up to the surrounded-node
    equivalence: latent labels are arbitrary, and recovered feature i may be
    a mix of the true feature and its *surrounding* parents (parents whose
    children include all of i's children; for a childless node that is every
    parent).

    Parameters
    ----------
    n_latent : int
        Number of latent features d (``1 <= d <= p``).
    scorer : {"ica_consistency", "hsic", "hsic_rff"}, default="ica_consistency"
        How the ordering step scores ICA candidates
        (:mod:`creator_plugin.independence`). ``"ica_consistency"`` measures
        whether a candidate is a pure ICA source in every environment (fast;
        the most accurate in the benchmarks); ``"hsic"`` is the paper's
        exact-HSIC score on the measurements (``O(n^2)`` per test, the slow
        reference); ``"hsic_rff"`` a linear-time HSIC approximation.
    n_refine : int, default=3
        After scoring the ICA candidates of a step, re-estimate the
        ``n_refine`` best ones that extract different sources from all
        environments jointly (:func:`creator_plugin.ordering.joint_direction`),
        re-score them and keep the best. With ``scorer="ica_consistency"``
        the candidates include the minima of the consistency score reached
        from every ICA candidate
        (:func:`creator_plugin.ordering.consistency_descent`), which combine
        the environments' ICA estimates. ``0`` keeps the best raw
        candidate, as the paper does.
    polish : bool, default=True
        Once the order is found, re-estimate all the ordering step's
        directions jointly, keeping the order
        (:func:`creator_plugin.ordering.polish_directions`): with the order
        fixed the model is one structured ICA shared by all environments,
        and fitting every direction at once stops the errors of early
        directions from leaking into later ones. Its contrast adds a
        skewness term to the log-cosh negentropy. The paper has no such
        step.
    pruning : {"residual", "rank", "rank_raw"}, default="residual"
        Edge decision rule (:func:`creator_plugin.pruning.prune`).
        ``"residual"`` and ``"rank"`` (the paper's rank test) work on
        scale-free, standardised coefficients; ``"rank_raw"`` is the paper's
        rank test on the raw coefficients, which depends on how each
        direction happens to be scaled.
    prune_threshold : float or "auto", default="auto"
        Level of the pruning rule. For ``"residual"``: an edge must move the
        child's noise by more than this many of its SDs per SD of the
        parent's innovation (RMS over environments). For ``"rank"`` and
        ``"rank_raw"``: the paper's tau, the singular value below which a
        direction does not count towards a rank. ``"auto"`` is
        :func:`creator_plugin.pruning.default_threshold`: ``0.2 * sqrt(K /
        5)`` for ``"residual"`` (0.2 at K = 5 environments, growing with K),
        0.2 for the rank rules. BENCHMARKS.md shows the sensitivity of each
        rule to its level.
    standardize : bool, default=True
        Scale every observed column to unit pooled within-environment SD
        before the shared PCA, which makes the fit invariant to column units.
    ica_options : dict or None, default=None
        FastICA settings of the ordering step: ``"max_iter"`` (default
        400), ``"tol"`` (1e-5) and ``"fun"`` (``"logcosh"``, ``"exp"`` or
        ``"cube"``; default ``"logcosh"``). Unknown keys are an error.
    scorer_options : dict or None, default=None
        Options of the scorer (:data:`creator_plugin.independence.SCORER_OPTIONS`):
        ``"hsic_rff"`` takes ``"n_features"`` (random frequencies, default
        16) and ``"max_samples"`` (row subsample per environment, default
        5000, None for all rows); the other scorers take none. Unknown keys
        are an error.
    weak_evidence_level : float in [0, 1], default=0.1
        If the best ordering score of a step, divided by K, exceeds this
        value, the candidate is far from a pure source in some environments
        (typically Gaussian or nearly Gaussian noise) and a
        :class:`WeakEvidenceWarning` is issued. Only used with
        ``scorer="ica_consistency"``, whose score is on a 0..K scale.
    random_state : int, numpy Generator, RandomState or None, default=None
        Seeds every random choice (ICA initialisations, randomised scorers).

    Attributes
    ----------
    adjacency_matrix_ : ndarray (d, d) of int
        ``[i, j] == 1`` means latent i -> latent j. Latents are numbered in
        the order the ordering step found them, so the matrix is strictly
        upper triangular.
    causal_order_ : list of int
        A topological order of the DAG (``[0, ..., d-1]`` by the numbering).
    latents_ : list of ndarray (n_k, d)
        Recovered latent features per environment; ``latents_[k] ==
        transform(X_list[k])``.
    noise_ : list of ndarray (n_k, d)
        Recovered exogenous noise per environment: residual of each
        (environment-centred) latent on its estimated parents.
    weights_ : list of ndarray (d, d)
        Per-environment SEM weights, ``[i, j]`` = effect of latent i on
        latent j, estimated by OLS on the recovered latents.
    noise_scales_ : list of ndarray (d,)
        Per-environment SD of ``noise_``.
    intercepts_ : list of ndarray (d,)
        Per-environment latent means (the latents are not centred per
        environment; the SEM holds for ``latents_[k] - intercepts_[k]``).
    components_ : ndarray (d, p)
        Encoder: ``latent = components_ @ (x - mean_)``.
    mixing_ : ndarray (p, d)
        Decoder: ``x ~= mean_ + mixing_ @ latent`` (least squares on the
        training data; ``components_ @ mixing_ == I``).
    mean_ : ndarray (p,)
        Pooled mean of the training data.
    diagnostics_ : dict
        ``"ordering"``: per step the candidate scores, their environments,
        the chosen candidate; ``"polish"``: the joint re-estimation's
        contrast before and after, its iterations and whether it was kept
        (None when off); ``"pruning"``: statistic, threshold and
        decision for every pair; ``"explained_variance"``: pooled spectrum;
        ``"n_ica_not_converged"``; ``"warnings"``: messages issued by fit.
    n_environments_ : int
    n_features_in_ : int
    environment_labels_ : list
        Labels of the environments (indices for list input).

    See Also
    --------
    CREATOR.paper : the paper's algorithm as published (a preset).
    creator_plugin.simulate : the paper's synthetic workload with ground truth.
    creator_plugin.metrics.evaluate : SHD, LocR^2 and topological divergence.

    References
    ----------
    Hao Chen, Lin Liu and Yu Guang Wang. "Linear Causal Representation
    Learning by Topological Ordering, Pruning, and Disentanglement".
    International Conference on Machine Learning (ICML), 2026.

    Examples
    --------
    >>> from creator_plugin import CREATOR, simulate
    >>> sim = simulate(n_latent=3, n_environments=3, n_samples=1000, random_state=0)
    >>> model = CREATOR(n_latent=3, random_state=0).fit(sim.X)
    >>> model.adjacency_matrix_.shape
    (3, 3)
    >>> [L.shape for L in model.latents_]
    [(1000, 3), (1000, 3), (1000, 3)]
    """

    _parameter_constraints: dict = {
        "n_latent": [Interval(Integral, 1, None, closed="left")],
        "scorer": [StrOptions(set(SCORERS))],
        "n_refine": [Interval(Integral, 0, None, closed="left")],
        "polish": ["boolean"],
        "pruning": [StrOptions(set(PRUNING_RULES))],
        "prune_threshold": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "standardize": ["boolean"],
        "ica_options": [dict, None],
        "scorer_options": [dict, None],
        "weak_evidence_level": [Interval(Real, 0, 1, closed="both")],
        "random_state": [
            Interval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState,
            np.random.Generator, None,
        ],
    }

    def __init__(
        self,
        n_latent: int,
        *,
        scorer: str = "ica_consistency",
        n_refine: int = 3,
        polish: bool = True,
        pruning: str = "residual",
        prune_threshold: float | str = "auto",
        standardize: bool = True,
        ica_options: dict | None = None,
        scorer_options: dict | None = None,
        weak_evidence_level: float = 0.1,
        random_state=None,
    ):
        self.n_latent = n_latent
        self.scorer = scorer
        self.n_refine = n_refine
        self.polish = polish
        self.pruning = pruning
        self.prune_threshold = prune_threshold
        self.standardize = standardize
        self.ica_options = ica_options
        self.scorer_options = scorer_options
        self.weak_evidence_level = weak_evidence_level
        self.random_state = random_state

    @classmethod
    def paper(cls, n_latent: int, *, tau: float = 1.0, random_state=None) -> CREATOR:
        """The paper's algorithm as published, for comparison and reproduction.

        Exact-HSIC scores on the residuals measurement by measurement
        (``scorer="hsic"``), the best raw ICA candidate at every step
        (``n_refine=0``), no joint polish (``polish=False``), the paper's
        rank test with an absolute singular-value threshold ``tau`` on the raw
        regression coefficients (``pruning="rank_raw"``), and no
        standardisation of the measurements (``standardize=False``).

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
            n_latent, scorer="hsic", n_refine=0, polish=False, pruning="rank_raw",
            prune_threshold=tau, standardize=False, random_state=random_state,
        )

    def fit(self, X, y=None, *, environments=None) -> CREATOR:
        """Fit CREATOR to multi-environment data.

        Parameters
        ----------
        X : list of array-like (n_k, p), or array-like (n, p)
            One array per environment, or one stacked array together with
            ``environments``.
        y : None
            Ignored (scikit-learn convention).
        environments : array-like (n,), optional
            Environment label of each row when ``X`` is a single array.

        Returns
        -------
        self : CREATOR
        """
        self._validate_params()
        ica_options = check_options("ica_options", self.ica_options, _ICA_CONSTRAINTS, "CREATOR")
        scorer_options = check_options(
            "scorer_options", self.scorer_options, SCORER_OPTIONS[self.scorer], "CREATOR"
        )
        X_list = check_environments(X, environments, n_latent=self.n_latent)
        result = fit_arrays(
            X_list, self.n_latent, scorer=self.scorer, pruning=self.pruning,
            prune_threshold=self.prune_threshold, standardize=self.standardize,
            n_refine=self.n_refine, polish=self.polish, ica_options=ica_options,
            scorer_options=scorer_options, weak_evidence_level=self.weak_evidence_level,
            random_state=as_generator(self.random_state),
        )
        for w in result.warnings:
            warnings.warn(w.message, w.category, stacklevel=2)
        if environments is not None:
            self.environment_labels_ = np.unique(np.asarray(environments).ravel()).tolist()
        else:
            self.environment_labels_ = list(range(len(X_list)))
        self.n_environments_ = len(X_list)
        self.n_features_in_ = X_list[0].shape[1]
        self.adjacency_matrix_ = result.adjacency
        self.causal_order_ = list(range(self.n_latent))
        self.components_ = result.components
        self.mixing_ = result.mixing
        self.mean_ = result.mean
        self.latents_ = result.latents
        self.intercepts_ = result.sem.intercepts
        self.weights_ = result.sem.weights
        self.noise_ = result.sem.noise
        self.noise_scales_ = result.sem.noise_scales
        self.diagnostics_ = {**result.diagnostics, "warnings": [w.message for w in result.warnings]}
        return self

    # ------------------------------------------------------------- persistence
    def save(self, path) -> None:
        """Save the fitted model to ``path`` (joblib, written atomically)."""
        from .persistence import save

        check_is_fitted(self, "components_")
        save(self, path)

    @classmethod
    def load(cls, path) -> CREATOR:
        """Load a model saved with :meth:`save`; only load files you trust."""
        from .persistence import load

        model = load(path)
        if not isinstance(model, cls):
            raise TypeError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}.")
        return model

    # --------------------------------------------------------------- transform
    def _check_X(self, X, name: str = "X", n_cols: int | None = None) -> np.ndarray:
        arr = _as_float_matrix(X, name)
        n_cols = self.n_features_in_ if n_cols is None else n_cols
        if arr.shape[1] != n_cols:
            raise ValueError(f"{name} has {arr.shape[1]} columns; the model expects {n_cols}.")
        return arr

    def transform(self, X) -> np.ndarray:
        """Map samples (of any environment) to the latent features.

        Parameters
        ----------
        X : array-like (n, p)

        Returns
        -------
        ndarray (n, d)
        """
        check_is_fitted(self, "components_")
        return (self._check_X(X) - self.mean_) @ self.components_.T

    def inverse_transform(self, L) -> np.ndarray:
        """Map latent features back to observation space.

        Parameters
        ----------
        L : array-like (n, d)

        Returns
        -------
        ndarray (n, p)
        """
        check_is_fitted(self, "mixing_")
        return self._check_X(L, "L", self.n_latent) @ self.mixing_.T + self.mean_

    def fit_transform(self, X, y=None, *, environments=None):
        """Fit, then return the latents.

        Returns a list of ``(n_k, d)`` arrays for list input, and one
        ``(n, d)`` array in the row order of ``X`` when ``environments`` is
        given.
        """
        self.fit(X, environments=environments)
        if environments is None:
            return [L.copy() for L in self.latents_]
        return self.transform(X)
