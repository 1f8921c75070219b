"""The estimator's parameters are declared consistently, and fit results are immutable."""

import dataclasses
import inspect

import numpy as np
import pytest

from creator_plugin import CREATOR
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.ordering import OrderingResult


def _constructor_parameters():
    return [n for n in inspect.signature(CREATOR.__init__).parameters if n != "self"]


def test_signature_and_constraints_name_the_same_parameters():
    assert set(_constructor_parameters()) == set(CREATOR._parameter_constraints)
    assert set(CREATOR(2).get_params()) == set(CREATOR._parameter_constraints)


def test_fit_config_holds_every_constructor_parameter():
    fields = {f.name for f in dataclasses.fields(FitConfig)}
    # random_state seeds a fit rather than describing it; the other two are the
    # estimator's own switches.
    assert fields - {"check_n_latent", "keep_features"} == (
        set(_constructor_parameters()) - {"random_state"})
    model = CREATOR(3, n_refine=1, prune_threshold=0.3, scorer_options={"score_rows": 500})
    config = FitConfig.from_estimator(model, 3)
    for name in fields - {"check_n_latent", "keep_features", "ica_options", "scorer_options"}:
        assert getattr(config, name) == getattr(model, name)
    assert dict(config.scorer_options) == {"score_rows": 500}
    assert dict(config.ica_options) == {"max_iter": 400, "tol": 1e-5, "fun": "logcosh"}


def test_fit_config_defaults_are_the_constructors():
    """A config built without arguments fits like CREATOR(d) with every default."""
    defaults = FitConfig.from_estimator(CREATOR(3), 3)
    assert defaults == FitConfig(3)


def test_fit_config_is_frozen_and_owns_its_options():
    options = {"max_iter": 50}
    config = FitConfig(3, ica_options=options)
    options["max_iter"] = 1
    assert config.ica_options["max_iter"] == 50
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.pruning = "rank"
    with pytest.raises(TypeError):
        config.ica_options["tol"] = 1.0
    assert FitConfig(3, pruning="rank_raw").paper_mode and not config.paper_mode


def test_fit_arrays_is_a_short_list_of_stages():
    source = inspect.getsource(fit_arrays)
    assert len(source.splitlines()) <= 80
    assert len(inspect.signature(fit_arrays).parameters) <= 8


@pytest.mark.slow
def test_a_precomputed_ordering_gives_the_same_fit_and_is_checked():
    from creator_plugin import simulate
    from creator_plugin._fit import order_stage
    from creator_plugin._validation import check_environments

    sim = simulate(3, 3, 300, random_state=1)
    X = check_environments(sim.X, n_latent=3)
    config = FitConfig(3)
    plain = fit_arrays(X, config, random_state=4)
    stage = order_stage(X, config, 4)
    for threshold in (0.2, 0.2, 5.0):  # re-usable
        again = fit_arrays(X, config.replace(prune_threshold=threshold), ordering=stage,
                           random_state=4)
    assert again.adjacency.sum() == 0  # the threshold acted after the shared stage
    # the plain fit's settings, level included (the verdict reports the level)
    same = fit_arrays(X, config, ordering=stage, random_state=4)
    np.testing.assert_array_equal(same.components, plain.components)
    np.testing.assert_array_equal(same.adjacency, plain.adjacency)
    assert same.diagnostics["quality"] == plain.diagnostics["quality"]
    with pytest.raises(ValueError, match="random state"):
        fit_arrays(X, config, ordering=stage, random_state=5)
    with pytest.raises(ValueError, match="settings"):
        fit_arrays(X, config.replace(n_refine=0), ordering=stage, random_state=4)
    other = check_environments([x + 1e-9 for x in sim.X], n_latent=3)
    with pytest.raises(ValueError, match="other data"):
        fit_arrays(other, config, ordering=stage, random_state=4)


def test_input_is_scanned_once_per_fit(monkeypatch):
    """X is validated once: the later checks of the same list do not scan it again."""
    from creator_plugin import _validation, simulate

    calls = []
    original = _validation.as_float_matrix

    def counting(x, name):
        calls.append(name)
        return original(x, name)

    monkeypatch.setattr(_validation, "as_float_matrix", counting)
    sim = simulate(3, 3, 300, random_state=0)
    CREATOR(3, random_state=0).fit(sim.X)
    assert len(calls) == 3  # one per environment
    calls.clear()
    CREATOR("auto", random_state=0).fit(sim.X)
    assert len(calls) == 3


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


@pytest.mark.slow
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
