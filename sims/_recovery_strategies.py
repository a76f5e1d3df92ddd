"""The four strategies of the recovery task T_{N,k} (keep blocks, keep bits, random subset,
recover) and the registry that builds one by name (:data:`STRATEGIES`, :func:`make_strategy`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from vistalab.theory import DomainError, HandleCostModel, UnknownNameError

from vistalab import theory

from ._recovery_bits import (
    _SHIFT_PACK_FIELDS,
    _kbytes,
    _or_bits,
    _pack_fields,
    _pack_index,
    _prefix,
    _random_guess,
    _read_bits,
    _read_field,
    _tail_mask,
)
from ._recovery_protocol import Archive, Strategy, StrategyPlan, _plan_iv

__all__ = ["KeepBlocks", "KeepBits", "RandomSubset", "Recover", "STRATEGIES",
           "make_strategy"]


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
