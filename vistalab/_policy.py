"""One exit policy for the commands that check the paper (``check-paper`` and
``reproduce``): what counts as a failure, and what ``--strict`` adds.

A failed claim about the paper's own reported numbers (its tables and text
disagreeing with each other) is a *finding*: reported, but it fails the run
only with ``--strict``. Any other failed check (theory, simulation, engine,
pipeline) fails the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["FINDING_KINDS", "is_finding", "exit_status", "policy_line", "split_failures"]

#: Claim kinds whose failures are findings about the paper itself.
FINDING_KINDS: frozenset[str] = frozenset({"table", "text"})


def is_finding(kind: Any) -> bool:
    """Whether a failed claim of this ``kind`` is a finding about the paper's numbers."""
    return str(kind) in FINDING_KINDS


def exit_status(failures: int, findings: int, *, strict: bool = False) -> int:
    """1 when a check failed (with ``strict``, also when a finding was made), else 0."""
    return 1 if failures or (strict and findings) else 0


def policy_line(failures: int, findings: int, *, strict: bool) -> str:
    """The one sentence both commands print about their exit status."""
    if findings and not strict:
        return (f"{findings} finding(s) about the paper's own numbers (reported, not failing; "
                f"--strict makes them fail); {failures} failed check(s)")
    if findings:
        return f"{findings} finding(s) about the paper's own numbers fail the run (--strict)"
    return f"{failures} failed check(s)"


def split_failures(kinds: Iterable[Any]) -> tuple[int, int]:
    """(failures, findings) among the kinds of the failed claims."""
    failures = findings = 0
    for k in kinds:
        if is_finding(k):
            findings += 1
        else:
            failures += 1
    return failures, findings
