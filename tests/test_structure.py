"""The estimator's parameters are declared consistently, and fit results are immutable."""

import dataclasses
import inspect

import numpy as np
import pytest

from creator_plugin import CREATOR, OrderingOptions, RefineOptions
from creator_plugin._config import FitConfig
from creator_plugin._fit import fit_arrays
from creator_plugin.ordering import OrderingResult


def _constructor_parameters():
    return [n for n in inspect.signature(CREATOR.__init__).parameters if n != "self"]


def test_signature_and_constraints_name_the_same_parameters():
    assert set(_constructor_parameters()) == set(CREATOR._parameter_constraints)
    assert set(CREATOR(2).get_params(deep=False)) == set(CREATOR._parameter_constraints)


def test_fit_config_holds_every_constructor_parameter():
    fields = {f.name for f in dataclasses.fields(FitConfig)}
    # random_state seeds a fit rather than describing it; the other two are the
    # estimator's own switches.
    assert fields - {"check_n_latent", "keep_features"} == (
        set(_constructor_parameters()) - {"random_state"})
    model = CREATOR(3, ordering=OrderingOptions(n_reestimate=1, scorer_options={"score_rows": 500}),
                    prune_threshold=0.3, refine=None)
    config = FitConfig.from_estimator(model, 3)
    for name in fields - {"n_latent", "check_n_latent", "keep_features", "ordering", "refine"}:
        assert getattr(config, name) == getattr(model, name)
    assert config.ordering == model.ordering and config.refine == RefineOptions.none()
    assert dict(config.ordering.scorer_options) == {"score_rows": 500}
    assert dict(config.ica_options) == {"max_iter": 400, "tol": 1e-5, "fun": "logcosh"}


def test_fit_config_defaults_are_the_constructors():
    """A config built without arguments fits like CREATOR(d) with every default."""
    defaults = FitConfig.from_estimator(CREATOR(3), 3)
    assert defaults == FitConfig(3)


def test_fit_config_is_frozen_and_owns_its_options():
    options = {"n_features": 8}
    config = FitConfig(3, ordering=OrderingOptions(scorer_options=options))
    options["n_features"] = 1
    assert config.ordering.scorer_options["n_features"] == 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.pruning = "rank"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.ordering.polish = False
    with pytest.raises(TypeError):
        config.ordering.scorer_options["n_features"] = 2
    assert FitConfig(3, pruning="rank_raw").paper_mode and not config.paper_mode


def test_at_most_eleven_constructor_parameters_and_no_varargs():
    params = inspect.signature(CREATOR.__init__).parameters
    assert len(params) - 1 <= 11
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params.values())
    assert list(inspect.signature(CREATOR).parameters) == list(params)[1:]


def test_the_class_docstring_is_at_most_80_lines_and_links_the_results():
    doc = inspect.cleandoc(CREATOR.__doc__)
    assert len(doc.splitlines()) <= 80
    for section in ("Parameters", "Attributes", "Examples"):
        assert f"\n{section}\n---" in doc
    assert "docs/results/refine.md" in doc
    documented = {line.split(" : ")[0] for line in doc.splitlines() if " : " in line}
    assert set(_constructor_parameters()) <= documented


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
        fit_arrays(X, config.replace(ordering=OrderingOptions(n_reestimate=0)), ordering=stage,
                   random_state=4)
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


def _package_sources():
    """``(path relative to the checkout, AST)`` of every module of creator_plugin/ and adapters/."""
    import ast
    from pathlib import Path

    root = Path(__file__).parents[1]
    for folder in ("creator_plugin", "adapters"):
        for path in sorted((root / folder).rglob("*.py")):
            yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


#: Modules allowed a private SciPy or scikit-learn import: none (the
#: hand-written optimisers use SciPy's public line search, BLAS and LAPACK).
OPTIMISER_FILES: set[str] = set()


@pytest.mark.slow
def test_no_function_is_longer_than_120_lines():
    import ast

    long = [f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path, tree in _package_sources() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > 120]
    assert not long, long


def test_no_module_imports_another_modules_private_names():
    import ast

    found = [f"{path}:{node.lineno} {alias.name}" for path, tree in _package_sources()
             for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and (node.level or (node.module or "").startswith(("creator_plugin", "adapters")))
             for alias in node.names
             if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert not found, found


def test_no_private_scipy_or_scikit_learn_imports_outside_the_optimisers():
    import ast

    def private(module: str) -> bool:
        parts = module.split(".")
        return parts[0] in ("scipy", "sklearn") and any(p.startswith("_") for p in parts)

    found = []
    for path, tree in _package_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            if any(map(private, modules)) and path not in OPTIMISER_FILES:
                found.append(f"{path}:{node.lineno}")
    assert not found, found


def test_no_upper_pins_on_numpy_scipy_or_scikit_learn():
    import re
    from pathlib import Path

    import tomllib

    text = Path(__file__).parents[1].joinpath("pyproject.toml").read_text()
    deps = tomllib.loads(text)["project"]["dependencies"]
    for name in ("numpy", "scipy", "scikit-learn"):
        spec = next(d for d in deps if re.match(rf"{name}\b", d))
        assert "<" not in spec and "~=" not in spec and "==" not in spec, spec
