"""How tight the paper's bounds are (theory/_tightness.py): the exact rate of
Proposition 2's Gaussian content channel, the tighter bound, and Theorem 1's
Fano bound against the exact frontier."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import vistalab.theory._tightness as tightness
from hypothesis import given
from hypothesis import strategies as st
from vistalab.theory import (
    CONTENT_RATE_ABS_TOL,
    CONTENT_SNR_MAX,
    content_rate_bound,
    content_rate_bound_tight,
    content_rate_exact,
    list_fano_mean_z_bound,
    makeroom_lower_bound,
    optimal_mean_z,
    tightness_report,
)

MP = mpmath.MPContext()
MP.dps = 30


def exact_rate_n2(kappa: int, sigma: float) -> float:
    """I(J*;W) for n = 2 as a 1-D integral: the posterior of the true block is
    sigmoid(s^2 + s (Z1 - Z2)) with Z1 - Z2 ~ N(0, 2), s = ln(kappa)/sigma."""
    s = MP.log(kappa) / sigma

    def f(y):
        return MP.npdf(y) * MP.log(1 / (1 + MP.exp(-(s * s + s * MP.sqrt(2) * y))))

    val = MP.log(2) + MP.quad(f, [-MP.inf, -s / MP.sqrt(2), 0, MP.inf])
    return float(val / MP.ln2)


def monte_carlo_rate(n: int, kappa: int, sigma: float, *, draws: int, seed: int):
    """Monte Carlo of I = log2 n + E[log2 posterior(J*)] straight from the channel
    W_i = ln s_i + sigma eps_i (J* = 1 by symmetry): (mean, standard error)."""
    rng = np.random.default_rng(seed)
    ln_l, ln_big = 0.0, math.log(kappa)
    w = ln_l + sigma * rng.standard_normal((draws, n))
    w[:, 0] += ln_big - ln_l
    # exact Gaussian log-likelihood of "block i is bulky", up to a common term
    loglik = (w - ln_l) ** 2 / (2 * sigma**2) - (w - ln_big) ** 2 / (2 * sigma**2)
    top = loglik.max(axis=1, keepdims=True)
    log_post = loglik[:, 0] - (top[:, 0] + np.log(np.exp(loglik - top).sum(axis=1)))
    vals = (math.log(n) + log_post) / math.log(2)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(draws))


@pytest.mark.parametrize(
    "kappa,sigma", [(2, 1.0), (2, 5.0), (4, 0.5), (16, 2.0), (16, 0.5), (64, 0.3)]
)
def test_content_rate_exact_matches_1d_integral_for_n2(kappa, sigma):
    """Proposition 2, exact rate: for n = 2 the 2-D Frullani quadrature
    agrees with an independent 1-D mpmath integral to 1e-10 bits."""
    assert content_rate_exact(2, kappa, sigma) == pytest.approx(
        exact_rate_n2(kappa, sigma), abs=CONTENT_RATE_ABS_TOL
    )


@pytest.mark.slow
@pytest.mark.parametrize("n,kappa,sigma", [(3, 2, 0.7), (5, 4, 1.0), (8, 16, 0.5)])
def test_content_rate_exact_matches_monte_carlo(n, kappa, sigma):
    """Proposition 2, exact rate for n > 2: within 4 standard errors of a
    fixed-seed Monte Carlo of the channel itself (2e5 draws)."""
    mean, se = monte_carlo_rate(n, kappa, sigma, draws=200_000, seed=20240 + n)
    assert abs(content_rate_exact(n, kappa, sigma) - mean) <= 4 * se + CONTENT_RATE_ABS_TOL


@given(st.integers(2, 64), st.integers(2, 64), st.floats(0.2, 20))
def test_exact_rate_below_tight_bound_below_paper_bound(n, kappa, sigma):
    """Proposition 2: I(J*;W) <= min(tight bound, log2 n) <= paper bound, with
    the tight bound at most half the paper's."""
    exact = content_rate_exact(n, kappa, sigma)
    tight = content_rate_bound_tight(n, kappa, sigma)
    paper = content_rate_bound(kappa, sigma)
    assert 0 <= exact <= min(tight, math.log2(n)) + CONTENT_RATE_ABS_TOL
    assert tight * 2 * n / (n - 1) == pytest.approx(paper, rel=1e-12)


@pytest.mark.parametrize("n,kappa", [(2, 2), (8, 4), (64, 16)])
def test_tight_bound_is_sharp_at_low_signal(n, kappa):
    """Proposition 2, tightness: as sigma grows the exact rate approaches the
    tight bound (ratio -> 1) while the paper's bound stays 2n/(n-1) times larger."""
    ratios = [content_rate_bound_tight(n, kappa, s) / content_rate_exact(n, kappa, s)
              for s in (1.0, 4.0, 16.0)]
    assert ratios[0] > ratios[1] > ratios[2] >= 1.0 - 1e-6
    assert ratios[2] < 1.01


@pytest.mark.parametrize("n,kappa", [(4, 2), (8, 16)])
def test_exact_rate_decreases_with_noise(n, kappa):
    """Proposition 2: more perception noise is a degraded channel, so the
    exact rate decreases in sigma (data processing)."""
    rates = [content_rate_exact(n, kappa, s) for s in (0.3, 0.6, 1.2, 2.4, 4.8)]
    assert all(b < a for a, b in zip(rates, rates[1:], strict=False))


@pytest.mark.parametrize("n,kappa,sigma", [(200, 4, 0.05), (8, 4, 0.05), (10**6, 16, 0.1)])
def test_content_rate_exact_at_high_snr_is_within_tolerance_of_log2n(n, kappa, sigma):
    """Proposition 2 near its ledger endpoint: the MAP decoder errs with probability
    at most (n-1) Phi(-ln(kappa)/(sigma sqrt 2)) (computed here with mpmath), so by
    Fano log2(n) - I <= h(Pe) + Pe log2(n-1), far below the stated tolerance; the
    quadrature's rounding (about 1e-9 bits at ln(kappa)/sigma = 28) must not leak."""
    s = mpmath.log(kappa) / sigma
    pe = (n - 1) * mpmath.ncdf(-s / mpmath.sqrt(2))
    gap = -pe * mpmath.log(pe, 2) - (1 - pe) * mpmath.log(1 - pe, 2) + pe * mpmath.log(n - 1, 2)
    assert gap < CONTENT_RATE_ABS_TOL / 10
    assert abs(content_rate_exact(n, kappa, sigma) - math.log2(n)) <= CONTENT_RATE_ABS_TOL


def test_content_rate_exact_beyond_quadrature_range_is_the_fano_endpoint():
    """Proposition 2 beyond ln(kappa)/sigma = CONTENT_SNR_MAX: no refusal;
    Fano's inequality puts log2(n) - I below the tolerance, so log2(n) is returned
    (the gap bound is recomputed here with mpmath)."""
    n, kappa, sigma = 4, 2**20, 0.01
    s = mpmath.log(kappa) / sigma
    assert s > CONTENT_SNR_MAX
    pe = (n - 1) * mpmath.ncdf(-s / mpmath.sqrt(2))
    assert pe < mpmath.mpf(10) ** -100
    assert content_rate_exact(n, kappa, sigma) == math.log2(n)
    assert content_rate_exact(10**12, 2, 1e-3) == math.log2(10**12)


@given(
    st.integers(5, 10**6).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(2, min(200, (n - 1) // 2)))
    ),
    st.floats(0, 1),
)
def test_list_fano_bound_sits_between_theorem1_and_frontier(nk, frac):
    """Theorem 1 (B) with Lemma 1 on every prefix list: at least the paper's
    bound and still a valid lower bound (below the exact frontier)."""
    n, kappa = nk
    rate = frac * math.log2(n)
    lf = list_fano_mean_z_bound(n, kappa, rate)
    assert makeroom_lower_bound(n, kappa, rate) <= lf + 1e-12
    assert lf <= optimal_mean_z(n, kappa, rate) + 1e-9


def test_default_report_holds_and_quantifies_the_gaps():
    """Issue section 5 report: every row holds on the default grids; the
    paper's content bound is at most 2n/(n-1) = 4 times the tight one (n=2);
    Fano's gap to the exact frontier is positive somewhere."""
    rep = tightness_report()
    assert rep.holds
    assert rep.content_rows and rep.makeroom_rows and rep.threshold_rows
    assert rep.max_paper_over_tight == pytest.approx(4.0)
    assert rep.max_gap == max(r.exact_mean_z - r.fano_lower_bound for r in rep.makeroom_rows)
    assert rep.max_gap > 0
    for r in rep.makeroom_rows:
        assert r.fano_lower_bound <= r.list_fano_lower_bound + 1e-9
        assert r.list_fano_lower_bound <= r.exact_mean_z + 1e-9 <= r.bucket_mean_z + 2e-9
    for r in rep.threshold_rows:
        assert r.fano_rate <= r.exact_rate + 1e-9 <= r.bucket_rate + 2e-9


def test_report_checks_fail_on_broken_bounds(monkeypatch):
    """The report's `holds` checks can fail: a content bound below the exact
    rate, a frontier above the buckets, or a Fano rate above the exact one."""
    grid_c = [(4, 4, 1.0)]
    grid_m = [(64, 4, 2.0)]
    grid_t = [(64, 4, 0.5)]
    assert tightness_report(content_grid=grid_c, makeroom_grid=grid_m, threshold_grid=grid_t).holds

    monkeypatch.setattr(tightness, "content_rate_bound_tight", lambda n, k, s: 1e-3)
    rep = tightness_report(content_grid=grid_c, makeroom_grid=grid_m, threshold_grid=grid_t)
    assert not rep.content_rows[0].holds and not rep.holds
    monkeypatch.undo()

    monkeypatch.setattr(tightness, "optimal_mean_z", lambda n, k, r: float(k))
    rep = tightness_report(content_grid=grid_c, makeroom_grid=grid_m, threshold_grid=grid_t)
    assert not rep.makeroom_rows[0].holds and not rep.holds
    monkeypatch.undo()

    monkeypatch.setattr(tightness, "threshold_rate", lambda n, k, d: 1e3)
    rep = tightness_report(content_grid=grid_c, makeroom_grid=grid_m, threshold_grid=grid_t)
    assert not rep.threshold_rows[0].holds and not rep.holds
