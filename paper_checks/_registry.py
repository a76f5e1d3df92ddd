"""The claim registry: one entry per quantitative claim of the paper, each with where it is,
the data it rests on, a tolerance and a check function. The runner is :mod:`._run`.

The built-in claim modules are imported statically by the package's ``__init__``; a user's
own module of claims is added with :func:`add_plugin` and imported on first use.
"""

from __future__ import annotations

import fnmatch
import importlib
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from vistalab.theory import DomainError, UnknownNameError, VistaLabError

from vistalab._core import child_seq

from ._data import (
    PaperTable,
    Quote,
    Statement,
    load_quotes,
    load_statements,
    load_table,
)

__all__ = [
    "STATUSES",
    "STAGES",
    "SECTIONS",
    "DEFAULT_ENTROPY",
    "Status",
    "Outcome",
    "Claim",
    "ClaimResult",
    "PaperCheckReport",
    "CheckContext",
    "Unavailable",
    "register_claim",
    "claim",
    "register_not_checkable",
    "add_plugin",
    "plugin_modules",
    "all_claims",
    "get_claim",
    "select_claims",
]

Status = Literal["pass", "fail", "not_checkable"]
STATUSES: tuple[str, ...] = ("pass", "fail", "not_checkable")

#: Sections of the paper in reading order; the CLI groups claims by these.
SECTIONS: tuple[str, ...] = (
    "Abstract and Introduction",
    "Theory: Proposition 1",
    "Theory: Proposition 2",
    "Theory: Lemma 1",
    "Theory: Theorem 1",
    "3.2 Main results (Tables 1, 2)",
    "3.3 Pressure regimes (Table 9)",
    "3.4 Backbone robustness",
    "3.5 RL adaptation (Table 3)",
    "3.6 AMA-Bench transfer (Tables 4, 10)",
    "3.7 Mechanism ablations",
    "4 Analysis (Table 5, case studies, overhead)",
    "Appendix E capability matrix (Table 6)",
    "Appendix F implementation details",
    "Appendix G evaluation details (Tables 7, 8, 11)",
    "Engine-backed checks",
)

#: Root seed entropy of the Monte Carlo checks, so a run is reproducible by default.
DEFAULT_ENTROPY = 0x5EED_0715_2026

#: The stages of ``vista-lab reproduce`` a claim can belong to (:attr:`Claim.stage`).
STAGES: tuple[str, ...] = ("paper", "engine")

# Users' plugin modules (add_plugin), imported on first use of the registry. The built-in
# claim modules are not listed here: paper_checks/__init__.py imports them statically.
_PLUGINS: list[str] = []


class Unavailable(VistaLabError):
    """Raised inside a check when something it needs (a theory/sims function, run logs) is
    not available; the runner turns it into status ``not_checkable`` with this reason."""


@dataclass(frozen=True)
class Outcome:
    """What a check function returns.

    Attributes
    ----------
    status : {"pass", "fail", "not_checkable"}
    detail : str
        One or two sentences with the numbers behind the status; for a failure, the
        discrepancy in numbers; for not_checkable, the reason.
    numbers : Mapping[str, Any]
        The recomputed quantities (JSON-ready scalars, lists or dicts).
    """

    status: Status
    detail: str
    numbers: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise DomainError("status", self.status, f"must be one of {', '.join(STATUSES)}")
        object.__setattr__(self, "numbers", MappingProxyType(dict(self.numbers)))

    @classmethod
    def passed(cls, detail: str, **numbers: Any) -> Outcome:
        """A passing outcome.

        Parameters
        ----------
        detail : str
            The numbers behind the pass, in a sentence.
        **numbers
            The recomputed quantities (JSON-ready scalars, lists or dicts).

        Returns
        -------
        Outcome
            The outcome.
        """
        return cls("pass", detail, numbers)

    @classmethod
    def failed(cls, detail: str, **numbers: Any) -> Outcome:
        """A failing outcome.

        Parameters
        ----------
        detail : str
            The discrepancy in numbers.
        **numbers
            The recomputed quantities (JSON-ready scalars, lists or dicts).

        Returns
        -------
        Outcome
            The outcome.
        """
        return cls("fail", detail, numbers)

    @classmethod
    def not_checkable(cls, reason: str, **numbers: Any) -> Outcome:
        """An outcome for a claim the paper's data cannot check.

        Parameters
        ----------
        reason : str
            Why it cannot be checked.
        **numbers
            The recomputed quantities (JSON-ready scalars, lists or dicts).

        Returns
        -------
        Outcome
            The outcome.
        """
        return cls("not_checkable", reason, numbers)

    @classmethod
    def verdict(cls, problems: Sequence[str], ok_detail: str, **numbers: Any) -> Outcome:
        """``pass`` with ``ok_detail`` if ``problems`` is empty, else ``fail`` listing them.

        Parameters
        ----------
        problems : sequence of str
            The discrepancies found (joined with ``"; "`` into the detail).
        ok_detail : str
            The detail of a pass.
        **numbers
            The recomputed quantities (JSON-ready scalars, lists or dicts).

        Returns
        -------
        Outcome
            The outcome.
        """
        if problems:
            return cls("fail", "; ".join(problems), numbers)
        return cls("pass", ok_detail, numbers)


CheckFn = Callable[["CheckContext"], Outcome]


@dataclass(frozen=True)
class Claim:
    """One registered claim.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"table8.rows-add-up"``.
    section : str
        Group for reports (one of :data:`SECTIONS`, or a new name appended at the end).
    where : str
        Where the claim is in the paper (section, table, equation, line of paper.tex).
    statement : str
        The claim in a few words.
    tolerance : str
        How exactly the numbers must agree, and why (e.g. one-decimal rounding).
    check : callable
        ``check(ctx: CheckContext) -> Outcome``.
    data : tuple of str
        What the claim rests on: ``table:<key>``, ``quote:<id>``, ``statement:<id>``,
        ``theory:<name>``, ``sims:<name>``, ``certificate:<claim>``.
    certificates : tuple of str
        theory/'s proof-step claim ids linked to this claim (``"prop1"``, ``"thm1.B"``...).
    kind : str
        ``"table"``, ``"text"``, ``"theory"`` or ``"engine"``.
    module : str
        Module that registered it.
    stage : {"paper", "engine"}
        Which stage of ``vista-lab reproduce`` runs it: ``"engine"`` for the checks that
        drive the reference workspace engine (their own stage), ``"paper"`` otherwise.
    """

    id: str
    section: str
    where: str
    statement: str
    tolerance: str
    check: CheckFn
    data: tuple[str, ...] = ()
    certificates: tuple[str, ...] = ()
    kind: str = "text"
    module: str = ""
    stage: str = "paper"


@dataclass(frozen=True)
class ClaimResult:
    """A claim and the outcome of its check (see :class:`Claim` and :class:`Outcome`).

    Attributes
    ----------
    id, section, where, statement, tolerance, kind, data, certificates
        As for :class:`Claim`.
    status : Status
        ``pass``, ``fail`` or ``not_checkable``.
    detail : str
        The decisive comparison, in words.
    numbers : Mapping[str, Any]
        The numbers behind the status.
    seconds : float
        Wall time of the check, for information only.
    """

    id: str
    section: str
    where: str
    statement: str
    tolerance: str
    kind: str
    data: tuple[str, ...]
    certificates: tuple[str, ...]
    status: Status
    detail: str
    numbers: Mapping[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the result (an entry of ``claims`` in the
        ``--json`` document).

        Returns
        -------
        dict
            Every field, tuples as lists, ``seconds`` rounded to 0.1 ms.
        """
        return {
            "id": self.id,
            "section": self.section,
            "where": self.where,
            "statement": self.statement,
            "status": self.status,
            "detail": self.detail,
            "tolerance": self.tolerance,
            "kind": self.kind,
            "data": list(self.data),
            "certificates": list(self.certificates),
            "numbers": dict(self.numbers),
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True)
class PaperCheckReport:
    """Result of :func:`run_claims`.

    Attributes
    ----------
    results : tuple of ClaimResult
        In report order (section order, then registration order).
    data_dir : str
        Folder the paper's data were read from.
    seed_entropy : int
        Root entropy of the Monte Carlo checks.
    only : str or None
        The filter pattern used, if any.
    """

    results: tuple[ClaimResult, ...]
    data_dir: str
    seed_entropy: int
    only: str | None = None

    def count(self, status: str) -> int:
        """The number of results with ``status``.

        Parameters
        ----------
        status : str
            ``"pass"``, ``"fail"`` or ``"not_checkable"``.

        Returns
        -------
        int
            How many claims ended so.
        """
        return sum(r.status == status for r in self.results)

    @property
    def counts(self) -> dict[str, int]:
        """The number of results per status: ``{'pass': ..., 'fail': ...,
        'not_checkable': ...}``.
        """
        return {s: self.count(s) for s in STATUSES}

    @property
    def ok(self) -> bool:
        """True when no claim failed."""
        return self.count("fail") == 0

    def by_id(self, claim_id: str) -> ClaimResult:
        """The result of claim ``claim_id``.

        Parameters
        ----------
        claim_id : str
            A claim id of the registry.

        Returns
        -------
        ClaimResult
            Its result.

        Raises
        ------
        UnknownNameError
            If the report holds no such claim.
        """
        for r in self.results:
            if r.id == claim_id:
                return r
        raise UnknownNameError("claim", claim_id, [r.id for r in self.results])

    def by_section(self) -> dict[str, list[ClaimResult]]:
        """The results grouped by the paper's section, in report order.

        Returns
        -------
        dict of str to list of ClaimResult
            Section -> its results.
        """
        out: dict[str, list[ClaimResult]] = {}
        for r in self.results:
            out.setdefault(r.section, []).append(r)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: ``claims`` plus the counts ``pass``, ``fail``,
        ``not_checkable``.

        Returns
        -------
        dict
            ``claims``, the three counts, ``total``, ``data_dir``,
            ``seed_entropy`` and ``only``.
        """
        return {
            "claims": [r.to_dict() for r in self.results],
            **self.counts,
            "total": len(self.results),
            "data_dir": self.data_dir,
            "seed_entropy": self.seed_entropy,
            "only": self.only,
        }


class CheckContext:
    """What a check function receives: cached access to the paper's data, a per-claim
    random generator, and theory/'s proof-step certificates.

    Parameters
    ----------
    data_dir : path
        Folder of the paper's data files.
    seed_seq : numpy.random.SeedSequence
        Root of the Monte Carlo seeds; each claim derives its own child from its id, so a
        claim's numbers do not depend on which other claims run.
    shared : dict
        A cache shared by every claim of one run (parsed tables, certificates).
    certificates : object
        theory/'s proof-step certificates: True to compute them on first use, or the
        verify stage's report, so the proof steps run once per ``reproduce``.

    Attributes
    ----------
    claim_id : str
        The claim being checked (set by the runner).
    """

    def __init__(
        self,
        data_dir: Path,
        seed_seq: np.random.SeedSequence,
        shared: dict[str, Any],
        *,
        certificates: Any = True,
    ):
        self.data_dir = data_dir
        self._seed_seq = seed_seq
        self._shared = shared
        self._certificates = certificates
        self.claim_id = ""

    def table(self, key: str) -> PaperTable:
        """A table of the paper (see :func:`paper_checks.load_table`), parsed once
        per run.

        Parameters
        ----------
        key : str
            The table's key.

        Returns
        -------
        PaperTable
            The table.

        Raises
        ------
        UnknownNameError
            If the paper has no table ``key``.
        """
        cache = self._shared.setdefault("tables", {})
        if key not in cache:
            cache[key] = load_table(key, data_dir=self.data_dir)
        return cache[key]

    def quote(self, quote_id: str) -> Quote:
        """A sentence of the text with its numbers (see :func:`paper_checks.load_quote`).

        Parameters
        ----------
        quote_id : str
            The quote's id.

        Returns
        -------
        Quote
            The quote.

        Raises
        ------
        UnknownNameError
            If there is no such quote.
        """
        if "quotes" not in self._shared:
            self._shared["quotes"] = load_quotes(data_dir=self.data_dir)
        quotes = self._shared["quotes"]
        if quote_id not in quotes:
            raise UnknownNameError("text quote", quote_id, quotes)
        return quotes[quote_id]

    def statement(self, statement_id: str) -> Statement:
        """A theoretical statement as formulas (see :func:`paper_checks.load_statement`).

        Parameters
        ----------
        statement_id : str
            The statement's id.

        Returns
        -------
        Statement
            The statement.

        Raises
        ------
        UnknownNameError
            If there is no such statement.
        """
        if "statements" not in self._shared:
            self._shared["statements"] = load_statements(data_dir=self.data_dir)
        statements = self._shared["statements"]
        if statement_id not in statements:
            raise UnknownNameError("theory statement", statement_id, statements)
        return statements[statement_id]

    def seed_seq(self, name: str | None = None) -> np.random.SeedSequence:
        """A seed sequence derived from the root and ``name`` (default: this claim's id), so
        a claim's random numbers do not depend on which other claims run. Pass a ``name``
        for draws shared between claims through :meth:`cached`.

        Parameters
        ----------
        name : str, optional
            A shared name; None for this claim's own sequence.

        Returns
        -------
        numpy.random.SeedSequence
            A child of the root, keyed by the CRC-32 of the id or name.
        """
        key = zlib.crc32((self.claim_id if name is None else f"shared:{name}").encode("utf-8"))
        return child_seq(self._seed_seq, key)

    def rng(self) -> np.random.Generator:
        """A generator seeded from :meth:`seed_seq`.

        Returns
        -------
        numpy.random.Generator
            A fresh generator on this claim's own sequence.
        """
        return np.random.default_rng(self.seed_seq())

    def certificates(self, claim_ids: Sequence[str]) -> tuple[bool | None, str]:
        """theory/'s proof-step certificates for ``claim_ids`` (e.g. ``("thm1.A",)``).

        Parameters
        ----------
        claim_ids : sequence of str
            The theory claims whose proof steps back this check.

        Returns
        -------
        tuple of (bool or None, str)
            ``(ok, summary)``: ``ok`` is True when every linked step passed, False
            when one failed or a claim has no steps, None when certificates were
            not run or are not available; the summary says how far the passes
            reach (proved for all parameters, checked on a finite domain, sampled).

        Raises
        ------
        DomainError
            ``claim_ids`` is one text (its characters are not claims) or holds
            something other than a non-empty claim id without glob characters
            (``*``, ``?``, ``[``: a pattern would run theory's steps of every
            matching claim, then keep none of them).
        """
        if isinstance(claim_ids, (str, bytes)) or not isinstance(claim_ids, Iterable):
            raise DomainError("claim_ids", claim_ids, "must be a sequence of claim ids, "
                              "not one text", "pass e.g. ('thm1.A',) or ()")
        claim_ids = tuple(claim_ids)
        for cid in claim_ids:
            if not isinstance(cid, str) or not cid or any(c in cid for c in "*?["):
                raise DomainError("claim_ids", claim_ids, "must hold non-empty claim ids "
                                  "without glob characters (* ? [)",
                                  "name each theory claim, e.g. ('thm1.A', 'prop2')",
                                  context=f"item={cid!r}")
        if not claim_ids:
            return None, ""
        source = self._certificates
        if source is False:
            return None, "certificates not run"
        parts, ok = [], True
        for cid in claim_ids:
            if source is True:
                try:
                    steps = self.cached(f"certificate:{cid}", partial(_certify, cid))
                except Unavailable as exc:
                    return None, f"certificates unavailable ({exc})"
            else:
                steps = tuple(st for st in getattr(source, "steps", ()) if st.claim == cid)
            if not steps:
                parts.append(f"{cid}: no proof steps registered")
                ok = False
                continue
            bad = [st.step for st in steps if st.status != "pass"]
            # Say how far the passes reach: only generality "all" is a proof.
            reach = [getattr(st, "generality", None) for st in steps]
            how = ", ".join(f"{reach.count(g)} {word}" for g, word in (
                ("all", "proved for all parameters"), ("finite", "checked on a finite domain"),
                ("sampled", "sampled")) if reach.count(g))
            parts.append(f"{cid} {len(steps) - len(bad)}/{len(steps)} steps pass"
                         + (f" ({how})" if how else "")
                         + (f" (failed: {', '.join(bad)})" if bad else ""))
            ok = ok and not bad
        return ok, "certificates: " + "; ".join(parts)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute once per run (e.g. theory.certify_all()) and share between claims.

        Parameters
        ----------
        key : str
            The cache key, shared by every claim of the run.
        compute : callable
            Called with no argument on the first request for ``key``.

        Returns
        -------
        object
            The value computed for ``key``.
        """
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]


def _certify(claim_id: str) -> tuple[Any, ...]:
    """Run theory's proof steps of one claim (``theory.certify_all(only=...)``)."""
    from vistalab import theory

    try:
        report = theory.certify_all(only=f"{claim_id}:*")
    except DomainError:  # pattern matched nothing: no steps for this claim yet
        return ()
    return tuple(st for st in report.steps if st.claim == claim_id)


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[str, Claim] = {}
_LOADED: set[str] = set()


def register_claim(
    claim_id: str,
    check: CheckFn,
    *,
    section: str,
    where: str,
    statement: str,
    tolerance: str,
    data: Iterable[str] = (),
    certificates: Iterable[str] = (),
    kind: str = "text",
    stage: str = "paper",
) -> Claim:
    """Add a claim to the registry and return it.

    Call it (or use :func:`claim`) from a module listed in :func:`plugin_modules` (or added
    with :func:`add_plugin`); the registry imports those modules on first use.

    Parameters
    ----------
    claim_id : str
        Stable identifier, e.g. ``"table8.rows-add-up"``.
    check : callable
        ``check(ctx: CheckContext) -> Outcome``.
    section : str
        Group for reports (one of :data:`SECTIONS`, or a new name appended at the end).
    where : str
        Where the claim is in the paper (section, table, equation, line of paper.tex).
    statement : str
        The claim in a few words.
    tolerance : str
        How exactly the numbers must agree, and why (e.g. one-decimal rounding).
    data : iterable of str
        What the claim rests on: ``table:<key>``, ``quote:<id>``, ``statement:<id>``,
        ``theory:<name>``, ``sims:<name>``, ``certificate:<claim>``.
    certificates : iterable of str
        theory/'s proof-step claim ids linked to this claim (``"prop1"``, ``"thm1.B"``...).
    kind : str
        ``"table"``, ``"text"``, ``"theory"`` or ``"engine"``.
    stage : {"paper", "engine"}
        Which stage of ``vista-lab reproduce`` runs it (``"engine"``: the checks that
        drive the reference workspace engine).

    Returns
    -------
    Claim
        The registered claim.

    Raises
    ------
    DomainError
        If another module already registered ``claim_id``, or a field is empty.
    """
    data, certificates = _fields_iv(claim_id, section, where, statement, tolerance, data,
                                    certificates, kind, stage)
    if not callable(check):
        raise DomainError("check", check, "must be callable as check(ctx) -> Outcome")
    module = getattr(check, "__module__", "") or ""
    old = _REGISTRY.get(claim_id)
    if old is not None and old.module != module:
        raise DomainError(
            "claim_id", claim_id, f"must be unique (already registered by {old.module})",
            "choose another id",
        )
    entry = Claim(
        id=claim_id, section=section, where=where, statement=statement, tolerance=tolerance,
        check=check, data=tuple(data), certificates=tuple(certificates), kind=kind,
        module=module, stage=stage,
    )
    _REGISTRY[claim_id] = entry
    return entry


CLAIM_KINDS = ("table", "text", "theory", "engine")


def _strings_iv(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise DomainError(name, value, "must be a sequence of strings",
                          "pass e.g. ('table:ablation',) or ()")
    items = tuple(value)
    if not all(isinstance(v, str) and v for v in items):
        raise DomainError(name, value, "must contain only non-empty strings",
                          "pass e.g. ('table:ablation',)")
    return items


def _fields_iv(
    claim_id: str, section: str, where: str, statement: str, tolerance: str, data: Any,
    certificates: Any, kind: str, stage: str,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Validate the fields shared by :func:`register_claim` and :func:`claim`; return
    ``data`` and ``certificates`` as tuples."""
    for name, value in (("claim_id", claim_id), ("section", section), ("where", where),
                        ("statement", statement), ("tolerance", tolerance)):
        if not isinstance(value, str) or not value.strip():
            raise DomainError(name, value, "must be a non-empty string")
    data, certificates = _strings_iv("data", data), _strings_iv("certificates", certificates)
    if kind not in CLAIM_KINDS:
        raise DomainError("kind", kind, f"must be one of {', '.join(CLAIM_KINDS)}",
                          "e.g. kind='text'")
    if stage not in STAGES:
        raise DomainError("stage", stage, f"must be one of {', '.join(STAGES)}",
                          'pass stage="engine" for checks that drive the workspace engine')
    return data, certificates


def claim(
    claim_id: str,
    *,
    section: str,
    where: str,
    statement: str,
    tolerance: str,
    data: Iterable[str] = (),
    certificates: Iterable[str] = (),
    kind: str = "text",
    stage: str = "paper",
) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated check as a claim (the decorator form of :func:`register_claim`).

    Used as::

        @claim("engine.makeroom-ledger", section="Engine-backed checks", where="Theorem 1",
               statement="...", tolerance="4 standard errors", kind="engine",
               stage="engine")
        def _check(ctx):
            ...
            return Outcome.passed("...", mean_z=...)

    Parameters
    ----------
    claim_id : str
        Stable identifier, e.g. ``"table8.rows-add-up"``.
    section : str
        Group for reports (one of :data:`SECTIONS`, or a new name appended at the end).
    where : str
        Where the claim is in the paper (section, table, equation, line of paper.tex).
    statement : str
        The claim in a few words.
    tolerance : str
        How exactly the numbers must agree, and why (e.g. one-decimal rounding).
    data : iterable of str
        What the claim rests on: ``table:<key>``, ``quote:<id>``, ``statement:<id>``,
        ``theory:<name>``, ``sims:<name>``, ``certificate:<claim>``.
    certificates : iterable of str
        theory/'s proof-step claim ids linked to this claim (``"prop1"``, ``"thm1.B"``...).
    kind : str
        ``"table"``, ``"text"``, ``"theory"`` or ``"engine"``.
    stage : {"paper", "engine"}
        Which stage of ``vista-lab reproduce`` runs it (``"engine"``: the checks that
        drive the reference workspace engine).

    Returns
    -------
    callable
        The decorator; it registers the function as the claim's check and returns it
        unchanged.
    """

    # validated now, so a bad decorator argument fails where it is written
    data, certificates = _fields_iv(claim_id, section, where, statement, tolerance, data,
                                    certificates, kind, stage)

    def deco(fn: CheckFn) -> CheckFn:
        register_claim(claim_id, fn, section=section, where=where, statement=statement,
                       tolerance=tolerance, data=data, certificates=certificates, kind=kind,
                       stage=stage)
        return fn

    return deco


def register_not_checkable(
    claim_id: str,
    *,
    reason: str,
    section: str,
    where: str,
    statement: str,
    data: Iterable[str] = (),
    kind: str = "text",
    stage: str = "paper",
) -> Claim:
    """Register a claim that cannot be checked here, with the reason (e.g. "needs LLM runs").

    Its check always returns ``not_checkable`` with ``reason``.

    Parameters
    ----------
    claim_id : str
        Stable identifier.
    reason : str
        Why the claim cannot be checked from what the paper gives.
    section, where, statement, data, kind, stage
        As for :func:`register_claim`.

    Returns
    -------
    Claim
        The registered claim."""
    if not isinstance(reason, str) or not reason.strip():
        raise DomainError("reason", reason, "must be a non-empty string",
                          "say why, e.g. 'needs LLM runs'")

    def _not_checkable(ctx: CheckContext) -> Outcome:
        return Outcome.not_checkable(reason)

    _not_checkable.__module__ = _caller_module()
    return register_claim(
        claim_id, _not_checkable, section=section, where=where, statement=statement,
        tolerance="n/a", data=data, kind=kind, stage=stage,
    )


def _caller_module() -> str:
    import inspect

    frame = inspect.currentframe()
    try:
        caller = frame.f_back.f_back if frame and frame.f_back else None
        return str(caller.f_globals.get("__name__", "")) if caller else ""
    finally:
        del frame


def add_plugin(module_name: str) -> None:
    """Ask the registry to import a user's module of claims on next use.

    A module that cannot be imported is an error then, never silently skipped.

    Parameters
    ----------
    module_name : str
        The importable name of a module that registers claims with :func:`claim`."""
    if not isinstance(module_name, str) or not module_name:
        raise DomainError("module_name", module_name, "must be a dotted module name")
    if module_name not in _PLUGINS:
        _PLUGINS.append(module_name)


def plugin_modules() -> tuple[str, ...]:
    """The users' plugin modules the registry imports (see :func:`add_plugin`).

    Returns
    -------
    tuple of str
        Module names, in the order they were added."""
    return tuple(_PLUGINS)


def _load_modules() -> None:
    for name in _PLUGINS:
        if name in _LOADED:
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise DomainError("module_name", name, f"must be an importable module ({exc})",
                              "fix the name passed to add_plugin or install the module") from exc
        _LOADED.add(name)


def _section_rank(section: str) -> int:
    try:
        return SECTIONS.index(section)
    except ValueError:
        return len(SECTIONS)


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in report order (paper section, then registration).

    Returns
    -------
    tuple of Claim"""
    _load_modules()
    order = {cid: i for i, cid in enumerate(_REGISTRY)}
    return tuple(sorted(_REGISTRY.values(), key=lambda c: (_section_rank(c.section), order[c.id])))


def get_claim(claim_id: str) -> Claim:
    """The registered claim ``claim_id``.

    Parameters
    ----------
    claim_id : str
        A registered claim's id.

    Returns
    -------
    Claim

    Raises
    ------
    UnknownNameError
        If no claim has that id (with the closest ids)."""
    claims = {c.id: c for c in all_claims()}
    if not isinstance(claim_id, str) or claim_id not in claims:
        raise UnknownNameError("claim", claim_id, claims)
    return claims[claim_id]


def select_claims(only: str | None = None) -> tuple[Claim, ...]:
    """Claims whose id (or section) matches ``only``.

    Parameters
    ----------
    only : str, optional
        A shell glob (``table8.*``), or, with no glob characters, a case-insensitive
        substring; comma-separated patterns are OR-ed. None selects every claim.

    Returns
    -------
    tuple of Claim
        In report order.

    Raises
    ------
    DomainError
        If ``only`` is empty or matches no claim."""
    claims = all_claims()
    if only is None:
        return claims
    if not isinstance(only, str) or not only.strip():
        raise DomainError("only", only, "must be a non-empty pattern", "e.g. --only 'table8.*'")
    patterns = [p.strip().lower() for p in only.split(",") if p.strip()]

    def hit(c: Claim) -> bool:
        for p in patterns:
            for text in (c.id.lower(), c.section.lower()):
                if any(ch in p for ch in "*?[") and fnmatch.fnmatchcase(text, p):
                    return True
                if not any(ch in p for ch in "*?[") and p in text:
                    return True
        return False

    chosen = tuple(c for c in claims if hit(c))
    if not chosen:
        raise DomainError(
            "only", only, "must match at least one claim id or section",
            "list them with `vista-lab check-paper --list` (e.g. 'table8.*', 'thm1', 'text.ama')",
        )
    return chosen
