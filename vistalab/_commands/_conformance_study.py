"""The ``--study`` mode of ``vista-lab conformance``: check every installed peer
(a real context manager of the ecosystem) and write the study into ``--out``.

Hooked into the ``conformance`` command by :func:`add_study_arguments` (its
parser) and :func:`run_study_command` (its ``run`` when ``args.study``).
"""

from __future__ import annotations

import argparse

from .._errors import CliUsageError
from .._output import emit_json

__all__ = ["add_study_arguments", "run_study_command", "DEFAULT_STUDY_EXAMPLES"]

#: Conversations per peer when ``--examples`` is not given with ``--study``.
DEFAULT_STUDY_EXAMPLES = 100


def add_study_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--study`` and ``--peers`` (``--out``, ``--examples``, ``--seed``,
    ``--json`` are the command's own)."""
    parser.add_argument(
        "--study", action="store_true",
        help="check every installed peer (real context managers: langchain-core, litellm, "
        "tokentrim, autogen-core, llama-index-core; pip install 'vista-lab[peers]') and "
        "write the study into --out: study.md (peer x invariant table, bug write-ups), "
        "study.csv, study.json (with package versions), study.png, counterexamples/; "
        f"{DEFAULT_STUDY_EXAMPLES} conversations per peer unless --examples; exit 0 once "
        "written (violations are the study's findings)",
    )
    parser.add_argument(
        "--peers", metavar="NAME[,NAME...]", default=None,
        help="with --study: only these peers (default: every peer; a missing one is listed "
        "as not installed with its pip command)",
    )


def run_study_command(args: argparse.Namespace) -> int:
    """Run the study the parsed ``args`` ask for; prints the table (or JSON)."""
    from vistalab.conformance._study import NOT_INSTALLED, run_study

    out = getattr(args, "out", None)
    if not out:
        raise CliUsageError("--study needs --out DIR (the folder the study is written into)")
    peers = None
    if getattr(args, "peers", None):
        peers = [p.strip() for p in str(args.peers).split(",") if p.strip()]
    from ._args import parse_int

    examples = getattr(args, "examples", None)
    examples = DEFAULT_STUDY_EXAMPLES if examples is None else parse_int("examples", examples,
                                                                          lo=1)
    seed = getattr(args, "seed", None)
    seed = 0 if seed is None else parse_int("seed", seed, lo=0)
    if getattr(args, "protocol", "openai") != "openai":
        raise CliUsageError("--study checks the peers in the OpenAI chat format: drop --protocol")
    for option in ("manager", "replay", "budget"):
        if getattr(args, option, None) is not None:
            raise CliUsageError(f"--study checks every peer: drop "
                                f"{'MANAGER' if option == 'manager' else '--' + option}")
    from .._paths import output_dir
    from .._study_figure import draw_study_figure
    from .conformance import _timeout

    result = run_study(output_dir("--out", out), peers=peers, examples=examples, seed=seed,
                       timeout=_timeout(getattr(args, "timeout", None)),
                       figure=draw_study_figure)
    if getattr(args, "json", False):
        emit_json(result.to_dict())
        return 0
    from vistalab.conformance._model import CHECKED

    # plain lines (a boxed table folds the long peer names at 80 columns)
    width = max(len(r.peer) for r in result.rows) + 2
    print(f"conformance study: {len(result.checked)} of {len(result.rows)} peers checked, "
          f"{result.examples} conversations each (seed {result.seed}, {result.counter})")
    print(" " * width + " ".join(f"{i:<15}" for i in CHECKED).rstrip())
    for r in result.rows:
        cells = ["VIOLATED" if c.endswith(".json") else c for c in (r.cells[i] for i in CHECKED)]
        print(f"{r.peer:<{width}}" + " ".join(f"{c:<15}" for c in cells).rstrip())
    versions = sorted({f"{d} {v}" for r in result.rows for d, v in r.versions.items() if v})
    print("versions: " + ", ".join(versions))
    for r in result.rows:
        if r.status == NOT_INSTALLED:
            print(f"{r.peer}: not installed; {r.note}")
        elif r.status != "checked":
            print(f"{r.peer}: {r.status}; {r.note}")
    print(f"study written to {result.files['table']} (CSV, JSON, figure and "
          f"{sum(len(r.bugs) for r in result.rows)} bug write-ups beside it)")
    return 0
