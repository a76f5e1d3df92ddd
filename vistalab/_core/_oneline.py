"""The one-line error contract of every command-line entry point (``vista-lab``
and ``python -m vistalab.figures.<name>``): usage errors raise instead of
printing usage, and every failure the user can cause becomes one stderr line."""

from __future__ import annotations

import argparse
import re

from ._errors import VistaLabError, suggest

__all__ = ["UsageError", "OneLineParser", "usage_text", "failure_line", "one_line",
           "ONE_LINE_ERRORS"]

_INVALID_CHOICE = re.compile(
    r"argument (?P<arg>[^:]+): invalid choice: '(?P<got>[^']*)' \(choose from (?P<choices>.*)\)"
)
_INVALID_TYPE = re.compile(
    r"argument (?P<arg>[^:]+): invalid (?P<type>int|float) value: '(?P<got>[^']*)'"
)
_TYPE_RULE = {"int": ("an integer", "a whole number", "4"), "float": ("a number", "a number",
                                                                     "1.5")}

#: What :func:`failure_line` turns into one line (plus ``KeyboardInterrupt``).
ONE_LINE_ERRORS = (VistaLabError, OSError, RecursionError, MemoryError)


class UsageError(VistaLabError, ValueError):
    """The command line itself is malformed (unknown subcommand, option or value)."""


def usage_text(message: str) -> str:
    """argparse's own error ``message`` rewritten to name the rule and the fix:
    an invalid choice gets did-you-mean and the choices, an invalid int/float
    (a ``type=`` converter) gets the rule and an example."""
    m = _INVALID_CHOICE.search(message)
    if m:
        choices = [c.strip().strip("'") for c in m.group("choices").split(",")]
        hint = suggest(m.group("got"), choices)
        text = f"{m.group('arg')}: unknown value {m.group('got')!r}"
        if hint:
            text += f"; did you mean {hint!r}?"
        return text + f" (choose from {', '.join(choices)})"
    m = _INVALID_TYPE.search(message)
    if m:
        arg = m.group("arg").split("/")[-1]
        rule, kind, example = _TYPE_RULE[m.group("type")]
        return (f"`{arg}` must be {rule} (got {arg}={m.group('got')!r}); pass {kind}, "
                f"e.g. {arg} {example}")
    return message


class OneLineParser(argparse.ArgumentParser):
    """ArgumentParser whose errors raise :class:`UsageError` (one line, exit 2
    from the entry point) instead of printing usage and exiting."""

    #: the top-level program name; a subcommand's errors are prefixed with its own
    top_prog: str | None = None

    def error(self, message: str) -> None:  # type: ignore[override]
        text = usage_text(message)
        if text.startswith("unrecognized arguments"):
            text += f"; see '{self.prog} --help'"
        if self.top_prog is not None and self.prog != self.top_prog:
            text = f"{self.prog}: {text}"
        raise UsageError(text)


def one_line(exc: BaseException | str) -> str:
    """``exc``'s message with all whitespace runs (newlines too) made one space."""
    return " ".join(str(exc).split())


def failure_line(exc: BaseException) -> tuple[str, int]:
    """``(text, exit status)`` for a failure of :data:`ONE_LINE_ERRORS` or a
    ``KeyboardInterrupt``; the entry point prints ``f"{prog}: {text}"``."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", 130
    if isinstance(exc, VistaLabError):
        return f"error: {one_line(exc)}", 2
    if isinstance(exc, OSError):
        # The environment refused a read or write after the door checks passed
        # (a folder made read-only mid-run, a full disk): still one line, exit 2.
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        reason = exc.strerror or str(exc) or type(exc).__name__
        return (f"error: cannot use{where}: {one_line(reason)}; check the path, its "
                "permissions and the free space, then rerun", 2)
    if isinstance(exc, RecursionError):
        return ("error: the input is nested too deeply to read (Python's recursion limit); "
                "flatten the JSON/TOML input", 2)
    if isinstance(exc, MemoryError):
        return "error: out of memory; reduce the problem size (trials, n, grid) and rerun", 2
    raise TypeError(f"not a one-line failure: {type(exc).__name__}") from exc
