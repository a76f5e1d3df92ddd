"""Rigorous numerics: integrals enclosed by arb ball arithmetic (python-flint).

Every value computed here is a :class:`CertifiedValue`: a midpoint and a
radius that provably bounds the distance to the true value, including the
truncation of infinite ranges (bounded analytically by each caller) and all
floating-point rounding (arb tracks it). Working precision is set with
``flint.ctx.workprec`` inside each call and restored on exit.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vistalab._core import DomainError, PlainRecord, import_optional

__all__ = ["CertifiedValue", "certified", "gauss_expectation", "flint"]


def flint() -> Any:
    """python-flint, imported on first use so that ``import vistalab.theory`` does
    not need it (a missing install raises MissingExtraError naming the extra)."""
    return import_optional("flint", "theory's certified integrals (ball arithmetic)")


@dataclass(frozen=True)
class CertifiedValue(PlainRecord):
    """A real number known to lie in ``[lower, upper]``.

    Attributes
    ----------
    value : float
        Midpoint (nearest double).
    radius : float
        Rigorous bound on ``|true - value|`` (rounded up to a double, and
        including the midpoint's own rounding to a double).
    method : str
        How the enclosure was obtained.
    """

    value: float
    radius: float
    method: str

    @property
    def lower(self) -> float:
        """A double certainly <= the true value."""
        return math.nextafter(self.value - self.radius, -math.inf)

    @property
    def upper(self) -> float:
        """A double certainly >= the true value."""
        return math.nextafter(self.value + self.radius, math.inf)

    def scaled(self, factor: float, method: str | None = None) -> CertifiedValue:
        """``factor * self`` for an exactly representable positive ``factor``
        (the product's rounding is added to the radius).

        Parameters
        ----------
        factor : float
            The positive factor, exactly representable as a double.
        method : str, optional
            The new value's method; default: this one's.

        Returns
        -------
        CertifiedValue
            An enclosure of ``factor`` times the true value.

        Raises
        ------
        DomainError
            ``factor`` is not a positive number exactly representable as a finite
            double, the product overflows a double, or ``method`` is not a str.
        """
        try:
            f = float(factor)
        except (TypeError, ValueError, OverflowError):
            f = math.nan
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real) \
                or not 0.0 < f < math.inf or f != factor:
            raise DomainError("factor", factor, "must be a positive number exactly "
                              "representable as a finite double",
                              "pass a float factor > 0, e.g. 2.0 (the product's rounding "
                              "is then accounted for)")
        if method is not None and not isinstance(method, str):
            raise DomainError("method", method, "must be a str or None",
                              "name how the value was obtained, or omit it to keep "
                              "this one's")
        v = self.value * f
        r = self.radius * f + abs(v) * 2.0**-52
        if not math.isfinite(r):
            raise DomainError("factor", factor, "must keep the enclosure finite (the "
                              "product overflows a double)",
                              "scale by a smaller factor", context=f"value={self.value!r}, "
                              f"radius={self.radius!r}")
        return CertifiedValue(v, math.nextafter(r, math.inf), method or self.method)


def certified(x: Any, method: str, *, extra_radius: float = 0.0) -> CertifiedValue:
    """Convert an arb ball (plus an extra analytic error) to a :class:`CertifiedValue`."""
    arb = flint().arb
    if not x.is_finite():
        raise ArithmeticError(f"enclosure is not finite ({method}): {x}")
    mid = float(x.mid())
    # |true - mid_double| <= |x.mid - mid_double| + rad + extra
    conv = abs(float(x.mid() - arb(mid)) if mid == mid else 0.0)
    r = float(x.rad()) + extra_radius + conv + abs(mid) * 2.0**-52
    return CertifiedValue(mid, math.nextafter(r * (1.0 + 2.0**-40), math.inf), method)


def gauss_expectation(
    fn: Callable[[Any, bool], Any],
    *,
    zmax: float,
    tail: float,
    prec: int,
) -> tuple[Any, float]:
    """``E[fn(Z)]``, ``Z ~ N(0,1)``, as ``(ball over [-zmax, zmax], tail)``.

    ``fn`` is evaluated on complex balls by ``acb.integral`` (it must pass
    ``analytic`` on to any branch-cut function such as ``log``). The caller
    supplies ``tail``, an analytic bound on ``|E[fn(Z); |Z| > zmax]|``.
    """
    fl = flint()
    arb, acb = fl.arb, fl.acb
    with fl.ctx.workprec(prec):
        c = 1 / (2 * arb.pi()).sqrt()

        def integrand(z: Any, analytic: bool) -> Any:
            return c * (-(z * z) / 2).exp() * fn(z, analytic)

        tol = arb(2) ** (-(prec - 10))
        val = acb.integral(integrand, -zmax, zmax, rel_tol=tol, abs_tol=tol)
        return val.real, tail


def gauss_tail_moment_bound(zmax: float, c0: float, c1: float) -> float:
    """Upper bound on ``E[(c0 + c1 |Z|); |Z| > zmax]`` for Z ~ N(0,1):
    ``2 (c0 Q(zmax) + c1 phi(zmax))`` with Q bounded by ``phi(z)/z``."""
    phi = math.exp(-0.5 * zmax * zmax) / math.sqrt(2.0 * math.pi)
    q = phi / zmax
    return math.nextafter(2.0 * (c0 * q + c1 * phi) * (1.0 + 1e-12), math.inf)
