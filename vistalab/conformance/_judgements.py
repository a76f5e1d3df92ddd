"""The study's judgement of each violation it finds: a **bug** (the peer breaks
a provider rule or its own documentation), a **documented behaviour** (the peer
does what its documentation says, and that breaks an invariant of the paper's
workspace, Methodology, "Workspace invariants"), or a **counting difference**
(the peer counts tokens otherwise than the suite, so its request is over the
budget by the suite's count only).

Each entry was written after reading the counterexample of that peer and check
id (``docs/guide/conformance-study.md``, the write-ups); a violation without an
entry is shown as "not judged" in the study.
"""

from __future__ import annotations

__all__ = ["JUDGEMENTS", "judgement"]

BUG = "bug"
DOC = "documented behaviour"
COUNT = "counting difference"

#: ``(peer, check id) -> (kind, reason)``.
JUDGEMENTS: dict[tuple[str, str], tuple[str, str]] = {}


def judgement(peer: str, check: str) -> tuple[str, str]:
    """The study's judgement of ``peer`` breaking ``check``.

    Parameters
    ----------
    peer : str
        A peer's name.
    check : str
        A check id (``<invariant>.<rule>``).

    Returns
    -------
    tuple of str
        ``(kind, reason)``: kind is ``"bug"``, ``"documented behaviour"``,
        ``"counting difference"`` or ``"not judged"`` (then the reason is empty).
    """
    return JUDGEMENTS.get((peer, check), ("not judged", ""))
