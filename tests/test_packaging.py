"""Optional dependencies: a missing extra is named in the error, the core stays light."""

from __future__ import annotations

import importlib
import subprocess
import sys

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


def test_bench_without_its_extra_names_it(monkeypatch, capsys):
    monkeypatch.setattr(bench_cli, "find_spec", lambda name: None)
    assert bench_cli.main(["--quick", "--seeds", "1"]) == 2
    err = capsys.readouterr().err
    assert "lingam" in err and "matplotlib" in err and 'creator-plugin[bench]' in err


@pytest.mark.slow
def test_import_stays_light():
    code = ("import sys, creator_plugin, creator_plugin.adapters, creator_plugin.interpret; "
            "print(sorted({'causallearn', 'dowhy', 'pgmpy', 'matplotlib'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
