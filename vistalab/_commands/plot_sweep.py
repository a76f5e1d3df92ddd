"""``vista-lab plot-sweep``: the trade-off plot of a sweep's results, with
Theorem 1's bound and the exact frontier (or Proposition 1's bound) overlaid."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._output import emit_json, emit_table
from .._paths import input_path, output_file
from ._args import cli_wording

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plot-sweep",
        help="plot a sweep's results table with the theory overlaid",
        description=(
            "Plot Y against X from a sweep results folder (or results.parquet/.csv), one "
            "series per interface/strategy and one panel per (n, kappa) or (N, k). Make-room "
            "tables plotted as rate vs E[Z] (or E[Z]/kappa) get Theorem 1's lower bound and "
            "the exact optimal frontier; recovery tables as budget vs success get "
            "Proposition 1's bound."
        ),
    )
    parser.add_argument("results", metavar="RESULTS",
                        help="sweep folder, results.parquet or results.csv")
    parser.add_argument("--x", default="rate_bits",
                        help="x column, named exactly (default rate_bits; a near miss such as "
                             "'rate' is refused with the close matches)")
    parser.add_argument("--y", default="mean_z",
                        help="y column or ratio, e.g. mean_z or mean_z/kappa (default mean_z)")
    parser.add_argument("--group", default=None,
                        help="comma-separated columns whose values make the series "
                             "(default: interface or strategy, plus policy/mode/handle_cost "
                             "when they vary)")
    parser.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                        help="keep only rows with this value (repeatable)")
    parser.add_argument("--no-theory", action="store_true", help="do not overlay theory curves")
    parser.add_argument("--title", default=None, help="figure title")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="image to write (.png, .pdf or .svg; default next to the results)")
    parser.add_argument("--json", action="store_true", help="print what was drawn as JSON")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    with cli_wording({"path": "RESULTS"}):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from .._sweep import plot_sweep, read_results

    input_path("RESULTS", args.results)
    if args.out is not None:
        output_file("--out", args.out, parents=True)
    table = read_results(args.results)
    if args.out is None:
        base = Path(args.results)
        folder = base if base.is_dir() else base.parent
        stem = f"plot-{args.y}-vs-{args.x}".replace("/", "-per-")
        out = folder / f"{stem}.png"
    else:
        out = Path(args.out)
    summary = plot_sweep(table, out, x=args.x, y=args.y, group=args.group, where=args.where,
                         theory=not args.no_theory, title=args.title)
    if args.json:
        emit_json({
            "out": summary.out, "x": summary.x, "y": summary.y, "rows": summary.rows,
            "panels": [{"title": p.title, "keys": p.keys, "notes": list(p.notes),
                        "series": [{"label": s.label, "kind": s.kind, "points": len(s.x)}
                                   for s in p.series]} for p in summary.panels],
        })
    else:
        rows = [(p.title, ", ".join(f"{s.label} ({len(s.x)})" for s in p.series))
                for p in summary.panels]
        rows.append(("written", summary.out))
        rows += [("note", n) for n in summary.notes]
        emit_table(["panel", "series (points)"], rows,
                   title=f"plot-sweep: {summary.y} vs {summary.x}, {summary.rows} rows")
    return 0
