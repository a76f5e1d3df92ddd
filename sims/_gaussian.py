"""Proposition 2's Gaussian size channel, evaluated exactly where it can be:
E[Z] under the Bayes order as a one-dimensional integral, and the rate
I(J*;W) by a variance-reduced Monte Carlo over the exact posterior.

Units: sizes in multiples of l, so W_j = ln s_j + sigma*eps_j with ln l = 0
and ln L = ln kappa; standardised, light blocks are N(0,1) and the bulky one
N(d,1) with d = ln(kappa)/sigma.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, special
from vistalab.theory._errors import DomainError
from vistalab.theory._validate import as_int, as_real

from ._seeding import (
    SeedInfo,
    block_sizes,
    root_seed,
    run_blocks,
    stream,
    trials_iv,
    workers_iv,
)

__all__ = [
    "RateEstimate",
    "gaussian_exact_mean_z",
    "gaussian_exact_z_tail",
    "estimate_gaussian_rate",
]

_LN2 = math.log(2.0)
# Gaussian weight beyond 12 standard deviations is below 1e-32.
_ZSPAN = 12.0
# Elements of the light-block matrix held at once by the rate estimator, and
# the segment length used when one trial alone is larger than that.
_RATE_CELLS = 1 << 18
_MAX_RATE_ROWS = 512
# Thresholds of the control variates (standardised light observations):
# capped exponential sums, which track the posterior's normaliser (counts
# above thresholds and the plain sum of W add nothing once these are in).
_CAP_T = (1.0, 2.0, 3.0, 4.0)
_CAPW_T = (2.0, 3.0, 4.0)
# Below this many trials no control variate is fitted (cross-fitting halves).
_MIN_CV_TRIALS = 40
# Relative singular-value cut-off of the control-variate regression.
_SVD_RTOL = 1e-6
# |t| beyond which the logistic is saturated to within exp(-40).
_T_SAT = 40.0
_N_CV = len(_CAP_T) + len(_CAPW_T)
# Largest n of the exact quadrature (checked against mpmath to 1e9; the log-space
# binomial sums stay accurate well beyond), and of the O(n)-per-trial estimator,
# whose total work trials * (n - 1) is bounded too so every call ends (about
# 2e6 light draws per second per core: 1e9 draws is minutes, not hours).
MAX_EXACT_N = 10**12
MAX_RATE_N = 10**9
MAX_RATE_DRAWS = 10**9


@dataclass(frozen=True)
class RateEstimate:
    """The rate I(J*;Y) of an interface, in bits.

    Attributes
    ----------
    bits : float
        Exact value or Monte Carlo estimate.
    se : float
        Standard error (0 when exact).
    trials : int
        Monte Carlo trials (0 when exact).
    exact : bool
        True when ``bits`` is a closed form.
    method : str
        How the value was obtained.
    seed_entropy : int or list of int or None
        Entropy of the seed used by the Monte Carlo (None when exact).
    """

    bits: float
    se: float
    trials: int
    exact: bool = True
    method: str = "closed form"
    seed_entropy: int | list[int] | None = None


def _gaussian_iv(
    n: Any, kappa: Any, sigma: Any, *, channel_only: bool = False
) -> tuple[int, int, float]:
    kappa = as_int("kappa", kappa, lo=2,
                   fix="kappa = L/l is the integer size ratio of the bulky block (>= 2)")
    if kappa > MAX_EXACT_N:
        raise DomainError("kappa", kappa, f"must be at most {MAX_EXACT_N:.0e}",
                          "kappa < n <= 1e12")
    if channel_only:  # the channel itself needs only two blocks
        n = as_int("n", n, lo=2, fix="the channel needs at least two blocks")
    else:
        n = as_int("n", n, lo=kappa + 1, rule="must be an integer with n >= kappa + 1",
                   context=f"kappa={kappa}",
                   fix="the working set holds the bulky block and at least kappa others")
    if n > MAX_EXACT_N:
        raise DomainError("n", n, f"must be at most {MAX_EXACT_N:.0e}",
                          "the quadrature is verified up to there")
    sigma = as_real("sigma", sigma, lo=0.0, lo_open=True,
                    fix="sigma is the standard deviation of the log-size noise (> 0)")
    return n, kappa, sigma


# ---------------------------------------------------------------------------
# Exact E[Z]
# ---------------------------------------------------------------------------


class _LightCount:
    """Law of C ~ Binomial(n-1, p) below kappa, accurate for n up to 1e9+.

    scipy's incomplete-beta routines lose about 1e-8 relative accuracy at
    n ~ 1e9, so for kappa <= 10**4 the probabilities P(C = c), c < kappa,
    are summed directly in log space:
    ``log P(C=c) = c log(m p) + sum_{i<c} log1p(-i/m) - log c! + (m-c) log1p(-p)``
    (m = n-1), with no large cancelling terms.
    """

    DIRECT_MAX = 10**4

    def __init__(self, n: int, kappa: int) -> None:
        self.m = n - 1
        self.kappa = kappa
        self.direct = kappa <= self.DIRECT_MAX
        if self.direct:
            c = np.arange(kappa, dtype=float)
            steps = np.log1p(-c / self.m)
            self.c = c
            self.lbin = np.concatenate([[0.0], np.cumsum(steps)[:-1]]) - special.gammaln(c + 1)

    def pmf_below(self, x: float) -> np.ndarray:
        """P(C = c) for c = 0..kappa-1 at p = P(N(0,1) > x)."""
        p = float(special.ndtr(-x))
        if p == 0.0:
            out = np.zeros(self.kappa)
            out[0] = 1.0
            return out
        if p == 1.0:  # every light block is above: C = m >= kappa
            return np.zeros(self.kappa)
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = self.c * math.log(self.m * p) + self.lbin + (self.m - self.c) * math.log1p(-p)
        return np.exp(lp)

    def capped_mean(self, x: float) -> float:
        """E[min(C, kappa)] = kappa - sum_{c<kappa} (kappa - c) P(C = c)."""
        if self.direct:
            return float(self.kappa - (self.kappa - self.c) @ self.pmf_below(x))
        # Large kappa: E[C 1{C <= kappa-1}] = m p P(Binom(m-1, p) <= kappa-2).
        p = special.ndtr(-x)
        low = self.m * p * special.bdtr(self.kappa - 2, self.m - 1, p)
        return float(low + self.kappa * special.bdtrc(self.kappa - 1, self.m, p))

    def tail(self, x: float, j: int) -> float:
        """P(C >= j) for 1 <= j <= kappa."""
        if self.direct:
            return float(max(0.0, 1.0 - self.pmf_below(x)[:j].sum()))
        return float(special.bdtrc(j - 1, self.m, special.ndtr(-x)))


def _breakpoints(n: int, kappa: int, d: float) -> list[float]:
    """Where the integrand changes character: the Gaussian bulk around d and
    the thresholds where the expected count of light blocks above x crosses
    0.01 ... 100 kappa (the binomial tail switches from 0 to kappa there)."""
    lo, hi = d - _ZSPAN, d + _ZSPAN
    pts = {lo, hi}
    for off in (-8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0):
        pts.add(d + off)
    for c in (1e-4, 1e-2, 0.1, 0.5, 1.0, 2.0, kappa / 2.0, kappa, 2.0 * kappa, 4.0 * kappa,
              10.0 * kappa, 100.0 * kappa):
        q = c / (n - 1)
        if q < 1.0:
            pts.add(float(-special.ndtri(q)))
    return sorted(x for x in pts if lo <= x <= hi)


def _integrate_bulky(fn: Any, n: int, kappa: int, d: float) -> float:
    pts = _breakpoints(n, kappa, d)
    total = 0.0
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        if b <= a:
            continue
        val, _ = integrate.quad(
            lambda x: math.exp(-0.5 * (x - d) ** 2) * float(fn(x)),
            a, b, epsabs=1e-11, epsrel=1e-10, limit=200,
        )
        total += val
    return total / math.sqrt(2.0 * math.pi)


def gaussian_exact_mean_z(n: int, kappa: int, sigma: float) -> float:
    """Exact E[Z] of the Gaussian channel under the Bayes order (W descending).

    ``E[Z] = sum_{m=1..kappa} P(at least m of the n-1 light blocks are
    observed above the bulky one)``, written as one integral over the bulky
    block's standardised observation x ~ N(d, 1) of
    ``E[min(Binomial(n-1, P(N(0,1) > x)), kappa)]``, integrated by adaptive
    quadrature on subintervals split where the tail switches. The binomial
    probabilities are summed directly in log space for kappa <= 1e4 (scipy's
    incomplete beta is only ~1e-8 accurate at n ~ 1e9); beyond that
    scipy.special.bdtr/bdtrc are used.

    Parameters
    ----------
    n : int
        Blocks, ``n >= kappa + 1`` (tested up to 1e9).
    kappa : int
        Size ratio, ``kappa >= 2``.
    sigma : float
        Log-size noise, ``sigma > 0``.

    Returns
    -------
    float
        E[Z], absolute error below 1e-8 (checked against mpmath at 30 digits
        for n up to 1e9).
    """
    n, kappa, sigma = _gaussian_iv(n, kappa, sigma)
    d = math.log(kappa) / sigma
    return _integrate_bulky(_LightCount(n, kappa).capped_mean, n, kappa, d)


def gaussian_exact_z_tail(n: int, kappa: int, sigma: float) -> np.ndarray:
    """``P(Z >= m)`` for m = 1..kappa under the Bayes order (one integral each).

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l.
    sigma : float
        Standard deviation of the content channel's log-size noise.

    Returns
    -------
    numpy.ndarray
        Length-kappa array, non-increasing; its sum is
        :func:`gaussian_exact_mean_z`.
    """
    n, kappa, sigma = _gaussian_iv(n, kappa, sigma)
    d = math.log(kappa) / sigma
    count = _LightCount(n, kappa)
    out = np.empty(kappa)
    for m in range(1, kappa + 1):
        out[m - 1] = _integrate_bulky(lambda x, m=m: count.tail(x, m), n, kappa, d)
    return out


# ---------------------------------------------------------------------------
# Rate I(J*;W)
# ---------------------------------------------------------------------------


def _cv_means(d: float) -> np.ndarray:
    """Exact per-block means of the control-variate summands (light blocks)."""
    out: list[float] = []
    for c in _CAP_T:
        # E[exp(d (min(W,c) - c))] = e^{d^2/2 - dc} Phi(c-d) + P(W > c)
        out.append(math.exp(0.5 * d * d - d * c + special.log_ndtr(c - d)) + special.ndtr(-c))
    for c in _CAPW_T:
        # E[min(W,c) exp(d(min(W,c)-c))] = e^{d^2/2-dc}(d Phi(c-d) - phi(c-d)) + c P(W>c)
        head = d * math.exp(0.5 * d * d - d * c + special.log_ndtr(c - d))
        head -= math.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
        out.append(head + c * special.ndtr(-c))
    return np.array(out)


def _cv_sums(w: np.ndarray, d: float, e: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Row sums of the control-variate summands, shape (rows, _N_CV).

    ``e = exp(d w - shift[:, None])`` is reused: since exp is increasing,
    ``exp(d (min(w, c) - c)) = min(e, exp(d c - shift)) * exp(shift - d c)``,
    which saves one exponential per threshold. That rescaling is exact in
    floating point only while both factors stay representable, i.e.
    ``|shift - d c| < 600`` in every row; ``shift`` is ``d`` times the largest
    light observation, which the importance proposal can put far above ``c``
    when ``d`` is large (ln(kappa)/sigma ~ 20 gave inf * 0 = NaN).
    Otherwise the summands, each in (0, 1], are formed directly.
    """
    cols: list[np.ndarray] = []
    caps: dict[float, np.ndarray] = {}
    capws: dict[float, np.ndarray] = {}
    # Two scratch arrays reused for every threshold (the same operations as
    # forming fresh temporaries, so the same bits, without the allocations).
    capped, tmp = np.empty_like(e), np.empty_like(e)
    for c in sorted(set(_CAP_T) | set(_CAPW_T)):
        gap = shift - d * c
        if np.all(np.abs(gap) < 600.0):
            np.minimum(e, np.exp(-gap)[:, None], out=capped)
            back = np.exp(gap)
            cap = capped.sum(axis=1) * back
            np.minimum(w, c, out=tmp)
            tmp *= capped
            capw = tmp.sum(axis=1) * back
        else:
            x = np.minimum(w, c)
            ex = np.exp(d * (x - c))
            cap, capw = ex.sum(axis=1), (x * ex).sum(axis=1)
        caps[c], capws[c] = cap, capw
    cols += [caps[c] for c in _CAP_T] + [capws[c] for c in _CAPW_T]
    return np.column_stack(cols)


class _LightSums:
    """Streaming log-sum-exp of d*W over the light blocks of each row,
    with the posterior-weighted sum of W and the control-variate sums."""

    def __init__(self, rows: int, d: float) -> None:
        self.d = d
        self.shift = np.full(rows, -np.inf)
        self.s = np.zeros(rows)
        self.m = np.zeros(rows)
        self.cv = np.zeros((rows, _N_CV))

    def add(self, w: np.ndarray) -> None:
        e = self.d * w
        new = np.maximum(self.shift, e.max(axis=1))
        scale = np.exp(self.shift - new)
        e -= new[:, None]  # in place: e = exp(d w - new), as exp(a - new) with a = d w
        np.exp(e, out=e)
        self.s = self.s * scale + e.sum(axis=1)
        ew = np.multiply(e, w)
        self.m = self.m * scale + ew.sum(axis=1)
        del ew
        self.shift = new
        self.cv += _cv_sums(w, self.d, e, new)


def _z_grid(d: float) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes/weights for E[f(m + d Z)], Z ~ N(0,1).

    The integrands (logistic and binary entropy of the logistic) are analytic
    in a strip of half-width pi/d, so spacing h with d*h <= 0.5 makes the
    trapezoid error of order exp(-2 pi^2/(d h)) < 1e-17.
    """
    h = min(0.25, 0.5 / d)
    k = int(math.ceil(_ZSPAN / h))
    z = np.arange(-k, k + 1) * h
    w = np.exp(-0.5 * z * z)
    return z, w / w.sum()


def _entropy_given_lights(ln_s: np.ndarray, mu: np.ndarray, d: float) -> np.ndarray:
    """E[H(posterior) | light blocks] in nats, integrating the bulky block out.

    With q the bulky block's posterior mass, H = H_b(q) + (1-q) H_L where
    H_L = ln S - d mu is the entropy of the light-only posterior, and
    q = logistic(t) with t = d X - ln S = m + d Z, m = d^2 - ln S.

    Only the trapezoid nodes with |t| <= 40 are evaluated: beyond them q is
    0 or 1 and H_b(q) is 0 to within 1e-16, so the skipped nodes contribute
    their weights (to E[q], right of the window) exactly as the full rule.
    """
    z, wz = _z_grid(d)
    h = z[1] - z[0]
    tail = np.concatenate([np.cumsum(wz[::-1])[::-1], [0.0]])  # tail[i] = sum(wz[i:])
    # d*h is tiny (even 0) when sigma ~ 1e308: then the whole grid is the window
    if d * h * z.size > 2.0 * _T_SAT:
        width = min(z.size, int(math.ceil(2.0 * _T_SAT / (d * h))) + 2)
    else:
        width = z.size
    h_l = ln_s - d * mu
    m = d * d - ln_s
    if width == z.size:
        out = np.empty_like(ln_s)
        step = max(1, (1 << 20) // z.size)
        for a in range(0, ln_s.size, step):
            t = m[a:a + step, None] + d * z[None, :]
            at = np.abs(t)
            hb = np.log1p(np.exp(-at)) + at * special.expit(-at)
            out[a:a + step] = h_l[a:a + step] * (1.0 - special.expit(t) @ wz) + hb @ wz
        return out
    start = np.clip(np.floor((-_T_SAT - m) / d / h - z[0] / h).astype(np.int64), 0,
                    z.size - width)
    cols = start[:, None] + np.arange(width)[None, :]
    t = m[:, None] + d * z[cols]
    wt = wz[cols]
    at = np.abs(t)
    q = special.expit(t)
    hb = np.log1p(np.exp(-at)) + at * special.expit(-at)
    mean_q = (q * wt).sum(axis=1) + tail[start + width]
    mean_hb = (hb * wt).sum(axis=1)
    return h_l * (1.0 - mean_q) + mean_hb


def _top_light_law(lights: int, d: float) -> tuple[float, float]:
    """Centre and spread of the defensive proposal for the largest light
    observation: from its typical value up to the bulky block's mean d, where
    a light block competes with the bulky one."""
    typical = float(-special.ndtri(-math.expm1(math.log(0.5) / lights)))
    return 0.5 * (typical + d), max(1.0, 0.5 * (d - typical))


def _draw_top_light(
    gen: np.random.Generator, rows: int, lights: int, d: float
) -> tuple[np.ndarray, np.ndarray]:
    """The largest of ``lights`` N(0,1) observations, drawn by defensive
    importance sampling, and its likelihood ratio.

    With probability 1/2 it comes from its true law (density
    ``L phi(m) Phi(m)^(L-1)``), otherwise from a normal proposal covering the
    range where a light block can compete with the bulky one; the weight
    ``p / (p/2 + r/2)`` is at most 2. Without this, the rare trials in which a
    light block is observed near the bulky one are missed by small runs and
    the standard error is then too optimistic.
    """
    centre, spread = _top_light_law(lights, d)
    from_law = gen.random(rows) < 0.5
    u = gen.random(rows)
    z = gen.standard_normal(rows)
    # max of L uniforms is u^(1/L); invert Phi near 1 through its complement.
    m_law = -special.ndtri(-np.expm1(np.log(u) / lights))
    top = np.where(from_law, m_law, centre + spread * z)
    log_p = (math.log(lights) - 0.5 * top * top - 0.5 * math.log(2 * math.pi)
             + (lights - 1) * special.log_ndtr(top))
    log_r = -0.5 * ((top - centre) / spread) ** 2 - math.log(spread) - 0.5 * math.log(2 * math.pi)
    with np.errstate(over="ignore"):
        weight = 1.0 / (0.5 + 0.5 * np.exp(log_r - log_p))
    return top, weight


def _below(gen: np.random.Generator, top: np.ndarray, cols: int) -> np.ndarray:
    """``cols`` N(0,1) observations per row conditioned to lie below ``top``."""
    # In the log domain: far below zero ndtr(top) underflows to 0 and ndtri(0)
    # is -inf (the proposal can put ``top`` there when d is large).
    log_cap = special.log_ndtr(top)[:, None]
    out = gen.random((top.size, cols))
    np.log(out, out=out)  # in place, the same values as ndtri_exp(log(u) + log_cap)
    out += log_cap
    return special.ndtri_exp(out, out=out)


def _rate_block(
    seed: SeedInfo, i: int, rows: int, n: int, d: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial weighted rate samples (bits) and centred control variates
    (the weighted light sums and the weight itself) for one block."""
    gen_top, gen_rest = stream(seed, i, 0), stream(seed, i, 1)
    lights = n - 1
    top, weight = _draw_top_light(gen_top, rows, lights, d)
    acc = _LightSums(rows, d)
    acc.add(top[:, None])
    rest = lights - 1
    if rest > 0 and rows * rest <= _RATE_CELLS:
        acc.add(_below(gen_rest, top, rest))
    elif rest > 0:  # one trial per block, drawn in fixed segments
        for start in range(0, rest, _RATE_CELLS):
            acc.add(_below(gen_rest, top, min(_RATE_CELLS, rest - start)))
    ln_s = np.log(acc.s) + acc.shift
    mu = acc.m / acc.s
    h = _entropy_given_lights(ln_s, mu, d)
    y = weight * (math.log(n) - h) / _LN2
    sums = (weight[:, None] * acc.cv - lights * _cv_means(d)) / math.sqrt(lights)
    return y, np.column_stack([sums, weight - 1.0])


def estimate_gaussian_rate(
    n: int, kappa: int, sigma: float, *, trials: int, rng: Any = None, workers: int = 1,
) -> RateEstimate:
    """Monte Carlo estimate of ``I(J*;W)`` for Proposition 2's channel.

    ``I = log2 n - E[H(J* | W)]``; by symmetry condition on J* = 1. Each
    trial draws the n-1 light observations (the largest one by defensive
    importance sampling, weight <= 2, the others below it from their exact
    conditional law), integrates the bulky block's observation out exactly
    (a one-dimensional Gaussian integral of the posterior entropy), and the
    weighted per-trial values are corrected with eight control variates of
    known mean (the weight, and capped exponential sums of the light
    observations), cross-fitted so the standard error is honest.

    Parameters
    ----------
    n : int
        Blocks, ``n >= 2`` (the channel does not need the make-room domain).
        Cost is O(n) per trial; memory is bounded.
    kappa : int
        Size ratio, ``kappa >= 2``.
    sigma : float
        Log-size noise, ``sigma > 0``.
    trials : int
        Monte Carlo trials, ``>= 2``.
    rng : None, int, SeedSequence or Generator
        Seed; the estimate depends only on it, ``trials`` and the instance.
    workers : int
        Threads (does not change the result).

    Returns
    -------
    RateEstimate
    """
    n, kappa, sigma = _gaussian_iv(n, kappa, sigma, channel_only=True)
    trials = trials_iv(trials, lo=2, fix="the standard error needs at least 2 trials")
    if n > MAX_RATE_N:
        raise DomainError("n", n, f"must be <= {MAX_RATE_N:.0e} for the Monte Carlo rate",
                          "the estimator draws n-1 observations per trial; use "
                          "theory.content_rate_exact (exact quadrature) instead")
    if trials * (n - 1) > MAX_RATE_DRAWS:
        raise DomainError("trials", trials, f"must keep trials * (n-1) <= {MAX_RATE_DRAWS:.0e} "
                          "light draws", "use fewer trials or theory.content_rate_exact",
                          context=f"n={n}")
    workers = workers_iv(workers)
    d = math.log(kappa) / sigma
    seed = root_seed(rng)
    rows = max(1, min(_MAX_RATE_ROWS, _RATE_CELLS // (n - 1)))
    sizes = block_sizes(trials, rows)
    parts = run_blocks(lambda i, r: _rate_block(seed, i, r, n, d), sizes, workers=workers)
    y = np.concatenate([p[0] for p in parts])
    cv = np.concatenate([p[1] for p in parts])
    if n == 2:
        # One light block: the light sums are functions of one number and the
        # regression over-fits its tails; keep only the weight.
        cv = cv[:, -1:]
    bits, se, method = _cv_estimate(y, cv)
    top = math.log2(n)
    return RateEstimate(bits=min(max(bits, 0.0), top), se=se, trials=trials, exact=False,
                        method=method, seed_entropy=seed.entropy)


def _fit_cv(y: np.ndarray, cv: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on the centred control variates.

    Columns that are constant in the sample are dropped; a truncated SVD keeps
    near-collinear directions (e.g. a single light block) from getting huge,
    noisy coefficients.
    """
    cc = cv - cv.mean(axis=0)
    scale = np.abs(cc).max(axis=0)
    # A column constant in the sample centres to round-off, not to zero.
    live = scale > 1e-9 * np.abs(cv).max(axis=0)
    beta = np.zeros(cv.shape[1])
    if not np.any(live):
        return beta
    ccs = cc[:, live] / scale[live]
    u, sv, vt = np.linalg.svd(ccs, full_matrices=False)
    keep = sv > _SVD_RTOL * sv[0]
    u, sv, vt = u[:, keep], sv[keep], vt[keep]
    beta[live] = (vt.T @ ((u.T @ (y - y.mean())) / sv)) / scale[live]
    return beta


def _cv_estimate(y: np.ndarray, cv: np.ndarray) -> tuple[float, float, str]:
    """Control-variate estimate of E[y] (E[cv] = 0 exactly) and its SE.

    Cross-fitted: the coefficients used on the even trials are fitted on the
    odd ones and vice versa, so every corrected value ``y_i - cv_i beta`` has
    mean E[y] exactly and the standard error is the plain one of those
    values (no in-sample over-fitting, which otherwise makes the error bar
    too small when the variates explain y almost perfectly).
    """
    t = y.size
    if t < _MIN_CV_TRIALS:
        return float(y.mean()), float(y.std(ddof=1) / math.sqrt(t)), "conditional Monte Carlo"
    if t < 20 * (cv.shape[1] + 1):
        # Too few trials for every variate: keep the last one (the weight).
        cv = cv[:, -1:]
    z = np.empty_like(y)
    folds = (np.arange(t) % 2).astype(bool)
    for fit, use in ((folds, ~folds), (~folds, folds)):
        z[use] = y[use] - cv[use] @ _fit_cv(y[fit], cv[fit])
    return (float(z.mean()), float(z.std(ddof=1) / math.sqrt(t)),
            "conditional Monte Carlo with cross-fitted control variates")
