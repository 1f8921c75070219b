"""The numerics of one CREATOR fit, as one function over validated arrays.

:class:`creator_plugin.CREATOR` validates its input and parameters, calls
:func:`fit_arrays` and copies the :class:`FitResult` into its fitted
attributes; warnings come back as data (:class:`FitWarning`) and the
estimator issues them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .disentangle import disentangling_matrix
from .exceptions import IdentifiabilityWarning, WeakEvidenceWarning
from .ordering import OrderingResult, topological_ordering
from .preprocessing import Reduction, reduce_environments
from .pruning import default_threshold, paper_coefficients, prune, standardised_coefficients
from .sem import SEMParameters, pooled_sd, regression_matrices, sem_parameters

__all__ = ["FitResult", "FitWarning", "fit_arrays"]

#: FastICA settings of the ordering step (keys of ``CREATOR(ica_options=...)``).
ICA_DEFAULTS = {"max_iter": 400, "tol": 1e-5, "fun": "logcosh"}


@dataclass(frozen=True)
class FitWarning:
    """A warning a fit wants issued: its category and message."""

    category: type[Warning]
    message: str


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
    mean : ndarray (p,)
        Pooled mean of the data.
    latents : list of ndarray (n_k, d)
    sem : SEMParameters
        Per-environment intercepts, weights, noise and noise scales.
    reduction : Reduction
        The shared reduction to d dimensions.
    ordering : OrderingResult
        Directions, noises and per-step diagnostics of the ordering step.
    entangled : list of ndarray (n_k, d)
        Entangled features, scaled to unit pooled within-environment SD.
    coefficients : ndarray (K, d, d)
        The coefficients the pruning rule tested (standardised, or the
        paper's raw ones for ``pruning="rank_raw"``).
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
    ica_options: dict | None = None,
    scorer_options: dict | None = None,
    weak_evidence_level: float = 0.1,
    random_state: int | np.random.Generator | None = None,
) -> FitResult:
    """Run CREATOR's three steps on validated arrays.

    No validation happens here: ``X_list`` must be what
    :func:`creator_plugin._validation.check_environments` returns and the
    parameters must satisfy ``CREATOR._parameter_constraints``.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        One float array per environment.
    n_latent : int
        Number of latent features d.
    scorer, pruning, prune_threshold, standardize, n_refine, polish, ica_options,
    scorer_options, weak_evidence_level
        As in :class:`creator_plugin.CREATOR`.
    random_state : int, Generator or None
        Seeds the ordering step.

    Returns
    -------
    FitResult
    """
    d, K = n_latent, len(X_list)
    ica = {**ICA_DEFAULTS, **(ica_options or {})}
    found: list[FitWarning] = []
    if K < d:
        found.append(FitWarning(IdentifiabilityWarning, (
            f"Only K={K} environments for n_latent={d}: the identifiability theorem needs "
            "K >= d; nodes with K or more parents cannot be recovered.")))

    # Step 0: one shared reduction.
    X_red, red = reduce_environments(X_list, d, standardize=standardize)
    found += _reduction_warnings(red)

    # Step 1: order, noises and entangled features.
    order = topological_ordering(
        X_red, scorer=scorer, random_state=random_state, ica_max_iter=ica["max_iter"],
        ica_tol=ica["tol"], ica_fun=ica["fun"], scorer_options=scorer_options,
        n_refine=n_refine, polish=polish, canonical=pruning != "rank_raw",
        measurement_basis=np.linalg.pinv(red.projection) if scorer == "hsic" else None,
    )
    # Unit pooled variance for the entangled features: fixes their arbitrary scale.
    alphas = order.alphas / pooled_sd(order.entangled)
    entangled = [x @ alphas for x in X_red]

    # Step 2: pruning.
    B = regression_matrices(order.noises, entangled)
    if pruning == "rank_raw":
        reference = [s["candidate_environment"][s["chosen"]] for s in order.steps]
        tested = paper_coefficients(order.noises, order.entangled, reference)
    else:
        tested = standardised_coefficients(B, order.noises, entangled)
    if prune_threshold == "auto":
        prune_threshold = default_threshold(pruning, K)
    adjacency, decisions = prune(tested, rule=pruning, threshold=prune_threshold)

    # Step 3: disentanglement, then the sign and scale convention: unit pooled
    # within-environment variance and positive pooled covariance with the
    # entangled feature of the same position.
    C = disentangling_matrix(B, adjacency)
    Yc = [y @ C for y in entangled]
    cov = sum((y * yc).sum(axis=0) for y, yc in zip(entangled, Yc))
    C = C * (np.where(cov < 0, -1.0, 1.0) / pooled_sd(Yc))

    mean = np.vstack(X_list).mean(axis=0)
    components = ((red.projection / red.scale[:, None]) @ (alphas @ C)).T
    latents = [(x - mean) @ components.T for x in X_list]
    mixing = np.linalg.lstsq(np.vstack(latents), np.vstack(X_list) - mean, rcond=None)[0].T
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
        "n_ica_not_converged": order.n_ica_not_converged,
        "polish": order.polish,
        "weak_ordering_steps": weak_steps,
    }
    return FitResult(
        adjacency, components, mixing, mean, latents, sem, red, order, entangled, tested,
        decisions, found, diagnostics,
    )


def _reduction_warnings(red: Reduction) -> list[FitWarning]:
    out = []
    if red.dropped_columns.size:
        out.append(FitWarning(UserWarning, (
            f"Columns {red.dropped_columns.tolist()} are constant within every environment "
            "and were ignored.")))
    if red.unrelated_columns.size:
        out.append(FitWarning(UserWarning, (
            f"Columns {red.unrelated_columns.tolist()} are nearly unrelated to the other "
            "columns (pooled R^2 < 0.1): probably noise, not measurements of the latents. "
            "After standardisation they weigh as much as the others and can displace a "
            "latent direction; remove them (or use standardize=False).")))
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
