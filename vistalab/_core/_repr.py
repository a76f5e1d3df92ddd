"""The one bounded ``repr`` of vista-lab's error messages (DESIGN rule 6): a value a
user passed is quoted in a message at a bounded length and depth, so a deeply
nested, huge or self-referencing argument can never make the message itself fail.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["short_repr", "MAX_REPR"]

#: Longest quoted value in an error message (characters).
MAX_REPR = 160


class _Bounded(reprlib.Repr):
    """``reprlib`` limits (3 levels, a few items, short strings); any other object's
    own ``repr`` is tried once and replaced by its type name if it fails."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxtuple = self.maxlist = self.maxset = self.maxfrozenset = 6
        self.maxdeque = self.maxarray = 6
        self.maxdict = 4
        self.maxstring = 100
        self.maxlong = 60
        self.maxother = 100

    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:  # more digits than int->str conversion allows
            return f"<int of {x.bit_length()} bits>"

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except BaseException as exc:  # noqa: BLE001 - the message must not fail
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return f"<{type(x).__name__} object>"
        if len(text) > self.maxother:
            keep = max(0, (self.maxother - 3) // 2)
            text = text[:keep] + "..." + text[len(text) - keep:]
        return text


_BOUNDED = _Bounded()


def short_repr(value: Any, limit: int = MAX_REPR) -> str:
    """``repr(value)`` bounded in depth (3 levels), items and length (``limit``).

    Never raises: an object whose ``repr`` fails (or recurses) is shown by its type.

    >>> short_repr([[[[[1]]]]])
    '[[[[...]]]]'
    >>> short_repr("x" * 500)[:12]
    "'xxxxxxxxxxx"
    """
    try:
        text = _BOUNDED.repr(value)
    except BaseException as exc:  # noqa: BLE001 - the message must not fail
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
