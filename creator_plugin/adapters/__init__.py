"""Checkout only: stands in for the top-level ``adapters/`` folder.

The wheel installs ``adapters/`` as ``creator_plugin.adapters`` (setup.py), so
this file never ships. Python started in a checkout imports this folder
instead of the installed package; without this file ``import
creator_plugin.adapters`` would fail there. It runs the real package's
``__init__`` under this name, with the real folder as its search path, so the
checkout imports the same code the wheel installs.
"""

from pathlib import Path

_REAL = Path(__file__).resolve().parents[2] / "adapters"
__path__ = [str(_REAL)]
__file__ = str(_REAL / "__init__.py")
exec(compile((_REAL / "__init__.py").read_text(encoding="utf-8"), __file__, "exec"))
