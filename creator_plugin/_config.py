"""One frozen description of a fit, built once from the validated parameters.

:class:`creator_plugin.CREATOR` validates its parameters, then builds a
:class:`FitConfig` (:meth:`FitConfig.from_estimator`); every stage of
:func:`creator_plugin._fit.fit_arrays` reads its settings from it. The
constructor's parameters are declared once, in ``CREATOR.__init__`` and
``CREATOR._parameter_constraints``; the fields here are those parameters
(without ``random_state``, which seeds a fit rather than describing it)
plus two settings the estimator decides (``check_n_latent`` and
``keep_features``). ``tests/test_structure.py`` checks that they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

__all__ = ["ICA_DEFAULTS", "FitConfig"]

#: FastICA settings of the ordering step (keys of ``CREATOR(ica_options=...)``).
ICA_DEFAULTS = MappingProxyType({"max_iter": 400, "tol": 1e-5, "fun": "logcosh"})


@dataclass(frozen=True)
class FitConfig:
    """Every setting of one CREATOR fit (see :class:`creator_plugin.CREATOR`).

    Attributes
    ----------
    n_latent : int
        The number of latent features d (``"auto"`` already resolved).
    scorer, n_refine, refine_min_sources, polish, disentangle, pruning, revise_graph,
    order_branches, search_graph, prune_threshold, standardize, weak_evidence_level, quality,
    quality_resamples
        As in :class:`creator_plugin.CREATOR` (``prune_threshold`` may still
        be ``"auto"``: its value depends on the number of environments).
    ica_options : Mapping
        FastICA settings of the ordering step, the defaults
        (:data:`ICA_DEFAULTS`) updated by the user's.
    scorer_options : Mapping
        Extra keyword arguments of the ordering step's scorer.
    measurement_noise : {"auto", None}
        As in :class:`creator_plugin.CREATOR`: ``"auto"`` estimates Gaussian
        measurement noise from the variance the reduction discards and
        corrects the second moments read after the ordering's search (polish,
        canonical form, noise maps, pruning, likelihood disentanglement;
        :mod:`creator_plugin.measurement_noise`); it changes nothing when the
        data have as many columns as latents, or in paper mode.
    check_n_latent : bool
        Whether the verdict checks ``n_latent`` against the data (pointless
        when :func:`creator_plugin.select_n_latent` chose it).
    keep_features : bool
        Return the ordering's noises and the entangled features as arrays
        (otherwise they are read as ``d x d`` maps of the reduced data and
        never formed whole).
    """

    n_latent: int
    scorer: str = "ica_consistency"
    n_refine: int = 3
    refine_min_sources: int = 4
    polish: bool = True
    disentangle: str = "auto"
    pruning: str = "residual"
    revise_graph: bool | str = "auto"
    order_branches: int | str = "auto"
    search_graph: bool | str = "auto"
    prune_threshold: float | str = "auto"
    standardize: bool = True
    ica_options: Mapping = field(default_factory=lambda: ICA_DEFAULTS)
    scorer_options: Mapping = field(default_factory=dict)
    weak_evidence_level: float = 0.1
    quality: bool = True
    quality_resamples: int = 0
    measurement_noise: str | None = None
    check_n_latent: bool = True
    keep_features: bool = False

    def __post_init__(self):
        # Read-only copies: a config cannot be changed through a dict it was given.
        object.__setattr__(
            self, "ica_options", MappingProxyType({**ICA_DEFAULTS, **self.ica_options}))
        object.__setattr__(self, "scorer_options", MappingProxyType(dict(self.scorer_options)))

    @property
    def paper_mode(self) -> bool:
        """The paper's Algorithms 1-3 as published, switched on by ``pruning="rank_raw"``.

        In paper mode the ordering keeps each step's direction as ICA
        returned it (no canonical sign and scale), the pruning's rank test
        reads the raw regression coefficients of the paper's Algorithm 2
        (whose scale depends on those directions), and the disentanglement
        intersects the row spaces of the same raw coefficients, as the
        paper's Algorithm 3 does. ``CREATOR.paper`` is this mode with the
        paper's other settings.
        """
        return self.pruning == "rank_raw"

    @property
    def ordering_settings(self) -> tuple:
        """The settings the ordering step (and the reduction before it) depend on."""
        return (self.n_latent, self.scorer, self.n_refine, self.refine_min_sources, self.polish,
                self.standardize,
                self.paper_mode, self.measurement_noise, tuple(sorted(self.ica_options.items())),
                tuple(sorted((k, repr(v)) for k, v in self.scorer_options.items())))

    @classmethod
    def from_estimator(cls, estimator, n_latent: int, **settings) -> FitConfig:
        """The configuration of ``estimator`` (parameters already validated).

        Parameters
        ----------
        estimator : CREATOR
        n_latent : int
            The resolved number of latents.
        **settings
            Fields that override the estimator's parameters (validated
            ``ica_options`` / ``scorer_options``, ``check_n_latent``,
            ``keep_features``).

        Returns
        -------
        FitConfig
        """
        params = estimator.get_params(deep=False)
        names = {f.name for f in fields(cls)}
        # None means "off" for measurement_noise, "the default" for the dict options.
        values = {k: v for k, v in params.items()
                  if k in names and (v is not None or k == "measurement_noise")}
        return cls(**{**values, "n_latent": n_latent, **settings})

    def replace(self, **changes) -> FitConfig:
        """A copy with some fields changed (:func:`dataclasses.replace`)."""
        return replace(self, **changes)
