"""The CREATOR estimator: composes preprocessing, ordering, pruning, disentanglement."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import _as_float_matrix, check_environments, check_n_latent
from .disentangle import disentangling_matrix
from .independence import SCORERS
from .ordering import topological_ordering
from .preprocessing import reduce_environments
from .pruning import PRUNING_RULES, prune, regression_matrices, standardised_coefficients

__all__ = ["CREATOR", "IdentifiabilityWarning", "WeakEvidenceWarning"]

_DEFAULT_THRESHOLD = {"residual": 0.2, "rank": 1.0}


class IdentifiabilityWarning(UserWarning):
    """Fewer environments than the identifiability condition needs."""


class WeakEvidenceWarning(UserWarning):
    """The data carry little evidence for the recovered order (e.g. Gaussian noise)."""


def _pooled_sd(arrays: list[np.ndarray]) -> np.ndarray:
    """Pooled SD of per-environment centred columns."""
    ss = sum(((a - a.mean(axis=0)) ** 2).sum(axis=0) for a in arrays)
    return np.sqrt(ss / sum(a.shape[0] for a in arrays))


def _ols_weights(Y: np.ndarray, adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SEM weights ``W[j, i]`` (j -> i) and residuals of centred latents ``Y``."""
    d = Y.shape[1]
    W = np.zeros((d, d))
    E = Y.copy()
    for i in range(d):
        pa = np.flatnonzero(adjacency[:, i])
        if pa.size:
            coef, *_ = np.linalg.lstsq(Y[:, pa], Y[:, i], rcond=None)
            W[pa, i] = coef
            E[:, i] = Y[:, i] - Y[:, pa] @ coef
    return W, E


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
        How the ordering step scores ICA candidates. ``"hsic"`` is the
        paper's exact-HSIC score (O(n^2) per test, the slow reference);
        ``"ica_consistency"`` measures whether a candidate is a pure ICA
        source in every environment (fast and the most accurate in our
        benchmarks); ``"hsic_rff"`` is a linear-time HSIC approximation.
    pruning : {"residual", "rank"}, default="residual"
        Edge decision rule; see :func:`creator_plugin.pruning.prune`. Both
        work on scale-free coefficients.
    prune_threshold : float or None, default=None
        Level of the pruning rule. ``None`` means 0.2 for ``"residual"``
        (an edge must move the child's noise by at least 0.2 of its SD per SD
        of the parent's innovation, RMS over environments) and 1.0 for
        ``"rank"`` (the paper's tau, applied to the standardised matrix).
    standardize : bool, default=True
        Scale every observed column to unit pooled within-environment SD
        before the shared PCA, which makes the fit invariant to column units.
    ica_max_iter : int, default=400
        Maximum FastICA iterations per fit.
    ica_tol : float, default=1e-5
        FastICA tolerance.
    ica_fun : {"logcosh", "exp", "cube"}, default="logcosh"
        FastICA contrast function.
    scorer_options : dict or None, default=None
        Extra keyword arguments for the scorer, e.g. ``{"n_features": 16,
        "max_samples": 5000}`` for ``"hsic_rff"`` (random frequencies, and
        the row subsample per environment).
    weak_evidence_level : float, default=0.1
        If the best ordering score of a step, divided by K, exceeds this
        value, the candidate is far from a pure source in some environments
        (typically Gaussian or nearly Gaussian noise) and a
        :class:`WeakEvidenceWarning` is issued. Only used with
        ``scorer="ica_consistency"``, whose score is on a 0..K scale.
    n_refine : int or None, default=None
        After scoring the ICA candidates, re-estimate the ``n_refine`` best
        ones (distinct sources) from all environments jointly
        (:func:`creator_plugin.ordering.joint_direction`), re-score them and
        keep the best. ``None`` means 3, except with ``scorer="hsic"``, where
        it means 0 so that the paper's algorithm runs unchanged (the
        reference of the speed benchmark). At d=7, K=7, n=1000 refinement
        cuts the mean SHD from 5.1 to about 1.8 (BENCHMARKS.md).
    polish : bool or None, default=None
        Once the order is found, re-estimate all the ordering step's
        directions jointly, keeping the order
        (:func:`creator_plugin.ordering.polish_directions`): with the order
        fixed the model is one structured ICA shared by all environments,
        and fitting every direction at once stops the errors of early
        directions from leaking into later ones. ``None`` means True, except
        with ``scorer="hsic"`` (the paper's algorithm, unchanged). At d=5,
        K=5, n=1000 it cuts the mean SHD from 0.54 to 0.18 and at d=7, K=7
        from 1.80 to 1.28 (50 seeds, BENCHMARKS.md), for about 0.05 s per
        fit at n=1000 and about 3 s at n=10^5.
    random_state : int, numpy Generator or None, default=None
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
    creator_plugin.simulate : the paper's synthetic workload with ground truth.
    creator_plugin.metrics.evaluate : SHD, LocR^2 and topological divergence.

    References
    ----------
    The CREATOR paper (``shared/paper/creator_paper.tex``).

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

    def __init__(
        self,
        n_latent: int,
        *,
        scorer: str = "ica_consistency",
        pruning: str = "residual",
        prune_threshold: float | None = None,
        standardize: bool = True,
        ica_max_iter: int = 400,
        ica_tol: float = 1e-5,
        ica_fun: str = "logcosh",
        scorer_options: dict | None = None,
        weak_evidence_level: float = 0.1,
        n_refine: int | None = None,
        polish: bool | None = None,
        random_state=None,
    ):
        self.n_latent = n_latent
        self.scorer = scorer
        self.pruning = pruning
        self.prune_threshold = prune_threshold
        self.standardize = standardize
        self.ica_max_iter = ica_max_iter
        self.ica_tol = ica_tol
        self.ica_fun = ica_fun
        self.scorer_options = scorer_options
        self.weak_evidence_level = weak_evidence_level
        self.n_refine = n_refine
        self.polish = polish
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        check_n_latent(self.n_latent)
        if self.scorer not in SCORERS:
            raise ValueError(f"scorer must be one of {sorted(SCORERS)}, got {self.scorer!r}.")
        if self.pruning not in PRUNING_RULES:
            raise ValueError(f"pruning must be one of {PRUNING_RULES}, got {self.pruning!r}.")
        t = self.prune_threshold
        if t is not None and (
            isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t) or t < 0
        ):
            raise ValueError(f"prune_threshold must be a finite number >= 0 or None, got {t!r}.")
        if self.ica_fun not in ("logcosh", "exp", "cube"):
            raise ValueError(f"ica_fun must be 'logcosh', 'exp' or 'cube', got {self.ica_fun!r}.")
        v = self.ica_max_iter
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"ica_max_iter must be a positive integer, got {v!r}.")
        if not (isinstance(self.ica_tol, numbers.Real) and self.ica_tol > 0):
            raise ValueError(f"ica_tol must be a positive number, got {self.ica_tol!r}.")
        r = self.n_refine
        if r is not None and (isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 0):
            raise ValueError(f"n_refine must be a non-negative integer or None, got {r!r}.")
        if self.polish is not None and not isinstance(self.polish, (bool, np.bool_)):
            raise ValueError(f"polish must be True, False or None, got {self.polish!r}.")
        if self.scorer_options is not None and not isinstance(self.scorer_options, dict):
            raise TypeError("scorer_options must be a dict or None.")

    def _seed(self) -> int:
        rs = self.random_state
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(2**31 - 1))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(2**31 - 1))
        if rs is None:
            return int(np.random.default_rng().integers(2**31 - 1))
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return int(rs)
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got {rs!r}.")

    # --------------------------------------------------------------------- fit
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
        self._check_params()
        X_list = check_environments(X, environments, n_latent=self.n_latent)
        if environments is not None:
            self.environment_labels_ = np.unique(np.asarray(environments).ravel()).tolist()
        else:
            self.environment_labels_ = list(range(len(X_list)))
        d = self.n_latent
        K = len(X_list)
        messages = []

        def warn(msg: str, category) -> None:
            messages.append(msg)
            warnings.warn(msg, category, stacklevel=3)

        if K < d:
            warn(
                f"Only K={K} environments for n_latent={d}: the identifiability theorem needs "
                "K >= d; nodes with K or more parents cannot be recovered.",
                IdentifiabilityWarning,
            )
        X_red, red = reduce_environments(X_list, d, standardize=self.standardize)
        if red.dropped_columns.size:
            warn(
                f"Columns {red.dropped_columns.tolist()} are constant within every environment "
                "and were ignored.",
                UserWarning,
            )
        if red.unrelated_columns.size:
            warn(
                f"Columns {red.unrelated_columns.tolist()} are nearly unrelated to the other "
                "columns (pooled R^2 < 0.1): probably noise, not measurements of the latents. "
                "After standardisation they weigh as much as the others and can displace a "
                "latent direction; remove them (or use standardize=False).",
                UserWarning,
            )
        n_refine = (0 if self.scorer == "hsic" else 3) if self.n_refine is None else self.n_refine
        polish = (self.scorer != "hsic") if self.polish is None else bool(self.polish)
        order = topological_ordering(
            X_red,
            scorer=self.scorer,
            random_state=self._seed(),
            ica_max_iter=self.ica_max_iter,
            ica_tol=self.ica_tol,
            ica_fun=self.ica_fun,
            scorer_options=self.scorer_options,
            n_refine=int(n_refine),
            polish=polish,
        )
        # Unit pooled variance for the entangled features: fixes their arbitrary scale.
        alphas = order.alphas / _pooled_sd(order.entangled)
        entangled = [x @ alphas for x in X_red]
        threshold = (
            _DEFAULT_THRESHOLD[self.pruning] if self.prune_threshold is None
            else float(self.prune_threshold)
        )
        Bstd = standardised_coefficients(order.noises, entangled)
        adjacency, decisions = prune(Bstd, rule=self.pruning, threshold=threshold)
        B = regression_matrices(order.noises, entangled)
        C = disentangling_matrix(B, adjacency)
        # Sign and scale convention: unit pooled within-environment variance and
        # positive pooled covariance with the entangled feature of the same position.
        Yc = [y @ C for y in entangled]
        sd = _pooled_sd(Yc)
        cov = sum((y * yc).sum(axis=0) for y, yc in zip(entangled, Yc))
        C = C * (np.where(cov < 0, -1.0, 1.0) / sd)
        T = alphas @ C  # reduced coordinates -> latents

        self.mean_ = np.vstack(X_list).mean(axis=0)
        self.components_ = ((red.projection / red.scale[:, None]) @ T).T
        self.latents_ = [(x - self.mean_) @ self.components_.T for x in X_list]
        pooled_L = np.vstack(self.latents_)
        pooled_X = np.vstack(X_list) - self.mean_
        self.mixing_ = np.linalg.lstsq(pooled_L, pooled_X, rcond=None)[0].T

        self.adjacency_matrix_ = adjacency
        self.causal_order_ = list(range(d))
        self.intercepts_ = [L.mean(axis=0) for L in self.latents_]
        self.weights_, self.noise_, self.noise_scales_ = [], [], []
        for L, mu in zip(self.latents_, self.intercepts_):
            W, E = _ols_weights(L - mu, adjacency)
            self.weights_.append(W)
            self.noise_.append(E)
            self.noise_scales_.append(E.std(axis=0))
        self.n_environments_ = K
        self.n_features_in_ = X_list[0].shape[1]

        max_indeg = int(adjacency.sum(axis=0).max()) if d > 1 else 0
        if K <= max_indeg:
            warn(
                f"A recovered node has {max_indeg} parents but only K={K} environments: "
                "node-level non-degeneracy needs K >= in-degree + 1, so that node's parent "
                "set and feature are not identified.",
                IdentifiabilityWarning,
            )
        if order.n_ica_not_converged:
            warn(
                f"{order.n_ica_not_converged} FastICA fits did not converge "
                f"(ica_max_iter={self.ica_max_iter}); consider raising ica_max_iter.",
                UserWarning,
            )
        weak_steps = []
        if self.scorer == "ica_consistency":
            weak_steps = [
                s["step"] for s in order.steps[:-1]
                if s["best_score"] / K > self.weak_evidence_level
            ]
            if weak_steps:
                warn(
                    f"Weak evidence for the causal order at steps {weak_steps}: the best "
                    "candidate is not a consistent independent source across environments "
                    "(noise may be Gaussian or nearly so). The order, graph and features may "
                    "be unreliable; see diagnostics_['ordering'].",
                    WeakEvidenceWarning,
                )
        self.diagnostics_ = {
            "ordering": order.steps,
            "pruning": decisions,
            "pruning_rule": self.pruning,
            "prune_threshold": threshold,
            "explained_variance": red.explained_variance.tolist(),
            "dropped_columns": red.dropped_columns.tolist(),
            "unrelated_columns": red.unrelated_columns.tolist(),
            "n_ica_not_converged": order.n_ica_not_converged,
            "polish": order.polish,
            "weak_ordering_steps": weak_steps,
            "warnings": messages,
        }
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
