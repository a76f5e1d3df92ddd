"""Every public callable is documented in numpydoc form (DESIGN rule 12).

For each name in the ``__all__`` of every public package, numpydoc's own validator
(:func:`numpydoc.validate.validate`) must find a docstring with a summary line, every
parameter documented (and none that does not exist), and a Returns section for a
function that returns something. A record class (a dataclass or NamedTuple) documents
its fields under Attributes, one per field, and an enum its members; protocols,
enums and exceptions are not constructed by users, so their parameters are not
required. Every public method and property of every public class is checked too,
like a function. Run this file (``python property_tests/test_docstrings.py``) to print
the count: "N of M public callables, records and members numpydoc-complete".
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


def _attribute_names(cls: type) -> set[str]:
    """The names a class's own docstring lists under Attributes. numpydoc's class
    member lists are off: with them on, ClassDoc fills an absent Attributes section
    with the class's data descriptors (a slotted dataclass's fields), so a record
    documenting none of its fields would pass."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = ClassDoc(cls, config={"show_class_members": False})
    return {name.strip() for p in doc["Attributes"] for name in p.name.split(":")[0].split(",")}


def _enum_members(obj: type) -> list[str]:
    return [m.name for m in obj]  # type: ignore[attr-defined]


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
    if isinstance(inspect.getattr_static(*_owner_and_name(qualified)), property):
        codes.pop("RT01", None)  # a property's summary says what it is
    problems = [f"{qualified}: {code} {msg}" for code, msg in codes.items()]
    if _is_record(obj):
        # A record that extends another documents only its own fields; the base's
        # docstring documents the rest.
        documented = set()
        for cls in obj.__mro__:
            if cls is not object and _is_record(cls):
                documented |= _attribute_names(cls)
        missing = [f for f in _record_fields(obj) if f not in documented]
        if missing:
            problems.append(f"{qualified}: fields not documented as Attributes: "
                            f"{', '.join(missing)}")
    elif inspect.isclass(obj) and issubclass(obj, enum.Enum):
        missing = [m for m in _enum_members(obj) if m not in _attribute_names(obj)]
        if missing:
            problems.append(f"{qualified}: members not documented as Attributes: "
                            f"{', '.join(missing)}")
    return problems


def _owner_and_name(qualified: str) -> tuple[object, str]:
    """(the object holding the last part of ``qualified``, that part's name)."""
    import importlib

    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            holder: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:
            holder = getattr(holder, part)
        return holder, parts[-1]
    raise LookupError(qualified)


def _public_members() -> list[tuple[str, str, str]]:
    """Every public method and property of every public class, as (package, class,
    member): the members the class defines or inherits from a vistalab class (not
    those of ``object``, ``tuple``, ``Enum``, ``Exception``...), which the API pages
    list."""
    out = []
    for package, module in PUBLIC_PACKAGES.items():
        for name in module.__all__:
            cls = getattr(module, name)
            if not inspect.isclass(cls) or issubclass(cls, BaseException):
                continue
            for member in sorted(dir(cls)):
                if member.startswith("_"):
                    continue
                owner = next((c for c in cls.__mro__ if member in c.__dict__), None)
                if owner is None or not owner.__module__.startswith("vistalab."):
                    continue
                raw = inspect.getattr_static(cls, member)
                if isinstance(raw, (property, classmethod, staticmethod)) or inspect.isfunction(
                        raw):
                    out.append((package, name, member))
    return out


@pytest.mark.parametrize(("package", "name"), _public_callables(),
                         ids=[f"{p}.{n}" for p, n in _public_callables()])
def test_public_callable_has_a_numpydoc_docstring(package, name):
    obj = getattr(PUBLIC_PACKAGES[package], name)
    assert docstring_problems(f"vistalab.{package}.{name}", obj) == []


@pytest.mark.parametrize(("package", "cls", "member"), _public_members(),
                         ids=[f"{p}.{c}.{m}" for p, c, m in _public_members()])
def test_public_method_has_a_numpydoc_docstring(package, cls, member):
    """Every public method and property of every public class (those its API page
    lists, inherited ones included) passes the same numpydoc checks as a public
    function: a summary, every parameter documented, a Returns section for a method
    that returns something (a property's summary says what it is)."""
    assert docstring_problems(f"vistalab.{package}.{cls}.{member}", None) == []


def numpydoc_count() -> tuple[int, int, list[str]]:
    """(complete, total, problems) over every public callable, record and member:
    the documentation's numpydoc bar, printed by running this file."""
    problems: list[str] = []
    names = [(f"vistalab.{p}.{n}", getattr(PUBLIC_PACKAGES[p], n))
             for p, n in _public_callables()]
    names += [(f"vistalab.{p}.{c}.{m}", None) for p, c, m in _public_members()]
    complete = 0
    for qualified, obj in names:
        found = docstring_problems(qualified, obj)
        problems += found
        complete += not found
    return complete, len(names), problems


def test_the_checker_fails_on_broken_docstrings():
    """The checker bites: a function missing a parameter and a Returns section, a
    record missing a field (slotted or not), an enum missing a member and a method
    without a docstring are reported."""
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

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        """A slotted record whose docstring lists no field (numpydoc's class member
        lists would fill in its slots as Attributes)."""

        x: int
        y: int

    class Colour(enum.Enum):
        """Two colours.

        Attributes
        ----------
        RED : str
            Red.
        """

        RED = "red"
        BLUE = "blue"

    class Box:
        """A box."""

        def fill(self, n: int) -> int:
            return n

    for obj in (scale, Pair, Slotted, Colour, Box):
        obj.__module__ = module.__name__
        setattr(module, obj.__name__, obj)
    import sys

    sys.modules[module.__name__] = module
    try:
        scale_problems = docstring_problems("vista_doc_probe.scale", scale)
        pair_problems = docstring_problems("vista_doc_probe.Pair", Pair)
        slotted_problems = docstring_problems("vista_doc_probe.Slotted", Slotted)
        colour_problems = docstring_problems("vista_doc_probe.Colour", Colour)
        method_problems = docstring_problems("vista_doc_probe.Box.fill", None)
    finally:
        del sys.modules[module.__name__]
    assert slotted_problems == [
        "vista_doc_probe.Slotted: fields not documented as Attributes: x, y"]
    assert colour_problems == [
        "vista_doc_probe.Colour: members not documented as Attributes: BLUE"]
    assert any(" GL08 " in p for p in method_problems)
    assert any("PR01" in p for p in scale_problems)
    assert any("RT01" in p for p in scale_problems)
    assert pair_problems == ["vista_doc_probe.Pair: fields not documented as Attributes: b"]


def glance_problems(page: str) -> list[str]:
    """What the "Workspace at a glance" page gets wrong: a public member of
    Workspace it does not list, one it lists twice, or a name that is no member."""
    import re

    from vistalab.workspace import Workspace

    listed = re.findall(r"\{(?:meth|attr)\}`~vistalab\.workspace\.Workspace\.(\w+)`", page)
    settings = re.search(r"^\| (`budget`.*?) \|", page, re.M)
    if settings:
        listed += re.findall(r"`(\w+)`", settings.group(1))
    members = {m for m in dir(Workspace) if not m.startswith("_")}
    # instance attributes: the names of the class docstring's Attributes section
    doc = Workspace.__doc__ or ""
    section = re.search(r"Attributes\n\s*-+\n(.*?)(?:\n\s*\n\s*\w[\w ]*\n\s*-+\n|\Z)", doc, re.S)
    if section:
        members |= set(re.findall(r"^\s{4}(\w+) :", section.group(1), re.M))
    problems = [f"not listed: {m}" for m in sorted(members - set(listed))]
    problems += [f"listed twice: {m}" for m in sorted({m for m in listed if listed.count(m) > 1})]
    problems += [f"not a member: {m}" for m in sorted(set(listed) - members)]
    return problems


def test_workspace_at_a_glance_lists_every_member_once():
    """docs/api/workspace-at-a-glance.md groups every public method and attribute of
    Workspace (register, render, act, read back, persist, inspect), each once; the
    check reports a member dropped from the page or a name that is not one."""
    from pathlib import Path

    page_path = Path(__file__).resolve().parent.parent / "docs" / "api" / \
        "workspace-at-a-glance.md"
    if not page_path.is_file():
        pytest.skip("needs the documentation sources (docs/api): run from a checkout")
    page = page_path.read_text(encoding="utf-8")
    assert glance_problems(page) == []
    broken = page.replace("{meth}`~vistalab.workspace.Workspace.render`",
                          "{meth}`~vistalab.workspace.Workspace.rendr`")
    assert glance_problems(broken) == ["not listed: render", "not a member: rendr"]


def hidden_members(template: str) -> list[str]:
    """The public members (``package.Class.member``) that the autosummary class
    template's ``:exclude-members:`` option would leave off the API pages."""
    import re

    excluded: set[str] = set()
    for found in re.findall(r"^\s*:exclude-members:(.*)$", template, re.M):
        excluded |= {name.strip() for name in found.split(",") if name.strip()}
    return [f"{p}.{c}.{m}" for p, c, m in _public_members() if m in excluded]


def test_api_pages_hide_no_public_member():
    """The class template lists every public member: it may leave out members
    inherited from builtins (``:inherited-members:``) but excludes none by name, as
    an exclusion list would hide a vistalab method named like a ``str`` method
    (``Tokenizer.count``, ``Strategy.encode``); the check finds such an exclusion."""
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "_templates" / "autosummary" / \
        "class.rst"
    if not path.is_file():
        pytest.skip("needs the documentation sources (docs/_templates): run from a checkout")
    template = path.read_text(encoding="utf-8")
    assert hidden_members(template) == []
    broken = template + "   :exclude-members: count, index\n"
    assert "workspace.Tokenizer.count" in hidden_members(broken)


if __name__ == "__main__":
    done, total, found = numpydoc_count()
    if found:
        print(*found, sep="\n")
    print(f"{done} of {total} public callables, records and members numpydoc-complete "
          f"({100 * done / total:.0f}%)")
    raise SystemExit(0 if done == total else 1)
