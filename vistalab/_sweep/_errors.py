"""Errors raised while reading a sweep config: each names the file, where in
it the problem is, the rule, and (for names) the closest valid one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vistalab.theory import DomainError, UnknownNameError

__all__ = ["SweepConfigError", "UnknownSweepNameError", "SweepStoreError"]


class SweepConfigError(DomainError):
    """A value in a sweep config breaks a rule.

    Attributes
    ----------
    file : str
        The config file (or ``"<config>"`` for an in-memory mapping).
    where : str
        Where in the file: ``"top level"``, ``"[params]"``, ``"[[grid]] block 2"``.
    """

    def __init__(
        self,
        parameter: str,
        value: Any,
        rule: str,
        fix: str = "",
        *,
        file: str,
        where: str,
        context: str = "",
    ) -> None:
        self.file = file
        self.where = where
        loc = f"in {file}, {where}"
        super().__init__(parameter, value, rule, fix, context=f"{loc}; {context}" if context
                         else loc)


class UnknownSweepNameError(UnknownNameError):
    """An unknown key, experiment or choice in a sweep config, with a close match."""

    def __init__(
        self, kind: str, name: str, known: Iterable[str], *, file: str, where: str, fix: str = ""
    ) -> None:
        super().__init__(kind, name, known)
        self.file = file
        self.where = where
        head = f"Unknown {kind} {name!r} in {file}, {where}."
        self.message = head + self.message[len(f"Unknown {kind} {name!r}."):]
        if fix:
            self.message += f" {fix}"
        self.args = (self.message,)


class SweepStoreError(DomainError):
    """The output folder cannot be used for this sweep (different config, locked, foreign files)."""
