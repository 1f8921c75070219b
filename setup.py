"""Package discovery (everything else is in pyproject.toml).

``creator_plugin/`` is found as it is; the top-level ``adapters/`` directory is
installed as ``creator_plugin.adapters`` (with any subpackage it grows), which
a static ``[tool.setuptools.packages.find]`` table cannot express.
"""

from setuptools import find_packages, setup

ADAPTERS = "creator_plugin.adapters"

setup(
    packages=[
        # creator_plugin/adapters/ is the checkout's stand-in for adapters/ (its __init__
        # says why); the wheel takes the real folder
        *find_packages(include=["creator_plugin", "creator_plugin.*"],
                       exclude=[ADAPTERS, f"{ADAPTERS}.*"]),
        ADAPTERS,
        *(f"{ADAPTERS}.{sub}" for sub in find_packages("adapters")),
    ],
    package_dir={ADAPTERS: "adapters"},
)
