"""One frozen description of a fit, built once from the validated parameters.

:class:`creator_plugin.CREATOR` validates its parameters, then builds a
:class:`FitConfig` (:meth:`FitConfig.from_estimator`); every stage of
:func:`creator_plugin._fit.fit_arrays` reads its settings from it. The
constructor's parameters are declared once, in ``CREATOR.__init__`` and
``CREATOR._parameter_constraints``; the fields here are those parameters
(without ``random_state``, which seeds a fit rather than describing it; the
options objects resolved) plus two settings the estimator decides
(``check_n_latent`` and ``keep_features``). ``tests/test_structure.py``
checks that they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .options import OrderingOptions, RefineOptions

__all__ = ["ICA_DEFAULTS", "FitConfig"]

#: FastICA settings of the ordering step (``OrderingOptions.ica_max_iter``, ``ica_tol``,
#: ``ica_fun``).
ICA_DEFAULTS = MappingProxyType({"max_iter": 400, "tol": 1e-5, "fun": "logcosh"})


@dataclass(frozen=True)
class FitConfig:
    """Every setting of one CREATOR fit (see :class:`creator_plugin.CREATOR`).

    Attributes
    ----------
    n_latent : int
        The number of latent features d (``"auto"`` already resolved).
    scorer, pruning, prune_threshold, disentangle, standardize, quality, quality_resamples
        As in :class:`creator_plugin.CREATOR` (``prune_threshold`` may still
        be ``"auto"``: its value depends on the number of environments).
    ordering : OrderingOptions
        The ordering's settings (``CREATOR(ordering=None)`` resolved).
    refine : RefineOptions
        The refine steps (``"auto"`` and None resolved).
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
    ordering: OrderingOptions = field(default_factory=OrderingOptions)
    pruning: str = "residual"
    prune_threshold: float | str = "auto"
    disentangle: str = "evidence"
    refine: RefineOptions = field(default_factory=RefineOptions)
    standardize: bool = True
    quality: bool = True
    quality_resamples: int = 0
    check_n_latent: bool = True
    keep_features: bool = False

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
    def ica_options(self) -> MappingProxyType:
        """FastICA's settings, keyed as :func:`.ordering.ica_directions` takes them."""
        o = self.ordering
        return MappingProxyType({"max_iter": o.ica_max_iter, "tol": o.ica_tol, "fun": o.ica_fun})

    @property
    def measurement_noise(self) -> bool:
        """Whether the fit corrects for measurement noise (never in paper mode)."""
        return self.refine.measurement_noise and not self.paper_mode

    @property
    def ordering_settings(self) -> tuple:
        """The settings the ordering step (and the reduction before it) depend on."""
        o = self.ordering
        return (self.n_latent, self.scorer, o.n_reestimate, o.reestimate_min_sources, o.polish,
                self.standardize, self.paper_mode, self.measurement_noise,
                tuple(sorted(self.ica_options.items())),
                tuple(sorted((k, repr(v)) for k, v in o.scorer_options.items())))

    @classmethod
    def from_estimator(cls, estimator, n_latent: int, **settings) -> FitConfig:
        """The configuration of ``estimator`` (parameters already validated).

        Parameters
        ----------
        estimator : CREATOR
        n_latent : int
            The resolved number of latents.
        **settings
            Fields that override the estimator's parameters
            (``check_n_latent``, ``keep_features``).

        Returns
        -------
        FitConfig
        """
        params = estimator.get_params(deep=False)
        values = {k: params[k] for k in ("scorer", "pruning", "prune_threshold", "disentangle",
                                         "standardize", "quality", "quality_resamples")}
        return cls(n_latent, ordering=estimator.ordering_options,
                   refine=estimator.refine_options, **{**values, **settings})

    def replace(self, **changes) -> FitConfig:
        """A copy with some fields changed (:func:`dataclasses.replace`)."""
        return replace(self, **changes)
