"""Exception hierarchy shared by theory/, sims/ and the application layer.

One root (:class:`VistaLabError`); each subclass also inherits the matching
builtin so callers can catch ``ValueError``/``KeyError`` as usual.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = ["VistaLabError", "DomainError", "UnknownNameError", "suggest"]


class VistaLabError(Exception):
    """Root of every error raised on purpose by vista-lab."""


class DomainError(VistaLabError, ValueError):
    """An argument is outside the domain of the function that received it.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter.
    value : Any
        The value received.
    rule : str
        The rule it breaks, phrased as "must be ...".
    fix : str
        What to do instead.
    """

    def __init__(
        self,
        parameter: str,
        value: Any,
        rule: str,
        fix: str = "",
        *,
        context: str = "",
    ) -> None:
        self.parameter = parameter
        self.value = value
        self.rule = rule
        self.fix = fix
        self.context = context
        got = f"{parameter}={value!r}"
        if context:
            got += f", {context}"
        msg = f"`{parameter}` {rule} (got {got})"
        if fix:
            msg += f"; {fix}"
        super().__init__(msg)


class UnknownNameError(VistaLabError, KeyError):
    """A name (interface, strategy, subcommand, key...) is not registered."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        hint = suggest(name, self.known)
        msg = f"Unknown {kind} {name!r}."
        if hint:
            msg += f" Did you mean {hint!r}?"
        msg += f" Choose one of: {', '.join(self.known)}."
        self.message = msg
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


def suggest(name: str, known: Iterable[str]) -> str | None:
    """Closest registered name to ``name``, or None if nothing is close."""
    if isinstance(known, (str, bytes)) or not isinstance(known, Iterable):
        raise DomainError("known", known, "must be an iterable of names",
                          "pass e.g. a list or the keys of a registry")
    names = [str(k) for k in known]
    text = str(name)
    # a name that differs only in case ('--n' for '--N') is the best hint
    folded = [k for k in names if k.lower() == text.lower()]
    if folded:
        return folded[0]
    matches = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    return matches[0] if matches else None
