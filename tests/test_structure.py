"""The estimator's parameters are declared consistently, and fit results are immutable."""

import dataclasses
import inspect

import numpy as np
import pytest

from creator_plugin import CREATOR
from creator_plugin._fit import fit_arrays
from creator_plugin.ordering import OrderingResult


def _constructor_parameters():
    return [n for n in inspect.signature(CREATOR.__init__).parameters if n != "self"]


def test_signature_and_constraints_name_the_same_parameters():
    assert set(_constructor_parameters()) == set(CREATOR._parameter_constraints)
    assert set(CREATOR(2).get_params()) == set(CREATOR._parameter_constraints)


def test_fit_arrays_takes_every_constructor_parameter():
    kw = {n for n, p in inspect.signature(fit_arrays).parameters.items()
          if p.kind is p.KEYWORD_ONLY}
    # n_latent is resolved ("auto") before the numerics; the other two are internal switches.
    assert kw - {"check_n_latent", "keep_features"} == set(_constructor_parameters()) - {"n_latent"}


def test_ordering_result_is_immutable():
    order = OrderingResult(np.eye(2), None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        order.alphas = np.zeros((2, 2))


def _import_graph():
    """Every module of the package and the package modules it imports (anywhere in it)."""
    import ast
    import importlib
    import pkgutil

    import creator_plugin

    names = ["creator_plugin"] + [
        m.name for m in pkgutil.walk_packages(creator_plugin.__path__, "creator_plugin.")]
    graph = {}
    for name in names:
        module = importlib.import_module(name)
        package = name if module.__file__.endswith("__init__.py") else name.rpartition(".")[0]
        tree = ast.parse(open(module.__file__, encoding="utf-8").read())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            deps |= {t for t in targets if t in names and t != name}
        graph[name] = deps
    return graph


def test_module_import_graph_has_no_cycle():
    import graphlib

    graph = _import_graph()
    # A package's __init__ re-exports its modules; an edge *into* a package
    # stands for those modules, so cycles through an __init__ are not counted.
    packages = {n for n in graph if any(m.startswith(n + ".") for m in graph)}
    reduced = {n: {m for m in deps if m not in packages} for n, deps in graph.items()
               if n not in packages}
    assert len(reduced) > 20
    graphlib.TopologicalSorter(reduced).prepare()  # raises CycleError on a circle
