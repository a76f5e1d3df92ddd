"""Every public callable is documented in numpydoc form (DESIGN rule 12).

For each name in the ``__all__`` of every public package, numpydoc's own validator
(:func:`numpydoc.validate.validate`) must find a docstring with a summary line, every
parameter documented (and none that does not exist), and a Returns section for a
function that returns something. A record class (a dataclass or NamedTuple) documents
its constructor's parameters as its Attributes, one per field; protocols, enums and
exceptions are not constructed by users, so their parameters are not required.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import typing
import warnings

import pytest
import vistalab.figures
import vistalab.paper_checks
import vistalab.sims
import vistalab.theory
import vistalab.workspace

import vistalab.conformance
import vistalab.sweep
import vistalab.testing

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="needs numpydoc (test extra)")
from numpydoc.docscrape import ClassDoc  # noqa: E402

#: Every public package, imported by statement (a rename breaks this file, never
#: turns its checks into skips).
PUBLIC_PACKAGES = {m.__name__.removeprefix("vistalab."): m for m in (
    vistalab.theory, vistalab.sims, vistalab.workspace, vistalab.paper_checks,
    vistalab.figures, vistalab.testing, vistalab.sweep, vistalab.conformance)}

#: numpydoc's checks every public callable must pass: no docstring (GL08), no summary
#: (SS01), a parameter undocumented (PR01) or documented but absent (PR02), no
#: Returns section (RT01).
CHECKS = ("GL08", "SS01", "PR01", "PR02", "RT01")


def _public_callables() -> list[tuple[str, str]]:
    names = []
    for package in PUBLIC_PACKAGES:
        module = PUBLIC_PACKAGES[package]
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or callable(obj):
                names.append((package, name))
    return names


def _is_record(obj: object) -> bool:
    return inspect.isclass(obj) and (dataclasses.is_dataclass(obj)
                                     or (issubclass(obj, tuple) and hasattr(obj, "_fields")))


def _is_unconstructed(obj: object) -> bool:
    return inspect.isclass(obj) and (
        issubclass(obj, (BaseException, enum.Enum))
        or getattr(obj, "_is_protocol", False) or obj is typing.Protocol)


def _record_fields(obj: type) -> list[str]:
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj) if f.init and not f.name.startswith("_")]
    return [f for f in obj._fields if not f.startswith("_")]  # type: ignore[attr-defined]


def docstring_problems(qualified: str, obj: object) -> list[str]:
    """The numpydoc problems of one public name, under this module's rules."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unknown section name is a problem too
        try:
            result = numpydoc_validate.validate(qualified)
        except UserWarning as w:
            return [f"{qualified}: {w}"]
    codes = {code: msg for code, msg in result["errors"] if code in CHECKS}
    if _is_record(obj) or _is_unconstructed(obj):
        codes.pop("PR01", None)
        codes.pop("PR02", None)
    problems = [f"{qualified}: {code} {msg}" for code, msg in codes.items()]
    if _is_record(obj):
        # A record that extends another documents only its own fields; the base's
        # docstring documents the rest.
        documented = set()
        for cls in obj.__mro__:
            if cls is object or not _is_record(cls):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doc = ClassDoc(cls)
            documented |= {name.strip() for p in [*doc["Attributes"], *doc["Parameters"]]
                           for name in p.name.split(":")[0].split(",")}
        missing = [f for f in _record_fields(obj) if f not in documented]
        if missing:
            problems.append(f"{qualified}: fields not documented as Attributes: "
                            f"{', '.join(missing)}")
    return problems


@pytest.mark.parametrize(("package", "name"), _public_callables(),
                         ids=[f"{p}.{n}" for p, n in _public_callables()])
def test_public_callable_has_a_numpydoc_docstring(package, name):
    obj = getattr(PUBLIC_PACKAGES[package], name)
    assert docstring_problems(f"vistalab.{package}.{name}", obj) == []


def test_the_checker_fails_on_broken_docstrings():
    """The checker bites: a function missing a parameter and a Returns section, and a
    record missing a field, are reported."""
    import types

    module = types.ModuleType("vista_doc_probe")

    def scale(x: float, factor: float) -> float:
        """Scale a number.

        Parameters
        ----------
        x : float
            The number.
        """
        return x * factor

    @dataclasses.dataclass(frozen=True)
    class Pair:
        """Two numbers.

        Attributes
        ----------
        a : int
            The first.
        """

        a: int
        b: int

    for obj in (scale, Pair):
        obj.__module__ = module.__name__
        setattr(module, obj.__name__, obj)
    import sys

    sys.modules[module.__name__] = module
    try:
        scale_problems = docstring_problems("vista_doc_probe.scale", scale)
        pair_problems = docstring_problems("vista_doc_probe.Pair", Pair)
    finally:
        del sys.modules[module.__name__]
    assert any("PR01" in p for p in scale_problems)
    assert any("RT01" in p for p in scale_problems)
    assert pair_problems == ["vista_doc_probe.Pair: fields not documented as Attributes: b"]
