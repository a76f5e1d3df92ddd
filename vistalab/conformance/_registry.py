"""Managers the command line knows by name, and the resolution of
``module:function`` specs. The one place named managers are registered is
:func:`_load_named`: a module that ships named managers is imported there and
adds ``name -> loader`` entries to :data:`NAMED_MANAGERS` (a loader imports
its package lazily and returns the manager)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from vistalab._core import DomainError, UnknownNameError

__all__ = ["NAMED_MANAGERS", "resolve_manager"]

#: ``name -> loader()``: each loader returns a manager (a trimmer or an adapter
#: factory). Filled by the modules that ship named managers.
NAMED_MANAGERS: dict[str, Callable[[], Any]] = {}


def _load_named() -> None:
    """Fill :data:`NAMED_MANAGERS` (idempotent)."""
    from ._workspace import WorkspaceAdapter

    NAMED_MANAGERS.setdefault("vista-lab-workspace", lambda: WorkspaceAdapter)
    # the study's peers; loading one that is not installed raises
    # PeerNotInstalledError naming its pip command
    from ._peers import PEERS

    for peer in PEERS:
        NAMED_MANAGERS.setdefault(peer.name, peer.load)


def resolve_manager(spec: str) -> Any:
    """The manager ``spec`` names.

    Parameters
    ----------
    spec : str
        A name in :data:`NAMED_MANAGERS`, or ``module:function``
        (``module:Class.attr`` works too).

    Returns
    -------
    callable
        The manager (a trimmer or an adapter factory).

    Raises
    ------
    DomainError
        If the module does not import or has no such attribute.
    UnknownNameError
        If ``spec`` is neither a registered name nor ``module:function``.
    """
    _load_named()
    if not isinstance(spec, str) or not spec:
        raise DomainError("MANAGER", spec, "must be a name or module:function",
                          "pass e.g. mypkg.trim:trim_messages")
    if ":" not in spec:
        if spec in NAMED_MANAGERS:
            return NAMED_MANAGERS[spec]()
        raise UnknownNameError("manager (or give module:function)", spec, NAMED_MANAGERS)
    mod_name, _, attr = spec.partition(":")
    from ._managers import raised

    try:
        obj: Any = importlib.import_module(mod_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure to import is the user's module
        raise DomainError("MANAGER", spec,
                          f"names a module that does not import ({raised(exc)[:200]})",
                          "check the module path and that it imports on its own") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part) if part else _MISSING
        except KeyboardInterrupt:
            raise
        except AttributeError:
            obj = _MISSING
        except BaseException as exc:  # noqa: BLE001 - a hostile module __getattr__
            raise DomainError("MANAGER", spec, f"raised {raised(exc)[:160]} when its "
                              f"attribute {part!r} was read", "check the function's name"
                              ) from None
        if obj is _MISSING:
            raise DomainError("MANAGER", spec, f"names no attribute {attr!r} of module "
                              f"{mod_name!r}", "check the function's name") from None
    return obj


_MISSING = object()
