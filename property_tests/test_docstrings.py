"""Every public callable is documented in numpydoc form (DESIGN rule 12).

For each name in the ``__all__`` of every public package, numpydoc's own validator
(:func:`numpydoc.validate.validate`) must find a docstring with a summary line, every
parameter documented (and none that does not exist), and a Returns section for a
function that returns something. A record class (a dataclass or NamedTuple) documents
its fields under Attributes, one per field, and an enum its members; protocols,
enums and exceptions are not constructed by users, so their parameters are not
required. Every public method and property of every public class is checked too:
those of the fully checked classes (the engine's) like functions, the others for a
docstring with a summary line, with a backlog that may only shrink.
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


#: Classes whose every public method and property is held to the same checks
#: (the engine first: its API page is where a newcomer looks). Every other public
#: member must at least have a docstring with a summary (below).
FULLY_CHECKED_CLASSES = frozenset({
    "workspace.Workspace", "workspace.ToolOutcome", "workspace.ToolReply",
})


#: Public members still without a docstring or summary line (GL08, SS01): the
#: backlog only shrinks (a member documented meanwhile fails its test until it is
#: removed here); a member not listed must be documented.
METHOD_BACKLOG = frozenset({
    "conformance.ConformanceReport.to_dict",
    "conformance.ManagerAdapter.register", "conformance.ManagerAdapter.render",
    "conformance.Peer.installed", "conformance.Peer.pip",
    "conformance.PeerResult.to_dict",
    "conformance.StudyResult.checked", "conformance.StudyResult.to_dict",
    "conformance.Violation.to_dict",
    "conformance.WorkspaceAdapter.register", "conformance.WorkspaceAdapter.render",
    "figures.FigureScript.caption", "figures.FigureScript.checks",
    "figures.FigureScript.compute", "figures.FigureScript.default_params",
    "figures.FigureScript.plot",
    "figures.TidyTable.records",
    "paper_checks.ClaimResult.to_dict",
    "paper_checks.Outcome.failed", "paper_checks.Outcome.not_checkable",
    "paper_checks.Outcome.passed",
    "paper_checks.PaperCheckReport.by_id", "paper_checks.PaperCheckReport.by_section",
    "paper_checks.PaperCheckReport.count", "paper_checks.PaperCheckReport.counts",
    "paper_checks.Statement.formula",
    "sims.Archive.read", "sims.Archive.write",
    "sims.BayesPolicy.exact_mean_z", "sims.BayesPolicy.exact_z_pmf",
    "sims.BayesPolicy.fast_sampler", "sims.BayesPolicy.order",
    "sims.BlindInterface.exact_bayes_mean_z", "sims.BlindInterface.exact_bayes_z_pmf",
    "sims.BlindInterface.log_posterior", "sims.BlindInterface.observe",
    "sims.BlindInterface.params", "sims.BlindInterface.rate",
    "sims.BlindInterface.sample_bayes_z",
    "sims.BucketsInterface.exact_bayes_mean_z", "sims.BucketsInterface.exact_bayes_z_pmf",
    "sims.BucketsInterface.log_posterior", "sims.BucketsInterface.observe",
    "sims.BucketsInterface.params", "sims.BucketsInterface.rate",
    "sims.BucketsInterface.sample_bayes_z",
    "sims.EventCounters.to_dict",
    "sims.FeasibilityMap.to_dict",
    "sims.GaussianInterface.default_rate_trials", "sims.GaussianInterface.exact_bayes_mean_z",
    "sims.GaussianInterface.exact_bayes_z_pmf", "sims.GaussianInterface.log_posterior",
    "sims.GaussianInterface.observe", "sims.GaussianInterface.params",
    "sims.GibbsInterface.exact_bayes_mean_z", "sims.GibbsInterface.exact_bayes_z_pmf",
    "sims.GibbsInterface.log_posterior", "sims.GibbsInterface.observe",
    "sims.GibbsInterface.params", "sims.GibbsInterface.rate",
    "sims.GibbsInterface.sample_bayes_z",
    "sims.HandleCostFit.to_dict",
    "sims.Interface.log_posterior", "sims.Interface.name", "sims.Interface.observe",
    "sims.Interface.params", "sims.Interface.rate",
    "sims.KeepBits.decode", "sims.KeepBits.encode", "sims.KeepBits.plan",
    "sims.KeepBlocks.decode", "sims.KeepBlocks.encode", "sims.KeepBlocks.plan",
    "sims.LedgerInterface.exact_bayes_mean_z", "sims.LedgerInterface.exact_bayes_z_pmf",
    "sims.LedgerInterface.log_posterior", "sims.LedgerInterface.observe",
    "sims.LedgerInterface.params", "sims.LedgerInterface.rate",
    "sims.LedgerInterface.sample_bayes_z",
    "sims.Policy.name", "sims.Policy.order",
    "sims.RandomPolicy.exact_mean_z", "sims.RandomPolicy.exact_z_pmf",
    "sims.RandomPolicy.fast_sampler", "sims.RandomPolicy.order",
    "sims.RandomSubset.decode", "sims.RandomSubset.encode", "sims.RandomSubset.plan",
    "sims.Recover.decode", "sims.Recover.encode", "sims.Recover.plan",
    "sims.Strategy.decode", "sims.Strategy.encode", "sims.Strategy.name", "sims.Strategy.plan",
    "sims.Strategy.recovering",
    "sweep.SweepConfig.n_cells",
    "testing.WorkspaceMachine.answer_pending", "testing.WorkspaceMachine.archive",
    "testing.WorkspaceMachine.canonical_hash_deterministic", "testing.WorkspaceMachine.delete",
    "testing.WorkspaceMachine.ids_unique_stable_never_reused",
    "testing.WorkspaceMachine.malformed_call", "testing.WorkspaceMachine.parallel_tool_calls",
    "testing.WorkspaceMachine.plain_message", "testing.WorkspaceMachine.read_range",
    "testing.WorkspaceMachine.restore", "testing.WorkspaceMachine.setup",
    "testing.WorkspaceMachine.single_tool_call", "testing.WorkspaceMachine.teardown",
    "testing.WorkspaceMachine.tool_call", "testing.WorkspaceMachine.traversal_read",
    "theory.ChainResult.closed",
    "theory.FirstOrderPoint.bucket_over_nu", "theory.FirstOrderPoint.exact_over_nu",
    "theory.Step.key",
    "theory.StepCertificate.key", "theory.StepCertificate.passed",
    "theory.VerificationReport.broken_chains",
    "workspace.AnthropicCodec.copy", "workspace.AnthropicCodec.lookup",
    "workspace.AnthropicCodec.record",
    "workspace.ApproxTokenizer.count",
    "workspace.Block.from_plain", "workspace.Block.is_live",
    "workspace.Cl100kTokenizer.count",
    "workspace.ContextAction.to_plain",
    "workspace.DashboardConfig.to_plain",
    "workspace.DifferentialReport.model_available", "workspace.DifferentialReport.ok",
    "workspace.DifferentialReport.to_dict",
    "workspace.DiskStore.contains", "workspace.DiskStore.delete", "workspace.DiskStore.get",
    "workspace.DiskStore.key_of", "workspace.DiskStore.keys", "workspace.DiskStore.put",
    "workspace.Divergence.to_dict",
    "workspace.Event.from_plain", "workspace.Event.to_json", "workspace.Event.to_plain",
    "workspace.Group.from_plain", "workspace.Group.to_plain",
    "workspace.GroupAdvantage.group_size", "workspace.GroupAdvantage.to_plain",
    "workspace.HFTokenizer.count",
    "workspace.MemoryStore.contains", "workspace.MemoryStore.delete",
    "workspace.MemoryStore.get", "workspace.MemoryStore.key_of", "workspace.MemoryStore.keys",
    "workspace.MemoryStore.put",
    "workspace.O200kTokenizer.count",
    "workspace.OperationSequence.from_dict",
    "workspace.PayloadStore.contains", "workspace.PayloadStore.delete",
    "workspace.PayloadStore.get", "workspace.PayloadStore.key_of",
    "workspace.PayloadStore.keys", "workspace.PayloadStore.put",
    "workspace.ProbeKit.to_plain",
    "workspace.ProbeReport.to_plain",
    "workspace.ProbeScore.to_plain",
    "workspace.ProcessReward.n_turns", "workspace.ProcessReward.to_plain",
    "workspace.QuicktokTokenizer.count",
    "workspace.RewardTurn.to_plain",
    "workspace.Tokenizer.count",
    "workspace.ToolCall.to_openai",
    "workspace.TraceReplay.to_plain",
    "workspace.Trajectory.to_plain",
    "workspace.TrajectoryRecorder.workspace",
})


@pytest.mark.parametrize(("package", "cls", "member"), _public_members(),
                         ids=[f"{p}.{c}.{m}" for p, c, m in _public_members()])
def test_public_method_has_a_numpydoc_docstring(package, cls, member):
    """Every public method and property of a fully checked class passes the same
    numpydoc checks as a public function; every other one has at least a docstring
    with a summary line (GL08, SS01) once it is off the backlog."""
    qualified = f"vistalab.{package}.{cls}.{member}"
    problems = docstring_problems(qualified, None)
    if f"{package}.{cls}" not in FULLY_CHECKED_CLASSES:
        problems = [p for p in problems if " GL08 " in p or " SS01 " in p]
        if f"{package}.{cls}.{member}" in METHOD_BACKLOG:
            assert problems, (f"{qualified} is documented now: remove it from "
                              "METHOD_BACKLOG in this file")
            return
    assert problems == []


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
    members |= {"budget", "hard_limit", "tokenizer", "store", "protocol", "dashboard_config",
                "cache_prefix"}  # instance attributes (the class docstring's Attributes)
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
