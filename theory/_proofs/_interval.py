"""Rigorous interval branch and bound (python-flint ``arb`` balls).

``certify_positive`` proves ``f > 0`` (or ``>= 0``) on a box by splitting it
until each piece has a certified enclosure, or finds a point where ``f`` is
certainly negative, or gives up after a stated number of boxes (a failure).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from vistalab._core import MissingExtraError

from ._registry import Outcome

try:
    from flint import arb, ctx, fmpq
except ImportError as exc:  # python-flint is the `verify` extra
    raise MissingExtraError("flint", "verify",
                            "theory's interval-arithmetic proof steps (vista-lab verify)") from exc

__all__ = ["ball", "xlogx", "certify_positive", "Box", "IntervalOutcome"]

Box = Sequence[tuple[Fraction, Fraction]]
ArbFn = Callable[[Sequence[arb]], arb]
GradFn = Callable[[Sequence[arb]], Sequence[arb]]


@dataclass(frozen=True)
class IntervalOutcome(Outcome):
    """An :class:`Outcome` with the branch-and-bound statistics.

    Attributes
    ----------
    boxes : int
        Boxes processed.
    min_lower : float
        Smallest certified lower bound of f over the certified boxes
        (NaN when nothing was certified).
    """

    boxes: int = 0
    min_lower: float = math.nan


def ball(lo: Fraction, hi: Fraction) -> arb:
    """An arb enclosure of the real interval [lo, hi] (exact rationals)."""
    a = arb(fmpq(lo.numerator, lo.denominator))
    if lo == hi:
        return a
    return arb.union(a, arb(fmpq(hi.numerator, hi.denominator)))


def xlogx(x: arb) -> arb:
    """Enclosure of t*ln(t) over the ball ``x``, defined at 0 (value 0).

    arb's log is undefined on balls touching 0, so near 0 we use that
    t ln t is decreasing on [0, 1/e] with range [b ln b, 0] there.
    """
    if x > 0:
        return x * x.log()
    hi = x.upper()
    if hi < 0:
        raise ValueError("xlogx of a negative ball")
    if hi <= 0:
        return arb(0)
    if hi < arb(-1).exp():
        return arb.union(hi * hi.log(), arb(0))
    # On [0, b] with b > 1/e the minimum is -1/e and the maximum max(0, b ln b).
    top = hi * hi.log()
    return arb.union(arb.union(-arb(-1).exp(), arb(0)), top)


def certify_positive(
    f: ArbFn,
    box: Box,
    *,
    grad: GradFn | None = None,
    strict: bool = True,
    max_boxes: int = 20_000,
    prec: int = 96,
    label: str = "",
) -> IntervalOutcome:
    """Certify ``f(x) > 0`` (``>= 0`` if not strict) for every x in ``box``.

    Parameters
    ----------
    f : callable
        Maps a list of arb balls to an arb enclosure of f over them.
    box : sequence of (lo, hi) Fractions
        The domain, one closed interval per coordinate.
    grad : callable, optional
        Enclosures of the partial derivatives over a box; enables the
        mean-value form ``f(c) + sum_i g_i(X)(X_i - c_i)``, which is much
        tighter near a minimum.
    strict : bool
        Whether ``> 0`` (default) or ``>= 0`` is certified.
    max_boxes : int
        Give up (fail) after processing this many boxes.
    prec : int
        Working precision in bits.

    Returns
    -------
    IntervalOutcome
        ok with the number of boxes, or not ok with a counterexample box or
        "budget exhausted".
    """
    old = ctx.prec
    ctx.prec = prec
    try:
        exact = [(Fraction(lo), Fraction(hi)) for lo, hi in box]
        return _bnb(f, exact, grad, strict, max_boxes, label)
    finally:
        ctx.prec = old


def _good(v: arb, strict: bool) -> bool:
    if not v.is_finite():
        return False
    return bool(v > 0) if strict else bool(v >= 0)


def _bnb(
    f: ArbFn,
    box: list[tuple[Fraction, Fraction]],
    grad: GradFn | None,
    strict: bool,
    max_boxes: int,
    label: str,
) -> IntervalOutcome:
    # Breadth first: big boxes (and so any counterexample far from a tight
    # spot) are examined before the search digs into one corner.
    stack = deque([box])
    done = 0
    min_lower: float | None = None
    where = f"{label}: " if label else ""
    while stack:
        if done >= max_boxes:
            return IntervalOutcome(
                False, f"{where}undecided after {max_boxes} boxes ({len(stack)} left)", done
            )
        b = stack.popleft()
        done += 1
        xs = [ball(lo, hi) for lo, hi in b]
        enc = f(xs)
        certified = _good(enc, strict)
        if not certified and grad is not None:
            mids = [(lo + hi) / 2 for lo, hi in b]
            fc = f([ball(m, m) for m in mids])
            gs = grad(xs)
            if fc.is_finite() and all(g.is_finite() for g in gs):
                mvf = fc + sum(
                    (g * (x - ball(m, m)) for g, x, m in zip(gs, xs, mids, strict=True)),
                    arb(0),
                )
                enc = mvf
                certified = _good(mvf, strict)
        if certified:
            lo_f = float(enc.lower())
            min_lower = lo_f if min_lower is None else min(min_lower, lo_f)
            continue
        # A certain violation at the box midpoint is a counterexample.
        mids = [(lo + hi) / 2 for lo, hi in b]
        fm = f([ball(m, m) for m in mids])
        if fm.is_finite() and (fm < 0 if not strict else fm <= 0):
            pt = ", ".join(f"{float(m):.6g}" for m in mids)
            return IntervalOutcome(
                False, f"{where}counterexample at ({pt}): f = {float(fm.mid()):.6g}", done
            )
        widths = [hi - lo for lo, hi in b]
        i = max(range(len(b)), key=lambda j: widths[j])
        lo, hi = b[i]
        if widths[i] == 0:
            return IntervalOutcome(False, f"{where}cannot decide at a point box {b}", done)
        mid = (lo + hi) / 2
        stack.append([*b[:i], (lo, mid), *b[i + 1 :]])
        stack.append([*b[:i], (mid, hi), *b[i + 1 :]])
    rel = ">" if strict else ">="
    low = math.nan if min_lower is None else min_lower
    return IntervalOutcome(
        True,
        f"{where}f {rel} 0 on the box in {done} certified boxes (smallest lower bound {low:.3g})",
        done,
        low,
    )
