"""Certified E[Z] of the Gaussian content channel under the Bayes order
(W descending), the quantity sims' ``gaussian_exact_mean_z`` evaluates by
floating-point adaptive quadrature.

With the bulky block's standardised observation ``x ~ N(d, 1)``,
``d = ln(kappa)/sigma``, and ``C ~ Binomial(n-1, Q(x))`` light blocks above it,

    E[Z] = int phi(x - d) g(x) dx,   g(x) = kappa - sum_{c<kappa} (kappa-c) P(C = c),

an integral of an entire function. ``acb.integral`` encloses it on
``[d - 12, d + 12]`` (the integrand is evaluated on complex balls, so its
error bound is rigorous), and ``0 <= g <= kappa`` bounds the two cut tails by
``2 kappa Q(12) < 4e-33 kappa``.
"""

from __future__ import annotations

import math
from typing import Any

from ._bounds import _kappa_sigma_iv
from ._certified import CertifiedValue, certified, flint
from ._validate import as_int

__all__ = ["gaussian_mean_z_certified", "GAUSSIAN_CERT_KAPPA_MAX"]

#: Largest kappa accepted (kappa binomial terms per integrand evaluation).
GAUSSIAN_CERT_KAPPA_MAX = 256

_CUT = 12.0


def _gauss_iv(n: Any, kappa: Any, sigma: Any) -> tuple[int, int, float]:
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    kappa = as_int(
        "kappa", kappa, hi=GAUSSIAN_CERT_KAPPA_MAX,
        rule=f"must be an integer with 2 <= kappa <= {GAUSSIAN_CERT_KAPPA_MAX}",
        fix="the certified integrand sums kappa binomial terms; use sims' evaluator beyond",
    )
    n = as_int(
        "n", n, lo=kappa + 1, hi=10**15, rule="must be an integer with kappa + 1 <= n <= 1e15",
        context=f"kappa={kappa}",
        fix="the working set holds the bulky block and at least kappa light blocks",
    )
    return n, kappa, sigma


def gaussian_mean_z_certified(n: int, kappa: int, sigma: float) -> CertifiedValue:
    """E[Z] of the Gaussian channel under the Bayes order, with a rigorous radius.

    Parameters
    ----------
    n : int
        Blocks, ``kappa + 1 <= n <= 1e15``.
    kappa : int
        Size ratio, ``2 <= kappa <= 256``.
    sigma : float
        Log-size noise (> 0).

    Returns
    -------
    CertifiedValue
    """
    n, kappa, sigma = _gauss_iv(n, kappa, sigma)
    prec = 80 + 2 * n.bit_length()
    fl = flint()
    arb, acb = fl.arb, fl.acb
    with fl.ctx.workprec(prec):
        d = arb(kappa).log() / arb(sigma)
        m = n - 1
        weights = []
        b = arb(1)
        for c in range(kappa):
            weights.append((kappa - c) * b)
            b = b * (m - c) / (c + 1)
        c0 = 1 / (2 * arb.pi()).sqrt()
        root2 = arb(2).sqrt()

        def f(x: Any, analytic: bool) -> Any:
            p = (x / root2).erfc() / 2
            q = 1 - p
            tot = acb(0)
            for c in range(kappa):
                tot += weights[c] * p**c * q ** (m - c)
            return c0 * (-((x - d) ** 2) / 2).exp() * (kappa - tot)

        df = float(d.mid())
        tol = arb(2) ** -(prec - 20)
        val = acb.integral(f, df - _CUT, df + _CUT, rel_tol=tol, abs_tol=tol).real
    phi = math.exp(-0.5 * _CUT * _CUT) / math.sqrt(2.0 * math.pi)
    tail = 2.0 * kappa * phi / _CUT * (1.0 + 1e-9)
    return certified(val, "arb acb.integral + analytic tail", extra_radius=tail)
