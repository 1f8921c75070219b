"""The numerics of one CREATOR fit, as one function over validated arrays.

:class:`creator_plugin.CREATOR` validates its input and parameters, calls
:func:`fit_arrays` and copies the :class:`FitResult` into its fitted
attributes; warnings come back as data (:class:`FitWarning`) and the
estimator issues them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ._passes import MappedArrays, encode, project
from ._random import as_generator, draw_seed
from .disentangle import disentangling_matrix, refine_disentangling
from .exceptions import FitQualityWarning, IdentifiabilityWarning, WeakEvidenceWarning
from .ordering import OrderingResult, topological_ordering
from .preprocessing import Reduction, reduce_environments
from .pruning import (
    default_threshold,
    paper_coefficients,
    paper_scales,
    prune,
    standardised_coefficients,
)
from .quality import ISSUE_KINDS, THOROUGH_DISAGREEMENT_LEVEL, assess_fit
from .sem import SEMParameters, centred_scatter, pooled_sd, regression_matrices, sem_parameters
from .stability import resample_stability

__all__ = ["FitResult", "FitWarning", "fit_arrays"]

#: FastICA settings of the ordering step (keys of ``CREATOR(ica_options=...)``).
ICA_DEFAULTS = {"max_iter": 400, "tol": 1e-5, "fun": "logcosh"}


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
        (and ``ordering.noises`` None) unless ``fit_arrays(keep_features=True)``.
    coefficients : ndarray (K, d, d)
        The coefficients the pruning rule tested (standardised, or the
        paper's raw ones for ``pruning="rank_raw"``, which the
        disentanglement then also uses, as the paper does).
    decisions : list of dict
        Every pruning decision.
    warnings : list of FitWarning
        What the estimator should warn about.
    diagnostics : dict
        The estimator's ``diagnostics_`` without its ``"warnings"`` entry.
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


def fit_arrays(
    X_list: list[np.ndarray],
    n_latent: int,
    *,
    scorer: str = "ica_consistency",
    pruning: str = "residual",
    prune_threshold: float | str = "auto",
    standardize: bool = True,
    n_refine: int = 3,
    polish: bool = True,
    disentangle: str = "subspace",
    ica_options: dict | None = None,
    scorer_options: dict | None = None,
    weak_evidence_level: float = 0.1,
    quality: bool = True,
    quality_resamples: int = 0,
    check_n_latent: bool = True,
    keep_features: bool = False,
    random_state: int | np.random.Generator | None = None,
) -> FitResult:
    """Run CREATOR's three steps on validated arrays.

    No validation happens here: ``X_list`` must be what
    :func:`creator_plugin._validation.check_environments` returns and the
    parameters must satisfy ``CREATOR._parameter_constraints``.

    Parameters
    ----------
    X_list : list of ndarray or dask array (n_k, p)
        One float array per environment; never modified or copied (read
        in blocks of rows; dask arrays are read through dask and only
        ``(n_k, d)`` results are computed).
    n_latent : int
        Number of latent features d.
    scorer, pruning, prune_threshold, standardize, n_refine, polish, disentangle,
    ica_options, scorer_options, weak_evidence_level, quality, quality_resamples
        As in :class:`creator_plugin.CREATOR`.
    check_n_latent : bool, default=True
        Whether the verdict checks ``n_latent`` against the data (pointless
        when :func:`creator_plugin.select_n_latent` chose it).
    keep_features : bool, default=False
        Return the ordering's noises and the entangled features as arrays
        (``FitResult.ordering.noises``, ``FitResult.entangled``). Each is as
        large as the latents; by default they are never formed whole (the
        later steps read them as ``d x d`` maps of the reduced data, one
        environment at a time), so a fit adds less than twice its input
        even when p = d.
    random_state : int, Generator or None
        Seeds the ordering step, then the resamples of the verdict's
        stability check, then its randomised checks.

    Returns
    -------
    FitResult
    """
    d, K = n_latent, len(X_list)
    rng = as_generator(random_state)
    ica = {**ICA_DEFAULTS, **(ica_options or {})}
    found: list[FitWarning] = []
    if K < d:
        found.append(FitWarning(IdentifiabilityWarning, (
            f"Only K={K} environments for n_latent={d}: the identifiability theorem needs "
            "K >= d; nodes with K or more parents cannot be recovered.")))

    # Step 0: one shared reduction.
    X_red, red = reduce_environments(X_list, d, standardize=standardize, random_state=rng)
    found += _reduction_warnings(red)

    # Step 1: order, noises and entangled features. The search overwrites
    # X_red with its residuals and projects the data again afterwards.
    to_reduced = red.projection / red.scale[:, None]
    order = topological_ordering(
        X_red, scorer=scorer, random_state=rng, ica_max_iter=ica["max_iter"],
        ica_tol=ica["tol"], ica_fun=ica["fun"], scorer_options=scorer_options,
        n_refine=n_refine, polish=polish, canonical=pruning != "rank_raw",
        measurement_basis=np.linalg.pinv(red.projection) if scorer == "hsic" else None,
        materialize=False,
        reload=lambda k: project([X_list[k]], red.env_means[k], to_reduced)[0],
    )
    # The noises and entangled features are linear maps of X_red: the later
    # steps read them one environment at a time (d x d results only).
    noises = MappedArrays(X_red, order.noise_maps)

    # Step 2: pruning.
    raw_features = MappedArrays(X_red, [order.alphas] * K)
    feature_sd = pooled_sd(raw_features)
    if pruning == "rank_raw":
        reference = [s["candidate_environment"][s["chosen"]] for s in order.steps]
        tested = paper_coefficients(noises, raw_features, reference)
    # Unit pooled variance for the entangled features fixes their arbitrary scale.
    alphas = order.alphas / feature_sd
    entangled = MappedArrays(X_red, [alphas] * K)
    B = regression_matrices(noises, entangled)
    if pruning != "rank_raw":
        tested = standardised_coefficients(B, noises, entangled)
    if prune_threshold == "auto":
        prune_threshold = default_threshold(pruning, K)
    adjacency, decisions = prune(tested, rule=pruning, threshold=prune_threshold)

    # Step 3: disentanglement, then the sign and scale convention: unit pooled
    # within-environment variance and positive pooled covariance with the
    # entangled feature of the same position (from d x d moments: the
    # disentangled features are never formed).
    gram, scatters = np.zeros((d, d)), []
    for y in entangled:
        gram += y.T @ y
        scatters.append(centred_scatter(y, y.mean(axis=0)))
    del y
    scatter = np.sum(scatters, axis=0)
    n_rows = np.array([x.shape[0] for x in X_red])
    refinement = None
    n_total = int(n_rows.sum())
    if pruning == "rank_raw":
        # The paper's Algorithm 3 intersects the row spaces of the same raw B-hat, in
        # the coordinates of the raw features (paper_scales); map its C to `entangled`.
        raw = feature_sd * paper_scales(noises, reference)
        C = raw[:, None] * disentangling_matrix(tested, adjacency)
    else:
        C = disentangling_matrix(B, adjacency)
        if disentangle == "likelihood":
            C, refinement = refine_disentangling(
                C, np.stack(scatters) / n_rows[:, None, None], n_rows, adjacency)
    cov = np.diag(gram @ C)
    C = C * (np.where(cov < 0, -1.0, 1.0) / np.sqrt(np.diag(C.T @ scatter @ C) / n_total))

    mean = n_rows @ red.env_means / n_total
    components = (to_reduced @ (alphas @ C)).T
    entangled = list(entangled) if keep_features else None
    order = replace(order, alphas=alphas, noises=list(noises) if keep_features else None,
                    entangled=entangled)
    # Only d x d results are needed from here on: room for the latents.
    del X_red, noises, raw_features
    latents, mixing, feature_latent_cov = _encode_decode(X_list, mean, components, red)
    sem = sem_parameters(latents, adjacency)

    found += _structure_warnings(adjacency, K)
    if order.n_ica_not_converged:
        found.append(FitWarning(UserWarning, (
            f"{order.n_ica_not_converged} FastICA fits did not converge "
            f"(max_iter={ica['max_iter']}); consider raising ica_options['max_iter'].")))
    weak_steps = _weak_steps(order, K, weak_evidence_level) if scorer == "ica_consistency" else []
    if weak_steps:
        found.append(FitWarning(WeakEvidenceWarning, (
            f"Weak evidence for the causal order at steps {weak_steps}: the best candidate is "
            "not a consistent independent source across environments (noise may be Gaussian "
            "or nearly so). The order, graph and features may be unreliable; see "
            "diagnostics_['ordering'].")))
    diagnostics = {
        "ordering": order.steps,
        "pruning": decisions,
        "pruning_rule": pruning,
        "prune_threshold": float(prune_threshold),
        "explained_variance": red.explained_variance.tolist(),
        "dropped_columns": red.dropped_columns.tolist(),
        "unrelated_columns": red.unrelated_columns.tolist(),
        "partly_constant_columns": red.partly_constant_columns.tolist(),
        "n_ica_not_converged": order.n_ica_not_converged,
        "polish": order.polish,
        "disentangle": refinement,
        "weak_ordering_steps": weak_steps,
    }
    if quality:
        stability = None
        if quality_resamples:
            params = {
                "scorer": scorer, "pruning": pruning, "prune_threshold": prune_threshold,
                "standardize": standardize, "n_refine": n_refine, "polish": polish,
                "disentangle": disentangle,
                "ica_options": ica_options, "scorer_options": scorer_options,
                "weak_evidence_level": weak_evidence_level, "quality": False,
            }

            def refit(sample, seed):
                r = fit_arrays(sample, d, **params, random_state=seed)
                return r.adjacency, r.mean, r.components

            stability = resample_stability(
                X_list, adjacency, latents, refit, quality_resamples, random_state=draw_seed(rng)
            )
        verdict = assess_fit(
            latents, X=X_list if check_n_latent else None,
            ordering_steps=order.steps if scorer == "ica_consistency" else None,
            weak_evidence_level=weak_evidence_level, stability=stability, random_state=rng,
            **({"disagreement_level": THOROUGH_DISAGREEMENT_LEVEL} if quality_resamples else {}),
        )
        diagnostics["quality"] = verdict.to_dict()
        found += [
            FitWarning(FitQualityWarning, f"{ISSUE_KINDS[kind]}: " + " ".join(
                i.message for i in verdict.issues if i.kind == kind))
            for kind in verdict.kinds
        ]
    return FitResult(
        adjacency, components, mixing, feature_latent_cov, mean, latents, sem, red, order,
        entangled, tested, decisions, found, diagnostics,
    )


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
