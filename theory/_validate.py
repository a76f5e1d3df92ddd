"""Argument checks used at the door of every public function (``_xxx_iv``)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._errors import DomainError

__all__ = [
    "MAX_SIZE",
    "as_int",
    "int_text",
    "as_real",
    "as_probability",
    "as_size",
    "as_text",
    "as_name_list",
    "refuse_array",
]

# Every size (n, N, k, kappa, M, ...) is bounded at the door, so no closed form
# meets an OverflowError: 1e308 is an integral float and would otherwise pass as
# a 309-digit integer whose ratios no longer fit in a float. Exact integer
# arithmetic (the frontier, first-order asymptotics at n = 1e80) stays allowed.
MAX_SIZE = 10**300


def _type_fix(name: str, value: Any, wanted: str) -> str:
    """The fix for a value of the wrong type: what to pass instead, and for text
    that spells a number, that number (``pass a whole number (an int, not a str),
    e.g. n=64``)."""
    kind = "bool" if isinstance(value, bool) else type(value).__name__
    text = f"pass {wanted}, not a {kind})"
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return text
        if math.isfinite(number):
            shown = int(number) if number == math.floor(number) else number
            text += f", e.g. {name}={shown}"
    return text


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
    strings are rejected with a :class:`DomainError`. A float equal to
    ``float(hi)`` is read as ``hi`` (``1e300`` is ``10**300``, the bound as
    messages print it, although ``int(1e300) > 10**300``).
    """
    bounds = _bounds_text(lo, hi)
    the_rule = rule or f"must be an integer{bounds}"
    value = refuse_array(name, value, context=context)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        # The hint is about the type: the caller's ``fix`` explains the range.
        raise DomainError(name, value, the_rule, _type_fix(name, value, "a whole number (an int"),
                          context=context)
    if isinstance(value, numbers.Integral):
        iv = int(value)
    else:
        fv = float(value)
        if not math.isfinite(fv) or fv != math.floor(fv):
            raise DomainError(name, value, the_rule, fix or "pass a whole number", context=context)
        iv = int(fv)
        if hi is not None and iv > hi and fv == float(hi):
            # the float nearest the bound (1e300 for 10**300, as messages print
            # it) stands for the bound: int(1e300) exceeds 10**300 by rounding
            iv = hi
    if hi == MAX_SIZE and iv > hi:
        raise DomainError(name, value, "must be at most 1e300",
                          "beyond that the closed forms' ratios overflow a float",
                          context=context)
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
    value = refuse_array(name, value, context=context)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DomainError(name, value, the_rule, _type_fix(name, value, "a number (a float"),
                          context=context)
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


def as_size(
    name: str,
    value: Any,
    *,
    lo: int = 1,
    context: str = "",
    rule: str | None = None,
    fix: str = "",
) -> int:
    """An integer size with ``lo <= value <= MAX_SIZE`` (1e300)."""
    return as_int(
        name, value, lo=lo, hi=MAX_SIZE, context=context,
        rule=rule or f"must be an integer with {lo} <= {name} <= 1e300",
        fix=fix or "beyond that the closed forms' ratios overflow a float",
    )


def refuse_array(name: str, value: Any, *, context: str = "") -> Any:
    """``value`` itself, or the scalar inside a 0-d array; an array, list or
    tuple is refused with a message saying the function takes one value."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value.item()
        raise DomainError(
            name, _short(value), f"must be a single number, not an array of shape {value.shape}",
            "this function is not vectorised: call it once per value", context=context,
        )
    if isinstance(value, (list, tuple)):
        raise DomainError(
            name, _short(value), f"must be a single number, not a {type(value).__name__}",
            "this function is not vectorised: call it once per value", context=context,
        )
    return value


def as_text(name: str, value: Any, *, allow_empty: bool = False, fix: str = "") -> str:
    """A ``str`` (non-empty unless ``allow_empty``) without NUL characters."""
    if not isinstance(value, str):
        raise DomainError(name, _short(value), "must be a string", fix or "pass text")
    if not value and not allow_empty:
        raise DomainError(name, value, "must be a non-empty string", fix or "pass text")
    if "\0" in value:
        raise DomainError(name, value, "must not contain NUL characters", fix or "remove them")
    return value


def as_name_list(name: str, value: Any, *, fix: str = "") -> tuple[str, ...]:
    """One name (a string) or a sequence of names, as a tuple of strings."""
    if isinstance(value, str):
        return (as_text(name, value, fix=fix),)
    if isinstance(value, (list, tuple)):
        if not value:
            raise DomainError(name, value, "must name at least one variable", fix or "pass 'X'")
        for item in value:
            if not isinstance(item, str) or not item or "\0" in item:
                raise DomainError(name, _short(value), "must be a string or a sequence of "
                                  "non-empty strings", fix or "pass e.g. 'X' or ['X', 'Y']")
        return tuple(value)
    raise DomainError(name, _short(value), "must be a string or a sequence of strings",
                      fix or "pass e.g. 'X' or ['X', 'Y']")


def _short(value: Any) -> Any:
    """The value itself (the error bounds its repr: :func:`vistalab._core.short_repr`)."""
    return value


def _bounds_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f" with {int_text(lo)} <= value <= {int_text(hi)}"
    if lo is not None:
        return f" >= {int_text(lo)}"
    if hi is not None:
        return f" <= {int_text(hi)}"
    return ""


def int_text(value: int, *, digits: int = 15) -> str:
    """An integer bound as a message shows it: in full up to ``digits`` digits,
    else compactly (``10**300`` -> ``1e300``; not a power of ten -> ``~1.2346e20``,
    marked approximate) so one error line stays readable."""
    text = str(abs(int(value)))
    if len(text) <= digits:
        return str(int(value))
    sign = "-" if value < 0 else ""
    head, rest = text[0], text[1:5].rstrip("0")
    exact = not text[5:].strip("0")
    mantissa = head + (f".{rest}" if rest else "")
    return f"{'' if exact else '~'}{sign}{mantissa}e{len(text) - 1}"
