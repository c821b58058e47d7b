"""Sphinx configuration of theorylab's documentation site (``make docs``; built offline into docs/_build/html).

* ``tutorials/plot_*.py`` are executed by sphinx-gallery into ``docs/gallery/`` (each script is also runnable on its
  own: ``python tutorials/plot_01_fedawe_bias.py``);
* the API reference is rendered from the docstrings by autodoc + napoleon (``docs/api/``);
* the claim catalogue, the figure gallery and the errata page are generated from the registry and the committed
  reference run by ``docs/_ext/theorylab_docs.py`` into ``docs/generated/``;
* math is rendered by MathJax 3 from the ``sphinx-mathjax-offline`` package, copied into ``_static/mathjax``: the
  site loads nothing from the network.
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import theorylab  # noqa: E402  (after the path: the checkout's package, with its sibling folders mapped)

project = "theorylab"
author = "the theorylab authors"
copyright = "theorylab authors"
release = version = theorylab.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # bundles MathJax 3 into _static/mathjax and points mathjax_path at it
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "theorylab_docs",  # docs/_ext: claim catalogue, figure gallery and errata generated from the registry
]

exclude_patterns = ["_build", "gallery/*.ipynb", "gallery/*.py", "gallery/*.zip", "gallery/*.md5",
                    "gallery/*.codeobj.json"]
templates_path = []
html_static_path = ["_static"]
html_css_files = ["theorylab.css"]
html_theme = "alabaster"
html_theme_options = {"description": "Federated-learning theorems as runnable, checked claims",
                      "fixed_sidebar": True, "page_width": "1180px", "sidebar_width": "230px"}
html_title = "theorylab"
html_show_sourcelink = False

# autodoc: the docstrings carry the math (:math: and .. math::); members in source order
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_mock_imports = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# MyST for the errata report (Markdown written by `theorylab errata`): $...$ and $$...$$ become math
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "tutorials"),
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",  # every tutorial is executed
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,  # a failing assert in a tutorial fails the build
    "remove_config_comments": True,
    "download_all_examples": False,
    "min_reported_time": 0,
    "show_memory": False,
    "capture_repr": (),
    "write_computation_times": False,  # its page loads DataTables from a CDN: the site loads nothing remote
}

nitpicky = False
suppress_warnings = ["myst.header"]  # the included errata report starts its findings at level 3
