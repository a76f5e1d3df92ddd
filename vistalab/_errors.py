"""Errors of the command-line layer."""

from __future__ import annotations

from vistalab._core import VistaLabError

__all__ = ["CliUsageError"]


class CliUsageError(VistaLabError, ValueError):
    """The command line itself is malformed (unknown subcommand, missing option...)."""
