"""How tight the paper's bounds are: the exact rate of Proposition 2's
Gaussian content channel against the paper's and a tighter bound, and
Theorem 1's Fano lower bound against the exact frontier and buckets.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from vistalab._core import PlainRecord

from ._bounds import (
    _kappa_sigma_iv,
    _makeroom_iv,
    _rate_iv,
    bucket_ledger,
    bucket_ledger_for_mean_z,
    bucket_sufficient_rate,
    content_rate_bound,
    content_rate_bound_tight,
    makeroom_lower_bound,
    threshold_rate,
)
from ._errors import DomainError
from ._frontier import optimal_mean_z, optimal_rate
from ._validate import MAX_SIZE, as_int
from ._vectorize import broadcasting

__all__ = [
    "content_rate_exact",
    "CONTENT_RATE_ABS_TOL",
    "CONTENT_RATE_REL_TOL",
    "CONTENT_SNR_MAX",
    "list_fano_mean_z_bound",
    "ContentTightnessRow",
    "MakeroomTightnessRow",
    "ThresholdTightnessRow",
    "TightnessReport",
    "tightness_report",
]

#: Absolute accuracy (bits) claimed for :func:`content_rate_exact`. The
#: discretisation errors are below 1e-17 by the strip bounds in its
#: docstring; what remains is float rounding over a few thousand terms.
CONTENT_RATE_ABS_TOL = 1e-10

#: Relative accuracy claimed for :func:`content_rate_exact` over its whole
#: domain: where the small-SNR series is used its truncation is below 1e-15
#: relative; elsewhere the rate is at least ~3e-3 bits (the series covers every
#: s <= 0.09), so the quadrature's absolute error is below this relative one.
CONTENT_RATE_REL_TOL = 1e-7

#: Terms of the small-SNR series of I(J*;W) in x = s^2 (see
#: :func:`_content_rate_series_bits`); the series is used only when its last
#: term is below :data:`_SERIES_REL_TAIL` times the value.
_SERIES_ORDER = 8
_SERIES_REL_TAIL = 1e-15

#: Largest signal-to-noise ratio ln(kappa)/sigma accepted by
#: :func:`content_rate_exact` (its grids grow like s^3; at s = 40 the rate
#: already equals log2 n to double precision for any practical n).
CONTENT_SNR_MAX = 40.0
_Z_MAX = 9.5  # standard-normal mass beyond +-9.5 is 2e-21
_H_U = 0.1  # outer step: error <= ~2M exp(-pi^2/(2h)) ~ 1e-19 M


# ---------------------------------------------------------------------------
# Exact rate of the Gaussian content channel (Proposition 2)
# ---------------------------------------------------------------------------


@broadcasting
def content_rate_exact(n: int, kappa: int, sigma: float) -> float:
    """Exact ``I(J*;W)`` in bits of Proposition 2's Gaussian content channel.

    Notes
    -----
    Condition on J* = 1 (symmetry). The posterior is a softmax of
    ``s W_i`` with ``s = ln(kappa)/sigma`` after standardising, so with
    ``A = exp(s^2 + s Z_1)`` and ``S = sum_{i>=2} exp(s Z_i)`` (Z iid N(0,1))

        I = ln n + s^2 - E ln(A + S)   (nats).

    Frullani's ``ln x = int_0^inf (e^-t - e^-xt) dt/t`` with ``t = e^u`` and
    independence turn the n-dimensional expectation into a 2-D integral,

        E ln(A+S) = int_R [exp(-e^u) - L(u + s^2) L(u)^(n-1)] du,
        L(v) = E exp(-e^(v + s Z)).

    Where the signal-to-noise ratio is small (every s <= 0.09, and up to
    s ~ 0.2 for large n) the rate comes from its power series in s^2 instead,
    with exact rational coefficients (:func:`_content_rate_series_coefficients`),
    truncated where the last term kept is below 1e-15 of the value: its
    leading term is Proposition 2's tight bound ``(1 - 1/n) s^2 / 2`` nats and
    the next is negative, so the value honours the proved bound at every sigma
    (the quadrature alone has an absolute error 1e-10 that would swamp rates
    of 1e-25 bits at sigma = 1e12).

    Otherwise both integrals are taken by the trapezoid rule on R, which converges
    geometrically for integrands analytic and bounded in a strip: the outer
    integrand is bounded by 2 on ``|Im u| < pi/4`` and the inner one by
    ``phi(x) e^(d^2/2)`` on ``|Im z| < d = min(pi/(4s), 3)``, so steps 0.1
    and ``min(0.25, 0.12/s)`` leave errors below 1e-17. Truncation points
    are chosen so the neglected tails are below 1e-18.

    Parameters
    ----------
    n : int
        Blocks (n >= 2).
    kappa : int
        Size ratio (>= 2).
    sigma : float
        Log-size noise (> 0). Beyond ``ln(kappa)/sigma = 40`` the quadrature is not
        run: there Fano's inequality proves ``log2(n) - I`` below
        :data:`CONTENT_RATE_ABS_TOL` / 10 and ``log2(n)`` is returned.

    Returns
    -------
    float
        ``I(J*;W)`` in bits, accurate to :data:`CONTENT_RATE_ABS_TOL` and to a
        relative :data:`CONTENT_RATE_REL_TOL`.
    """
    n = as_int("n", n, lo=2, fix="the working set holds at least two blocks", hi=MAX_SIZE)
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    s = math.log(kappa) / sigma
    series = _content_rate_series_bits(n, s)
    if series is not None:
        return min(series, math.log2(n))
    gap = _high_snr_gap_bound(n, s)
    if gap <= 0.1 * CONTENT_RATE_ABS_TOL:
        # The quadrature's rounding grows with s^2 (about 1e-9 bits at s = 28), while the
        # true gap log2(n) - I is provably far smaller here: return the endpoint. This
        # also covers every s > CONTENT_SNR_MAX for n < 1e100, so the exact value exists
        # wherever the estimator runs.
        return math.log2(n)
    if s > CONTENT_SNR_MAX:
        raise DomainError(
            "sigma", sigma,
            f"must satisfy ln(kappa)/sigma <= {CONTENT_SNR_MAX:g} for the quadrature",
            "at that signal-to-noise ratio I(J*;W) equals log2(n) to double precision",
            context=f"kappa={kappa}, ln(kappa)/sigma={s:.4g}",
        )
    return _content_rate_quadrature_bits(n, s)


def _content_rate_quadrature_bits(n: int, s: float) -> float:
    """``I(J*;W)`` in bits by the 2-D trapezoid rule of :func:`content_rate_exact`
    (absolute accuracy :data:`CONTENT_RATE_ABS_TOL`), for ``0 < s <= CONTENT_SNR_MAX``."""
    h_z = min(0.25, 0.12 / s)
    z = np.arange(-_Z_MAX, _Z_MAX + h_z / 2, h_z)
    w_z = h_z * np.exp(-0.5 * z**2) / math.sqrt(2.0 * math.pi)

    # E[A + S] = e^{1.5 s^2} + (n-1) e^{s^2/2}; below u_lo the integrand is
    # ~ e^u E[A+S], so the neglected tail is < e^-45.
    ln_mean = float(np.logaddexp(1.5 * s * s, math.log(n - 1) + 0.5 * s * s))
    u_lo = -ln_mean - 45.0
    # above u_hi, L(u) <= P(Z < -9.5) + exp(-e^3.83) < 1e-18
    u_hi = 3.83 + _Z_MAX * s + 1.0
    u = np.arange(u_lo, u_hi + _H_U / 2, _H_U)

    def one_minus_l(v: np.ndarray) -> np.ndarray:
        """``1 - L(v)`` for each v, to full relative precision."""
        out = np.empty_like(v)
        for i in range(0, v.size, 256):  # bounded memory for large s
            arg = np.minimum(v[i : i + 256, None] + s * z[None, :], 700.0)
            out[i : i + 256] = (-np.expm1(-np.exp(arg))) @ w_z
        return out

    with np.errstate(divide="ignore"):  # L = 0 far right: log L = -inf is exact
        log_l_u = np.log1p(-np.minimum(one_minus_l(u), 1.0))
        log_l_a = np.log1p(-np.minimum(one_minus_l(u + s * s), 1.0))
    # F = (1 - L_A L^(n-1)) - (1 - exp(-e^u)), each part without cancellation
    f = -np.expm1(log_l_a + (n - 1) * log_l_u) + np.expm1(-np.exp(np.minimum(u, 700.0)))
    e_ln = _H_U * float(np.sum(f))
    nats = math.log(n) + s * s - e_ln
    return min(max(nats / math.log(2.0), 0.0), math.log2(n))


def _series_mul(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    """Product of two power series truncated to the length of ``p``."""
    m = len(p)
    out = [Fraction(0)] * m
    for i, a in enumerate(p):
        if a:
            for j in range(m - i):
                out[i + j] += a * q[j]
    return out


def _series_inv(p: list[Fraction]) -> list[Fraction]:
    """``1/p`` as a truncated power series (``p[0] != 0``)."""
    out = [Fraction(0)] * len(p)
    out[0] = 1 / p[0]
    for k in range(1, len(p)):
        out[k] = -sum((p[i] * out[k - i] for i in range(1, k + 1)), Fraction(0)) / p[0]
    return out


def _series_log(p: list[Fraction]) -> list[Fraction]:
    """``ln p`` for ``p[0] = 1``, by integrating ``p'/p`` term by term."""
    dp = [i * p[i] for i in range(1, len(p))] + [Fraction(0)]
    q = _series_mul(dp, _series_inv(p))
    return [Fraction(0)] + [q[i - 1] / i for i in range(1, len(p))]


def _cumulants(moments: list[list[Fraction]]) -> list[list[Fraction]]:
    """Cumulants kappa_1..K from raw moments m_1..K (index 0 unused):
    ``kappa_r = m_r - sum_{j<r} C(r-1, j-1) kappa_j m_{r-j}``."""
    kap: list[list[Fraction]] = [[]]
    for r in range(1, len(moments)):
        acc = list(moments[r])
        for j in range(1, r):
            c = math.comb(r - 1, j - 1)
            acc = [a - c * b for a, b in zip(acc, _series_mul(kap[j], moments[r - j]),
                                             strict=True)]
        kap.append(acc)
    return kap


@functools.lru_cache(maxsize=1)
def _lognormal_cumulants() -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """Cumulants, as exact power series in x = s^2, of the bulky block's weight
    ``e^(s^2 + s Z)`` and of a light block's ``e^(s Z)`` (raw moments
    ``exp((r + r^2/2) x)`` and ``exp(r^2 x / 2)``), orders 1..2M+1."""
    m = _SERIES_ORDER + 1
    orders = range(1, 2 * _SERIES_ORDER + 2)

    def exp_lin(a: Fraction) -> list[Fraction]:
        return [a**j / math.factorial(j) for j in range(m)]

    heavy: list[list[Fraction]] = [[]] + [exp_lin(Fraction(r) + Fraction(r * r, 2)) for r in orders]
    light: list[list[Fraction]] = [[]] + [exp_lin(Fraction(r * r, 2)) for r in orders]
    return _cumulants(heavy), _cumulants(light)


@functools.lru_cache(maxsize=1024)
def _content_rate_series_coefficients(n: int) -> tuple[float, ...]:
    """Coefficients a_0..a_M (nats) of ``I(J*;W) = sum_j a_j s^(2j) + O(s^(2M+2))``.

    With J* = 1 (symmetry) and ``T = (e^(s^2 + s Z_1) + sum_{i>=2} e^(s Z_i)) / n``,
    ``I = s^2 - E ln T`` nats. Writing ``T = E[T](1 + U)``,
    ``E ln T = ln E[T] + sum_{k>=2} (-1)^(k+1) E[U^k] / k``, where the central
    moments of T come from its cumulants (independent terms: cumulants add) by
    ``mu_k = sum_{j=2..k} C(k-1, j-1) kappa_j mu_{k-j}``. ``E[U^k] = O(s^k)``, so
    moments up to k = 2M+1 give every term through s^(2M). All arithmetic is
    exact (fractions), so no cancellation; a_1 = (1 - 1/n)/2 is the tight bound
    of Proposition 2.
    """
    m = _SERIES_ORDER + 1
    heavy, light = _lognormal_cumulants()
    big_k = len(heavy) - 1
    nf = Fraction(n)
    k_t: list[list[Fraction]] = [[]] + [
        [(a + (nf - 1) * b) / nf**r for a, b in zip(heavy[r], light[r], strict=True)]
        for r in range(1, big_k + 1)]
    mu = [[Fraction(1)] + [Fraction(0)] * (m - 1), [Fraction(0)] * m]
    for k in range(2, big_k + 1):
        acc = [Fraction(0)] * m
        for j in range(2, k + 1):
            c = math.comb(k - 1, j - 1)
            acc = [a + c * b for a, b in zip(acc, _series_mul(k_t[j], mu[k - j]), strict=True)]
        mu.append(acc)
    inv_mean = _series_inv(k_t[1])
    e_ln = _series_log(k_t[1])
    power = [Fraction(1)] + [Fraction(0)] * (m - 1)
    for k in range(1, big_k + 1):
        power = _series_mul(power, inv_mean)
        if k >= 2:
            sign = Fraction((-1) ** (k + 1), k)
            e_ln = [a + sign * b for a, b in zip(e_ln, _series_mul(mu[k], power), strict=True)]
    coeffs = [-a for a in e_ln]
    coeffs[1] += 1
    return tuple(float(a) for a in coeffs)


def _content_rate_series_bits(n: int, s: float) -> float | None:
    """``I(J*;W)`` in bits from its series in s^2 (relative accuracy ~1e-15), or
    None when the last term kept is not below :data:`_SERIES_REL_TAIL` of the
    value (then the quadrature is accurate to a relative 1e-7)."""
    x = s * s
    if x > 0.05:
        return None
    coeffs = _content_rate_series_coefficients(n)
    # Horner from the top; the leading term (1 - 1/n)/2 x dominates for small x.
    total = 0.0
    for a in reversed(coeffs[1:]):
        total = total * x + a
    total *= x
    tail = abs(coeffs[-1]) * x ** (len(coeffs) - 1)
    if not total > 0 or tail > _SERIES_REL_TAIL * total:
        return None
    return total / math.log(2.0)


def _high_snr_gap_bound(n: int, s: float) -> float:
    """Upper bound on ``log2(n) - I(J*;W)`` in bits from Fano's inequality.

    The decoder "largest W" errs only if some light block is observed above the
    bulky one; each of the n-1 differences is N(-s, 2) in standard units, so
    ``P_e <= (n-1) Phi(-s/sqrt 2)`` and ``H(J*|W) <= h(P_e) + P_e log2(n-1)``
    (h increasing on [0, 1/2]).
    """
    pe = (n - 1) * 0.5 * math.erfc(s / 2.0)  # Phi(-s/sqrt2) = erfc(s/2)/2
    if pe >= 0.5:
        return math.inf
    if pe == 0.0:
        return 0.0
    h = -pe * math.log2(pe) - (1.0 - pe) * math.log2(1.0 - pe)
    return h + pe * math.log2(max(n - 1, 1))


# ---------------------------------------------------------------------------
# A sharper use of Lemma 1 for Theorem 1
# ---------------------------------------------------------------------------


_LIST_FANO_CHUNK = 1 << 20
_LIST_FANO_MAX_KAPPA = 10**9


@broadcasting
def list_fano_mean_z_bound(n: int, kappa: int, rate: float) -> float:
    """Theorem 1's argument with Lemma 1 applied to every prefix list.

    ``E[Z] = sum_{m=1..kappa} (1 - P_c(m))`` with
    ``P_c(m) <= P_c(m') <= list_fano_pc_bound(n, m', I)`` for every
    ``m <= m' <= kappa`` (prefix lists are nested). Theorem 1 uses only
    ``m' = kappa`` and drops a ``log2((n-kappa)/n)`` term, so this bound is
    at least :func:`makeroom_lower_bound` and is still valid for every
    interface of rate <= I.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    rate : float or array_like
        The interface rate I(J*;Y) in bits, ``0 <= rate``.

    Returns
    -------
    float
        A lower bound on E[Z], in blocks.
    """
    n, kappa = _makeroom_iv(n, kappa)
    if kappa > _LIST_FANO_MAX_KAPPA:
        raise DomainError("kappa", kappa, f"must be at most {_LIST_FANO_MAX_KAPPA:.0e} for this "
                          "bound (it sums kappa terms)", "use makeroom_lower_bound (Theorem 1's "
                          "closed form) at larger kappa", context=f"n={n}")
    rate = _rate_iv(rate, n)
    # Lemma 1's bound for every list size m = kappa..1 (2m < n here, so the bound is
    # affine in P_c), in chunks from the top so the running minimum carries over and
    # memory stays bounded at kappa ~ n/2 ~ 5e8.
    best = 1.0
    total = 0.0
    ln2 = math.log(2.0)
    for hi in range(kappa, 0, -_LIST_FANO_CHUNK):
        m = np.arange(hi, max(0, hi - _LIST_FANO_CHUNK), -1, dtype=np.float64)
        num = 1.0 + rate + np.log1p(-m / n) / ln2
        den = np.log1p((n - 2.0 * m) / m) / ln2
        pc = np.clip(num / den, 0.0, 1.0)
        run = np.minimum.accumulate(np.minimum(pc, best))
        total += float(np.sum(1.0 - run))
        best = float(run[-1])
    return total


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ContentTightnessRow(PlainRecord):
    """Proposition 2 at one (n, kappa, sigma).

    Attributes
    ----------
    n, kappa : int
        Instance.
    sigma : float
        Log-size noise.
    exact_rate : float
        ``I(J*;W)`` bits from :func:`content_rate_exact`.
    paper_bound : float
        :func:`content_rate_bound`.
    tight_bound : float
        :func:`content_rate_bound_tight` (uncapped).
    capped_bound : float
        ``min(tight_bound, log2 n)``.
    paper_over_exact, tight_over_exact : float
        Ratios of the bounds to the exact rate (inf if the rate is 0).
    holds : bool
        ``exact <= capped <= tight <= paper`` up to :data:`CONTENT_RATE_ABS_TOL`.
    """

    n: int
    kappa: int
    sigma: float
    exact_rate: float
    paper_bound: float
    tight_bound: float
    capped_bound: float
    paper_over_exact: float
    tight_over_exact: float
    holds: bool


@dataclass(frozen=True)
class MakeroomTightnessRow(PlainRecord):
    """Theorem 1 at one (n, kappa, rate): lower bounds against the exact frontier.

    Attributes
    ----------
    n, kappa : int
        Instance (2 <= kappa < n/2).
    rate : float
        Interface rate in bits.
    fano_lower_bound : float
        Theorem 1's ``kappa [1 - (I+1)/nu]_+``.
    list_fano_lower_bound : float
        :func:`list_fano_mean_z_bound` (Lemma 1 on every prefix list).
    exact_mean_z : float
        :func:`optimal_mean_z`, the smallest achievable E[Z].
    bucket_mean_z : float
        Exact E[Z] of the paper's construction, a balanced ledger with
        ``M = min(n, floor(2^I))`` buckets.
    gap : float
        ``exact_mean_z - fano_lower_bound``.
    holds : bool
        ``fano <= list_fano <= exact <= bucket`` (1e-9 slack).
    """

    n: int
    kappa: int
    rate: float
    fano_lower_bound: float
    list_fano_lower_bound: float
    exact_mean_z: float
    bucket_mean_z: float
    gap: float
    holds: bool


@dataclass(frozen=True)
class ThresholdTightnessRow(PlainRecord):
    """Rates needed for ``E[Z] <= delta kappa`` (Theorem 1 C-ii and D).

    Attributes
    ----------
    n, kappa : int
        Instance.
    delta : float
        Target fraction.
    fano_rate : float
        Necessary by Theorem 1: ``(1 - delta) nu - 1`` (may be negative).
    exact_rate : float
        :func:`optimal_rate` at ``delta kappa``: necessary and sufficient.
    bucket_rate : float
        ``H(Y)`` of the cheapest balanced ledger reaching the target.
    sufficient_rate : float
        The paper's sufficient rate :func:`bucket_sufficient_rate`.
    holds : bool
        ``fano <= exact <= bucket <= sufficient`` (1e-9 slack).
    """

    n: int
    kappa: int
    delta: float
    fano_rate: float
    exact_rate: float
    bucket_rate: float
    sufficient_rate: float
    holds: bool


@dataclass(frozen=True)
class TightnessReport(PlainRecord):
    """Tightness findings printed by ``vista-lab verify``.

    Attributes
    ----------
    content_rows : tuple of ContentTightnessRow
        Proposition 2 over the content grid.
    makeroom_rows : tuple of MakeroomTightnessRow
        Theorem 1's bound against the exact frontier over the make-room grid.
    threshold_rows : tuple of ThresholdTightnessRow
        Rates needed for ``E[Z] <= delta kappa``.
    max_paper_over_tight : float
        Largest ratio paper bound / tight bound over the content grid
        (``2n/(n-1)`` at the smallest n).
    max_gap : float
        Largest ``exact_mean_z - fano_lower_bound`` over the make-room grid.
    holds : bool
        Every row's ``holds``.
    """

    content_rows: tuple[ContentTightnessRow, ...]
    makeroom_rows: tuple[MakeroomTightnessRow, ...]
    threshold_rows: tuple[ThresholdTightnessRow, ...]
    max_paper_over_tight: float
    max_gap: float
    holds: bool


_SLACK = 1e-9

DEFAULT_CONTENT_GRID: tuple[tuple[int, int, float], ...] = tuple(
    (n, kappa, sigma) for n in (2, 4, 8) for kappa in (2, 4, 16) for sigma in (0.5, 1.0, 2.0)
)
DEFAULT_MAKEROOM_GRID: tuple[tuple[int, int, float], ...] = tuple(
    (n, kappa, frac * math.log2(n))
    for n, kappas in ((16, (2, 4)), (256, (2, 8, 32)), (65536, (4, 64)), (10**9, (4, 1000)))
    for kappa in kappas
    for frac in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9)
)
DEFAULT_THRESHOLD_GRID: tuple[tuple[int, int, float], ...] = tuple(
    (n, kappa, delta)
    for n, kappa in ((16, 2), (256, 8), (65536, 64), (10**9, 1000))
    for delta in (0.1, 0.5, 0.9)
)


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.inf


def content_row(n: int, kappa: int, sigma: float) -> ContentTightnessRow:
    """One :class:`ContentTightnessRow`."""
    exact = content_rate_exact(n, kappa, sigma)
    paper = content_rate_bound(kappa, sigma)
    tight = content_rate_bound_tight(n, kappa, sigma)
    capped = min(tight, math.log2(n))
    holds = exact <= capped + CONTENT_RATE_ABS_TOL and capped <= tight <= paper
    return ContentTightnessRow(
        n=int(n), kappa=int(kappa), sigma=float(sigma), exact_rate=exact, paper_bound=paper,
        tight_bound=tight, capped_bound=capped, paper_over_exact=_ratio(paper, exact),
        tight_over_exact=_ratio(tight, exact), holds=holds,
    )


def makeroom_row(n: int, kappa: int, rate: float) -> MakeroomTightnessRow:
    """One :class:`MakeroomTightnessRow`."""
    fano = makeroom_lower_bound(n, kappa, rate)
    lfano = list_fano_mean_z_bound(n, kappa, rate)
    exact = optimal_mean_z(n, kappa, rate)
    m = min(int(n), int(math.floor(2.0**rate)))
    bucket = bucket_ledger(n, kappa, max(m, 1)).mean_z
    holds = fano <= lfano + _SLACK and lfano <= exact + _SLACK and exact <= bucket + _SLACK
    return MakeroomTightnessRow(
        n=int(n), kappa=int(kappa), rate=float(rate), fano_lower_bound=fano,
        list_fano_lower_bound=lfano, exact_mean_z=exact, bucket_mean_z=bucket,
        gap=exact - fano, holds=holds,
    )


def threshold_row(n: int, kappa: int, delta: float) -> ThresholdTightnessRow:
    """One :class:`ThresholdTightnessRow`."""
    fano = threshold_rate(n, kappa, delta)
    exact = optimal_rate(n, kappa, delta * kappa)
    bucket = bucket_ledger_for_mean_z(n, kappa, delta * kappa).rate_bits
    sufficient = bucket_sufficient_rate(n, kappa, delta)
    holds = fano <= exact + _SLACK and exact <= bucket + _SLACK and bucket <= sufficient + _SLACK
    return ThresholdTightnessRow(
        n=int(n), kappa=int(kappa), delta=float(delta), fano_rate=fano, exact_rate=exact,
        bucket_rate=bucket, sufficient_rate=sufficient, holds=holds,
    )


#: The default grids' rows, computed on first use (see :func:`_rows`).
_DEFAULT_ROWS: dict[tuple[str, Any], tuple[Any, ...]] = {}


def _rows(name: str, grid: Any, default: Any, row: Any, shape: str) -> list[Any]:
    """Validate one grid at the door (a non-empty sequence of triples) and
    compute its rows; a bad point is reported against the grid's name. The default
    grid's rows are computed once per process (they are frozen records of constants),
    so a call that omits a grid costs nothing after the first."""
    if grid is None:
        key = (name, row)
        if key not in _DEFAULT_ROWS:
            _DEFAULT_ROWS[key] = tuple(_rows(name, default, default, row, shape))
        return list(_DEFAULT_ROWS[key])
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise DomainError(name, grid, f"must be a sequence of {shape} triples",
                          f"pass e.g. [{shape}] or omit it for the default grid")
    points = list(grid)
    if not points:
        raise DomainError(name, grid, "must hold at least one point",
                          "omit it for the default grid (an empty grid has no maxima)")
    out = []
    for i, p in enumerate(points):
        if isinstance(p, (str, bytes)) or not isinstance(p, (Sequence, np.ndarray)) or len(p) != 3:
            raise DomainError(name, p, f"must contain {shape} triples",
                              f"point {i} is not a triple", context=f"point {i}")
        try:
            out.append(row(*(x.item() if isinstance(x, np.generic) else x for x in p)))
        except DomainError as exc:
            raise DomainError(name, tuple(p), f"has a point outside the domain: {exc}",
                              "drop or fix that point", context=f"point {i}") from None
    return out


def tightness_report(
    *,
    content_grid: Iterable[Sequence[float]] | None = None,
    makeroom_grid: Iterable[Sequence[float]] | None = None,
    threshold_grid: Iterable[Sequence[float]] | None = None,
) -> TightnessReport:
    """Compute the tightness findings (issue section 5).

    Parameters
    ----------
    content_grid : iterable of (n, kappa, sigma), optional
        Default :data:`DEFAULT_CONTENT_GRID` (27 points, n <= 8).
    makeroom_grid : iterable of (n, kappa, rate), optional
        Default :data:`DEFAULT_MAKEROOM_GRID`.
    threshold_grid : iterable of (n, kappa, delta), optional
        Default :data:`DEFAULT_THRESHOLD_GRID`.

    Returns
    -------
    TightnessReport
    """
    c_rows = tuple(_rows("content_grid", content_grid, DEFAULT_CONTENT_GRID, content_row,
                         "(n, kappa, sigma)"))
    m_rows = tuple(_rows("makeroom_grid", makeroom_grid, DEFAULT_MAKEROOM_GRID, makeroom_row,
                         "(n, kappa, rate)"))
    t_rows = tuple(_rows("threshold_grid", threshold_grid, DEFAULT_THRESHOLD_GRID,
                         threshold_row, "(n, kappa, delta)"))
    max_ratio = max((r.paper_bound / r.tight_bound for r in c_rows), default=math.nan)
    max_gap = max((r.gap for r in m_rows), default=math.nan)
    holds = all(r.holds for r in c_rows) and all(r.holds for r in m_rows) and all(
        r.holds for r in t_rows
    )
    return TightnessReport(
        content_rows=c_rows, makeroom_rows=m_rows, threshold_rows=t_rows,
        max_paper_over_tight=max_ratio, max_gap=max_gap, holds=holds,
    )
