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


def test_scikit_learn_private_helpers_still_behave_as_used():
    """The private scikit-learn helpers the package relies on (hence the version
    ceiling in pyproject.toml) exist and behave as the package expects."""
    from numbers import Integral

    import pandas as pd
    from sklearn.utils._param_validation import (
        Interval,
        InvalidParameterError,
        StrOptions,
        validate_parameter_constraints,
    )
    from sklearn.utils._set_output import ADAPTERS_MANAGER, _get_output_config

    constraints = {"a": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})]}
    validate_parameter_constraints(constraints, {"a": "auto"}, caller_name="f")
    with pytest.raises(InvalidParameterError, match="'a'"):
        validate_parameter_constraints(constraints, {"a": 0}, caller_name="f")
    assert issubclass(InvalidParameterError, ValueError)

    est = CREATOR(2).set_output(transform="pandas")
    assert _get_output_config("transform", est)["dense"] == "pandas"
    frame = ADAPTERS_MANAGER.adapters["pandas"].create_container(
        np.zeros((2, 2)), None, columns=["L1", "L2"])
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["L1", "L2"]


def test_scikit_learn_within_the_tested_range():
    import re
    from pathlib import Path

    import sklearn
    import tomllib
    from packaging.version import Version

    text = Path(__file__).parents[1].joinpath("pyproject.toml").read_text()
    deps = tomllib.loads(text)["project"]["dependencies"]
    spec = next(d for d in deps if d.startswith("scikit-learn"))
    low, high = re.search(r">=([\d.]+),<([\d.]+)", spec).groups()
    assert Version(low) <= Version(sklearn.__version__) < Version(high)
