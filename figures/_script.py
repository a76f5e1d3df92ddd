"""Run one figure script on its own: ``python -m vistalab.figures.fig3_content_channel``.

This path does not cache (the ``vista-lab reproduce`` pipeline does); it
computes, writes the tidy CSV next to the figure, plots, and prints the checks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vistalab._core import atomic_write

from ._registry import load_figure

__all__ = ["run_as_script"]


def run_as_script(name: str, argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m vistalab.figures.<name>``; returns 1 if a check fails."""
    fig = load_figure(name)
    parser = argparse.ArgumentParser(
        prog=f"python -m vistalab.figures.{name}",
        description=(fig.__doc__ or fig.TITLE).strip().splitlines()[0],
    )
    parser.add_argument("--quick", action="store_true", help="fewer trials and grid points")
    parser.add_argument("--out", default="vista-lab-out/figures", metavar="DIR",
                        help="folder for the PNG, PDF and CSV (default: vista-lab-out/figures)")
    parser.add_argument("--seed", type=int, default=20260522, help="random seed")
    args = parser.parse_args(argv)
    table = fig.compute(fig.default_params(args.quick), rng=np.random.default_rng(args.seed))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / f"{name}.csv", table.to_csv().encode("utf-8"))
    png, pdf = fig.plot(table, out)
    failed = 0
    for check in fig.checks(table):
        failed += check.status == "fail"
        print(f"{check.status:>13}  {check.id}: {check.numbers}")
    print(f"wrote {png}, {pdf} and {out / (name + '.csv')}", file=sys.stderr)
    return 1 if failed else 0
