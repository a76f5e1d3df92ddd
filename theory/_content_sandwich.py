"""Proposition 2's content channel beyond the paper: a certified sandwich
``lower_bound <= I(J*;W) <= product_bound`` and the limit ``I -> a^2/2`` nats.

Derivations (bits = nats / ln 2; ``a = ln(kappa)/sigma``; standardised
observations ``W_i = a 1{J*=i} + N_i``, N_i iid N(0,1)):

**Product bound.** Given J*, the W_i are independent, so
``h(W|J*) = sum_i h(W_i|J*)`` and ``h(W) <= sum_i h(W_i)``; hence
``I(J*;W) <= sum_i I(J*;W_i) = n I(B; aB + N)`` with ``B = 1{J*=i}`` ~
Bernoulli(1/n) (W_i depends on J* only through B). With ``p = 1/n``,
``q = 1 - p`` and the mixture density ``f = p phi(.-a) + q phi``,
``I(B; aB+N) = p KL(N(a,1)||f) + q KL(N(0,1)||f)``, i.e.

    I(B; aB+N) = -E[ p ln(p + q e^{-(a^2/2 + aZ)}) + q ln(q + p e^{aZ - a^2/2}) ],

one Gaussian expectation. ``I(B;aB+N) <= (1/2) ln(1 + a^2 pq) <= a^2 pq/2``
(Gaussian maximises entropy at fixed variance), so the product bound is never
above the ``(1-1/n)`` bound :func:`content_rate_bound_tight`.

**Jensen lower bound.** Condition on J* = 1 (symmetry): the posterior of J* is
the softmax of ``a W_i``, so with ``X = W_1 ~ N(a, 1)`` and
``S = sum_{i>=2} e^{a W_i}`` (independent of X),
``I = ln n + E[a X] - E ln(e^{aX} + S) = ln n + a^2 - E ln(e^{aX} + S)``.
``ln`` is concave and ``E[S | X] = (n-1) e^{a^2/2}`` (lognormal mean), so
``E[ln(e^{aX}+S) | X] <= ln(e^{aX} + (n-1) e^{a^2/2})`` and

    I >= ln n + a^2 - E_{X ~ N(a,1)} ln(e^{aX} + (n-1) e^{a^2/2})
       = a^2/2 + ln(n/(n-1)) - E_{Z ~ N(0,1)} softplus(a^2/2 + aZ - ln(n-1)).

The expectation is over X ~ N(a, 1), the *bulky* block's observation, not
over N(0, 1).

**Limit and rate.** ``softplus(t) <= e^t`` and ``E e^{a^2/2 + aZ} = e^{a^2}``
give ``I >= a^2/2 + ln(n/(n-1)) - e^{a^2}/(n-1)``; with the upper
``I <= (1-1/n) a^2/2``,

    -a^2/(2n) >= I - a^2/2 >= ln(n/(n-1)) - e^{a^2}/(n-1),

so ``I -> a^2/2`` nats at rate O(1/n) for every fixed a (the paper's bound
``a^2`` nats is off by a factor 2 in the limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from vistalab._core import PlainRecord, to_plain

from ._bounds import _kappa_sigma_iv, content_rate_bound_tight
from ._certified import (
    CertifiedValue,
    certified,
    flint,
    gauss_expectation,
    gauss_tail_moment_bound,
)
from ._tightness import CONTENT_RATE_ABS_TOL, CONTENT_SNR_MAX, content_rate_exact
from ._validate import as_int

__all__ = [
    "ContentSandwich",
    "content_product_bound",
    "content_jensen_lower_bound",
    "content_rate_limit",
    "content_limit_gap_bound",
    "ContentGapBounds",
    "content_sandwich",
    "CONTENT_N_MAX",
    "content_rate_certified",
]

#: Largest n accepted (the certified integrals use about 2 log2(n) guard bits).
CONTENT_N_MAX = 10**18

_LN2 = math.log(2.0)


def _content_iv(n: Any, kappa: Any, sigma: Any) -> tuple[int, int, float, float]:
    n = as_int(
        "n", n, lo=2, hi=CONTENT_N_MAX,
        rule=f"must be an integer with 2 <= n <= {CONTENT_N_MAX:.0e}",
        fix="the working set holds at least two blocks",
    )
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    a = math.log(kappa) / sigma
    if a > CONTENT_SNR_MAX:
        from ._errors import DomainError

        raise DomainError(
            "sigma", sigma,
            f"must satisfy ln(kappa)/sigma <= {CONTENT_SNR_MAX:g}",
            "at that signal-to-noise ratio I(J*;W) equals log2(n) to double precision",
            context=f"kappa={kappa}, ln(kappa)/sigma={a:.4g}",
        )
    return n, kappa, sigma, a


def _prec(n: int) -> int:
    return 80 + 2 * n.bit_length()


def _zmax(prec: int, scale: float) -> float:
    """Gaussian cut-off with ``scale * phi(zmax) < 2^-prec``."""
    return math.sqrt(2.0 * (prec * _LN2 + math.log(max(scale, 1.0)) + 5.0))


def _product_nats(n: int, kappa: int, sigma: float) -> CertifiedValue:
    prec = _prec(n)
    a_f = math.log(kappa) / sigma
    zmax = _zmax(prec, n * (1.0 + a_f) ** 2)
    fl = flint()
    arb = fl.arb
    with fl.ctx.workprec(prec):
        a = arb(kappa).log() / arb(sigma)
        p = 1 / arb(n)
        q = 1 - p
        half = a * a / 2

        def fn(z: Any, analytic: bool) -> Any:
            t1 = (p + q * (-(half + a * z)).exp()).log(analytic=analytic)
            t2 = (q + p * (a * z - half).exp()).log(analytic=analytic)
            return -(p * t1 + q * t2)

        val, _ = gauss_expectation(fn, zmax=zmax, tail=0.0, prec=prec)
        # |p t1 + q t2| <= a^2/2 + a|Z| on the real line: ln of a convex
        # combination of 1 and e^u lies between 0 and u.
        tail = gauss_tail_moment_bound(zmax, a_f * a_f / 2 * 1.001, a_f * 1.001)
        return certified(val * n, "arb acb.integral + analytic tail", extra_radius=n * tail)


def _jensen_nats(n: int, kappa: int, sigma: float) -> CertifiedValue:
    prec = _prec(n)
    a_f = math.log(kappa) / sigma
    c0 = math.log(2.0) + a_f * a_f / 2 + math.log(n)
    zmax = _zmax(prec, c0 + a_f)
    fl = flint()
    arb = fl.arb
    with fl.ctx.workprec(prec):
        a = arb(kappa).log() / arb(sigma)
        half = a * a / 2
        ln_m = arb(n - 1).log()

        def fn(z: Any, analytic: bool) -> Any:
            return (1 + (half + a * z - ln_m).exp()).log(analytic=analytic)

        val, _ = gauss_expectation(fn, zmax=zmax, tail=0.0, prec=prec)
        # 0 <= softplus(t) <= ln 2 + |t|
        tail = gauss_tail_moment_bound(zmax, c0 * 1.001, a_f * 1.001)
        out = half + (1 / arb(n - 1)).log1p() - val
        return certified(out, "arb acb.integral + analytic tail", extra_radius=tail)


def content_product_bound(n: int, kappa: int, sigma: float) -> CertifiedValue:
    """Product bound ``I(J*;W) <= n I(B; aB + N(0,1))`` in bits, certified.

    Parameters
    ----------
    n : int
        Blocks, ``2 <= n <= 1e18``.
    kappa : int
        Size ratio (>= 2).
    sigma : float
        Log-size noise (> 0), ``ln(kappa)/sigma <= 40``.

    Returns
    -------
    CertifiedValue
        The bound's value with a rigorous radius; ``.upper`` is a valid upper
        bound on ``I(J*;W)``. Always ``<=`` :func:`content_rate_bound_tight`.
    """
    n, kappa, sigma, _ = _content_iv(n, kappa, sigma)
    return _product_nats(n, kappa, sigma).scaled(1.0 / _LN2, "arb acb.integral + analytic tail")


def content_jensen_lower_bound(n: int, kappa: int, sigma: float) -> CertifiedValue:
    """Jensen lower bound on ``I(J*;W)`` in bits, certified (may be negative).

    ``I >= ln n + a^2 - E ln(e^{aX} + (n-1) e^{a^2/2})`` nats with
    ``X ~ N(a, 1)`` (module docstring). ``max(0, .lower)`` is a valid lower
    bound on the rate.

    Parameters
    ----------
    n, kappa, sigma
        As in :func:`content_product_bound`.

    Returns
    -------
    CertifiedValue
    """
    n, kappa, sigma, _ = _content_iv(n, kappa, sigma)
    return _jensen_nats(n, kappa, sigma).scaled(1.0 / _LN2, "arb acb.integral + analytic tail")


def content_rate_limit(kappa: int, sigma: float) -> float:
    """``lim_{n->inf} I(J*;W) = a^2/2`` nats, in bits: ``(ln kappa)^2/(2 sigma^2 ln 2)``.

    Parameters
    ----------
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    sigma : float or array_like
        Standard deviation of the Gaussian log-size noise, ``sigma > 0``.

    Returns
    -------
    float
        The limit rate in bits (Proposition 2's content channel, a = ln(kappa)/sigma)."""
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    return math.log(kappa) ** 2 / (2.0 * sigma**2 * _LN2)


class ContentGapBounds(NamedTuple):
    """Proved bounds on ``I(J*;W) - a^2/2`` in bits (a named tuple: ``lo, hi = ...``).

    Attributes
    ----------
    lo : float
        ``[ln(n/(n-1)) - e^{a^2}/(n-1)]/ln 2``.
    hi : float
        ``-a^2/(2 n ln 2)``.
    """

    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields.

        Returns
        -------
        dict
            One key per field (:func:`to_plain`: NaN and infinities become None).
        """
        out: dict[str, Any] = to_plain(self._asdict())
        return out


def content_limit_gap_bound(n: int, kappa: int, sigma: float) -> ContentGapBounds:
    """Proved bounds ``(lo, hi)`` on ``I(J*;W) - a^2/2`` in bits (rate of convergence),
    returned as a :class:`ContentGapBounds` named tuple.

    ``lo = [ln(n/(n-1)) - e^{a^2}/(n-1)]/ln 2`` and ``hi = -a^2/(2 n ln 2)``;
    both are O(1/n) at fixed ``a`` (module docstring).

    Parameters
    ----------
    n : int or array_like
        Blocks, ``n >= 2``.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    sigma : float or array_like
        Standard deviation of the Gaussian log-size noise, ``sigma > 0``.

    Returns
    -------
    ContentGapBounds
        ``(lo, hi)`` in bits.
    """
    n, kappa, sigma, a = _content_iv(n, kappa, sigma)
    hi = -a * a / (2.0 * n * _LN2)
    lo = (math.log1p(1.0 / (n - 1)) - math.exp(min(a * a, 700.0)) / (n - 1)) / _LN2
    return ContentGapBounds(lo=lo, hi=hi)


@dataclass(frozen=True)
class ContentSandwich(PlainRecord):
    """The content channel's rate between two certified bounds.

    Attributes
    ----------
    n, kappa : int
        Instance.
    sigma : float
        Log-size noise.
    lower_bound : float
        ``max(0, Jensen bound)``, rounded down (certified).
    exact_rate : float
        :func:`content_rate_exact` (trapezoid quadrature, abs. error
        :data:`CONTENT_RATE_ABS_TOL`).
    product_bound : float
        Product bound, rounded up (certified).
    tight_bound : float
        The (1-1/n) bound :func:`content_rate_bound_tight`.
    limit : float
        ``a^2/2`` nats in bits.
    lower_radius, product_radius : float
        Certified error radii of the two integrals (bits).
    holds : bool
        ``lower <= exact <= product <= tight`` (exact within its tolerance).
    """

    n: int
    kappa: int
    sigma: float
    lower_bound: float
    exact_rate: float
    product_bound: float
    tight_bound: float
    limit: float
    lower_radius: float
    product_radius: float
    holds: bool


def content_sandwich(n: int, kappa: int, sigma: float) -> ContentSandwich:
    """Certified sandwich ``lower_bound <= I(J*;W) <= product_bound`` (bits).

    Parameters
    ----------
    n, kappa, sigma
        As in :func:`content_product_bound`.

    Returns
    -------
    ContentSandwich
    """
    n, kappa, sigma, _ = _content_iv(n, kappa, sigma)
    up = _product_nats(n, kappa, sigma).scaled(1.0 / _LN2)
    lo = _jensen_nats(n, kappa, sigma).scaled(1.0 / _LN2)
    exact = content_rate_exact(n, kappa, sigma)
    tight = content_rate_bound_tight(n, kappa, sigma)
    lower = max(0.0, lo.lower)
    upper = up.upper
    tol = CONTENT_RATE_ABS_TOL
    holds = lower <= exact + tol and exact <= upper + tol and up.lower <= tight
    return ContentSandwich(
        n=n, kappa=kappa, sigma=sigma, lower_bound=lower, exact_rate=exact,
        product_bound=upper, tight_bound=tight, limit=content_rate_limit(kappa, sigma),
        lower_radius=lo.radius, product_radius=up.radius, holds=holds,
    )


# ---------------------------------------------------------------------------
# A certified evaluation of the exact rate (the 2-D Frullani integral)
# ---------------------------------------------------------------------------

_OUTER_H = 0.1
_OUTER_D = math.pi / 4


def _normal_q(z: float) -> float:
    """Upper bound on the standard normal tail Q(z) for z > 0 (``phi(z)/z``, rounded up)."""
    return math.nextafter(math.exp(-0.5 * z * z) / (z * math.sqrt(2.0 * math.pi)), math.inf)


def content_rate_certified(n: int, kappa: int, sigma: float) -> CertifiedValue:
    """``I(J*;W)`` in bits with a rigorous error radius (ball arithmetic).

    Evaluates the representation of :func:`content_rate_exact`,
    ``I = ln n + s^2 - int_R F(u) du`` with
    ``F(u) = exp(-e^u) - L(u + s^2) L(u)^(n-1)`` and
    ``L(v) = E exp(-e^(v + sZ))``, by trapezoid rules carried out in arb
    (all rounding enclosed) plus four analytic error terms, each proved in
    theory/BEYOND.md ("Certified numerics"):

    * inner rule (step ``h_z``, strip ``d_z = min(pi/(4s), 2)`` where
      ``|phi(z) exp(-e^(v+sz))| <= phi(Re z) e^(d_z^2/2)``):
      ``eps_L = 2 e^(d_z^2/2)/(e^(2 pi d_z/h_z) - 1) + 4 Q(Z - h_z)``,
      entering F as ``n eps_L (1 + eps_L)^n`` per grid point;
    * outer rule (step 0.1, strip ``pi/4`` where ``|F| <= 2`` and
      ``int |F(x+iy)| dx <= M = 6 + 2 ln C + s^2 + s``, ``C = E[A+S] + 1``):
      ``2M/(e^(2 pi (pi/4)/0.1) - 1)``;
    * left cut ``|F(u)| <= C e^u``: ``C e^(u_lo)``;
    * right cut: ``E1(e^(u_hi)) + E E1(A e^(u_hi))``, bounded through
      ``P(A < t)`` with ``t = e^(s^2 - 10 s)``.

    Costs ``O((u_hi - u_lo)/0.1 * 24/h_z)`` ball exponentials: about a second
    at s = 1, several at s = 5.5.

    Parameters
    ----------
    n, kappa, sigma
        As in :func:`content_product_bound`, with ``ln(kappa)/sigma <= 8``.

    Returns
    -------
    CertifiedValue
        In bits.
    """
    n, kappa, sigma, s = _content_iv(n, kappa, sigma)
    if s > 8.0:
        from ._errors import DomainError

        raise DomainError(
            "sigma", sigma, "must satisfy ln(kappa)/sigma <= 8 for the certified evaluation",
            "the inner grid grows like s; use content_sandwich for a certified bracket",
            context=f"kappa={kappa}, ln(kappa)/sigma={s:.4g}",
        )
    d_z = min(math.pi / (4.0 * s), 2.0)
    h_z = 2.0 * math.pi * d_z / 55.0  # e^(-2 pi d_z/h_z) = e^-55
    z_max = 12.0
    eps_l = 2.0 * math.exp(d_z * d_z / 2.0) / math.expm1(55.0) + 4.0 * _normal_q(z_max - h_z)
    ln_c = max(1.5 * s * s, math.log(n - 1) + 0.5 * s * s) + math.log(3.0)  # >= ln(E[A+S] + 1)
    u_lo = -ln_c - 50.0
    u_hi = max(3.81, 3.81 - s * s + 10.0 * s) + 0.5
    m_strip = 6.0 + 2.0 * ln_c + s * s + s
    err_outer = 2.0 * m_strip / math.expm1(2.0 * math.pi * _OUTER_D / _OUTER_H)
    err_left = math.exp(ln_c + u_lo)
    x_hi = math.exp(u_hi)
    ln_t = s * s - 10.0 * s
    tx = math.exp(ln_t + u_hi)
    err_right = (
        math.exp(-x_hi) / x_hi
        + math.exp(-tx) / tx
        + (math.log(2.0) + s * s + u_hi) * _normal_q(10.0)
        + s * math.exp(-50.0) / math.sqrt(2.0 * math.pi)
    )
    k_lo = math.floor(u_lo / _OUTER_H)
    k_hi = math.ceil(u_hi / _OUTER_H)
    n_pts = k_hi - k_lo + 1
    err_inner = _OUTER_H * n_pts * n * eps_l * math.exp(min(700.0, (n + 1) * eps_l))
    prec = 90 + n.bit_length()
    fl = flint()
    arb = fl.arb
    with fl.ctx.workprec(prec):
        s_b = arb(kappa).log() / arb(sigma)
        s2 = s_b * s_b
        j_max = math.floor(z_max / h_z)
        hz = arb(h_z)
        zs = [arb(j) * hz for j in range(-j_max, j_max + 1)]
        c = 1 / (2 * arb.pi()).sqrt()
        w = [hz * c * (-(z * z) / 2).exp() for z in zs]
        esz = [(s_b * z).exp() for z in zs]
        cutoff = arb(2) ** 12  # exp(-4096) is below any radius here

        def ell(v: Any) -> Any:
            ev = v.exp()
            total = arb(0)
            for wj, ej in zip(w, esz, strict=True):
                x = ev * ej
                if x > cutoff:
                    total += wj * arb(0, arb(-4096).exp())
                else:
                    total += wj * (-x).exp()
            return total

        acc = arb(0)
        hu = arb(_OUTER_H)
        for k in range(k_lo, k_hi + 1):
            u = arb(k) * hu
            f = (-(u.exp())).exp() - ell(u + s2) * ell(u) ** (n - 1)
            acc += f
        e_ln = hu * acc
        nats = arb(n).log() + s2 - e_ln
        extra = err_outer + err_left + err_right + err_inner
        out = certified(nats / arb(2).log(), "arb trapezoid rules + analytic bounds",
                        extra_radius=extra / math.log(2.0))
    return out
