"""Optional dependencies: a missing extra is named in the error, the core stays light."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from creator_plugin.benchmark import cli as bench_cli


@pytest.mark.parametrize("library,module,name,extra", [
    ("dowhy", "dowhy", "to_dowhy_causal_model", "dowhy"),
    ("causallearn", "causallearn", "to_general_graph", "causallearn"),
])
def test_adapter_without_its_library_names_the_extra(monkeypatch, library, module, name, extra):
    for loaded in [m for m in sys.modules if m == library or m.startswith(library + ".")]:
        monkeypatch.setitem(sys.modules, loaded, None)
    monkeypatch.setitem(sys.modules, library, None)
    monkeypatch.delitem(sys.modules, f"creator_plugin.adapters.{module}", raising=False)
    adapters = importlib.import_module("creator_plugin.adapters")
    with pytest.raises(ImportError, match=rf'pip install "creator-plugin\[{extra}\]"'):
        getattr(adapters, name)


def test_pgmpy_adapter_without_pgmpy_names_the_extra(sim3, fit, monkeypatch):
    from creator_plugin.adapters import to_pgmpy_dag

    model = fit(sim3.X, 3)
    for loaded in [m for m in sys.modules if m == "pgmpy" or m.startswith("pgmpy.")]:
        monkeypatch.setitem(sys.modules, loaded, None)
    monkeypatch.setitem(sys.modules, "pgmpy", None)
    with pytest.raises(ImportError, match=r"creator-plugin\[pgmpy\]"):
        to_pgmpy_dag(model)


def test_bench_without_its_extra_names_it(monkeypatch, capsys, tmp_path):
    # The missing extra is reported before anything about the output
    # directory (an earlier run's results there included), and nothing is
    # created.
    monkeypatch.setattr(bench_cli, "find_spec", lambda name: None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench_results").mkdir()
    (tmp_path / "bench_results" / "results.csv").write_text("kept\n")
    assert bench_cli.main(["--quick", "--seeds", "1"]) == 2
    err = capsys.readouterr().err
    assert "lingam" in err and "matplotlib" in err and 'creator-plugin[bench]' in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bench_results", "results.csv"]
    assert (tmp_path / "bench_results" / "results.csv").read_text() == "kept\n"


@pytest.mark.slow
def test_import_stays_light():
    code = ("import sys, creator_plugin, creator_plugin.adapters, creator_plugin.interpret; "
            "print(sorted({'causallearn', 'dowhy', 'pgmpy', 'matplotlib'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- what the wheel holds -------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
# source folder -> the package it installs as (setup.py: adapters/ is creator_plugin.adapters)
TREES = {"creator_plugin": "creator_plugin", "adapters": "creator_plugin.adapters"}
CODE_SUFFIXES = {".py", ".pyx", ".ipynb", ".sh", ".r", ".jl", ".c", ".cpp", ".js"}


def _wheel_modules() -> dict[str, Path]:
    """Every module the wheel installs, by dotted name, from the source trees setup.py packs."""
    out = {}
    for src, dest in TREES.items():
        for path in sorted((ROOT / src).rglob("*.py")):
            if "__pycache__" in path.parts or path.parent == ROOT / "creator_plugin/adapters":
                continue  # the checkout's stand-in for adapters/, not shipped (setup.py)
            parts = list(path.relative_to(ROOT / src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([dest, *parts])] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The wheel's modules that ``name`` imports anywhere in its source (lazy imports too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        for target in targets:
            # importing a.b.c runs a and a.b too
            parts = target.split(".")
            found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(modules)
    return found


@pytest.mark.slow
def test_every_wheel_module_is_reached_from_a_public_name_or_the_cli():
    modules = _wheel_modules()
    # the public names: the package, its adapters (whose submodules load on attribute access,
    # listed in _SUBMODULES) and the `creator` command (creator_plugin.cli:main)
    adapters = ast.literal_eval(
        next(n.value for n in ast.parse((ROOT / "adapters/__init__.py").read_text()).body
             if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_SUBMODULES"))
    roots = ["creator_plugin", "creator_plugin.cli", "creator_plugin.adapters",
             *(f"creator_plugin.adapters.{m}" for m in adapters)]
    reached, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(_imports(name, modules[name], modules) - reached)
    assert sorted(set(modules) - reached) == []
    assert len(modules) > 30  # the walk saw the real tree


def test_results_folders_hold_data_only():
    code = [p.relative_to(ROOT).as_posix() for p in (ROOT / "benchmarks/results").rglob("*")
            if p.is_file() and p.suffix.lower() in CODE_SUFFIXES]
    assert code == []
    testpaths = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines()
                     if line.startswith("testpaths"))
    assert '"benchmarks/tests"' in testpaths


@pytest.mark.slow
def test_installed_wheel_imports_adapters_from_the_checkout_root(tmp_path):
    """`pip install .` then Python started in the checkout: the local folder shadows the
    install and must still import the adapters."""
    # a non-editable install into its own folder, first on the path (the dependencies
    # come from this environment)
    import shutil

    source = tmp_path / "source"  # a copy: building writes build/ next to the sources
    for name in ["creator_plugin", "adapters"]:
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ["setup.py", "pyproject.toml", "README.md"]:
        shutil.copy(ROOT / name, source / name)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(source)],
                   check=True, cwd=tmp_path)
    python, env = sys.executable, {**os.environ, "PYTHONPATH": str(site)}
    code = ("import creator_plugin.adapters as a, creator_plugin.adapters.graphs as g; "
            "print(a.__file__); print(g.__file__); print(len(a.__all__))")
    installed = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                               cwd=tmp_path, env=env).stdout.split()
    assert installed[0].startswith(str(site)) and int(installed[2]) > 5  # the wheel itself
    here = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert here.returncode == 0, here.stderr
    local = here.stdout.split()
    assert local == [str(ROOT / "adapters/__init__.py"), str(ROOT / "adapters/graphs.py"),
                     installed[2]]
