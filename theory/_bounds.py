"""Closed forms of the paper's theory section: Proposition 1 (recovery),
Proposition 2 (content channel), Lemma 1 (list Fano) and Theorem 1
(information-recovery trade-off), with the balanced-bucket achievability
construction and the size-blind baseline.

Every public function validates its arguments once with a ``_xxx_iv`` helper
and raises :class:`theory.DomainError` outside the domain of the statement.
Logarithms are base 2 (bits) unless a name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from vistalab._core import PlainRecord

from ._errors import DomainError
from ._validate import MAX_SIZE, as_int, as_real
from ._vectorize import broadcasting

__all__ = [
    "recovery_success_bound",
    "HandleCostModel",
    "RecoveryFeasibility",
    "recovery_feasibility",
    "AsymptoticPoint",
    "asymptotic_separation",
    "content_rate_bound",
    "content_rate_bound_tight",
    "list_fano_pc_bound",
    "makeroom_nu",
    "makeroom_lower_bound",
    "threshold_rate",
    "price_per_bit",
    "rate_needed_for_reduction",
    "BucketLedger",
    "bucket_ledger",
    "bucket_ledger_for_mean_z",
    "bucket_sufficient_rate",
    "blind_mean_z",
]

# A caller that computes a rate as H(Y) of a full ledger can land a few ulps
# above log2(n); such values are accepted and treated as log2(n).
_RATE_SLACK = 1e-12


# ---------------------------------------------------------------------------
# Door checks
# ---------------------------------------------------------------------------


def _recovery_iv(N: Any, k: Any, budget: Any) -> tuple[int, int, float]:
    N = as_int("N", N, lo=1, fix="the history holds at least one evidence block", hi=MAX_SIZE)
    k = as_int("k", k, lo=1, fix="each evidence block has at least one bit", hi=MAX_SIZE)
    budget = as_real("budget", budget, lo=0.0, fix="the prompt budget B is a number of bits >= 0")
    return N, k, budget


def _kappa_sigma_iv(kappa: Any, sigma: Any) -> tuple[int, float]:
    kappa = as_int(
        "kappa", kappa, lo=2,
        fix="kappa = L/l is the integer size ratio of the bulky block (Definition 2)",
            hi=MAX_SIZE,
        )
    sigma = as_real(
        "sigma", sigma, lo=0.0, lo_open=True,
        fix="sigma is the standard deviation of the log-size noise and must be positive",
    )
    return kappa, sigma


def _rate_iv(rate: Any, n: int, *, name: str = "rate") -> float:
    """A mutual information I(J*;Y) in bits: 0 <= rate <= log2 n."""
    top = math.log2(n)
    value = as_real(
        name, rate, lo=0.0,
        rule=f"must be a rate in bits with 0 <= {name} <= log2(n)",
        context=f"n={n}, log2(n)={top:.12g}",
        fix="a rate is the mutual information I(J*;Y), at most the log2(n) bits of J*",
    )
    if value > top * (1.0 + _RATE_SLACK) + _RATE_SLACK:
        raise DomainError(
            name, rate, f"must be a rate in bits with 0 <= {name} <= log2(n)",
            "a rate is the mutual information I(J*;Y), at most the log2(n) bits of J*",
            context=f"n={n}, log2(n)={top:.12g}",
        )
    return min(value, top)


def _makeroom_iv(n: Any, kappa: Any) -> tuple[int, int]:
    """Theorem 1's domain: integers with 2 <= kappa < n/2."""
    n = as_int("n", n)  # the type first: a str is refused as a str, not for its size
    kappa = as_int("kappa", kappa)
    n = as_int(
        "n", n, lo=5,
        rule="must be an integer >= 5 (Theorem 1 needs 2 <= kappa < n/2)",
        fix="the working set needs more than 2*kappa blocks", hi=MAX_SIZE)
    kappa = as_int(
        "kappa", kappa, lo=2, hi=(n - 1) // 2,
        rule="must be an integer with 2 <= kappa < n/2",
        context=f"n={n}",
        fix="Theorem 1 needs nu = log2((n-kappa)/kappa) > 0; use the exact frontier "
        "(optimal_mean_z) beyond that domain",
    )
    return n, kappa


def _frontier_domain_iv(n: Any, kappa: Any) -> tuple[int, int]:
    """The make-room instance in general: integers kappa >= 1, n >= kappa + 1."""
    kappa = as_int("kappa", kappa, lo=1, fix="kappa = L/l is a positive integer size ratio",
        hi=MAX_SIZE,
    )
    n = as_int(
        "n", n, lo=kappa + 1,
        rule="must be an integer with n >= kappa + 1",
        context=f"kappa={kappa}",
        fix="the working set holds the bulky block and at least kappa load-bearing blocks",
            hi=MAX_SIZE,
        )
    return n, kappa


def _mean_iv(mean_z: Any, kappa: int) -> float:
    """An expected number of archived load-bearing blocks: 0 <= mean_z <= kappa."""
    return as_real(
        "mean_z", mean_z, lo=0.0, hi=float(kappa),
        rule="must be an expected cost with 0 <= mean_z <= kappa",
        context=f"kappa={kappa}", fix="Z = min(rank-1, kappa) lies in [0, kappa]",
    )


def _delta_iv(delta: Any) -> float:
    return as_real(
        "delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True,
        fix="delta is the target fraction E[Z] <= delta*kappa, strictly between 0 and 1",
    )


def _log2_ratio(a: int, b: int) -> float:
    """``log2(a/b)`` for positive integers, accurate also when a/b is near 1
    (nu = log2((n-kappa)/kappa) is tiny when kappa is close to n/2)."""
    return math.log1p((a - b) / b) / math.log(2.0)


# ---------------------------------------------------------------------------
# Proposition 1: recovery is necessary under budget pressure
# ---------------------------------------------------------------------------


@broadcasting
def recovery_success_bound(N: int, k: int, budget: float) -> float:
    """Proposition 1: success bound of any non-recovering method on T_{N,k}.

    Parameters
    ----------
    N : int
        Number of independent evidence blocks in the history (N >= 1).
    k : int
        Bits per block (k >= 1).
    budget : float
        Prompt budget B in bits, the entropy cap H(R) <= B (B >= 0).

    Returns
    -------
    float
        ``B/(N k) + 1/k``, returned unclipped. It is a bound on a
        probability, so values >= 1 say nothing (probabilities cap at 1); the
        statement is informative in the paper's regime B < N k.
    """
    N, k, budget = _recovery_iv(N, k, budget)
    return budget / (float(N) * float(k)) + 1.0 / k  # floats: N*k may exceed 1e308


@dataclass(frozen=True)
class HandleCostModel(PlainRecord):
    """Prompt cost of VISTA's archive in the recovery task.

    Attributes
    ----------
    c0 : float
        Bits per ``log2 N`` of one handle: a handle costs ``c0 * log2(N)``
        bits (the paper's handle-encoding constant, >= 0).
    instruction : float
        Bits of the fixed instruction kept in the prompt (>= 0).
    """

    c0: float = 1.0
    instruction: float = 0.0

    def __post_init__(self) -> None:
        as_real("c0", self.c0, lo=0.0, fix="c0 is a non-negative bits-per-log2(N) factor")
        as_real("instruction", self.instruction, lo=0.0, fix="instruction is a size in bits >= 0")

    def handle_size(self, N: int) -> float:
        """Bits of one handle among ``N``: ``c0 * log2(N)``.

        ``N = 1`` gives 0: a single archived block needs no address bits.

        Parameters
        ----------
        N : int
            Evidence blocks archived, ``N >= 1``.

        Returns
        -------
        float
            The handle's size in bits.

        Raises
        ------
        DomainError
            If ``N`` is not an integer >= 1 (or exceeds the supported size).
        """
        N = as_int("N", N, lo=1, fix="the history holds at least one evidence block",
            hi=MAX_SIZE,
        )
        return float(self.c0) * math.log2(N)


@dataclass(frozen=True)
class RecoveryFeasibility(PlainRecord):
    """Whether VISTA's archive fits the prompt budget (Proposition 1).

    Attributes
    ----------
    feasible : bool
        ``slack >= 0``: instruction, all handles and one recovered block fit,
        so VISTA succeeds with probability 1.
    required : float
        ``instruction + handles_total + block`` in bits.
    instruction : float
        Bits of the instruction.
    handles_total : float
        ``N * handle_size(N)`` bits.
    block : float
        Bits of the one recovered block (= k).
    slack : float
        ``budget - required`` (negative when infeasible).
    budget : float
        The budget B that was checked.
    """

    feasible: bool
    required: float
    instruction: float
    handles_total: float
    block: float
    slack: float
    budget: float


def recovery_feasibility(
    N: int, k: int, budget: float, *, cost: HandleCostModel | None = None
) -> RecoveryFeasibility:
    """Proposition 1, achievability: does VISTA fit in ``budget`` bits?

    Parameters
    ----------
    N, k : int
        Blocks and bits per block of T_{N,k}.
    budget : float
        Prompt budget B in bits.
    cost : HandleCostModel, optional
        Handle and instruction costs; default ``HandleCostModel()``
        (c0 = 1, no instruction).

    Returns
    -------
    RecoveryFeasibility
    """
    N, k, budget = _recovery_iv(N, k, budget)
    if cost is None:
        cost = HandleCostModel()
    elif not isinstance(cost, HandleCostModel):
        raise DomainError("cost", cost, "must be a HandleCostModel", "pass HandleCostModel(c0=...)")
    handles = N * cost.handle_size(N)
    instruction = float(cost.instruction)
    required = instruction + handles + k
    slack = budget - required
    return RecoveryFeasibility(
        feasible=slack >= 0.0,
        required=required,
        instruction=instruction,
        handles_total=handles,
        block=float(k),
        slack=slack,
        budget=budget,
    )


@dataclass(frozen=True)
class AsymptoticPoint(PlainRecord):
    """One point of the separation regime k = ceil(sqrt N), B = c N log2 N.

    Attributes
    ----------
    N : int
        Number of blocks.
    k : int
        ``ceil(sqrt(N))`` bits per block.
    budget : float
        ``c * N * log2(N)`` bits.
    lossy_bound : float
        Proposition 1's bound ``B/(Nk) + 1/k`` on any non-recovering method
        (unclipped).
    feasible : bool
        Whether VISTA fits with handles of ``c0 * log2(N)`` bits.
    gap : float or None
        ``1 - min(1, lossy_bound)``, the guaranteed success gap between VISTA
        (success 1) and every lossy method, when ``feasible``; None when VISTA
        does not fit, since then there is no guarantee to compare (never NaN).
    c : float
        Budget constant.
    c0 : float
        Handle-encoding constant.
    """

    N: int
    k: int
    budget: float
    lossy_bound: float
    feasible: bool
    gap: float | None
    c: float
    c0: float


def asymptotic_separation(N: int, c: float, *, c0: float = 1.0) -> AsymptoticPoint:
    """Proposition 1's separation regime at one N (Appendix B).

    Parameters
    ----------
    N : int
        Number of blocks, N >= 2 (so that log2 N > 0).
    c : float
        Budget constant, ``B = c N log2 N`` (c > 0). VISTA is feasible for all
        large N when ``c > c0``.
    c0 : float, optional
        Handle bits per log2 N.

    Returns
    -------
    AsymptoticPoint
    """
    N = as_int("N", N, lo=2, fix="the regime B = c N log2 N needs N >= 2", hi=MAX_SIZE)
    c = as_real(
        "c", c, lo=0.0, lo_open=True, fix="c is the positive budget constant in B = c N log2 N"
    )
    c0 = as_real("c0", c0, lo=0.0, fix="c0 is a non-negative bits-per-log2(N) factor")
    k = math.isqrt(N - 1) + 1  # exact ceil(sqrt(N)) for N >= 1
    budget = c * N * math.log2(N)
    if not math.isfinite(budget):
        raise DomainError(
            "c", c, "must keep the budget B = c N log2 N finite",
            "pass a smaller budget constant", context=f"N={N}",
        )
    lossy = budget / (float(N) * float(k)) + 1.0 / k
    feas = recovery_feasibility(N, k, budget, cost=HandleCostModel(c0=c0)).feasible
    gap = 1.0 - min(1.0, lossy) if feas else None
    return AsymptoticPoint(
        N=N, k=k, budget=budget, lossy_bound=lossy, feasible=feas, gap=gap, c=c, c0=c0
    )


# ---------------------------------------------------------------------------
# Proposition 2: content-derived information
# ---------------------------------------------------------------------------


@broadcasting
def content_rate_bound(kappa: int, sigma: float) -> float:
    """Proposition 2: ``I(J*;W) <= ln2 (log2 kappa)^2 / sigma^2`` bits.

    Parameters
    ----------
    kappa : int
        Size ratio L/l (integer >= 2).
    sigma : float
        Standard deviation of the log-size noise (> 0).

    Returns
    -------
    float
        The paper's bound in bits; independent of n. Mutual information is
        also at most ``log2 n`` (not applied here, n is not an argument).
        ``inf`` when ``log2(kappa) / sigma`` exceeds 1e154 (sigma near 1e-300):
        the exact bound is then beyond the range of a double, and vacuous.
    """
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    return math.log(2.0) * _snr_squared(kappa, sigma)


@broadcasting
def content_rate_bound_tight(n: int, kappa: int, sigma: float) -> float:
    """Tighter Proposition 2: ``(1 - 1/n) ln2 (log2 kappa)^2 / (2 sigma^2)`` bits.

    Replaces the mixture in the golden formula
    ``I(J*;W) <= min_Q (1/n) sum_j KL(P_j || Q)`` by the product Gaussian Q
    with covariance ``sigma^2 I`` and every mean shifted by
    ``t = ln(kappa)/n`` from ``ln l``; then
    ``KL(P_j||Q) = (ln kappa)^2 (1 - 1/n) / (2 sigma^2)`` nats for every j.
    This is at most half of :func:`content_rate_bound`.

    Parameters
    ----------
    n : int
        Number of blocks (n >= 2).
    kappa : int
        Size ratio (integer >= 2).
    sigma : float
        Log-size noise (> 0).

    Returns
    -------
    float
        The bound in bits, not capped; ``min(bound, log2 n)`` is also valid.
        ``inf`` when ``log2(kappa) / sigma`` exceeds 1e154 (sigma near 1e-300):
        the exact bound is then beyond the range of a double, and vacuous.
    """
    n = as_int("n", n, lo=2, fix="the working set holds at least two blocks", hi=MAX_SIZE)
    kappa, sigma = _kappa_sigma_iv(kappa, sigma)
    return (1.0 - 1.0 / n) * math.log(2.0) * _snr_squared(kappa, sigma) / 2.0


def _snr_squared(kappa: int, sigma: float) -> float:
    """``(log2(kappa)/sigma)^2``, +inf where it exceeds the float range (a
    vacuous bound at sigma ~ 1e-300, not a ZeroDivisionError), 0 where it
    underflows (sigma ~ 1e308)."""
    ratio = math.log2(kappa) / sigma
    return ratio * ratio if ratio < 1e154 else math.inf


# ---------------------------------------------------------------------------
# Lemma 1: list Fano
# ---------------------------------------------------------------------------


@broadcasting
def list_fano_pc_bound(n: int, m: int, rate: float) -> float:
    """Lemma 1: largest list-success probability allowed by the list Fano inequality.

    The largest ``P_c`` in [0, 1] with
    ``log2 n - I <= 1 + P_c log2 m + (1 - P_c) log2(n - m)``.

    Parameters
    ----------
    n : int
        Alphabet size of J* (n >= 2).
    m : int
        List size, ``1 <= m <= n - 1``.
    rate : float
        ``I = I(J*;Y)`` in bits, ``0 <= rate <= log2 n``.

    Returns
    -------
    float
        The bound on ``P_c``. It is 1 when ``m >= n/2`` (the right-hand side
        then never drops below ``log2 n``).
    """
    n = as_int("n", n, lo=2, fix="J* needs at least two values", hi=MAX_SIZE)
    m = as_int(
        "m", m, lo=1, hi=n - 1, rule="must be an integer list size with 1 <= m <= n-1",
        context=f"n={n}", fix="pick a list strictly smaller than the alphabet",
    )
    rate = _rate_iv(rate, n)
    if 2 * m >= n:
        return 1.0
    # RHS is affine in P_c with negative slope log2 m - log2(n-m).
    num = 1.0 + rate + math.log1p(-m / n) / math.log(2.0)
    den = _log2_ratio(n - m, m)
    return min(1.0, max(0.0, num / den))


# ---------------------------------------------------------------------------
# Theorem 1: information-recovery trade-off
# ---------------------------------------------------------------------------


@broadcasting
def makeroom_nu(n: int, kappa: int) -> float:
    """``nu = log2((n - kappa)/kappa) > 0`` of Theorem 1 (2 <= kappa < n/2).

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.

    Returns
    -------
    float
        nu in bits (an ndarray for array arguments)."""
    n, kappa = _makeroom_iv(n, kappa)
    return _log2_ratio(n - kappa, kappa)


@broadcasting
def makeroom_lower_bound(n: int, kappa: int, rate: float) -> float:
    """Theorem 1: ``E[Z] >= kappa [1 - (I + 1)/nu]_+``.

    Parameters
    ----------
    n : int
        Blocks in the working set.
    kappa : int
        Size ratio, ``2 <= kappa < n/2``.
    rate : float
        Interface rate ``I`` in bits, ``0 <= I <= log2 n``.

    Returns
    -------
    float
        Lower bound on the expected number of archived load-bearing blocks.
    """
    n, kappa = _makeroom_iv(n, kappa)
    rate = _rate_iv(rate, n)
    nu = _log2_ratio(n - kappa, kappa)
    return kappa * max(0.0, 1.0 - (rate + 1.0) / nu)


@broadcasting
def threshold_rate(n: int, kappa: int, delta: float) -> float:
    """Theorem 1 (C ii): ``E[Z] <= delta kappa`` needs ``I >= (1 - delta) nu - 1`` bits.

    A negative value means the bound requires no bits.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    float
        The rate in bits.
    """
    n, kappa = _makeroom_iv(n, kappa)
    delta = _delta_iv(delta)
    return (1.0 - delta) * _log2_ratio(n - kappa, kappa) - 1.0


@broadcasting
def price_per_bit(n: int, kappa: int) -> float:
    """Theorem 1 (C iii): the lower-bound floor falls by ``kappa/nu`` per bit.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.

    Returns
    -------
    float
        ``kappa/nu``, blocks per bit."""
    n, kappa = _makeroom_iv(n, kappa)
    return kappa / _log2_ratio(n - kappa, kappa)


@broadcasting
def rate_needed_for_reduction(n: int, kappa: int, delta_z: float) -> float:
    """Theorem 1 (C iii): ``E[Z] <= kappa - delta_z`` needs ``I >= delta_z nu/kappa - 1``.

    ``0 <= delta_z <= kappa``; a negative value means no bits are required.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta_z : float or array_like
        The reduction of E[Z] below kappa, in blocks.

    Returns
    -------
    float
        The rate in bits.
    """
    n, kappa = _makeroom_iv(n, kappa)
    delta_z = as_real(
        "delta_z", delta_z, lo=0.0, hi=float(kappa),
        rule="must be a reduction of E[Z] with 0 <= delta_z <= kappa",
        context=f"kappa={kappa}", fix="E[Z] lies in [0, kappa]",
    )
    return delta_z * _log2_ratio(n - kappa, kappa) / kappa - 1.0


# ---------------------------------------------------------------------------
# Achievability: balanced bucket ledgers, and the blind baseline
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BucketLedger(PlainRecord):
    """A balanced M-bucket ledger (Theorem 1, part D) evaluated exactly.

    Attributes
    ----------
    n : int
        Blocks.
    kappa : int
        Size ratio.
    M : int
        Number of buckets, ``1 <= M <= n``.
    bucket_sizes : tuple of (int, int)
        ``(size, count)`` pairs, largest size first; sizes differ by at most 1.
    mean_z : float
        Exact ``E[Z]`` when the agent probes the reported bucket in uniformly
        random order: ``(1/n) sum_buckets sum_{p=1..b} min(p-1, kappa)``.
    rate_bits : float
        Exact ``H(Y) = I(J*;Y)`` of the reported bucket index.
    upper_bound : float
        The paper's bound ``n/(2M)`` (strictly above ``mean_z``).
    """

    n: int
    kappa: int
    M: int
    bucket_sizes: tuple[tuple[int, int], ...]
    mean_z: float
    rate_bits: float
    upper_bound: float


def _probe_cost_sum(b: int, kappa: int) -> int:
    """``sum_{p=1..b} min(p-1, kappa)``, exactly."""
    if b - 1 <= kappa:
        return b * (b - 1) // 2
    return kappa * (kappa + 1) // 2 + (b - 1 - kappa) * kappa


def _balanced_sizes(n: int, M: int) -> tuple[tuple[int, int], ...]:
    q, r = divmod(n, M)
    return tuple((size, count) for size, count in ((q + 1, r), (q, M - r)) if count > 0)


def _ledger(n: int, kappa: int, M: int) -> BucketLedger:
    sizes = _balanced_sizes(n, M)
    total = sum(count * _probe_cost_sum(b, kappa) for b, count in sizes)
    # Sum of non-negative terms: no cancellation even when H(Y) is tiny.
    rate = sum(count * (b / n) * math.log2(n / b) for b, count in sizes)
    return BucketLedger(
        n=n, kappa=kappa, M=M, bucket_sizes=sizes, mean_z=total / n,
        rate_bits=rate, upper_bound=n / (2.0 * M),
    )


def bucket_ledger(n: int, kappa: int, M: int) -> BucketLedger:
    """Balanced M-bucket ledger of Theorem 1 (D), exact E[Z] and H(Y).

    Parameters
    ----------
    n : int
        Blocks, ``n >= kappa + 1``.
    kappa : int
        Size ratio, ``kappa >= 1``.
    M : int
        Buckets, ``1 <= M <= n`` (M = 1 is the blind agent, M = n the full
        ledger).

    Returns
    -------
    BucketLedger
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    M = as_int(
        "M", M, lo=1, hi=n, rule="must be an integer number of buckets with 1 <= M <= n",
        context=f"n={n}", fix="a ledger reports one of at most n buckets",
    )
    return _ledger(n, kappa, M)


def bucket_ledger_for_mean_z(n: int, kappa: int, mean_z: float) -> BucketLedger:
    """The cheapest balanced bucket ledger with ``E[Z] <= mean_z``.

    Balanced-ledger E[Z] is non-increasing in M (the per-bucket cost is
    convex with value 0 at size 0, hence superadditive) and H(Y) is
    increasing in M (the balanced split is majorised by every split into
    more parts), so the smallest qualifying M, found by bisection, also has
    the smallest rate.

    Parameters
    ----------
    n, kappa : int
        The instance, ``kappa >= 1``, ``n >= kappa + 1``.
    mean_z : float
        Target, ``0 <= mean_z <= kappa``.

    Returns
    -------
    BucketLedger
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    target = _mean_iv(mean_z, kappa)
    lo, hi = 1, n  # hi always qualifies: singleton buckets give E[Z] = 0
    if _ledger(n, kappa, 1).mean_z <= target:
        return _ledger(n, kappa, 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _ledger(n, kappa, mid).mean_z <= target:
            hi = mid
        else:
            lo = mid
    return _ledger(n, kappa, hi)


@broadcasting
def bucket_sufficient_rate(n: int, kappa: int, delta: float) -> float:
    """Theorem 1 (D): ``min{log2 n, log2 ceil(n/(2 delta kappa))}`` bits suffice
    for ``E[Z] <= delta kappa``.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    float
        The sufficient rate in bits (a balanced bucket ledger reaches it)."""
    n, kappa = _makeroom_iv(n, kappa)
    delta = _delta_iv(delta)
    # The float delta is an exact dyadic rational; an exact ceiling avoids a
    # spurious +1 when n/(2 delta kappa) is an integer that floats round up.
    c = math.ceil(Fraction(n) / (2 * Fraction(delta) * kappa))
    return min(math.log2(n), math.log2(c))


@broadcasting
def blind_mean_z(n: int, kappa: int) -> float:
    """Size-blind E[Z] (rate 0, random order): ``sum_{m=1..kappa} (1 - m/n)``.

    Equals ``kappa - kappa (kappa + 1)/(2n)``; domain ``kappa >= 1``,
    ``n >= kappa + 1``.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.

    Returns
    -------
    float
        E[Z] in blocks.
    """
    n, kappa = _frontier_domain_iv(n, kappa)
    return (kappa * n - kappa * (kappa + 1) // 2) / n
