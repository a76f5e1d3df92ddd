"""The exact information-recovery frontier of the make-room instance:
the smallest E[Z] of any interface of rate <= I, its inverse, and the Gibbs
rank law that attains it (proof in theory/FRONTIER.md).

The frontier is ``R(D) = log2 n - max{H(p) : sum_r p_r c_r <= D}`` over rank
laws p on {1..n} with cost ``c_r = min(r-1, kappa)``. The maximiser is
``p_r ∝ exp(-lam c_r)``; because c takes only kappa+1 distinct values every
quantity below is a closed form in lam, so n can be as large as you like.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from vistalab._core import PlainRecord

from ._bounds import _frontier_domain_iv, _mean_iv, _rate_iv
from ._errors import DomainError
from ._validate import as_real
from ._vectorize import broadcasting

__all__ = ["GibbsLaw", "gibbs_law", "optimal_mean_z", "optimal_rate", "FRONTIER_REL_TOL"]

#: Relative width (in lam) at which the bracketed bisection stops. Results are
#: evaluated at that lam in >= 40-digit arithmetic and rounded to float, so
#: they carry a relative error far below this module's stated guarantee of
#: 1e-12 (see FRONTIER.md, "Numerics").
FRONTIER_REL_TOL = 2.0**-62

_BASE_DPS = 40
_MAX_HEAD = 10**7  # p_head is a materialised tuple; beyond this use the scalar API


# ---------------------------------------------------------------------------
# Closed forms of the Gibbs family, in a private mpmath context
# ---------------------------------------------------------------------------


class _Family:
    """The Gibbs family p_r ∝ exp(-lam c_r) of one (n, kappa), evaluated at
    ``dps`` decimal digits in its own mpmath context (no global state)."""

    def __init__(self, n: int, kappa: int, dps: int) -> None:
        self.ctx = mpmath.MPContext()
        self.ctx.dps = dps
        self.n = n
        self.kappa = kappa
        ctx = self.ctx
        self.ln_n = ctx.log(n)
        self.ln_tail = ctx.log(n - kappa)
        # blind (lam = 0) mean cost, exact rational
        self.d0_q = Fraction(kappa * n - kappa * (kappa + 1) // 2, n)
        self.d0 = ctx.mpf(self.d0_q.numerator) / self.d0_q.denominator

    def _series(self, x: Any, weight: Any) -> Any:
        """``sum_{k>=1} B_2k weight(k) x^(2k-2) / (2k)!`` for 0 <= x < 1e-3;
        terms shrink by about x^2/(4 pi^2) each."""
        ctx = self.ctx
        total = ctx.mpf(0)
        k = 1
        while True:
            term = ctx.bernoulli(2 * k) * weight(k) * x ** (2 * k - 2) / ctx.factorial(2 * k)
            total += term
            if abs(term) <= ctx.eps * abs(total):
                return total
            k += 1

    def _phi(self, x: Any) -> Any:
        """``phi(x) = 1/x - 1/expm1(x)`` for x >= 0 (= 1/2 at 0)."""
        ctx = self.ctx
        if x < ctx.mpf(1) / 1000:
            # phi(x) = 1/2 - sum_k B_2k x^(2k-1)/(2k)!
            return ctx.mpf(1) / 2 - x * self._series(x, lambda k: 1)
        return 1 / x - 1 / ctx.expm1(x)

    def _dphi(self, x: Any) -> Any:
        """``phi'(x) = -1/x^2 + 1/(4 sinh(x/2)^2)`` for x >= 0 (= -1/12 at 0)."""
        ctx = self.ctx
        if x < ctx.mpf(1) / 1000:
            return -self._series(x, lambda k: 2 * k - 1)
        return -1 / x**2 + 1 / (4 * ctx.sinh(x / 2) ** 2)

    def state(self, lam: Any) -> tuple[Any, Any, Any]:
        """``(ln Z, D, Var)`` at lam: log partition function
        ``Z = sum_r exp(-lam c_r)``, mean cost and cost variance."""
        ctx = self.ctx
        kappa = self.kappa
        # head: ranks 1..kappa with costs 0..kappa-1, a truncated geometric law
        if lam == 0:
            ln_head = ctx.log(kappa)
        else:
            ln_head = ctx.log(-ctx.expm1(-lam * kappa)) - ctx.log(-ctx.expm1(-lam))
        ln_tail = self.ln_tail - lam * kappa
        if ln_head >= ln_tail:
            ln_z = ln_head + ctx.log1p(ctx.exp(ln_tail - ln_head))
        else:
            ln_z = ln_tail + ctx.log1p(ctx.exp(ln_head - ln_tail))
        # both weights in logistic form: neither is computed as 1 - the other
        w_tail = 1 / (1 + ctx.exp(ln_head - ln_tail))
        w_head = 1 / (1 + ctx.exp(ln_tail - ln_head))
        # head mean 1/(e^lam-1) - kappa/(e^(lam kappa)-1) and head variance
        # e^lam/(e^lam-1)^2 - kappa^2 e^(lam kappa)/(e^(lam kappa)-1)^2.
        # For small lam both terms are ~1/lam (resp. 1/lam^2) and cancel, so
        # they are rewritten through phi, whose 1/x parts cancel exactly; for
        # lam >= 1 the direct form is used (the second term is at most ~half
        # the first, while the phi form would cancel 1/lam against e^-lam).
        if lam < 1:
            head_mean = kappa * self._phi(lam * kappa) - self._phi(lam)
            head_var = self._dphi(lam) - kappa**2 * self._dphi(lam * kappa)
        else:
            head_mean = 1 / ctx.expm1(lam) - kappa / ctx.expm1(lam * kappa)
            head_var = 1 / (4 * ctx.sinh(lam / 2) ** 2) - kappa**2 / (
                4 * ctx.sinh(lam * kappa / 2) ** 2
            )
        mean = w_head * head_mean + w_tail * kappa
        # law of total variance over {head, tail}: no cancellation
        var = w_head * head_var + w_head * w_tail * (kappa - head_mean) ** 2
        return ln_z, mean, var

    def rate_nats(self, lam: Any) -> Any:
        """``ln n - H(p_lam)``, H in nats (= KL(p_lam || uniform))."""
        ln_z, mean, _ = self.state(lam)
        return self.ln_n - ln_z - lam * mean

    def solve(self, f: Any, lam_lo: Any) -> Any:
        """Root lam of an increasing function given in ``u = ln lam``.

        ``f(lam)`` returns ``(value, d value / d ln lam)``, increasing in lam,
        with value ``-inf`` allowed below the root; ``f(lam_lo)`` must be
        negative. Newton steps in u are safeguarded by the bracket (bisection
        whenever a step leaves it or stalls); when a step becomes shorter than
        the tolerance, the two points at +-tol/2 are probed to close the
        bracket. The loop ends only when the bracket in u is narrower than
        :data:`FRONTIER_REL_TOL`, so lam's relative error is below it whatever
        the speed-up did.
        """
        ctx = self.ctx
        lo = lam_lo
        if not f(lo)[0] < 0:  # pragma: no cover - guarded by the a priori bounds
            raise AssertionError("frontier bracket: lower end is not below the root")
        hi = max(ctx.mpf(1), 2 * lo)
        while f(hi)[0] < 0:
            lo, hi = hi, 2 * hi
        a, b = ctx.log(lo), ctx.log(hi)
        tol = ctx.mpf(FRONTIER_REL_TOL)

        def probe(u: Any) -> tuple[Any, Any]:
            nonlocal a, b
            val, slope = f(ctx.exp(u))
            if val == 0:
                a = b = u
            elif val < 0:
                a = u
            else:
                b = u
            return val, slope

        # rtsafe (Newton safeguarded by bisection, as in Numerical Recipes)
        x = (a + b) / 2
        dx_old = dx = b - a
        val, slope = probe(x)
        while b - a > tol:
            newton_ok = ctx.isfinite(val) and slope is not None and slope > 0
            if newton_ok:
                x_new = x - val / slope
                newton_ok = a < x_new < b and abs(2 * val) <= abs(dx_old * slope)
            dx_old = dx
            if newton_ok:
                dx = val / slope
                x = x_new
            else:
                dx = (b - a) / 2
                x = (a + b) / 2
            if abs(dx) < tol / 4:
                # converged point: close the bracket at +-tol/2 around it
                probe(x - tol / 2)
                if b - a > tol:
                    probe(x + tol / 2)
                if b - a <= tol:
                    break
                x = (a + b) / 2
            val, slope = probe(x)
        return ctx.exp((a + b) / 2)


def _lam_for_rate(n: int, kappa: int, rate: float) -> tuple[_Family, Any]:
    """Family and lam with rate(lam) = ``rate`` bits, for 0 < rate < log2 n."""
    # rate_nats is a difference of quantities of size ln n; near lam = 0 it is
    # ~ lam^2 Var0/2 with Var0 >= ~kappa^2/n, hence the extra digits.
    dps = (
        _BASE_DPS
        + max(0, math.ceil(-math.log10(rate)))
        + math.ceil(math.log10(n))
    )
    fam = _Family(n, kappa, dps)
    ctx = fam.ctx
    target = ctx.mpf(rate) * ctx.ln2
    if target <= fam.ln_n / 2:
        ln_t = ctx.log(target)

        def f(lam: Any) -> tuple[Any, Any]:
            ln_z, mean, var = fam.state(lam)
            r = fam.ln_n - ln_z - lam * mean
            if r <= 0:
                return -ctx.inf, None
            return ctx.log(r) - ln_t, lam**2 * var / r
    else:
        ln_ht = ctx.log(fam.ln_n - target)

        def f(lam: Any) -> tuple[Any, Any]:
            ln_z, mean, var = fam.state(lam)
            h = ln_z + lam * mean
            return ln_ht - ctx.log(h), lam**2 * var / h

    # rate_nats(lam) = int_0^lam s Var_s(c) ds <= lam^2 kappa^2 / 8 (Popoviciu),
    # so this lam_lo has rate <= target/4.
    lam_lo = ctx.sqrt(8 * target) / kappa / 2
    return fam, fam.solve(f, lam_lo)


def _lam_for_mean(n: int, kappa: int, mean_z: float) -> tuple[_Family, Any]:
    """Family and lam with D(lam) = ``mean_z``, for 0 < mean_z < D0."""
    d0_q = Fraction(kappa * n - kappa * (kappa + 1) // 2, n)
    gap = (d0_q - Fraction(mean_z)) / d0_q
    digits = max(0, math.ceil(-math.log10(float(gap))))
    # D0 - D(lam) ~ lam Var0 must be resolved to ~gap, and the rate ~ gap^2.
    dps = _BASE_DPS + 2 * digits + 2 * math.ceil(math.log10(n))
    fam = _Family(n, kappa, dps)
    ctx = fam.ctx
    target = ctx.mpf(mean_z)
    if 2 * target >= fam.d0:
        ln_gt = ctx.log(fam.d0 - target)

        def f(lam: Any) -> tuple[Any, Any]:
            _, mean, var = fam.state(lam)
            g = fam.d0 - mean
            if g <= 0:
                return -ctx.inf, None
            return ctx.log(g) - ln_gt, lam * var / g
    else:
        ln_t = ctx.log(target)

        def f(lam: Any) -> tuple[Any, Any]:
            _, mean, var = fam.state(lam)
            return ln_t - ctx.log(mean), lam * var / mean

    # D0 - D(lam) = int_0^lam Var_s(c) ds <= lam kappa^2 / 4, so this lam_lo
    # keeps D(lam_lo) above the target.
    lam_lo = 2 * (fam.d0 - target) / kappa**2
    return fam, fam.solve(f, lam_lo)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


@broadcasting
def optimal_mean_z(n: int, kappa: int, rate: float) -> float:
    """Smallest E[Z] of any make-room interface with ``I(J*;Y) <= rate``.

    Parameters
    ----------
    n : int
        Blocks, ``n >= kappa + 1`` (any size; no length-n arrays are built).
    kappa : int
        Size ratio, ``kappa >= 1``.
    rate : float
        Rate budget in bits, ``0 <= rate <= log2 n``.

    Returns
    -------
    float
        The exact frontier ``D(rate)``: :func:`blind_mean_z` at rate 0, 0 at
        ``log2 n``, strictly decreasing and convex in between. Relative
        error <= 1e-12 (FRONTIER.md, "Numerics").
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    rate = _rate_iv(rate, n)
    if rate == 0.0:
        d0 = Fraction(kappa * n - kappa * (kappa + 1) // 2, n)
        return float(d0)
    if rate >= math.log2(n):
        return 0.0
    fam, lam = _lam_for_rate(n, kappa, rate)
    return float(fam.state(lam)[1])


@broadcasting
def optimal_rate(n: int, kappa: int, mean_z: float) -> float:
    """Smallest rate (bits) of any interface achieving ``E[Z] <= mean_z``.

    Parameters
    ----------
    n : int
        Blocks, ``n >= kappa + 1``.
    kappa : int
        Size ratio, ``kappa >= 1``.
    mean_z : float
        Target, ``0 <= mean_z <= kappa``.

    Returns
    -------
    float
        ``R(mean_z)``: ``log2 n`` at 0, 0 for every target at or above the
        blind value :func:`blind_mean_z`. Relative error <= 1e-12.
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    mean_z = _mean_iv(mean_z, kappa)
    if mean_z == 0.0:
        return math.log2(n)
    # the float nearest the blind value counts as the blind value itself
    if mean_z >= float(Fraction(kappa * n - kappa * (kappa + 1) // 2, n)):
        return 0.0
    fam, lam = _lam_for_mean(n, kappa, mean_z)
    return float(fam.rate_nats(lam) / fam.ctx.ln2)


@dataclass(frozen=True)
class GibbsLaw(PlainRecord):
    """The optimal rank law ``p_r ∝ exp(-lam min(r-1, kappa))`` on one frontier point.

    Rank r means J* is the r-th block of the announced order; the agent
    archives in that order, so ``Z = min(r-1, kappa)``.

    Attributes
    ----------
    n : int
        Blocks.
    kappa : int
        Size ratio.
    lam : float
        Inverse temperature in nats per unit cost, ``>= 0``; ``inf`` for the
        full ledger (all mass on rank 1). Equals ``-ln 2 * dR/dD`` at this point.
    p_head : tuple of float
        ``P(rank = r)`` for r = 1..kappa (cost r-1).
    p_tail : float
        ``P(rank = r)`` for EACH r in kappa+1..n (cost kappa); the tail holds
        ``(n - kappa) * p_tail`` in total.
    mean_z : float
        ``E[Z] = sum_r p_r min(r-1, kappa)``.
    rate_bits : float
        ``log2 n - H(rank law)``, the smallest rate achieving ``mean_z``.
    """

    n: int
    kappa: int
    lam: float
    p_head: tuple[float, ...]
    p_tail: float
    mean_z: float
    rate_bits: float


def gibbs_law(
    n: int,
    kappa: int,
    *,
    lam: float | None = None,
    rate: float | None = None,
    mean_z: float | None = None,
) -> GibbsLaw:
    """The frontier-attaining rank law, given its ``lam``, ``rate`` or ``mean_z``.

    Parameters
    ----------
    n : int
        Blocks, ``n >= kappa + 1``.
    kappa : int
        Size ratio, ``1 <= kappa <= 10**7`` (``p_head`` lists kappa numbers;
        use :func:`optimal_mean_z` for larger kappa).
    lam : float, optional
        Inverse temperature, ``0 <= lam <= inf``.
    rate : float, optional
        Rate in bits, ``0 <= rate <= log2 n``.
    mean_z : float, optional
        Target E[Z], ``0 <= mean_z <= kappa`` (targets at or above the blind
        value give lam = 0). Exactly one of lam, rate, mean_z.

    Returns
    -------
    GibbsLaw
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    if kappa > _MAX_HEAD:
        raise DomainError(
            "kappa", kappa, f"must be <= {_MAX_HEAD} for gibbs_law",
            "p_head would hold kappa probabilities; use optimal_mean_z/optimal_rate",
        )
    given = {k: v for k, v in (("lam", lam), ("rate", rate), ("mean_z", mean_z)) if v is not None}
    if len(given) != 1:
        raise DomainError(
            "lam/rate/mean_z", given or None, "must be exactly one keyword",
            "pass exactly one of lam=..., rate=..., mean_z=...",
        )
    if rate is not None:
        rate = _rate_iv(rate, n)
        if rate == 0.0:
            lam = 0.0
        elif rate >= math.log2(n):
            lam = math.inf
        else:
            lam = float(_lam_for_rate(n, kappa, rate)[1])
    elif mean_z is not None:
        mean_z = _mean_iv(mean_z, kappa)
        if mean_z == 0.0:
            lam = math.inf
        elif mean_z >= float(Fraction(kappa * n - kappa * (kappa + 1) // 2, n)):
            lam = 0.0
        else:
            lam = float(_lam_for_mean(n, kappa, mean_z)[1])
    elif lam != math.inf:
        lam = as_real(
            "lam", lam, lo=0.0,
            fix="lam is an inverse temperature >= 0 (lam=inf is the full ledger)",
        )
    return _law_at(n, kappa, float(lam))


def _law_at(n: int, kappa: int, lam: float) -> GibbsLaw:
    if lam == math.inf:
        head = np.zeros(kappa)
        head[0] = 1.0
        return GibbsLaw(n, kappa, math.inf, tuple(head.tolist()), 0.0, 0.0, math.log2(n))
    # the rate is ~lam^2 Var/2 for small lam: keep digits for it
    extra = max(0, math.ceil(-2 * math.log10(lam))) if lam > 0 else 0
    fam = _Family(n, kappa, _BASE_DPS + math.ceil(math.log10(n)) + extra)
    lam_mp = fam.ctx.mpf(lam)
    ln_z, mean, _ = fam.state(lam_mp)
    rate_bits = float((fam.ln_n - ln_z - lam_mp * mean) / fam.ctx.ln2)
    ln_z_f = float(ln_z)
    head = np.exp(-lam * np.arange(kappa, dtype=float) - ln_z_f)
    # same exp as the head, so p_tail <= p_head[-1] holds in floats too
    p_tail = float(np.exp(-lam * kappa - ln_z_f))
    return GibbsLaw(
        n=n, kappa=kappa, lam=lam, p_head=tuple(head.tolist()), p_tail=p_tail,
        mean_z=float(mean), rate_bits=max(0.0, rate_bits),
    )
