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
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

__all__ = ["SeedInfo", "root_seed", "stream", "block_sizes", "run_blocks", "workers_iv",
           "trials_iv", "MAX_TRIALS", "MAX_ENGINE_TRIALS", "MAX_WORKERS"]

# Sizes are bounded before any work starts (issue 15): 1e9 array trials is
# minutes of vectorised work; 1e6 engine trials (each a real workspace) is
# hours; more threads than this only add scheduling overhead.
MAX_TRIALS = 10**9
MAX_ENGINE_TRIALS = 10**6
MAX_WORKERS = 1024

T = TypeVar("T")

SeedLike = Any  # None | int | SeedSequence | BitGenerator | Generator


class SeedInfo:
    """The root SeedSequence of one run and what to record about it."""

    __slots__ = ("seq",)

    def __init__(self, seq: np.random.SeedSequence) -> None:
        self.seq = seq

    @property
    def entropy(self) -> int | list[int]:
        ent = self.seq.entropy
        if isinstance(ent, (int, np.integer)):
            return int(ent)
        return [int(e) for e in np.atleast_1d(np.asarray(ent, dtype=object))]

    @property
    def spawn_key(self) -> tuple[int, ...]:
        return tuple(int(k) for k in self.seq.spawn_key)


def root_seed(rng: SeedLike) -> SeedInfo:
    """Normalise ``rng`` (None, int, SeedSequence, BitGenerator or Generator)
    into the root SeedSequence of one run.

    A Generator is consumed (one child spawned from it) so two runs given the
    same Generator object get different, reproducible streams.
    """
    if isinstance(rng, (bool, np.bool_)):
        raise DomainError("rng", rng, "must be None, an int seed, a SeedSequence or a Generator",
                          "pass rng=<int seed>")
    if isinstance(rng, (int, np.integer)) and int(rng) < 0:
        raise DomainError("rng", rng, "must be a non-negative integer seed",
                          "pass a seed >= 0")
    if isinstance(rng, np.random.Generator):
        gen = rng.spawn(1)[0] if _has_seed_seq(rng) else np.random.default_rng(
            rng.integers(0, 2**32, size=4, dtype=np.uint64).tolist())
    else:
        try:
            gen = np.random.default_rng(rng)
        except (TypeError, ValueError) as exc:
            raise DomainError("rng", rng, "must be None, an int seed, a SeedSequence or a "
                              "Generator", "pass rng=<int seed>") from exc
        if not _has_seed_seq(gen):
            gen = np.random.default_rng(gen.integers(0, 2**32, size=4, dtype=np.uint64).tolist())
    seq = gen.bit_generator.seed_seq
    assert isinstance(seq, np.random.SeedSequence)
    return SeedInfo(seq)


def _has_seed_seq(gen: np.random.Generator) -> bool:
    return isinstance(getattr(gen.bit_generator, "seed_seq", None), np.random.SeedSequence)


def stream(seed: SeedInfo, *key: int) -> np.random.Generator:
    """Generator for the sub-stream ``key`` of the run.

    It is the same child that ``SeedSequence.spawn`` would hand out at that
    position, built directly so the root sequence is never mutated.
    """
    seq = seed.seq
    child = np.random.SeedSequence(
        seq.entropy, spawn_key=tuple(seq.spawn_key) + tuple(int(k) for k in key),
        pool_size=seq.pool_size,
    )
    return np.random.Generator(np.random.PCG64(child))


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
