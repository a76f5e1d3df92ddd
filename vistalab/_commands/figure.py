"""``vista-lab figure NAME [--param value ...]``: one figure at the parameters given.

The same run as ``python -m vistalab.figures.NAME`` (``figures._script.run_figure``):
every key of the figure's ``default_params()`` is an option (``--n 256 --kappa 8``),
checked by the figure's own rules before anything is computed; the tidy CSV, PNG and
PDF go to ``--out`` and each check is printed. ``vista-lab figure NAME --help`` lists
the figure's parameters.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from vistalab.figures._registry import FIGURE_NAMES

    parser = subparsers.add_parser(
        "figure",
        help="draw one figure at the parameters given (vista-lab figure NAME --help)",
        description=(
            "Compute and draw one of the paper's figures at the parameters given, without "
            "the reproduce cache: the tidy table (CSV), the figure (PNG and PDF) to --out "
            "(default vista-lab-out/figures), then each check of the figure's data; exit "
            "status 1 if a check fails, 2 on bad input. Every entry of the figure's default "
            "parameters is an option; 'vista-lab figure NAME --help' lists them, e.g. "
            "'vista-lab figure fig4_tradeoff --n 256 --kappa 8'."
        ),
    )
    parser.add_argument("name", metavar="NAME", choices=FIGURE_NAMES,
                        help=f"the figure: {', '.join(FIGURE_NAMES)}")
    parser.add_argument("options", nargs=argparse.REMAINDER, metavar="...",
                        help="the figure's options (--quick, --out DIR, --seed INT, and one "
                             "per parameter)")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    from vistalab.figures._script import run_figure

    return run_figure(args.name, list(args.options), prog=f"vista-lab figure {args.name}")
