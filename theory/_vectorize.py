"""Broadcasting for the scalar closed forms, the way scipy.stats does it:
array in, array out; scalars in, a Python float out.

The scalar function stays the one place that validates (its ``_xxx_iv``
helpers) and computes; the wrapper broadcasts the array-like arguments,
calls it once per element and, on a bad element, re-raises the element's
:class:`DomainError` with its index, so the message still names the
parameter, the value, the rule and the fix.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from ._errors import DomainError
from ._validate import _short

__all__ = ["broadcasting", "is_array_like"]

F = TypeVar("F", bound=Callable[..., Any])

# A broadcast larger than this is refused before any work starts.
MAX_BROADCAST = 10**7


def is_array_like(value: Any) -> bool:
    """ndarrays of any dimension >= 1, lists and tuples (not strings)."""
    if isinstance(value, np.ndarray):
        return value.ndim > 0
    return isinstance(value, (list, tuple))


def broadcasting(fn: F) -> F:
    """Let ``fn`` (a scalar closed form returning a float) take arrays.

    Every argument that is an ndarray, list or tuple is broadcast against the
    others with numpy's rules; the result is a float ndarray of the broadcast
    shape. Keyword-only arguments are passed through unchanged.
    """
    sig = inspect.signature(fn)
    positional = [
        p.name for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # let Python name the missing/extra argument
        names = [n for n in positional if n in bound.arguments
                 and is_array_like(bound.arguments[n])]
        if not names:
            return fn(*args, **kwargs)
        # strings or objects inside an array reach the scalar function's checks,
        # which name the parameter; the index of the element is added below
        arrays = []
        for name in names:
            try:
                arrays.append(np.asarray(bound.arguments[name]))
            except ValueError:
                raise DomainError(name, bound.arguments[name],
                                  "must be a number or a rectangular array of numbers",
                                  "pass equal-length rows") from None
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            shapes = "; ".join(f"{n} has shape {a.shape}"
                               for n, a in zip(names, arrays, strict=True))
            raise DomainError(names[-1], _short(bound.arguments[names[-1]]),
                              "must have a shape that broadcasts against the other array "
                              "arguments", "give arrays of numpy-compatible shapes (equal "
                              "lengths, or length 1)", context=shapes) from None
        size = int(np.prod(shape, dtype=np.int64))
        if size > MAX_BROADCAST:
            raise DomainError(names[0], shape, f"must broadcast to at most {MAX_BROADCAST:,} "
                              "elements", "split the grid into smaller calls")
        views = [np.broadcast_to(a, shape) for a in arrays]
        out = np.empty(shape, dtype=float)
        call = dict(bound.arguments)
        for idx in np.ndindex(shape):
            for name, view in zip(names, views, strict=True):
                call[name] = view[idx].item() if hasattr(view[idx], "item") else view[idx]
            try:
                out[idx] = fn(**call)
            except DomainError as exc:
                where = f"element {idx if len(idx) != 1 else idx[0]} of the broadcast"
                context = f"{exc.context}, {where}" if exc.context else where
                raise DomainError(exc.parameter, exc.value, exc.rule, exc.fix,
                                  context=context) from None
        return out

    wrapper.__doc__ = _with_broadcast_note(fn.__doc__ or "")
    return cast(F, wrapper)


_BROADCAST_NOTE = ("    Array arguments broadcast (numpy rules) and give a float ndarray;\n"
                   "    scalars give a float.\n")


def _with_broadcast_note(doc: str) -> str:
    """``doc`` with the broadcasting sentence closing its extended summary, before the
    first numpydoc section, so the sections stay well formed."""
    first = len(doc)
    for header in ("Parameters", "Returns", "Raises", "Notes", "Examples", "See Also"):
        at = doc.find(f"\n    {header}\n    {'-' * len(header)}")
        if at != -1:
            first = min(first, at)
    if first == len(doc):
        return doc + "\n" + _BROADCAST_NOTE
    return doc[:first].rstrip() + "\n\n" + _BROADCAST_NOTE + doc[first:]
