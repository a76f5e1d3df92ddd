"""Results beyond the paper: the content channel's certified
sandwich and limit, Theorem 1's sharp per-prefix bound and exact constant
c*, first-order tightness of the frontier, Proposition 1's sharper converse
and exact small-instance optima; CLI keys and proof steps."""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vistalab import theory
from vistalab.cli import main

GRID = [(n, k, s) for n in (8, 64, 1024, 10**6) for k in (2, 4, 8, 16) for s in (0.5, 1.0, 2.0)]


# --- 1. content channel ----------------------------------------------------------


def test_sandwich_brackets_exact_on_the_issue_grid():
    """theory/BEYOND.md section 1 (done-when): lower_bound <= exact rate <= product_bound <= the
    (1-1/n) bound at every kappa in {2,4,8,16}, sigma in {0.5,1,2}, n in {8,64,1024,1e6}."""
    for n, k, s in GRID:
        sw = theory.content_sandwich(n, k, s)
        tol = theory.CONTENT_RATE_ABS_TOL
        assert sw.lower_bound <= sw.exact_rate + tol, (n, k, s)
        assert sw.exact_rate <= sw.product_bound + tol, (n, k, s)
        assert sw.product_bound <= sw.tight_bound + 1e-12, (n, k, s)
        assert sw.product_radius < 1e-12 and sw.lower_radius < 1e-12
        assert sw.holds


def _mp_product_bits(n: int, kappa: int, sigma: float) -> mpmath.mpf:
    """n I(B; aB + N) by mpmath quadrature of the two KL terms (independent of arb)."""
    mp = mpmath.mp
    with mpmath.workdps(30):
        a = mp.log(kappa) / sigma
        p = mp.mpf(1) / n
        q = 1 - p

        def f(y):
            mix = p * mp.npdf(y, a, 1) + q * mp.npdf(y, 0, 1)
            return (p * mp.npdf(y, a, 1) * mp.log(mp.npdf(y, a, 1) / mix)
                    + q * mp.npdf(y, 0, 1) * mp.log(mp.npdf(y, 0, 1) / mix))

        val = mp.quad(f, [-mp.inf, -5, 0, a / 2, a, a + 5, mp.inf])
        return n * val / mp.log(2)


def _mp_jensen_bits(n: int, kappa: int, sigma: float) -> mpmath.mpf:
    """ln n + a^2 - E ln(e^{aX} + (n-1) e^{a^2/2}), X ~ N(a,1), by mpmath quadrature."""
    mp = mpmath.mp
    with mpmath.workdps(30):
        a = mp.log(kappa) / sigma

        def f(x):
            return mp.npdf(x, a, 1) * mp.log(mp.exp(a * x) + (n - 1) * mp.exp(a * a / 2))

        e = mp.quad(f, [-mp.inf, a - 5, a, a + 5, mp.inf])
        return (mp.log(n) + a * a - e) / mp.log(2)


@pytest.mark.parametrize("n,kappa,sigma", [(8, 2, 1.0), (64, 16, 0.5), (10**6, 4, 2.0)])
def test_certified_bounds_match_high_precision_quadrature(n, kappa, sigma):
    """theory/BEYOND.md section 1, 5: the arb enclosures contain 30-digit mpmath quadratures
    of the product bound and the Jensen bound written in the issue's form."""
    up = theory.content_product_bound(n, kappa, sigma)
    lo = theory.content_jensen_lower_bound(n, kappa, sigma)
    ref_up = float(_mp_product_bits(n, kappa, sigma))
    ref_lo = float(_mp_jensen_bits(n, kappa, sigma))
    assert abs(up.value - ref_up) <= up.radius + 1e-13 * max(1, abs(ref_up))
    assert abs(lo.value - ref_lo) <= lo.radius + 1e-13 * max(1, abs(ref_lo))


def _brute_two_blocks(kappa: float, sigma: float) -> float:
    """Exact I(J*;W) for n = 2 from the definition: given J* = 1 the posterior of
    block 1 is 1/(1 + e^{-aD}) with D = W_1 - W_2 ~ N(a, 2), so
    I = ln 2 - E ln(1 + e^{-aD}) (one 30-digit mpmath quadrature)."""
    with mpmath.workdps(30):
        a = mpmath.log(kappa) / sigma
        sd = mpmath.sqrt(2)

        def f(d):
            return mpmath.npdf(d, a, sd) * mpmath.log1p(mpmath.exp(-a * d))

        e = mpmath.quad(f, [-mpmath.inf, a - 8 * sd, a, a + 8 * sd, mpmath.inf])
        return float((mpmath.log(2) - e) / mpmath.log(2))


@pytest.mark.parametrize("kappa,sigma", [(2, 1.0), (4, 0.5)])
def test_sandwich_against_brute_force_two_blocks(kappa, sigma):
    """theory/BEYOND.md section 1: at n = 2 the sandwich brackets a brute-force 2-D integral."""
    brute = _brute_two_blocks(kappa, sigma)
    sw = theory.content_sandwich(2, kappa, sigma)
    assert sw.lower_bound - 1e-9 <= brute <= sw.product_bound + 1e-9
    assert abs(sw.exact_rate - brute) < 1e-7


def test_limit_law_and_rate():
    """theory/BEYOND.md section 1: I -> a^2/2 nats, and the proved O(1/n) gap bounds bracket
    I - a^2/2 (exact rate) at moderate a."""
    for kappa, sigma in ((2, 1.0), (4, 2.0), (2, 0.5)):
        lim = theory.content_rate_limit(kappa, sigma)
        for n in (10**3, 10**5, 10**7):
            bounds = theory.content_limit_gap_bound(n, kappa, sigma)
            gap = theory.content_rate_exact(n, kappa, sigma) - lim
            assert bounds.lo - 1e-9 <= gap <= bounds.hi + 1e-9
        assert abs(theory.content_rate_exact(10**7, kappa, sigma) - lim) < 1e-4 * max(1, lim)
    # the paper's bound is twice the limit
    assert theory.content_rate_bound(4, 1.0) == pytest.approx(2 * theory.content_rate_limit(4, 1.0))


def test_content_bad_input():
    """theory/BEYOND.md section 1: bad arguments name the parameter."""
    with pytest.raises(theory.DomainError, match="`n`"):
        theory.content_sandwich(1, 2, 1.0)
    with pytest.raises(theory.DomainError, match="`sigma`"):
        theory.content_product_bound(8, 2, 0.0)
    with pytest.raises(theory.DomainError, match="`kappa`"):
        theory.content_jensen_lower_bound(8, 1, 1.0)


# --- 2. Theorem 1: sharp bound and c* -----------------------------------------------


@pytest.mark.parametrize("n,kappa", [(16, 2), (100, 2), (256, 8), (65536, 64)])
def test_sharp_bound_between_list_fano_and_frontier(n, kappa):
    """theory/BEYOND.md section 2 (done-when): list_fano <= sharp <= optimal_mean_z everywhere
    tested, strictly above list-Fano somewhere in its active range."""
    gains = []
    for rate in np.linspace(0.0, math.log2(n), 17):
        lf = theory.list_fano_mean_z_bound(n, kappa, float(rate))
        sh = theory.sharp_mean_z_bound(n, kappa, float(rate))
        opt = theory.optimal_mean_z(n, kappa, float(rate))
        assert lf - 1e-12 <= sh <= opt + 1e-9
        if lf > 0:
            gains.append(sh - lf)
    assert max(gains) > 1e-2


def test_sharp_pc_bound_below_list_fano_and_valid():
    """theory/BEYOND.md section 2: P_c(m) <= sharp root <= +1 root, and the Gibbs law's own
    P(rank <= m) (an attainable interface) never exceeds the sharp root."""
    n, kappa = 64, 6
    for rate in (0.5, 2.0, 4.0):
        law = theory.gibbs_law(n, kappa, rate=rate)
        cdf = np.cumsum(law.p_head)
        for m in range(1, kappa + 1):
            sp_ = theory.sharp_pc_bound(n, m, rate)
            assert sp_ <= theory.list_fano_pc_bound(n, m, rate) + 1e-12
            assert cdf[m - 1] <= sp_ + 1e-9


@pytest.mark.parametrize("n,kappa", [(100, 2), (256, 8)])
def test_c_star_is_the_smallest_valid_constant(n, kappa):
    """theory/BEYOND.md section 2: c* from the closed form equals the search maximum of
    nu(1 - D*(I)/kappa) - I; c*-0.01 is violated somewhere, c* never."""
    c = theory.sharp_constant(n, kappa)
    nu = theory.makeroom_nu(n, kappa)
    rates = np.linspace(0.0, math.log2(n), 201)
    d = np.array([theory.optimal_mean_z(n, kappa, float(r)) for r in rates])
    for cc, ok in ((c, True), (c - 0.01, False)):
        floor = kappa * np.maximum(0.0, 1 - (rates + cc) / nu)
        assert bool(np.all(floor <= d + 1e-9)) is ok


def test_c_star_values_and_kappa2_limit():
    """theory/BEYOND.md section 2: c*(100,2) ~ 0.623 (> 0.4, so the +0.4 variant is false) and
    c*(n,2) -> log2(3/2) as n grows."""
    assert theory.sharp_constant(100, 2) == pytest.approx(0.6229, abs=1e-3)
    gaps = [abs(theory.sharp_constant(10**e, 2) - math.log2(1.5)) for e in (3, 6, 9, 12)]
    assert all(b < a for a, b in itertools.pairwise(gaps)) and gaps[-1] < 1e-5


# --- 3. first order ----------------------------------------------------------------


@pytest.mark.parametrize("kappa", [4, 100])
def test_first_order_limit_to_1e60(kappa):
    """theory/BEYOND.md section 3: R*(kappa/2)/nu -> 1/2 (within the proved (2 + log2 nu)/nu),
    buckets stay near nu, and the second-order identity is exact, n up to 1e60."""
    for e in (4, 9, 15, 30, 60):
        p = theory.first_order_point(10**e, kappa, 0.5)
        assert abs(p.exact_over_nu - 0.5) <= (2 + math.log2(p.nu)) / p.nu
        assert p.bound_lo <= p.second_order <= p.bound_hi + 1e-9
        assert p.second_order <= theory.head_interface_bound(10**e, kappa, 0.5)
        assert p.second_order == pytest.approx(p.second_order_identity, abs=1e-9)
        assert p.bucket_over_nu > 0.95
        assert p.fano_rate <= p.exact_rate <= p.two_level_rate + 1e-9
    assert abs(theory.first_order_point(10**60, 4, 0.5).exact_over_nu - 0.5) < 1e-9


def test_second_order_term_form_kappa_100():
    """theory/BEYOND.md section 3: R* - nu/2 at kappa=100 grows from ~0.36 (n=1e4) to ~1.41
    bits (n=1e15); the derived form tracks it and its fixed-kappa limit
    (1-delta) log2 kappa - h2(delta) bounds it from above."""
    s4 = theory.first_order_point(10**4, 100, 0.5).second_order
    s15 = theory.first_order_point(10**15, 100, 0.5).second_order
    assert s4 == pytest.approx(0.355, abs=0.01) and s15 == pytest.approx(1.412, abs=0.01)
    for e in (9, 15, 30):
        p = theory.first_order_point(10**e, 100, 0.5)
        assert abs(p.second_order_approx - p.second_order) < 0.01
        assert p.second_order < 0.5 * math.log2(100) - 1 + math.log2(10**e / (10**e - 100))


def test_second_order_regimes():
    """theory/BEYOND.md section 3: fixed kappa, the second-order term tends to
    (1-delta) log2 kappa - h2(delta); with kappa >> ln n it follows
    (1-delta) log2 ln((n-kappa)/kappa) - h2(delta)."""
    d = 0.3
    h2 = -(d * math.log2(d)) - (1 - d) * math.log2(1 - d)
    p = theory.first_order_point(10**80, 8, d, with_buckets=False)
    assert p.second_order == pytest.approx((1 - d) * 3 - h2, abs=1e-3)
    n, kappa = 10**12, 10**6
    p = theory.first_order_point(n, kappa, d, with_buckets=False)
    form = (1 - d) * math.log2(math.log((n - kappa) / kappa)) - h2
    assert abs(p.second_order - form) < 0.25


def test_first_order_bad_input():
    """theory/BEYOND.md section 3: delta outside (0,1) and m outside the head are refused."""
    with pytest.raises(theory.DomainError, match="`delta`"):
        theory.first_order_point(100, 4, 1.0)
    with pytest.raises(theory.DomainError, match="`m`"):
        theory.two_level_rate(100, 4, 0.5, 9)


# --- 4. Proposition 1 -----------------------------------------------------------------


@given(
    st.integers(1, 200), st.integers(1, 40), st.floats(0, 1, allow_nan=False)
)
def test_sharp_recovery_never_weaker(N, k, frac):
    """theory/BEYOND.md section 4: sharp bound <= min(1, B/(Nk) + 1/k), >= 2^-k, and the
    constraint KL(pbar || 1-2^-k) <= B/N binds at the returned value."""
    budget = frac * N * k
    sharp = theory.recovery_success_bound_sharp(N, k, budget)
    paper = min(1.0, theory.recovery_success_bound(N, k, budget))
    assert 2.0**-k - 1e-15 <= sharp <= paper + 1e-15
    if 0 < budget < N * k and sharp < 1 - 1e-9:
        p = mpmath.mpf(1 - sharp)
        q = 1 - mpmath.mpf(2) ** -k
        kl = (p * mpmath.log(p / q) + (1 - p) * mpmath.log((1 - p) / (1 - q))) / mpmath.log(2)
        assert abs(float(kl) - budget / N) < 1e-6 * max(1.0, budget / N)


def _brute_optimum(N: int, k: int, M: int) -> float:
    """Independent brute force over every map g: {0,1}^(Nk) -> [M]."""
    size = 2 ** (N * k)
    best = 0
    for g in itertools.product(range(M), repeat=size):
        total = 0
        for t in range(N):
            for r in range(M):
                counts: dict[int, int] = {}
                for x in range(size):
                    if g[x] == r:
                        v = (x >> (t * k)) & ((1 << k) - 1)
                        counts[v] = counts.get(v, 0) + 1
                total += max(counts.values(), default=0)
        best = max(best, total)
    return best / (N * size)


@pytest.mark.parametrize("N,k,M", [(2, 1, 2), (2, 1, 3), (1, 2, 3), (3, 1, 2)])
def test_exact_optimum_against_brute_force(N, k, M):
    """theory/BEYOND.md section 4: the partition enumeration equals brute force over all
    state maps, and optimum <= sharp <= paper."""
    r = theory.recovery_exact_optimum(N, k, M)
    assert r.optimum == pytest.approx(_brute_optimum(N, k, M), abs=1e-15)
    assert r.optimum <= r.sharp_bound + 1e-12 <= r.paper_bound + 2e-12
    assert r.sharp_gap >= -1e-12 and r.paper_gap >= r.sharp_gap - 1e-12


def test_exact_optimum_refuses_large_instances():
    """theory/BEYOND.md section 4: instances beyond enumeration are refused with the rule."""
    with pytest.raises(theory.DomainError, match="2\\^\\(N k\\)"):
        theory.recovery_exact_optimum(2, 2, 3)


# --- CLI and proof steps ----------------------------------------------------------------


def _json(argv, capsys):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_keys(capsys):
    """bound content gains product_bound/lower_bound/exact_rate (old keys kept);
    bound makeroom gains sharp_lower_bound and c_star; recovery gains sharp_success_bound."""
    doc = _json(["bound", "content", "--kappa", "4", "--sigma", "1", "--n", "64"], capsys)
    assert doc["lower_bound"] <= doc["exact_rate"] <= doc["product_bound"]
    assert doc["exact_rate"] == doc["exact_rate_bits"] and "tight_bound_bits" in doc
    doc = _json(["bound", "makeroom", "--n", "100", "--kappa", "2", "--rate", "2"], capsys)
    assert doc["list_fano_lower_bound"] <= doc["sharp_lower_bound"] <= doc["optimal_mean_z"]
    assert doc["c_star"] == pytest.approx(theory.sharp_constant(100, 2))
    doc = _json(["bound", "recovery", "--N", "10", "--k", "8", "--budget", "30"], capsys)
    assert doc["sharp_success_bound"] <= doc["lossy_success_cap"]


@pytest.mark.slow
def test_new_proof_steps_and_chains():
    """the beyond-the-paper steps state a generality, the fast ones pass,
    and Proposition 1's sharper converse has a closed chain proved for all
    parameters (its finite enumeration corroborates but does not conclude)."""
    from vistalab.theory._proofs._registry import check_chains

    for claim in ("content-sandwich", "thm1-sharp", "first-order", "prop1-sharp"):
        steps = theory.list_steps(claim)
        assert len(steps) >= 3 and all(s.generality in ("all", "finite", "sampled") for s in steps)
        assert any(claim in s.concludes for s in steps)
    assert theory.certify_all("first-order").ok
    report = theory.certify_all("prop1*")
    assert report.ok
    (chain,) = check_chains(report.steps, ("prop1-sharp",))
    assert chain.status == "closed"
    assert "prop1-sharp:sharp_vs_exact_optimum" not in chain.steps


def test_steps_fail_on_broken_inputs(monkeypatch):
    """the enumeration checks refuse a broken bound (a checker can fail)."""
    from vistalab.theory import _recovery_sharp, _sharp_makeroom
    from vistalab.theory._proofs import _registry

    orig = _sharp_makeroom.sharp_mean_z_bound
    monkeypatch.setattr(_sharp_makeroom, "sharp_mean_z_bound", lambda n, k, r: orig(n, k, r) + 0.5)
    step = _registry.get_step("thm1-sharp", "sharp_between_list_fano_and_frontier")
    assert not _registry.run_step(step).passed
    monkeypatch.setattr(_recovery_sharp, "recovery_success_bound_sharp", lambda N, k, b: 0.0)
    step = _registry.get_step("prop1-sharp", "sharp_vs_exact_optimum")
    assert not _registry.run_step(step).passed


# --- 5. certified numerics ----------------------------------------------------------------


@pytest.mark.parametrize("n,kappa,sigma", [(8, 2, 2.0), (1024, 4, 1.0), (10**6, 2, 2.0)])
def test_certified_content_rate_contains_the_quadrature(n, kappa, sigma):
    """theory/BEYOND.md section 5: the ball-arithmetic rate has radius < 1e-12 and the float
    quadrature content_rate_exact lies within its claimed 1e-10 of it."""
    c = theory.content_rate_certified(n, kappa, sigma)
    assert c.radius < 1e-12
    assert abs(theory.content_rate_exact(n, kappa, sigma) - c.value) <= (
        theory.CONTENT_RATE_ABS_TOL + c.radius
    )
    sw = theory.content_sandwich(n, kappa, sigma)
    assert sw.lower_bound <= c.lower and c.upper <= sw.product_bound


@pytest.mark.parametrize("n,kappa,sigma", [(10, 2, 1.0), (1000, 8, 1.0), (10**6, 16, 0.5)])
def test_certified_gaussian_mean_z_against_sims(n, kappa, sigma):
    """theory/BEYOND.md section 5: sims' float evaluator of the Gaussian E[Z] lies within its
    documented 1e-8 of the certified enclosure."""
    from vistalab.sims import gaussian_exact_mean_z

    c = theory.gaussian_mean_z_certified(n, kappa, sigma)
    assert c.radius < 1e-12
    assert abs(gaussian_exact_mean_z(n, kappa, sigma) - c.value) <= 1e-8 + c.radius


def test_certified_bad_input():
    """theory/BEYOND.md section 5: the certified evaluators name the rule they need."""
    with pytest.raises(theory.DomainError, match="ln\\(kappa\\)/sigma <= 8"):
        theory.content_rate_certified(8, 16, 0.1)
    with pytest.raises(theory.DomainError, match="`kappa`"):
        theory.gaussian_mean_z_certified(10**4, 1000, 1.0)


def test_cli_makeroom_first_order_keys(capsys):
    """theory/BEYOND.md section 3: bound makeroom reports R*/nu and the exact second-order term
    inside its proved bounds."""
    doc = _json(["bound", "makeroom", "--n", "1000000000000000", "--kappa", "100",
                 "--rate", "10"], capsys)
    lo, hi = doc["second_order_bounds"]
    assert lo <= doc["second_order_term"] <= hi
    assert doc["optimal_rate_over_nu"] == pytest.approx(
        doc["optimal_rate_for_delta"] / doc["nu"])


@given(st.integers(5, 10**6), st.data())
def test_sharp_bound_ordered_random_points(n, data):
    """theory/BEYOND.md section 2: list_fano <= sharp <= optimal_mean_z at random (n, kappa, I)."""
    kappa = data.draw(st.integers(2, min((n - 1) // 2, 200)))
    rate = data.draw(st.floats(0.0, math.log2(n), allow_nan=False))
    lf = theory.list_fano_mean_z_bound(n, kappa, rate)
    sh = theory.sharp_mean_z_bound(n, kappa, rate)
    assert lf - 1e-12 <= sh <= theory.optimal_mean_z(n, kappa, rate) + 1e-9
