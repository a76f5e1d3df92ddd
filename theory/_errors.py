"""The error root and did-you-mean helper of theory/ (re-exported from the one
core, :mod:`vistalab._core`; kept so ``theory._errors`` imports keep working)."""

from __future__ import annotations

from vistalab._core import DomainError, UnknownNameError, VistaLabError, suggest

__all__ = ["VistaLabError", "DomainError", "UnknownNameError", "suggest"]
