"""Warnings issued by CREATOR fits."""

from __future__ import annotations

__all__ = ["FitQualityWarning", "IdentifiabilityWarning", "WeakEvidenceWarning"]


class IdentifiabilityWarning(UserWarning):
    """Fewer environments than the identifiability condition needs."""


class WeakEvidenceWarning(UserWarning):
    """The data carry little evidence for the recovered order (e.g. Gaussian noise)."""


class FitQualityWarning(UserWarning):
    """The fit-quality verdict found a reason not to trust the fit.

    One class for every kind of issue (see
    :data:`creator_plugin.quality.ISSUE_KINDS`); the message starts with
    the issue's title, e.g. ``"no heterogeneity across environments: ..."``,
    and ``diagnostics_["quality"]["issues"]`` lists the kinds as data. To
    silence one kind, filter on the message:
    ``warnings.filterwarnings("ignore", message="n_latent mismatch",
    category=FitQualityWarning)``.
    """
