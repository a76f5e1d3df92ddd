"""Observation interfaces of the make-room instance M_{n,L,l} (Definition 3):
what the agent sees before archiving, and how much it says about J*.

Sizes are in units of l (load-bearing blocks have size 1, the bulky block
size kappa). Every interface offers the literal per-trial observation and its
posterior; the built-in ones also offer an O(1)-per-trial sampler of Z under
the Bayes order and the exact E[Z] and law of Z. The interface is declared here
with its argument checks and the laws several share; the built-in ones live in
:mod:`._interfaces_discrete` and :mod:`._interfaces_continuous`, their registry in
:mod:`._interfaces_registry`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

from ._gaussian import RateEstimate

__all__ = ["Interface", "makeroom_iv", "uniform_rank_z", "blind_z_pmf"]

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
