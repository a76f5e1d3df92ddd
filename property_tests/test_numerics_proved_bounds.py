"""Numerics that honour the proved bounds (App. C, Proposition 2; App. D,
Theorem 1's make-room instance).

* ``content_rate_exact`` is accurate to a relative tolerance over its whole
  domain: it never exceeds the proved tight bound of Proposition 2,
  ``(1 - 1/n) ln2 (log2 kappa)^2 / (2 sigma^2)`` bits, from sigma = 1e-3 to
  1e12, and at small signal-to-noise ratio its ratio to that bound tends to 1
  (the bound is the first term of the rate's series in s^2 = (ln kappa/sigma)^2).
* The make-room Monte Carlo's interval never collapses to a point when every
  trial gives the same Z (exact binomial bound on the unseen values), and
  ``agrees_with_exact`` is False whenever the interval at the check level
  excludes the exact value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from vistalab.sims import _makeroom

from vistalab import sims, theory

SIGMAS = np.logspace(-3, 12, 46)
NS = (2, 3, 10, 1000, 10**6)
KAPPAS = (2, 16, 1000)


@pytest.mark.parametrize("kappa", KAPPAS)
@pytest.mark.parametrize("n", NS)
def test_exact_rate_never_exceeds_the_proved_bound(n, kappa):
    """Prop. 2 (tight variant, proved in App. C and in Coq for finite channels):
    I(J*;W) <= (1 - 1/n) ln2 (log2 kappa)^2 / (2 sigma^2) and I <= log2 n, at
    every sigma from 1e-3 to 1e12, up to a relative 1e-12 (float rounding).
    Before the series branch the quadrature's absolute 1e-10 floor broke it
    4,071-fold at sigma = 1e8 (n = 1000)."""
    for sigma in SIGMAS:
        exact = theory.content_rate_exact(n, kappa, float(sigma))
        bound = min(theory.content_rate_bound_tight(n, kappa, float(sigma)), math.log2(n))
        assert 0.0 <= exact <= bound * (1 + 1e-12), (n, kappa, sigma, exact, bound)


@pytest.mark.parametrize("n", NS)
def test_exact_rate_is_relatively_accurate_at_small_snr(n):
    """At small s = ln(kappa)/sigma the rate is (1 - 1/n) s^2/2 - O(s^4) nats:
    its ratio to the tight bound is 1 - O(s^2), not a number swamped by an
    absolute error (the issue's sigma = 1e12 returned 2.8e-13 against a bound
    of 3.5e-25)."""
    kappa = 4
    for sigma in (1e3, 1e5, 1e8, 1e12):
        s = math.log(kappa) / sigma
        ratio = theory.content_rate_exact(n, kappa, sigma) / theory.content_rate_bound_tight(
            n, kappa, sigma)
        assert 1 - 4 * s * s - 1e-12 <= ratio <= 1 + 1e-12, (n, sigma, ratio)


@pytest.mark.parametrize("n", (2, 5, 64, 10**5))
def test_series_and_quadrature_agree_where_both_apply(n):
    """The small-SNR series and the quadrature are independent computations of
    the same I(J*;W); where both are accurate they agree to a relative 1e-7
    (the quadrature's absolute 1e-10 bits over rates of order 1e-3). The series
    is refused where its last term is not negligible."""
    from vistalab.theory import _tightness

    for s in (0.03, 0.05, 0.07):
        series = _tightness._content_rate_series_bits(n, s)
        quad = _tightness._content_rate_quadrature_bits(n, s)
        assert series is not None
        assert series == pytest.approx(quad, rel=1e-7), (n, s, series, quad)
        assert abs(series - quad) <= _tightness.CONTENT_RATE_ABS_TOL
    assert _tightness._content_rate_series_bits(2, 0.15) is None


def test_makeroom_interval_never_collapses_at_zero_variance():
    """M_{n,L,l} with the blind interface at n = 1e6, kappa = 2: E[Z] = 2 - 3/n,
    so 20,000 trials all give Z = 2 and the sample variance is 0. The interval
    must still have positive width (exact binomial bound on the trials that
    would differ) and contain the exact value."""
    r = sims.simulate_makeroom(10**6, 2, "blind", trials=20_000, rng=1)
    assert r.mean_z_se == 0.0 and r.mean_z == 2.0
    lo, hi = r.mean_z_ci
    assert lo < hi
    assert lo <= r.exact_mean_z <= hi
    # Clopper-Pearson with 0 of T differing: P(Z != 2) <= 1 - (alpha/2)^(1/T).
    p_hi = 1 - ((1 - r.confidence) / 2) ** (1 / r.trials)
    assert lo == pytest.approx(2 - 2 * p_hi, rel=1e-12)
    assert r.agrees_with_exact is True


def test_agrees_with_exact_is_false_when_the_check_interval_excludes_it(monkeypatch):
    """At the check level (4 standard errors, or the exact bound at that level
    when the variance is 0) the interval and agrees_with_exact tell the same
    story: an exact value outside the interval is never 'agreed'."""
    level = _makeroom.CHECK_CONFIDENCE
    r = sims.simulate_makeroom(10**6, 2, "blind", trials=20_000, rng=1, confidence=level)
    lo, hi = r.mean_z_ci
    for exact in (lo - 1e-9, lo + 1e-9, 2.0, lo - (hi - lo)):
        monkeypatch.setattr(_makeroom, "_exact_mean", lambda pol, iface, e=exact: e)
        got = sims.simulate_makeroom(10**6, 2, "blind", trials=20_000, rng=1,
                                     confidence=level)
        assert got.mean_z_ci == (lo, hi)
        assert got.agrees_with_exact is (lo <= exact <= hi), exact
    # With a non-zero variance too: the Gaussian channel at n = 40.
    r = sims.simulate_makeroom(40, 4, "gaussian", sigma=1.0, trials=4000, rng=3,
                               confidence=level)
    lo, hi = r.mean_z_ci
    assert r.mean_z_se > 0 and lo < r.mean_z < hi
    for exact in (lo - 1e-6, hi + 1e-6, r.mean_z):
        monkeypatch.setattr(_makeroom, "_exact_mean", lambda pol, iface, e=exact: e)
        got = sims.simulate_makeroom(40, 4, "gaussian", sigma=1.0, trials=4000, rng=3,
                                     confidence=level)
        assert got.agrees_with_exact is (lo <= exact <= hi), exact
