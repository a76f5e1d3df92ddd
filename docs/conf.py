"""Sphinx configuration of the vista-lab documentation (built by ``make docs``).

No network is used at build time: no intersphinx, no remote images, and the
tutorials execute locally through the installed package.
"""

from __future__ import annotations

import os
from typing import Any

import vistalab

project = "vista-lab"
author = "vista-lab developers"
copyright = "2026, vista-lab developers"
release = vistalab.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sphinx_design",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "jupyter_execute"]
templates_path = ["_templates"]

# API pages: one per public name, generated from each package's __all__.
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Tutorials are executed at build time (outputs and figures inline); a failing
# cell fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

# MathJax served from the site itself (django-static-mathjax ships MathJax 3 as
# files), so formulas render with no network, at build time or when reading.
def _local_mathjax() -> str:
    import importlib.util
    import shutil

    spec = importlib.util.find_spec("mathjax")
    es5 = None if spec is None or not spec.submodule_search_locations else os.path.join(
        spec.submodule_search_locations[0], "static", "mathjax", "es5")
    if es5 is None or not os.path.isfile(os.path.join(es5, "tex-mml-chtml.js")):
        raise RuntimeError("the docs need MathJax from the django-static-mathjax package; "
                           "install the docs extra: pip install -e '.[docs]'")
    dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_build", "mathjax")
    target = os.path.join(dest, "mathjax")
    if not os.path.isfile(os.path.join(target, "tex-mml-chtml.js")):
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.join(es5, "tex-mml-chtml.js"), target)
        fonts = os.path.join("output", "chtml", "fonts", "woff-v2")
        shutil.copytree(os.path.join(es5, fonts), os.path.join(target, fonts),
                        dirs_exist_ok=True)
    return dest


mathjax_path = "mathjax/tex-mml-chtml.js"
html_static_path_mathjax = _local_mathjax()

html_theme = "pydata_sphinx_theme"
html_title = f"vista-lab {release}"
html_static_path = ["_static", html_static_path_mathjax]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False

# Keep Hypothesis's database out of the source tree. (MPLBACKEND is left alone:
# the notebooks' kernel draws figures with IPython's inline backend, which an
# inherited MPLBACKEND=Agg would silence.)
os.environ.pop("MPLBACKEND", None)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join("_build", ".hypothesis"))


def _quiet_build_kernel() -> str:
    """A ``python3`` kernelspec for the build, found first through ``JUPYTER_PATH``.

    ipykernel (>= 7) logs a warning on every kernel start that the kernel runs over
    TCP without encryption: the build starts one kernel per tutorial, on localhost,
    with the ports in a connection file only this user can read, and myst-nb offers no
    way to pick the IPC transport. This kernel is the same interpreter with the kernel
    application's log level at ERROR, so that notice is not printed; a failing cell
    still fails the build (``nb_execution_raise_on_error``).
    """
    import json
    import sys

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_build", "jupyter")
    spec_dir = os.path.join(root, "kernels", "python3")
    os.makedirs(spec_dir, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                     "--IPKernelApp.log_level=ERROR"],
            "display_name": "Python 3 (vista-lab docs build)", "language": "python"}
    with open(os.path.join(spec_dir, "kernel.json"), "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    return root


os.environ["JUPYTER_PATH"] = os.pathsep.join(
    p for p in (_quiet_build_kernel(), os.environ.get("JUPYTER_PATH", "")) if p)

# --- API pages from __all__ -------------------------------------------------
# One page per public package, written before the build reads its sources, so a
# new public name appears in the reference without anyone editing a list.
API_PACKAGES = {
    "theory": "Bounds as code, the exact frontier, proof-step certificates and the Coq checks.",
    "sims": "Monte Carlo simulators of T_{N,k} and M_{n,L,l}, observation interfaces, policies.",
    "workspace": "The reference context-workspace engine.",
    "paper_checks": "The registry of the paper's claims and their checks.",
    "figures": "One script per figure, and the label placement helpers.",
    "testing": "Test your own tokenizer, store, interface, policy or strategy.",
    "conformance": "The paper's workspace invariants as a conformance suite for any context "
    "manager.",
    "sweep": "Parameter sweeps, from a laptop to a Dask cluster.",
}


def _kind(obj: object) -> str:
    import inspect

    if inspect.isclass(obj):
        return "Exceptions" if issubclass(obj, BaseException) else "Classes"
    if callable(obj):
        return "Functions"
    return "Constants"


def _short_repr() -> object:
    import reprlib

    short = reprlib.Repr()
    short.maxstring = short.maxother = 60
    short.maxlevel = 2
    return short


_SHORT = _short_repr()


def _public_packages() -> dict[str, object]:
    """Every public package, imported by statement (a rename breaks the build)."""
    import vistalab.figures
    import vistalab.paper_checks
    import vistalab.sims
    import vistalab.theory
    import vistalab.workspace

    import vistalab.conformance
    import vistalab.sweep
    import vistalab.testing

    return {m.__name__.removeprefix("vistalab."): m for m in (
        vistalab.theory, vistalab.sims, vistalab.workspace, vistalab.paper_checks,
        vistalab.figures, vistalab.testing, vistalab.sweep, vistalab.conformance)}


def _write_api_pages(app: object) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    packages = _public_packages()
    for name, blurb in API_PACKAGES.items():
        module: Any = packages[name]
        groups: dict[str, list[str]] = {}
        for public in sorted(module.__all__):
            groups.setdefault(_kind(getattr(module, public)), []).append(public)
        lines = [f"vistalab.{name}", "=" * (9 + len(name)), "", blurb, "",
                 f".. automodule:: vistalab.{name}", "   :no-members:", "",
                 f".. currentmodule:: vistalab.{name}", ""]
        for kind in ("Functions", "Classes", "Exceptions"):
            if kind not in groups:
                continue
            lines += [kind, "-" * len(kind), "", ".. autosummary::", "   :toctree: generated",
                      "   :nosignatures:", ""]
            lines += [f"   {public}" for public in groups[kind]]
            lines.append("")
        if "Constants" in groups:
            # Autosummary cannot stub module data re-exported by a package: each
            # constant is described here by its type and a bounded value.
            lines += ["Constants", "---------", ""]
            for public in groups["Constants"]:
                value = getattr(module, public)
                shown = _SHORT.repr(value)
                lines += [f".. py:data:: {public}", f"   :type: {type(value).__name__}",
                          "", f"   ``{shown}``", ""]
        text = "\n".join(lines)
        path = os.path.join(here, "api", f"{name}.rst")
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:  # rewrite only on change, so incremental builds stay incremental
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)


def setup(app):  # noqa: ANN001, ANN201 - Sphinx's hook
    # config-inited: before Sphinx discovers the source files, so a page written for
    # a new package is found (and autosummary writes its stubs) in the same build
    app.connect("config-inited", lambda app, config: _write_api_pages(app), priority=100)
    return {"parallel_read_safe": True}
