"""Option parsing shared by the subcommands: numbers are parsed here (not by
argparse's ``type=``) so a bad value is a :class:`theory.DomainError` naming
the option, the value, the rule and a fix, printed as one line with exit 2."""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Iterator, Mapping
from typing import Any

from vistalab._core import DomainError

__all__ = ["parse_int", "parse_real", "add_engine_group", "refuse_engine_only", "given",
           "store_dir", "api_names", "cli_wording"]


def parse_int(name: str, text: Any, *, lo: int | None = None, example: int | None = None
              ) -> int:
    """``text`` as an int (``lo`` is an optional lower bound, ``example`` the value the
    fix suggests)."""
    if example is None:
        example = max(lo, 4) if lo is not None else 4
    try:
        value = int(str(text).strip())
    except ValueError:
        raise DomainError(name, text, "must be an integer",
                          f"pass a whole number, e.g. --{name} {example}") from None
    if lo is not None and value < lo:
        raise DomainError(name, text, f"must be >= {lo}",
                          f"pass a whole number >= {lo}, e.g. --{name} {example}")
    return value


def parse_real(name: str, text: Any) -> float:
    """``text`` as a finite float."""
    try:
        value = float(str(text).strip())
    except ValueError:
        raise DomainError(name, text, "must be a number", f"pass e.g. --{name} 1.5") from None
    if not math.isfinite(value):
        raise DomainError(name, text, "must be a finite number", f"pass e.g. --{name} 1.5")
    return value


def add_engine_group(parser: argparse.ArgumentParser, description: str) -> Any:
    """The ``--engine`` option group shared by ``makeroom`` and ``recovery``; returns
    the group so a command can add its own engine-only options."""
    engine = parser.add_argument_group("engine mode", description)
    engine.add_argument("--engine", action="store_true", help="use the workspace engine")
    engine.add_argument("--store", default=None, metavar="KIND",
                        help="engine payload store: memory or disk (default memory)")
    engine.add_argument("--store-dir", dest="store_dir", default=None, metavar="DIR",
                        help="engine disk store folder (default: a temporary folder)")
    engine.add_argument("--tokenizer", default=None, metavar="NAME",
                        help="engine tokenizer: cl100k_base or approx (default cl100k_base)")
    return engine


def refuse_engine_only(args: argparse.Namespace, names: tuple[str, ...]) -> None:
    """Engine-only options given without ``--engine`` are an error, not silently ignored."""
    for name in names:
        if getattr(args, name) is not None:
            raise DomainError(name.replace("_", "-"), getattr(args, name),
                              "is only used with --engine", "add --engine or drop the option")


def given(value: Any, default: str) -> Any:
    """The option's text, or ``default`` when the option was not given. An
    empty string was given (``--trials ''``) and is parsed, hence refused."""
    return default if value is None else value


def store_dir(value: Any) -> str | None:
    """``--store-dir`` checked at the door as a folder to write payloads into."""
    from .._paths import output_dir

    return None if value is None else str(output_dir("--store-dir", value))


@contextlib.contextmanager
def api_names(**options: str) -> Iterator[None]:
    """Re-raise a library :class:`DomainError` about API parameter ``name`` as
    one about the command-line option that supplied it (``l_tokens`` ->
    ``--block-tokens``), keeping value, rule and fix."""
    with cli_wording(options):
        yield


@contextlib.contextmanager
def cli_wording(
    options: Mapping[str, str], phrases: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Re-raise a library :class:`DomainError` in the command line's words.

    The library names its Python parameters and fixes (``out``, ``fresh=True``);
    here ``options`` maps a parameter to the option that supplied it
    (``{"out": "--out"}``) and ``phrases`` rewrites Python spellings in the
    rule and fix (``{"fresh=True": "--fresh"}``). The error keeps its class,
    value and context; an error that needs no rewording propagates unchanged.
    """
    try:
        yield
    except DomainError as exc:
        reworded = _reword(exc, options, phrases or {})
        if reworded is None:
            raise
        raise reworded from None


def _reword(
    exc: DomainError, options: Mapping[str, str], phrases: Mapping[str, str]
) -> DomainError | None:
    if hasattr(exc, "errors"):  # a list of config problems: its parameters are config keys
        return None

    def say(text: str) -> str:
        for python, cli in phrases.items():
            text = text.replace(python, cli)
        return text

    option = options.get(exc.parameter, exc.parameter)
    rule, fix = say(exc.rule), say(exc.fix)
    if (option, rule, fix) == (exc.parameter, exc.rule, exc.fix):
        return None
    new = type(exc).__new__(type(exc))  # copy.copy would call cls(message)
    new.__dict__.update(exc.__dict__)
    DomainError.__init__(new, option, exc.value, rule, fix, context=exc.context)
    return new
