"""The make-room interfaces with noisy continuous observations: Proposition 2's Gaussian
content channel (rate by Monte Carlo) and the Gibbs channel, with their Bayes-order samplers."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from scipy import special
from vistalab.theory import DomainError
from vistalab.theory._validate import as_real

from vistalab import theory

from ._gaussian import (
    RateEstimate,
    estimate_gaussian_rate,
    gaussian_exact_mean_z,
    gaussian_exact_z_tail,
)
from ._interfaces import Streams, _exact_rate, makeroom_iv, observation_iv

__all__ = ["GaussianInterface", "GibbsInterface"]


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
