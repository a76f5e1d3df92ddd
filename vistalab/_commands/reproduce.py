"""``vista-lab reproduce``: the main job. Re-derives every theorem plot and
the paper's result figures, runs every check, and writes a report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from .._reproduce import DEFAULT_SEED

    parser = subparsers.add_parser(
        "reproduce",
        help="regenerate every figure, run every check, write report.md",
        description=(
            "Run the proof-step verification, the paper checks, the simulations, the "
            "engine-backed checks and the figures; write DIR/figures/, DIR/results/ "
            "(tidy CSV + JSON sidecars) and DIR/report.md. Cached stages are reused "
            "unless their parameters or the code changed. Exit status 1 if a check fails; "
            "failed claims about the paper's own reported numbers (tables/text that disagree "
            "with each other) are findings, reported but not failing unless --strict."
        ),
    )
    parser.add_argument("--quick", action="store_true",
                        help="fewer trials and grid points: a fast smoke run of every stage")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output folder (default: ./vista-lab-out, or ./vista-lab-out/quick "
                             "with --quick, so a quick run never replaces the full one)")
    parser.add_argument("--force", action="store_true",
                        help="ignore cached results and recompute every stage")
    parser.add_argument("--strict", action="store_true",
                        help="also exit 1 on findings about the paper's own reported numbers")
    parser.add_argument("--paper", metavar="PATH", default=None,
                        help="the paper's LaTeX source (not shipped): add a stage checking "
                             "every table cell and quoted number of the data against it")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"root random seed (default: {DEFAULT_SEED})")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    from .._output import emit_table
    from .._paths import output_dir
    from .._policy import policy_line
    from .._reproduce import RichProgress, default_out, run_reproduce
    from .._reproduce._rows import FINDING_SOURCES

    out = output_dir("--out", default_out(args.quick) if args.out is None else args.out)
    # Bars on a terminal; off one (a log file, CI) one plain line per stage on stdout.
    plain = not (sys.stdout.isatty() and sys.stderr.isatty())
    result = run_reproduce(
        out, quick=args.quick, force=args.force, seed=args.seed, paper=args.paper,
        progress=RichProgress(sys.stderr, lines=sys.stdout if plain else None),
    )
    summary = result.summary
    # The report's first lines, in the same words: the verdict and the counts.
    print(summary.headline())
    if summary.formal:
        print(summary.formal)
    findings = [c for c in result.checks if c.status == "fail" and c.source in FINDING_SOURCES]
    failing = [c for c in result.checks if c.status == "fail" and c.source not in FINDING_SOURCES]
    if findings:
        emit_table(("check", "claim", "numbers"), [(c.id, c.claim, c.numbers) for c in findings],
                   title="Findings about the paper: its own numbers disagree (reported, not "
                         "failing; --strict makes them fail)")
    if failing:
        emit_table(("source", "check", "numbers"),
                   [(c.source, c.id, c.numbers) for c in failing],
                   title="Failed checks of the toolkit")
    if args.strict and result.findings:
        print(policy_line(result.failed, result.findings, strict=True))
    for skip in result.skipped:
        print(f"{skip.count} {skip.what} checks skipped: {skip.why}; {skip.fix}")
    cached = sum(1 for s in result.stages if s.status == "cached")
    print(f"{len(result.stages)} stages ({cached} from cache) in {result.seconds:.1f} s; "
          f"report: {result.report_path} (and {result.report_path.with_suffix('.html').name})")
    return result.exit_status_for(strict=args.strict)
