"""Read-only messages: the dicts a rendering returns are shared with the
engine's caches, so they refuse in-place edits (copies are ordinary dicts)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "freeze", "freeze_messages", "thaw"]


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError(
        "rendered messages are read-only (they are shared with the workspace's cache); "
        "edit a copy: dict(message), copy.deepcopy(message) or Rendering.as_request()"
    )


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses mutation; JSON-serialises, compares and copies as a dict
    (``copy.copy``, ``copy.deepcopy`` and pickling give plain dicts)."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A list that refuses mutation; otherwise a list (copies are plain lists)."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _refuse
    clear = sort = reverse = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def freeze(obj: Any) -> Any:
    """``obj`` with every dict and list inside made read-only (str/int/None as is)."""
    if isinstance(obj, (FrozenDict, FrozenList)):
        return obj
    if isinstance(obj, Mapping):
        return FrozenDict({k: freeze(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return FrozenList(freeze(v) for v in obj)
    return obj


def freeze_messages(msgs: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    """A position's messages, read-only."""
    return tuple(freeze(m) for m in msgs)


def thaw(obj: Any) -> Any:
    """``obj`` as ordinary data: every mapping a new dict and every list or
    tuple a new list (the inverse of :func:`freeze`; str/int/None as is)."""
    if isinstance(obj, Mapping):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v) for v in obj]
    return obj
