"""The exact information-recovery frontier (theory/_frontier.py, proof in
theory/FRONTIER.md) against independent computations: Blahut-Arimoto over
all orderings, high-precision direct summation over ranks, exact evaluation
of random interfaces, Theorem 1's Fano bound and the bucket construction."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.theory import (
    DomainError,
    blind_mean_z,
    bucket_ledger,
    gibbs_law,
    makeroom_lower_bound,
    optimal_mean_z,
    optimal_rate,
)

TOL = 1e-9


# ---------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------


def blahut_arimoto(n: int, kappa: int, beta: float, *, seed: int, max_iter: int = 20000):
    """Rate-distortion of a uniform J* on [n] with reproduction alphabet = all
    n! orderings and distortion d(j, pi) = min(position of j in pi, kappa),
    at slope beta. Starts from a random output law (no symmetry assumed).

    Returns (D, R_upper, R_lower) in bits: R_upper is the rate of the
    test channel reached (achievable at D), R_lower Blahut's dual lower bound
    on R(D); both bracket the true R(D)."""
    perms = np.array(list(itertools.permutations(range(n))))
    dist = np.minimum(np.argsort(perms, axis=1).T, kappa).astype(float)  # n x n!
    weight = np.exp(-beta * dist)
    q = np.random.default_rng(seed).random(dist.shape[1])
    q /= q.sum()
    for _ in range(max_iter):
        w = weight * q
        z = w.sum(axis=1, keepdims=True)
        cond = w / z
        d = float((cond * dist).sum(axis=1).mean())
        with np.errstate(divide="ignore", invalid="ignore"):
            r_up = float(np.where(cond > 0, cond * np.log(cond / q), 0.0).sum(axis=1).mean())
        c = (weight / z).mean(axis=0)
        r_lo = -beta * d - float(np.log(z).mean()) - float(np.log(c.max()))
        if r_up - r_lo < 1e-12:
            break
        q = cond.mean(axis=0)
    return d, r_up / math.log(2), r_lo / math.log(2)


MP = mpmath.MPContext()
MP.dps = 60


def gibbs_by_summation(n: int, kappa: int, beta: float) -> tuple[float, float]:
    """(rate bits, mean cost) of p_r ∝ exp(-beta min(r-1, kappa)) by summing
    every rank's term in 60-digit arithmetic (the tail's n - kappa equal terms
    are grouped when n is large)."""
    b = MP.mpf(beta)
    head = [MP.exp(-b * j) for j in range(kappa)]
    tail_w = MP.exp(-b * kappa)
    tail_count = n - kappa
    if n <= 5000:
        weights = head + [tail_w] * tail_count
        costs = list(range(kappa)) + [kappa] * tail_count
        z = MP.fsum(weights)
        mean = MP.fsum(w * c for w, c in zip(weights, costs, strict=True)) / z
        ent = -MP.fsum((w / z) * MP.log(w / z) for w in weights)
    else:
        z = MP.fsum(head) + tail_count * tail_w
        mean = (MP.fsum(j * w for j, w in enumerate(head)) + tail_count * kappa * tail_w) / z
        ent = -MP.fsum((w / z) * MP.log(w / z) for w in head)
        ent -= tail_count * (tail_w / z) * MP.log(tail_w / z)
    return float((MP.log(n) - ent) / MP.ln2), float(mean)


def interface_point(channel: np.ndarray, kappa: int) -> tuple[float, float]:
    """Exact (I(J*;Y) bits, E[Z]) of an interface Y ~ channel[J*] with the best
    archive order for each y (decreasing posterior)."""
    n = channel.shape[0]
    joint = channel / n
    py = joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log2(joint / (py[None, :] / n)), 0.0)
    rate = float(terms.sum())
    cost = np.minimum(np.arange(n), kappa)
    mean_z = 0.0
    for y in range(channel.shape[1]):
        post = np.sort(joint[:, y])[::-1]
        mean_z += float(post @ cost)
    return max(rate, 0.0), mean_z


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,kappa,beta",
    [(3, 1, 1.0), (4, 2, 0.7), (5, 2, 1.0), (5, 4, 3.0), (6, 2, 0.5), (6, 3, 5.0), (7, 3, 2.0)],
)
def test_frontier_matches_blahut_arimoto_over_all_orderings(n, kappa, beta):
    """Frontier (FRONTIER.md Thm): R(D) from a generic Blahut-Arimoto solver
    over all n! orderings brackets optimal_rate to 1e-9, and inversely."""
    d, r_up, r_lo = blahut_arimoto(n, kappa, beta, seed=n * 100 + kappa)
    assert r_up - r_lo < 1e-9
    r = optimal_rate(n, kappa, d)
    assert r_lo - TOL <= r <= r_up + TOL
    assert optimal_mean_z(n, kappa, r_up) == pytest.approx(d, abs=1e-8)


@pytest.mark.slow
def test_frontier_matches_blahut_arimoto_near_rate_zero():
    """Frontier near the blind endpoint (small slope, slow BA convergence)."""
    d, r_up, r_lo = blahut_arimoto(5, 2, 0.2, seed=7)
    assert r_up - r_lo < 1e-9
    assert r_lo - TOL <= optimal_rate(5, 2, d) <= r_up + TOL


@given(
    st.integers(1, 40).flatmap(lambda k: st.tuples(st.integers(k + 1, 3000), st.just(k))),
    st.floats(0.001, 30.0) | st.floats(30.0, 740.0),
)
def test_frontier_matches_direct_summation_over_ranks(nk, beta):
    """Frontier numerics (FRONTIER.md, Numerics): the closed-form solver agrees
    with 60-digit summation over all n ranks of the Gibbs law, both ways."""
    n, kappa = nk
    rate, mean = gibbs_by_summation(n, kappa, beta)
    if 1e-12 < rate < math.log2(n) - 1e-9:
        assert optimal_mean_z(n, kappa, rate) == pytest.approx(mean, rel=TOL, abs=1e-12)
    if mean > 1e-300:
        assert optimal_rate(n, kappa, mean) == pytest.approx(rate, rel=TOL, abs=1e-12)
        # lam is sensitive to relative errors of tiny E[Z] (E[Z] ~ e^-lam)
        assert gibbs_law(n, kappa, mean_z=mean).lam == pytest.approx(beta, rel=TOL)


@pytest.mark.parametrize("n", [10**9, 10**12, 2**62])
@pytest.mark.parametrize("kappa", [1, 7, 300])
def test_frontier_for_huge_n(n, kappa):
    """Frontier for n up to 4.6e18 without length-n arrays (tail grouped in
    the reference), at several slopes."""
    for beta in (0.01, 0.5, 3.0, 25.0, 600.0):
        rate, mean = gibbs_by_summation(n, kappa, beta)
        assert optimal_mean_z(n, kappa, rate) == pytest.approx(mean, rel=TOL)
        assert optimal_rate(n, kappa, mean) == pytest.approx(rate, rel=TOL)


@given(
    st.integers(2, 7).flatmap(
        lambda n: st.tuples(
            st.integers(1, n - 1),
            st.lists(st.lists(st.floats(0, 1), min_size=4, max_size=4), min_size=n, max_size=n),
        )
    )
)
def test_no_interface_beats_the_frontier(case):
    """Frontier converse (FRONTIER.md, data processing): an arbitrary random
    interface with its best archive order never has E[Z] below the frontier
    at its own rate."""
    kappa, rows = case
    channel = np.array(rows) + 1e-3
    channel /= channel.sum(axis=1, keepdims=True)
    rate, mean_z = interface_point(channel, kappa)
    n = channel.shape[0]
    assert mean_z >= optimal_mean_z(n, kappa, min(rate, math.log2(n))) - TOL


def frontier_violations(frontier, points):
    """Interfaces (n, kappa, rate, E[Z]) that do better than ``frontier`` claims."""
    return [p for p in points if p[3] < frontier(p[0], p[1], p[2]) - TOL]


def test_frontier_checker_flags_a_broken_frontier():
    """The converse check above can fail: a frontier 5% too high is beaten by
    achievable interfaces (the Gibbs laws themselves and the full ledger)."""
    points = []
    for n, kappa in [(6, 2), (20, 5)]:
        for lam in (0.3, 1.0, 4.0):
            law = gibbs_law(n, kappa, lam=lam)
            points.append((n, kappa, law.rate_bits, law.mean_z))
        points.append((n, kappa, math.log2(n), 0.0))
    assert frontier_violations(optimal_mean_z, points) == []
    broken = frontier_violations(lambda n, k, r: 1.05 * optimal_mean_z(n, k, r) + 1e-6, points)
    assert len(broken) == len(points)


@given(
    st.integers(5, 10**7).flatmap(lambda n: st.tuples(st.just(n), st.integers(2, (n - 1) // 2))),
    st.floats(0, 1),
)
def test_frontier_between_fano_and_buckets(nk, frac):
    """Theorem 1: the exact frontier lies above the Fano lower bound and below
    the balanced-bucket construction with M = min(n, floor(2^I)) buckets."""
    n, kappa = nk
    rate = frac * math.log2(n)
    exact = optimal_mean_z(n, kappa, rate)
    assert makeroom_lower_bound(n, kappa, rate) <= exact + TOL
    M = max(1, min(n, math.floor(2.0**rate)))
    assert exact <= bucket_ledger(n, kappa, M).mean_z + TOL


@given(
    st.integers(1, 50).flatmap(lambda k: st.tuples(st.integers(k + 1, 10**6), st.just(k))),
    st.floats(0, 1),
)
def test_every_bucket_ledger_is_above_the_frontier(nk, frac):
    """Theorem 1 (D) vs frontier: a balanced ledger of any M sits on or above
    the frontier at its own rate H(Y)."""
    n, kappa = nk
    M = max(1, min(n, round(n**frac)))
    led = bucket_ledger(n, kappa, M)
    assert optimal_mean_z(n, kappa, led.rate_bits) <= led.mean_z + TOL


@pytest.mark.parametrize("n,kappa", [(2, 1), (10, 3), (1000, 999), (10**9, 5)])
def test_frontier_endpoints(n, kappa):
    """Frontier endpoints (FRONTIER.md): rate 0 gives the blind E[Z]
    sum_{m<=kappa}(1 - m/n); E[Z] = 0 needs log2 n bits; the blind value and
    anything above it need 0 bits."""
    assert optimal_mean_z(n, kappa, 0.0) == blind_mean_z(n, kappa)
    assert optimal_mean_z(n, kappa, math.log2(n)) == 0.0
    assert optimal_rate(n, kappa, 0.0) == math.log2(n)
    assert optimal_rate(n, kappa, blind_mean_z(n, kappa)) == 0.0
    assert optimal_rate(n, kappa, float(kappa)) == 0.0


@pytest.mark.parametrize("n,kappa", [(6, 2), (64, 8), (10**6, 40)])
def test_frontier_is_convex_decreasing_with_slope_minus_ln2_over_lam(n, kappa):
    """Frontier shape (FRONTIER.md, convexity): D(R) is strictly decreasing and
    convex, with dD/dR = -ln2/lam (envelope theorem), so time-sharing never helps."""
    top = math.log2(n)
    rates = np.linspace(0.02 * top, 0.98 * top, 41)
    ds = np.array([optimal_mean_z(n, kappa, r) for r in rates])
    assert np.all(np.diff(ds) < 0)
    second = ds[:-2] - 2 * ds[1:-1] + ds[2:]
    assert np.all(second >= -1e-10 * ds.max())
    h = 1e-5 * top
    for r in rates[::10]:
        slope = (optimal_mean_z(n, kappa, r + h) - optimal_mean_z(n, kappa, r - h)) / (2 * h)
        lam = gibbs_law(n, kappa, rate=r).lam
        assert slope == pytest.approx(-math.log(2) / lam, rel=1e-5)


@given(
    st.integers(1, 30).flatmap(lambda k: st.tuples(st.integers(k + 1, 10**5), st.just(k))),
    st.floats(0.01, 0.99),
)
def test_optimal_rate_inverts_optimal_mean_z(nk, frac):
    """Frontier inverse: optimal_rate(optimal_mean_z(R)) = R away from the
    endpoints, where the frontier's slope is finite and non-zero."""
    n, kappa = nk
    rate = frac * math.log2(n)
    d = optimal_mean_z(n, kappa, rate)
    if d > 1e-200:
        assert optimal_rate(n, kappa, d) == pytest.approx(rate, rel=1e-8, abs=1e-10)


@given(
    st.integers(1, 60).flatmap(lambda k: st.tuples(st.integers(k + 1, 10**4), st.just(k))),
    st.floats(0, 1),
)
def test_gibbs_law_is_a_normalised_rank_law_with_stated_moments(nk, frac):
    """Frontier attainment: the Gibbs rank law sums to 1, decays geometrically
    by e^{-lam} per rank up to kappa, and its mean cost and log2 n - H equal
    the reported mean_z and rate_bits (recomputed from the probabilities)."""
    n, kappa = nk
    rate = frac * math.log2(n)
    law = gibbs_law(n, kappa, rate=rate)
    head = np.array(law.p_head)
    assert head.sum() + (n - kappa) * law.p_tail == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(head) <= 0) and head[-1] >= law.p_tail
    mean = float(head @ np.arange(kappa)) + (n - kappa) * kappa * law.p_tail
    assert mean == pytest.approx(law.mean_z, rel=1e-9, abs=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -float(np.where(head > 0, head * np.log2(head), 0.0).sum())
        if law.p_tail > 0:
            ent -= (n - kappa) * law.p_tail * math.log2(law.p_tail)
    assert math.log2(n) - ent == pytest.approx(law.rate_bits, abs=1e-9)
    assert law.rate_bits == pytest.approx(rate, abs=1e-9)


def test_gibbs_law_keyword_rules():
    """Frontier API: exactly one of lam/rate/mean_z; the full ledger is lam=inf."""
    with pytest.raises(DomainError, match=r"`lam/rate/mean_z` must be exactly one keyword"):
        gibbs_law(10, 3)
    with pytest.raises(DomainError, match=r"`lam/rate/mean_z` must be exactly one keyword"):
        gibbs_law(10, 3, lam=1.0, rate=1.0)
    full = gibbs_law(10, 3, rate=math.log2(10))
    assert full.lam == math.inf and full.p_head[0] == 1.0 and full.mean_z == 0.0
    blind = gibbs_law(10, 3, lam=0.0)
    assert blind.p_head == pytest.approx((0.1, 0.1, 0.1)) and blind.p_tail == pytest.approx(0.1)
    assert gibbs_law(10, 3, mean_z=blind.mean_z).lam == 0.0


def test_frontier_domain_errors_are_pinned():
    """Frontier domain kappa >= 1, n >= kappa + 1 (wider than Theorem 1's)."""
    with pytest.raises(DomainError, match=r"^`n` must be an integer with n >= kappa \+ 1 "
                       r"\(got n=3, kappa=3\)"):
        optimal_mean_z(3, 3, 0.5)
    with pytest.raises(DomainError, match=r"^`mean_z` must be an expected cost with "
                       r"0 <= mean_z <= kappa \(got mean_z=4.0, kappa=3\)"):
        optimal_rate(10, 3, 4.0)
    assert optimal_mean_z(4, 3, 1.0) > 0  # beyond Theorem 1's kappa < n/2: still defined
