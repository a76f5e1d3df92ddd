"""The records of a paper check: what a check returns (:class:`Outcome`), a registered
:class:`Claim`, its :class:`ClaimResult`, and the :class:`PaperCheckReport` of a run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from vistalab.theory import DomainError, UnknownNameError

if TYPE_CHECKING:
    from ._context import CheckContext

__all__ = ["Status", "STATUSES", "STAGES", "Outcome", "CheckFn", "Claim", "ClaimResult",
           "PaperCheckReport"]

Status = Literal["pass", "fail", "not_checkable"]
STATUSES: tuple[str, ...] = ("pass", "fail", "not_checkable")

#: The stages of ``vista-lab reproduce`` a claim can belong to (:attr:`Claim.stage`).
STAGES: tuple[str, ...] = ("paper", "engine")


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
