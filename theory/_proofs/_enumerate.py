"""Exact finite models used by the enumeration checks: the make-room process,
balanced bucket ledgers, and small list-decoding and recovery instances.

Everything here is exact (integers and Fractions) unless a docstring says
otherwise; these are independent re-derivations, not calls into theory/.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "MakeRoomRun",
    "simulate_makeroom",
    "bucket_sizes",
    "bucket_mean_z",
    "set_partitions",
    "entropy_bits",
    "mutual_info_bits",
    "lossy_recovery_best_success",
    "RecoveringRun",
    "recovering_method",
]


@dataclass(frozen=True)
class MakeRoomRun:
    """One run of the make-room process.

    Attributes
    ----------
    archived : tuple[int, ...]
        Blocks archived, in order, until overflow cleared.
    flags : tuple[str, ...]
        Flag observed after each archive ("over" or "clear").
    z : int
        Number of load-bearing blocks archived.
    tau : int
        1-based position of the bulky block in ``order`` (len(order) + 1 when
        the order does not contain it).
    """

    archived: tuple[int, ...]
    flags: tuple[str, ...]
    z: int
    tau: int


def simulate_makeroom(order: Sequence[int], j_star: int, kappa: int) -> MakeRoomRun:
    """Archive blocks of ``order`` until the freed size reaches L = kappa * l.

    Sizes are in units of l: the bulky block ``j_star`` has size kappa, every
    other block size 1; the prompt is over budget by kappa units.
    """
    freed = 0
    archived: list[int] = []
    flags: list[str] = []
    for b in order:
        archived.append(b)
        freed += kappa if b == j_star else 1
        flags.append("clear" if freed >= kappa else "over")
        if freed >= kappa:
            break
    seq = list(order)
    # A partial order (a batch refined into a sequence) may omit J*.
    tau = seq.index(j_star) + 1 if j_star in seq else len(seq) + 1
    z = sum(1 for b in archived if b != j_star)
    return MakeRoomRun(tuple(archived), tuple(flags), z, tau)


def bucket_sizes(n: int, m: int) -> list[int]:
    """Sizes of a balanced partition of n blocks into m buckets."""
    q, r = divmod(n, m)
    return [q + 1] * r + [q] * (m - r)


def bucket_mean_z(n: int, kappa: int, m: int) -> Fraction:
    """Exact E[Z] for the balanced m-bucket ledger with uniform random probing
    inside the reported bucket (J* uniform on n blocks)."""
    total = 0
    sizes = bucket_sizes(n, m)
    for b in set(sizes):
        # P(bucket) = b/n and the bulky block sits at a uniform position P in it,
        # so the bucket contributes (b/n) * (1/b) * sum_P min(P-1, kappa).
        total += sizes.count(b) * sum(min(p - 1, kappa) for p in range(1, b + 1))
    return Fraction(total, n)


def set_partitions(items: Sequence[int]) -> Iterator[list[list[int]]]:
    """All set partitions of ``items`` (Bell-number many)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]


def entropy_bits(p: np.ndarray) -> float:
    """Shannon entropy (bits) of a pmf given as an array (zeros allowed)."""
    q = np.asarray(p, dtype=float).ravel()
    q = q[q > 0]
    return float(-(q * np.log2(q)).sum())


def mutual_info_bits(joint: np.ndarray) -> float:
    """I(A;B) in bits of a 2-d joint pmf."""
    j = np.asarray(joint, dtype=float)
    return entropy_bits(j.sum(1)) + entropy_bits(j.sum(0)) - entropy_bits(j)


def lossy_recovery_best_success(n_blocks: int, k: int, n_states: int) -> Fraction:
    """Best success probability over every deterministic state map R = f(X_1..X_N)
    with ``n_states`` values, and the best decoder g(R, i), in the recovery task
    with N = n_blocks independent uniform k-bit blocks and a uniform query i.

    Exhaustive over all n_states^(2^(N k)) maps; only tiny instances are feasible.
    """
    n_inputs = 2 ** (n_blocks * k)
    if n_states ** n_inputs > 2**20:
        raise ValueError("instance too large for exhaustive search")
    # Value of block i for each joint input x (blocks are consecutive k-bit fields).
    block_val = np.array(
        [[(x >> (k * i)) & ((1 << k) - 1) for x in range(n_inputs)] for i in range(n_blocks)]
    )
    # All maps at once: row f holds f(x) for every input x (base-n_states digits of f).
    codes = np.arange(n_states**n_inputs, dtype=np.int64)[:, None]
    maps = (codes // (n_states ** np.arange(n_inputs, dtype=np.int64))[None, :]) % n_states
    hits = np.zeros(len(maps), dtype=np.int64)
    for i in range(n_blocks):
        onehot = np.eye(1 << k, dtype=np.int64)[block_val[i]]  # inputs x values
        per_state = np.stack([(maps == s).astype(np.int64) @ onehot for s in range(n_states)])
        # The best decoder outputs, for each state, the most frequent value.
        hits += per_state.max(axis=2).sum(axis=0)
    best = int(hits.max())
    return Fraction(best, n_blocks * n_inputs)


def log2_ceil_ratio(n: int, d: Fraction) -> float:
    """log2(ceil(n / d)) for a positive rational d."""
    return math.log2(math.ceil(Fraction(n) / d))


@dataclass(frozen=True)
class RecoveringRun:
    """One run of the recovering method on T_{N,k} (paper App. B).

    Attributes
    ----------
    output : int
        The block value the method emits after the reveal.
    peak_prompt_bits : int
        Largest prompt size reached: the N handles before the reveal, the
        handles plus the recovered block after it.
    """

    output: int
    peak_prompt_bits: int


def recovering_method(blocks: Sequence[int], k: int, query: int) -> RecoveringRun:
    """The recovering method: archive every k-bit block as an exact transcript
    in a store keyed by its handle, keep only the handles in the prompt, and
    after the reveal read payload ``query`` back (checksum verified).

    A handle is the block index written in ceil(log2 N) bits, so the prompt
    holds N ceil(log2 N) bits before the reveal.
    """
    import hashlib

    n = len(blocks)
    width = max(1, math.ceil(math.log2(n))) if n > 1 else 0
    store: dict[str, tuple[bytes, str]] = {}
    handles = []
    for i, x in enumerate(blocks):
        handle = format(i, f"0{width}b") if width else ""
        payload = x.to_bytes(max(1, (k + 7) // 8), "big")
        store[handle] = (payload, hashlib.sha256(payload).hexdigest())
        handles.append(handle)
    prompt_bits = sum(len(h) for h in handles)
    payload, digest = store[handles[query]]
    if hashlib.sha256(payload).hexdigest() != digest:
        raise ValueError("payload checksum mismatch")
    recovered = int.from_bytes(payload, "big")
    return RecoveringRun(recovered, prompt_bits + k)
