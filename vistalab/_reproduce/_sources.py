"""Adapters from the other packages' check runners to report rows.

The packages are imported statically: a renamed function breaks the import (and
the tests) instead of turning a stage into "skipped".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vistalab import paper_checks, theory
from vistalab._core import DomainError

from .._policy import is_finding
from ._rows import CheckRow

__all__ = [
    "engine_checks", "paper_check_rows", "proof_step_rows", "normalise_status", "stage_totals",
    "transcription_rows",
]

_PASS = {"pass", "passed", "ok", "certified", "proved", "proven", "verified", "true"}
_FAIL = {"fail", "failed", "refuted", "error", "false", "violated"}


def normalise_status(value: Any) -> str:
    """Map a runner's status word (or bool) onto pass / fail / not_checkable."""
    if isinstance(value, bool):
        return "pass" if value else "fail"
    word = str(getattr(value, "value", value)).strip().lower().replace("-", "_")
    if word in _PASS:
        return "pass"
    if word in _FAIL:
        return "fail"
    return "not_checkable"


#: How a proof-step row words its evidence, by the step's generality: only a
#: step proved for every parameter is called a proof.
_GENERALITY_WORDS = {
    "all": "proved for all parameters ({method}; {domain})",
    "finite": "checked on {domain} ({method}; finite check, not a proof)",
    "sampled": "sampled on {domain} ({method}; random examples, not a proof)",
}


_STRENGTH = {"all": "proved", "finite": "checked", "sampled": "sampled"}


def proof_step_rows(progress: Callable[[str], None] | None = None) -> list[dict[str, str]]:
    """One row per named proof step certified by ``theory.certify_all()``, and one
    per main result saying whether its chain of steps is closed (and how general).
    ``progress`` is called with ``claim:step`` after each step."""
    if progress is None:
        report = theory.certify_all()
    else:
        report = theory.certify_all(progress=lambda c: progress(f"{c.claim}:{c.step}"))
    rows = []
    for cert in report.steps:
        generality = str(getattr(cert, "generality", "finite"))
        words = _GENERALITY_WORDS.get(generality, _GENERALITY_WORDS["finite"])
        how = words.format(method=cert.method, domain=" ".join(str(cert.domain).split()))
        numbers = f"{how}: {' '.join(str(cert.detail).split())}"
        rows.append(CheckRow(
            "proof", f"{cert.claim}/{cert.step}", " ".join(str(cert.statement).split()),
            normalise_status(cert.status), numbers, str(cert.ref),
            _STRENGTH.get(generality, "checked"),
        ).to_dict())
    for chain in getattr(report, "chains", ()):
        status = "pass" if chain.closed else "fail"
        reach = ("proved for all parameters" if chain.generality == "all"
                 else f"weakest link {chain.generality} (not a proof for all parameters)")
        rows.append(CheckRow(
            "proof", f"chain/{chain.result}",
            f"the steps of {chain.result} link into a closed chain",
            status, f"{chain.status}, {reach}: {' '.join(chain.detail.split())}",
            "App. B-D", _STRENGTH.get(str(chain.generality), "checked"),
        ).to_dict())
    return rows


def _claim_rows(source: str, report: Any) -> list[dict[str, str]]:
    rows = []
    for res in report.results:
        numbers = ", ".join(f"{k}={_fmt(v)}" for k, v in dict(res.numbers).items())
        detail = " ".join(str(res.detail).split())
        # A claim about the paper's own tables/text is a finding about the paper when
        # it fails, not a failure of the toolkit (see _rows.FINDING_SOURCES).
        src = "paper-data" if source == "paper" and is_finding(res.kind) else source
        rows.append(CheckRow(
            src, str(res.id), " ".join(str(res.statement).split()),
            normalise_status(res.status),
            f"{detail} [{numbers}]" if numbers else detail,
            str(res.where),
        ).to_dict())
    return rows


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def paper_check_rows(*, rng: np.random.Generator | None, certificates: Any = True,
                     progress: Callable[[str], None] | None = None) -> list[dict[str, str]]:
    """One row per registered claim of the paper (claims of stage "engine" excluded).

    ``certificates`` is passed to ``paper_checks.run_claims``: the reproduce
    pipeline hands it the verify stage's certificates, so the proof steps run once.
    """
    claims = [c for c in paper_checks.all_claims() if c.stage != "engine"]
    return _claim_rows("paper", paper_checks.run_claims(
        claims=claims, rng=rng, certificates=certificates,
        progress=None if progress is None else (lambda r: progress(str(r.id)))))


def engine_checks(*, rng: np.random.Generator | None,
                  progress: Callable[[str], None] | None = None) -> list[dict[str, str]]:
    """The engine-backed checks (claims registered with ``stage="engine"``).

    Raises
    ------
    DomainError
        If no claim of stage "engine" is registered (the built-in ones are imported
        statically, so this means they were removed: a failure, not a skip).
    """
    claims = [c for c in paper_checks.all_claims() if c.stage == "engine"]
    if not claims:
        raise DomainError("stage", "engine", "must have at least one registered claim",
                          "register the engine-backed claims with stage='engine'")
    return _claim_rows("engine", paper_checks.run_claims(
        claims=claims, rng=rng,
        progress=None if progress is None else (lambda r: progress(str(r.id)))))


def stage_totals() -> dict[str, int]:
    """How many steps or claims each check stage runs (the length of its progress bar)."""
    claims = paper_checks.all_claims()
    engine = sum(1 for c in claims if c.stage == "engine")
    return {"verify": len(theory.list_steps()), "paper_checks": len(claims) - engine,
            "engine": engine}


def transcription_rows(paper: str) -> list[dict[str, str]]:
    """One row per table and quote of the paper's data checked against its LaTeX source
    (source "transcription": a failure means the data files misquote the paper)."""
    return [CheckRow("transcription", c.id, "the data file quotes the paper's LaTeX exactly",
                     "pass" if c.ok else "fail", c.detail, c.where).to_dict()
            for c in paper_checks.check_transcription(paper)]
