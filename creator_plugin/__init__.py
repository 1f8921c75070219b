"""creator-plugin: CREATOR linear causal representation learning.

CREATOR is the method of Chen, Liu & Wang, "Linear Causal Representation
Learning by Topological Ordering, Pruning, and Disentanglement", ICML 2026.
The estimator and its steps need numpy, scipy and scikit-learn; the metrics
use networkx and the bootstrap joblib. Bridges to causal-learn, DoWhy,
networkx and pgmpy live in :mod:`creator_plugin.adapters` and the benchmark
in :mod:`creator_plugin.benchmark`; both are imported only when used, as are
:mod:`creator_plugin.interpret` (named, standardised loadings and
per-environment tables), :mod:`creator_plugin.plotting` (pictures, the
``plots`` extra) and :mod:`creator_plugin.report` (what ``creator fit``
writes).
"""

from . import metrics
from .bootstrap import BootstrapResult, bootstrap
from .dimension import DimensionSelection, select_n_latent
from .estimator import CREATOR, FitQualityWarning, IdentifiabilityWarning, WeakEvidenceWarning
from .interventional import simulate_multi_node, simulate_single_node
from .options import OrderingOptions, RefineOptions
from .simulation import Simulation, simulate, simulate_dask, simulate_family

__all__ = [
    "CREATOR",
    "DimensionSelection",
    "FitQualityWarning",
    "IdentifiabilityWarning",
    "OrderingOptions",
    "RefineOptions",
    "WeakEvidenceWarning",
    "Simulation",
    "simulate",
    "simulate_dask",
    "simulate_family",
    "simulate_multi_node",
    "simulate_single_node",
    "metrics",
    "bootstrap",
    "BootstrapResult",
    "select_n_latent",
]
__version__ = "0.1.0"
