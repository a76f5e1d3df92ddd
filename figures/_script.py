"""Run one figure script on its own: ``python -m vistalab.figures.fig3_content_channel``.

This path does not cache (the ``vista-lab reproduce`` pipeline does); it
computes, writes the tidy CSV next to the figure, plots, and prints the checks.
It keeps the command line's error contract: a bad option is one stderr line
and exit status 2, checked before anything is computed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vistalab._core import DomainError, atomic_write
from vistalab._core._oneline import ONE_LINE_ERRORS, OneLineParser, failure_line
from vistalab._core._paths import output_dir, output_file

from ._registry import load_figure

__all__ = ["run_as_script"]

_DEFAULT_SEED = 20260522


def run_as_script(name: str, argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m vistalab.figures.<name>``; returns 1 if a check
    fails, 2 (after one stderr line) on bad input or a refused write."""
    prog = f"python -m vistalab.figures.{name}"
    try:
        return _run(name, prog, argv)
    except (*ONE_LINE_ERRORS, KeyboardInterrupt) as exc:
        text, status = failure_line(exc)
        print(f"{prog}: {text}", file=sys.stderr)
        return status


def _seed(text: str) -> int:
    try:
        seed = int(str(text).strip())
    except ValueError:
        seed = -1
    if seed < 0:
        raise DomainError("--seed", text, "must be a non-negative integer",
                          f"pass e.g. --seed {_DEFAULT_SEED}")
    return seed


def _run(name: str, prog: str, argv: Sequence[str] | None) -> int:
    fig = load_figure(name)
    parser = OneLineParser(
        prog=prog, description=(fig.__doc__ or fig.TITLE).strip().splitlines()[0],
    )
    parser.add_argument("--quick", action="store_true", help="fewer trials and grid points")
    parser.add_argument("--out", default="vista-lab-out/figures", metavar="DIR",
                        help="folder for the PNG, PDF and CSV (default: vista-lab-out/figures)")
    parser.add_argument("--seed", default=str(_DEFAULT_SEED), metavar="INT",
                        help=f"random seed, a non-negative integer (default {_DEFAULT_SEED})")
    args = parser.parse_args(argv)
    # Every door check before the computation: a bad path must not cost a run.
    seed = _seed(args.seed)
    out = output_dir("--out", args.out)
    targets = [output_file("--out", out / f"{name}.{ext}", parents=True)
               for ext in ("csv", "png", "pdf")]
    table = fig.compute(fig.default_params(args.quick), rng=np.random.default_rng(seed))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(targets[0], table.to_csv().encode("utf-8"))
    png, pdf = fig.plot(table, out)
    failed = 0
    for check in fig.checks(table):
        failed += check.status == "fail"
        print(f"{check.status:>13}  {check.id}: {check.numbers}")
    print(f"wrote {png}, {pdf} and {Path(targets[0])}", file=sys.stderr)
    return 1 if failed else 0
