"""Exact helpers for checking printed numbers: rounding intervals, counts behind
percentages, and interval arithmetic over rounded inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from itertools import product
from typing import Any

__all__ = [
    "decimals_of",
    "half_ulp",
    "rounds_to",
    "percent_counts",
    "fraction_counts",
    "interval_of",
    "eval_interval",
    "fmt",
]


def decimals_of(printed: float | int) -> int:
    """Number of decimals the value was printed with (``22.7`` -> 1, ``1.00`` read from TOML
    as ``1.0`` -> 1: pass ``decimals`` explicitly where trailing zeros matter)."""
    exp = Decimal(repr(printed)).as_tuple().exponent
    return max(0, -int(exp)) if isinstance(exp, int) else 0


def half_ulp(decimals: int) -> Fraction:
    """Half a unit in the last printed place: the rounding tolerance."""
    return Fraction(1, 2 * 10**decimals)


def _frac(x: float | int | Fraction) -> Fraction:
    # Printed decimals are exact as strings; go through repr to avoid binary noise.
    if isinstance(x, Fraction):
        return x
    return Fraction(Decimal(repr(x)))


def rounds_to(exact: float | Fraction, printed: float, decimals: int) -> bool:
    """Whether ``exact`` rounds to ``printed`` at ``decimals`` places (ties either way,
    since the paper's rounding rule is not stated)."""
    return abs(_frac(exact) - _frac(printed)) <= half_ulp(decimals)


def percent_counts(percent: float, n: int, decimals: int = 1) -> list[int]:
    """Integers c in [0, n] with 100*c/n rounding to ``percent`` at ``decimals`` places."""
    p = _frac(percent)
    tol = half_ulp(decimals)
    return [c for c in range(n + 1) if abs(Fraction(100 * c, n) - p) <= tol]


def fraction_counts(value: float, n: int, decimals: int = 3) -> list[int]:
    """Integers c in [0, n] with c/n rounding to ``value`` at ``decimals`` places."""
    v = _frac(value)
    tol = half_ulp(decimals)
    return [c for c in range(n + 1) if abs(Fraction(c, n) - v) <= tol]


def interval_of(printed: float, decimals: int) -> tuple[Fraction, Fraction]:
    """The interval of true values that print as ``printed``."""
    p = _frac(printed)
    h = half_ulp(decimals)
    return p - h, p + h


def eval_interval(
    fn: Callable[..., Fraction], intervals: Sequence[tuple[Fraction, Fraction]]
) -> tuple[Fraction, Fraction]:
    """Range of ``fn`` over a box, for ``fn`` monotone in each argument separately (then
    the extremes are at the corners). Exact rational arithmetic."""
    values = [fn(*corner) for corner in product(*intervals)]
    return min(values), max(values)


def fmt(x: Any, digits: int = 4) -> str:
    """Compact number formatting for detail strings."""
    if isinstance(x, Fraction):
        x = float(x)
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)
