"""Errors raised while reading a sweep config: each names the file, where in
it the problem is, the rule, and (for names) the closest valid one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vistalab.theory import DomainError, UnknownNameError, VistaLabError

__all__ = [
    "SweepConfigError", "SweepConfigErrors", "UnknownSweepNameError", "SweepStoreError",
    "SweepCellError",
]


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


class SweepConfigErrors(SweepConfigError):
    """Several problems in one sweep config, all reported at once.

    Attributes
    ----------
    errors : tuple of Exception
        Each problem (a :class:`SweepConfigError` or :class:`UnknownSweepNameError`),
        in the order found.
    """

    def __init__(self, errors: Iterable[Exception], *, file: str) -> None:
        # checked before anything iterates: a string would be taken one character at
        # a time (a 5 MB string made 5 million "problems" and a minutes-long message)
        if isinstance(errors, (str, bytes, bytearray)) or not isinstance(errors, Iterable):
            raise DomainError("errors", errors, "must be an iterable of exceptions "
                              "(the problems found)", "pass e.g. a list of SweepConfigError")
        self.errors = tuple(errors)
        if not self.errors or not all(isinstance(e, Exception) for e in self.errors):
            raise DomainError("errors", errors, "must hold at least one exception, and "
                              "only exceptions", "pass e.g. a list of SweepConfigError")
        if not isinstance(file, str):
            raise DomainError("file", file, "must be a str (the config file's name)",
                              "pass e.g. '<config>'")
        first = self.errors[0]
        super().__init__(getattr(first, "parameter", "config"), getattr(first, "value", None),
                         getattr(first, "rule", str(first)), getattr(first, "fix", ""),
                         file=file, where=getattr(first, "where", "top level"))
        listed = " ".join(f"({i}) {' '.join(str(e).split())}"
                          for i, e in enumerate(self.errors, start=1))
        self.message = f"{len(self.errors)} problems in {file}: {listed}"
        self.args = (self.message,)

    def __str__(self) -> str:
        return self.message


class SweepCellError(VistaLabError, RuntimeError):
    """Some cells of a sweep raised; the others are stored and a rerun retries these.

    Attributes
    ----------
    failures : tuple
        One :class:`CellFailure` per failed cell.
    summary : SweepSummary
        What the run did.
    """

    def __init__(self, failures: Any, summary: Any) -> None:
        if isinstance(failures, (str, bytes)) or not isinstance(failures, Iterable):
            raise DomainError("failures", failures, "must be an iterable of CellFailure",
                              "pass the failed cells")
        if not isinstance(getattr(summary, "n_cells", None), int):
            raise DomainError("summary", summary, "must be a SweepSummary (with n_cells)",
                              "pass the run's summary")
        self.failures = tuple(failures)
        self.summary = summary
        first = self.failures[0] if self.failures else None
        msg = (f"{len(self.failures)} of {summary.n_cells} cells failed"
               + (f"; first: cell {first.params} raised {first.error}" if first else "")
               + "; the other cells are stored: fix the cause and run again to compute only "
                 "the failed ones")
        super().__init__(msg)
