"""Proposition 1 beyond the paper: the converse with Fano's ``h(p)`` and
``log2(2^k - 1)`` kept (an implicit bound, never weaker than B/(Nk) + 1/k),
and the exact optimal success probability for small instances.

**Sharper converse.** Blocks X_1..X_N are independent and uniform on
``{0,1}^k``; the prompt state R has ``H(R) <= B``; the answer to target i is
a function of (R, i), with error ``p_i``. Fano per block gives
``H(X_i|R) <= f(p_i)``, ``f(p) = h(p) + p log2(2^k - 1)``, so
``I(X_i;R) >= k - f(p_i)``. Independence gives
``sum_i I(X_i;R) <= I(X^N;R) <= H(R) <= B``; f is concave, so with
``pbar = (1/N) sum_i p_i``, ``sum_i f(p_i) <= N f(pbar)`` and

    N [k - f(pbar)] <= B.

f increases on ``[0, 1 - 2^-k]`` from 0 to k, so ``pbar >= p_lo``, the
smallest p there with ``f(p) >= k - B/N``, and the success probability is
at most ``1 - p_lo``. **Never weaker:** ``h(p) <= 1`` and
``log2(2^k - 1) < k`` give ``f(p) <= 1 + pk``, so every p allowed by the new
constraint satisfies ``k - 1 - pk <= B/N``, i.e. ``1 - p <= B/(Nk) + 1/k``.

**Exact optimum.** For a state alphabet of size M (so ``H(R) <= log2 M``)
the success probability is linear in the channel P(r|x) for a fixed decoder,
and the best decoder's value is a maximum of linear functions, hence convex
in the channel: its maximum over the channel polytope is at a vertex, a
deterministic state map ``g``. Given g, the best answer to target t in cell
r is the most frequent value of x_t there, so the optimum is

    max over partitions of {0,1}^{Nk} into <= M cells of
    (1 / (N 2^{Nk})) sum_cells sum_t max_a #{x in cell : x_t = a},

computed here by enumerating set partitions (restricted growth strings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from vistalab._core import PlainRecord

from ._bounds import _recovery_iv, recovery_success_bound
from ._errors import DomainError
from ._validate import MAX_SIZE, as_int

__all__ = [
    "recovery_success_bound_sharp",
    "recovery_exact_optimum",
    "RecoveryOptimum",
    "RECOVERY_EXACT_MAX_STRINGS",
]

#: Largest 2^(N k) for which :func:`recovery_exact_optimum` enumerates all
#: partitions into any number of cells; with M = 2 the limit is 2^16.
RECOVERY_EXACT_MAX_STRINGS = 8

_LN2 = math.log(2.0)
# Largest k of the sharp bound: its bisection carries k*log10(2) + 50 digits.
_SHARP_MAX_K = 10**4


def _kl_to_blind(p: Any, k: int, mp: Any) -> Any:
    """``k - h(p) - p log2(2^k - 1) = KL(Bern(p) || Bern(1 - 2^-k))`` in bits (mpmath)."""
    q = 1 - mp.mpf(2) ** -k
    out = (1 - p) * mp.log((1 - p) / (1 - q))
    if p > 0:
        out += p * mp.log(p / q)
    return out / mp.ln2


def recovery_success_bound_sharp(N: int, k: int, budget: float) -> float:
    """Implicit Proposition 1 bound from ``N[k - h(pbar) - pbar log2(2^k-1)] <= B``.

    ``k - h(p) - p log2(2^k-1)`` is ``KL(Bern(p) || Bern(1 - 2^-k))`` in bits,
    so the constraint reads ``KL(pbar || 1 - 2^-k) <= B/N``: the average
    error's divergence from blind guessing is at most B/N bits. The smallest
    such ``pbar`` is found by bisection at 50 digits (the KL is flat near its
    zero, so doubles would lose half the digits).

    Parameters
    ----------
    N : int
        Evidence blocks (>= 1).
    k : int
        Bits per block (>= 1).
    budget : float
        ``B >= 0`` bits, the cap on ``H(R)``.

    Returns
    -------
    float
        Upper bound on the success probability of any non-recovering method,
        in ``[2^-k, 1]``, rounded up; never above
        ``min(1, recovery_success_bound(N, k, budget))``.
    """
    N, k, budget = _recovery_iv(N, k, budget)
    if budget >= N * k:
        return 1.0
    if k > _SHARP_MAX_K:
        raise DomainError("k", k, f"must be at most {_SHARP_MAX_K} for the sharp bound",
                          "use recovery_success_bound (Proposition 1's closed form) beyond")
    mp = mpmath.MPContext()
    # 1 - 2^-k must differ from 1 at the working precision (it did not at k >= 167
    # with 50 digits: ZeroDivisionError, found by an audit)
    mp.dps = 50 + int(math.ceil(k * math.log10(2.0)))
    rhs = mp.mpf(budget) / N
    lo, hi = mp.mpf(0), 1 - mp.mpf(2) ** -k  # KL(lo) >= B/N >= KL(hi) = 0
    if _kl_to_blind(lo, k, mp) <= rhs:
        return 1.0
    for _ in range(170):
        mid = (lo + hi) / 2
        if _kl_to_blind(mid, k, mp) > rhs:
            lo = mid
        else:
            hi = mid
    # lo violates the constraint, so pbar > lo and success < 1 - lo
    sharp = min(1.0, float(1 - lo) + 1e-15)
    return min(sharp, max(2.0**-k, min(1.0, recovery_success_bound(N, k, budget))))


@dataclass(frozen=True)
class RecoveryOptimum(PlainRecord):
    """Exact optimal success on T_{N,k} with a state alphabet of size M.

    Attributes
    ----------
    N, k, M : int
        Instance and state alphabet size.
    budget : float
        ``log2 M``, the entropy budget the bounds are evaluated at.
    optimum : float
        Best success probability over all state maps (exact rational as float).
    optimum_fraction : tuple of int
        ``(numerator, denominator)`` of the optimum.
    sharp_bound, paper_bound : float
        :func:`recovery_success_bound_sharp` and ``min(1, B/(Nk) + 1/k)``.
    sharp_gap, paper_gap : float
        Bound minus optimum (>= 0).
    cells : tuple of int
        An optimal state map, as the cell index of each string x (x read as
        an integer, block 0 in the low bits).
    """

    N: int
    k: int
    M: int
    budget: float
    optimum: float
    optimum_fraction: tuple[int, int]
    sharp_bound: float
    paper_bound: float
    sharp_gap: float
    paper_gap: float
    cells: tuple[int, ...]


def _cell_values(N: int, k: int) -> np.ndarray:
    """``v(S) = sum_t max_a #{x in S: x_t = a}`` for every subset mask S."""
    size = 1 << (N * k)
    masks = np.arange(1 << size, dtype=np.int64)
    x = np.arange(size)
    total = np.zeros(masks.size, dtype=np.int64)
    for t in range(N):
        vals = (x >> (t * k)) & ((1 << k) - 1)
        best = np.zeros(masks.size, dtype=np.int64)
        for a in range(1 << k):
            members = np.flatnonzero(vals == a)
            cls = int(sum(1 << int(i) for i in members))
            cnt = _popcount(masks & cls)
            best = np.maximum(best, cnt)
        total += best
    return total


def _popcount(a: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    b = a.copy()
    while np.any(b):
        out += b & 1
        b >>= 1
    return out


def _partitions(size: int, max_blocks: int) -> Any:
    """Restricted growth strings of length ``size`` with <= max_blocks blocks."""
    rgs = [0] * size

    def rec(i: int, used: int) -> Any:
        if i == size:
            yield rgs
            return
        for b in range(min(used + 1, max_blocks)):
            rgs[i] = b
            yield from rec(i + 1, max(used, b + 1))

    yield from rec(1, 1)


def recovery_exact_optimum(N: int, k: int, M: int) -> RecoveryOptimum:
    """Exact optimal success probability over state maps with ``|R| <= M``.

    Parameters
    ----------
    N, k : int
        Instance, with ``2^(N k) <= 8`` for any M, or ``2^(N k) <= 16`` when
        ``M <= 2`` or ``M >= 2^(N k)``.
    M : int
        State alphabet size (>= 1).

    Returns
    -------
    RecoveryOptimum
    """
    N = as_int("N", N, lo=1, hi=MAX_SIZE, fix="the history holds at least one evidence block")
    k = as_int("k", k, lo=1, hi=MAX_SIZE, fix="each evidence block has at least one bit")
    M = as_int("M", M, lo=1, hi=MAX_SIZE, fix="the state alphabet has at least one symbol")
    size = 1 << (N * k) if N * k <= 8 else None
    if size is None or size > 16 or (size > RECOVERY_EXACT_MAX_STRINGS and 2 < M < size):
        from ._errors import DomainError

        raise DomainError(
            "N, k", (N, k),
            f"must satisfy 2^(N k) <= {RECOVERY_EXACT_MAX_STRINGS} (or <= 16 with M <= 2)",
            "exact optimisation enumerates set partitions of the 2^(N k) histories",
            context=f"M={M}",
        )
    denom = N * size
    if M >= size:
        best_val, best_cells = denom, tuple(range(size))
    else:
        values = _cell_values(N, k)
        best_val, best_cells = -1, ()
        for rgs in _partitions(size, M):
            masks = [0] * M
            for i, b in enumerate(rgs):
                masks[b] |= 1 << i
            val = int(sum(int(values[m]) for m in masks))
            if val > best_val:
                best_val, best_cells = val, tuple(rgs)
    frac = math.gcd(best_val, denom)
    budget = math.log2(M)
    opt = best_val / denom
    sharp = recovery_success_bound_sharp(N, k, budget)
    paper = min(1.0, recovery_success_bound(N, k, budget))
    return RecoveryOptimum(
        N=N, k=k, M=M, budget=budget, optimum=opt,
        optimum_fraction=(best_val // frac, denom // frac), sharp_bound=sharp,
        paper_bound=paper, sharp_gap=sharp - opt, paper_gap=paper - opt, cells=best_cells,
    )
