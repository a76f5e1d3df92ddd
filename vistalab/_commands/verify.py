"""``vista-lab verify``: run every machine-checked proof step of the paper's
Appendices B-D and print the tightness findings."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from vistalab import theory

from .._output import emit_json, emit_table, to_plain

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="certify every proof step (sympy, Shannon LP, interval, enumeration, Hypothesis)",
        description=(
            "Run every named proof step of Proposition 1, Proposition 2 (and its tighter "
            "variant), Lemma 1 and Theorem 1 parts A-E. Each step is certified by a method "
            "that can fail: sympy identity or non-negativity certificate, an LP prover of "
            "Shannon-type inequalities with exact rational certificates, arb interval "
            "branch and bound, exhaustive enumeration, or Hypothesis. Exit status 0 only "
            "if every step passes (and, without --only, every tightness row holds)."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--only",
        metavar="PATTERN",
        default=None,
        help="run only steps whose claim, step name, claim:step or method matches PATTERN: "
        "a glob ('thm1.*', '*fano*'), else an exact name ('prop2', 'lp-shannon'), else a "
        "substring ('fano'); skips the tightness findings",
    )
    parser.add_argument(
        "--details", action="store_true", help="add the certificate detail column to the table"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the steps (claim, step, method, domain) only"
    )
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    if args.list:
        steps = theory.list_steps(args.only)
        if args.only is not None and not steps:
            theory.certify_all(args.only)  # raises the DomainError naming the choices
        if args.json:
            emit_json({"steps": [_step_row(s) for s in steps], "count": len(steps)})
        else:
            emit_table(
                ["claim", "step", "method", "domain"],
                [[_esc(v) for v in (s.claim, s.name, s.method, s.domain)] for s in steps],
                title=f"{len(steps)} proof steps",
            )
        return 0

    report = _certify_with_progress(args.only)
    tightness = None
    if args.only is None and hasattr(theory, "tightness_report"):
        tightness = theory.tightness_report()
    tight_ok = tightness is None or bool(getattr(tightness, "holds", True))

    if args.json:
        emit_json(
            {
                "steps": [_cert_row(c) for c in report.steps],
                "passed": report.passed,
                "failed": report.failed,
                "seconds": round(report.seconds, 3),
                "only": args.only,
                "tightness": None if tightness is None else to_plain(tightness),
            }
        )
    else:
        _print_human(report, tightness, details=args.details)
    return 0 if report.ok and tight_ok else 1


def _certify_with_progress(only: str | None) -> theory.VerificationReport:
    """``theory.certify_all(only)``, one step at a time, advancing a progress bar
    on stderr (shown only on a terminal)."""
    import time

    from vistalab.theory._proofs import run_step

    from .._reproduce import RichProgress

    steps = theory.list_steps(only)
    if not steps or not sys.stderr.isatty():
        # No bar to advance (or no steps: certify_all raises the error naming the choices).
        return theory.certify_all(only)
    t0 = time.perf_counter()
    certs = []
    with RichProgress(sys.stderr).stage("proof steps", len(steps)) as bar:
        for step in steps:
            certs.append(run_step(step))
            bar.advance(f"{step.claim}:{step.name}")
    passed = sum(c.passed for c in certs)
    return theory.VerificationReport(steps=tuple(certs), passed=passed,
                                     failed=len(certs) - passed,
                                     seconds=time.perf_counter() - t0, only=only)


def _step_row(s: theory.Step) -> dict[str, str]:
    return {
        "claim": s.claim,
        "step": s.name,
        "method": s.method,
        "domain": s.domain,
        "statement": s.statement,
        "ref": s.ref,
    }


def _cert_row(c: theory.StepCertificate) -> dict[str, Any]:
    return {
        "claim": c.claim,
        "step": c.step,
        "method": c.method,
        "domain": c.domain,
        "status": c.status,
        "detail": c.detail,
        "statement": c.statement,
        "ref": c.ref,
        "seconds": round(c.seconds, 4),
    }


def _esc(v: Any) -> Any:
    """Escape rich markup: domains such as 'E = 1[g(R) != X]' contain brackets."""
    from rich.markup import escape

    return escape(v) if isinstance(v, str) else v


def _print_human(
    report: theory.VerificationReport, tightness: Any, *, details: bool
) -> None:
    cols = ["claim", "step", "method", "domain", "status"]
    if details:
        cols.append("detail")
    rows = []
    for c in report.steps:
        row = [c.claim, c.step, c.method, c.domain, c.status.upper()]
        if details:
            row.append(c.detail)
        rows.append([_esc(v) for v in row])
    emit_table(cols, rows, title="Proof-step certificates")

    out = sys.stdout
    failed = [c for c in report.steps if not c.passed]
    for c in failed:
        out.write(f"FAILED {c.claim}:{c.step} [{c.method}]: {c.detail}\n")
    per_claim = ", ".join(
        f"{claim} {p}/{p + f}" for claim, (p, f) in report.by_claim().items()
    )
    out.write(
        f"{report.passed} passed, {report.failed} failed in {report.seconds:.1f} s "
        f"({per_claim})\n"
    )
    if tightness is not None:
        _print_tightness(tightness)


def _print_tightness(report: Any) -> None:
    """Print every tuple-of-rows field of the tightness report as a table and its
    scalar fields as a summary line (robust to fields being added)."""
    out = sys.stdout
    out.write("\nTightness findings\n")
    scalars = []
    for f in dataclasses.fields(report):
        value = getattr(report, f.name)
        if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            names = [g.name for g in dataclasses.fields(value[0])]
            emit_table(
                names,
                [[getattr(r, g) for g in names] for r in value],
                title=f.name.replace("_", " "),
            )
        elif not isinstance(value, tuple):
            scalars.append(f"{f.name} = {_fmt(value)}")
    if scalars:
        out.write("; ".join(scalars) + "\n")


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)
