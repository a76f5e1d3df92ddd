"""Gaussian content-channel rate I(J*;W) (Proposition 2), Monte Carlo over
the exact posterior (issue 3, "Speed is part of the job").

Target: the rate at n = 1000 (kappa = 4, sigma = 1, the issue's example
channel) to within +-0.005 bits at 95% in under 5 s of CPU time. The run is
adaptive, as a user would do it: a 400-trial pilot gives the standard error,
then enough trials for the target half-width (with 10% margin). The baseline
is the naive estimator measured in the same run: per trial, draw all n
observations, compute the posterior softmax and its entropy, average (no
conditioning, importance sampling or control variates); its time to the same
half-width is projected from 2000 timed trials. The estimate is also
compared with theory.content_rate_exact (quadrature, 1e-10).

    .venv/bin/python benchmarks/bench_sims_gaussian_rate.py

Exit status 1 when the target is missed.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
from scipy.special import logsumexp

sys.path.insert(0, os.path.dirname(__file__))

from _common import Report, best_of, run  # noqa: E402

from vistalab import (
    sims,  # noqa: E402
    theory,  # noqa: E402
)

HALF_WIDTH = 0.005
Z95 = 1.959963984540054
PILOT = 400


def _adaptive(n: int, kappa: int, sigma: float):
    pilot = sims.estimate_gaussian_rate(n, kappa, sigma, trials=PILOT, rng=1)
    need = math.ceil(PILOT * (Z95 * pilot.se / (0.9 * HALF_WIDTH)) ** 2)
    trials = max(PILOT, need)
    return sims.estimate_gaussian_rate(n, kappa, sigma, trials=trials, rng=2)


def _naive(n: int, kappa: int, sigma: float, trials: int, seed: int = 3) -> np.ndarray:
    """Per-trial log2 n - H(posterior), all n observations drawn each trial."""
    gen = np.random.default_rng(seed)
    d = math.log(kappa) / sigma
    out = np.empty(trials)
    for t in range(trials):
        w = gen.standard_normal(n)
        w[0] += d
        a = d * w
        lse = logsumexp(a)
        p = np.exp(a - lse)
        out[t] = (math.log(n) - (lse - p @ a)) / math.log(2)
    return out


def main() -> int:
    rep = Report("Gaussian channel rate: Monte Carlo to +-0.005 bits (95%)")
    rep.note("CPU seconds of this process (wall seconds in brackets)")
    for n, kappa, sigma, target in ((1000, 4, 1.0, True), (1000, 4, 0.5, False),
                                    (1000, 16, 0.5, False), (10**5, 4, 1.0, False)):
        wall, cpu, est = best_of(lambda n=n, kappa=kappa, sigma=sigma: _adaptive(n, kappa, sigma),
                                 1)
        half = Z95 * est.se
        exact = theory.content_rate_exact(n, kappa, sigma)
        label = f"n={n} kappa={kappa} sigma={sigma}"
        rep.row(f"{label}: estimate", f"{est.bits:.5f} +- {half:.5f} bits, {est.trials} trials, "
                f"exact {exact:.5f} (z={(est.bits - exact) / est.se:+.2f})")
        ok = (half <= HALF_WIDTH and cpu < 5.0) if target else None
        rep.row(f"{label}: time to +-0.005", f"{cpu:.2f} s  (wall {wall:.2f} s)",
                "< 5 s" if target else None, ok)
        probe = 2000 if n <= 10**4 else 40
        nwall, ncpu, vals = best_of(lambda n=n, kappa=kappa, sigma=sigma, probe=probe:
                                    _naive(n, kappa, sigma, probe), 1)
        sd = float(vals.std(ddof=1))
        naive_trials = (Z95 * sd / HALF_WIDTH) ** 2
        naive_cpu = ncpu / probe * naive_trials
        rep.row(f"{label}: naive estimator to +-0.005",
                f"{naive_cpu:.3g} s projected ({naive_trials:.3g} trials); ratio "
                f"{naive_cpu / cpu:.3g}x")
    return rep.finish()


if __name__ == "__main__":
    run(main)
