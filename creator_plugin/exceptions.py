"""Warnings issued by CREATOR fits."""

from __future__ import annotations

__all__ = ["IdentifiabilityWarning", "WeakEvidenceWarning"]


class IdentifiabilityWarning(UserWarning):
    """Fewer environments than the identifiability condition needs."""


class WeakEvidenceWarning(UserWarning):
    """The data carry little evidence for the recovered order (e.g. Gaussian noise)."""
