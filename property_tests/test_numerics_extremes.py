"""Numerics at the extremes of the domain: every estimator returns
finite values that agree with the exact value within its stated error, and the
closed forms stay finite and ordered, across n up to 1e12, kappa near n/2,
sigma from 1e-3 to 1e3 and rates near 0 and near log2 n.

Statistical checks use fixed seeds and a tolerance of 5 standard errors (the
estimator's own), plus the exact value's stated absolute tolerance; warnings
(overflow, invalid value) are errors here, so an inf/NaN on the way fails too.
"""

from __future__ import annotations

import math

import pytest
from vistalab.theory import (
    CONTENT_RATE_ABS_TOL,
    blind_mean_z,
    content_rate_bound,
    content_rate_bound_tight,
    content_rate_exact,
    list_fano_mean_z_bound,
    makeroom_lower_bound,
    optimal_mean_z,
)

from vistalab import sims

pytestmark = pytest.mark.filterwarnings("error")

Z = 5.0

RATE_GRID = [
    (n, kappa, sigma)
    for n in (2, 3, 64, 1000)
    for kappa in sorted({2, max(2, (n - 1) // 2)})
    for sigma in (1e-3, 0.05, 0.1671, 1.0, 10.0, 1e3)
] + [pytest.param(10**5, k, s, marks=pytest.mark.slow)
      for k in (2, 49_999) for s in (1e-3, 0.1671, 1.0, 1e3)]


@pytest.mark.parametrize("n,kappa,sigma", RATE_GRID)
def test_gaussian_rate_estimator_agrees_with_quadrature(n, kappa, sigma):
    """Proposition 2's channel: estimate_gaussian_rate is finite and within 5 of its
    own standard errors (+ the quadrature's tolerance) of content_rate_exact, from
    sigma = 1e-3 (ln(kappa)/sigma ~ 1e4) to 1e3 (rate ~ 1e-7 bits)."""
    trials = 400 if n <= 1000 else 40
    est = sims.estimate_gaussian_rate(n, kappa, sigma, trials=trials, rng=3)
    exact = content_rate_exact(n, kappa, sigma)
    assert math.isfinite(est.bits) and math.isfinite(est.se) and est.se >= 0
    assert 0.0 <= est.bits <= math.log2(n)
    assert abs(est.bits - exact) <= Z * est.se + CONTENT_RATE_ABS_TOL + 1e-12 * math.log2(n)


def test_gaussian_rate_regression_high_snr():
    """An audit's case: n=124, kappa=31, sigma=0.1671 (ln(kappa)/sigma ~ 20.5) gave
    bits=nan; it must agree with the quadrature's 6.9542 bits."""
    est = sims.estimate_gaussian_rate(124, 31, 0.1671, trials=4000, rng=1)
    exact = content_rate_exact(124, 31, 0.1671)
    assert round(exact, 4) == 6.9542
    assert math.isfinite(est.bits) and math.isfinite(est.se)
    assert abs(est.bits - exact) <= Z * est.se + CONTENT_RATE_ABS_TOL


INTERFACES = [("ledger", {}), ("blind", {}), ("buckets", {"buckets": 4}),
              ("gibbs", {"rate": 1e-3}), ("gibbs", {"rate": "top"}),
              ("gaussian", {"sigma": 1e-3}), ("gaussian", {"sigma": 1.0}),
              ("gaussian", {"sigma": 1e3})]
# The O(n)-per-trial Monte Carlo rate (gaussian at n <= 1e5) makes the middle of
# the grid slow; the extremes (n = 5, 1e9, 1e12: quadrature rate) run by default.
MAKEROOM_GRID = [
    pytest.param(n, kappa, name, params, id=f"{n}-{kappa}-{name}-{params}",
                 marks=[pytest.mark.slow] if n in (1000, 10**6) and name == "gaussian" else [])
    for n, kappas in ((5, (2,)), (1000, (2, 64, 499)), (10**6, (2, 1000)), (10**9, (2, 1000)),
                      (10**12, (2, 1000)))
    for kappa in kappas
    for name, params in INTERFACES
]


@pytest.mark.parametrize("n,kappa,name,params", MAKEROOM_GRID)
def test_makeroom_estimator_agrees_with_exact(n, kappa, name, params):
    """Theorem 1's instance: the fast Monte Carlo E[Z] is finite and within 5 of its
    standard errors of the exact E[Z] (closed forms, the Gibbs law, the Gaussian
    quadrature), and the rate is finite in [0, log2 n], up to n = 1e12."""
    params = {k: (math.log2(n) * (1 - 1e-9) if v == "top" else v) for k, v in params.items()}
    r = sims.simulate_makeroom(n, kappa, name, trials=2000, rng=5, **params)
    assert math.isfinite(r.mean_z) and math.isfinite(r.mean_z_se)
    assert math.isfinite(r.rate_bits) and 0.0 <= r.rate_bits <= math.log2(n) + 1e-9
    assert r.exact_mean_z is not None and math.isfinite(r.exact_mean_z)
    # 1/trials: a Z that never varied in the sample still has a resolution of one trial
    assert abs(r.mean_z - r.exact_mean_z) <= Z * r.mean_z_se + kappa / r.trials
    assert r.consistent_with_theory


RECOVERY_GRID = [pytest.param(N, k, budget, strategy,
                              marks=[pytest.mark.slow] if N * k > 1000 else [])
                 for N, k in ((1, 1), (2, 64), (1024, 1024), (2**15, 2))
                 for budget in (0.0, 0.5 * N * k)
                 for strategy in ("keep-bits", "keep-blocks", "random-subset", "recover")]


@pytest.mark.parametrize("N,k,budget,strategy", RECOVERY_GRID)
def test_recovery_estimator_agrees_with_exact(N, k, budget, strategy):
    """Proposition 1's task: the success rate is finite, its exact binomial interval
    is finite, and it lies within 5 binomial standard errors of the strategy's
    closed-form success probability."""
    r = sims.simulate_recovery(N, k, budget, strategy, trials=400, rng=7)
    assert math.isfinite(r.success) and all(math.isfinite(x) for x in r.success_ci)
    if r.exact_success is not None:
        p = r.exact_success
        se = math.sqrt(max(p * (1 - p), 1.0 / r.trials) / r.trials)
        assert abs(r.success - p) <= Z * se


CLOSED_GRID = [
    (n, kappa, frac)
    for n in (5, 10**3, 10**7, 10**9, 10**12)
    for kappa in sorted({2, 64 if n > 200 else 2, (n - 1) // 2 if n <= 10**7 else 2})
    for frac in (0.0, 1e-12, 0.5, 1 - 1e-12, 1.0)
]


@pytest.mark.parametrize("n,kappa,frac", CLOSED_GRID)
def test_makeroom_closed_forms_finite_and_ordered(n, kappa, frac):
    """Theorem 1's bounds at extreme (n, kappa, rate): finite, and ordered
    0 <= Fano bound <= list-Fano bound <= exact frontier <= blind E[Z] <= kappa
    (the list-Fano sum over kappa ~ n/2 = 5e6 terms included)."""
    rate = frac * math.log2(n)
    lower = makeroom_lower_bound(n, kappa, rate)
    lfano = list_fano_mean_z_bound(n, kappa, rate)
    best = optimal_mean_z(n, kappa, rate)
    blind = blind_mean_z(n, kappa)
    for v in (lower, lfano, best, blind):
        assert math.isfinite(v)
    slack = 1e-9 * kappa
    assert 0.0 <= lower <= lfano + slack and lfano <= best + slack
    assert best <= blind + slack and blind <= kappa


@pytest.mark.parametrize("sigma", [1e-300, 1e-3, 0.07, 1.0, 1e3, 1e308])
@pytest.mark.parametrize("n,kappa", [(2, 2), (100, 4), (10**12, 2), (10**12, 10**6)])
def test_content_bounds_finite_or_vacuous(n, kappa, sigma):
    """Proposition 2's bounds from sigma = 1e-300 to 1e308: no ZeroDivision or
    Overflow; +inf only where the bound is vacuous; the exact rate (quadrature, or
    the Fano endpoint log2 n beyond ln(kappa)/sigma = 40) is finite and below the
    capped tight bound."""
    paper, tight = content_rate_bound(kappa, sigma), content_rate_bound_tight(n, kappa, sigma)
    assert paper >= tight >= 0.0 and not math.isnan(paper)
    assert math.isfinite(paper) or sigma < 1e-150
    exact = content_rate_exact(n, kappa, sigma)
    assert math.isfinite(exact) and 0.0 <= exact <= min(tight, math.log2(n)) + CONTENT_RATE_ABS_TOL
