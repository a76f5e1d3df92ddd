"""Monte Carlo of the recovery task T_{N,k} (Proposition 1): real random
k-bit blocks, a strategy's in-prompt state R, a revealed index, a guess
compared bit for bit.

Blocks are packed bits (``ceil(k/8)`` bytes, most significant bit first,
unused trailing bits zero), trials are vectorised inside fixed blocks of
trials, and every block has its own spawned random streams. The strategy
interface is :mod:`._recovery_protocol`, the four strategies and their registry
:mod:`._recovery_strategies`, the bit packing :mod:`._recovery_bits`; this
module runs the trials and reports the result.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError, HandleCostModel

from vistalab import theory

from ._recovery_bits import _random_blocks
from ._recovery_protocol import Archive, Strategy, StrategyPlan, _handle_cost_iv, _plan_iv
from ._recovery_strategies import STRATEGIES, make_strategy
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

__all__ = ["RecoveryResult", "simulate_recovery"]

# Evidence bits per trial block (the unit of reproducibility): 2**26 bits is
# 8 MB packed; strategies that unpack bits may hold 8x that transiently.
_BLOCK_BITS = 1 << 26
_MAX_TRIAL_BLOCK = 1 << 14
# The consistency check asks whether the data exclude the bound at this level,
# stricter than the reported interval so a strategy sitting at the bound is
# not flagged by chance.
_CHECK_CONFIDENCE = 1.0 - 1e-4


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
