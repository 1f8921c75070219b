"""Bridges from CREATOR results to causal-learn, DoWhy, networkx and pgmpy.

Submodules (each imports its library only when it is itself imported):

* :mod:`.causallearn` - :func:`creator` (``cdnod``-style search),
  :class:`CreatorGraph`, :func:`to_general_graph`,
  :func:`general_graph_to_adjacency`, :func:`general_graph_to_networkx`,
  :func:`to_pydot`.
* :mod:`.graphs` - :func:`to_networkx`, :func:`adjacency_from_networkx`,
  :func:`to_pgmpy_dag`, :func:`to_linear_gaussian_bn`.
* :mod:`.dowhy` - :func:`latent_dataframe`, :func:`to_dowhy_causal_model`,
  :func:`to_gcm`, :func:`intervene_observations`.

The names above are also available here; accessing one imports its submodule
lazily, so ``import creator_plugin.adapters`` stays cheap.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "causallearn": [
        "CreatorGraph",
        "creator",
        "to_general_graph",
        "general_graph_to_adjacency",
        "general_graph_to_networkx",
        "to_pydot",
    ],
    "graphs": ["to_networkx", "adjacency_from_networkx", "to_pgmpy_dag", "to_linear_gaussian_bn"],
    "dowhy": [
        "CreatorCausalModel",
        "InterventionSamples",
        "latent_dataframe",
        "to_dowhy_causal_model",
        "to_gcm",
        "intervene_observations",
    ],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        module = importlib.import_module(f".{_WHERE[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_EXPORTS))
