"""Closed forms of Proposition 1, Proposition 2, Lemma 1 and Theorem 1
(theory/_bounds.py) against independent computations: exact rationals,
mpmath at high precision, and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from vistalab.theory import (
    DomainError,
    HandleCostModel,
    asymptotic_separation,
    blind_mean_z,
    bucket_ledger,
    bucket_ledger_for_mean_z,
    bucket_sufficient_rate,
    content_rate_bound,
    content_rate_bound_tight,
    list_fano_pc_bound,
    makeroom_lower_bound,
    makeroom_nu,
    price_per_bit,
    rate_needed_for_reduction,
    recovery_feasibility,
    recovery_success_bound,
    threshold_rate,
)

from vistalab import theory

TOL = 1e-9
MP = mpmath.MPContext()
MP.dps = 50


def makeroom_instance(max_n: int = 400):
    """(n, kappa) with 2 <= kappa < n/2."""
    return st.integers(5, max_n).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(2, (n - 1) // 2))
    )


# ---------------------------------------------------------------------------
# Proposition 1
# ---------------------------------------------------------------------------


@given(st.integers(1, 10**6), st.integers(1, 10**4), st.integers(0, 10**9))
def test_recovery_bound_matches_exact_rational(N, k, B):
    """Proposition 1: B/(Nk) + 1/k, checked in exact rational arithmetic."""
    exact = Fraction(B, N * k) + Fraction(1, k)
    assert recovery_success_bound(N, k, B) == pytest.approx(float(exact), rel=1e-15)


def _best_lossy_success(N: int, k: int, M: int) -> Fraction:
    """Best success over every deterministic state R = f(X) with <= M values
    (so H(R) <= log2 M) and the best decoder g(R, i), by enumeration."""
    blocks = list(itertools.product(range(2**k), repeat=N))
    best = Fraction(0)
    for f in itertools.product(range(M), repeat=len(blocks)):
        hits = 0
        for r in range(M):
            cell = [x for x, fx in zip(blocks, f, strict=True) if fx == r]
            for i in range(N):
                if cell:
                    hits += max(sum(1 for x in cell if x[i] == v) for v in range(2**k))
        best = max(best, Fraction(hits, len(blocks) * N))
    return best


def test_recovery_bound_holds_on_exhaustive_instance():
    """Proposition 1 on T_{2,2} with a one-bit state: the best lossy method,
    found by enumerating all 2^16 compressors, stays below B/(Nk) + 1/k."""
    best = _best_lossy_success(N=2, k=2, M=2)
    bound = recovery_success_bound(2, 2, math.log2(2))
    assert best <= Fraction(bound)
    # and the enumeration is not vacuous: one bit beats blind guessing (2^-k)
    assert best > Fraction(1, 2**2)


@given(st.integers(1, 10**5), st.integers(1, 10**3), st.floats(0, 1e7), st.floats(0, 8),
       st.floats(0, 1e4))
def test_feasibility_accounts_instruction_handles_and_one_block(N, k, B, c0, instr):
    """Proposition 1, achievability: VISTA fits iff instruction + N handles
    (c0 log2 N bits each) + one k-bit block <= B (mpmath reference)."""
    cost = HandleCostModel(c0=c0, instruction=instr)
    out = recovery_feasibility(N, k, B, cost=cost)
    need = MP.mpf(instr) + N * MP.mpf(c0) * MP.log(N, 2) + k
    assert float(need) == pytest.approx(out.required, rel=1e-12, abs=1e-12)
    assert out.slack == pytest.approx(float(MP.mpf(B) - need), rel=1e-9, abs=1e-6)
    if abs(MP.mpf(B) - need) > 1e-6 * (1 + need):
        assert out.feasible == (MP.mpf(B) >= need)


def test_feasibility_checker_fails_on_a_budget_too_small():
    """Proposition 1: the feasibility check must say no when B misses one block."""
    cost = HandleCostModel(c0=2.0, instruction=50.0)
    ok = recovery_feasibility(1024, 64, 50 + 1024 * 20 + 64, cost=cost)
    bad = recovery_feasibility(1024, 64, 50 + 1024 * 20 + 63, cost=cost)
    assert ok.feasible and ok.slack == 0.0
    assert not bad.feasible and bad.slack == -1.0


def test_handle_size_of_a_single_block_is_zero():
    """Proposition 1: handles cost c0 log2 N bits; N = 1 needs no address."""
    assert HandleCostModel(c0=3.0).handle_size(1) == 0.0
    assert HandleCostModel(c0=3.0).handle_size(1024) == 30.0
    with pytest.raises(DomainError, match=r"`c0` must be a finite real number with 0 <= c0"):
        HandleCostModel(c0=-1.0)


def test_asymptotic_separation_gap_tends_to_one():
    """Proposition 1 (Appendix B): with k = ceil(sqrt N), B = c N log2 N and
    c > c0, VISTA stays feasible while the lossy bound is Theta(log N / sqrt N)."""
    points = [asymptotic_separation(4**j, c=2.0, c0=1.0) for j in range(4, 16)]
    assert all(p.feasible for p in points)
    gaps = [p.gap for p in points]
    assert all(b > a for a, b in itertools.pairwise(gaps))
    assert gaps[-1] > 0.99
    for p in points:
        assert p.k == math.ceil(math.sqrt(p.N)) and p.k**2 >= p.N > (p.k - 1) ** 2
        # lossy bound / (log2 N / sqrt N) -> c
        assert p.lossy_bound * math.sqrt(p.N) / math.log2(p.N) == pytest.approx(2.0, rel=0.1)


def test_asymptotic_separation_needs_c_above_c0():
    """Proposition 1 (Appendix B): a budget c N log2 N with c < c0 cannot hold
    the handle table, so there is no guaranteed gap (None: never NaN)."""
    p = asymptotic_separation(10**6, c=0.5, c0=1.0)
    assert not p.feasible and p.gap is None


# ---------------------------------------------------------------------------
# Proposition 2
# ---------------------------------------------------------------------------


def _mp_pairwise_kl_bound(n: int, kappa: int, sigma: float):
    """(1/(n^2 ln 2)) sum_{j,k} KL(P_j||P_k) from the Gaussian means (Steps 1-2)."""
    ln_l, ln_big = MP.mpf(0), MP.log(kappa)
    total = MP.mpf(0)
    for j in range(n):
        for k in range(n):
            mj = [ln_big if i == j else ln_l for i in range(n)]
            mk = [ln_big if i == k else ln_l for i in range(n)]
            sq = sum((a - b) ** 2 for a, b in zip(mj, mk, strict=True))
            total += sq / (2 * MP.mpf(sigma) ** 2)
    return total / (n * n * MP.ln2)


@given(st.integers(2, 9), st.integers(2, 64), st.floats(0.05, 20))
def test_content_bound_dominates_pairwise_kl_average(n, kappa, sigma):
    """Proposition 2 (Appendix C, Steps 1-3): the paper's bound equals the
    pairwise-KL average without its (1 - 1/n) factor."""
    ref = _mp_pairwise_kl_bound(n, kappa, sigma)
    paper = content_rate_bound(kappa, sigma)
    assert float(ref) == pytest.approx(paper * (1 - 1 / n), rel=TOL)


@given(st.integers(2, 9), st.integers(2, 64), st.floats(0.05, 20))
def test_tight_content_bound_is_min_over_product_gaussian_references(n, kappa, sigma):
    """Tighter Proposition 2: min over common mean shifts t of the average
    KL(P_j || N(ln l + t, sigma^2 I)) equals (1-1/n) ln2 (log2 kappa)^2/(2 sigma^2),
    attained at t = ln(kappa)/n (minimised numerically with mpmath)."""
    lk, s2 = MP.log(kappa), MP.mpf(sigma) ** 2

    def avg_kl(t):  # by symmetry every j gives the same KL: bulky coord + n-1 light
        return ((lk - t) ** 2 + (n - 1) * t**2) / (2 * s2)

    t_star = MP.findroot(lambda t: MP.diff(avg_kl, t), lk / 2)
    assert float(t_star) == pytest.approx(float(lk / n), rel=1e-20, abs=1e-25)
    assert float(avg_kl(t_star) / MP.ln2) == pytest.approx(
        content_rate_bound_tight(n, kappa, sigma), rel=TOL
    )
    assert content_rate_bound_tight(n, kappa, sigma) <= content_rate_bound(kappa, sigma) / 2


# ---------------------------------------------------------------------------
# Lemma 1
# ---------------------------------------------------------------------------


def _mp_largest_pc(n: int, m: int, rate: float):
    """Largest P_c in [0,1] satisfying Lemma 1's inequality, by bisection on
    the inequality itself."""

    def ok(pc):
        return MP.log(n, 2) - rate <= 1 + pc * MP.log(m, 2) + (1 - pc) * MP.log(n - m, 2)

    if ok(MP.mpf(1)):
        return MP.mpf(1)
    lo, hi = MP.mpf(0), MP.mpf(1)
    assert ok(lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


@given(st.integers(2, 10**6).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1))),
       st.floats(0, 1))
def test_list_fano_matches_bisection_on_the_inequality(nm, frac):
    """Lemma 1: the returned P_c is the largest value the inequality allows."""
    n, m = nm
    rate = frac * math.log2(n)
    assert list_fano_pc_bound(n, m, rate) == pytest.approx(float(_mp_largest_pc(n, m, rate)),
                                                           abs=TOL)


def test_list_fano_holds_for_every_deterministic_list_on_small_n():
    """Lemma 1 on exhaustive instances: every interface Y = g(J*) with a list
    chosen by maximum posterior has P_c below the bound at its own rate."""
    n = 6
    for labels in itertools.product(range(3), repeat=n):
        counts = np.bincount(labels, minlength=3)
        probs = counts[counts > 0] / n
        rate = float(-(probs * np.log2(probs)).sum())
        for m in range(1, n):
            # list of m blocks from Y's cell first (all equally likely inside)
            pc = sum(min(m, c) for c in counts) / n
            assert pc <= list_fano_pc_bound(n, m, rate) + TOL


# ---------------------------------------------------------------------------
# Theorem 1
# ---------------------------------------------------------------------------


@given(makeroom_instance(10**6), st.floats(0, 1))
def test_theorem1_floor_is_affine_with_the_stated_price(nk, frac):
    """Theorem 1 (C-i..iii): kappa[1-(I+1)/nu]_+ is affine in I with slope
    -kappa/nu before clipping, vanishes at I = nu - 1, and agrees with the
    threshold and reduction corollaries; nu from mpmath."""
    n, kappa = nk
    nu = MP.log(MP.mpf(n - kappa) / kappa, 2)
    assert makeroom_nu(n, kappa) == pytest.approx(float(nu), rel=1e-14)
    rate = frac * math.log2(n)
    floor = float(kappa * (1 - (rate + 1) / nu))
    assert makeroom_lower_bound(n, kappa, rate) == pytest.approx(max(0.0, floor), abs=1e-9)
    assert price_per_bit(n, kappa) == pytest.approx(float(kappa / nu), rel=1e-14)
    delta = 0.3
    thr = threshold_rate(n, kappa, delta)
    if 0 <= thr <= math.log2(n):
        assert makeroom_lower_bound(n, kappa, thr) == pytest.approx(delta * kappa, rel=1e-9)
    need = rate_needed_for_reduction(n, kappa, 0.7 * kappa)
    if 0 <= need <= math.log2(n):
        assert makeroom_lower_bound(n, kappa, need) == pytest.approx(0.3 * kappa, rel=1e-9)


@given(makeroom_instance(10**6), st.floats(0, 1))
def test_theorem1_is_the_list_fano_bound_at_m_equal_kappa_loosened(nk, frac):
    """Theorem 1 (B): E[Z] >= kappa (1 - P_c(kappa)) with Lemma 1's P_c, which
    is at least kappa[1 - (I+1)/nu]_+ (the proof drops log2((n-kappa)/n))."""
    n, kappa = nk
    rate = frac * math.log2(n)
    via_lemma = kappa * (1 - list_fano_pc_bound(n, kappa, rate))
    assert via_lemma >= makeroom_lower_bound(n, kappa, rate) - 1e-12


def _bucket_brute_force(n: int, kappa: int, M: int) -> tuple[Fraction, float]:
    """E[Z] and H(Y) of a balanced M-bucket ledger by enumerating every J*
    position and every probe order inside each bucket."""
    q, r = divmod(n, M)
    sizes = [q + 1] * r + [q] * (M - r)
    total = Fraction(0)
    for b in sizes:
        for j in range(b):  # J* is the j-th block of this bucket
            orders = list(itertools.permutations(range(b)))
            z = sum(min(order.index(j), kappa) for order in orders)
            total += Fraction(z, len(orders)) / n
    h = -sum((b / n) * math.log2(b / n) for b in sizes)
    return total, h


@pytest.mark.parametrize("n,kappa", [(5, 2), (7, 3), (8, 1), (9, 4), (7, 6)])
def test_bucket_ledger_matches_brute_force(n, kappa):
    """Theorem 1 (D): exact E[Z] of balanced buckets with uniformly random
    probing, against enumeration of all J* positions and probe orders."""
    for M in range(1, n + 1):
        led = bucket_ledger(n, kappa, M)
        z, h = _bucket_brute_force(n, kappa, M)
        assert led.mean_z == float(z)
        assert led.rate_bits == pytest.approx(h, abs=1e-12)
        assert sum(s * c for s, c in led.bucket_sizes) == n
        assert sum(c for _, c in led.bucket_sizes) == M
        assert led.mean_z < led.upper_bound  # E[Z] < n/(2M)


@given(makeroom_instance(10**7), st.floats(0.01, 0.99))
def test_bucket_sufficient_rate_reaches_the_target(nk, delta):
    """Theorem 1 (D): with M = min(n, floor(2^I)) at the sufficient rate I,
    the balanced ledger has E[Z] <= delta kappa."""
    n, kappa = nk
    rate = bucket_sufficient_rate(n, kappa, delta)
    M = min(n, math.floor(2.0**rate + 1e-9))
    led = bucket_ledger(n, kappa, M)
    assert led.mean_z <= delta * kappa + 1e-12
    assert led.rate_bits <= rate + 1e-12


@given(st.integers(1, 30).flatmap(lambda k: st.tuples(st.integers(k + 1, 10**6), st.just(k))),
       st.floats(0, 1))
def test_cheapest_bucket_ledger_is_minimal(nk, frac):
    """Theorem 1 (D): bucket_ledger_for_mean_z returns the smallest M reaching
    the target (checked against M - 1), hence the smallest H(Y)."""
    n, kappa = nk
    target = frac * blind_mean_z(n, kappa)
    led = bucket_ledger_for_mean_z(n, kappa, target)
    assert led.mean_z <= target
    if led.M > 1:
        prev = bucket_ledger(n, kappa, led.M - 1)
        assert prev.mean_z > target and prev.rate_bits < led.rate_bits


@pytest.mark.parametrize("n,kappa", [(2, 1), (5, 2), (6, 5), (7, 3)])
def test_blind_mean_z_matches_enumeration(n, kappa):
    """Theorem 1 (C-i), rate-0 endpoint: a size-blind agent probing in random
    order has E[Z] = sum_{m<=kappa} (1 - m/n), by enumerating all orders."""
    total = Fraction(0)
    perms = list(itertools.permutations(range(n)))
    for j in range(n):
        total += Fraction(sum(min(p.index(j), kappa) for p in perms), len(perms) * n)
    assert blind_mean_z(n, kappa) == float(total)


# ---------------------------------------------------------------------------
# Door checks: every public function rejects out-of-domain input
# ---------------------------------------------------------------------------

GOOD = {
    recovery_success_bound: dict(N=10, k=4, budget=20.0),
    recovery_feasibility: dict(N=10, k=4, budget=20.0),
    asymptotic_separation: dict(N=100, c=2.0),
    content_rate_bound: dict(kappa=4, sigma=1.0),
    content_rate_bound_tight: dict(n=8, kappa=4, sigma=1.0),
    list_fano_pc_bound: dict(n=20, m=3, rate=1.0),
    makeroom_nu: dict(n=20, kappa=3),
    makeroom_lower_bound: dict(n=20, kappa=3, rate=1.0),
    threshold_rate: dict(n=20, kappa=3, delta=0.5),
    price_per_bit: dict(n=20, kappa=3),
    rate_needed_for_reduction: dict(n=20, kappa=3, delta_z=1.0),
    bucket_ledger: dict(n=20, kappa=3, M=4),
    bucket_ledger_for_mean_z: dict(n=20, kappa=3, mean_z=1.0),
    bucket_sufficient_rate: dict(n=20, kappa=3, delta=0.5),
    blind_mean_z: dict(n=20, kappa=3),
    theory.optimal_mean_z: dict(n=20, kappa=3, rate=1.0),
    theory.optimal_rate: dict(n=20, kappa=3, mean_z=1.0),
    theory.content_rate_exact: dict(n=4, kappa=4, sigma=1.0),
    theory.list_fano_mean_z_bound: dict(n=20, kappa=3, rate=1.0),
}

NOT_A_NUMBER = [None, "3", True, float("nan"), float("inf"), ["x"], [[1, 2], [3]]]
INT_BAD = NOT_A_NUMBER + [2.5, 0, -1, -(10**9)]
BAD = {
    "N": INT_BAD, "k": INT_BAD, "n": INT_BAD, "m": INT_BAD, "M": INT_BAD,
    "kappa": NOT_A_NUMBER + [2.5, 0, -2],
    "budget": NOT_A_NUMBER + [-1.0, -1e-300],
    "c": NOT_A_NUMBER + [0.0, -1.0],
    "sigma": NOT_A_NUMBER + [0.0, -0.5],
    "rate": NOT_A_NUMBER + [-1e-9, -5.0, 1e6],
    "delta": NOT_A_NUMBER + [0.0, 1.0, -0.5, 1.5],
    "delta_z": NOT_A_NUMBER + [-0.1, 3.5],
    "mean_z": NOT_A_NUMBER + [-0.1, 3.5],
}


CASES = [(f, p, v) for f in GOOD for p in sorted(GOOD[f]) for v in BAD[p]]


def _check_rejects(func, param, bad):
    kwargs = dict(GOOD[func])
    kwargs[param] = bad
    with pytest.raises(DomainError, match=rf"`{param}`") as info:
        func(**kwargs)
    assert isinstance(info.value, ValueError)
    assert info.value.parameter == param


@pytest.mark.parametrize(
    "func,param,bad", CASES, ids=[f"{f.__name__}-{p}-{v!r}" for f, p, v in CASES]
)
def test_every_public_function_rejects_bad_input(func, param, bad):
    """DESIGN rules 5/6 for Propositions 1-2, Lemma 1, Theorem 1 and the frontier:
    every (function, parameter, bad value) raises DomainError (a ValueError)
    naming that parameter."""
    _check_rejects(func, param, bad)


# Out-of-range numbers drawn at random, per parameter (all functions share the
# GOOD values above, so the ranges below are absolute, not relative).
RANDOM_BAD = {
    "N": st.integers(max_value=0) | st.floats(1.01, 1e6).filter(lambda x: x != int(x)),
    "k": st.integers(max_value=0),
    "n": st.integers(max_value=0) | st.floats(5.01, 1e6).filter(lambda x: x != int(x)),
    "m": st.integers(max_value=0) | st.integers(20, 10**9),
    "M": st.integers(max_value=0) | st.integers(21, 10**9),
    "kappa": st.integers(max_value=0) | st.floats(2.01, 2.99),
    "budget": st.floats(max_value=-1e-300, allow_infinity=False),
    "c": st.floats(max_value=0.0, allow_infinity=False),
    "sigma": st.floats(max_value=0.0, allow_infinity=False),
    "rate": st.floats(max_value=-1e-300, allow_infinity=False) | st.floats(4.33, 1e300),
    "delta": st.floats(max_value=0.0, allow_infinity=False) | st.floats(1.0, 1e300),
    "delta_z": st.floats(max_value=-1e-300, allow_infinity=False) | st.floats(3.01, 1e300),
    "mean_z": st.floats(max_value=-1e-300, allow_infinity=False) | st.floats(3.01, 1e300),
}


@given(st.sampled_from([(f, p) for f in GOOD for p in sorted(GOOD[f])]).flatmap(
    lambda fp: st.tuples(st.just(fp[0]), st.just(fp[1]), RANDOM_BAD[fp[1]])
))
def test_random_out_of_range_values_are_rejected(case):
    """DESIGN rules 5/6: Hypothesis draws out-of-range numbers for every
    parameter of every public function; each raises DomainError naming it."""
    _check_rejects(*case)


@given(st.integers(5, 10**6))
def test_theorem1_rejects_kappa_at_or_above_half_n(n):
    """Theorem 1's domain 2 <= kappa < n/2: kappa = ceil(n/2) is rejected."""
    kappa = (n + 1) // 2
    assume(2 * kappa >= n)
    with pytest.raises(DomainError, match=r"`kappa` must be an integer with 2 <= kappa < n/2"):
        makeroom_lower_bound(n, kappa, 0.0)


def test_error_messages_are_pinned():
    """DESIGN rule 6: parameter, value, rule and fix in one message."""
    with pytest.raises(DomainError, match=r"^`kappa` must be an integer with 2 <= kappa < n/2 "
                       r"\(got kappa=5, n=10\); Theorem 1 needs nu"):
        makeroom_nu(10, 5)
    with pytest.raises(DomainError, match=r"^`rate` must be a rate in bits with 0 <= rate <= "
                       r"log2\(n\) \(got rate=7.0, n=100"):
        makeroom_lower_bound(100, 5, 7.0)
    with pytest.raises(DomainError, match=r"^`m` must be an integer list size with 1 <= m <= "
                       r"n-1 \(got m=10, n=10\)"):
        list_fano_pc_bound(10, 10, 1.0)
    with pytest.raises(DomainError, match=r"^`sigma` must be a finite real number with 0 < sigma"):
        content_rate_bound(4, 0.0)


def test_rate_a_few_ulps_above_log2n_is_accepted_as_log2n():
    """Theorem 1: I(J*;Y) <= log2 n; a full ledger's H(Y) computed in floats may
    exceed log2 n by rounding and is clamped, anything more is rejected."""
    n = 1000
    top = math.log2(n)
    assert makeroom_lower_bound(n, 3, np.nextafter(top, 10)) == 0.0
    with pytest.raises(DomainError, match="`rate`"):
        makeroom_lower_bound(n, 3, top + 1e-6)
