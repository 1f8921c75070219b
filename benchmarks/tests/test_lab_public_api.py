"""The lab uses only the public API of creator_plugin.

Every ``.py`` file under ``benchmarks/`` is parsed (not imported) and checked
for a private name of the package: a dotted path with a component that starts
with ``_`` (dunders such as ``__file__`` and ``__version__`` excepted) in

* an import (``import creator_plugin._fit``, ``from creator_plugin import _csv``,
  ``from creator_plugin.refine.likelihood import _objective``);
* an attribute read or written through a name bound to the package or one
  of its modules or objects (``creator_plugin._validation``,
  ``likelihood._objective`` after ``from creator_plugin.refine import likelihood``);
* ``getattr``, ``setattr``, ``hasattr`` or ``delattr`` (also
  ``monkeypatch.setattr``) on such a name with a constant private attribute;
* a string constant that is a dotted path of the package
  (``importlib.import_module("creator_plugin._fit")``,
  ``monkeypatch.setattr("creator_plugin._x.y", ...)``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1]
ROOT = BENCHMARKS.parent
PACKAGE = "creator_plugin"
_DOTTED = re.compile(rf"{PACKAGE}(\.[A-Za-z_]\w*)+")
_ATTRIBUTE_CALLS = {"getattr", "setattr", "hasattr", "delattr"}

#: Lab files whose subject is one of the package's own private routines: a
#: benchmark that times a hand-written routine against the public call it
#: stands for must call the routine itself. Each may use only the private
#: names listed for it.
MEASURES_PRIVATE = {
    "benchmarks/optimiser_policy.py": {f"{PACKAGE}._lapack.eigh_syevr"},
    # the polish's hand-written BFGS and its objective, timed and compared with
    # SciPy's limited-memory form on one captured polish
    "benchmarks/experiments/polish_bound_probe.py": {
        f"{PACKAGE}._bfgs", f"{PACKAGE}.joint_ica._ordered_contrast"},
    # the fit's choice of route from its steps before the choice, without the rest of
    # the fit (the zoo's d = 10 fits of measured data take minutes)
    "benchmarks/sparse_changes_zoo.py": {
        f"{PACKAGE}._fit", f"{PACKAGE}._fit._route", f"{PACKAGE}._config.FitConfig",
        f"{PACKAGE}._random.as_generator",
        f"{PACKAGE}._validation.check_environments"},
}


def _private(path: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in path.split("."))


def _chain(node: ast.AST) -> tuple[str | None, list[str]]:
    """``(base name, [attr, ...])`` of ``base.attr1.attr2``; ``(None, [])`` otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, parts[::-1]
    return None, []


def private_uses(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every private creator_plugin name ``source`` uses."""
    tree = ast.parse(source, filename)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    bound: dict[str, str] = {}  # local name -> the package path it stands for
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != PACKAGE:
                    continue
                if _private(alias.name):
                    found.append((node.lineno, alias.name))
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[PACKAGE] = PACKAGE
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and \
                node.module.split(".")[0] == PACKAGE:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _private(full):
                    found.append((node.lineno, full))
                bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(parents.get(node), ast.Attribute):
            # the whole chain once, at its outermost attribute
            base, attrs = _chain(node)
            if base in bound and _private(".".join(attrs)):
                found.append((node.lineno, ".".join([bound[base], *attrs])))
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            base, attrs = _chain(node.args[0])
            target = node.args[1]
            if name in _ATTRIBUTE_CALLS and base in bound and isinstance(target, ast.Constant) \
                    and isinstance(target.value, str) and _private(target.value):
                found.append((node.lineno, ".".join([bound[base], *attrs, target.value])))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _DOTTED.fullmatch(node.value) and _private(node.value):
            found.append((node.lineno, node.value))
    return sorted(set(found))


def _files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in BENCHMARKS.rglob("*.py")
                  if "__pycache__" not in p.parts)


def test_the_check_finds_every_kind_of_private_use():
    source = "\n".join([
        "import creator_plugin._fit",                                  # 1
        "import creator_plugin.refine._x as rx",                       # 2
        "from creator_plugin import _csv",                             # 3
        "from creator_plugin._config import FitConfig",                # 4
        "from creator_plugin.refine.likelihood import _objective",     # 5
        "import creator_plugin",                                       # 6: public
        "creator_plugin._validation.physical_memory_bytes = None",     # 7
        "from creator_plugin.refine import likelihood",                # 8: public
        "likelihood._objective(1)",                                    # 9
        "getattr(likelihood, '_objective')",                           # 10
        "monkeypatch.setattr(creator_plugin.estimator, '_fit', 1)",    # 11
        "importlib.import_module('creator_plugin._fit')",              # 12
        "print(creator_plugin.__version__, creator_plugin.metrics.shd)",  # 13: public
        "from creator_plugin.refine.likelihood import SCORE_GTOL",     # 14: public
        "obj._private; other_module._x; getattr(likelihood, 'LATER_WEIGHT_LEVEL')",  # 15
    ])
    lines = [line for line, _ in private_uses(source)]
    assert sorted(set(lines)) == [1, 2, 3, 4, 5, 7, 9, 10, 11, 12]
    # the whole chain, named by what the base stands for
    assert (7, ".".join([PACKAGE, "_validation", "physical_memory_bytes"])) in private_uses(source)


@pytest.mark.parametrize("path", _files())
def test_no_lab_file_uses_a_private_name_of_the_package(path):
    allowed = MEASURES_PRIVATE.get(path, set())
    uses = [(line, name) for line, name in private_uses((ROOT / path).read_text(encoding="utf-8"),
                                                         path) if name not in allowed]
    assert not uses, "\n".join(f"{path}:{line}: {name}" for line, name in uses)


def test_each_file_measuring_a_private_routine_uses_it():
    for path, allowed in MEASURES_PRIVATE.items():
        used = {name for _, name in private_uses((ROOT / path).read_text(encoding="utf-8"),
                                                 path)}
        assert used == allowed, (path, used)


def test_the_known_exceptions_are_files_of_the_lab():
    assert set(MEASURES_PRIVATE) <= set(_files())
