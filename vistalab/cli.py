"""Entry point of the ``vista-lab`` command.

Every failure the user can cause ends as one line on stderr and exit status 2;
a failed check ends with exit status 1; success with 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence

from vistalab._core import suggest
from vistalab._core._oneline import (
    ONE_LINE_ERRORS,
    OneLineParser,
    UsageError,
    failure_line,
    one_line,
)

from . import __version__
from ._commands import COMMANDS
from ._errors import CliUsageError

__all__ = ["main", "build_parser"]

_PROG = "vista-lab"


class _MissingArguments(CliUsageError):
    """Required arguments are missing; ``main`` adds hints for the unknown
    options that were probably meant (``--kapa`` for ``--kappa``)."""

    def __init__(self, message: str, parser: argparse.ArgumentParser) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(OneLineParser):
    """ArgumentParser whose errors raise instead of printing usage and exiting
    (the rewriting of argparse's messages is shared with the figure scripts)."""

    top_prog = _PROG

    def error(self, message: str) -> None:  # type: ignore[override]
        # main() prints "vista-lab: error: ", so the top level adds no prefix of its own
        text = message if self.prog == _PROG else f"{self.prog}: {message}"
        if message.startswith("the following arguments are required"):
            raise _MissingArguments(text, self)
        try:
            super().error(message)
        except UsageError as exc:
            raise CliUsageError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_PROG,
        description="Verification and simulation toolkit for the VISTA paper.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def _unrecognized(
    parser: argparse.ArgumentParser, extras: list[str], ns: argparse.Namespace
) -> str:
    sub_parser = getattr(ns, "_parser", parser)
    known = [s for a in sub_parser._actions for s in a.option_strings]
    parts = []
    for tok in extras:
        hint = suggest(tok, known) if tok.startswith("-") else None
        parts.append(f"{tok!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
    prog = sub_parser.prog
    return f"{prog}: unrecognized argument(s) {', '.join(parts)}; see '{prog} --help'"


def _hint_unknown(exc: _MissingArguments, args: list[str]) -> str:
    """Unknown option tokens of the failing parser, each with its closest
    option: the missing required option is often a misspelt one."""
    known = [s for a in exc.parser._actions for s in a.option_strings]
    parts = []
    for tok in args:
        name = tok.split("=", 1)[0]
        if not name.startswith("-") or name in known or _NUMBER.fullmatch(name):
            continue
        hint = suggest(name, known)
        parts.append(f"{name!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
    if not parts:
        return str(exc)
    return f"{str(exc)}; unrecognized option(s) {', '.join(parts)}"


_NUMBER = re.compile(r"-[0-9.][0-9.eE+-]*")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args if not a.startswith("-")), None)
    if command not in _HYPOTHESIS_COMMANDS:
        # No temporary folder for commands that never run Hypothesis (a long-lived
        # `workspace serve` ended by a signal would otherwise leave one behind).
        return _main(args)
    with _hypothesis_storage():
        return _main(args)


#: Commands that run Hypothesis (proof steps, directly or through claims; the
#: conformance suite).
_HYPOTHESIS_COMMANDS = frozenset({"verify", "check-paper", "reproduce", "conformance"})


@contextlib.contextmanager
def _hypothesis_storage() -> Iterator[None]:
    """Keep Hypothesis's caches out of the user's current folder.

    Commands that run Hypothesis-certified proof steps (verify, check-paper,
    reproduce) would otherwise leave ``./.hypothesis``. Its storage goes to a
    temporary folder removed on exit (``reproduce`` moves it under
    ``<out>/.cache/hypothesis``). Left alone when Hypothesis is already imported
    (e.g. under pytest) or the user set ``HYPOTHESIS_STORAGE_DIRECTORY``.
    """
    key = "HYPOTHESIS_STORAGE_DIRECTORY"
    if "hypothesis" in sys.modules or os.environ.get(key):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="vista-lab-hypothesis-") as tmp:
        os.environ[key] = tmp
        try:
            yield
        finally:
            os.environ.pop(key, None)


def _main(args: list[str]) -> int:
    try:
        # Inside the try: a command whose optional extra is missing fails while
        # registering (MissingExtraError), and that is one line too.
        parser = build_parser()
        ns, extras = parser.parse_known_args(args)
        if extras:
            raise CliUsageError(_unrecognized(parser, extras, ns))
        status = ns.func(ns)
    except _MissingArguments as exc:
        print(f"{_PROG}: error: {one_line(_hint_unknown(exc, args))}", file=sys.stderr)
        return 2
    except (*ONE_LINE_ERRORS, KeyboardInterrupt) as exc:
        # a VistaLabError, an OSError after the door checks (a folder made
        # read-only mid-run, a full disk), deep nesting, memory, Ctrl-C
        text, code = failure_line(exc)
        print(f"{_PROG}: {text}", file=sys.stderr)
        return code
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
