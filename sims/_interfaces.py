"""Observation interfaces of the make-room instance M_{n,L,l} (Definition 3):
what the agent sees before archiving, and how much it says about J*.

Sizes are in units of l (load-bearing blocks have size 1, the bulky block
size kappa). Every interface offers the literal per-trial observation and its
posterior; the built-in ones also offer an O(1)-per-trial sampler of Z under
the Bayes order and the exact E[Z] and law of Z.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from scipy import special
from vistalab.theory import DomainError, UnknownNameError
from vistalab.theory._validate import as_int, as_real

from vistalab import theory

from ._gaussian import (
    RateEstimate,
    estimate_gaussian_rate,
    gaussian_exact_mean_z,
    gaussian_exact_z_tail,
)

__all__ = [
    "Interface",
    "INTERFACES",
    "make_interface",
    "makeroom_iv",
    "LedgerInterface",
    "GaussianInterface",
    "BucketsInterface",
    "BlindInterface",
    "GibbsInterface",
    "uniform_rank_z",
    "blind_z_pmf",
]

Streams = Sequence[np.random.Generator]


@runtime_checkable
class Interface(Protocol):
    """An observation channel Y about the bulky block's index J*.

    Every attribute and method below is required, except those marked optional.

    Attributes
    ----------
    name : str
        Registry name.
    n, kappa : int
        The instance.
    params : dict
        The interface's own parameters (for reports).

    Methods
    -------
    observe(j_star, rng) -> Y
        One trial's observation given the bulky index (0-based).
    log_posterior(y) -> numpy.ndarray
        Length-n array equal, up to an additive constant, to
        ``log P(J* = j | Y = y)`` (``-inf`` allowed). The Bayes policy sorts by it.
    rate(*, trials=None, rng=None) -> RateEstimate
        ``I(J*;Y)`` in bits, exact or estimated with a standard error.
    sample_bayes_z(size, streams) -> numpy.ndarray
        Optional (looked up with ``getattr``), like the two below. ``size``
        draws of Z under the Bayes order in O(1) each. Each random
        variable must come from its own generator in ``streams`` (at least
        four are given) and be drawn in trial order, so that drawing a block
        in sub-chunks gives the same values.
    exact_bayes_mean_z() -> float
        Exact E[Z] under the Bayes order.
    exact_bayes_z_pmf() -> numpy.ndarray
        Exact law of Z (length kappa+1) under the Bayes order.
    """

    @property
    def name(self) -> str:
        """Registry name of the interface (a key of :data:`INTERFACES`)."""

    n: int
    kappa: int

    @property
    def params(self) -> dict[str, float]:
        """The interface's own parameters, for reports (empty when it has none)."""

    def observe(self, j_star: int, rng: np.random.Generator) -> Any:
        """One trial's observation Y given the bulky block's index.

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        object
            The observation Y, whatever type the interface uses.
        """

    def log_posterior(self, y: Any) -> np.ndarray:
        """The log-posterior of J* given one observation; the Bayes policy
        sorts by it.

        Parameters
        ----------
        y : object
            One observation, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """The rate I(J*;Y) in bits (Definition "Proprioceptive interface of rate I").

        Parameters
        ----------
        trials : int, optional
            Monte Carlo trials, for an interface whose rate is estimated; an exact
            interface ignores it.
        rng : object, optional
            Seed or generator of the estimate, likewise.

        Returns
        -------
        RateEstimate
            The rate in bits, exact or with a standard error.
        """


def observation_iv(y: Any, n: int, *, integer: bool = False) -> np.ndarray:
    """One observation Y as the interface's ``observe`` returns it: a 1-D finite
    numeric vector of length ``n`` (integers when ``integer``)."""
    fix = "pass what the interface's observe() returned"
    if isinstance(y, (str, bytes, bytearray)):
        raise DomainError("y", y, f"must be a numeric vector of length {n}, not a string", fix)
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise DomainError("y", y, f"must be a numeric vector of length {n}", fix) from None
    kinds = "iub" if integer else "iubf"
    if arr.dtype.kind not in kinds or arr.shape != (n,):
        what = "integer" if integer else "numeric"
        raise DomainError("y", y, f"must be a 1-D {what} vector of length {n} (got dtype "
                          f"{arr.dtype}, shape {arr.shape})", fix)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise DomainError("y", y, "must hold finite numbers (no NaN or inf)", fix)
    return arr


def makeroom_iv(n: Any, kappa: Any) -> tuple[int, int]:
    """Definition 2's instance: integers with 2 <= kappa < n."""
    n = as_int("n", n, lo=3, rule="must be an integer >= 3",
               fix="the working set holds the bulky block and at least two others")
    if n > 2**63:
        raise DomainError("n", n, "must be at most 2**63", "sizes are bounded by the int64 range")
    kappa = as_int(
        "kappa", kappa, lo=2, hi=n - 1,
        rule="must be an integer with 2 <= kappa < n", context=f"n={n}",
        fix="kappa = L/l is the integer size ratio; archiving kappa load-bearing blocks "
        "must be possible",
    )
    return n, kappa


def uniform_rank_z(n: int, kappa: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """Z = min(tau - 1, kappa) for a uniform rank tau (one uniform per trial).

    ``floor(u n)`` is uniform on 0..n-1 up to the 2**-53 granularity of u.
    """
    r = np.minimum((gen.random(size) * n).astype(np.int64), n - 1)
    return np.minimum(r, kappa)


def blind_z_pmf(n: int, kappa: int) -> np.ndarray:
    """Law of Z for a uniformly random rank: 1/n each below kappa."""
    p = np.full(kappa + 1, 1.0 / n)
    p[kappa] = (n - kappa) / n
    return p


def _exact_rate(bits: float) -> RateEstimate:
    return RateEstimate(bits=float(bits), se=0.0, trials=0, exact=True)


class LedgerInterface:
    """The full size ledger: Y is the size vector (rate log2 n).

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l of the bulky block, ``2 <= kappa < n/2``."""

    name: ClassVar[str] = "ledger"
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def __init__(self, *, n: int, kappa: int) -> None:
        self.n, self.kappa = makeroom_iv(n, kappa)

    @property
    def params(self) -> dict[str, float]:
        """No parameters: an empty dict."""
        return {}

    def observe(self, j_star: int, rng: np.random.Generator) -> np.ndarray:
        """The full size ledger: 1 for every block, kappa for the bulky one.

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        numpy.ndarray
            The int64 size vector of length n, in units of l.
        """
        sizes = np.ones(self.n, dtype=np.int64)
        sizes[j_star] = self.kappa
        return sizes

    def log_posterior(self, y: Any) -> np.ndarray:
        """0 at the largest entry of the size vector, ``-inf`` elsewhere: the
        ledger identifies J*.

        Parameters
        ----------
        y : object
            One observation, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """
        y = observation_iv(y, self.n)
        return np.where(y == y.max(), 0.0, -np.inf)

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """The exact rate log2 n: the ledger identifies J*.

        Parameters
        ----------
        trials : int, optional
            Ignored: the rate is exact.
        rng : object, optional
            Ignored: the rate is exact.

        Returns
        -------
        RateEstimate
            The rate in bits, with ``exact=True`` and ``se=0``.
        """
        return _exact_rate(math.log2(self.n))

    def sample_bayes_z(self, size: int, streams: Streams) -> np.ndarray:
        # The unique largest entry is J*: it is archived first, tau = 1.
        """Z under the Bayes order: always 0, since J* is archived first (tau = 1).

        Parameters
        ----------
        size : int
            Number of trials.
        streams : sequence of numpy.random.Generator
            Unused: Z is not random.

        Returns
        -------
        numpy.ndarray
            ``size`` int64 draws of Z = min(tau - 1, kappa), each in ``0..kappa``.
        """
        return np.zeros(size, dtype=np.int64)

    def exact_bayes_mean_z(self) -> float:
        """E[Z] = 0 under the Bayes order: the full ledger attains Z = 0
        (Theorem "Information--recovery tradeoff").

        Returns
        -------
        float
            E[Z] under the Bayes order.
        """
        return 0.0

    def exact_bayes_z_pmf(self) -> np.ndarray:
        """The law of Z under the Bayes order: all mass at 0.

        Returns
        -------
        numpy.ndarray
            Length ``kappa + 1`` array whose entry z is P(Z = z); it sums to 1.
        """
        p = np.zeros(self.kappa + 1)
        p[0] = 1.0
        return p


class BlindInterface:
    """No information: Y is constant (rate 0).

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l of the bulky block, ``2 <= kappa < n/2``."""

    name: ClassVar[str] = "blind"
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def __init__(self, *, n: int, kappa: int) -> None:
        self.n, self.kappa = makeroom_iv(n, kappa)

    @property
    def params(self) -> dict[str, float]:
        """No parameters: an empty dict."""
        return {}

    def observe(self, j_star: int, rng: np.random.Generator) -> None:
        """No information: the observation is always ``None``.

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        None
            The constant observation.
        """
        return None

    def log_posterior(self, y: Any) -> np.ndarray:
        """A flat posterior (zeros): Y says nothing about J*.

        Parameters
        ----------
        y : object
            One observation, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """
        return np.zeros(self.n)

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """The exact rate 0 bits.

        Parameters
        ----------
        trials : int, optional
            Ignored: the rate is exact.
        rng : object, optional
            Ignored: the rate is exact.

        Returns
        -------
        RateEstimate
            The rate in bits, with ``exact=True`` and ``se=0``.
        """
        return _exact_rate(0.0)

    def sample_bayes_z(self, size: int, streams: Streams) -> np.ndarray:
        # A flat posterior with random tie-breaking is a uniformly random order.
        """Z under a uniformly random order (a flat posterior with random
        tie-breaking), one uniform per trial from ``streams[0]``.

        Parameters
        ----------
        size : int
            Number of trials.
        streams : sequence of numpy.random.Generator
            Independent generators, one per random variable drawn in trial order
            (so that drawing in sub-chunks gives the same values).

        Returns
        -------
        numpy.ndarray
            ``size`` int64 draws of Z = min(tau - 1, kappa), each in ``0..kappa``.
        """
        return uniform_rank_z(self.n, self.kappa, size, streams[0])

    def exact_bayes_mean_z(self) -> float:
        """E[Z] for a uniformly random rank (:func:`vistalab.theory.blind_mean_z`).

        Returns
        -------
        float
            E[Z] under the Bayes order.
        """
        return theory.blind_mean_z(self.n, self.kappa)

    def exact_bayes_z_pmf(self) -> np.ndarray:
        """The law of Z for a uniformly random rank (:func:`blind_z_pmf`).

        Returns
        -------
        numpy.ndarray
            Length ``kappa + 1`` array whose entry z is P(Z = z); it sums to 1.
        """
        return blind_z_pmf(self.n, self.kappa)


class BucketsInterface:
    """Balanced M-bucket ledger (Theorem 1, part D): Y is the bucket of J*.

    Block j (0-based) is in bucket ``floor(j M / n)``; bucket sizes are
    ``ceil(n/M)`` or ``floor(n/M)``. Rate ``H(Y)`` exactly.

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l of the bulky block, ``2 <= kappa < n/2``.
    buckets : int
        M, the number of buckets, ``1 <= M <= n`` (required).
    """

    name: ClassVar[str] = "buckets"
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"buckets": 3}

    def __init__(self, *, n: int, kappa: int, buckets: Any = None) -> None:
        self.n, self.kappa = makeroom_iv(n, kappa)
        if buckets is None:
            raise DomainError("buckets", None, "is required for interface 'buckets'",
                              "pass buckets=M (--buckets M) with 1 <= M <= n")
        self.M = as_int("buckets", buckets, lo=1, hi=self.n,
                        rule="must be an integer number of buckets with 1 <= M <= n",
                        context=f"n={self.n}", fix="a ledger reports one of at most n buckets")
        self._ledger = theory.bucket_ledger(self.n, self.kappa, self.M)

    @property
    def params(self) -> dict[str, float]:
        """The number of buckets: ``{'buckets': M}``."""
        return {"buckets": self.M}

    def _bucket(self, j: np.ndarray | int) -> np.ndarray:
        return np.asarray(j, dtype=np.int64) * self.M // self.n

    def _bucket_size(self, b: np.ndarray) -> np.ndarray:
        # Members j of bucket b satisfy b n <= j M < (b+1) n.
        n, M = self.n, self.M
        return -((-(b + 1) * n) // M) + ((-b * n) // M)

    def observe(self, j_star: int, rng: np.random.Generator) -> int:
        """The bucket of J*, ``floor(j_star M / n)``.

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        int
            The bucket index, in ``0..M-1``.
        """
        return int(self._bucket(j_star))

    def log_posterior(self, y: Any) -> np.ndarray:
        """0 on the members of the reported bucket, ``-inf`` elsewhere.

        Parameters
        ----------
        y : object
            A bucket index, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """
        y = as_int("y", y, lo=0, hi=self.M - 1, rule=f"must be a bucket index 0..{self.M - 1}",
                   fix="pass what the interface's observe() returned")
        members = self._bucket(np.arange(self.n)) == y
        return np.where(members, 0.0, -np.inf)

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """The exact rate H(Y) of the balanced ledger
        (:func:`vistalab.theory.bucket_ledger`).

        Parameters
        ----------
        trials : int, optional
            Ignored: the rate is exact.
        rng : object, optional
            Ignored: the rate is exact.

        Returns
        -------
        RateEstimate
            The rate in bits, with ``exact=True`` and ``se=0``.
        """
        return _exact_rate(self._ledger.rate_bits)

    def sample_bayes_z(self, size: int, streams: Streams) -> np.ndarray:
        # J* uniform, then its position inside its bucket uniform: the Bayes
        # order probes the reported bucket in random order first.
        """Z under the Bayes order, which probes the reported bucket in random
        order first: J* uniform (``streams[0]``), then its position inside its
        bucket uniform (``streams[1]``).

        Parameters
        ----------
        size : int
            Number of trials.
        streams : sequence of numpy.random.Generator
            Independent generators, one per random variable drawn in trial order
            (so that drawing in sub-chunks gives the same values).

        Returns
        -------
        numpy.ndarray
            ``size`` int64 draws of Z = min(tau - 1, kappa), each in ``0..kappa``.
        """
        j = np.minimum((streams[0].random(size) * self.n).astype(np.int64), self.n - 1)
        b_size = self._bucket_size(self._bucket(j))
        pos = np.minimum((streams[1].random(size) * b_size).astype(np.int64), b_size - 1)
        return np.minimum(pos, self.kappa)

    def exact_bayes_mean_z(self) -> float:
        """E[Z] of the balanced-bucket construction (Appendix "Proof of Theorem
        Information--recovery tradeoff", the achievability side).

        Returns
        -------
        float
            E[Z] under the Bayes order.
        """
        return float(self._ledger.mean_z)

    def exact_bayes_z_pmf(self) -> np.ndarray:
        """The law of Z under the Bayes order: in a bucket of size s, Z is
        uniform on ``0..s-1`` capped at kappa, weighted by the bucket's share of n.

        Returns
        -------
        numpy.ndarray
            Length ``kappa + 1`` array whose entry z is P(Z = z); it sums to 1.
        """
        p = np.zeros(self.kappa + 1)
        for size, count in self._ledger.bucket_sizes:
            w = count * size / self.n
            low = min(size, self.kappa)
            p[:low] += w / size
            p[self.kappa] += w * max(size - self.kappa, 0) / size
        return p


class GaussianInterface:
    """Proposition 2's content channel: ``W_j = ln s_j + N(0, sigma^2)``.

    The posterior is a softmax of ``W ln(kappa)/sigma^2``; the rate is
    estimated by Monte Carlo with a standard error.

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l of the bulky block, ``2 <= kappa < n/2``.
    sigma : float
        Standard deviation of the log-size noise, ``sigma > 0`` (required).
    """

    name: ClassVar[str] = "gaussian"
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"sigma": 1.0}
    DEFAULT_RATE_TRIALS: ClassVar[int] = 4000
    # Cap on n * trials of the default rate estimate (O(n) per trial).
    RATE_WORK: ClassVar[int] = 2 * 10**7
    MC_RATE_MAX_N: ClassVar[int] = 10**5
    WALK_MAX_KAPPA: ClassVar[int] = 16

    def __init__(self, *, n: int, kappa: int, sigma: Any = None) -> None:
        self.n, self.kappa = makeroom_iv(n, kappa)
        if sigma is None:
            raise DomainError("sigma", None, "is required for interface 'gaussian'",
                              "pass sigma=S (--sigma S) with S > 0")
        self.sigma = as_real("sigma", sigma, lo=0.0, lo_open=True,
                             fix="sigma is the standard deviation of the log-size noise (> 0)")
        self.d = math.log(self.kappa) / self.sigma

    @property
    def params(self) -> dict[str, float]:
        """The noise level: ``{'sigma': sigma}``."""
        return {"sigma": self.sigma}

    def observe(self, j_star: int, rng: np.random.Generator) -> np.ndarray:
        """Noisy log sizes ``W_j = ln s_j + sigma N(0, 1)`` (Proposition "Content-derived
        information is bounded for fixed size ratio").

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        numpy.ndarray
            The length-n float vector W.
        """
        w = self.sigma * rng.standard_normal(self.n)
        w[j_star] += math.log(self.kappa)
        return w

    def log_posterior(self, y: Any) -> np.ndarray:
        """``W ln(kappa) / sigma**2``: the posterior of J* is its softmax.

        Parameters
        ----------
        y : object
            The vector W, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """
        y = observation_iv(y, self.n).astype(float)
        return y * (math.log(self.kappa) / self.sigma**2)

    def default_rate_trials(self) -> int:
        """Monte Carlo trials of the default rate estimate.

        Returns
        -------
        int
            ``DEFAULT_RATE_TRIALS``, capped so that ``n * trials`` stays within
            ``RATE_WORK``, and at least 16.
        """
        return int(max(16, min(self.DEFAULT_RATE_TRIALS, self.RATE_WORK // self.n)))

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """Monte Carlo estimate of I(J*;W) (:func:`estimate_gaussian_rate`).

        Each trial costs O(n); beyond ``n = MC_RATE_MAX_N`` and without an
        explicit ``trials``, the value comes from theory's quadrature
        ``theory.content_rate_exact`` (accurate to 1e-10) instead.

        Parameters
        ----------
        trials : int, optional
            Monte Carlo trials; default :meth:`default_rate_trials`.
        rng : object, optional
            Seed or generator of the estimate.

        Returns
        -------
        RateEstimate
            The rate in bits with its standard error, or the exact quadrature
            value (``exact=True``).
        """
        # content_rate_exact covers every d (beyond d = 40 it returns log2 n, with
        # Fano's bound on the gap): the exact value wherever the O(n) Monte Carlo
        # would be slow or is refused.
        if trials is None and self.n > self.MC_RATE_MAX_N:
            bits = theory.content_rate_exact(self.n, self.kappa, self.sigma)
            return RateEstimate(bits=float(bits), se=0.0, trials=0, exact=True,
                                method="quadrature (theory.content_rate_exact)")
        t = self.default_rate_trials() if trials is None else trials
        return estimate_gaussian_rate(self.n, self.kappa, self.sigma, trials=t, rng=rng)

    def sample_bayes_z(self, size: int, streams: Streams) -> np.ndarray:
        """Z under W-descending order in O(1) per trial (O(kappa) for small kappa).

        tau - 1 is the number of light blocks observed above the bulky one:
        C ~ Binomial(n-1, p), p = P(N(0,1) > x), given the bulky block's
        standardised observation x ~ N(d, 1); Z = min(C, kappa). For
        kappa <= 16, Z is drawn by inverting its law directly (P(C = c) by
        the recursion c -> c+1, one uniform per trial), which is several
        times faster than a binomial draw; otherwise numpy's binomial.

        Parameters
        ----------
        size : int
            Number of trials.
        streams : sequence of numpy.random.Generator
            ``streams[0]`` draws x, ``streams[1]`` the count given x, each in
            trial order (so that drawing in sub-chunks gives the same values).

        Returns
        -------
        numpy.ndarray
            ``size`` int64 draws of Z = min(tau - 1, kappa), each in ``0..kappa``.
        """
        x = streams[0].standard_normal(size)
        x += self.d
        m, kappa = self.n - 1, self.kappa
        if kappa > self.WALK_MAX_KAPPA:
            return np.minimum(streams[1].binomial(m, special.ndtr(-x)), kappa)
        u = streams[1].random(size)
        # One normal tail per trial: the smaller of p and q is computed
        # directly (accurate when tiny), the other as its complement.
        small = special.ndtr(-np.abs(x))
        above = x >= 0
        p = np.where(above, small, 1.0 - small)
        q = np.where(above, 1.0 - small, small)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # P(C = 0) = q^m; it underflows only when E[C] > ~700, where
            # P(C < kappa <= 16) is below 1e-280 and Z = kappa anyway.
            pmf = np.exp(m * np.log(q))
            odds = p / q
            cum = pmf.copy()
            z = (u >= cum).astype(np.int64)
            for c in range(kappa - 1):
                pmf *= odds
                pmf *= (m - c) / (c + 1)
                cum += pmf
                z += u >= cum
        z[q == 0.0] = kappa  # p = 1: every light block is above
        return z

    def exact_bayes_mean_z(self) -> float:
        """E[Z] under W-descending order, by quadrature
        (:func:`gaussian_exact_mean_z`).

        Returns
        -------
        float
            E[Z] under the Bayes order.
        """
        return gaussian_exact_mean_z(self.n, self.kappa, self.sigma)

    def exact_bayes_z_pmf(self) -> np.ndarray:
        """The law of Z under W-descending order, from its exact tail
        P(Z >= z) (:func:`gaussian_exact_z_tail`).

        Returns
        -------
        numpy.ndarray
            Length ``kappa + 1`` array whose entry z is P(Z = z); it sums to 1.
        """
        tail = gaussian_exact_z_tail(self.n, self.kappa, self.sigma)
        ge = np.concatenate([[1.0], tail, [0.0]])
        return ge[:-1] - ge[1:]


class GibbsInterface:
    """The frontier interface: announces an order in which J*'s rank follows
    theory's Gibbs law ``p_r ∝ exp(-lam min(r-1, kappa))``; the other blocks
    fill the remaining positions uniformly at random.

    Given the announced order the posterior of J* is the rank law, so
    ``I(J*;Y) = log2 n - H(rank)`` exactly.

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l of the bulky block, ``2 <= kappa < n/2``.
    lam : float, optional
        The Gibbs law's parameter lambda >= 0.
    rate : float, optional
        The target rate in bits instead of ``lam`` (give exactly one of them).
    """

    name: ClassVar[str] = "gibbs"
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"lam": 0.7}

    def __init__(self, *, n: int, kappa: int, lam: Any = None, rate: Any = None) -> None:
        self.n, self.kappa = makeroom_iv(n, kappa)
        if (lam is None) == (rate is None):
            raise DomainError("lam", lam, "must be given exactly when rate is not "
                              "(exactly one of lam, rate)",
                              "pass lam=X (--lam X) or rate=R (--rate R)", context=f"rate={rate!r}")
        self.law = theory.gibbs_law(self.n, self.kappa, lam=lam, rate=rate)
        head = np.asarray(self.law.p_head, dtype=float)
        tail_total = (self.n - self.kappa) * self.law.p_tail
        probs = np.concatenate([head, [tail_total]])
        # Cumulative law of Z = min(rank-1, kappa); the last entry is 1 by
        # construction so round-off cannot push a draw past kappa.
        cdf = np.cumsum(probs / probs.sum())
        cdf[-1] = 1.0
        self._cdf = cdf
        self._z_pmf = probs / probs.sum()
        with np.errstate(divide="ignore"):
            self._log_head = np.log(head)
            self._log_tail = math.log(self.law.p_tail) if self.law.p_tail > 0 else -math.inf

    @property
    def params(self) -> dict[str, float]:
        """The Gibbs law's parameter and its rate: ``{'lam': ..., 'rate': ...}``."""
        return {"lam": float(self.law.lam), "rate": float(self.law.rate_bits)}

    def observe(self, j_star: int, rng: np.random.Generator) -> np.ndarray:
        """An announced order: J* at a rank drawn from the Gibbs law, the other
        blocks in the remaining positions uniformly at random.

        Parameters
        ----------
        j_star : int
            The bulky block's index J* (0-based).
        rng : numpy.random.Generator
            The trial's private randomness.

        Returns
        -------
        numpy.ndarray
            A permutation of ``0..n-1`` (the archiving order to follow).
        """
        z = int(np.searchsorted(self._cdf, rng.random(), side="right"))
        if z < self.kappa:
            rank = z + 1
        else:  # uniform over the n - kappa tail positions
            rank = self.kappa + 1 + int(rng.integers(self.n - self.kappa))
        others = np.delete(np.arange(self.n), j_star)
        others = rng.permutation(others)
        return np.insert(others, rank - 1, j_star)

    def log_posterior(self, y: Any) -> np.ndarray:
        """The Gibbs law's log-probabilities by position: the first kappa blocks of
        the announced order get the head's, the rest the tail's.

        Parameters
        ----------
        y : object
            An announced order, as :meth:`observe` returns it.

        Returns
        -------
        numpy.ndarray
            Length-n array equal, up to an additive constant, to
            ``log P(J* = j | Y = y)``; ``-inf`` marks an impossible block.
        """
        order = observation_iv(y, self.n, integer=True)
        if order.size and (order.min() < 0 or order.max() >= self.n):
            raise DomainError("y", y, f"must be an order of the block indices 0..{self.n - 1}",
                              "pass what the interface's observe() returned")
        lp = np.full(self.n, self._log_tail)
        lp[order[: self.kappa]] = self._log_head
        return lp

    def rate(self, *, trials: int | None = None, rng: Any = None) -> RateEstimate:
        """The exact rate ``log2 n - H(rank)`` of the Gibbs law.

        Parameters
        ----------
        trials : int, optional
            Ignored: the rate is exact.
        rng : object, optional
            Ignored: the rate is exact.

        Returns
        -------
        RateEstimate
            The rate in bits, with ``exact=True`` and ``se=0``.
        """
        return _exact_rate(self.law.rate_bits)

    def sample_bayes_z(self, size: int, streams: Streams) -> np.ndarray:
        """Z drawn from the Gibbs law's cumulative law of ``min(rank - 1, kappa)``,
        one uniform per trial from ``streams[0]``.

        Parameters
        ----------
        size : int
            Number of trials.
        streams : sequence of numpy.random.Generator
            Independent generators, one per random variable drawn in trial order
            (so that drawing in sub-chunks gives the same values).

        Returns
        -------
        numpy.ndarray
            ``size`` int64 draws of Z = min(tau - 1, kappa), each in ``0..kappa``.
        """
        z = np.searchsorted(self._cdf, streams[0].random(size), side="right")
        return np.minimum(z, self.kappa)

    def exact_bayes_mean_z(self) -> float:
        """E[Z] of the Gibbs law (the frontier value at this rate).

        Returns
        -------
        float
            E[Z] under the Bayes order.
        """
        return float(self.law.mean_z)

    def exact_bayes_z_pmf(self) -> np.ndarray:
        """The Gibbs law of Z (a copy).

        Returns
        -------
        numpy.ndarray
            Length ``kappa + 1`` array whose entry z is P(Z = z); it sums to 1.
        """
        return self._z_pmf.copy()


INTERFACES: dict[str, Callable[..., Interface]] = {
    LedgerInterface.name: LedgerInterface,
    GaussianInterface.name: GaussianInterface,
    BucketsInterface.name: BucketsInterface,
    BlindInterface.name: BlindInterface,
    GibbsInterface.name: GibbsInterface,
}


def make_interface(name: str, *, n: int, kappa: int, **params: Any) -> Interface:
    """Build the registered interface ``name`` on M_{n,L,l}.

    Parameters
    ----------
    name : str
        One of :data:`INTERFACES`: ``ledger``, ``gaussian`` (``sigma``),
        ``buckets`` (``buckets=M``), ``blind``, ``gibbs`` (``lam`` or ``rate``).
    n, kappa : int
        The instance, ``2 <= kappa < n``.
    **params
        The interface's parameters; parameters it does not take are rejected,
        ``None`` values are ignored.

    Returns
    -------
    Interface
    """
    if not isinstance(name, str) or name not in INTERFACES:
        raise UnknownNameError("interface", str(name), INTERFACES)
    given = {k: v for k, v in params.items() if v is not None}
    factory = INTERFACES[name]
    accepted = {p for p in inspect.signature(factory).parameters if p not in ("n", "kappa")}
    extra = sorted(set(given) - accepted)
    if extra:
        takes = ", ".join(sorted(accepted)) or "no parameters"
        raise DomainError(extra[0], given[extra[0]], f"is not a parameter of interface {name!r}",
                          f"interface {name!r} takes {takes}")
    return factory(n=n, kappa=kappa, **given)
