"""The ``reproduce`` stage of the Coq development (``theory/coq``): every main
theorem of ``Statements.v`` and every engine-model theorem, compiled and checked
for its assumptions by :func:`vistalab.theory._proofs._formal.check_formal`.

Its rows join the report's check table (source ``formal``, strength ``proved``:
a theorem proved in Coq holds for every parameter). Without Coq the rows are not
made up: the stage reports how many formal rows it skipped and how to install Coq,
and the summary says so on its first screen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._rows import CheckRow

__all__ = ["FormalSummary", "formal_params", "formal_stage", "formal_summary"]


@dataclass(frozen=True)
class FormalSummary:
    """What the Coq stage established, for the report's and the console's summary.

    Attributes
    ----------
    available : bool
        Coq with mathcomp (ssreflect and analysis) was found and ran.
    proved : int
        Formal theorems proved (only the standard axioms behind them).
    total : int
        Formal rows of the development (the theorems listed in the statement table).
    message : str
        The check's own sentence (``25/25 formal theorems proved (coqc: ...)``, or why
        Coq is unavailable and how to install it).
    """

    available: bool
    proved: int
    total: int
    message: str

    def line(self) -> str:
        """The summary's Coq sentence: theorems proved, or the rows skipped and why.

        Returns
        -------
        str
            ``Coq: 25 of 25 formal theorems proved ...`` or ``Coq not installed: 25
            formal rows skipped ...``.
        """
        if not self.available:
            return f"Coq not installed: {self.total} formal rows skipped ({self.message})"
        head = f"Coq: {self.proved} of {self.total} formal theorems proved"
        # The check's sentence repeats the count ("64/64 formal theorems proved (coqc:
        # ...)"): only what it adds, the compiler's version, goes in the parentheses.
        rest = self.message.strip()
        said = f"{self.proved}/{self.total} formal theorems proved"
        if rest.startswith(said):
            rest = rest[len(said):].strip()
            if rest.startswith("(") and rest.endswith(")"):
                rest = rest[1:-1].strip()
        return f"{head} ({rest})" if rest else head


def formal_params() -> dict[str, Any]:
    """The stage's cache key: the Coq sources' digest and the ``coqc`` found (so
    installing Coq, or editing a ``.v`` file, reruns the stage).

    Returns
    -------
    dict
        ``{"sources": sha256, "coqc": path or None}``.
    """
    from vistalab.theory._proofs._formal import coq_source_dir, find_coqc

    src = coq_source_dir()
    digest = hashlib.sha256()
    for path in sorted(p for p in src.rglob("*") if p.is_file()
                       and (p.suffix in (".v", ".ml") or p.name == "_CoqProject")):
        digest.update(str(path.relative_to(src)).encode() + b"\0" + path.read_bytes())
    return {"sources": digest.hexdigest(), "coqc": find_coqc()}


def formal_stage(params: Mapping[str, Any], rng: Any) -> dict[str, Any]:
    """Run the Coq check; the payload the pipeline caches.

    Returns
    -------
    dict
        ``rows`` (check rows as dicts), ``available``, ``proved``, ``total`` and
        ``message``.
    """
    from vistalab.theory._proofs._formal import check_formal

    report = check_formal()
    rows = [] if not report.available else [_row(r).to_dict() for r in report.results]
    return {
        "rows": rows,
        "available": report.available,
        "proved": sum(r.status == "proved" for r in report.results),
        "total": len(report.results),
        "message": report.message,
    }


def formal_summary(payload: Mapping[str, Any] | None) -> FormalSummary | None:
    """The stage's payload as a summary (None when the stage did not run).

    Returns
    -------
    FormalSummary or None
        What the Coq stage established.
    """
    if payload is None:
        return None
    return FormalSummary(bool(payload["available"]), int(payload["proved"]),
                         int(payload["total"]), str(payload["message"]))


def _row(r: Any) -> CheckRow:
    from vistalab.theory._proofs._formal import SCOPES

    scope = "" if r.scope == "paper" else f" ({SCOPES.get(r.scope, r.scope)})"
    assumptions = ", ".join(a.rsplit(".", 1)[-1] for a in r.assumptions) or "none"
    status = {"proved": "pass", "failed": "fail"}.get(r.status, "not_checkable")
    return CheckRow("formal", f"{r.result}/{r.theorem}", f"{r.statement}{scope}", status,
                    f"Coq theorem {r.theorem}: {r.status}; axioms: {assumptions}", r.file,
                    "proved" if status == "pass" else "")
