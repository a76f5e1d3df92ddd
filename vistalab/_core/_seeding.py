"""The one seed normaliser of vista-lab and its child-stream helper."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import DomainError

if TYPE_CHECKING:  # numpy is imported on first use: the CLI's start-up does not pay for it
    import numpy as np

__all__ = ["SeedLike", "seed_sequence", "child_seq", "child_rng", "plain_entropy"]

SeedLike = Any  # None | int | SeedSequence | Generator | BitGenerator (see seed_sequence)

_RULE = "must be None, an int seed, a SeedSequence or a Generator"


def seed_sequence(rng: SeedLike = None, *, default_entropy: int | None = None
                  ) -> np.random.SeedSequence:
    """Normalise the ``rng=`` argument of any vista-lab function into the root
    ``SeedSequence`` of one run.

    This is the one place that defines what ``rng=`` accepts, everywhere in
    vista-lab (theory has no randomness; sims, workspace probes, paper checks,
    figures and sweeps all call this):

    ``None``
        Fresh entropy from the operating system (or ``default_entropy`` when
        the caller has a reproducible default, as ``check-paper`` does).
    ``int`` >= 0
        ``SeedSequence(rng)``. ``rng=1`` and ``rng=np.random.SeedSequence(1)``
        give identical results.
    ``numpy.random.SeedSequence``
        Used as given (it is an immutable description of a seed, so passing the
        same one twice repeats the run).
    ``numpy.random.Generator`` (or a bare ``BitGenerator``)
        Treated as a *stream the caller owns*: one child is spawned from it with
        ``Generator.spawn(1)``, and the run uses that child. Hence
        ``rng=np.random.default_rng(1)`` gives the same result as
        ``rng=np.random.SeedSequence(1).spawn(1)[0]``, **not** the same as
        ``rng=1``, and a second call with the same Generator object gets the
        next child (independent draws), just as two calls drawing from that
        Generator directly would. This is deliberate: treating a Generator as
        its seed would make two calls with one Generator silently repeat each
        other's draws. Spawning does not consume any draws of the caller's
        Generator. A Generator whose bit generator carries no ``SeedSequence``
        is seeded from four 32-bit words drawn from it. The recorded entropy
        and spawn key (``seq.entropy``, ``seq.spawn_key``) reproduce the run:
        ``rng=np.random.SeedSequence(entropy, spawn_key=spawn_key)``.

    Anything else (a bool, a negative int, a float, a string) is refused with
    :class:`DomainError`.

    Parameters
    ----------
    rng : None, int, SeedSequence, Generator or BitGenerator
        See above.
    default_entropy : int, optional
        Entropy used when ``rng`` is None (None: fresh OS entropy).

    Returns
    -------
    numpy.random.SeedSequence
        The root of the run; derive sub-streams with :func:`child_seq`.

    Raises
    ------
    DomainError
        If ``rng`` is none of the accepted kinds.
    """
    import numpy as np

    if rng is None:
        return np.random.SeedSequence(default_entropy)
    if isinstance(rng, (bool, np.bool_)):
        raise DomainError("rng", rng, _RULE, "pass rng=<int seed>")
    if isinstance(rng, (int, np.integer)):
        if int(rng) < 0:
            raise DomainError("rng", rng, "must be a non-negative integer seed",
                              "pass a seed >= 0")
        return np.random.SeedSequence(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.BitGenerator):
        rng = np.random.Generator(rng)
    if isinstance(rng, np.random.Generator):
        seq = getattr(rng.bit_generator, "seed_seq", None)
        if isinstance(seq, np.random.SeedSequence):
            child = seq.spawn(1)[0]
            return child
        words = rng.integers(0, 2**32, size=4, dtype=np.uint64)
        return np.random.SeedSequence([int(w) for w in words])
    raise DomainError("rng", rng, _RULE, "pass rng=<int seed>")


def child_seq(seq: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of sub-stream ``key`` of the run rooted at ``seq``.

    It is the child ``seq.spawn`` would hand out at that position (for a one-
    element key), built directly so the root is never mutated and a result
    does not depend on how many other streams were drawn before it, on the
    chunk size or on the worker count.
    """
    import numpy as np

    return np.random.SeedSequence(
        seq.entropy, spawn_key=(*seq.spawn_key, *(int(k) for k in key)),
        pool_size=seq.pool_size,
    )


def child_rng(seq: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """A PCG64 ``Generator`` on sub-stream ``key`` (see :func:`child_seq`)."""
    import numpy as np

    return np.random.Generator(np.random.PCG64(child_seq(seq, *key)))


def plain_entropy(entropy: Any) -> int | list[int] | None:
    """A SeedSequence's entropy as JSON-ready data (int, list of ints or None)."""
    import numpy as np

    if entropy is None:
        return None
    if isinstance(entropy, (int, np.integer)):
        return int(entropy)
    return [int(e) for e in np.atleast_1d(np.asarray(entropy, dtype=object))]
