"""The options objects of :class:`creator_plugin.CREATOR`: the ordering's settings and the
refine steps.

Both are small frozen objects; ``CREATOR.set_params`` reaches their fields
(``ordering__n_reestimate=0``, ``refine__revise_graph=False``), so a grid
search can tune one, and ``clone`` and model files keep them (model files
store their fields, not a pickle). :func:`upgrade_parameters` spells the
keywords of the earlier constructor (19 parameters) in the current one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from numbers import Integral, Real
from types import MappingProxyType

from ._params import Interval, Options, validate_parameters

__all__ = ["EARLIER_KEYWORDS", "OrderingOptions", "RefineOptions", "upgrade_parameters"]


class _Frozen:
    """What both options objects share: validation, ``replace``, a short repr, a plain dict."""

    _constraints: dict = {}

    def __post_init__(self):
        validate_parameters(self._constraints, self.to_dict(), type(self).__name__)

    def get_params(self, deep: bool = True) -> dict:
        """The fields, as scikit-learn's ``get_params`` gives an estimator's parameters."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_dict(self) -> dict:
        """The fields as plain Python values (a model file stores them so)."""
        return {name: dict(v) if isinstance(v, MappingProxyType) else v
                for name, v in self.get_params().items()}

    def replace(self, **changes):
        """A copy with some fields changed (an unknown field is a ``TypeError`` naming it)."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {unknown[0]!r}; its fields: "
                            f"{', '.join(f.name for f in fields(self))}.")
        return replace(self, **changes)

    def __sklearn_clone__(self):
        return self  # immutable: a clone may share it

    def __reduce__(self):
        return (_rebuild, (type(self), self.to_dict()))

    def __repr__(self) -> str:
        changed = [f"{f.name}={dict(v) if isinstance(v, MappingProxyType) else v!r}"
                   for f in fields(self) if (v := getattr(self, f.name)) != f.default
                   and not (f.name == "scorer_options" and not v)]
        return f"{type(self).__name__}({', '.join(changed)})"


def _rebuild(cls, fields_: dict):
    """An options object from its fields (pickle, copy)."""
    return cls(**fields_)


@dataclass(frozen=True, repr=False)
class OrderingOptions(_Frozen):
    """Settings of the ordering step (``CREATOR(ordering=...)``; None: these defaults).

    Parameters
    ----------
    n_reestimate : int, default=3
        After scoring a step's ICA candidates, re-estimate the ``n_reestimate``
        best that extract different sources from all environments jointly
        (:func:`creator_plugin.joint_ica.joint_direction`, starting also from
        the minima of the consistency score, :func:`creator_plugin.joint_ica.consistency_descent`),
        re-score them and keep the best. ``0`` keeps the best raw candidate,
        as the paper does (and leaves no close calls for the order branches).
    reestimate_min_sources : int, default=4
        Re-estimate only at the first step and at steps with at least this
        many sources left; with three or two left the re-estimation cost about
        a tenth of a d = 5 fit for no gain in accuracy.
    polish : bool, default=True
        Once the order is found, re-estimate all directions jointly, keeping
        the order (:func:`creator_plugin.joint_ica.polish_directions`). The
        paper has no such step.
    ica_max_iter : int, default=400
        FastICA iterations per environment and step.
    ica_tol : float, default=1e-5
        FastICA's tolerance.
    ica_fun : {"logcosh", "exp", "cube"}, default="logcosh"
        FastICA's contrast.
    scorer_options : dict or None, default=None
        Options of the scorer (:data:`creator_plugin.independence.SCORER_OPTIONS`):
        ``"hsic_rff"`` takes ``"n_features"`` (16) and ``"max_samples"``
        (5000, None for all rows); the other scorers take none.
    weak_evidence_level : float in [0, 1], default=0.1
        A :class:`~creator_plugin.WeakEvidenceWarning` is issued when a
        step's best consistency score per environment exceeds it (noise
        Gaussian or nearly so; only with ``scorer="ica_consistency"``).
    """

    n_reestimate: int = 3
    reestimate_min_sources: int = 4
    polish: bool = True
    ica_max_iter: int = 400
    ica_tol: float = 1e-5
    ica_fun: str = "logcosh"
    scorer_options: dict | None = field(default=None, compare=True)
    weak_evidence_level: float = 0.1

    _constraints = {
        "n_reestimate": [Interval(Integral, 0, None, closed="left")],
        "reestimate_min_sources": [Interval(Integral, 2, None, closed="left")],
        "polish": ["boolean"],
        "ica_max_iter": [Interval(Integral, 1, None, closed="left")],
        "ica_tol": [Interval(Real, 0, None, closed="neither")],
        "ica_fun": [Options({"logcosh", "exp", "cube"})],
        "scorer_options": [dict, MappingProxyType, None],
        "weak_evidence_level": [Interval(Real, 0, 1, closed="both")],
    }

    def __post_init__(self):
        super().__post_init__()
        # A read-only copy: the options cannot be changed through the dict they were given.
        object.__setattr__(self, "scorer_options",
                           MappingProxyType(dict(self.scorer_options or {})))

    def __hash__(self):
        return hash(tuple((k, repr(v)) for k, v in self.to_dict().items()))


@dataclass(frozen=True, repr=False)
class RefineOptions(_Frozen):
    """The steps beyond the paper (``CREATOR(refine=...)``; :mod:`creator_plugin.refine`).

    ``CREATOR(refine="auto")`` is ``RefineOptions()``: every step by the rule
    its module states; ``refine=None`` is :meth:`none`, the core alone. The
    measured effect of each step is on the results pages (docs/results/refine.md).

    Parameters
    ----------
    revise_graph : {"auto", True, False}, default="auto"
        Revise the pruning's decisions near its level by the likelihood of
        the disentangled SEM (:mod:`creator_plugin.refine.revision`;
        ``"auto"``: with ``pruning="residual"`` and at least 4 environments).
        True with a rank rule is an error.
    order_branches : int or "auto", default="auto"
        Fit again with the ordering's closest calls taken the other way and
        keep the best-scored model (:mod:`creator_plugin.refine.order_branches`;
        ``"auto"``: 2 branches when 7 <= d <= 15 and K >= d; 0: none).
    search_graph : {"auto", True, False}, default="auto"
        Search the finished graph by the fitted features' score
        (:mod:`creator_plugin.refine.graph_search`; ``"auto"``: with
        ``pruning="residual"`` when 8 <= d <= 12 and K >= d). True with a
        rank rule is an error.
    disentangle : {"auto", True, False}, default="auto"
        Refine the features by the likelihood of their graph
        (:mod:`creator_plugin.refine.likelihood`; ``"auto"``: with
        ``pruning="residual"`` and ``disentangle="evidence"`` when
        8 <= d <= 12 and K >= d).
    measurement_noise : bool, default=False
        Estimate Gaussian noise on the measurements from the variance the
        reduction discards and correct the second moments read after the
        ordering's search (:mod:`creator_plugin.refine.measurement_noise`;
        only with more columns than latents, never in the paper's mode).
    """

    revise_graph: bool | str = "auto"
    order_branches: int | str = "auto"
    search_graph: bool | str = "auto"
    disentangle: bool | str = "auto"
    measurement_noise: bool = False

    _constraints = {
        "revise_graph": [Options({"auto"}), "boolean"],
        "order_branches": [Options({"auto"}), Interval(Integral, 0, None, closed="left")],
        "search_graph": [Options({"auto"}), "boolean"],
        "disentangle": [Options({"auto"}), "boolean"],
        "measurement_noise": ["boolean"],
    }

    @classmethod
    def none(cls) -> RefineOptions:
        """Every step off: ``CREATOR(refine=None)``, the core alone."""
        return cls(revise_graph=False, order_branches=0, search_graph=False, disentangle=False,
                   measurement_noise=False)


#: Keywords of the earlier constructor and their current spelling.
EARLIER_KEYWORDS = {
    "n_refine": "ordering=OrderingOptions(n_reestimate=...)",
    "refine_min_sources": "ordering=OrderingOptions(reestimate_min_sources=...)",
    "polish": "ordering=OrderingOptions(polish=...)",
    "ica_options": "ordering=OrderingOptions(ica_max_iter=..., ica_tol=..., ica_fun=...)",
    "scorer_options": "ordering=OrderingOptions(scorer_options=...)",
    "weak_evidence_level": "ordering=OrderingOptions(weak_evidence_level=...)",
    "revise_graph": "refine=RefineOptions(revise_graph=...)",
    "order_branches": "refine=RefineOptions(order_branches=...)",
    "search_graph": "refine=RefineOptions(search_graph=...)",
    "measurement_noise": "refine=RefineOptions(measurement_noise=True) for 'auto'",
}

_ORDERING_FIELDS = {"n_refine": "n_reestimate", "refine_min_sources": "reestimate_min_sources",
                    "polish": "polish", "scorer_options": "scorer_options",
                    "weak_evidence_level": "weak_evidence_level"}
_REFINE_FIELDS = ("revise_graph", "order_branches", "search_graph")


def upgrade_parameters(params: dict) -> dict:
    """The keywords of the earlier 19-parameter constructor in the current spelling.

    ``n_refine``, ``refine_min_sources``, ``polish``, ``ica_options``,
    ``scorer_options`` and ``weak_evidence_level`` become fields of
    ``ordering=OrderingOptions(...)``; ``revise_graph``, ``order_branches``,
    ``search_graph`` and ``measurement_noise`` (``"auto"`` -> True) fields of
    ``refine=RefineOptions(...)``; ``disentangle="auto"`` is
    ``disentangle="evidence"`` with the refine step's ``"auto"``,
    ``"likelihood"`` adds ``RefineOptions(disentangle=True)`` and
    ``"evidence"`` ``RefineOptions(disentangle=False)``. A fit with the result
    equals the earlier fit (``tests/identity``). A dict without an earlier
    keyword or an earlier value of ``disentangle`` is returned as it is.

    Parameters
    ----------
    params : dict
        Constructor keywords (e.g. the parameters a model file stores).

    Returns
    -------
    dict
    """
    earlier = set(params) & set(EARLIER_KEYWORDS) or params.get("disentangle") in (
        "auto", "likelihood")
    if not earlier:
        return dict(params)
    out = {k: v for k, v in params.items() if k not in EARLIER_KEYWORDS}
    ordering = {new: params[old] for old, new in _ORDERING_FIELDS.items()
                if params.get(old) is not None}
    ordering.update({f"ica_{k}": v for k, v in (params.get("ica_options") or {}).items()})
    refine = {name: params[name] for name in _REFINE_FIELDS if name in params}
    if params.get("measurement_noise") == "auto":
        refine["measurement_noise"] = True
    disentangle = params.get("disentangle")
    if disentangle in ("auto", "likelihood", "evidence"):
        out["disentangle"] = "evidence"
        if disentangle != "auto":
            refine["disentangle"] = disentangle == "likelihood"
    if ordering:
        options = (params.get("ordering") or OrderingOptions()).replace(**ordering)
        out["ordering"] = None if options == OrderingOptions() else options
    base = params.get("refine", "auto")
    base = RefineOptions() if base == "auto" else RefineOptions.none() if base is None else base
    options = base.replace(**refine)
    out["refine"] = "auto" if options == RefineOptions() else options
    return out
