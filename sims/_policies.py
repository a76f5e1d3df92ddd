"""Archive policies of the make-room instance: map an observation (and
private randomness) to the order in which blocks are archived."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from vistalab.theory import DomainError, UnknownNameError

from vistalab import theory

from ._interfaces import Interface, blind_z_pmf, uniform_rank_z

__all__ = ["Policy", "POLICIES", "make_policy", "BayesPolicy", "RandomPolicy", "FastSampler"]

FastSampler = Callable[[int, Sequence[np.random.Generator]], np.ndarray]


@runtime_checkable
class Policy(Protocol):
    """How the agent orders the archive.

    Every attribute and method below is required, except those marked optional.

    Attributes
    ----------
    name : str
        Registry name.

    Methods
    -------
    order(interface, y, rng) -> numpy.ndarray
        A permutation of ``0..n-1`` (int array), the archive order, built
        from the observation ``y`` and the private generator ``rng``.
    fast_sampler(interface) -> callable or None
        Optional (looked up with ``getattr``), like the two below.
        ``f(size, streams)`` drawing Z directly in O(1) per trial (see
        :class:`~sims.Interface`), or None when there is no fast path.
    exact_mean_z(interface) -> float or None
        Exact E[Z] of this policy on ``interface``.
    exact_z_pmf(interface) -> numpy.ndarray or None
        Exact law of Z (length kappa+1).
    """

    @property
    def name(self) -> str:
        """Registry name of the policy (a key of :data:`POLICIES`)."""

    def order(self, interface: Interface, y: Any, rng: np.random.Generator) -> np.ndarray:
        """The order in which blocks are archived, built from the observation and
        private randomness (Definition "Proprioceptive interface of rate I": a
        (Y, U)-measurable order).

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.
        y : object
            The trial's observation, as ``interface.observe`` returned it.
        rng : numpy.random.Generator
            The policy's private randomness U.

        Returns
        -------
        numpy.ndarray
            A permutation of ``0..n-1`` (int array): the archive order.
        """


class BayesPolicy:
    """Archive in decreasing posterior probability of being the bulky block,
    breaking ties uniformly at random.

    Sorting by the posterior maximises ``P(J* in first m)`` for every m at
    once, hence minimises ``E[Z] = sum_m P(Z >= m)`` (equation tailsum).
    """

    name: ClassVar[str] = "bayes"

    def order(self, interface: Interface, y: Any, rng: np.random.Generator) -> np.ndarray:
        """Blocks by decreasing ``interface.log_posterior(y)``, ties broken by a
        uniformly random permutation drawn from ``rng`` (a stable sort of it).

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.
        y : object
            The trial's observation, as ``interface.observe`` returned it.
        rng : numpy.random.Generator
            The policy's private randomness U.

        Returns
        -------
        numpy.ndarray
            A permutation of ``0..n-1`` (int array): the archive order.
        """
        _interface_iv(interface)
        _rng_iv(rng)
        lp = np.asarray(interface.log_posterior(y), dtype=float)
        perm = rng.permutation(interface.n)
        return perm[np.argsort(-lp[perm], kind="stable")]

    def fast_sampler(self, interface: Interface) -> FastSampler | None:
        """The interface's O(1)-per-trial sampler of Z under the Bayes order.

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        callable or None
            ``interface.sample_bayes_z`` (``f(size, streams)``), or None when the
            interface does not offer it.
        """
        _interface_iv(interface)
        f = getattr(interface, "sample_bayes_z", None)
        return f if callable(f) else None

    def exact_mean_z(self, interface: Interface) -> float | None:
        """Exact E[Z] of the Bayes order on ``interface``.

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        float or None
            ``interface.exact_bayes_mean_z()``, or None when the interface does not
            offer it.
        """
        _interface_iv(interface)
        f = getattr(interface, "exact_bayes_mean_z", None)
        return float(f()) if callable(f) else None

    def exact_z_pmf(self, interface: Interface) -> np.ndarray | None:
        """Exact law of Z of the Bayes order on ``interface``.

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        numpy.ndarray or None
            ``interface.exact_bayes_z_pmf()`` as a float array of length kappa+1,
            or None when the interface does not offer it.
        """
        _interface_iv(interface)
        f = getattr(interface, "exact_bayes_z_pmf", None)
        return np.asarray(f(), dtype=float) if callable(f) else None


def _interface_iv(interface: Any) -> Any:
    """``interface`` if it is a sims :class:`Interface` (a policy reads its ``n``,
    ``kappa`` and posterior), else a :class:`DomainError` naming it."""
    if not isinstance(interface, Interface) or isinstance(interface, type):
        raise DomainError("interface", interface, "must be a sims Interface (n, kappa, "
                          "observe, log_posterior)", "pass e.g. make_interface('ledger', "
                          "n=64, kappa=4)")
    return interface


def _rng_iv(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise DomainError("rng", rng, "must be a numpy Generator",
                          "pass e.g. numpy.random.default_rng(0)")
    return rng


class RandomPolicy:
    """Ignore the observation: archive in a uniformly random order."""

    name: ClassVar[str] = "random"

    def order(self, interface: Interface, y: Any, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random permutation, whatever the observation.

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.
        y : object
            The trial's observation (ignored).
        rng : numpy.random.Generator
            The policy's private randomness U.

        Returns
        -------
        numpy.ndarray
            A permutation of ``0..n-1`` (int array): the archive order.
        """
        _interface_iv(interface)
        _rng_iv(rng)
        return rng.permutation(interface.n)

    def fast_sampler(self, interface: Interface) -> FastSampler | None:
        """A sampler of Z for a uniformly random rank (:func:`uniform_rank_z`).

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        callable
            ``f(size, streams)`` drawing ``size`` values of Z from ``streams[0]``,
            one uniform per trial.
        """
        _interface_iv(interface)
        n, kappa = interface.n, interface.kappa

        def sample(size: int, streams: Sequence[np.random.Generator]) -> np.ndarray:
            return uniform_rank_z(n, kappa, size, streams[0])

        return sample

    def exact_mean_z(self, interface: Interface) -> float | None:
        """Exact E[Z] for a uniformly random order
        (:func:`vistalab.theory.blind_mean_z`).

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        float
            E[Z], the same for every interface of the instance.
        """
        _interface_iv(interface)
        return theory.blind_mean_z(interface.n, interface.kappa)

    def exact_z_pmf(self, interface: Interface) -> np.ndarray | None:
        """Exact law of Z for a uniformly random order (:func:`blind_z_pmf`).

        Parameters
        ----------
        interface : Interface
            The observation interface on the make-room instance.

        Returns
        -------
        numpy.ndarray
            P(Z = z) for z in ``0..kappa``: 1/n each below kappa, the rest at kappa.
        """
        _interface_iv(interface)
        return blind_z_pmf(interface.n, interface.kappa)


POLICIES: dict[str, Callable[[], Policy]] = {
    BayesPolicy.name: BayesPolicy,
    RandomPolicy.name: RandomPolicy,
}


def make_policy(name: str | None = None) -> Policy:
    """Build the registered policy ``name`` (default ``"bayes"``).

    Parameters
    ----------
    name : str, optional
        A key of :data:`POLICIES`; None gives ``"bayes"``.

    Returns
    -------
    Policy

    Raises
    ------
    UnknownNameError
        If no policy has that name (with the closest names)."""
    key = "bayes" if name is None else name
    if not isinstance(key, str) or key not in POLICIES:
        raise UnknownNameError("policy", str(key), POLICIES)
    return POLICIES[key]()
