"""Make-room simulator throughput ("Speed is part of the job").

Targets, measured on this machine in one thread:
  * >= 1e7 trials/s in fast mode for ledger, blind, buckets and gibbs;
  * >= 5e6 trials/s for the Gaussian channel (kappa=4, sigma=1) at every n
    from 10 to 1e6;
  * >= 1000x the naive per-trial implementation at n = 1e4, for every
    interface. The naive baseline is the literal mode: per trial it draws the
    full observation, builds the Bayes archive order (a sort of n posteriors)
    and runs the archiving process; a few hundred trials time it.

    .venv/bin/python benchmarks/bench_sims_makeroom.py [--quick]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from _common import Report, best_of, run  # noqa: E402

from vistalab import sims  # noqa: E402

CATEGORICAL = [("ledger", {}), ("blind", {}), ("buckets", {"buckets": 16}),
               ("gibbs", {"lam": 0.5})]
KAPPA = 4


def _fast_rate(n: int, name: str, params: dict, trials: int, repeat: int) -> tuple[float, float]:
    """(trials per CPU-second, trials per wall-second) of fast mode."""

    def go():
        return sims.simulate_makeroom(n, KAPPA, name, trials=trials, rng=1, rate_trials=2,
                                      **params)

    best_of(go, 1)  # warm-up (imports, theory caches)
    wall, cpu, _ = best_of(go, repeat)
    return trials / cpu, trials / wall


def _naive_rate(n: int, name: str, params: dict, trials: int) -> tuple[float, float]:
    def go():
        return sims.simulate_makeroom(n, KAPPA, name, trials=trials, mode="literal", rng=2,
                                      rate_trials=2, **params)

    wall, cpu, _ = best_of(go, 1)
    return trials / cpu, trials / wall


def _fmt(rates: tuple[float, float]) -> str:
    return f"{rates[0]:.3g}  (wall {rates[1]:.3g})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials (noisier)")
    args = ap.parse_args()
    big = 1 << (22 if args.quick else 24)
    gauss_trials = 1 << (21 if args.quick else 22)
    repeat = 2 if args.quick else 3
    rep = Report("sims make-room throughput (fast mode, 1 thread)")

    rep.note("trials per CPU-second of this process (wall-clock rate in brackets)")
    rep.note("categorical interfaces: Z drawn in O(1) per trial")
    for name, params in CATEGORICAL:
        for n in (10**3, 10**6, 10**9):
            r = _fast_rate(n, name, params, big, repeat)
            rep.row(f"{name:<8} n={n:<10} trials/s", _fmt(r), ">= 1e7", r[0] >= 1e7)

    rep.note("Gaussian channel, kappa=4, sigma=1: Z = min(Binomial(n-1, p(x)), kappa)")
    for n in (10, 64, 10**3, 10**4, 10**5, 10**6):
        r = _fast_rate(n, "gaussian", {"sigma": 1.0}, gauss_trials, repeat)
        rep.row(f"gaussian n={n:<10} trials/s", _fmt(r), ">= 5e6", r[0] >= 5e6)

    rep.note("ratio to the naive per-trial (literal) implementation at n = 1e4, CPU time")
    for name, params in CATEGORICAL + [("gaussian", {"sigma": 1.0})]:
        naive = _naive_rate(10**4, name, params, 300)
        fast = _fast_rate(10**4, name, params, gauss_trials if name == "gaussian" else big,
                          repeat)
        ratio, wall_ratio = fast[0] / naive[0], fast[1] / naive[1]
        rep.row(f"{name:<8} n=10000 fast/naive",
                f"{ratio:.3g}x  ({fast[0]:.3g} vs {naive[0]:.3g}/s; wall {wall_ratio:.3g}x)",
                ">= 1000x", ratio >= 1000)

    rep.note("informational (no target): Gaussian channel at other kappa, sigma")
    for n, kappa, sigma in ((64, 16, 0.5), (64, 32, 3.0), (10**6, 16, 0.5), (10**6, 64, 1.0)):
        def go(n=n, kappa=kappa, sigma=sigma):
            return sims.simulate_makeroom(n, kappa, "gaussian", sigma=sigma,
                                          trials=gauss_trials, rng=3, rate_trials=2)

        wall, cpu, _ = best_of(go, repeat)
        rep.row(f"gaussian n={n} kappa={kappa} sigma={sigma} trials/s",
                _fmt((gauss_trials / cpu, gauss_trials / wall)))
    return rep.finish()


if __name__ == "__main__":
    run(main)
