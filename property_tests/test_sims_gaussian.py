"""The Gaussian content channel of Proposition 2 in sims/: the exact E[Z]
under the Bayes order (a one-dimensional integral of a binomial tail) against
an independent 30-digit mpmath evaluation, and the Monte Carlo rate
I(J*;W) against theory's quadrature and the paper's bound."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from vistalab import sims, theory


def _mp_mean_z(n: int, kappa: int, sigma: float, dps: int = 30) -> float:
    """E[Z] = E_x[ E[min(C, kappa)] ], C ~ Binom(n-1, P(N(0,1) > x)), x ~ N(d,1),
    with exact binomial sums and tanh-sinh quadrature at ``dps`` digits."""
    with mp.workdps(dps):
        d = mp.log(kappa) / sigma
        m = n - 1

        def g(x):
            p = mp.ncdf(-x)
            pmf = (1 - p) ** m
            acc = mp.mpf(0)
            for c in range(kappa):
                acc += (kappa - c) * pmf
                pmf *= mp.mpf(m - c) / (c + 1) * p / (1 - p)
            return kappa - acc

        # Split where m P(N(0,1) > x) crosses 1/100 .. 100 kappa and around d.
        pts = {d - 12, d - 4, d, d + 4, d + 12}
        for c in (mp.mpf(1) / 100, 1, kappa, 100 * kappa):
            if c < m:
                pts.add(-mp.sqrt(2) * mp.erfinv(2 * c / m - 1))
        pts = sorted(x for x in pts if d - 12 <= x <= d + 12)
        val = mp.quad(lambda x: mp.npdf(x, d, 1) * g(x), pts)
        return float(val)


@pytest.mark.slow
@pytest.mark.parametrize(
    "n,kappa,sigma",
    [(64, 4, 1.0), (10**4, 8, 0.7), (10**6, 3, 2.0), (10**9, 16, 0.5), (10**9, 5, 1.0),
     (50, 40, 0.3)],
)
def test_exact_mean_z_matches_mpmath(n, kappa, sigma):
    """Issue section 2 (exact evaluators): E[Z] = sum_m P(at least m of the n-1
    light blocks are observed above the bulky one) to 1e-8, n up to 1e9."""
    assert sims.gaussian_exact_mean_z(n, kappa, sigma) == pytest.approx(
        _mp_mean_z(n, kappa, sigma), abs=1e-8)


def test_issue_example_exact_value():
    """Issue section 5 example (n=64, kappa=4, sigma=1): E[Z] about 2.7199,
    rate about 1.32 bits; the exact value also matches mpmath to 1e-10."""
    exact = sims.gaussian_exact_mean_z(64, 4, 1.0)
    assert exact == pytest.approx(2.7199, abs=5e-5)
    assert exact == pytest.approx(_mp_mean_z(64, 4, 1.0), abs=1e-10)
    rate = sims.estimate_gaussian_rate(64, 4, 1.0, trials=4000, rng=1)
    assert rate.bits == pytest.approx(1.32, abs=0.01)


@pytest.mark.parametrize("n,kappa,sigma", [(64, 4, 1.0), (500, 7, 0.6), (10**7, 3, 1.5)])
def test_tail_probabilities_sum_to_mean(n, kappa, sigma):
    """Equation (tailsum): E[Z] = sum_{m=1..kappa} P(Z >= m), tails non-increasing."""
    tail = sims.gaussian_exact_z_tail(n, kappa, sigma)
    assert np.all(np.diff(tail) <= 1e-12)
    assert np.all((tail >= -1e-15) & (tail <= 1 + 1e-15))
    assert tail.sum() == pytest.approx(sims.gaussian_exact_mean_z(n, kappa, sigma), abs=1e-9)


@pytest.mark.parametrize("n,kappa", [(20, 3), (1000, 10), (10**8, 5)])
def test_exact_mean_z_between_frontier_and_blind(n, kappa):
    """Theorem 1 and the exact frontier: the Gaussian channel's Bayes E[Z] is
    at least the frontier at its (exact) rate and at most the blind value;
    it grows with the noise sigma."""
    values = []
    for sigma in (0.4, 1.0, 3.0):
        ez = sims.gaussian_exact_mean_z(n, kappa, sigma)
        rate = theory.content_rate_exact(n, kappa, sigma)
        assert ez >= theory.optimal_mean_z(n, kappa, rate) - 1e-9
        assert ez <= theory.blind_mean_z(n, kappa) + 1e-9
        values.append(ez)
    assert values == sorted(values)


@pytest.mark.parametrize(
    "n,kappa,sigma,trials",
    [(2, 4, 1.0, 3000), (64, 4, 1.0, 2000), (1000, 4, 0.5, 2000), (1000, 2, 2.0, 300),
     (300, 16, 0.3, 1000), (200, 4, 0.2, 300)],
)
def test_rate_estimate_matches_theory_quadrature(n, kappa, sigma, trials):
    """Proposition 2's channel: the Monte Carlo I(J*;W) (conditional on the
    light blocks, control variates) agrees with theory.content_rate_exact
    within 4 standard errors, and never exceeds the tight bound
    (1-1/n) ln2 (log2 kappa)^2 / (2 sigma^2) nor log2 n."""
    est = sims.estimate_gaussian_rate(n, kappa, sigma, trials=trials, rng=n + trials)
    exact = theory.content_rate_exact(n, kappa, sigma)
    assert abs(est.bits - exact) <= 4 * est.se + 1e-12
    assert est.se > 0 and not est.exact and est.trials == trials
    cap = min(theory.content_rate_bound_tight(n, kappa, sigma), math.log2(n))
    assert est.bits <= cap + 4 * est.se


@pytest.mark.parametrize("n,kappa,sigma", [(40, 4, 0.8), (200, 4, 0.25), (2, 4, 1.0)])
def test_rate_standard_error_is_honest(n, kappa, sigma):
    """The reported SE matches the spread of independent estimates: over 30
    seeds the sum of squared z-scores against theory's exact rate lies
    between the 0.1% and 99.9% points of chi-square(30). (200, 4, 0.25) is
    a rare-event regime where a light block rarely competes with the bulky
    one; (2, 4, 1) has a single light block."""
    from scipy import stats

    exact = theory.content_rate_exact(n, kappa, sigma)
    z = []
    for seed in range(30):
        est = sims.estimate_gaussian_rate(n, kappa, sigma, trials=300, rng=seed)
        z.append((est.bits - exact) / est.se)
    stat = float(np.sum(np.square(z)))
    assert stats.chi2.ppf(0.001, 30) <= stat <= stats.chi2.ppf(0.999, 30)


def test_rate_estimate_independent_of_workers_and_reproducible():
    """Issue section 4: a seed fixes the estimate whatever the worker count."""
    a = sims.estimate_gaussian_rate(300, 4, 1.0, trials=1500, rng=8, workers=1)
    b = sims.estimate_gaussian_rate(300, 4, 1.0, trials=1500, rng=8, workers=2)
    c = sims.estimate_gaussian_rate(300, 4, 1.0, trials=1500, rng=9)
    assert (a.bits, a.se) == (b.bits, b.se)
    assert a.bits != c.bits
    assert a.seed_entropy == 8


def test_rate_estimate_segments_large_n():
    """Memory stays bounded for n beyond one block of cells (a trial is drawn
    in fixed segments); the estimate still matches the quadrature."""
    n = 300_000
    est = sims.estimate_gaussian_rate(n, 4, 1.0, trials=6, rng=3)
    assert abs(est.bits - theory.content_rate_exact(n, 4, 1.0)) <= 4 * est.se + 1e-12


def test_gaussian_rate_falls_back_to_quadrature_for_huge_n():
    """Beyond n = 1e5 the O(n)-per-trial Monte Carlo is replaced by theory's
    quadrature unless trials are requested explicitly."""
    iface = sims.make_interface("gaussian", n=10**9, kappa=4, sigma=1.0)
    rate = iface.rate()
    assert rate.exact and rate.se == 0.0
    assert rate.bits == theory.content_rate_exact(10**9, 4, 1.0)


@pytest.mark.parametrize("bad,match", [
    (dict(n=1, kappa=4, sigma=1.0, trials=10), r"`n` must be an integer >= 2"),
    (dict(n=10, kappa=4, sigma=0.0, trials=10), r"`sigma` must be a finite real number"),
    (dict(n=10, kappa=4, sigma=1.0, trials=1), r"`trials` must be an integer >= 2"),
    (dict(n=10, kappa=1, sigma=1.0, trials=10), r"`kappa` must be an integer >= 2"),
])
def test_rate_estimator_rejects_bad_input(bad, match):
    """DESIGN.md rule 6: errors name the parameter, the value and the rule."""
    args = dict(bad)
    trials = args.pop("trials")
    with pytest.raises(theory.DomainError, match=match):
        sims.estimate_gaussian_rate(**args, trials=trials)


def test_exact_mean_rejects_n_below_kappa_plus_one():
    """Definition 2: the instance needs kappa load-bearing blocks besides the bulky one."""
    with pytest.raises(theory.DomainError, match=r"`n` must be an integer with n >= kappa \+ 1"):
        sims.gaussian_exact_mean_z(4, 4, 1.0)
