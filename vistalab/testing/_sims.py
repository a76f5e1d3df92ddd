"""Conformance checks for the pluggable pieces of sims/: observation
interfaces, archive-order policies and recovery strategies (paper,
Definitions 2-3 and eq. Z-search for the make-room instance, Theorem 1;
Proposition 1 for the recovery task T_{N,k})."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np

from vistalab import sims, theory

from ._stats import binomial_interval, chi2_fits

__all__ = [
    "REFERENCE_N",
    "REFERENCE_KAPPA",
    "RECOVERY_GRID",
    "check_interface",
    "check_policy",
    "check_strategy",
    "reference_interfaces",
    "reference_policies",
]

#: The small make-room instance the checks simulate (n blocks, kappa load-bearing).
REFERENCE_N, REFERENCE_KAPPA = 13, 3
#: (N, k, budget) instances of T_{N,k} every strategy is run on.
RECOVERY_GRID: tuple[tuple[int, int, float], ...] = (
    (12, 5, 30), (8, 1, 3), (5, 64, 200), (3, 1000, 2100),
)
LITERAL_TRIALS = 3000
FAST_TRIALS = 200_000


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def reference_interfaces(n: int = REFERENCE_N, kappa: int = REFERENCE_KAPPA
                         ) -> list[sims.Interface]:
    """One instance of every registered interface (with its example parameters).

    Parameters
    ----------
    n : int
        Blocks of the make-room instance (default 13).
    kappa : int
        Size ratio L/l of the bulky block (default 3).

    Returns
    -------
    list of Interface
        In registration order.
    """
    return [sims.make_interface(name, n=n, kappa=kappa,
                                **getattr(sims.INTERFACES[name], "EXAMPLE_PARAMS", {}))
            for name in sorted(sims.INTERFACES)]


def reference_policies() -> list[sims.Policy]:
    """One instance of every registered policy.

    Returns
    -------
    list of Policy
        In registration order.
    """
    return [sims.make_policy(name) for name in sorted(sims.POLICIES)]


def _guard(problems: list[str], label: str, fn: Callable[[], list[str]]) -> None:
    try:
        problems += [f"{label}: {p}" for p in fn()]
    except Exception as exc:  # noqa: BLE001 - a crash of the implementation is a finding
        problems.append(f"{label}: raised {_describe(exc)}")


# ---------------------------------------------------------------------------
# Interfaces
# ---------------------------------------------------------------------------


def _interface_members(iface: Any) -> list[str]:
    out = []
    if not isinstance(iface.name, str) or not iface.name:
        out.append(f"name {iface.name!r} is not a non-empty string")
    n, kappa = iface.n, iface.kappa
    if not (isinstance(n, int) and isinstance(kappa, int) and 1 <= kappa < n):
        return out + [f"(n, kappa) = ({n!r}, {kappa!r}) must be ints with 1 <= kappa < n"]
    if not isinstance(iface.params, dict):
        out.append(f"params is {type(iface.params).__name__}, not a dict")
    rate = iface.rate(trials=200, rng=0)
    if not 0.0 <= rate.bits <= math.log2(n) + 1e-12:
        out.append(f"rate {rate.bits} bits is outside [0, log2 n = {math.log2(n):.6g}] "
                   "(Definition 3: I(J*;Y) <= H(J*))")
    if not rate.se >= 0.0:
        out.append(f"rate standard error {rate.se} is negative")
    if rate.exact != (rate.se == 0.0 and rate.trials == 0):
        out.append(f"rate.exact={rate.exact} disagrees with se={rate.se}, trials={rate.trials}")
    return out


def _interface_posterior(iface: Any) -> list[str]:
    gen = np.random.default_rng(1)
    for _ in range(50):
        j = int(gen.integers(iface.n))
        lp = np.asarray(iface.log_posterior(iface.observe(j, gen)), dtype=float)
        if lp.shape != (iface.n,):
            return [f"log_posterior has shape {lp.shape}, expected ({iface.n},)"]
        if np.any(np.isnan(lp)):
            return ["log_posterior contains NaN"]
        if not np.isfinite(lp[j]):
            return [f"log_posterior excludes the true block (J*={j} has {lp[j]}): the truth "
                    "must keep positive posterior probability (Definition 3)"]
    return []


def _interface_fast_sampler(iface: Any) -> list[str]:
    f = getattr(iface, "sample_bayes_z", None)
    if f is None:
        return []

    def streams() -> list[np.random.Generator]:
        return [np.random.default_rng([7, v]) for v in range(4)]

    whole = np.asarray(f(1000, streams()))
    s = streams()
    parts = np.concatenate([np.asarray(f(m, s)) for m in (1, 299, 400, 300)])
    out = []
    if whole.shape != (1000,) or not np.array_equal(whole, parts):
        out.append("sample_bayes_z gives different draws when a block is drawn in sub-chunks "
                   "(each random variable needs its own stream)")
    if whole.size and (whole.min() < 0 or whole.max() > iface.kappa):
        out.append(f"sample_bayes_z draws Z outside [0, kappa={iface.kappa}]")
    return out


def _exact_law(iface: Any, policy: Any) -> list[str]:
    pmf = sims.exact_z_pmf(iface, policy)
    mean = sims.exact_mean_z(iface, policy)
    if pmf is None or mean is None:
        return []
    pmf = np.asarray(pmf, dtype=float)
    if pmf.shape != (iface.kappa + 1,):
        return [f"exact law has shape {pmf.shape}, expected ({iface.kappa + 1},)"]
    out = []
    if np.any(pmf < -1e-15) or abs(pmf.sum() - 1.0) > 1e-12:
        out.append(f"exact law is not a probability vector (sum {pmf.sum():.15g})")
    law_mean = float(np.arange(iface.kappa + 1) @ pmf)
    if abs(law_mean - mean) > 1e-9:
        out.append(f"exact E[Z] = {mean:.12g} but the exact law's mean is {law_mean:.12g} "
                   "(eq. tailsum)")
    return out


def _joint(iface: Any, policy: Any, trials: int) -> list[str]:
    """Literal trials against the exact law and Theorem 1; fast path against literal;
    reproducibility whatever the chunk size or worker count."""
    out: list[str] = []
    n, kappa = iface.n, iface.kappa
    lit = sims.simulate_makeroom(n, kappa, iface, policy=policy, mode="literal",
                                 trials=trials, rng=11)
    if sum(lit.z_counts) != trials:
        out.append(f"literal run counted {sum(lit.z_counts)} trials, not {trials}")
    pmf = sims.exact_z_pmf(iface, policy)
    if pmf is not None and not chi2_fits(np.array(lit.z_counts), np.asarray(pmf)):
        out.append("literal trials do not follow the declared exact law of Z "
                   "(chi-square, level 1e-4)")
    if lit.exact_mean_z is not None and not lit.agrees_with_exact:
        out.append(f"literal mean {lit.mean_z:.4g} +- {lit.mean_z_se:.2g} disagrees with the "
                   f"declared exact E[Z] = {lit.exact_mean_z:.6g}")
    if not lit.consistent_with_theory:
        out.append(f"E[Z] = {lit.mean_z:.4g} +- {lit.mean_z_se:.2g} falls below Theorem 1's "
                   "lower bound at the measured rate")
    pol = sims.make_policy(policy) if isinstance(policy, str) else policy
    fast_sampler = getattr(pol, "fast_sampler", None)
    if callable(fast_sampler) and fast_sampler(iface) is not None:
        fast = sims.simulate_makeroom(n, kappa, iface, policy=policy, mode="fast",
                                      trials=FAST_TRIALS, rng=12)
        if pmf is not None and not chi2_fits(np.array(fast.z_counts), np.asarray(pmf)):
            out.append("fast-path draws do not follow the declared exact law of Z")
        gap = abs(fast.mean_z - lit.mean_z)
        if gap > 4 * math.hypot(fast.mean_z_se, lit.mean_z_se) + 1e-12:
            out.append(f"fast mean {fast.mean_z:.4g} and literal mean {lit.mean_z:.4g} differ "
                       "by more than 4 combined standard errors")
        runs = [sims.simulate_makeroom(n, kappa, iface, policy=policy,
                                       trials=2 * sims.FAST_BLOCK + 123, rng=2024,
                                       chunk_size=c, workers=w, rate_trials=50)
                for c, w in ((None, 1), (1000, 1), (sims.FAST_BLOCK, 2), (77_777, 2))]
        if len({r.z_counts for r in runs}) != 1:
            out.append("results depend on the chunk size or worker count")
    return out


def check_interface(iface: Any, *, policies: Iterable[Any] | None = None,
                    trials: int = LITERAL_TRIALS) -> list[str]:
    """Everything that breaks the ``sims.Interface`` contract; ``[]`` if ``iface`` conforms.

    Checks the required members (name, ``n``, ``kappa``, ``params``, a rate in
    ``[0, log2 n]`` with a consistent standard error), that the posterior never
    excludes the true block, that an optional fast sampler does not depend on
    chunking, that an optional exact law sums to one and matches the exact
    mean, and, with each policy, that literal trials follow the declared exact
    law (chi-square at level 1e-4, fixed seeds), agree with the exact mean,
    respect Theorem 1, and that the fast path (if any) agrees with them.

    Parameters
    ----------
    iface : object
        The interface instance (it need not be registered: sims functions take
        instances directly).
    policies : iterable of Policy or str, optional
        Policies to simulate it with (default: every registered policy).
    trials : int
        Literal trials per policy.

    Returns
    -------
    list of str
        One line per problem found.
    """
    if not isinstance(iface, sims.Interface):
        missing = [m for m in ("name", "n", "kappa", "params", "observe", "log_posterior",
                               "rate") if not hasattr(iface, m)]
        return [f"does not implement sims.Interface (missing: {', '.join(missing)})"]
    problems: list[str] = []
    _guard(problems, "members", lambda: _interface_members(iface))
    if problems:
        return problems
    _guard(problems, "posterior", lambda: _interface_posterior(iface))
    _guard(problems, "fast sampler", lambda: _interface_fast_sampler(iface))
    pols = list(reference_policies() if policies is None else policies)
    for pol in pols:
        label = getattr(pol, "name", pol)
        _guard(problems, f"exact law ({label})", partial(_exact_law, iface, pol))
    if problems:
        return problems
    for pol in pols:
        label = getattr(pol, "name", pol)
        _guard(problems, f"simulation ({label})", partial(_joint, iface, pol, trials))
    return problems


# ---------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------


def _policy_orders(policy: Any, ifaces: Sequence[Any]) -> list[str]:
    for iface in ifaces:
        gen = np.random.default_rng(3)
        for _ in range(20):
            y = iface.observe(int(gen.integers(iface.n)), gen)
            order = np.asarray(policy.order(iface, y, gen))
            if sorted(order.tolist()) != list(range(iface.n)):
                return [f"order on {iface.name} is not a permutation of 0..{iface.n - 1} "
                        f"(got {order.tolist()[:20]})"]
    return []


def check_policy(policy: Any, *, interfaces: Sequence[Any] | None = None, simulate: bool = True,
                 trials: int = LITERAL_TRIALS) -> list[str]:
    """Everything that breaks the ``sims.Policy`` contract; ``[]`` if ``policy`` conforms.

    The archive order must be a permutation of all n blocks (Definition 3);
    with ``simulate``, literal trials on each interface must follow the
    policy's declared exact law (if any) and Theorem 1, and its fast sampler
    (if any) must agree with the literal process.

    Parameters
    ----------
    policy : object
        The policy instance (pass it directly to ``sims.simulate_makeroom``; no
        registration needed).
    interfaces : sequence of Interface, optional
        Default: one instance of every registered interface (n=13, kappa=3).
    simulate : bool
        Also run the simulations (slower); False checks the orders only.
    trials : int
        Literal trials per interface.

    Returns
    -------
    list of str
        One line per problem found; ``[]`` when the policy conforms.
    """
    if not isinstance(policy, sims.Policy):
        missing = [m for m in ("name", "order") if not hasattr(policy, m)]
        return [f"does not implement sims.Policy (missing: {', '.join(missing)})"]
    problems: list[str] = []
    if not isinstance(policy.name, str) or not policy.name:
        problems.append(f"name {policy.name!r} is not a non-empty string")
    ifaces = list(reference_interfaces() if interfaces is None else interfaces)
    _guard(problems, "order", lambda: _policy_orders(policy, ifaces))
    if problems or not simulate:
        return problems
    for iface in ifaces:
        _guard(problems, f"exact law ({iface.name})", partial(_exact_law, iface, policy))
        _guard(problems, f"simulation ({iface.name})", partial(_joint, iface, policy, trials))
    return problems


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


def _strategy_on(strategy: Any, N: int, k: int, budget: float) -> list[str]:
    res = sims.simulate_recovery(N, k, budget, strategy, trials=4000, rng=5)
    out = []
    if res.trials != 4000:
        out.append(f"ran {res.trials} trials, not 4000")
    if res.exact_success is not None:
        lo, hi = binomial_interval(res.successes, res.trials)
        if not lo <= res.exact_success <= hi:
            out.append(f"declared exact success {res.exact_success:.6g} is outside the exact "
                       f"binomial interval [{lo:.4g}, {hi:.4g}] of {res.successes}/{res.trials}")
    if strategy.recovering:
        feas = theory.recovery_feasibility(N, k, budget)
        if res.feasible != feas.feasible:
            out.append(f"feasible={res.feasible} but Proposition 1's feasibility says "
                       f"{feas.feasible}")
        if res.success != (1.0 if feas.feasible else 0.0):
            out.append(f"a recovering strategy succeeded with rate {res.success} (expected "
                       f"{1.0 if feas.feasible else 0.0})")
    else:
        if res.entropy_bits > budget:
            out.append(f"declared H(R) = {res.entropy_bits} bits exceeds the budget {budget}")
        if res.consistent_with_bound is not True:
            out.append(f"success {res.success:.4g} beats Proposition 1's bound {res.bound:.4g}")
        if res.exact_success is not None and res.exact_success > min(1.0, res.bound) + 1e-12:
            out.append(f"declared exact success {res.exact_success} exceeds the bound "
                       f"{res.bound}")
    return out


def _strategy_workers(strategy: Any) -> list[str]:
    a = sims.simulate_recovery(16, 3, 20, strategy, trials=9000, rng=99, workers=1)
    b = sims.simulate_recovery(16, 3, 20, strategy, trials=9000, rng=99, workers=2)
    if a.successes != b.successes:
        return [f"results depend on the worker count ({a.successes} vs {b.successes} "
                "successes with the same seed)"]
    return []


def check_strategy(strategy: Any, *, grid: Iterable[tuple[int, int, float]] = RECOVERY_GRID
                   ) -> list[str]:
    """Everything that breaks the ``sims.Strategy`` contract; ``[]`` if it conforms.

    On each instance ``(N, k, budget)`` of ``grid``: the simulator's own checks
    (the state fits the budget, shapes), a declared exact success probability
    inside the exact binomial interval (level 1e-4), Proposition 1 (no
    non-recovering strategy beats ``B/(Nk) + 1/k``), and for a recovering
    strategy, success exactly when it fits the budget; then the same seed
    must give the same result with one or two workers.

    Parameters
    ----------
    strategy : object
        The strategy instance (pass it directly to ``sims.simulate_recovery``; no
        registration needed).
    grid : iterable of (int, int, float)
        The ``(N, k, budget)`` instances to run it on.

    Returns
    -------
    list of str
        One line per problem found; ``[]`` when the strategy conforms.
    """
    if not isinstance(strategy, sims.Strategy):
        missing = [m for m in ("name", "recovering", "plan", "encode", "decode")
                   if not hasattr(strategy, m)]
        return [f"does not implement sims.Strategy (missing: {', '.join(missing)})"]
    problems: list[str] = []
    if not isinstance(strategy.name, str) or not strategy.name:
        problems.append(f"name {strategy.name!r} is not a non-empty string")
    for N, k, budget in grid:
        _guard(problems, f"T(N={N}, k={k}, B={budget})",
               partial(_strategy_on, strategy, N, k, budget))
    if not problems:
        _guard(problems, "workers", lambda: _strategy_workers(strategy))
    return problems
