"""The numerics of one CREATOR fit: named stages over validated arrays.

:class:`creator_plugin.CREATOR` validates its input and parameters once,
builds a :class:`creator_plugin._config.FitConfig`, calls :func:`fit_arrays`
and copies the :class:`FitResult` into its fitted attributes; warnings come
back as data (:class:`FitWarning`) and the estimator issues them.

:func:`fit_arrays` is the paper's steps in a line, each reading its
arithmetic from its own module:

0. the shared reduction (:mod:`.preprocessing`) and
1. the topological ordering (:mod:`.ordering`), together
   :func:`order_stage`, whose result (:class:`OrderingStage`) can be computed
   once and handed to several fits that differ only after it
   (``fit_arrays(..., ordering=stage)``);
2. the pruning (:mod:`.pruning`);
3. the disentanglement (:mod:`.disentangle`);
4. the encoding and the SEM (:mod:`._passes`, :mod:`.sem`);
5. the fit-quality verdict (:mod:`.quality`, :mod:`.stability`).

The optional steps of :mod:`creator_plugin.refine` enter at marked places:
the measurement-noise correction after the reduction and the ordering, the
graph revision between steps 2 and 3, the likelihood disentanglement inside
step 3, the graph search after it, and the order branches around steps 1-3.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from . import clamped, confidence, sparse_changes
from ._config import ICA_DEFAULTS, FitConfig
from ._passes import MappedArrays, encode, is_dask, project
from ._random import as_generator, draw_seed
from .disentangle import encoder, intersection
from .exceptions import FitQualityWarning, IdentifiabilityWarning, WeakEvidenceWarning
from .ordering import OrderingResult, topological_ordering
from .preprocessing import Reduction, reduce_environments
from .pruning import PrunedGraph, default_threshold, prune_ordering, standardised_coefficients
from .quality import (
    AGREEMENT_MAX_SAMPLES,
    ISSUE_KINDS,
    Issue,
    Verdict,
    assess_fit,
    ica_agreement,
    order_levels,
    with_undecided,
)
from .refine import graph_search, likelihood, measurement_noise, order_branches, revision
from .refine.measurement_noise import MeasurementNoise
from .sem import SEMParameters, feature_moments, pooled_sd, regression_matrices, sem_parameters
from .stability import resample_stability

__all__ = ["ICA_DEFAULTS", "FitConfig", "FitResult", "FitWarning", "OrderingStage",
           "data_key", "fit_arrays", "order_stage"]


@dataclass(frozen=True)
class FitWarning:
    """A warning a fit wants issued: its category and message.

    A message about input columns says ``{columns}`` where they belong and
    lists their positions in ``columns``; :meth:`render` names them.
    """

    category: type[Warning]
    message: str
    columns: tuple[int, ...] = ()

    def render(self, feature_names=None) -> str:
        """The message, naming its columns by ``feature_names`` (positions if None)."""
        if not self.columns:
            return self.message
        cols = [int(c) for c in self.columns]
        if feature_names is not None:
            cols = [str(feature_names[c]) for c in cols]
        return self.message.replace("{columns}", str(cols))


@dataclass
class FitResult:
    """Everything one fit computes (see :class:`creator_plugin.CREATOR` for meanings).

    Attributes
    ----------
    adjacency : ndarray (d, d) of int
        ``[i, j] == 1`` iff ``i -> j``, strictly upper triangular.
    components : ndarray (d, p)
        Encoder, ``latent = components @ (x - mean)``.
    mixing : ndarray (p, d)
        Decoder (least squares on the training data).
    feature_latent_cov : ndarray (p, d)
        Pooled within-environment covariance of every column with every
        latent (divisor ``N``; from the decoder's cross products, no second
        pass).
    mean : ndarray (p,)
        Pooled mean of the data.
    latents : list of ndarray (n_k, d)
    sem : SEMParameters
        Per-environment intercepts, weights and noise scales (the noises
        themselves: :func:`creator_plugin.sem.sem_noise`).
    reduction : Reduction
        The shared reduction to d dimensions.
    ordering : OrderingResult
        Directions, noises and per-step diagnostics of the ordering step.
    entangled : list of ndarray (n_k, d), or None
        Entangled features ``X_red @ ordering.alphas``, scaled to unit pooled
        within-environment SD (the arrays of ``ordering.entangled``); None
        (and ``ordering.noises`` None) unless ``FitConfig.keep_features``.
    coefficients : ndarray (K, d, d)
        The coefficients the pruning rule tested (standardised, or in paper
        mode, :attr:`FitConfig.paper_mode`, the paper's raw ones, which the
        disentanglement then also uses, as the paper does).
    decisions : list of dict
        Every pruning decision.
    warnings : list of FitWarning
        What the estimator should warn about.
    diagnostics : dict
        The estimator's ``diagnostics_`` without its ``"warnings"`` entry.
    edge_confidence : ndarray (d, d) or None
        ``[i, j]``: the probability that ``i -> j`` is an edge
        (:mod:`.confidence`; None for the rank rules).
    changes : creator_plugin.sparse_changes.MechanismChanges or None
        Which latents' mechanisms differ from the reference environment's.
    """

    adjacency: np.ndarray
    components: np.ndarray
    mixing: np.ndarray
    feature_latent_cov: np.ndarray
    mean: np.ndarray
    latents: list[np.ndarray]
    sem: SEMParameters
    reduction: Reduction
    ordering: OrderingResult
    entangled: list[np.ndarray]
    coefficients: np.ndarray
    decisions: list[dict]
    warnings: list[FitWarning] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)
    edge_confidence: np.ndarray | None = None
    changes: sparse_changes.MechanismChanges | None = None


@dataclass(frozen=True)
class OrderingStage:
    """The reduction and the ordering of a fit, re-usable by fits that differ only after them.

    Built by :func:`order_stage`; ``fit_arrays(X_list, config, ordering=stage,
    random_state=r)`` then skips both steps and gives exactly the fit it
    would have computed, provided the data, the settings the ordering
    depends on (:attr:`FitConfig.ordering_settings`) and the random state on
    entry are those the stage was computed with (checked; a mismatch is a
    ``ValueError``). The paper's tau table uses this: one ordering per
    (data, seed), ten thresholds.

    Attributes
    ----------
    reduction : Reduction
    reduced : tuple of ndarray (n_k, d)
        The reduced data (read-only).
    ordering : OrderingResult
    settings : tuple
        :attr:`FitConfig.ordering_settings` of the config it was computed with.
    data_key : str
        A digest of the data (:func:`data_key`).
    state_before, state_after : dict
        The random generator's state on entry and after the ordering.
    noise : MeasurementNoise or None
        The estimated measurement noise (``config.measurement_noise="auto"``
        and more columns than latents), which the later steps correct for.
    """

    reduction: Reduction
    reduced: tuple
    ordering: OrderingResult
    settings: tuple
    data_key: str
    state_before: dict
    state_after: dict
    noise: MeasurementNoise | None = None


def data_key(X_list: list) -> str:
    """A SHA-256 digest of the environments' shapes and values (dask: their tokens)."""
    h = hashlib.sha256()
    for x in X_list:
        h.update(repr(x.shape).encode())
        h.update(str(x.name).encode() if is_dask(x) else memoryview(np.ascontiguousarray(x)))
    return h.hexdigest()


def order_stage(
    X_list: list[np.ndarray], config: FitConfig, random_state=None, *, key: bool = True,
    step_choices: dict | None = None,
) -> OrderingStage:
    """Steps 0 and 1: the shared reduction, then the topological ordering.

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        Validated environments (never modified).
    config : FitConfig
    random_state : int, Generator or None
        Seeds the reduction and the ordering (a Generator is advanced).
    key : bool, default=True
        Record a digest of the data (one pass over it), so that
        :func:`fit_arrays` can check a re-used stage.
    step_choices : dict, optional
        ``{step: rank}``: take another way at those steps of the ordering
        (:func:`creator_plugin.ordering.topological_ordering`).

    Returns
    -------
    OrderingStage
    """
    rng = as_generator(random_state)
    before = rng.bit_generator.state
    X_red, red = reduce_environments(
        X_list, config.n_latent, standardize=config.standardize, random_state=rng)
    noise = None
    if config.measurement_noise:  # refine
        noise = measurement_noise.estimate_measurement_noise(X_list, X_red, red)
    # The search overwrites X_red with its residuals and projects the data again afterwards.
    to_reduced = red.projection / red.scale[:, None]
    ica = config.ica_options
    order = topological_ordering(
        X_red, scorer=config.scorer, random_state=rng, ica_max_iter=ica["max_iter"],
        ica_tol=ica["tol"], ica_fun=ica["fun"],
        scorer_options=dict(config.ordering.scorer_options),
        n_reestimate=config.ordering.n_reestimate,
        reestimate_min_sources=config.ordering.reestimate_min_sources,
        polish=config.ordering.polish and noise is None,
        canonical=not config.paper_mode,
        measurement_basis=np.linalg.pinv(red.projection) if config.scorer == "hsic" else None,
        materialize=False,
        reload=lambda k: project([X_list[k]], red.env_means[k], to_reduced)[0],
        step_choices=step_choices,
    )
    if noise is not None:  # refine
        order = measurement_noise.corrected_ordering(order, X_red, noise,
                                                     polish=config.ordering.polish)
    for x in X_red:
        x.setflags(write=False)
    return OrderingStage(red, tuple(X_red), order, config.ordering_settings,
                         data_key(X_list) if key else "", before, rng.bit_generator.state,
                         noise)


def fit_arrays(
    X_list: list[np.ndarray],
    config: FitConfig,
    *,
    ordering: OrderingStage | None = None,
    random_state: int | np.random.Generator | None = None,
    reference: int = 0,
) -> FitResult:
    """Run CREATOR's stages on validated arrays.

    No validation happens here: ``X_list`` must be what
    :func:`creator_plugin._validation.check_environments` returns and the
    config must come from validated parameters.

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        One float array per environment; never modified or copied (read
        in blocks of rows; dask arrays are read through dask and only
        ``(n_k, d)`` results are computed).
    config : FitConfig
    ordering : OrderingStage, optional
        Steps 0 and 1 computed before by :func:`order_stage` on the same
        data, settings and random state (checked).
    random_state : int, Generator or None
        Seeds the ordering step, then the resamples of the verdict's
        stability check, then its randomised checks.
    reference : int, default=0
        The reference environment of the mechanism changes
        (:mod:`creator_plugin.sparse_changes`).

    Returns
    -------
    FitResult
    """
    K = len(X_list)
    rng = as_generator(random_state)
    ordering = _stage(X_list, config, rng, ordering, reference)  # steps 0-1: reduce, order
    if isinstance(ordering, FitResult):  # every environment clamped: the clamped reading
        return ordering
    changes = sparse_changes.mechanism_changes(ordering.reduced, ordering.ordering.alphas,
                                               reference)
    route = _route(config, changes, ordering)
    threshold, holder = _threshold(config, K, route), [ordering]
    del ordering  # _models holds the stage only while it needs it
    if route == "sparse":  # steps 2-3 for sparse changes (creator_plugin.sparse_changes)
        model, branches = _sparse_structure(holder.pop(), config, changes, threshold), None
    else:
        model, branches = _models(X_list, config, holder, threshold)  # 2-3: prune, disentangle
    red, noise = model.stage.reduction, model.stage.noise
    evidence = _confidence(model, config, threshold, route == "paper")  # uncertainty
    n_rows = np.array([x.shape[0] for x in model.stage.reduced])
    mean = n_rows @ red.env_means / int(n_rows.sum())
    model = replace(model, stage=None)  # only d x d results from here on: room for the latents
    latents, mixing, feature_latent_cov = _encode_decode(  # step 4: encode
        X_list, mean, model.components, red)
    sem = sem_parameters(latents, model.graph.adjacency)
    edges, agreement = _edge_confidence(evidence, latents, K, config.quality)  # with doubt
    diagnostics, found = _diagnostics(model, config, threshold, red, branches, K)
    diagnostics.update({"edge_confidence": evidence} if evidence else {})
    diagnostics["mechanism_changes"] = _changes_record(changes, route, latents, model)
    if noise is not None:
        diagnostics["measurement_noise"] = _noise_record(noise, model.components, red, sem)
    if config.quality:  # step 5: the verdict (the default's issues unless the check passed)
        verdict = _verdict_stage(X_list, latents, model.graph, model.order, config, threshold,
                                 rng, reference=reference, agreement=agreement,
                                 route_check=diagnostics["mechanism_changes"].get("route_check"))
        if edges is not None:  # named in the summary, never an issue
            verdict = with_undecided(verdict, confidence.undecided_pairs(edges))
        diagnostics["quality"] = verdict.to_dict()
        found += [
            FitWarning(FitQualityWarning, f"{ISSUE_KINDS[kind]}: " + " ".join(
                i.message for i in verdict.issues if i.kind == kind))
            for kind in verdict.kinds
        ]
    return FitResult(
        model.graph.adjacency, model.components, mixing, feature_latent_cov, mean, latents, sem,
        red, model.order, model.entangled, model.graph.tested, model.graph.decisions, found,
        diagnostics, edges, changes,
    )


def _stage(X_list: list, config: FitConfig, rng, ordering: OrderingStage | None,
           reference: int):
    """The given stage (checked), or :func:`order_stage`, or when every environment is
    clamped (its own data vary in fewer than d directions) the clamped reading's fit
    (:mod:`creator_plugin.clamped`). Other refusals stand."""
    if ordering is not None:
        _resume(ordering, X_list, config, rng)
        return ordering
    try:
        return order_stage(X_list, config, rng, key=False)
    except ValueError as exc:
        ranks = getattr(exc, "environment_ranks", None)
        if ranks is None or max(ranks) >= config.n_latent:
            raise
        return _clamped_fit(X_list, config, ranks, reference)


def _clamped_fit(X_list: list, config: FitConfig, ranks: list[int],
                 reference: int) -> FitResult:
    """A fit by the clamped reading (:mod:`creator_plugin.clamped`): latents, no graph."""
    d, K = config.n_latent, len(X_list)
    X_red, red = reduce_environments(X_list, d, standardize=config.standardize,
                                     check_environment_ranks=False)
    subspaces = clamped.environment_subspaces(X_red, ranks, d)
    used = [k for k, s in enumerate(subspaces) if s is not None]
    columns, sources = clamped.mixing_columns([subspaces[k] for k in used], d)
    to_reduced = red.projection / red.scale[:, None]
    components = clamped.reduced_encoder(columns, d) @ to_reduced.T
    n_rows = np.array([x.shape[0] for x in X_red])
    mean = n_rows @ red.env_means / int(n_rows.sum())
    latents, mixing, feature_latent_cov = _encode_decode(X_list, mean, components, red)
    sd = np.sqrt(sum(((L - L.mean(axis=0)) ** 2).sum(axis=0) for L in latents) / n_rows.sum())
    sd = np.where(sd > 0, sd, 1.0)  # unit pooled within-environment SD, mixing columns positive
    signs = np.sign(mixing[np.argmax(np.abs(mixing), axis=0), np.arange(d)])
    signs = np.where(signs == 0, 1.0, signs)
    scale = signs / sd  # the encoding is linear: rescale its outputs, not the data again
    components, latents = components * scale[:, None], [L * scale for L in latents]
    mixing, feature_latent_cov = mixing / scale, feature_latent_cov * scale
    adjacency = np.zeros((d, d), dtype=int)
    sem = sem_parameters(latents, adjacency)
    cells = clamped.clamped_cells(latents)
    changed = clamped.changed_cells(latents, cells, reference)
    zeros = np.zeros((K, d))
    changes = sparse_changes.MechanismChanges(
        reference, changed, cells, np.where(changed, np.inf, 0.0), zeros.astype(int),
        np.where(changed, 0.0, 1.0), float(changed[np.arange(K) != reference].mean())
        if K > 1 else 0.0)
    m = columns.shape[1]
    record = {
        "rule": "every environment's own centred data have fewer than n_latent singular "
                f"values above {clamped.ENVIRONMENT_RANK_TOL:g} of the largest",
        "environment_ranks": [int(r) for r in ranks],
        "clamped_environments": [k for k, r in enumerate(ranks) if r < d],
        "identified_latents": list(range(m)),
        "unidentified_latents": list(range(m, d)),
        "latent_sources": [used[i] for i in sources],
        "graph_identified": False,
        "angle_tol": clamped.ANGLE_TOL, "clamp_sd_tol": clamped.CLAMP_SD_TOL,
    }
    message = clamped.regime_message(cells, m, d)
    found = _environment_warnings(K, d) + _reduction_warnings(red) + [FitWarning(
        IdentifiabilityWarning, "Clamped environments: the fitted graph is empty because the "
        "data do not identify its edges" + (
            f"; latents {record['unidentified_latents']} are not identified either"
            if m < d else "") + " (diagnostics_['clamped']).")]
    diagnostics = {
        "route": "clamped", "clamped": record, "ordering": [], "pruning": [],
        "pruning_rule": config.pruning, "prune_threshold": float("nan"),
        "explained_variance": red.explained_variance.tolist(),
        "dropped_columns": red.dropped_columns.tolist(),
        "unrelated_columns": red.unrelated_columns.tolist(),
        "partly_constant_columns": red.partly_constant_columns.tolist(),
        "mechanism_changes": {**changes.to_dict(), "route": "clamped"},
    }
    if config.quality:
        regime = {"reading": "clamped", "reference": int(reference),
                  "targets": [np.flatnonzero(r).tolist() for r in changed],
                  "clamped": [np.flatnonzero(r).tolist() for r in cells],
                  "methods": ["CREATOR (clamped reading)", "pooled ICA"],
                  "identified_latents": m, "graph_identified": False}
        issue = Issue("interventional_regime", message)
        verdict = Verdict([issue], {"regime": regime}, (
            "Not trusted as a causal graph: the environments clamp latents, and the data "
            f"identify {m} of the {d} latents but no edge."))
        diagnostics["quality"] = verdict.to_dict()
        found.append(FitWarning(FitQualityWarning,
                                f"{ISSUE_KINDS['interventional_regime']}: {message}"))
    return FitResult(adjacency, components, mixing, feature_latent_cov, mean, latents, sem,
                     red, None, None, np.zeros((K, d, d)), [], found, diagnostics, None,
                     changes)


def _diagnostics(model: _Structure, config: FitConfig, threshold: float, red: Reduction,
                 branches: dict | None, K: int) -> tuple[dict, list[FitWarning]]:
    """``diagnostics_`` of a fit without its verdict, and the warnings found so far."""
    order, graph = model.order, model.graph
    weak_steps = (_weak_steps(order, K, config.ordering.weak_evidence_level)
                  if config.scorer == "ica_consistency" else [])
    found = (_environment_warnings(K, config.n_latent) + _reduction_warnings(red)
             + _structure_warnings(graph.adjacency, K)
             + _ordering_warnings(order, config, weak_steps))
    diagnostics = {
        "ordering": order.steps, "pruning": graph.decisions, "pruning_rule": config.pruning,
        "prune_threshold": float(threshold),
        "explained_variance": red.explained_variance.tolist(),
        "dropped_columns": red.dropped_columns.tolist(),
        "unrelated_columns": red.unrelated_columns.tolist(),
        "partly_constant_columns": red.partly_constant_columns.tolist(),
        "n_ica_not_converged": order.n_ica_not_converged, "polish": order.polish,
        "disentangle": model.refinement, "weak_ordering_steps": weak_steps,
        "graph_revision": model.revision, "graph_search": model.search,
        "order_branches": branches,
    }
    return diagnostics, found


def _changes_record(changes, route: str, latents, model: _Structure) -> dict:
    """``diagnostics_["mechanism_changes"]``; on the sparse route, with its route check
    (does the data confirm what the route's graph rests on?)."""
    record = {**changes.to_dict(), "route": route}
    if route == "sparse":
        record["route_check"] = sparse_changes.route_check(latents, model.graph.adjacency,
                                                           changes)
    return record


def _confidence(model: _Structure, config: FitConfig, threshold: float,
                paper_route: bool = True):
    """The evidence of the returned graph's decisions (:mod:`.confidence`; None but for
    the residual rule on the paper's route); the latents' doubt is added once they are
    encoded."""
    if config.pruning != "residual" or not paper_route:
        return None
    stage = model.stage
    return confidence.confidence_record(stage.reduced, stage.noise, model.graph,
                                        model.order.steps, threshold,
                                        stage.reduction.explained_variance)


def _edge_confidence(evidence: dict | None, latents: list, K: int, verdict: bool):
    """``edge_confidence_`` from the evidence with the doubt of the latents' unmixing
    (:func:`.confidence.latent_doubt`, added to the evidence), None without evidence;
    and the verdict's ICA agreement when the doubt computed it for the ``verdict`` to
    read too (no environment subsampled, so the same numbers as computing it twice)."""
    if evidence is None:
        return None, None
    agreement = None
    if verdict and max(L.shape[0] for L in latents) <= min(confidence.DOUBT_MAX_SAMPLES,
                                                           AGREEMENT_MAX_SAMPLES):
        agreement = ica_agreement(latents, max_samples=None)
    evidence["doubt"] = confidence.latent_doubt(latents, agreement)
    return confidence.edge_confidence(evidence, K), agreement


def _noise_record(noise, components: np.ndarray, red, sem) -> dict:
    """``diagnostics_["measurement_noise"]``: the estimate and every SEM noise's share of it."""
    shares = measurement_noise.noise_shares(noise, components, red.scale, sem.noise_scales,
                                            sem.weights)
    return {**noise.to_dict(), "noise_shares": shares.tolist(),
            "min_signal_share": float(1.0 - shares.max())}


def _resume(stage: OrderingStage, X_list: list, config: FitConfig, rng) -> None:
    """Check that ``stage`` is this fit's steps 0 and 1, and put ``rng`` where they left it."""
    if stage.settings != config.ordering_settings:
        raise ValueError("ordering: computed with other settings of the reduction or the "
                         "ordering step than this fit's.")
    if stage.state_before != rng.bit_generator.state:
        raise ValueError("ordering: computed from another random state than this fit's.")
    if stage.data_key != data_key(X_list):
        raise ValueError("ordering: computed on other data than this fit's.")
    rng.bit_generator.state = stage.state_after


@dataclass
class _Structure:
    """Steps 2-3 of one ordering: the graph, the encoder and, for branches, their score."""

    stage: OrderingStage | None
    graph: PrunedGraph
    revision: dict | None
    search: dict | None
    components: np.ndarray
    order: OrderingResult
    entangled: list | None
    refinement: dict | None
    score: float | None = None


def _structure(stage: OrderingStage, config: FitConfig, threshold: float, *,
               score: bool = False) -> _Structure:
    """Steps 2 and 3 on one ordering stage, with the refine steps between them (and the
    fitted model's score, for the order branches)."""
    X_red, K = stage.reduced, len(stage.reduced)
    coefficients = (None if stage.noise is None  # refine: measurement noise
                    else measurement_noise.pruning_coefficients(X_red, stage.ordering,
                                                                stage.noise))
    graph = prune_ordering(X_red, stage.ordering, config.pruning, threshold,  # step 2
                           paper_mode=config.paper_mode, coefficients=coefficients)
    moments = feature_moments(MappedArrays(X_red, [graph.alphas] * K))  # steps 2b, 3
    n_rows = np.array([x.shape[0] for x in X_red])
    revises = revision.revises(config.refine.revise_graph, pruning=config.pruning,
                               n_environments=K)
    searches = graph_search.searches(config.refine.search_graph, n_latent=config.n_latent,
                                     n_environments=K, pruning=config.pruning)
    # the features' covariances, which only the refine steps read
    covariances = (likelihood.feature_covariances(X_red, stage.noise, graph.alphas, moments[1],
                                                  n_rows)
                   if revises or searches or score or _refines(config, K) else None)
    revision_record = None
    if revises:  # refine: graph revision
        graph, revision_record = _revise(graph, covariances, n_rows)
    components, order, entangled, refinement, C = _disentangle_stage(  # step 3
        stage, config, graph, moments, covariances)
    search = value = None
    if searches:  # refine: graph search
        adjacency, decisions, search = graph_search.search_decisions(
            np.einsum("ia,kij,jb->kab", C, covariances, C), n_rows, graph.adjacency,
            graph.decisions)
        graph = replace(graph, adjacency=adjacency, decisions=decisions)
        if search["flips"]:
            components, order, entangled, refinement, C = _disentangle_stage(
                stage, config, graph, moments, covariances)
        else:  # the search's first score is this model's fitted score
            value = search["scores"][0]
    if score and value is None:
        value = likelihood.fitted_score(np.einsum("ia,kij,jb->kab", C, covariances, C), n_rows,
                                        graph.adjacency)
    return _Structure(stage, graph, revision_record, search, components, order, entangled,
                      refinement, value)


def _revise(graph: PrunedGraph, covariances: np.ndarray, n_rows: np.ndarray):
    """The graph revision (refine): near-level decisions flipped by the profiled likelihood.

    Returns the revised graph (its decisions' ``"edge"`` updated, a flipped
    pair also carrying ``"revised": True``) and the search's record
    (:func:`creator_plugin.refine.revision.revise_graph`).
    """
    revised, info = revision.revise_graph(graph.B, covariances, n_rows, graph.adjacency,
                                          graph.decisions)
    decisions = revision.flipped(graph.decisions, revised, info["flips"], "revised")
    return replace(graph, adjacency=revised, decisions=decisions), info


def _disentangle_stage(stage: OrderingStage, config: FitConfig, graph: PrunedGraph,
                       moments: tuple, covariances: np.ndarray):
    """Step 3: the disentangling matrix (refined by the likelihood where asked), then the
    encoder in measurement coordinates.

    Returns the encoder (d, p), the ordering result with the rescaled
    directions, the entangled features (or None), the likelihood
    refinement's record and the disentangling matrix (the entangled
    features' coordinates).
    """
    X_red = stage.reduced
    C = intersection(X_red, stage.ordering, graph, paper_mode=config.paper_mode,
                     evidence=config.disentangle != "subspace")
    refinement = None
    if _refines(config, len(X_red)):  # refine: likelihood disentanglement
        n_rows = np.array([x.shape[0] for x in X_red])
        C, refinement = likelihood.refine_disentangling(
            C, covariances, n_rows, graph.adjacency, method="BFGS", gtol=likelihood.SCORE_GTOL)
    components, order, features, C = encoder(X_red, stage.ordering, stage.reduction, graph, C,
                                             moments, keep_features=config.keep_features)
    return components, order, features, refinement, C


def _refines(config: FitConfig, K: int) -> bool:
    """Whether step 3 refines the features by the likelihood of their graph."""
    return not config.paper_mode and likelihood.refines(
        config.refine.disentangle, n_latent=config.n_latent, n_environments=K,
        pruning=config.pruning, disentangle=config.disentangle)


def _models(X_list: list, config: FitConfig, holder: list, threshold: float):
    """Steps 2-3 on the ordering stage in ``holder`` (emptied), then the order branches.

    Each branch (refine, :mod:`creator_plugin.refine.order_branches`)
    repeats the fit from the same random state with one of the ordering's
    closest calls taken the other way; the model with the lowest fitted
    score is kept. Returns it and the record ``diagnostics_["order_branches"]``
    (None without branches). At most two orderings' reduced data are held at
    once.
    """
    n_branches = order_branches.branches(
        config.refine.order_branches, n_latent=config.n_latent, n_environments=len(X_list),
        reestimates=config.ordering.n_reestimate > 0)
    best = _structure(holder.pop(), config, threshold, score=n_branches > 0)
    if n_branches == 0:
        return best, None

    def refit(generator, step_choices):
        stage = order_stage(X_list, config, generator, key=False, step_choices=step_choices)
        return _structure(stage, config, threshold, score=True)

    return order_branches.choose(best, n_branches, refit)


def _threshold(config: FitConfig, K: int, route: str = "paper") -> float:
    if config.prune_threshold == "auto":
        if route == "sparse":
            return sparse_changes.EDGE_EFFECT_LEVEL
        return default_threshold(config.pruning, K)
    return config.prune_threshold


def _route(config: FitConfig, changes, stage: OrderingStage) -> str:
    """``"sparse"`` when steps 2-3 follow :mod:`creator_plugin.sparse_changes`, else
    ``"paper"``: sparse changes, the residual rule, no measurement-noise correction."""
    if (sparse_changes.takes_route(changes) and config.pruning == "residual"
            and stage.noise is None):
        return "sparse"
    return "paper"


def _sparse_structure(stage: OrderingStage, config: FitConfig, changes,
                      effect_level: float) -> _Structure:
    """Steps 2-3 of the sparse-change route: the graph and the encoder of its latents."""
    X_red, K = stage.reduced, len(stage.reduced)
    feature_sd = pooled_sd(MappedArrays(X_red, [stage.ordering.alphas] * K))
    alphas = stage.ordering.alphas / feature_sd  # unit pooled variance, as the pruning's
    C = sparse_changes.sparse_disentangling(X_red, alphas, changes)
    adjacency, decisions = sparse_changes.sparse_pruning(X_red, alphas, C, changes,
                                                         effect_level)
    noises, entangled = MappedArrays(X_red, stage.ordering.noise_maps), MappedArrays(
        X_red, [alphas] * K)
    B = regression_matrices(noises, entangled)
    graph = PrunedGraph(adjacency, decisions, standardised_coefficients(B, noises, entangled),
                        alphas, feature_sd, None, B)
    components, order, features, _ = encoder(X_red, stage.ordering, stage.reduction, graph, C,
                                             feature_moments(entangled),
                                             keep_features=config.keep_features)
    return _Structure(stage, graph, None, None, components, order, features, None)


def _verdict_stage(X_list, latents, graph: PrunedGraph, order, config: FitConfig, threshold,
                   rng, *, reference: int = 0, route_check: dict | None = None,
                   agreement: dict | None = None):
    """Step 5: the fit-quality verdict (with resamples when ``quality_resamples``; on the
    sparse route, the few-forms issues kept unless ``route_check`` passed)."""
    sparse_route = False if route_check is None else "confirmed" if route_check[
        "passed"] else "two forms" if route_check["two_forms"] else "unconfirmed"
    stability = None
    if config.quality_resamples:
        refit_config = config.replace(prune_threshold=threshold, quality=False,
                                      keep_features=False)

        def refit(sample, seed):
            r = fit_arrays(sample, refit_config, random_state=seed, reference=reference)
            return r.adjacency, r.mean, r.components

        stability = resample_stability(
            X_list, graph.adjacency, latents, refit, config.quality_resamples,
            random_state=draw_seed(rng))
    return assess_fit(
        latents, X=X_list if config.check_n_latent else None,
        ordering_steps=order.steps if config.scorer == "ica_consistency" else None,
        pruning=graph.decisions if config.pruning == "residual" else None,
        weak_evidence_level=config.ordering.weak_evidence_level, stability=stability,
        random_state=rng,
        sparse_route=sparse_route, agreement=agreement,
        **({"disagreement_level": order_levels(latents[0].shape[1], thorough=True)[0]}
           if config.quality_resamples else {}),
    )


def _environment_warnings(K: int, d: int) -> list[FitWarning]:
    if K >= d:
        return []
    return [FitWarning(IdentifiabilityWarning, (
        f"Only K={K} environments for n_latent={d}: the identifiability theorem needs "
        "K >= d; nodes with K or more parents cannot be recovered."))]


def _ordering_warnings(order: OrderingResult, config: FitConfig, weak_steps) -> list[FitWarning]:
    found = []
    if order.n_ica_not_converged:
        found.append(FitWarning(UserWarning, (
            f"{order.n_ica_not_converged} FastICA fits did not converge "
            f"(max_iter={config.ordering.ica_max_iter}); consider raising "
            "ordering=OrderingOptions(ica_max_iter=...).")))
    if weak_steps:
        found.append(FitWarning(WeakEvidenceWarning, (
            f"Weak evidence for the causal order at steps {weak_steps}: the best candidate is "
            "not a consistent independent source across environments (noise may be Gaussian "
            "or nearly so). The order, graph and features may be unreliable; see "
            "diagnostics_['ordering'].")))
    return found


def _encode_decode(
    X_list: list, mean: np.ndarray, components: np.ndarray, red: Reduction
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The latents, the least-squares decoder (p, d) and the covariances (p, d), in one pass.

    The decoder solves the normal equations of ``x - mean ~= mixing @ latent``
    within environments (both sides centred on each environment's own mean,
    so offsets between environments in the measurements do not bias it),
    every column divided by a unit of its own size so that the sums stay
    finite at any data scale.
    """
    spread = np.abs(red.env_means - mean).max(axis=0)
    unit = np.where(np.isfinite(red.scale), red.scale, np.where(spread > 0, spread, 1.0))
    latents, gram, cross = encode(X_list, mean, components.T, unit, red.env_means)
    n_total = sum(L.shape[0] for L in latents)
    return latents, (np.linalg.solve(gram, cross) * unit).T, (cross * unit).T / n_total


def _reduction_warnings(red: Reduction) -> list[FitWarning]:
    out = []
    if red.dropped_columns.size:
        out.append(FitWarning(UserWarning, (
            "Columns {columns} are constant within every environment and were ignored."),
            tuple(red.dropped_columns.tolist())))
    if red.unrelated_columns.size:
        out.append(FitWarning(UserWarning, (
            "Columns {columns} are nearly unrelated to the other columns (pooled R^2 < 0.1): "
            "probably noise, not measurements of the latents. After standardisation they "
            "weigh as much as the others and can displace a latent direction; remove them "
            "(or use standardize=False)."), tuple(red.unrelated_columns.tolist())))
    if red.partly_constant_columns.size:
        envs = [red.constant_environments[j] for j in red.partly_constant_columns.tolist()]
        out.append(FitWarning(UserWarning, (
            "Columns {columns} are constant within some environments but not others (within "
            f"environments {envs} in the same order, as positions in environment_labels_). In "
            "the model every column measures the "
            "latents in every environment, so this looks like a recording fault; these columns "
            "were ignored."), tuple(red.partly_constant_columns.tolist())))
    return out


def _structure_warnings(adjacency: np.ndarray, K: int) -> list[FitWarning]:
    max_indeg = int(adjacency.sum(axis=0).max()) if adjacency.shape[0] > 1 else 0
    if K > max_indeg:
        return []
    return [FitWarning(IdentifiabilityWarning, (
        f"A recovered node has {max_indeg} parents but only K={K} environments: node-level "
        "non-degeneracy needs K >= in-degree + 1, so that node's parent set and feature are "
        "not identified."))]


def _weak_steps(order: OrderingResult, K: int, level: float) -> list[int]:
    """Steps (but the last) whose best ICA-consistency score exceeds ``level`` per environment."""
    return [s["step"] for s in order.steps[:-1] if s["best_score"] / K > level]
