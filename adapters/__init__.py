"""Bridges from CREATOR results to causal-learn, DoWhy, networkx and pgmpy.

Submodules (each imports its library only when it is itself imported):

* :mod:`.causallearn` - :func:`creator` (``cdnod``-style search),
  :class:`CreatorGraph`, :func:`to_general_graph`,
  :func:`general_graph_to_adjacency`, :func:`general_graph_to_networkx`,
  :func:`aligned_general_graph`, :func:`to_pydot`.
* :mod:`.graphs` - :func:`to_networkx`, :func:`adjacency_from_networkx`,
  :func:`to_pgmpy_dag`, :func:`to_linear_gaussian_bn`.
* :mod:`.dowhy` - :func:`latent_dataframe`, :func:`pooled_latent_dataframe`,
  :func:`to_dowhy_causal_model`, :func:`to_dowhy_pooled_causal_model`,
  :func:`to_gcm`, :func:`intervene_observations`, :func:`relative`.

Each submodule needs its library, installed by the extra of the same name
(``pip install "creator-plugin[causallearn]"``, ``[dowhy]``, ``[pgmpy]``;
:mod:`.graphs` needs only networkx except for the pgmpy functions); a
missing one raises an ``ImportError`` naming the extra.

The names above are also available here; accessing one imports its submodule
lazily, so ``import creator_plugin.adapters`` stays cheap.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

_SUBMODULES = ("causallearn", "graphs", "dowhy")


def _public_names(module: str) -> list[str]:
    """The ``__all__`` of a submodule, read from its source without importing it."""
    tree = ast.parse((Path(__file__).parent / f"{module}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise ImportError(f"creator_plugin.adapters.{module} defines no __all__.")


_WHERE = {name: module for module in _SUBMODULES for name in _public_names(module)}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        module = importlib.import_module(f".{_WHERE[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_SUBMODULES))
