"""The make-room interfaces with discrete observations (Definition 3): the full size ledger,
the blind channel and size buckets, each with its exact rate, E[Z] and law of Z."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

from vistalab import theory

from ._gaussian import RateEstimate
from ._interfaces import (
    Streams,
    _exact_rate,
    blind_z_pmf,
    makeroom_iv,
    observation_iv,
    uniform_rank_z,
)

__all__ = ["LedgerInterface", "BlindInterface", "BucketsInterface"]


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
