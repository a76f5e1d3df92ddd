"""The report's check table: one row per checked statement, whatever produced it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from vistalab.figures import Check, TidyTable

__all__ = [
    "CheckRow", "FINDING_SOURCES", "SOURCES", "STRENGTHS", "rows_to_table", "rows_from_payload",
    "count_statuses", "strength_of",
]

#: Where a check comes from, in report order.
SOURCES: tuple[str, ...] = (
    "formal", "proof", "paper", "paper-data", "transcription", "simulation", "engine", "beyond",
    "pipeline",
)

#: Sources whose failures are findings about the paper's own reported numbers
#: (its tables and text disagree with each other). They are reported like every
#: other check but do not make ``reproduce`` fail unless ``--strict`` is given:
#: the toolkit reproduced them faithfully; the inconsistency is in the paper.
FINDING_SOURCES: frozenset[str] = frozenset({"paper-data"})

#: How strongly a passed check establishes its statement: ``proved`` for every
#: parameter, ``checked`` on a stated finite domain (or exact arithmetic on the
#: paper's numbers), ``sampled`` on random examples (Monte Carlo, Hypothesis).
STRENGTHS: tuple[str, ...] = ("proved", "checked", "sampled")

# A row without its own strength takes its source's: the paper's numbers are
# checked by exact arithmetic, simulations and engine runs are samples.
_SOURCE_STRENGTH = {"paper": "checked", "paper-data": "checked", "transcription": "checked",
                    "simulation": "sampled", "engine": "sampled", "beyond": "checked"}


@dataclass(frozen=True)
class CheckRow:
    """One line of the report's check table.

    Attributes
    ----------
    source : str
        ``formal`` (a Coq theorem of theory/coq), ``proof`` (theory.certify_all),
        ``paper`` (paper_checks: theory claims),
        ``paper-data`` (paper_checks: the paper's tables and text numbers),
        ``transcription`` (the data files against the paper's LaTeX, ``--paper``),
        ``simulation`` (a figure's own data checks), ``engine`` (engine-backed checks),
        ``beyond`` (results beyond the paper, theory/BEYOND.md) or ``pipeline`` (a stage that
        could not run).
    id : str
        Stable identifier within the source.
    claim : str
        What is checked.
    status : str
        ``pass``, ``fail`` or ``not_checkable``.
    numbers : str
        The decisive numbers behind the status.
    where : str
        Location in the paper.
    strength : str
        One of :data:`STRENGTHS`, or ``""`` to take the source's (see :func:`strength_of`).
    """

    source: str
    id: str
    claim: str
    status: str
    numbers: str
    where: str
    strength: str = ""

    @classmethod
    def from_check(cls, source: str, check: Check) -> CheckRow:
        return cls(source, check.id, check.claim, check.status, check.numbers, check.where)

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def strength_of(row: CheckRow) -> str:
    """The row's strength: its own, else its source's (``""`` for pipeline rows)."""
    return row.strength or _SOURCE_STRENGTH.get(row.source, "")


def rows_from_payload(payload: Iterable[Mapping[str, Any]]) -> list[CheckRow]:
    return [CheckRow(**{k: str(v) for k, v in dict(p).items()}) for p in payload]


def rows_to_table(rows: Iterable[CheckRow]) -> TidyTable:
    return TidyTable.from_records(
        (r.to_dict() for r in rows),
        columns=("source", "id", "claim", "status", "strength", "numbers", "where"),
        units={
            "source": "formal | proof | paper | paper-data | transcription | simulation | engine"
                      " | beyond | pipeline",
            "status": "pass | fail | not_checkable",
            "strength": "proved (every parameter) | checked (a finite domain) | sampled",
            "numbers": "the decisive numbers behind the status",
            "where": "location in paper.tex",
        },
    )


def count_statuses(rows: Iterable[CheckRow]) -> dict[str, int]:
    out = {"pass": 0, "fail": 0, "not_checkable": 0}
    for r in rows:
        out[r.status] = out.get(r.status, 0) + 1
    return out
