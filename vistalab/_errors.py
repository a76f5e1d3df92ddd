"""Errors of the command-line layer."""

from __future__ import annotations

from vistalab._core._oneline import UsageError

__all__ = ["CliUsageError"]


class CliUsageError(UsageError):
    """The command line itself is malformed (unknown subcommand, missing option...)."""
