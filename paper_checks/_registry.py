"""The claim registry: one entry per quantitative claim of the paper, each with where it is,
the data it rests on, a tolerance and a check function. The runner is :mod:`._run`; the
records are :mod:`._records`, what a check receives :mod:`._context`.

The built-in claim modules are imported statically by the package's ``__init__``; a user's
own module of claims is added with :func:`add_plugin` and imported on first use.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterable
from typing import Any

from vistalab.theory import DomainError, UnknownNameError

from ._context import CheckContext
from ._records import STAGES, CheckFn, Claim, Outcome

__all__ = [
    "SECTIONS",
    "register_claim",
    "claim",
    "register_not_checkable",
    "add_plugin",
    "plugin_modules",
    "all_claims",
    "get_claim",
    "select_claims",
]

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

# Users' plugin modules (add_plugin), imported on first use of the registry. The built-in
# claim modules are not listed here: paper_checks/__init__.py imports them statically.
_PLUGINS: list[str] = []


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
