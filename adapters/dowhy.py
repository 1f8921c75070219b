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

from creator_plugin._validation import check_memory
from creator_plugin.interpret import measurement_names

from ._common import (
    check_nodes_known,
    document_latents,
    environment_index,
    latent_dataframe,
    missing_extra,
    quiet_library_warnings,
    resolve_estimator,
    resolve_names,
)
from .graphs import topology

try:
    from dowhy import CausalModel, gcm
except ModuleNotFoundError as exc:
    raise missing_extra(exc, "DoWhy", "dowhy") from exc

__all__ = [
    "CreatorCausalModel",
    "CreatorPooledCausalModel",
    "InterventionSamples",
    "Relative",
    "latent_dataframe",
    "pooled_latent_dataframe",
    "relative",
    "to_dowhy_causal_model",
    "to_dowhy_pooled_causal_model",
    "to_gcm",
    "intervene_observations",
]

ENVIRONMENT_ROLES = ("effect_modifier", "common_cause")


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


class CreatorPooledCausalModel(CreatorCausalModel):
    """The pooled model of :func:`to_dowhy_pooled_causal_model`.

    A :class:`CreatorCausalModel` whose ``estimate_effect`` defaults to
    ``method_params={"need_conditional_estimates": False}``: DoWhy's
    per-value conditional estimates group the rows by the environment and,
    under pandas 3, the groups lose the column the regression also needs as
    a common cause (a ``KeyError`` inside DoWhy). Per-environment effects
    come from :func:`to_dowhy_causal_model` instead.
    """

    def estimate_effect(self, *args, method_params=None, **kwargs):
        method_params = {"need_conditional_estimates": False, **(method_params or {})}
        return super().estimate_effect(*args, method_params=method_params, **kwargs)


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


def pooled_latent_dataframe(
    model, names: Sequence[str] | None = None, environment_node: str = "environment"
) -> pd.DataFrame:
    """The latent features of every environment stacked, with an environment column.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    names : list of str, optional
        Latent names (default: the model's node names).
    environment_node : str, default="environment"
        Name of the environment column.

    Returns
    -------
    pandas.DataFrame (n, d + 1)
        The latent columns, then ``environment_node``: the environment label
        of every row as a string category (DoWhy one-hot encodes it).
    """
    est = resolve_estimator(model)
    names = resolve_names(model, names)
    if environment_node in names:
        raise ValueError(
            f"environment_node {environment_node!r} is also a latent node name; choose another."
        )
    labels = [str(lab) for lab in est.environment_labels_]
    frames = []
    for lab in est.environment_labels_:
        df = latent_dataframe(model, lab, names)
        df[environment_node] = str(lab)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out[environment_node] = pd.Categorical(out[environment_node], categories=labels)
    return out


@document_latents
def to_dowhy_pooled_causal_model(
    model,
    treatment: str | Sequence[str],
    outcome: str | Sequence[str],
    *,
    environment_role: str = "effect_modifier",
    environment_node: str = "environment",
    names: Sequence[str] | None = None,
    **causal_model_kwargs,
) -> CreatorPooledCausalModel:
    """A DoWhy ``CausalModel`` over all environments, the environment a node of the graph.

    Parameters
    ----------
    model : CREATOR or CreatorGraph
        Fitted model.
    treatment, outcome : str or list of str
        Latent node names.
    environment_role : {"effect_modifier", "common_cause"}, default="effect_modifier"
        In both, the graph has the node ``environment_node`` with an edge to
        every latent, so backdoor identification adjusts for it. With
        ``"effect_modifier"`` it is also passed to DoWhy as an effect
        modifier: ``backdoor.linear_regression`` then fits the treatment's
        coefficient separately per environment and ``estimate.value`` is the
        average of the per-environment effects over all rows (each
        environment weighted by its number of rows). With ``"common_cause"`` the regression has one
        treatment coefficient plus an intercept per environment: a
        variance-weighted blend of the per-environment effects.
    environment_node : str, default="environment"
        Name of the environment node (and column).
    names : list of str, optional
        Latent names (default: the model's node names).
    **causal_model_kwargs
        Passed to ``dowhy.CausalModel``.

    Returns
    -------
    CreatorPooledCausalModel
        A ``dowhy.CausalModel``. Data: :func:`pooled_latent_dataframe`;
        graph: the recovered DAG plus ``environment_node -> every latent``
        (marked ``effectmodifier`` for that role, which is how DoWhy accepts
        a common cause as an effect modifier). Effects are per pooled SD of
        the treatment feature, in pooled SDs of the outcome feature.

    Notes
    -----
    What the environment node means: the label of the environment a row
    comes from (a lab, a condition, a period), as a context variable set
    from outside the system (Mooij, Magliacane & Claassen, "Joint Causal
    Inference from Multiple Contexts", JMLR 2020). In CREATOR's model it
    changes every latent's mean, noise scale and incoming weights, hence an
    edge into every latent; nothing in the system causes it, hence no edge
    into it. Intervening on it is not meaningful.

    Why pooling is valid, and when it is not: the DAG is the same in every
    environment, so the adjustment set DoWhy finds (the treatment's parents
    plus the environment) blocks every backdoor path in every environment,
    and identification holds in the pooled graph. The *estimate* is another
    matter, because the weights change: DoWhy's linear regression lets the
    treatment's coefficient vary with an effect modifier, but keeps one
    coefficient per adjustment covariate for all environments. It is
    therefore exact when the treatment has no parents (the adjustment set
    is the environment alone), and otherwise only when the parents' effects
    on the outcome are the same in every environment; if they change, the
    per-environment models (:func:`to_dowhy_causal_model`) are the right
    tool and their effects can be averaged by hand. ``"common_cause"``
    additionally blends the environments' effects with weights that depend
    on the treatment's residual variance, so its single number is not the
    effect of any one environment.
    """
    if environment_role not in ENVIRONMENT_ROLES:
        raise ValueError(
            f"environment_role must be one of {ENVIRONMENT_ROLES}; got {environment_role!r}."
        )
    names = resolve_names(model, names)
    treatment = check_nodes_known(treatment, names, "treatment")
    outcome = check_nodes_known(outcome, names, "outcome")
    both = set(treatment) & set(outcome)
    if both:
        raise ValueError(f"Nodes {sorted(both)} are both treatment and outcome.")
    df = pooled_latent_dataframe(model, names, environment_node)
    graph = topology(model, names)
    # DoWhy drops ancestors of the treatment from the effect modifiers it
    # reads off the graph, except nodes marked "effectmodifier".
    graph.add_node(environment_node, **(
        {"effectmodifier": True} if environment_role == "effect_modifier" else {}))
    graph.add_edges_from((environment_node, node) for node in names)
    with quiet_library_warnings():
        return CreatorPooledCausalModel(
            data=df,
            treatment=treatment if len(treatment) > 1 else treatment[0],
            outcome=outcome if len(outcome) > 1 else outcome[0],
            graph=graph,
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
    # Which fit and environment the mechanisms come from, so that a reuse of the
    # model (intervene_observations(scm=...)) can be checked.
    scm.graph.graph["creator_origin"] = _origin(resolve_estimator(model), environment)
    return scm


def _origin(est, environment) -> dict:
    import hashlib

    digest = hashlib.sha256(np.ascontiguousarray(est.components_, dtype=float).tobytes()
                            + np.ascontiguousarray(est.mean_, dtype=float).tobytes())
    return {"fit": digest.hexdigest(), "environment": environment_index(est, environment)}


@dataclass
class InterventionSamples:
    """Samples of an intervention on latent features, in both spaces.

    Attributes
    ----------
    latents : pandas.DataFrame (n, d)
        Interventional samples of the latent features (gcm), in units of
        the recovered features.
    observations : pandas.DataFrame (n, p)
        The same samples mapped to the measurements by the decoder,
        ``estimator.inverse_transform(latents)``, in the measurements' own
        units; columns are the measurement names (``feature_names_in_``
        when the model was fitted on a DataFrame, else ``x0..x{p-1}``).
    """

    latents: pd.DataFrame
    observations: pd.DataFrame


@dataclass(frozen=True)
class Relative:
    """An intervention value relative to the environment: its mean plus ``sd`` of its SDs.

    Create with :func:`relative`. In environment e, ``relative(k)`` on
    latent L means ``mean_e(L) + k * sd_e(L)`` (the environment's own mean
    and standard deviation of the recovered feature), so ``relative(0)`` is
    the environment's baseline and ``relative(1)`` one of its SDs above.

    Attributes
    ----------
    sd : float
        Number of environment SDs above the environment mean.
    """

    sd: float

    def value(self, model, node: str, environment=0, *, names: Sequence[str] | None = None
              ) -> float:
        """The raw value (units of the recovered feature) this means for one node.

        Use it where DoWhy wants raw numbers, e.g.
        ``gcm.average_causal_effect(scm, "L3", {"L1": lambda x: v1}, ...)``.

        Parameters
        ----------
        model : CREATOR or CreatorGraph
            Fitted model.
        node : str
            Latent node name.
        environment : hashable, default=0
            Environment label.
        names : list of str, optional
            Node names (default: the model's node names).

        Returns
        -------
        float
        """
        est = resolve_estimator(model)
        names = resolve_names(model, names)
        check_nodes_known(node, names, "intervention")
        k, i = environment_index(est, environment), names.index(node)
        latents = est.latents_[k][:, i]
        return float(latents.mean() + self.sd * latents.std())


def relative(sd: float) -> Relative:
    """``do(L := environment mean + sd * environment SD)``, for :func:`intervene_observations`.

    Parameters
    ----------
    sd : float
        Number of the environment's standard deviations of the latent above
        its mean in that environment (negative for below).

    Returns
    -------
    Relative

    Examples
    --------
    >>> relative(1.5)
    Relative(sd=1.5)
    """
    if isinstance(sd, bool) or not isinstance(sd, numbers.Real) or not np.isfinite(sd):
        raise ValueError(f"relative(sd): sd must be a finite number; got {sd!r}.")
    return Relative(float(sd))


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
        def checked(x, func=value):
            out = np.asarray(func(x), dtype=float)
            if not np.isfinite(out).all():
                raise ValueError(
                    f"the intervention on {node!r} gives values that are not finite (NaN or "
                    "infinite); its callable must map finite values to finite values.")
            return out
        return checked
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(
            f"Intervention on {node!r} must be a finite number (do({node} := value)), "
            f"relative(k) (environment mean + k SD) or a callable mapping the current values "
            f"to new ones; got {value!r}."
        )
    v = float(value)
    return lambda x: np.full_like(np.asarray(x, dtype=float), v)


@document_latents
def _sample_bytes(n_samples: int, n_latent: int, n_features: int) -> int:
    """Bytes of ``n_samples`` interventional draws: gcm's noise and latent frames (several
    copies of n x d) and the observations (n x p, as an array and a DataFrame)."""
    return 8 * n_samples * (6 * n_latent + 3 * n_features)


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
        Node name -> one of

        * a number: atomic ``do(L := value)`` in units of the recovered
          feature (its pooled within-environment SD), on the scale where
          the pooled training mean is 0 (environments have their own means,
          ``estimator.intercepts_``, so ``0`` is not an environment's
          baseline);
        * ``relative(k)``: ``do(L := mean + k SD)`` with the mean and SD of
          L in ``environment`` (``relative(0)`` is that environment's
          baseline);
        * a callable (gcm convention: maps the node's natural values to new
          ones, e.g. ``lambda x: x + 1`` for a shift by one pooled SD).
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
        (DataFrame over the measurement names, in the units of the
        original data).
    """
    est = resolve_estimator(model)
    names = resolve_names(model, names)
    if not isinstance(interventions, Mapping) or not interventions:
        raise ValueError("interventions must be a non-empty dict {node name: value or callable}.")
    check_nodes_known(list(interventions), names, "intervention")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}.")
    check_memory("intervene_observations", _sample_bytes,
                 {"n_samples": int(n_samples), "n_latent": est.n_latent_,
                  "n_features": est.n_features_in_}, {"n_samples": 1})
    environment_index(est, environment)
    funcs = {
        node: _as_intervention(
            node, v.value(model, node, environment, names=names) if isinstance(v, Relative) else v
        )
        for node, v in interventions.items()
    }
    if scm is None:
        scm = to_gcm(model, environment, names=names)
    else:
        if not isinstance(scm, gcm.InvertibleStructuralCausalModel):
            raise TypeError(
                "scm must be the InvertibleStructuralCausalModel that to_gcm(model, "
                f"environment) returned; got {type(scm).__name__}.")
        if set(scm.graph.nodes) != set(names):
            raise ValueError(
                f"scm has nodes {sorted(scm.graph.nodes)}, the model's nodes are {names}."
            )
        origin = scm.graph.graph.get("creator_origin")
        if origin != _origin(est, environment):
            where = ("was not built by to_gcm" if origin is None else
                     "was built for another fit" if origin["fit"] != _origin(est, environment)[
                         "fit"] else "was built for another environment")
            raise ValueError(
                f"scm {where}: its mechanisms must be those of this model in environment "
                f"{environment!r}; pass scm=to_gcm(model, {environment!r}) or leave scm=None.")
    with quiet_library_warnings(), _seeded_global_rng(random_state), _progress_bars(False):
        samples = gcm.interventional_samples(scm, funcs, num_samples_to_draw=int(n_samples))
    latents = samples[names].astype(float).reset_index(drop=True)
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.asarray(est.inverse_transform(latents.to_numpy()), dtype=float)
    if not (np.isfinite(latents.to_numpy()).all() and np.isfinite(values).all()):
        raise ValueError(
            "the interventions give latent or measurement values that are not finite (too "
            f"large for float64, or NaN from a callable): {dict(interventions)!r}. Intervene "
            "with values on the scale of the recovered features (units of their SD).")
    observations = pd.DataFrame(values, columns=measurement_names(est))
    return InterventionSamples(latents=latents, observations=observations)
