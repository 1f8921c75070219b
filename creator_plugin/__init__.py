"""creator-plugin: CREATOR linear causal representation learning.

The core (this package) is pure numpy/scipy/scikit-learn. Bridges to
causal-learn, DoWhy, networkx and pgmpy live in :mod:`creator_plugin.adapters`
and are imported only when used.
"""

from . import metrics
from .bootstrap import BootstrapResult, bootstrap
from .estimator import CREATOR, IdentifiabilityWarning, WeakEvidenceWarning
from .simulation import Simulation, simulate

__all__ = [
    "CREATOR",
    "IdentifiabilityWarning",
    "WeakEvidenceWarning",
    "Simulation",
    "simulate",
    "metrics",
    "bootstrap",
    "BootstrapResult",
]
__version__ = "0.1.0"
