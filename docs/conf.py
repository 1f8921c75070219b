"""Sphinx configuration: MyST markdown pages, the API reference from the numpydoc docstrings."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "creator-plugin"
author = "creator-plugin developers"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_default_options = {
    "members": True,
    "undoc-members": False,
    # scikit-learn's generated metadata-routing setters, DoWhy's own method docs
    "exclude-members": ("set_fit_request, set_transform_request, "
                        "set_inverse_transform_request, estimate_effect"),
}
autodoc_typehints = "description"
autodoc_mock_imports = ["torch", "transformers"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = "creator-plugin"
# attributes listed in a docstring's Attributes section are not documented twice
napoleon_use_ivar = True
# members inherited from scikit-learn or DoWhy keep their docs in those projects
autodoc_inherit_docstrings = False





class _PagesStillToCome:
    """Drop the warning of a glob entry listed in OPTIONAL_PAGES that matches nothing yet."""

    def filter(self, record) -> bool:
        message = record.getMessage()
        return not ("didn't match any documents" in message
                    and any(repr(p) in message for p in OPTIONAL_PAGES))


# pages other authors add as they land; every other empty pattern still fails the build
OPTIONAL_PAGES = ["safety*", "peers*", "real_data*", "llm*"]


def setup(app):
    import logging

    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_PagesStillToCome())
