"""Argument checks used at the door of every public function (``_xxx_iv``)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ._errors import DomainError

__all__ = ["as_int", "as_real", "as_probability"]


def as_int(
    name: str,
    value: Any,
    *,
    lo: int | None = None,
    hi: int | None = None,
    context: str = "",
    rule: str | None = None,
    fix: str = "",
) -> int:
    """Return ``value`` as an int, checking ``lo <= value <= hi``.

    Integral floats (``4.0``) are accepted; ``4.5``, booleans, NaN and
    strings are rejected with a :class:`DomainError`.
    """
    bounds = _bounds_text(lo, hi)
    the_rule = rule or f"must be an integer{bounds}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DomainError(name, value, the_rule, fix or "pass a whole number", context=context)
    if isinstance(value, numbers.Integral):
        iv = int(value)
    else:
        fv = float(value)
        if not math.isfinite(fv) or fv != math.floor(fv):
            raise DomainError(name, value, the_rule, fix or "pass a whole number", context=context)
        iv = int(fv)
    if (lo is not None and iv < lo) or (hi is not None and iv > hi):
        raise DomainError(name, value, the_rule, fix, context=context)
    return iv


def as_real(
    name: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    context: str = "",
    rule: str | None = None,
    fix: str = "",
) -> float:
    """Return ``value`` as a finite float within the stated interval."""
    lo_s = "" if lo is None else f"{lo:g} {'<' if lo_open else '<='} "
    hi_s = "" if hi is None else f" {'<' if hi_open else '<='} {hi:g}"
    bounds = f" with {lo_s}{name}{hi_s}" if (lo is not None or hi is not None) else ""
    the_rule = rule or f"must be a finite real number{bounds}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DomainError(name, value, the_rule, fix or "pass a number", context=context)
    fv = float(value)
    if not math.isfinite(fv):
        raise DomainError(name, value, the_rule, fix or "pass a finite number", context=context)
    if lo is not None and (fv < lo or (lo_open and fv == lo)):
        raise DomainError(name, value, the_rule, fix, context=context)
    if hi is not None and (fv > hi or (hi_open and fv == hi)):
        raise DomainError(name, value, the_rule, fix, context=context)
    return fv


def as_probability(name: str, value: Any, *, open_ends: bool = True, context: str = "") -> float:
    """A probability-like parameter in (0, 1) (or [0, 1] when ``open_ends`` is False)."""
    return as_real(
        name, value, lo=0.0, hi=1.0, lo_open=open_ends, hi_open=open_ends, context=context
    )


def _bounds_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f" with {lo} <= value <= {hi}"
    if lo is not None:
        return f" >= {lo}"
    if hi is not None:
        return f" <= {hi}"
    return ""
