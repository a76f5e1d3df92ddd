"""Adapters from the other packages' check runners to report rows.

Each adapter asks for the public names it needs (``figures.require``); a
package that does not provide them makes its stage "skipped", reported as not
checkable, instead of crashing the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vistalab.figures import MissingDependency, require

from .._policy import is_finding
from ._rows import CheckRow

__all__ = [
    "engine_checks", "paper_check_rows", "proof_step_rows", "normalise_status", "stage_totals",
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


def proof_step_rows(progress: Callable[[str], None] | None = None) -> list[dict[str, str]]:
    """One row per named proof step, each certified by ``theory``'s ``run_step``
    (what ``theory.certify_all()`` runs); ``progress`` is called after each step."""
    theory = require("theory", "list_steps")
    from vistalab.theory._proofs import run_step

    certs = []
    for step in theory.list_steps():
        certs.append(run_step(step))
        if progress is not None:
            progress(f"{step.claim}:{step.name}")
    rows = []
    for cert in certs:
        numbers = f"{cert.method} on {cert.domain}: {' '.join(str(cert.detail).split())}"
        rows.append(CheckRow(
            "proof", f"{cert.claim}/{cert.step}", " ".join(str(cert.statement).split()),
            normalise_status(cert.status), numbers, str(cert.ref),
        ).to_dict())
    return rows


def _is_engine_claim(c: Any) -> bool:
    """Engine-backed claims (issue 5) register into paper_checks with "engine" in the id
    or section; the pipeline runs them in their own stage."""
    return "engine" in str(c.id).lower() or "engine" in str(c.section).lower()


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
    """One row per registered claim of the paper (engine-backed claims excluded).

    ``certificates`` is passed to ``paper_checks.run_claims``: the reproduce
    pipeline hands it the verify stage's certificates, so the proof steps run once.
    """
    pc = require("paper_checks", "run_claims", "all_claims")
    claims = [c for c in pc.all_claims() if not _is_engine_claim(c)]
    return _claim_rows("paper", pc.run_claims(
        claims=claims, rng=rng, certificates=certificates,
        progress=None if progress is None else (lambda r: progress(str(r.id)))))


def engine_checks(*, rng: np.random.Generator | None,
                  progress: Callable[[str], None] | None = None) -> list[dict[str, str]]:
    """The engine-backed checks of issue 5, registered into paper_checks' registry.

    Raises :class:`figures.MissingDependency` (the stage is reported as not
    checkable) while no engine-backed claim is registered.
    """
    pc = require("paper_checks", "run_claims", "all_claims")
    claims = [c for c in pc.all_claims() if _is_engine_claim(c)]
    if not claims:
        raise MissingDependency(
            "paper_checks", ["engine claims"],
            "no engine-backed check is registered in paper_checks yet (issue 5: claims with "
            "'engine' in their id or section)",
        )
    return _claim_rows("engine", pc.run_claims(
        claims=claims, rng=rng,
        progress=None if progress is None else (lambda r: progress(str(r.id)))))


def stage_totals() -> dict[str, int]:
    """How many steps or claims each check stage runs (the length of its progress bar)."""
    from vistalab import paper_checks, theory

    claims = paper_checks.all_claims()
    engine = sum(1 for c in claims if _is_engine_claim(c))
    return {"verify": len(theory.list_steps()), "paper_checks": len(claims) - engine,
            "engine": engine}
