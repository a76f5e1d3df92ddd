"""Monte Carlo of the recovery task T_{N,k} (Proposition 1): real random
k-bit blocks, a strategy's in-prompt state R, a revealed index, a guess
compared bit for bit.

Blocks are packed bits (``ceil(k/8)`` bytes, most significant bit first,
unused trailing bits zero), trials are vectorised inside fixed blocks of
trials, and every block has its own spawned random streams.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from vistalab.theory import DomainError, HandleCostModel, UnknownNameError
from vistalab.theory._validate import as_int, as_real

from vistalab import theory

from ._seeding import (
    SeedInfo,
    block_sizes,
    root_seed,
    run_blocks,
    stream,
    trials_iv,
    workers_iv,
)
from ._stats import clopper_pearson, confidence_iv

__all__ = [
    "Strategy",
    "StrategyPlan",
    "Archive",
    "RecoveryResult",
    "STRATEGIES",
    "make_strategy",
    "simulate_recovery",
    "KeepBlocks",
    "KeepBits",
    "RandomSubset",
    "Recover",
]

# Evidence bits per trial block (the unit of reproducibility): 2**26 bits is
# 8 MB packed; strategies that unpack bits may hold 8x that transiently.
_BLOCK_BITS = 1 << 26
_MAX_TRIAL_BLOCK = 1 << 14
# The consistency check asks whether the data exclude the bound at this level,
# stricter than the reported interval so a strategy sitting at the bound is
# not flagged by chance.
_CHECK_CONFIDENCE = 1.0 - 1e-4


@dataclass(frozen=True)
class StrategyPlan:
    """What a strategy will do on one instance, declared before any trial.

    Attributes
    ----------
    entropy_bits : float
        Declared ``H(R)`` of the pre-reveal in-prompt state. For a recovering
        strategy, the prompt bits used before the reveal (instruction plus
        handles).
    exact_success : float or None
        Closed-form success probability, or None if the strategy has none.
    feasible : bool
        For a recovering strategy: instruction, handles and one recovered
        block fit in the budget. Always True for non-recovering strategies.
    details : Mapping[str, float]
        Strategy-specific sizes (kept blocks, kept bits, handle bits...).
    """

    entropy_bits: float
    exact_success: float | None
    feasible: bool = True
    details: Mapping[str, float] = field(default_factory=dict)


class Archive:
    """Lossless external store of one trial block's evidence blocks.

    ``write`` keeps an exact copy and returns one integer handle per block;
    ``read`` returns the stored payloads byte for byte.
    """

    def __init__(self) -> None:
        self._store: np.ndarray | None = None

    def write(self, blocks: np.ndarray) -> np.ndarray:
        """Store an exact copy of every trial's blocks.

        Parameters
        ----------
        blocks : numpy.ndarray
            uint8 ``(T, N, nbytes)``: T trials of N packed blocks. A later write
            replaces the earlier one.

        Returns
        -------
        numpy.ndarray
            int64 ``(T, N)`` handles, one per block (its row in the store).
        """
        if not isinstance(blocks, np.ndarray) or blocks.ndim != 3:
            raise DomainError("blocks", blocks, "must be a 3-d numpy array (trials, blocks, "
                              "bits)", "pass the trial blocks a strategy encodes")
        trials, n_blocks, _ = blocks.shape
        self._store = blocks.reshape(trials * n_blocks, -1).copy()
        return np.arange(trials * n_blocks, dtype=np.int64).reshape(trials, n_blocks)

    def read(self, handles: np.ndarray) -> np.ndarray:
        """The stored payloads of ``handles``, byte for byte.

        Parameters
        ----------
        handles : numpy.ndarray
            Integer handles returned by :meth:`write`.

        Returns
        -------
        numpy.ndarray
            uint8 payloads, shape ``handles.shape + (nbytes,)``.

        Raises
        ------
        RuntimeError
            If nothing has been written yet.
        """
        if self._store is None:
            raise DomainError("handles", handles, "must be handles this archive's write "
                              "returned (nothing was written yet)", "call write(blocks) first")
        try:
            idx = np.asarray(handles, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            idx = None
        if idx is None or idx.size == 0 or idx.min() < 0 or idx.max() >= len(self._store):
            raise DomainError("handles", handles, f"must be integer handles in [0, "
                              f"{len(self._store)}) (those write returned)",
                              "pass the handles write returned")
        return self._store[idx]


@runtime_checkable
class Strategy(Protocol):
    """A way of answering T_{N,k}. Every member below is required.

    Attributes
    ----------
    name : str
        Registry name.
    recovering : bool
        True if the strategy may read the archive after the reveal.

    Methods
    -------
    plan(N, k, budget, cost) -> StrategyPlan
        Declares H(R) (checked against the budget for non-recovering
        strategies), the exact success probability if known, feasibility.
    encode(blocks, plan, rng, archive) -> state
        ``blocks`` is uint8 ``(T, N, ceil(k/8))``. Non-recovering strategies
        get ``archive=None`` and must return the in-prompt state as packed
        bits, uint8 ``(T, nbytes)`` using at most ``floor(budget)`` bits (the
        simulator checks, so R takes at most 2**budget values and
        ``H(R) <= budget``). Recovering strategies write to ``archive`` and
        return their handle table.
    decode(state, index, plan, rng, archive) -> guesses
        ``index`` is int ``(T,)``; returns uint8 ``(T, ceil(k/8))``.
        ``archive`` is None for non-recovering strategies.
    """

    @property
    def name(self) -> str:
        """Registry name of the strategy (a key of :data:`STRATEGIES`)."""

    @property
    def recovering(self) -> bool:
        """True if the strategy may read the archive after the reveal (Proposition
        "Recovery is necessary under budget pressure": a recovering method).
        """

    def plan(self, N: int, k: int, budget: float, cost: HandleCostModel) -> StrategyPlan:
        """Declare H(R), the exact success probability if known, and feasibility;
        the simulator checks H(R) against the budget of a non-recovering strategy.

        Parameters
        ----------
        N : int
            Evidence blocks in the history of T_{N,k}.
        k : int
            Bits per block.
        budget : float
            The prompt budget B in bits.
        cost : HandleCostModel
            The handle-cost model (sizes of the instruction and of one handle).

        Returns
        -------
        StrategyPlan
            H(R) in bits, the exact success probability and feasibility.
        """

    def encode(
        self, blocks: np.ndarray, plan: StrategyPlan, rng: np.random.Generator,
        archive: Archive | None,
    ) -> np.ndarray:
        """The state kept before the reveal: packed bits within ``floor(budget)``
        bits for a non-recovering strategy, the handle table for a recovering one.

        Parameters
        ----------
        blocks : numpy.ndarray
            The evidence blocks, uint8 ``(T, N, ceil(k/8))``, packed bits.
        plan : StrategyPlan
            The plan :meth:`plan` returned for these parameters.
        rng : numpy.random.Generator
            The strategy's randomness.
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The in-prompt state R, or the handle table.
        """

    def decode(
        self, state: np.ndarray, index: np.ndarray, plan: StrategyPlan,
        rng: np.random.Generator, archive: Archive | None,
    ) -> np.ndarray:
        """Guess each trial's revealed block from the state (and the archive, for a
        recovering strategy).

        Parameters
        ----------
        state : numpy.ndarray
            What :meth:`encode` returned.
        index : numpy.ndarray
            The revealed target block of each trial, int ``(T,)``.
        plan : StrategyPlan
            The plan :meth:`plan` returned.
        rng : numpy.random.Generator
            The strategy's randomness (for guessed bits).
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The guessed target blocks, uint8 ``(T, ceil(k/8))``.
        """


# ---------------------------------------------------------------------------
# Bit helpers
# ---------------------------------------------------------------------------


def _kbytes(k: int) -> int:
    return (k + 7) // 8


def _tail_mask(k: int) -> int:
    """Mask of the used bits of the last byte of a k-bit block."""
    r = k % 8
    return 0xFF if r == 0 else (0xFF << (8 - r)) & 0xFF


def _random_blocks(gen: np.random.Generator, shape: tuple[int, ...], k: int) -> np.ndarray:
    """Uniform k-bit blocks, packed; one raw 64-bit draw per 8 bytes."""
    kb = _kbytes(k)
    words = (kb + 7) // 8
    raw = gen.bit_generator.random_raw(int(np.prod(shape)) * words)
    out = np.asarray(raw, dtype=np.uint64).view(np.uint8).reshape(*shape, words * 8)[..., :kb]
    out = np.ascontiguousarray(out)
    out[..., -1] &= np.uint8(_tail_mask(k))
    return out


def _random_guess(rng: np.random.Generator, trials: int, k: int) -> np.ndarray:
    return _random_blocks(rng, (trials,), k)


def _prefix(blocks: np.ndarray, bits: int) -> np.ndarray:
    """The first ``bits`` bits of each packed block, packed (zero tail)."""
    nb = _kbytes(bits)
    out = np.ascontiguousarray(blocks[..., :nb])
    if nb:
        out[..., -1] &= np.uint8(_tail_mask(bits))
    return out


def _pack_fields(fields: np.ndarray, width: int) -> np.ndarray:
    """Concatenate F packed ``width``-bit fields per row, (T, F, ceil(width/8))
    -> (T, ceil(F*width/8)), without padding between fields."""
    trials = fields.shape[0]
    if width % 8 == 0:
        return fields.reshape(trials, -1).copy()
    bits = np.unpackbits(fields, axis=2, count=width)
    return np.packbits(bits.reshape(trials, -1), axis=1)


def _read_field(state: np.ndarray, index: np.ndarray, width: int) -> np.ndarray:
    """Field ``index[t]`` (``width`` bits at bit offset ``index*width``) of
    each row of a packed state, as packed bytes (T, ceil(width/8))."""
    return _read_bits(state, index.astype(np.int64) * width, width)


def _read_bits(state: np.ndarray, start_bit: np.ndarray, nbits: int) -> np.ndarray:
    """``nbits`` bits of row t of a packed state from bit ``start_bit[t]`` on,
    packed (T, ceil(nbits/8)) with a zero tail.

    Byte arithmetic on a window of ceil(nbits/8)+1 bytes per row (each output
    byte is two neighbouring state bytes shifted by the row's bit offset),
    never unpacking to one byte per bit.
    """
    trials = start_bit.shape[0]
    nb = _kbytes(nbits)
    first = start_bit // 8
    shift = (start_bit % 8).astype(np.uint16)[:, None]
    padded = np.concatenate([state, np.zeros((trials, nb + 1), dtype=np.uint8)], axis=1)
    window = padded[np.arange(trials)[:, None], first[:, None] + np.arange(nb + 1)]
    pair = (window[:, :-1].astype(np.uint16) << 8) | window[:, 1:]
    out = ((pair << shift) >> 8).astype(np.uint8)
    if nb:
        out[:, -1] &= np.uint8(_tail_mask(nbits))
    return out


def _or_bits(out: np.ndarray, src: np.ndarray, offset: int) -> None:
    """OR the packed rows ``src`` (T, nb), zero tail, into ``out`` (T, M) from
    bit ``offset`` on. Bits of ``src`` that would land past byte M must be zero
    (the caller sizes ``out`` for the bits it places)."""
    q, r = divmod(offset, 8)
    room = out.shape[1] - q
    if r == 0:
        width = min(src.shape[1], room)
        out[:, q:q + width] |= src[:, :width]
        return
    width = min(src.shape[1], room)
    out[:, q:q + width] |= src[:, :width] >> np.uint8(r)
    spill = min(src.shape[1], room - 1)
    if spill > 0:
        out[:, q + 1:q + 1 + spill] |= src[:, :spill] << np.uint8(8 - r)


def _pack_index(values: np.ndarray, bits: int) -> np.ndarray:
    """Non-negative integers < 2**bits (bits <= 64) as packed ``bits``-bit
    fields, most significant bit first, shape (..., ceil(bits/8))."""
    wide = values.astype(np.uint64) << np.uint64(64 - bits)
    return wide.astype(">u8").view(np.uint8).reshape(*values.shape, 8)[..., :_kbytes(bits)]


# Up to this many fields a state is assembled by byte shifts, one field at a
# time; beyond it by unpacking to bits (fewer Python-level steps).
_SHIFT_PACK_FIELDS = 512


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


def _guess_success(kept_fraction: float, k: int) -> float:
    return kept_fraction + (1.0 - kept_fraction) * 2.0 ** (-k)


@dataclass(frozen=True)
class KeepBlocks:
    """Keep the first ``floor(B/k)`` blocks verbatim; guess any other block."""

    name: ClassVar[str] = "keep-blocks"
    recovering: ClassVar[bool] = False
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def plan(self, N: int, k: int, budget: float, cost: HandleCostModel) -> StrategyPlan:
        """Keep ``s = min(N, floor(B/k))`` blocks: H(R) = s k, success
        ``s/N + (1 - s/N) 2**-k``.

        Parameters
        ----------
        N : int
            Evidence blocks in the history of T_{N,k}.
        k : int
            Bits per block.
        budget : float
            The prompt budget B in bits.
        cost : HandleCostModel
            The handle-cost model (sizes of the instruction and of one handle).

        Returns
        -------
        StrategyPlan
            H(R) in bits, the exact success probability and feasibility.
        """
        N, k, budget, cost = _plan_iv(N, k, budget, cost)
        s = min(N, int(budget // k))
        return StrategyPlan(
            entropy_bits=float(s * k), exact_success=_guess_success(s / N, k),
            details={"kept_blocks": s, "k": k},
        )

    def encode(self, blocks: np.ndarray, plan: StrategyPlan, rng: np.random.Generator,
               archive: Archive | None) -> np.ndarray:
        """The first s blocks verbatim, concatenated without padding.

        Parameters
        ----------
        blocks : numpy.ndarray
            The evidence blocks, uint8 ``(T, N, ceil(k/8))``, packed bits.
        plan : StrategyPlan
            The plan :meth:`plan` returned for these parameters.
        rng : numpy.random.Generator
            The strategy's randomness.
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The in-prompt state R as packed bits, uint8 ``(T, nbytes)``.
        """
        s, k = int(plan.details["kept_blocks"]), int(plan.details["k"])
        return _pack_fields(blocks[:, :s, :], k)

    def decode(self, state: np.ndarray, index: np.ndarray, plan: StrategyPlan,
               rng: np.random.Generator, archive: Archive | None) -> np.ndarray:
        """The kept block when the index is below s, a uniformly random guess
        otherwise.

        Parameters
        ----------
        state : numpy.ndarray
            What :meth:`encode` returned.
        index : numpy.ndarray
            The revealed target block of each trial, int ``(T,)``.
        plan : StrategyPlan
            The plan :meth:`plan` returned.
        rng : numpy.random.Generator
            The strategy's randomness (for guessed bits).
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The guessed target blocks, uint8 ``(T, ceil(k/8))``.
        """
        s, k = int(plan.details["kept_blocks"]), int(plan.details["k"])
        guess = _random_guess(rng, index.shape[0], k)
        hit = index < s
        if np.any(hit):
            guess[hit] = _read_field(state[hit], index[hit], k)
        return guess


@dataclass(frozen=True)
class KeepBits:
    """Keep the first ``floor(B/N)`` bits of every block; guess the rest."""

    name: ClassVar[str] = "keep-bits"
    recovering: ClassVar[bool] = False
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def plan(self, N: int, k: int, budget: float, cost: HandleCostModel) -> StrategyPlan:
        """Keep ``b = min(k, floor(B/N))`` bits of every block: H(R) = N b,
        success ``2**-(k - b)``.

        Parameters
        ----------
        N : int
            Evidence blocks in the history of T_{N,k}.
        k : int
            Bits per block.
        budget : float
            The prompt budget B in bits.
        cost : HandleCostModel
            The handle-cost model (sizes of the instruction and of one handle).

        Returns
        -------
        StrategyPlan
            H(R) in bits, the exact success probability and feasibility.
        """
        N, k, budget, cost = _plan_iv(N, k, budget, cost)
        b = min(k, int(budget // N))
        return StrategyPlan(
            entropy_bits=float(N * b), exact_success=2.0 ** (-(k - b)),
            details={"kept_bits": b, "k": k, "N": N},
        )

    def encode(self, blocks: np.ndarray, plan: StrategyPlan, rng: np.random.Generator,
               archive: Archive | None) -> np.ndarray:
        """The first b bits of every block, concatenated without padding.

        Parameters
        ----------
        blocks : numpy.ndarray
            The evidence blocks, uint8 ``(T, N, ceil(k/8))``, packed bits.
        plan : StrategyPlan
            The plan :meth:`plan` returned for these parameters.
        rng : numpy.random.Generator
            The strategy's randomness.
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The in-prompt state R as packed bits, uint8 ``(T, nbytes)``.
        """
        b = int(plan.details["kept_bits"])
        return _pack_fields(_prefix(blocks, b), b)

    def decode(self, state: np.ndarray, index: np.ndarray, plan: StrategyPlan,
               rng: np.random.Generator, archive: Archive | None) -> np.ndarray:
        """The target's b kept bits followed by k - b uniformly random bits.

        Parameters
        ----------
        state : numpy.ndarray
            What :meth:`encode` returned.
        index : numpy.ndarray
            The revealed target block of each trial, int ``(T,)``.
        plan : StrategyPlan
            The plan :meth:`plan` returned.
        rng : numpy.random.Generator
            The strategy's randomness (for guessed bits).
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The guessed target blocks, uint8 ``(T, ceil(k/8))``.
        """
        b, k = int(plan.details["kept_bits"]), int(plan.details["k"])
        guess = _random_guess(rng, index.shape[0], k)
        if b == 0:
            return guess
        known = _read_field(state, index, b)
        nb = known.shape[1]
        # Keep the guessed bits after position b inside the shared byte.
        keep = np.uint8(_tail_mask(b))
        guess[:, nb - 1] = (guess[:, nb - 1] & ~keep) | known[:, nb - 1]
        guess[:, : nb - 1] = known[:, : nb - 1]
        return guess


@dataclass(frozen=True)
class RandomSubset:
    """Keep a uniformly random subset of s blocks with their indices.

    The state stores, for each kept block, its index in ``ceil(log2 N)``
    bits followed by its k bits, so ``s = floor(B / (k + ceil(log2 N)))``;
    the guesser only sees the state. ``H(R) = log2 C(N, s) + s k``.
    """

    name: ClassVar[str] = "random-subset"
    recovering: ClassVar[bool] = False
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def plan(self, N: int, k: int, budget: float, cost: HandleCostModel) -> StrategyPlan:
        """Keep ``s = min(N, floor(B / (k + ceil(log2 N))))`` blocks with their
        indices: ``H(R) = log2 C(N, s) + s k``, success ``s/N + (1 - s/N) 2**-k``.

        Parameters
        ----------
        N : int
            Evidence blocks in the history of T_{N,k}.
        k : int
            Bits per block.
        budget : float
            The prompt budget B in bits.
        cost : HandleCostModel
            The handle-cost model (sizes of the instruction and of one handle).

        Returns
        -------
        StrategyPlan
            H(R) in bits, the exact success probability and feasibility.
        """
        N, k, budget, cost = _plan_iv(N, k, budget, cost)
        h = math.ceil(math.log2(N)) if N > 1 else 0
        s = min(N, int(budget // (k + h)))
        ln_choose = math.lgamma(N + 1) - math.lgamma(s + 1) - math.lgamma(N - s + 1)
        log_choose = ln_choose / math.log(2)
        return StrategyPlan(
            entropy_bits=max(0.0, log_choose) + s * k,
            exact_success=_guess_success(s / N, k),
            details={"kept_blocks": s, "index_bits": h, "k": k, "N": N},
        )

    def encode(self, blocks: np.ndarray, plan: StrategyPlan, rng: np.random.Generator,
               archive: Archive | None) -> np.ndarray:
        """A uniformly random subset of s blocks per trial, each stored as its
        index (``ceil(log2 N)`` bits) followed by its k bits.

        Parameters
        ----------
        blocks : numpy.ndarray
            The evidence blocks, uint8 ``(T, N, ceil(k/8))``, packed bits.
        plan : StrategyPlan
            The plan :meth:`plan` returned for these parameters.
        rng : numpy.random.Generator
            The strategy's randomness.
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The in-prompt state R as packed bits, uint8 ``(T, nbytes)``.
        """
        s, h, k, N = (int(plan.details[x]) for x in ("kept_blocks", "index_bits", "k", "N"))
        trials = blocks.shape[0]
        if s == 0:
            return np.zeros((trials, 0), dtype=np.uint8)
        chosen = np.argsort(rng.random((trials, N)), axis=1)[:, :s]
        picked = blocks[np.arange(trials)[:, None], chosen]
        width = h + k
        if s > _SHIFT_PACK_FIELDS or h > 64:
            idx_bits = ((chosen[..., None] >> np.arange(h - 1, -1, -1)) & 1).astype(np.uint8)
            block_bits = np.unpackbits(picked, axis=2, count=k)
            fields = np.concatenate([idx_bits, block_bits], axis=2)
            return np.packbits(fields.reshape(trials, -1), axis=1)
        # Same bytes as packing the bits, by byte shifts: slot i holds its
        # index (h bits) then its block (k bits) from bit i * (h + k).
        state = np.zeros((trials, _kbytes(s * width)), dtype=np.uint8)
        idx = _pack_index(chosen, h) if h else None
        for i in range(s):
            if idx is not None:
                _or_bits(state, idx[:, i], i * width)
            _or_bits(state, picked[:, i], i * width + h)
        return state

    def decode(self, state: np.ndarray, index: np.ndarray, plan: StrategyPlan,
               rng: np.random.Generator, archive: Archive | None) -> np.ndarray:
        """The stored block whose index field matches the target, a uniformly
        random guess when none does.

        Parameters
        ----------
        state : numpy.ndarray
            What :meth:`encode` returned.
        index : numpy.ndarray
            The revealed target block of each trial, int ``(T,)``.
        plan : StrategyPlan
            The plan :meth:`plan` returned.
        rng : numpy.random.Generator
            The strategy's randomness (for guessed bits).
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The guessed target blocks, uint8 ``(T, ceil(k/8))``.
        """
        s, h, k = (int(plan.details[x]) for x in ("kept_blocks", "index_bits", "k"))
        trials = index.shape[0]
        guess = _random_guess(rng, trials, k)
        if s == 0:
            return guess
        # Read only the s index fields, then the one matching block.
        width = h + k
        # Gather just the index bits: bit j of slot i sits at i*width + j.
        pos = (np.arange(s)[:, None] * width + np.arange(h)[None, :]).ravel()
        idx_bits = (state[:, pos // 8] >> (7 - pos % 8).astype(np.uint8)) & 1
        weights = (1 << np.arange(h - 1, -1, -1)).astype(np.int64)
        stored = idx_bits.reshape(trials, s, h).astype(np.int64) @ weights
        match = stored == index[:, None]
        hit = match.any(axis=1)
        if np.any(hit):
            slot = match.argmax(axis=1)[hit].astype(np.int64)
            guess[hit] = _read_bits(state[hit], slot * width + h, k)
        return guess


@dataclass(frozen=True)
class Recover:
    """VISTA's method: archive every block, keep the handle table, read the
    revealed block back after the reveal (Proposition 1, achievability).

    A trial succeeds iff instruction + N handles + one block fit in the
    budget under the handle-cost model and the block read back equals the
    original bit for bit.
    """

    name: ClassVar[str] = "recover"
    recovering: ClassVar[bool] = True
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {}

    def plan(self, N: int, k: int, budget: float, cost: HandleCostModel) -> StrategyPlan:
        """Feasible iff instruction + N handles + one block fit in the budget
        (:func:`vistalab.theory.recovery_feasibility`); success 1 then, else 0.

        Parameters
        ----------
        N : int
            Evidence blocks in the history of T_{N,k}.
        k : int
            Bits per block.
        budget : float
            The prompt budget B in bits.
        cost : HandleCostModel
            The handle-cost model (sizes of the instruction and of one handle).

        Returns
        -------
        StrategyPlan
            H(R) in bits, the exact success probability and feasibility.
        """
        N, k, budget, cost = _plan_iv(N, k, budget, cost)
        feas = theory.recovery_feasibility(N, k, budget, cost=cost)
        return StrategyPlan(
            entropy_bits=feas.instruction + feas.handles_total,
            exact_success=1.0 if feas.feasible else 0.0,
            feasible=feas.feasible,
            details={"required_bits": feas.required, "handle_bits": cost.handle_size(N),
                     "slack_bits": feas.slack},
        )

    def encode(self, blocks: np.ndarray, plan: StrategyPlan, rng: np.random.Generator,
               archive: Archive | None) -> np.ndarray:
        """Archive every block and keep the handle table (Section "Meta Context
        Tool": archive with a handle).

        Parameters
        ----------
        blocks : numpy.ndarray
            The evidence blocks, uint8 ``(T, N, ceil(k/8))``, packed bits.
        plan : StrategyPlan
            The plan :meth:`plan` returned for these parameters.
        rng : numpy.random.Generator
            The strategy's randomness.
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The int64 handle table ``(T, N)``.

        Raises
        ------
        RuntimeError
            If ``archive`` is None.
        """
        if archive is None:
            raise DomainError("archive", archive, "must be an Archive (the recover "
                              "strategy stores the blocks there)", "pass archive=Archive()")
        return archive.write(blocks)

    def decode(self, state: np.ndarray, index: np.ndarray, plan: StrategyPlan,
               rng: np.random.Generator, archive: Archive | None) -> np.ndarray:
        """Read the target block back from the archive through its handle: exact,
        bit for bit.

        Parameters
        ----------
        state : numpy.ndarray
            What :meth:`encode` returned.
        index : numpy.ndarray
            The revealed target block of each trial, int ``(T,)``.
        plan : StrategyPlan
            The plan :meth:`plan` returned.
        rng : numpy.random.Generator
            The strategy's randomness (for guessed bits).
        archive : Archive or None
            The archive (None for a non-recovering strategy).

        Returns
        -------
        numpy.ndarray
            The guessed target blocks, uint8 ``(T, ceil(k/8))``.

        Raises
        ------
        RuntimeError
            If ``archive`` is None.
        """
        if archive is None:
            raise DomainError("archive", archive, "must be an Archive (the recover "
                              "strategy stores the blocks there)", "pass archive=Archive()")
        handles = state[np.arange(index.shape[0]), index]
        return archive.read(handles)


STRATEGIES: dict[str, Callable[..., Strategy]] = {
    KeepBlocks.name: KeepBlocks,
    KeepBits.name: KeepBits,
    RandomSubset.name: RandomSubset,
    Recover.name: Recover,
}


def make_strategy(name: str, **params: Any) -> Strategy:
    """Build the registered strategy ``name`` (see :data:`STRATEGIES`).

    Parameters
    ----------
    name : str
        A key of :data:`STRATEGIES`.
    **params
        The strategy's own parameters, if it takes any.

    Returns
    -------
    Strategy

    Raises
    ------
    UnknownNameError
        If no strategy has that name (with the closest names)."""
    if not isinstance(name, str) or name not in STRATEGIES:
        raise UnknownNameError("strategy", str(name), STRATEGIES)
    try:
        return STRATEGIES[name](**params)
    except TypeError as exc:
        raise DomainError("params", params, f"are not accepted by strategy {name!r}",
                          "see the strategy's docstring") from exc


# ---------------------------------------------------------------------------
# Simulator
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RecoveryResult:
    """Monte Carlo estimate of the success probability on T_{N,k}.

    Attributes
    ----------
    N, k : int
        Blocks and bits per block.
    budget : float
        Prompt budget B in bits.
    strategy : str
        Strategy name.
    recovering : bool
        Whether the strategy reads the archive after the reveal.
    success : float
        Fraction of trials whose guess equalled the revealed block.
    success_ci : tuple of float
        Exact (Clopper-Pearson) interval at ``confidence``.
    successes, trials : int
        Counts behind ``success``.
    confidence : float
        Level of ``success_ci``.
    bound : float
        Proposition 1's ``B/(Nk) + 1/k`` (unclipped; probabilities cap at 1).
        It applies to non-recovering strategies only.
    exact_success : float or None
        The strategy's closed-form success probability, if any.
    consistent_with_bound : bool or None
        For non-recovering strategies: the data do not exclude
        ``success <= min(1, bound)`` at level ``1 - 1e-4`` (one-sided).
        None for recovering strategies, to which the bound does not apply.
    entropy_bits : float
        Declared H(R) (recovering: instruction + handles in the prompt).
    feasible : bool
        Recovering strategies: everything fits the budget. True otherwise.
    details : dict
        Strategy-specific sizes from its plan.
    handle_cost : dict
        ``{"c0": ..., "instruction": ...}`` used for feasibility.
    seed_entropy : int or list of int
        Entropy of the run's root SeedSequence (re-running with it as the
        seed reproduces the result).
    seed_spawn_key : tuple of int
        Spawn key of the root SeedSequence (empty for int seeds).
    elapsed_seconds, trials_per_second : float
        Wall time of the trials and the resulting throughput.
    """

    N: int
    k: int
    budget: float
    strategy: str
    recovering: bool
    success: float
    success_ci: tuple[float, float]
    successes: int
    trials: int
    confidence: float
    bound: float
    exact_success: float | None
    consistent_with_bound: bool | None
    entropy_bits: float
    feasible: bool
    details: dict[str, float]
    handle_cost: dict[str, float]
    seed_entropy: int | list[int]
    seed_spawn_key: tuple[int, ...]
    elapsed_seconds: float
    trials_per_second: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the ``vista-lab recovery --json`` document).

        Returns
        -------
        dict
            The result's fields, tuples as lists and the seed entropy under ``seed``.
        """
        return {
            "N": self.N,
            "k": self.k,
            "budget": self.budget,
            "strategy": self.strategy,
            "recovering": self.recovering,
            "success": self.success,
            "success_ci": [self.success_ci[0], self.success_ci[1]],
            "successes": self.successes,
            "trials": self.trials,
            "confidence": self.confidence,
            "bound": self.bound,
            "exact_success": self.exact_success,
            "consistent_with_bound": self.consistent_with_bound,
            "entropy_bits": self.entropy_bits,
            "feasible": self.feasible,
            "details": dict(self.details),
            "handle_cost": dict(self.handle_cost),
            "seed": self.seed_entropy,
            "seed_spawn_key": list(self.seed_spawn_key),
            "elapsed_seconds": self.elapsed_seconds,
            "trials_per_second": self.trials_per_second,
        }


def _handle_cost_iv(handle_cost: Any) -> HandleCostModel:
    if handle_cost is None:
        return HandleCostModel()
    if isinstance(handle_cost, HandleCostModel):
        return handle_cost
    c0 = as_real("handle_cost", handle_cost, lo=0.0,
                 fix="pass c0 >= 0 bits per log2(N), or a theory.HandleCostModel")
    return HandleCostModel(c0=c0)


def _plan_iv(N: Any, k: Any, budget: Any, cost: Any) -> tuple[int, int, float, HandleCostModel]:
    """The instance T_{N,k} and budget B every strategy's ``plan`` takes, checked at
    the door (a strategy's arithmetic on -1e300 or a str would return NaN or fail)."""
    N = as_int("N", N, lo=1, fix="the history holds at least one evidence block")
    k = as_int("k", k, lo=1, fix="each evidence block has at least one bit")
    for name, value in (("N", N), ("k", k)):
        if value > 1 << 30:
            raise DomainError(name, value, "must be at most 2**30",
                              "N*k <= 2**30 bits per trial bounds the memory")
    if N * k > 1 << 30:
        raise DomainError("k", k, "must keep N*k <= 2**30 bits per trial", "use fewer or "
                          "shorter blocks", context=f"N={N}, N*k={N * k}")
    budget = as_real("budget", budget, lo=0.0, fix="the prompt budget B is a number of bits >= 0")
    if cost is not None and not isinstance(cost, HandleCostModel):
        raise DomainError("cost", cost, "must be a theory.HandleCostModel",
                          "pass e.g. HandleCostModel() (the default sizes)")
    return N, k, budget, _handle_cost_iv(cost)


def _recovery_iv(
    N: Any, k: Any, budget: Any, strategy: Any, trials: Any, handle_cost: Any,
    confidence: Any, workers: Any,
) -> tuple[int, int, float, Strategy, int, HandleCostModel, float, int]:
    N, k, budget, _ = _plan_iv(N, k, budget, None)
    if isinstance(strategy, str):
        strategy = make_strategy(strategy)
    elif not isinstance(strategy, Strategy):
        raise DomainError("strategy", strategy, "must be a strategy name or a Strategy object",
                          f"use one of {', '.join(STRATEGIES)}")
    trials = trials_iv(trials)
    return (N, k, budget, strategy, trials, _handle_cost_iv(handle_cost),
            confidence_iv(confidence), workers_iv(workers))


def _check_state(state: Any, budget: float, trials: int, name: str) -> None:
    """A non-recovering state must be packed bits within ``floor(budget)`` bits."""
    bits = int(math.floor(budget))
    ok_shape = (isinstance(state, np.ndarray) and state.dtype == np.uint8 and state.ndim == 2
                and state.shape[0] == trials)
    if not ok_shape:
        raise DomainError("strategy", name, "must return its state as uint8 (trials, nbytes)",
                          "pack the in-prompt state with np.packbits")
    nbytes = state.shape[1]
    over = nbytes * 8 - bits
    if over <= 0:
        return
    if nbytes > (bits + 7) // 8 or np.any(state[:, -1] & np.uint8((1 << over) - 1)):
        raise DomainError("strategy", name, f"must keep its in-prompt state within "
                          f"floor(budget)={bits} bits", "store fewer bits (H(R) <= B)",
                          context=f"state uses {nbytes} bytes")


def simulate_recovery(
    N: int,
    k: int,
    budget: float,
    strategy: str | Strategy,
    *,
    trials: int,
    rng: Any = None,
    handle_cost: float | HandleCostModel | None = None,
    confidence: float = 0.95,
    workers: int = 1,
) -> RecoveryResult:
    """Simulate T_{N,k} with a strategy and estimate its success probability.

    Parameters
    ----------
    N : int
        Evidence blocks per trial, ``N >= 1``.
    k : int
        Bits per block, ``k >= 1`` (any size; bits are packed).
    budget : float
        Prompt budget B in bits.
    strategy : str or Strategy
        A name from :data:`STRATEGIES` or a :class:`Strategy` object.
    trials : int
        Number of independent trials.
    rng : None, int, SeedSequence or Generator, optional
        Seed of the run (see DESIGN.md); the result records its entropy.
    handle_cost : float or theory.HandleCostModel, optional
        Handle cost ``c0`` (bits per ``log2 N``) or a full model; used by
        recovering strategies. Default ``HandleCostModel()``.
    confidence : float
        Level of the reported interval.
    workers : int
        Threads; the result does not depend on it.

    Returns
    -------
    RecoveryResult
    """
    N, k, budget, strat, trials, cost, confidence, workers = _recovery_iv(
        N, k, budget, strategy, trials, handle_cost, confidence, workers)
    plan = strat.plan(N, k, budget, cost)
    if not strat.recovering and plan.entropy_bits > budget * (1 + 1e-12):
        raise DomainError("strategy", strat.name, "must declare H(R) <= budget",
                          "a non-recovering state cannot hold more than B bits",
                          context=f"H(R)={plan.entropy_bits}, budget={budget}")
    seed = root_seed(rng)
    block = max(1, min(_MAX_TRIAL_BLOCK, _BLOCK_BITS // (N * k)))
    sizes = block_sizes(trials, block)

    def one_block(i: int, size: int) -> int:
        return _recovery_block(seed, i, size, N, k, budget, strat, plan)

    t0 = time.perf_counter()
    successes = int(sum(run_blocks(one_block, sizes, workers=workers)))
    elapsed = time.perf_counter() - t0
    bound = theory.recovery_success_bound(N, k, budget)
    consistent: bool | None = None
    if not strat.recovering:
        lo_check = clopper_pearson(successes, trials, 1.0 - 2.0 * (1.0 - _CHECK_CONFIDENCE))[0]
        consistent = bool(lo_check <= min(1.0, bound))
    return RecoveryResult(
        N=N, k=k, budget=budget, strategy=strat.name, recovering=bool(strat.recovering),
        success=successes / trials, success_ci=clopper_pearson(successes, trials, confidence),
        successes=successes, trials=trials, confidence=confidence, bound=bound,
        exact_success=plan.exact_success, consistent_with_bound=consistent,
        entropy_bits=plan.entropy_bits, feasible=bool(plan.feasible),
        details={str(a): float(b) for a, b in plan.details.items()},
        handle_cost={"c0": float(cost.c0), "instruction": float(cost.instruction)},
        seed_entropy=seed.entropy, seed_spawn_key=seed.spawn_key,
        elapsed_seconds=elapsed, trials_per_second=trials / elapsed if elapsed > 0 else math.inf,
    )


def _recovery_block(
    seed: SeedInfo, i: int, size: int, N: int, k: int, budget: float,
    strat: Strategy, plan: StrategyPlan,
) -> int:
    # One stream per random variable: blocks, revealed index, strategy.
    blocks = _random_blocks(stream(seed, 0, i), (size, N), k)
    index = np.minimum((stream(seed, 1, i).random(size) * N).astype(np.int64), N - 1)
    srng = stream(seed, 2, i)
    archive = Archive() if strat.recovering else None
    original = blocks.copy()  # the strategy must not be able to alter the truth
    state = strat.encode(blocks, plan, srng, archive)
    if not strat.recovering:
        _check_state(state, budget, size, strat.name)
    guess = np.asarray(strat.decode(state, index, plan, srng, archive))
    truth = original[np.arange(size), index]
    if guess.shape != truth.shape or guess.dtype != np.uint8:
        raise DomainError("strategy", strat.name, f"must return guesses as uint8 {truth.shape}",
                          "return packed k-bit blocks", context=f"got {guess.dtype} {guess.shape}")
    correct = np.all(guess == truth, axis=1)
    if strat.recovering and not plan.feasible:
        # The recovered block does not fit in the prompt: the method cannot emit it.
        correct[:] = False
    return int(np.count_nonzero(correct))
