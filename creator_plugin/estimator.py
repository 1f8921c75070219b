"""The CREATOR estimator: validates, calls the fit's numerics, holds the result."""

from __future__ import annotations

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
from ._params import Options, validate_parameters
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
    split_environment_column,
)
from .dimension import select_n_latent
from .exceptions import FitQualityWarning, IdentifiabilityWarning, WeakEvidenceWarning
from .independence import SCORER_OPTIONS, SCORERS
from .pruning import PRUNING_RULES
from .sem import sem_noise

__all__ = ["CREATOR", "FitQualityWarning", "IdentifiabilityWarning", "WeakEvidenceWarning"]

_ICA_CONSTRAINTS = {
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "fun": [Options({"logcosh", "exp", "cube"})],
}


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
    with a shared DAG, shared mixing ``H``, environment-specific weights and
    non-Gaussian noise. The result is identified up to the surrounded-node
    equivalence: latent labels are arbitrary, and recovered feature i may be
    a mix of the true feature and its *surrounding* parents (parents whose
    children include all of i's children; for a childless node that is every
    parent).

    Parameters
    ----------
    n_latent : int or "auto"
        Number of latent features d (``1 <= d <= p``). ``"auto"`` chooses it
        from the data with :func:`creator_plugin.select_n_latent` (the
        choice is ``n_latent_``, its evidence
        ``diagnostics_["n_latent_selection"]``; with more than 60 columns
        its tests use a column subset seeded by ``random_state``).
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
        the environments' ICA estimates; a re-estimate that extracts another
        ICA source than its start in some environment and scores worse than
        the start is replaced by the start (the step's ``kept_starts`` in
        ``diagnostics_["ordering"]``). ``0`` keeps the best raw candidate, as
        the paper does.
    refine_min_sources : int, default=4
        Re-estimate jointly only at the first ordering step and at the steps
        with at least this many sources left; at the other steps keep the
        best-scored candidate as it is (the polish re-estimates every
        direction afterwards). 2 re-estimates at every step but the last,
        which has one source; with three or two sources left that cost about
        a tenth of a d = 5 fit for no gain in accuracy.
    polish : bool, default=True
        Once the order is found, re-estimate all the ordering step's
        directions jointly, keeping the order
        (:func:`creator_plugin.ordering.polish_directions`): with the order
        fixed the model is one structured ICA shared by all environments,
        and fitting every direction at once stops the errors of early
        directions from leaking into later ones. Its contrast adds a
        skewness term to the log-cosh negentropy. The paper has no such
        step.
    disentangle : {"auto", "evidence", "subspace", "likelihood"}, default="auto"
        Step 3. Every option intersects the subspaces of the pruning's
        regression rows (:func:`creator_plugin.disentangle.disentangling_matrix`),
        as the paper does; they differ inside a surrounded intersection,
        where the data cannot identify the feature. ``"subspace"`` takes the
        projection of the entangled feature's own coordinate onto the
        intersection, the paper's convention. ``"evidence"`` weights each
        direction of that projection by the evidence that every subspace
        shares it, so a surrounding parent made up by one extra edge does
        not take over the feature (``disentangling_matrix(...,
        evidence=True)``); in the population both give the same feature.
        On simulated data not used to design it, ``"evidence"`` lowered the
        mean SHD at d = 10 (3.56 to 1.66 over 80 fits; 3.10 to 1.32 over
        40 on a simulator written apart from the package) and left d = 5
        about where it was (0.45 to 0.44 over 300 fits of six workload
        families) (docs: accuracy, "Why does the disentanglement weight the
        directions of an intersection?").
        ``"likelihood"`` starts from the ``"evidence"`` intersection and
        maximises the Gaussian likelihood of the pruned SEM in all
        environments at once over the disentangling matrix
        (:func:`creator_plugin.disentangle.refine_disentangling`, BFGS at
        the graph revision's tolerance), falling back to the intersection
        when the refinement leans on later positions more than on the
        feature's own (:data:`creator_plugin.disentangle.LATER_WEIGHT_LEVEL`),
        the sign of an edge the pruning missed. Where the graph is right it
        removes the share of another latent that a feature can carry (which
        shows where the feature's own latent is quiet and can make the
        benchmark's matching relabel a right graph). On 220 fresh data sets
        at d = 8, 10 and 12 it lowered the mean SHD from 0.36 to 0.28 (two
        better, one worse) and raised the mean LocR² from 0.981 to 0.992, at
        no measurable cost in time; at d = 5 it lowered LocR² in every
        workload family of the zoo and made four of 360 tuning fits worse
        (docs: accuracy, "Features refined by the likelihood of their
        graph"). ``"auto"`` takes ``"likelihood"`` when 8 <= d <= 12
        (:data:`creator_plugin.disentangle.AUTO_LIKELIHOOD_LATENTS`), there are
        at least as many environments as latents and ``pruning="residual"``,
        and ``"evidence"`` otherwise; ``diagnostics_["disentangle"]`` holds the
        refinement's record when it ran (None otherwise). With
        ``pruning="rank_raw"`` (the paper's preset) the option is ignored and
        the paper's intersection of the raw coefficients is used.
    pruning : {"residual", "rank", "rank_raw"}, default="residual"
        Edge decision rule (:func:`creator_plugin.pruning.prune`).
        ``"residual"`` and ``"rank"`` (the paper's rank test) work on
        scale-free, standardised coefficients; ``"rank_raw"`` is the paper's
        rank test on the raw coefficients, which depends on how each
        direction happens to be scaled. ``"rank_raw"`` is the switch to the
        paper's mode as a whole, not only a pruning rule: the ordering then
        keeps every direction as ICA returned it (no canonical sign and
        scale) and the disentanglement intersects the row spaces of the same
        raw coefficients, as the paper's Algorithms 1-3 do.
        :meth:`CREATOR.paper` is this mode with the paper's other settings.
    prune_threshold : float or "auto", default="auto"
        Level of the pruning rule. For ``"residual"``: an edge must move the
        child's noise by more than this many of its SDs per SD of the
        parent's innovation (RMS over environments). For ``"rank"`` and
        ``"rank_raw"``: the paper's tau, the singular value below which a
        direction does not count towards a rank. ``"auto"`` is
        :func:`creator_plugin.pruning.default_threshold`: ``0.2 * sqrt(K /
        5)`` for ``"residual"`` (0.2 at K = 5 environments, growing with K),
        0.2 for the rank rules. docs/results/accuracy.md shows the sensitivity of each
        rule to its level.
    revise_graph : {"auto", True, False}, default="auto"
        After the pruning, revise the decisions near the level
        (statistic within a factor 1.5 of it) by how well the disentangled
        features follow the graph: greedy single flips while a penalised
        Gaussian likelihood of the SEM over the graph in every environment,
        maximised over the disentangling matrix, drops (BIC's penalty of K
        weights per edge; :func:`creator_plugin.revision.revise_graph`).
        The order is kept; the features are then disentangled for the
        revised graph as ``disentangle`` says. Flipped decisions carry
        ``"revised": True`` in ``diagnostics_["pruning"]`` and the search is
        recorded in ``diagnostics_["graph_revision"]`` (None when the step
        did not run). ``"auto"`` (the default) revises with
        ``pruning="residual"`` and at least four environments
        (:data:`creator_plugin.revision.REVISION_MIN_ENVIRONMENTS`), and not
        with the rank rules, whose statistics are counts (so not in the
        paper's mode); True revises at any number of environments and with a
        rank rule is an error; False skips the step. A search scores at most
        :data:`creator_plugin.revision.REVISION_MAX_SCORES` graphs (with
        many decisions near the level it stops early and says so in
        ``diagnostics_["graph_revision"]["stopped"]``). On simulated data not used to design
        it (fresh seeds), it lowered the mean SHD of six workload families
        at d = 5 from 0.41 to 0.36 (600 data sets, two simulators) and at
        d = 10 from 1.04 to 0.35 and from 1.14 to 0.69 (80 data sets on
        each of two simulators), at 1.2 times the time of a fit without it
        (docs: the zoo, "The graph revision"). With two or three
        environments it removed right edges more often than it mended wrong
        ones (900 fresh data sets at d = 2 to 4: mean SHD 0.014 lower
        without it), hence the four-environment minimum of ``"auto"``.
    order_branches : int or "auto", default="auto"
        Fit the model again with the ordering's ``order_branches`` closest
        calls taken the other way, one at a time, and keep the model whose
        features follow their graph best. A close call is a step whose best
        and runner-up re-estimated directions (different ones) have the
        nearest consistency scores (:func:`creator_plugin.ordering.close_calls`);
        each branch repeats the fit from the same random state with that
        step's runner-up, so it costs about one more fit. The models are
        compared by the penalised Gaussian likelihood of the SEM over each
        model's graph in every environment, maximised over the features
        from the fitted ones (:func:`creator_plugin.revision.fitted_score`,
        the graph revision's criterion); a branch must score lower by more
        than rounding. The search is recorded in
        ``diagnostics_["order_branches"]`` (base and branch scores, the
        chosen model, 0 the unbranched one; None without branches). It
        needs the ordering's re-estimation (``n_refine > 0``): the paper's
        mode has no close calls to branch on. With ``quality_resamples``
        every resample's fit branches too (the check repeats the fit as it
        was asked for). ``"auto"`` takes two branches when 7 <= d <= 15
        (:data:`creator_plugin.ordering.AUTO_BRANCH_LATENTS`) and there are
        at least d environments, and none otherwise; 0 turns branching
        off. On simulated data not used to design it (two blocks of fresh
        seeds, two simulators), two branches moved the mean SHD at
        d = K = 10 from 1.05 to 0.63 on one simulator and from 0.64 to 0.63
        on the other (160 data sets each), at d = K = 7 from 0.21 to 0.18
        and from 0.39 to 0.27 (100 each), and at d = K = 15 from 3.55 to
        2.15 (20 data sets, one simulator), at about three times the time
        of a fit; at d = 5 they did not help, and with fewer environments
        than latents they changed nothing on average (docs: accuracy, "the
        ordering's close calls taken the other way").
    search_graph : {"auto", True, False}, default="auto"
        After the disentanglement, revise the finished graph by the score
        ``order_branches`` compares models by: greedy single flips of the
        pairs whose pruning statistic is within a factor 3 of the level
        (:data:`creator_plugin.revision.SEARCH_BAND`), each graph scored by
        the penalised Gaussian likelihood of the SEM over it with the
        disentangling matrix refined from the fitted features
        (:func:`creator_plugin.revision.search_graph`), while the score
        drops. Unlike ``revise_graph``, which scores each graph from its
        own intersection with the refinement's guard, every graph here
        starts from the same fitted features, so a missed edge the features
        absorb shows as a large drop in the score. When a flip is taken,
        the features are disentangled again for the new graph. Every model
        of ``order_branches`` is searched before the models are compared.
        Flipped decisions carry ``"searched": True`` in
        ``diagnostics_["pruning"]``, and the search is recorded in
        ``diagnostics_["graph_search"]`` (None when it did not run).
        ``"auto"`` searches with ``pruning="residual"`` when 8 <= d <= 12
        (:data:`creator_plugin.revision.AUTO_SEARCH_LATENTS`) and there are
        at least d environments; True searches at any d (with a rank rule it
        is an error); False skips it. Each graph scored costs one likelihood
        refinement. On simulated data not used to design it (fresh seeds,
        two simulators) it lowered the mean SHD at d = 8, 10 and 12 from
        0.55 to 0.30 (220 data sets; 40 better, 3 worse), at about twice
        the time of a fit; at d = 5 it made fits worse and at
        d = 7 it changed nothing on tuning data (docs: accuracy, "the
        finished graph searched").
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
    measurement_noise : {"auto", None}, default=None
        Gaussian noise on the measurements themselves (``x = H y + e``),
        which biases every regression the fit makes on the recovered
        features (errors in variables). ``"auto"`` estimates every
        column's noise variance in every environment from the variance the
        reduction to ``n_latent`` dimensions discards, and takes the noise's
        share out of the second moments read after the ordering's search:
        the polish, the canonical directions and noises, the pruning's
        regressions and the likelihood disentanglement (the order found by
        the search is kept). It applies only when the data have more
        columns than ``n_latent`` (otherwise nothing is discarded and the
        fit is exactly the one without it) and not in paper mode. An
        estimate larger than an environment's data allow is shrunk so that
        every corrected covariance stays positive definite
        (:mod:`creator_plugin.measurement_noise`); the estimates are in
        ``diagnostics_["measurement_noise"]``, with every recovered SEM
        noise's estimated share of measurement noise per environment and
        node (``"noise_shares"``, :func:`creator_plugin.measurement_noise.noise_shares`)
        and the smallest share left to the signal (``"min_signal_share"``). None (the default): no
        correction. On 100 simulated data sets with 5 % measurement noise
        (p = 4d, two simulators) it lowered the mean SHD from 0.79 to 0.58
        (docs/results/zoo.md, "Data with measurement noise"); on earlier
        blocks, before the graph revision was a default, it changed little,
        so it is not on by default.
    weak_evidence_level : float in [0, 1], default=0.1
        If the best ordering score of a step, divided by K, exceeds this
        value, the candidate is far from a pure source in some environments
        (typically Gaussian or nearly Gaussian noise) and a
        :class:`WeakEvidenceWarning` is issued. Only used with
        ``scorer="ica_consistency"``, whose score is on a 0..K scale.
    quality : bool, default=True
        Assess the fit (:func:`creator_plugin.quality.assess_fit`): are the
        data non-Gaussian, do the environments differ, is every recovered
        noise an independent source of every environment, does ``n_latent``
        agree with the data? The verdict, with a plain-language summary, is
        ``diagnostics_["quality"]``, and every issue found is issued as a
        :class:`~creator_plugin.FitQualityWarning`. It adds a fraction of
        the fit's time (docs/results/verdict.md).
    quality_resamples : int, default=0
        With ``quality=True``, the thorough verdict: also refit on this
        many bootstrap resamples of the rows (within environments) and raise
        an ``"unstable_result"`` issue when the graph changes by half an
        edge per latent or more on average
        (:func:`creator_plugin.stability.resample_stability`), and use the
        lower level :data:`creator_plugin.quality.THOROUGH_DISAGREEMENT_LEVEL`
        (up to five latents; see :func:`creator_plugin.quality.order_levels`)
        in the ICA-agreement check. It catches most of the wrong fits the
        cheap verdict misses (a near-tie in the order, imprecise features),
        at the cost of ``quality_resamples`` more fits and more false alarms
        (docs/results/verdict.md); 8 resamples are
        enough. 0 (the default) skips it. It needs in-memory arrays: for
        dask arrays use :func:`creator_plugin.bootstrap` with a Dask backend.
    random_state : int, numpy Generator, RandomState or None, default=None
        Seeds every random choice (ICA initialisations, randomised scorers,
        the verdict's simulated references).

    Attributes
    ----------
    n_latent_ : int
        The number of latent features fitted (``n_latent``, or the choice of
        ``n_latent="auto"``).
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
        (environment-centred) latent on its estimated parents,
        ``(latents_[k] - intercepts_[k]) @ (I - weights_[k])``. Computed from
        those attributes on access rather than stored, so a fitted model
        keeps one ``(n_k, d)`` array per environment (``latents_``), not two.
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
    feature_sd_ : ndarray (p,)
        Pooled within-environment SD of every training column.
    feature_latent_cov_ : ndarray (p, d)
        Pooled within-environment covariance of every training column with
        every latent. With ``feature_sd_`` it gives the standardised
        loadings (:func:`creator_plugin.interpret.loadings`).
    diagnostics_ : dict
        ``"ordering"``: per step the candidate scores, their environments,
        the chosen candidate; ``"polish"``: the joint re-estimation's
        contrast before and after, its iterations and whether it was kept
        (None when off); ``"pruning"``: statistic, threshold and
        decision for every pair; ``"explained_variance"``: pooled spectrum;
        ``"n_ica_not_converged"``; ``"disentangle"``: the likelihood
        refinement of the features (the criterion at its start and end, its
        iterations, the guard's ``"later_weight"`` and whether the refined
        matrix was ``"kept"``; None when it did not run); ``"graph_revision"``,
        ``"graph_search"`` and ``"order_branches"``: the steps of those
        parameters (None when they did not run); ``"quality"``: the
        fit-quality verdict
        (``"summary"``, ``"issues"``, ``"checks"``; absent with
        ``quality=False``); ``"n_latent_selection"``: the evidence of
        ``n_latent="auto"`` (absent otherwise); ``"warnings"``: messages
        issued by fit.
    n_environments_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray (p,) of str
        Column names, when every environment was a DataFrame with string
        column names (only then, as in scikit-learn).
    column_names_in_ : list
        Column names of the training DataFrames whatever their type
        (strings, integers, floats, booleans, tuples of a MultiIndex);
        absent for arrays. Environments whose DataFrames list the same
        columns in another order are matched by name (other column sets are
        an error); ``transform`` checks a DataFrame's columns against them,
        and model files keep them.
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

    Notes
    -----
    pandas follows scikit-learn's conventions: ``transform`` checks the
    column names of a DataFrame against ``feature_names_in_`` (against
    ``column_names_in_`` for names of other types) and raises a
    ``ValueError`` naming them when they are permuted, missing or unseen
    (select ``X[model.feature_names_in_]``); ``get_feature_names_out()``
    gives the latent names ``L1..Ld`` (the node names of the adapters);
    ``set_output(transform="pandas")`` makes ``transform`` and
    ``fit_transform`` return DataFrames with those columns, and
    ``inverse_transform`` a DataFrame whose columns are the training
    columns (``x0..x{p-1}`` for a model fitted on arrays).

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
        "n_latent": [Interval(Integral, 1, None, closed="left"), Options({"auto"})],
        "scorer": [Options(set(SCORERS))],
        "n_refine": [Interval(Integral, 0, None, closed="left")],
        "refine_min_sources": [Interval(Integral, 2, None, closed="left")],
        "polish": ["boolean"],
        "disentangle": [Options({"auto", "subspace", "likelihood", "evidence"})],
        "pruning": [Options(set(PRUNING_RULES))],
        "revise_graph": [Options({"auto"}), "boolean"],
        "order_branches": [Options({"auto"}), Interval(Integral, 0, None, closed="left")],
        "search_graph": [Options({"auto"}), "boolean"],
        "prune_threshold": [Interval(Real, 0, None, closed="left"), Options({"auto"})],
        "standardize": ["boolean"],
        "ica_options": [dict, None],
        "scorer_options": [dict, None],
        "measurement_noise": [Options({"auto"}), None],
        "weak_evidence_level": [Interval(Real, 0, 1, closed="both")],
        "quality": ["boolean"],
        "quality_resamples": [Interval(Integral, 0, None, closed="left")],
        "random_state": [
            Interval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState,
            np.random.Generator, None,
        ],
    }

    def __init__(
        self,
        n_latent: int | str,
        *,
        scorer: str = "ica_consistency",
        n_refine: int = 3,
        refine_min_sources: int = 4,
        polish: bool = True,
        disentangle: str = "auto",
        pruning: str = "residual",
        prune_threshold: float | str = "auto",
        revise_graph: bool | str = "auto",
        order_branches: int | str = "auto",
        search_graph: bool | str = "auto",
        standardize: bool = True,
        ica_options: dict | None = None,
        scorer_options: dict | None = None,
        measurement_noise: str | None = None,
        weak_evidence_level: float = 0.1,
        quality: bool = True,
        quality_resamples: int = 0,
        random_state=None,
    ):
        self.n_latent = n_latent
        self.scorer = scorer
        self.n_refine = n_refine
        self.refine_min_sources = refine_min_sources
        self.polish = polish
        self.disentangle = disentangle
        self.pruning = pruning
        self.prune_threshold = prune_threshold
        self.revise_graph = revise_graph
        self.order_branches = order_branches
        self.search_graph = search_graph
        self.standardize = standardize
        self.ica_options = ica_options
        self.scorer_options = scorer_options
        self.measurement_noise = measurement_noise
        self.weak_evidence_level = weak_evidence_level
        self.quality = quality
        self.quality_resamples = quality_resamples
        self.random_state = random_state

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints`` (a message naming it)."""
        validate_parameters(self._parameter_constraints, self.get_params(deep=False),
                            type(self).__name__)

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
            n_latent, scorer="hsic", n_refine=0, polish=False, disentangle="subspace",
            pruning="rank_raw", prune_threshold=tau, standardize=False,
            random_state=random_state,
        )

    def fit(self, X, y=None, *, environments=None) -> CREATOR:
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

        Returns
        -------
        self : CREATOR
        """
        self._validate_params()
        for name in ("revise_graph", "search_graph"):
            value = getattr(self, name)
            if not isinstance(value, str) and value and self.pruning != "residual":
                raise ValueError(
                    f"{name}=True needs pruning='residual', got pruning={self.pruning!r}: it "
                    "flips decisions whose statistic is near the level, and the rank rules' "
                    "statistics are counts.")
        ica_options = check_options("ica_options", self.ica_options, _ICA_CONSTRAINTS, "CREATOR")
        scorer_options = check_options(
            "scorer_options", self.scorer_options, SCORER_OPTIONS[self.scorer], "CREATOR"
        )
        auto = isinstance(self.n_latent, str)
        X, environments = split_environment_column(X, environments)
        X_list = check_environments(X, environments, n_latent=None if auto else self.n_latent)
        names, columns = feature_names(X), input_columns(X)
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
        config = FitConfig.from_estimator(
            self, n_latent, ica_options=ica_options, scorer_options=scorer_options,
            check_n_latent=not auto)
        result = fit_arrays(X_list, config, random_state=as_generator(self.random_state))
        messages = [w.render(names) for w in result.warnings]
        for w, message in zip(result.warnings, messages):
            warnings.warn(message, w.category, stacklevel=2)
        self.environment_labels_ = environment_labels(environments, len(X_list))
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
