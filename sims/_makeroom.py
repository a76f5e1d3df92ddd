"""Monte Carlo of the make-room instance M_{n,L,l} (Theorem 1): the number Z
of load-bearing blocks archived before the overflow clears, with the rate,
Theorem 1's bound, the exact frontier and exact E[Z] alongside.

Two modes: ``fast`` draws Z directly in O(1) per trial where the law of Z
allows it; ``literal`` builds each trial's observation and archive order and
runs the archiving process (O(n log n) per trial).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

from vistalab import theory

from ._interfaces import Interface, makeroom_iv
from ._interfaces_registry import INTERFACES, make_interface
from ._policies import POLICIES, Policy, make_policy
from ._seeding import (
    MAX_TRIALS,
    SeedInfo,
    block_sizes,
    root_seed,
    run_blocks,
    stream,
    stream_seq,
    sub_chunks,
    trials_iv,
    workers_iv,
)
from ._stats import confidence_iv, mean_from_counts, mean_interval

__all__ = [
    "MakeRoomResult",
    "simulate_makeroom",
    "exact_mean_z",
    "exact_z_pmf",
    "archive_until_room",
    "FAST_BLOCK",
    "LITERAL_BLOCK",
    "LITERAL_MAX_N",
    "CHECK_SIGMAS",
]

FAST_BLOCK = 1 << 16
"""Trials per random-stream block in fast mode (the unit of reproducibility)."""
LITERAL_BLOCK = 64
"""Trials per random-stream block in literal mode."""
LITERAL_MAX_N = 10**7
"""Largest n accepted in literal mode (each trial holds a few length-n arrays)."""
CHECK_SIGMAS = 4.0
"""Standard errors of slack allowed by the result's consistency checks."""
CHECK_CONFIDENCE = math.erf(CHECK_SIGMAS / math.sqrt(2.0))
"""Two-sided level of a CHECK_SIGMAS normal interval (0.99994): the level of
the interval that ``agrees_with_exact`` is judged by."""
_FAST_STREAMS = 4


@dataclass(frozen=True)
class MakeRoomResult:
    """One Monte Carlo run on M_{n,L,l}.

    Attributes
    ----------
    n, kappa : int
        The instance (sizes in units of l: kappa = L/l).
    interface : str
        Interface name.
    params : dict
        Interface parameters (sigma, buckets, lam/rate).
    policy : str
        Policy name.
    mode : str
        ``"fast"`` or ``"literal"``.
    mean_z : float
        Sample mean of Z = min(tau - 1, kappa).
    mean_z_se : float
        Its standard error.
    mean_z_ci : tuple of float
        Normal interval at ``confidence``, clipped to [0, kappa]; when every
        trial gave the same Z, the exact binomial bound instead (never a point).
    confidence : float
        Level of ``mean_z_ci``.
    z_counts : tuple of int
        Counts of Z = 0..kappa (length kappa + 1).
    rate_bits : float
        I(J*;Y) in bits (exact or estimated).
    rate_bits_se : float
        Its standard error, 0 when exact.
    rate_exact : bool
        Whether ``rate_bits`` is a closed form.
    rate_trials : int
        Monte Carlo trials behind an estimated rate (0 when exact).
    lower_bound : float or None
        Theorem 1's ``kappa [1 - (I+1)/nu]_+`` at ``rate_bits``; None outside
        2 <= kappa < n/2.
    lower_bound_note : str
        Why the bound is missing, or how it was evaluated.
    nu : float or None
        ``log2((n - kappa)/kappa)``; None outside Theorem 1's domain.
    exact_mean_z : float or None
        Exact E[Z] of this interface and policy, when known.
    optimal_mean_z : float
        The exact frontier: smallest E[Z] of any interface of rate <= rate_bits.
    agrees_with_exact : bool or None
        The exact value lies in the interval at the check level 0.99994 (4
        standard errors; the exact binomial bound at that level when every
        trial gave the same Z), so it is False whenever that interval excludes
        the exact value. None if no exact value.
    consistent_with_theory : bool
        The estimate is not below the lower bound nor the frontier by more
        than 4 standard errors, with the rate taken at its upper 4-SE limit.
    trials : int
        Number of trials.
    seed_entropy : int or list of int
        Entropy of the root SeedSequence (re-use it as the seed to reproduce).
    seed_spawn_key : tuple of int
        Spawn key of the root SeedSequence.
    elapsed_seconds : float
        Wall time of the trials (not of the exact evaluators or the rate).
    trials_per_second : float
        ``trials / elapsed_seconds``.
    """

    n: int
    kappa: int
    interface: str
    params: dict[str, float]
    policy: str
    mode: str
    mean_z: float
    mean_z_se: float
    mean_z_ci: tuple[float, float]
    confidence: float
    z_counts: tuple[int, ...]
    rate_bits: float
    rate_bits_se: float
    rate_exact: bool
    rate_trials: int
    lower_bound: float | None
    lower_bound_note: str
    nu: float | None
    exact_mean_z: float | None
    optimal_mean_z: float
    agrees_with_exact: bool | None
    consistent_with_theory: bool
    trials: int
    seed_entropy: int | list[int]
    seed_spawn_key: tuple[int, ...]
    elapsed_seconds: float
    trials_per_second: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the ``vista-lab makeroom --json`` document).

        Returns
        -------
        dict
            The result's fields, tuples as lists and the seed entropy under ``seed``.
        """
        return {
            "n": self.n,
            "kappa": self.kappa,
            "interface": self.interface,
            "params": dict(self.params),
            "policy": self.policy,
            "mode": self.mode,
            "mean_z": self.mean_z,
            "mean_z_se": self.mean_z_se,
            "mean_z_ci": [self.mean_z_ci[0], self.mean_z_ci[1]],
            "confidence": self.confidence,
            "z_counts": list(self.z_counts),
            "rate_bits": self.rate_bits,
            "rate_bits_se": self.rate_bits_se,
            "rate_exact": self.rate_exact,
            "rate_trials": self.rate_trials,
            "lower_bound": self.lower_bound,
            "lower_bound_note": self.lower_bound_note,
            "nu": self.nu,
            "exact_mean_z": self.exact_mean_z,
            "optimal_mean_z": self.optimal_mean_z,
            "agrees_with_exact": self.agrees_with_exact,
            "consistent_with_theory": self.consistent_with_theory,
            "trials": self.trials,
            "seed": self.seed_entropy,
            "seed_spawn_key": list(self.seed_spawn_key),
            "elapsed_seconds": self.elapsed_seconds,
            "trials_per_second": self.trials_per_second,
        }


def archive_until_room(sizes: np.ndarray, order: np.ndarray, kappa: int) -> int:
    """Run the archiving process literally and return Z.

    Blocks are archived in ``order`` until the freed size reaches
    ``L = kappa`` (sizes in units of l); Z counts the load-bearing (size-1)
    blocks archived. Only the first kappa entries of the order can matter:
    kappa archives free at least kappa.

    Parameters
    ----------
    sizes : array of int
        Block sizes in units of l (1 for load-bearing blocks), length n >= 1.
    order : array of int
        A permutation of ``range(n)``: the archiving order.
    kappa : int
        The size ratio ``L/l >= 1`` to free.

    Returns
    -------
    int
        Z, the load-bearing blocks archived before the room was made.
    """
    sizes, order, kappa = _archive_iv(sizes, order, kappa)
    return _archive_until_room(sizes, order, kappa)


def _archive_iv(sizes: Any, order: Any, kappa: Any) -> tuple[np.ndarray, np.ndarray, int]:
    kappa = as_int("kappa", kappa, lo=1, hi=2**63, fix="kappa = L/l is a positive integer")
    try:
        s = np.asarray(sizes)
    except (ValueError, TypeError):
        s = np.asarray([None], dtype=object)
    if s.ndim != 1 or s.size == 0 or s.dtype.kind not in "iuf" or not np.all(np.isfinite(s)) \
            or np.any(s <= 0):
        raise DomainError("sizes", sizes, "must be a non-empty 1-D array of positive sizes",
                          "pass block sizes in units of l, e.g. np.array([4, 1, 1, 1, 1])")
    try:
        o = np.asarray(order)
    except (ValueError, TypeError):
        o = np.asarray([None], dtype=object)
    if o.ndim != 1 or o.dtype.kind not in "iu" or o.size != s.size \
            or not np.array_equal(np.sort(o), np.arange(s.size)):
        raise DomainError("order", order, "must be a permutation of range(len(sizes))",
                          "pass e.g. np.argsort(-observation)", context=f"len(sizes)={s.size}")
    return s, o, kappa


def _archive_until_room(sizes: np.ndarray, order: np.ndarray, kappa: int) -> int:
    prefix = sizes[order[:kappa]]
    freed = np.cumsum(prefix)
    stop = int(np.searchsorted(freed, kappa, side="left"))
    return int(np.count_nonzero(prefix[: stop + 1] == 1))


def _policy_iv(policy: Any) -> Policy:
    if policy is None or isinstance(policy, str):
        return make_policy(policy)
    if not isinstance(policy, Policy):
        raise DomainError("policy", policy, "must be a policy name or a Policy object",
                          f"use one of {', '.join(POLICIES)}")
    return policy


def _interface_iv(interface: Any, n: Any, kappa: Any, params: dict[str, Any]) -> Interface:
    if isinstance(interface, str):
        return make_interface(interface, n=n, kappa=kappa, **params)
    if not isinstance(interface, Interface):
        raise DomainError("interface", interface, "must be an interface name or an Interface "
                          "object", f"use one of {', '.join(INTERFACES)}")
    n, kappa = makeroom_iv(n, kappa)
    if (interface.n, interface.kappa) != (n, kappa):
        raise DomainError("interface", interface.name, "must be built for the same n and kappa",
                          "build it with make_interface(name, n=n, kappa=kappa, ...)",
                          context=f"interface has n={interface.n}, kappa={interface.kappa}; "
                          f"got n={n}, kappa={kappa}")
    if params:
        raise DomainError("params", params, "are only accepted with an interface name",
                          "pass them to make_interface instead")
    return interface


def _makeroom_iv(
    n: Any, kappa: Any, interface: Any, policy: Any, trials: Any, mode: Any, chunk_size: Any,
    workers: Any, rate_trials: Any, confidence: Any, params: dict[str, Any],
) -> tuple[Interface, Policy, int, str, int, int, int | None, float]:
    trials = trials_iv(trials)
    iface = _interface_iv(interface, n, kappa, params)
    pol = _policy_iv(policy)
    if mode not in ("fast", "literal"):
        raise DomainError("mode", mode, "must be 'fast' or 'literal'",
                          "fast draws Z in O(1) per trial, literal runs each trial in full")
    if mode == "literal" and iface.n > LITERAL_MAX_N:
        raise DomainError("n", iface.n, f"must be <= {LITERAL_MAX_N} in literal mode",
                          "literal trials build length-n arrays; use mode='fast'")
    if mode == "fast":
        get = getattr(pol, "fast_sampler", None)
        if not callable(get) or get(iface) is None:
            raise DomainError("mode", mode, f"needs a fast path for policy {pol.name!r} on "
                              f"interface {iface.name!r}", "pass mode='literal'")
    chunk = FAST_BLOCK if chunk_size is None else as_int(
        "chunk_size", chunk_size, lo=1, hi=MAX_TRIALS,
        fix="trials drawn at once; it never changes results")
    if rate_trials is not None:
        rate_trials = trials_iv(rate_trials, name="rate_trials", lo=2,
                                fix="the rate's standard error needs at least 2 trials")
    return (iface, pol, trials, mode, chunk, workers_iv(workers), rate_trials,
            confidence_iv(confidence))


def simulate_makeroom(
    n: int,
    kappa: int,
    interface: str | Interface,
    *,
    policy: str | Policy | None = None,
    trials: int,
    rng: Any = None,
    mode: str = "fast",
    chunk_size: int | None = None,
    workers: int = 1,
    rate_trials: int | None = None,
    confidence: float = 0.95,
    **params: Any,
) -> MakeRoomResult:
    """Simulate M_{n,L,l} and report E[Z] next to the theory.

    Parameters
    ----------
    n : int
        Blocks, ``n >= 3``.
    kappa : int
        Size ratio L/l, an integer with ``2 <= kappa < n``.
    interface : str or Interface
        A name from :data:`INTERFACES` (its parameters as keyword arguments:
        ``sigma``, ``buckets``, ``lam`` or ``rate``) or an Interface object.
    policy : str or Policy, optional
        ``"bayes"`` (default) or ``"random"``, or a Policy object.
    trials : int
        Number of independent trials.
    rng : None, int, SeedSequence or Generator
        Seed of the run; recorded in the result.
    mode : {"fast", "literal"}
        ``fast`` needs the policy to offer a fast sampler for the interface.
    chunk_size : int, optional
        Trials drawn at once (memory only; results do not depend on it).
    workers : int
        Threads over trial blocks (results do not depend on it).
    rate_trials : int, optional
        Monte Carlo trials for an estimated rate (Gaussian channel); default
        ``min(4000, 2e7 / n)``, at least 16, for n <= 1e5; beyond that the
        Gaussian rate defaults to theory's quadrature (pass ``rate_trials``
        to force the O(n)-per-trial Monte Carlo).
    confidence : float
        Level of ``mean_z_ci``.
    **params
        The interface's parameters when ``interface`` is a name (``sigma=``,
        ``buckets=``, ``lam=`` or ``rate=``).

    Returns
    -------
    MakeRoomResult
    """
    iface, pol, trials, mode, chunk, workers, rate_trials, confidence = _makeroom_iv(
        n, kappa, interface, policy, trials, mode, chunk_size, workers, rate_trials,
        confidence, params)
    n, kappa = iface.n, iface.kappa
    seed = root_seed(rng)
    t0 = time.perf_counter()
    if mode == "fast":
        counts = _run_fast(iface, pol, trials, seed, chunk, workers)
    else:
        counts = _run_literal(iface, pol, trials, seed, workers)
    elapsed = time.perf_counter() - t0

    mean, se = mean_from_counts(counts)
    ci = mean_interval(mean, se, trials, confidence, lo=0.0, hi=float(kappa))

    rate_seq = stream_seq(seed, 1)
    rate = iface.rate(trials=rate_trials, rng=rate_seq)
    top = math.log2(n)
    rate_bits = min(max(float(rate.bits), 0.0), top)
    rate_hi = min(top, rate_bits + CHECK_SIGMAS * float(rate.se))

    in_theorem = 2 <= kappa and 2 * kappa < n
    nu = theory.makeroom_nu(n, kappa) if in_theorem else None
    if in_theorem:
        lower = theory.makeroom_lower_bound(n, kappa, rate_bits)
        note = ("Theorem 1 at the exact rate" if rate.exact else
                "Theorem 1 at the estimated rate (point estimate)")
    else:
        lower = None
        note = f"outside Theorem 1's domain 2 <= kappa < n/2 (kappa={kappa}, n={n})"
    optimal = theory.optimal_mean_z(n, kappa, rate_bits)

    exact = _exact_mean(pol, iface)
    tol = CHECK_SIGMAS * max(se, kappa / trials)
    agrees = None if exact is None else agrees_with(exact, mean, se, trials, kappa)
    upper = mean + tol
    floor_opt = theory.optimal_mean_z(n, kappa, rate_hi)
    consistent = upper >= floor_opt - 1e-9
    if in_theorem:
        consistent = consistent and upper >= theory.makeroom_lower_bound(n, kappa, rate_hi) - 1e-9

    return MakeRoomResult(
        n=n, kappa=kappa, interface=iface.name, params=dict(iface.params), policy=pol.name,
        mode=mode, mean_z=mean, mean_z_se=se, mean_z_ci=ci, confidence=confidence,
        z_counts=tuple(int(c) for c in counts), rate_bits=rate_bits,
        rate_bits_se=float(rate.se), rate_exact=bool(rate.exact), rate_trials=int(rate.trials),
        lower_bound=lower, lower_bound_note=note, nu=nu, exact_mean_z=exact,
        optimal_mean_z=optimal, agrees_with_exact=agrees, consistent_with_theory=bool(consistent),
        trials=trials, seed_entropy=seed.entropy, seed_spawn_key=seed.spawn_key,
        elapsed_seconds=elapsed, trials_per_second=trials / elapsed if elapsed > 0 else math.inf,
    )


def agrees_with(exact: float, mean: float, se: float, trials: int, kappa: int) -> bool:
    """The exact E[Z] lies in the interval at :data:`CHECK_CONFIDENCE`: the
    normal one at CHECK_SIGMAS standard errors, or, when the sample variance is
    0, the exact binomial bound at that level (:func:`._stats.mean_interval`)."""
    lo, hi = mean_interval(mean, se, trials, CHECK_CONFIDENCE, lo=0.0, hi=float(kappa))
    return bool(lo <= exact <= hi)


def _exact_mean(pol: Policy, iface: Interface) -> float | None:
    f = getattr(pol, "exact_mean_z", None)
    return None if not callable(f) else f(iface)


def exact_mean_z(interface: Interface, policy: str | Policy = "bayes") -> float | None:
    """Exact E[Z] of ``policy`` on ``interface``, or None if no closed form.

    Bayes order: 0 for the ledger, :func:`theory.blind_mean_z` for blind,
    :func:`theory.bucket_ledger` for buckets, :func:`theory.gibbs_law` for
    gibbs, :func:`gaussian_exact_mean_z` for the Gaussian channel. The
    random order gives the blind value on every interface.

    Parameters
    ----------
    interface : Interface
        The observation channel (its ``n`` and ``kappa`` give the instance).
    policy : str or Policy
        The archive policy (default ``"bayes"``).

    Returns
    -------
    float or None
        E[Z] in blocks, or None when no exact evaluator exists.
    """
    return _exact_mean(_policy_iv(policy), _interface_obj_iv(interface))


def exact_z_pmf(interface: Interface, policy: str | Policy = "bayes") -> np.ndarray | None:
    """Exact law of Z (length kappa+1) of ``policy`` on ``interface``, or None.

    Parameters
    ----------
    interface : Interface
        The observation channel (its ``n`` and ``kappa`` give the instance).
    policy : str or Policy
        The archive policy (default ``"bayes"``).

    Returns
    -------
    numpy.ndarray or None
        ``P(Z = z)`` for z = 0..kappa, or None when no exact evaluator exists."""
    pol = _policy_iv(policy)
    interface = _interface_obj_iv(interface)
    f = getattr(pol, "exact_z_pmf", None)
    return None if not callable(f) else f(interface)


def _interface_obj_iv(interface: Any) -> Interface:
    if not isinstance(interface, Interface):
        raise DomainError("interface", interface, "must be an Interface object",
                          "build one with make_interface(name, n=n, kappa=kappa, ...)")
    return interface


def _check_z(z: np.ndarray, kappa: int, who: str) -> np.ndarray:
    z = np.asarray(z)
    if z.size and (z.min() < 0 or z.max() > kappa):
        raise DomainError("interface", who, "must draw Z in 0..kappa",
                          "return min(tau - 1, kappa)", context=f"kappa={kappa}")
    return z


class _LazyStreams(Sequence[np.random.Generator]):
    """The per-variable generators of one fast block, built on first use
    (building one costs ~50 us; most samplers need one or two)."""

    def __init__(self, seed: SeedInfo, block: int) -> None:
        self._seed, self._block = seed, block
        self._gens: dict[int, np.random.Generator] = {}

    def __len__(self) -> int:
        return _FAST_STREAMS

    def __getitem__(self, v: Any) -> Any:
        if not isinstance(v, int) or not 0 <= v < _FAST_STREAMS:
            raise IndexError(v)
        if v not in self._gens:
            self._gens[v] = stream(self._seed, 0, self._block, v)
        return self._gens[v]


def _run_fast(iface: Interface, pol: Policy, trials: int, seed: SeedInfo, chunk: int,
              workers: int) -> np.ndarray:
    sampler = pol.fast_sampler(iface)  # type: ignore[attr-defined]
    kappa = iface.kappa

    def one_block(i: int, size: int) -> np.ndarray:
        # One generator per random variable, each consumed in trial order,
        # so sub-chunking the block draws the same values.
        streams = _LazyStreams(seed, i)
        counts = np.zeros(kappa + 1, dtype=np.int64)
        for part in sub_chunks(size, chunk):
            z = _check_z(sampler(part, streams), kappa, iface.name)
            if z.shape != (part,):
                raise DomainError("interface", iface.name, f"must draw {part} values of Z",
                                  "return an array of shape (size,)")
            counts += np.bincount(z, minlength=kappa + 1)
        return counts

    parts = run_blocks(one_block, block_sizes(trials, FAST_BLOCK), workers=workers)
    return np.sum(parts, axis=0)


def _run_literal(iface: Interface, pol: Policy, trials: int, seed: SeedInfo,
                 workers: int) -> np.ndarray:
    n, kappa = iface.n, iface.kappa

    def one_block(i: int, size: int) -> np.ndarray:
        gen = stream(seed, 0, i)
        counts = np.zeros(kappa + 1, dtype=np.int64)
        sizes = np.ones(n, dtype=np.int64)
        for _ in range(size):
            j_star = int(gen.integers(n))
            y = iface.observe(j_star, gen)
            order = np.asarray(pol.order(iface, y, gen))
            _check_order(order, n, pol.name)
            sizes[j_star] = kappa
            counts[_archive_until_room(sizes, order, kappa)] += 1
            sizes[j_star] = 1
        return counts

    parts = run_blocks(one_block, block_sizes(trials, LITERAL_BLOCK), workers=workers)
    return np.sum(parts, axis=0)


def _check_order(order: np.ndarray, n: int, who: str) -> None:
    ok = (order.shape == (n,) and np.issubdtype(order.dtype, np.integer)
          and order.min() >= 0 and order.max() < n
          and np.all(np.bincount(order, minlength=n) == 1))
    if not ok:
        raise DomainError("policy", who, "must return a permutation of 0..n-1",
                          "return an int array holding every block index once",
                          context=f"n={n}")
