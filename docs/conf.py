"""Sphinx configuration of the orbitkernels documentation.

Build (from the repository root, after ``pip install ".[docs]"``)::

    python -m sphinx -W -b html docs docs/_build/html

``-W`` turns every warning into an error, so a broken docstring, a dangling reference or a
failing gallery example fails the build (CI runs exactly this, see ``.ci/run``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The checkout's sources win over an installed copy, so the pages describe the code beside them.
sys.path.insert(0, str(ROOT / "src"))
# The gallery runs single-threaded and headless: the timings it shows are the ones a 2-core CI sees,
# and no example opens a window.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import orbitkernels  # noqa: E402  (after the path set-up above)

project = "orbitkernels"
author = "the orbitkernels developers"
copyright = "the orbitkernels developers, BSD-3-Clause"
release = orbitkernels.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates"]

# --- API reference: one page per public name, written by autosummary from docs/api.rst -------------
autosummary_generate = True
# numpydoc renders the Parameters / Returns sections. The class template
# (_templates/autosummary/class.rst) lists the library's own methods; numpydoc's member tables would
# add every method of scikit-learn's mixins (get_params, set_output, ...) to each page again.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- Markdown pages (the generated reports, the guides) ---------------------------------------------
myst_enable_extensions = ["dollarmath"]
# Links such as ``choosing_the_group.md#the-law-q`` point at section anchors.
myst_heading_anchors = 3
suppress_warnings = [
    # The pages written by ``orbitkernels report`` start at "##" (they are also read on GitHub
    # beside the README); their first heading is still the page title.
    "myst.header",
]

# --- Gallery: examples/plot_*.py run at every build; what they draw is what the pages show ---------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 1,
    # Each example starts from matplotlib's default settings (each seeds its own random draws).
    "reset_modules": ("matplotlib",),
    # "Examples using X" at the foot of each API page.
    "doc_module": ("orbitkernels",),
    "backreferences_dir": str(DOCS / "generated"),
}

# --- HTML ------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"orbitkernels {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["custom.css"]


def _skip_metadata_requests(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (metadata routing).

    scikit-learn adds them to every estimator whose ``fit``/``score`` take extra arguments; their
    docstrings point into scikit-learn's own glossary, which these pages do not have.
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_requests)
