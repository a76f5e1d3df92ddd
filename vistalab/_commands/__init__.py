"""Subcommands of ``vista-lab``: one module per command, declared in :data:`COMMANDS`.

Lazy loading (why the registry is data, not imported modules): ``vista-lab
--version``, ``vista-lab --help`` and a closed-form ``vista-lab bound ...`` must
start at once, so building the parser imports no command module except the one
that runs. Each :class:`Command` names its module as a string; the CLI imports
that module (:meth:`Command.load`) only when its name is the command on the line
(or when the full parser is built, e.g. by the tests walking every option); the
other commands get a placeholder parser that carries only ``help``.

To add a command ``frob``:

1. write ``vistalab/_commands/frob.py`` with ``register(subparsers)``, which adds
   its parser with ``subparsers.add_parser("frob", help=..., description=...)``
   and calls ``parser.set_defaults(func=run, _parser=parser)``, and
   ``run(args) -> int``, which returns the exit status (0 ok, 1 a check failed);
2. add ``Command("frob", "frob", "<the same help line>")`` to :data:`COMMANDS`.

Keep the module's top-level imports light (the standard library,
``vistalab._core``, the ``_args``/``_output``/``_paths`` helpers) and import numpy,
scipy, sympy or a layer (``vistalab.sims``, ``vistalab.workspace``...) inside
``run``: the module is imported whenever its command is typed, even for
``vista-lab frob --help``. Raise :class:`vistalab._core.DomainError` (or any
``VistaLabError``) for bad input: the CLI turns it into one line on stderr and
exit status 2. ``property_tests/test_cli_lazy.py`` checks that every entry
loads, registers the declared name and help, and that start-up stays light.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Command", "COMMANDS", "command_named"]


@dataclass(frozen=True)
class Command:
    """One subcommand: its ``name`` as typed, its ``module`` (under
    ``vistalab._commands``, imported only by :meth:`load`) and its one-line ``help``
    for ``vista-lab --help`` (the same text the module's ``register`` passes)."""

    name: str
    module: str
    help: str

    def load(self) -> ModuleType:
        """Import the command's module (it has ``register`` and ``run``)."""
        return importlib.import_module(f"{__name__}.{self.module}")


#: The subcommands, in ``--help`` order: a static list, so a renamed or missing
#: command module fails the tests (every entry is loaded there), never silently
#: drops a command.
COMMANDS: tuple[Command, ...] = (
    Command("verify", "verify",
            "certify every proof step (sympy, Shannon LP, interval, enumeration, Hypothesis)"),
    Command("bound", "bound", "evaluate a bound or the exact frontier at one point"),
    Command("recovery", "recovery", "simulate the recovery task T_{N,k} (Proposition 1)"),
    Command("makeroom", "makeroom", "simulate the make-room instance M_{n,L,l} (Theorem 1)"),
    Command("workspace", "workspace",
            "replay a chat trace through the context workspace; print its dashboard"),
    Command("conformance", "conformance",
            "check a context manager (a trimmer or an adapter) against the workspace invariants"),
    Command("check-paper", "check_paper",
            "check every quantitative claim of the paper (tables, text, theory)"),
    Command("reproduce", "reproduce", "regenerate every figure, run every check, write report.md"),
    Command("sweep", "sweep",
            "run a parameter sweep from a TOML config (resumable; local or Dask)"),
    Command("figure", "figure",
            "draw one figure at the parameters given (vista-lab figure NAME --help)"),
    Command("plot-sweep", "plot_sweep", "plot a sweep's results table with the theory overlaid"),
    Command("examples", "examples",
            "copy the example sweep configs and sample traces into DIR"),
)


def command_named(name: str | None) -> Command | None:
    """The registered command called ``name`` (None if there is none)."""
    return next((c for c in COMMANDS if c.name == name), None)
