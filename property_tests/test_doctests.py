"""The Examples sections of the public API run as written (doctests).

Every public name of every public package whose docstring has examples is run by
:mod:`doctest` in a fresh namespace holding that package's public names, so an
example that drifts from the code fails here, from a checkout or an installed wheel.
"""

from __future__ import annotations

import doctest
import inspect

import pytest
import vistalab.figures
import vistalab.paper_checks
import vistalab.sims
import vistalab.theory
import vistalab.workspace

import vistalab.conformance
import vistalab.sweep
import vistalab.testing

#: Every public package, imported by statement (a rename breaks this file, never
#: turns its checks into skips).
PUBLIC_PACKAGES = {m.__name__.removeprefix("vistalab."): m for m in (
    vistalab.theory, vistalab.sims, vistalab.workspace, vistalab.paper_checks,
    vistalab.figures, vistalab.testing, vistalab.sweep, vistalab.conformance)}


def _examples() -> list[tuple[str, str]]:
    found = []
    for package in PUBLIC_PACKAGES:
        module = PUBLIC_PACKAGES[package]
        for name in module.__all__:
            obj = getattr(module, name)
            doc = inspect.getdoc(obj) if (inspect.isclass(obj) or callable(obj)) else None
            if doc and ">>> " in doc:
                found.append((package, name))
    return found


EXAMPLES = _examples()


def test_the_main_entry_points_have_examples():
    """The entry points a new user starts from carry runnable examples."""
    names = {f"{p}.{n}" for p, n in EXAMPLES}
    assert {"sweep.parse_config", "figures.load_figure", "testing.binomial_interval"} <= names


@pytest.mark.parametrize(("package", "name"), EXAMPLES, ids=[f"{p}.{n}" for p, n in EXAMPLES])
def test_docstring_examples_run(package, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    module = PUBLIC_PACKAGES[package]
    obj = getattr(module, name)
    globs = {n: getattr(module, n) for n in module.__all__}
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, f"vistalab.{package}.{name}", globs=globs)
    assert tests and any(t.examples for t in tests)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
