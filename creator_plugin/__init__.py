"""creator-plugin: CREATOR linear causal representation learning.

CREATOR is the method of Chen, Liu & Wang, "Linear Causal Representation
Learning by Topological Ordering, Pruning, and Disentanglement", ICML 2026.
The estimator and its steps need numpy, scipy and scikit-learn; the metrics
use networkx and the bootstrap joblib. Bridges to causal-learn, DoWhy,
networkx and pgmpy live in :mod:`creator_plugin.adapters` and the benchmark
in :mod:`creator_plugin.benchmark`; both are imported only when used.
"""

from . import metrics
from .bootstrap import BootstrapResult, bootstrap
from .estimator import CREATOR, IdentifiabilityWarning, WeakEvidenceWarning
from .simulation import Simulation, simulate, simulate_dask

__all__ = [
    "CREATOR",
    "IdentifiabilityWarning",
    "WeakEvidenceWarning",
    "Simulation",
    "simulate",
    "simulate_dask",
    "metrics",
    "bootstrap",
    "BootstrapResult",
]
__version__ = "0.1.0"
