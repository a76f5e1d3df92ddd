"""The error a figure raises when an optional third-party package it needs is
not installed (first-party packages are imported statically, never by name)."""

from __future__ import annotations

from vistalab._core import MissingExtraError

__all__ = ["MissingDependency"]

#: Kept under its old name for code written against it.
MissingDependency = MissingExtraError
