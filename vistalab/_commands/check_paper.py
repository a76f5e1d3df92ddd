"""``vista-lab check-paper``: run the registry of the paper's quantitative claims and print,
section by section, what holds, what fails (with the discrepancy) and what cannot be
checked here."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vistalab._core import DomainError

from .._output import emit_json
from .._paths import input_dir
from .._policy import exit_status, is_finding, policy_line, split_failures
from ._args import api_names

__all__ = ["register", "run"]

_MARK = {"pass": "pass", "fail": "FAIL", "not_checkable": "n/c"}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check-paper",
        help="check every quantitative claim of the paper (tables, text, theory)",
        description=(
            "Run the registry of the paper's claims: every table (counts behind percentages, "
            "row sums, cross-table agreement, recomputed costs), every number in the text that "
            "follows from others, and every theoretical statement (checked over grids and "
            "linked to theory/'s proof-step certificates). Each claim ends pass, fail (with "
            "the discrepancy in numbers) or not_checkable (with the reason). Exit status 1 if "
            "a claim fails; failed claims about the paper's own reported numbers (its tables "
            "and text disagreeing with each other) are findings, reported but not failing "
            "unless --strict (the same policy as `vista-lab reproduce`)."
        ),
    )
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: claims (id, where, status, detail, ...) "
                             "and the counts pass, fail, not_checkable")
    parser.add_argument("--only", metavar="PATTERN", default=None,
                        help="run only claims whose id or section matches this glob or "
                             "substring; comma-separate several (e.g. 'table8.*', 'thm1', "
                             "'text.ama*,table4*')")
    parser.add_argument("--strict", action="store_true",
                        help="also exit 1 on findings about the paper's own reported numbers")
    parser.add_argument("--report-only", action="store_true",
                        help="exit 0 even when a claim fails (the report still shows it)")
    parser.add_argument("--no-certificates", action="store_true",
                        help="skip theory/'s proof-step certificates linked to the theory "
                             "claims (faster; the claims then rest on their numerical checks)")
    parser.add_argument("--data-dir", metavar="DIR", default=None,
                        help="check another copy of the paper's data files (default: the "
                             "shipped paper_checks/data)")
    parser.add_argument("--seed", metavar="INT", type=int, default=None,
                        help="root seed of the Monte Carlo checks (default: a fixed seed, so "
                             "the report is reproducible)")
    parser.add_argument("--paper", metavar="PATH", default=None,
                        help="the paper's LaTeX source (not shipped): also check that every "
                             "table cell and quoted number of the data files occurs in it")
    parser.add_argument("--list", action="store_true",
                        help="list the claims (id, section, where) without running them")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    from vistalab import paper_checks

    if args.seed is not None and args.seed < 0:
        raise DomainError("--seed", args.seed, "must be a non-negative integer")
    if args.list:
        claims = paper_checks.select_claims(args.only)
        if args.json:
            emit_json({"claims": [{"id": c.id, "section": c.section, "where": c.where,
                                   "statement": c.statement, "kind": c.kind,
                                   "stage": c.stage}
                                  for c in claims], "count": len(claims)})
        else:
            _print_list(claims)
        return 0
    from .._reproduce import RichProgress

    paper = None if args.paper is None else paper_checks_paper_iv(args.paper)
    data_dir = None if args.data_dir is None else input_dir("--data-dir", args.data_dir)
    total = len(paper_checks.select_claims(args.only))
    with api_names(data_dir="--data-dir"), \
            RichProgress(sys.stderr).stage("paper claims", total) as bar:
        report = paper_checks.run_claims(
            args.only, data_dir=data_dir, rng=args.seed,
            certificates=not args.no_certificates,
            progress=lambda r: bar.advance(r.id),
        )
    transcription = () if paper is None else paper_checks.check_transcription(
        paper, data_dir=data_dir)
    failures, findings = split_failures(r.kind for r in report.results if r.status == "fail")
    # A data file that disagrees with the LaTeX source is the toolkit's error, not a
    # finding about the paper: it fails the run under either policy.
    failures += sum(not c.ok for c in transcription)
    if args.json:
        doc = report.to_dict()
        doc["exit_policy"] = {"failures": failures, "findings": findings,
                              "strict": bool(args.strict)}
        if paper is not None:
            doc["transcription"] = {"paper": str(paper), "checks": [
                {"id": c.id, "where": c.where, "ok": c.ok, "detail": c.detail}
                for c in transcription]}
        emit_json(doc)
    else:
        _print_human(report, policy_line(failures, findings, strict=args.strict))
        if paper is not None:
            _print_transcription(paper, transcription)
    if args.report_only:
        return 0
    return exit_status(failures, findings, strict=args.strict)


def paper_checks_paper_iv(path: str) -> Any:
    from vistalab.paper_checks._transcription import paper_source_iv

    return paper_source_iv(path, "--paper")


def _print_transcription(paper: Any, checks: Any) -> None:
    bad = [c for c in checks if not c.ok]
    print(f"Transcription against {paper}: {len(checks) - len(bad)} of {len(checks)} "
          "tables and quotes match the LaTeX source")
    for c in bad:
        print(f"  FAIL {c.id} [{c.where}]: {c.detail}")


def _esc(v: Any) -> str:
    """Escape rich markup: details contain brackets such as [1 - (I+1)/nu]_+."""
    from rich.markup import escape

    return escape(str(v))


def _print_list(claims: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(claims)} claims")
    for col in ("id", "section", "where"):
        table.add_column(col, overflow="fold")
    for c in claims:
        table.add_row(_esc(c.id), _esc(c.section), _esc(c.where))
    Console(file=sys.stdout, highlight=False).print(table)


def _print_human(report: Any, policy: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout, highlight=False)
    for section, results in report.by_section().items():
        table = Table(title=section, title_justify="left", show_lines=False, expand=True)
        table.add_column("status", no_wrap=True, width=6)
        table.add_column("claim", overflow="fold", ratio=2)
        table.add_column("numbers behind it", overflow="fold", ratio=5)
        for r in results:
            table.add_row(_MARK[r.status], _esc(f"{r.id}\n{r.statement}"), _esc(r.detail))
        console.print(table)
    fails = [r for r in report.results if r.status == "fail"]
    for title, group in (("Failed claims", [r for r in fails if not is_finding(r.kind)]),
                         ("Findings about the paper's own numbers",
                          [r for r in fails if is_finding(r.kind)])):
        if group:
            console.print(f"{title}:")
            for r in group:
                console.print(_esc(f"  {r.id} [{r.where}]: {r.detail}"))
    console.print(_esc(policy))
    c = report.counts
    console.print(
        f"{len(report.results)} claims: {c['pass']} pass, {c['fail']} fail, "
        f"{c['not_checkable']} not checkable"
    )
