"""Theorem 1 beyond the paper: the list-Fano bound with ``H(E) = h(P_c)`` kept
exact, and the exact smallest constant ``c*`` in ``kappa[1 - (I+c)/nu]_+``.

**Sharp per-prefix bound.** Let ``P_c(m) = P(rank of J* <= m)`` for an order
chosen from (Y, U). Lemma 1's proof with the flag ``E = 1{J* in first m}``
gives, before bounding ``H(E) <= 1``,

    log2 n - I <= h(P_c) + P_c log2 m + (1 - P_c) log2(n - m).

The right side ``g_m(p)`` is concave in p with maximum ``log2 n`` at
``p = m/n``, so it decreases on ``[m/n, 1]``; hence ``P_c(m) <= p_m``, the
largest ``p`` in ``[m/n, 1]`` with ``g_m(p) >= log2 n - I`` (if
``P_c(m) <= m/n`` the claim is trivial). Prefix lists are nested, so
``P_c(m) <= min_{m' >= m} p_{m'}``, and ``E[Z] = sum_{m=1..kappa} P(Z >= m)
= sum_m (1 - P_c(m))`` gives

    E[Z] >= sum_{m=1..kappa} (1 - min_{m' >= m} p_{m'}).

As ``h <= 1``, ``p_m`` is at most the ``+1`` version's root, so this is
never below :func:`list_fano_mean_z_bound`.

**The joint constraint.** All prefix lists come from one order, so the
constraints are coupled: the rank law q of J* must satisfy
``H(q) >= log2 n - I`` as a whole (FRONTIER.md, converse), which is stronger
than each prefix's two-cell coarsening ``h(P_c(m)) + ...``. Taking the joint
constraint exactly gives the frontier itself (:func:`optimal_mean_z`); the
per-prefix bound is its relaxation to one prefix at a time.

**The exact smallest constant.** ``kappa[1-(I+c)/nu]_+ <= D*(I)`` for all I
iff ``c >= sup_I [nu (1 - D*(I)/kappa) - I] = sup_D [nu(1 - D/kappa) - R*(D)]``.
``R*`` is convex in D with slope ``dR*/dD = -lam/ln 2`` along the Gibbs family,
so the concave objective is stationary at ``lam* = ln 2 nu / kappa =
ln((n-kappa)/kappa)/kappa``:

    c*(n, kappa) = nu (1 - D(lam*)/kappa) - R(lam*),

a closed form (one Gibbs evaluation, no search). At kappa = 2 it tends to
``log2(3/2)`` as n grows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._bounds import _log2_ratio, _makeroom_iv, _rate_iv
from ._frontier import _Family
from ._validate import as_int

__all__ = ["sharp_pc_bound", "sharp_mean_z_bound", "sharp_constant", "SHARP_KAPPA_MAX"]

#: Largest kappa for :func:`sharp_mean_z_bound` (a vector of kappa roots).
SHARP_KAPPA_MAX = 10**7

_LN2 = math.log(2.0)


def _h2(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -(p * np.log2(p)) - (1.0 - p) * np.log1p(-p) / _LN2
    return np.where((p <= 0.0) | (p >= 1.0), 0.0, out)


def _margin(p: np.ndarray, m: np.ndarray, n: int, rate: float) -> np.ndarray:
    """``g_m(p) - (log2 n - I)`` written without cancelling large logs:
    ``h(p) + (1-p) log2(1 - m/n) - p log2(n/m) + I``."""
    return (
        _h2(p)
        + (1.0 - p) * np.log1p(-m / n) / _LN2
        - p * np.log2(n / m)
        + rate
    )


def _pc_roots(n: int, ms: np.ndarray, rate: float) -> np.ndarray:
    """Largest p in [m/n, 1] with margin >= 0, for each m (vector bisection).

    Returns the upper end of the final bracket (margin < 0 beyond it), nudged
    up by 1e-13 so float rounding in the margin cannot make it too small.
    """
    ms = ms.astype(float)
    lo = ms / n
    hi = np.ones_like(lo)
    done = _margin(hi, ms, n, rate) >= 0.0  # even p = 1 is allowed
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        ok = _margin(mid, ms, n, rate) >= 0.0
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(done, 1.0, np.minimum(1.0, hi + 1e-13))


def sharp_pc_bound(n: int, m: int, rate: float) -> float:
    """Lemma 1 with ``H(E) = h(P_c)`` kept: the largest possible ``P_c`` of a size-m list.

    Parameters
    ----------
    n : int
        Alphabet size of J* (n >= 2).
    m : int
        List size, ``1 <= m <= n - 1``.
    rate : float
        ``I(J*;Y)`` bits, ``0 <= rate <= log2 n``.

    Returns
    -------
    float
        The largest ``p`` in ``[m/n, 1]`` with
        ``h(p) + p log2 m + (1-p) log2(n-m) >= log2 n - I`` (rounded up).
        At most :func:`list_fano_pc_bound` (plus 1e-12).
    """
    n = as_int("n", n, lo=2, fix="J* needs at least two values")
    m = as_int(
        "m", m, lo=1, hi=n - 1, rule="must be an integer list size with 1 <= m <= n-1",
        context=f"n={n}", fix="pick a list strictly smaller than the alphabet",
    )
    rate = _rate_iv(rate, n)
    return float(_pc_roots(n, np.array([m]), rate)[0])


def _sharp_iv(n: Any, kappa: Any, rate: Any) -> tuple[int, int, float]:
    n, kappa = _makeroom_iv(n, kappa)
    kappa = as_int(
        "kappa", kappa, hi=SHARP_KAPPA_MAX,
        rule=f"must be <= {SHARP_KAPPA_MAX} for the per-prefix bound",
        fix="use list_fano_mean_z_bound or optimal_mean_z for larger kappa",
    )
    return n, kappa, _rate_iv(rate, n)


def sharp_mean_z_bound(n: int, kappa: int, rate: float) -> float:
    """Theorem 1 with Lemma 1's ``H(E) = h(P_c)`` kept at every prefix size.

    ``E[Z] >= sum_{m=1..kappa} (1 - min_{m'>=m} sharp_pc_bound(n, m', I))``
    (module docstring). Valid for every interface of rate <= I; never below
    :func:`list_fano_mean_z_bound`, never above :func:`optimal_mean_z`.

    Parameters
    ----------
    n : int
        Blocks.
    kappa : int
        Size ratio, ``2 <= kappa < n/2``, ``kappa <= 1e7``.
    rate : float
        ``0 <= rate <= log2 n`` bits.

    Returns
    -------
    float
        The lower bound on E[Z].
    """
    n, kappa, rate = _sharp_iv(n, kappa, rate)
    roots = _pc_roots(n, np.arange(1, kappa + 1), rate)
    env = np.minimum.accumulate(roots[::-1])[::-1]  # min over m' >= m
    return float(np.sum(1.0 - env))


def sharp_constant(n: int, kappa: int) -> float:
    """Exact smallest ``c`` with ``kappa[1-(I+c)/nu]_+ <= optimal_mean_z(n, kappa, I)``, all I.

    ``c* = nu (1 - D(lam*)/kappa) - R(lam*)`` at ``lam* = ln((n-kappa)/kappa)/kappa``
    on the Gibbs family (module docstring). Theorem 1's constant is 1.

    Parameters
    ----------
    n : int
        Blocks.
    kappa : int
        Size ratio, ``2 <= kappa < n/2``.

    Returns
    -------
    float
        ``c*(n, kappa)`` in bits.
    """
    n, kappa = _makeroom_iv(n, kappa)
    fam = _Family(n, kappa, 40 + math.ceil(math.log10(n)))
    c = fam.ctx
    lam = c.log(c.mpf(n - kappa) / kappa) / kappa
    ln_z, mean, _ = fam.state(lam)
    rate_bits = (fam.ln_n - ln_z - lam * mean) / c.ln2
    nu = c.log(c.mpf(n - kappa) / kappa) / c.ln2
    return float(nu * (1 - mean / kappa) - rate_bits)


def _nu(n: int, kappa: int) -> float:
    return _log2_ratio(n - kappa, kappa)
