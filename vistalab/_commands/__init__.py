"""Subcommands of ``vista-lab``: one module per command, listed in :data:`COMMANDS`.

Each module exposes ``register(subparsers)``, which adds its parser with
``subparsers.add_parser(...)`` and calls
``parser.set_defaults(func=run, _parser=parser)``; ``run(args) -> int`` returns
the exit status (0 ok, 1 a check failed). Raise :class:`theory.DomainError`
(or any :class:`theory.VistaLabError`) for bad input: the CLI turns it into one
line on stderr and exit status 2.
"""

from types import ModuleType

from . import (
    bound,
    check_paper,
    conformance,
    examples,
    makeroom,
    plot_sweep,
    recovery,
    reproduce,
    sweep,
    verify,
    workspace,
)

#: The subcommand modules, in ``--help`` order: a static list, so a renamed or
#: missing command module breaks the import (and the tests), never silently
#: drops a command.
COMMANDS: tuple[ModuleType, ...] = (
    verify,
    bound,
    recovery,
    makeroom,
    workspace,
    conformance,
    check_paper,
    reproduce,
    sweep,
    plot_sweep,
    examples,
)
