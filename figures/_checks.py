"""The check record a figure script returns about its own table.

A figure's data is also evidence: e.g. no Monte Carlo success rate may beat
Proposition 1's bound beyond its confidence interval. ``checks(table)`` turns
those statements into named pass/fail records for the reproduce report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from vistalab.theory import DomainError

__all__ = ["Check", "STATUSES", "status_of"]

#: Allowed check statuses (shared with paper_checks and the report).
STATUSES: tuple[str, ...] = ("pass", "fail", "not_checkable")


@dataclass(frozen=True)
class Check:
    """One checked statement about a computed table.

    Attributes
    ----------
    id : str
        Stable identifier, ``<figure>.<what>``.
    claim : str
        The statement checked, in words.
    status : str
        ``"pass"``, ``"fail"`` or ``"not_checkable"``.
    numbers : str
        The decisive numbers (worst case, tolerance), so a reader can judge.
    where : str
        Where the claim lives in the paper.
    """

    id: str
    claim: str
    status: str
    numbers: str
    where: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise DomainError(
                "status", self.status, f"must be one of {', '.join(STATUSES)}",
                context=f"check {self.id!r}",
            )


def status_of(ok: bool) -> str:
    """The check status word for an outcome.

    Parameters
    ----------
    ok : bool
        Whether the check held.

    Returns
    -------
    str
        ``"pass"`` when ``ok`` else ``"fail"``.
    """
    if not isinstance(ok, (bool, np.bool_)):
        raise DomainError("ok", ok, "must be a bool", "pass the outcome of a comparison")
    return "pass" if ok else "fail"
