"""Seed handling shared by every simulator: one root SeedSequence per run,
fixed trial blocks with their own spawned streams, optional worker threads.

Results depend only on (root seed, trial count, problem parameters): the
blocks are fixed in advance, each block (and each random variable inside a
block) has its own stream, and block results are combined in block order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from vistalab.theory._validate import as_int

from vistalab._core import DomainError, child_rng, child_seq, plain_entropy, seed_sequence

__all__ = [
    "SeedInfo", "root_seed", "stream", "stream_seq", "block_sizes", "run_blocks", "workers_iv",
    "trials_iv", "MAX_TRIALS", "MAX_ENGINE_TRIALS", "MAX_WORKERS",
]

# Sizes are bounded before any work starts: 1e9 array trials is
# minutes of vectorised work; 1e6 engine trials (each a real workspace) is
# hours; more threads than this only add scheduling overhead.
MAX_TRIALS = 10**9
MAX_ENGINE_TRIALS = 10**6
MAX_WORKERS = 1024

T = TypeVar("T")

SeedLike = Any  # what ``rng=`` accepts: see vistalab._core.seed_sequence


class SeedInfo:
    """The root SeedSequence of one run and what to record about it."""

    __slots__ = ("seq",)

    def __init__(self, seq: np.random.SeedSequence) -> None:
        self.seq = seq

    @property
    def entropy(self) -> int | list[int]:
        ent = plain_entropy(self.seq.entropy)
        assert ent is not None  # a root built by seed_sequence always has entropy
        return ent

    @property
    def spawn_key(self) -> tuple[int, ...]:
        return tuple(int(k) for k in self.seq.spawn_key)


def root_seed(rng: SeedLike) -> SeedInfo:
    """Normalise ``rng`` into the root SeedSequence of one run.

    What ``rng=`` accepts (None, int, SeedSequence, Generator) and how a
    Generator is treated (one child is spawned from it) is documented once, in
    :func:`vistalab._core.seed_sequence`.
    """
    return SeedInfo(seed_sequence(rng))


def stream(seed: SeedInfo, *key: int) -> np.random.Generator:
    """Generator for the sub-stream ``key`` of the run.

    It is the same child that ``SeedSequence.spawn`` would hand out at that
    position, built directly so the root sequence is never mutated
    (:func:`vistalab._core.child_rng`).
    """
    return child_rng(seed.seq, *key)


def stream_seq(seed: SeedInfo, *key: int) -> np.random.SeedSequence:
    """The SeedSequence of sub-stream ``key`` (to seed another simulator or generator)."""
    return child_seq(seed.seq, *key)


def block_sizes(trials: int, block: int) -> list[int]:
    """Split ``trials`` into fixed blocks of ``block`` trials (last one shorter)."""
    full, rest = divmod(trials, block)
    return [block] * full + ([rest] if rest else [])


def workers_iv(workers: Any) -> int:
    count = as_int("workers", workers, lo=1, fix="use workers=1 for a single thread")
    if count > MAX_WORKERS:
        raise DomainError("workers", workers, f"must be at most {MAX_WORKERS}",
                          "threads beyond the core count only add overhead")
    return count


def trials_iv(value: Any, *, name: str = "trials", lo: int = 1,
              hi: int = MAX_TRIALS, fix: str = "run at least one trial") -> int:
    """A Monte Carlo trial count with ``lo <= value <= hi`` (the bound is stated)."""
    count = as_int(name, value, lo=lo, fix=fix)
    if count > hi:
        raise DomainError(name, value, f"must be at most {hi:.0e}",
                          "sizes are bounded before work starts so the run ends and fits in "
                          "memory; split the work into several seeded runs")
    return count


def run_blocks(
    fn: Callable[[int, int], T], sizes: Sequence[int], *, workers: int = 1
) -> list[T]:
    """``[fn(i, sizes[i]) for i ...]``, optionally on a thread pool.

    numpy releases the GIL inside its bulk random and ufunc loops, so threads
    give real parallelism here; the output order (hence every combined
    statistic) is the block order whatever the scheduling.
    """
    if workers <= 1 or len(sizes) <= 1:
        return [fn(i, s) for i, s in enumerate(sizes)]
    with ThreadPoolExecutor(max_workers=min(workers, len(sizes))) as pool:
        return list(pool.map(fn, range(len(sizes)), sizes))


def sub_chunks(size: int, chunk: int) -> list[int]:
    """Lengths of the sub-chunks one block is drawn in (memory only)."""
    chunk = max(1, chunk)
    n = math.ceil(size / chunk)
    return [min(chunk, size - i * chunk) for i in range(n)]
