"""Declared dependencies of a figure on the other packages' public APIs.

A figure asks for the names it needs with :func:`require`; if a package does
not provide them (yet), the pipeline reports the figure as not checkable
instead of failing somewhere deep inside a computation.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from vistalab.theory import VistaLabError

__all__ = ["MissingDependency", "require"]


class MissingDependency(VistaLabError, ImportError):
    """A public name a figure needs is not provided by its package."""

    def __init__(self, module: str, names: list[str], message: str = "") -> None:
        self.module = module
        self.names = names
        super().__init__(
            message or f"{module} does not provide {', '.join(names)}; install or update the "
            f"package that defines it"
        )


def require(module: str, *names: str) -> ModuleType:
    """Import ``module`` and check that it exports every one of ``names``."""
    from vistalab.theory._validate import as_text

    as_text("module", module, fix="pass a first-party package name such as 'theory'")
    for name in names:
        as_text("names", name, fix="pass the public names the figure needs")
    try:
        mod = importlib.import_module(f"vistalab.{module}")
    except ImportError as exc:
        raise MissingDependency(module, list(names) or [module]) from exc
    missing = [n for n in names if not hasattr(mod, n)]
    if missing:
        raise MissingDependency(module, missing)
    return mod
