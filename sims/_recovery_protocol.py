"""The strategy interface of the recovery task T_{N,k} (Proposition 1): the plan a strategy
makes under the budget, its encode / decode Protocol, and the archive a recovering one uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from vistalab.theory import DomainError, HandleCostModel
from vistalab.theory._validate import as_int, as_real

__all__ = ["StrategyPlan", "Archive", "Strategy"]


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
