"""DoWhy bridge: effect estimation and interventions on CREATOR's latent features.

* :func:`to_dowhy_causal_model` - a ``dowhy.CausalModel`` over one
  environment's latent features, with the recovered DAG as its graph.
* :func:`to_gcm` - a fitted ``dowhy.gcm.InvertibleStructuralCausalModel``
  (linear additive-noise mechanisms, empirical root and noise distributions).
* :func:`intervene_observations` - intervene on latent features, sample, and
  map the samples back to the observed measurements through the decoder.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps

import networkx as nx
import numpy as np
import pandas as pd
from dowhy import CausalModel, gcm

from ._common import (
    check_nodes_known,
    document_latents,
    latent_dataframe,
    quiet_library_warnings,
    resolve_estimator,
    resolve_names,
)
from .graphs import topology

__all__ = [
    "CreatorCausalModel",
    "InterventionSamples",
    "latent_dataframe",
    "to_dowhy_causal_model",
    "to_gcm",
    "intervene_observations",
]


def _quiet(method):
    @wraps(method)
    def wrapper(self, *args, **kwargs):
        with quiet_library_warnings():
            return method(self, *args, **kwargs)

    return wrapper


class CreatorCausalModel(CausalModel):
    """A ``dowhy.CausalModel`` whose methods silence known pandas/DoWhy deprecation notices.

    Behaves exactly like :class:`dowhy.CausalModel` (it is one); only
    ``identify_effect``, ``estimate_effect``, ``refute_estimate`` and ``do``
    run with pandas' "The copy keyword is deprecated" warning (raised inside
    DoWhy's regression estimators under pandas 3) filtered out.
    """

    identify_effect = _quiet(CausalModel.identify_effect)
    estimate_effect = _quiet(CausalModel.estimate_effect)
    refute_estimate = _quiet(CausalModel.refute_estimate)
    do = _quiet(CausalModel.do)


@document_latents
def to_dowhy_causal_model(
    model,
    treatment: str | Sequence[str],
    outcome: str | Sequence[str],
    environment=0,
    *,
    names: Sequence[str] | None = None,
    **causal_model_kwargs,
) -> CreatorCausalModel:
    """A DoWhy ``CausalModel`` over one environment's latent features.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    treatment, outcome : str or list of str
        Latent node names.
    environment : hashable, default=0
        Environment whose latent features form the data (causal effects
        differ between environments because the SEM weights do).
    names : list of str, optional
        Node names (default: the model's node names).
    **causal_model_kwargs
        Passed to ``dowhy.CausalModel`` (e.g. ``effect_modifiers``).

    Returns
    -------
    CreatorCausalModel
        A genuine ``dowhy.CausalModel`` (subclass that only filters library
        deprecation warnings) with ``data`` = the latent DataFrame and
        ``graph`` = the recovered DAG as an ``nx.DiGraph``; use
        ``identify_effect``, ``estimate_effect(...,
        method_name="backdoor.linear_regression")`` and the refuters as
        usual. Estimated effects are per unit of the recovered treatment
        feature, in units of the recovered outcome feature.

    Examples
    --------
    >>> from creator_plugin import CREATOR, simulate
    >>> sim = simulate(n_latent=3, n_environments=4, n_samples=500, random_state=1)
    >>> est = CREATOR(3, random_state=0).fit(sim.X)
    >>> cm = to_dowhy_causal_model(est, "L1", "L3", environment=0)
    >>> estimand = cm.identify_effect()
    """
    names = resolve_names(model, names)
    treatment = check_nodes_known(treatment, names, "treatment")
    outcome = check_nodes_known(outcome, names, "outcome")
    both = set(treatment) & set(outcome)
    if both:
        raise ValueError(f"Nodes {sorted(both)} are both treatment and outcome.")
    df = latent_dataframe(model, environment, names)
    with quiet_library_warnings():
        return CreatorCausalModel(
            data=df,
            treatment=treatment if len(treatment) > 1 else treatment[0],
            outcome=outcome if len(outcome) > 1 else outcome[0],
            graph=topology(model, names),
            **causal_model_kwargs,
        )


@contextmanager
def _progress_bars(show: bool) -> Iterator[None]:
    old = gcm.config.show_progress_bars
    gcm.config.show_progress_bars = show
    try:
        yield
    finally:
        gcm.config.show_progress_bars = old


@document_latents
def to_gcm(
    model,
    environment=0,
    *,
    names: Sequence[str] | None = None,
    show_progress: bool = False,
) -> gcm.InvertibleStructuralCausalModel:
    """A fitted DoWhy gcm model of one environment's latent SEM.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    environment : hashable, default=0
        Environment whose latent features the mechanisms are fitted on.
    names : list of str, optional
        Node names (default: the model's node names).
    show_progress : bool, default=False
        Show gcm's fitting progress bars (the global gcm setting is restored
        afterwards).

    Returns
    -------
    dowhy.gcm.InvertibleStructuralCausalModel
        On a new graph (never shared with the caller): roots get
        ``gcm.EmpiricalDistribution()``, other nodes
        ``gcm.AdditiveNoiseModel(gcm.ml.create_linear_regressor())`` with
        empirical noise, fitted with ``gcm.fit`` on the environment's latent
        features. ``gcm.interventional_samples``,
        ``gcm.counterfactual_samples``, ``gcm.average_causal_effect`` and
        ``gcm.arrow_strength`` work on it unchanged. The regressions are
        refitted by gcm, so coefficients agree with ``estimator.weights_[k]``
        up to the intercept handling.
    """
    names = resolve_names(model, names)
    df = latent_dataframe(model, environment, names)
    graph = topology(model, names)
    scm = gcm.InvertibleStructuralCausalModel(nx.DiGraph(graph))
    for node in scm.graph.nodes:
        if scm.graph.in_degree(node) == 0:
            scm.set_causal_mechanism(node, gcm.EmpiricalDistribution())
        else:
            scm.set_causal_mechanism(
                node, gcm.AdditiveNoiseModel(gcm.ml.create_linear_regressor())
            )
    with quiet_library_warnings(), _progress_bars(show_progress):
        gcm.fit(scm, df)
    return scm


@dataclass
class InterventionSamples:
    """Samples of an intervention on latent features, in both spaces.

    Attributes
    ----------
    latents : pandas.DataFrame (n, d)
        Interventional samples of the latent features (gcm).
    observations : ndarray (n, p)
        The same samples mapped to the measurements by the decoder,
        ``estimator.inverse_transform(latents)``.
    """

    latents: pd.DataFrame
    observations: np.ndarray


@contextmanager
def _seeded_global_rng(random_state) -> Iterator[None]:
    """gcm draws from numpy's global RNG: seed it, then restore the caller's state."""
    if random_state is None:
        yield
        return
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(f"random_state must be None or an int; got {random_state!r}.")
    state = np.random.get_state()  # noqa: NPY002 - gcm samples from the legacy global RNG
    np.random.seed(int(random_state) % 2**32)  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


def _as_intervention(node: str, value) -> Callable:
    if callable(value):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(
            f"Intervention on {node!r} must be a finite number (do({node} := value)) or a "
            f"callable mapping the current values to new ones; got {value!r}."
        )
    v = float(value)
    return lambda x: np.full_like(np.asarray(x, dtype=float), v)


@document_latents
def intervene_observations(
    model,
    interventions: Mapping[str, float | Callable],
    environment=0,
    *,
    n_samples: int = 1000,
    random_state: int | None = None,
    scm: gcm.InvertibleStructuralCausalModel | None = None,
    names: Sequence[str] | None = None,
) -> InterventionSamples:
    """Intervene on latent features and see what the measurements would do.

    Draws ``n_samples`` interventional latent samples from the gcm model of
    environment ``environment`` and maps them through the fitted decoder
    (``x = mean_ + mixing_ @ latent``) to observation space.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    interventions : dict
        Node name -> value (atomic ``do(L := value)``) or callable (gcm
        convention: maps the node's natural values to new ones, e.g.
        ``lambda x: x + 1`` for a shift intervention).
    environment : hashable, default=0
        Environment whose mechanisms and noise are used.
    n_samples : int, default=1000
        Number of samples.
    random_state : int, optional
        Seed for gcm's sampling (numpy's global RNG is seeded for the call
        and then restored).
    scm : InvertibleStructuralCausalModel, optional
        A model from :func:`to_gcm` to reuse (skips refitting); it must be
        the one for ``environment``.
    names : list of str, optional
        Node names (default: the model's node names).

    Returns
    -------
    InterventionSamples
        ``.latents`` (DataFrame over the node names) and ``.observations``
        (``(n_samples, p)`` array in the units of the original data).
    """
    est = resolve_estimator(model)
    names = resolve_names(model, names)
    if not isinstance(interventions, Mapping) or not interventions:
        raise ValueError("interventions must be a non-empty dict {node name: value or callable}.")
    check_nodes_known(list(interventions), names, "intervention")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}.")
    funcs = {node: _as_intervention(node, v) for node, v in interventions.items()}
    if scm is None:
        scm = to_gcm(model, environment, names=names)
    elif set(scm.graph.nodes) != set(names):
        raise ValueError(
            f"scm has nodes {sorted(scm.graph.nodes)}, the model's nodes are {names}."
        )
    with quiet_library_warnings(), _seeded_global_rng(random_state), _progress_bars(False):
        samples = gcm.interventional_samples(scm, funcs, num_samples_to_draw=int(n_samples))
    latents = samples[names].astype(float)
    observations = est.inverse_transform(latents.to_numpy())
    return InterventionSamples(latents=latents.reset_index(drop=True), observations=observations)
