"""The recovery task T_{N,k} run through the reference workspace engine: N blocks
of k random bits registered as tool results, a token budget below the raw
history, a revealed index, and an answer checked byte for byte, with the success
rate checked against Proposition 1's bound.

Strategies act only through the engine's agent-facing tools:

- ``recover`` archives every block (each with the tool call that fetched it,
  as one unit, so only its handle stays visible), then after the query reads
  block i* from the payload path its handle shows, as an ordinary tool call
  whose result must fit the budget;
- ``delete`` deletes every block and guesses;
- ``keep-bits`` archives every block with a lossy replacement text (the
  first b bits) in its handle and never reads a payload;
- ``keep-blocks`` keeps the first s blocks verbatim and deletes the rest.

b and s are the largest values whose rendering fits the budget. Proposition 1
bounds the non-recovering strategies at ``H/(Nk) + 1/k`` where H is the
number of block bits they keep in the prompt.

This module runs the trials and builds the result record; one trial and the
token-accounting probes are in ``_engine_recovery_trial``, the handle cost and the
feasibility region in ``_engine_recovery_feasibility``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError, HandleCostModel, UnknownNameError
from vistalab.theory._validate import as_int
from vistalab.workspace import Workspace, WorkspaceError

from vistalab import theory

from ._engine_common import store_iv, tokenizer_iv
from ._engine_recovery_trial import _TASK, _TASK_TOOLS, _largest_keep, _probe, _run_trial, _Setup
from ._recovery import RecoveryResult
from ._seeding import MAX_ENGINE_TRIALS, SeedInfo, block_sizes, root_seed, stream, trials_iv
from ._seeding import stream_seq as _stream_seq
from ._stats import clopper_pearson, confidence_iv

__all__ = [
    "ENGINE_STRATEGIES",
    "EngineRecoveryResult",
    "simulate_recovery_engine",
]

#: Strategies with an engine implementation.
ENGINE_STRATEGIES: tuple[str, ...] = ("recover", "delete", "keep-bits", "keep-blocks")
_RECOVERING = {"recover"}
ENGINE_RECOVERY_BLOCK = 32
"""Trials per random-stream block."""
MAX_ENGINE_BITS = 1 << 20
"""Largest N*k per trial (every bit is a character of the prompt)."""
_CHECK_CONFIDENCE = 1.0 - 1e-4  # as the array simulator's consistency check


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class EngineRecoveryResult(RecoveryResult):
    """A recovery-task run through the workspace engine.

    Every field of :class:`RecoveryResult`; ``budget`` is in engine tokens,
    ``entropy_bits`` is the number of block bits a non-recovering strategy
    keeps in the prompt (the H of Proposition 1; ``bound`` is evaluated at it)
    and, for ``recover``, the handle tokens; ``feasible`` is theory's
    condition ``B >= instruction + N handles + one block`` with the measured
    token costs. Plus:

    Attributes
    ----------
    store, tokenizer : str
    handle_tokens : float
        Mean prompt tokens of one archive handle (tool message) at this N.
    instruction_tokens : int
        Everything else in the archived rendering with the query: protocol,
        tool schemas, task, dashboard, query.
    block_tokens : int
        Prompt tokens of one evidence block as a tool message.
    read_tokens : int
        What reading one block back adds to the rendering (its tool call,
        the block, their ledger rows): the "one block" of theory's condition.
    raw_history_tokens : int
        The rendering's size with every block visible (exceeds the budget).
    kept : int
        b (keep-bits) or s (keep-blocks): the largest value that fits.
    archive_events, delete_events, read_events : int
        Tool calls over all trials.
    byte_exact_recoveries : int
        Reads that returned exactly the original bytes.
    engine_feasible : float
        Fraction of recovering trials whose read-back fit the budget (the
        rendering stayed in normal mode with the block in it).
    """

    store: str = "memory"
    tokenizer: str = "cl100k_base"
    handle_tokens: float = math.nan
    instruction_tokens: int = 0
    block_tokens: int = 0
    read_tokens: int = 0
    raw_history_tokens: int = 0
    kept: int = 0
    archive_events: int = 0
    delete_events: int = 0
    read_events: int = 0
    byte_exact_recoveries: int = 0
    engine_feasible: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """The array mode's JSON document plus the engine's numbers.

        Returns
        -------
        dict
            Every key of :meth:`RecoveryResult.to_dict`, plus ``mode: "engine"``
            and the engine's event counts and feasibility.
        """
        d = super().to_dict()
        d.update({
            "mode": "engine",
            "store": self.store,
            "tokenizer": self.tokenizer,
            "handle_tokens": self.handle_tokens,
            "instruction_tokens": self.instruction_tokens,
            "block_tokens": self.block_tokens,
            "read_tokens": self.read_tokens,
            "raw_history_tokens": self.raw_history_tokens,
            "kept": self.kept,
            "archive_events": self.archive_events,
            "delete_events": self.delete_events,
            "read_events": self.read_events,
            "byte_exact_recoveries": self.byte_exact_recoveries,
            "engine_feasible": self.engine_feasible,
        })
        return d


def _recovery_engine_iv(N: Any, k: Any, budget: Any, strategy: Any, trials: Any,
                        confidence: Any) -> tuple[int, int, int, str, int, float]:
    N = as_int("N", N, lo=1, hi=10_000, fix="the history holds 1..10000 evidence blocks")
    k = as_int("k", k, lo=1, hi=1 << 16, fix="each evidence block has 1..65536 bits")
    if N * k > MAX_ENGINE_BITS:
        raise DomainError("k", k, f"must keep N*k <= {MAX_ENGINE_BITS} bits in engine mode",
                          "every bit is a character of the prompt; use fewer or shorter "
                          "blocks", context=f"N={N}")
    if isinstance(budget, float) and budget.is_integer():
        budget = int(budget)
    budget = as_int("budget", budget, lo=1,
                    fix="the engine budget B is a whole number of tokens")
    if not isinstance(strategy, str):
        raise DomainError("strategy", strategy, "must be a strategy name in engine mode",
                          f"use one of {', '.join(ENGINE_STRATEGIES)}")
    if strategy not in ENGINE_STRATEGIES:
        raise UnknownNameError("engine strategy", strategy, ENGINE_STRATEGIES)
    trials = trials_iv(trials, hi=MAX_ENGINE_TRIALS)
    return N, k, budget, strategy, trials, confidence_iv(confidence)


def _engine_floor(tok: Any) -> int | None:
    """Smallest budget whose overflow rendering holds the engine's fixed part
    (tool schemas, protocol, the pinned task, worst-case dashboard), or None
    when even a very large budget does not build. Found by bisection, since the
    dashboard's own size grows with the digits of the budget it shows."""

    def builds(budget: int) -> bool:
        try:
            Workspace(budget, tokenizer=tok, task_tools=_TASK_TOOLS,
                      include_read_path_tool=True, keep_pending=False).register_user(_TASK)
        except WorkspaceError:
            return False
        return True

    lo, hi = 1, 1 << 20
    if not builds(hi):
        return None
    while lo < hi:  # invariant: builds(hi), and every budget below lo fails
        mid = (lo + hi) // 2
        if builds(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def simulate_recovery_engine(
    N: int,
    k: int,
    budget: int,
    strategy: str,
    *,
    trials: int,
    rng: Any = None,
    store: str = "memory",
    store_dir: Any = None,
    tokenizer: str = "cl100k_base",
    confidence: float = 0.95,
) -> EngineRecoveryResult:
    """Run T_{N,k} through the workspace engine with one strategy.

    Parameters
    ----------
    N, k : int
        Evidence blocks and bits per block (each bit is a ``0``/``1`` character).
    budget : int
        Engine budget B in tokens (the whole rendering: protocol, tools,
        dashboard and conversation). Must hold the engine's fixed rendering
        (tool schemas, protocol, task and worst-case dashboard), whose size
        depends on the tokenizer: a smaller budget is refused with a
        :class:`DomainError` that states the exact minimum in tokens.
    strategy : {"recover", "delete", "keep-bits", "keep-blocks"}
    trials : int
    rng : None, int, SeedSequence or Generator
        Seed of the run; recorded in the result.
    store : {"memory", "disk"}
        Payload store. Handles show the payload path, so token costs depend on
        the folder: pass ``store_dir`` for token counts that repeat across runs.
    store_dir : str or PathLike, optional
        The disk store's folder (default: a temporary one).
    tokenizer : {"cl100k_base", "approx"}
    confidence : float
        Level of the Clopper-Pearson interval.

    Returns
    -------
    EngineRecoveryResult
    """
    N, k, budget, strategy, trials, confidence = _recovery_engine_iv(
        N, k, budget, strategy, trials, confidence)
    seed = root_seed(rng)
    spec = store_iv(store, store_dir)
    try:
        tok = tokenizer_iv(tokenizer)
        setup = _Setup(N, k, budget, strategy, tok, spec, 0)
        try:
            Workspace(budget, tokenizer=tok, task_tools=_TASK_TOOLS,
                      include_read_path_tool=True, keep_pending=False).register_user(_TASK)
            probe = _probe(_Setup(N, k, max(budget, 1 << 20), strategy, tok, spec, 0),
                           stream(seed, 2))
        except WorkspaceError as exc:
            floor = _engine_floor(tok)
            if floor is not None and budget < floor:
                raise DomainError(
                    "budget", budget,
                    f"must be at least {floor:,} tokens in engine mode (the fixed rendering: "
                    "tool schemas, protocol, task and worst-case dashboard)",
                    f"raise the budget to {floor:,} or more") from None
            raise DomainError("budget", budget, "must hold the engine's fixed rendering",
                              f"raise the budget ({' '.join(str(exc).split())})") from None
        keep = _largest_keep(setup, stream(seed, 3)) if strategy in ("keep-bits",
                                                                    "keep-blocks") else 0
        setup = _Setup(N, k, budget, strategy, tok, spec, keep)
        successes = archives = deletes = reads = exact = normal = 0
        t0 = time.perf_counter()
        for i, size in enumerate(block_sizes(trials, ENGINE_RECOVERY_BLOCK)):
            gen = stream(seed, 0, i)
            for _ in range(size):
                o = _run_trial(setup, gen)
                successes += o.success
                archives += o.archive_events
                deletes += o.delete_events
                reads += o.read_events
                exact += o.byte_exact
                normal += o.normal_after
        elapsed = time.perf_counter() - t0
    finally:
        spec.close()
    return _result(setup, probe, seed, trials, successes, archives, deletes, reads, exact,
                   normal, elapsed, confidence)


def _result(setup: _Setup, probe: dict[str, Any], seed: SeedInfo, trials: int, successes: int,
            archives: int, deletes: int, reads: int, exact: int, normal: int, elapsed: float,
            confidence: float) -> EngineRecoveryResult:
    N, k = setup.N, setup.k
    recovering = setup.strategy in _RECOVERING
    handle = probe["handle_tokens"]
    c0 = handle / math.log2(N) if N > 1 else 0.0
    cost = HandleCostModel(c0=c0, instruction=float(probe["instruction_tokens"]))
    # Theory's condition in token units: instruction + N handles + one block <= B.
    feas = theory.recovery_feasibility(N, int(probe["read_tokens"]), setup.budget, cost=cost)
    if recovering:
        kept_bits = 0.0
        entropy = float(probe["handle_tokens_total"])
        exact_success: float | None = 1.0 if feas.feasible else 0.0
    elif setup.strategy == "keep-bits":
        kept_bits = float(N * setup.keep)
        entropy = kept_bits
        exact_success = 2.0 ** (-(k - setup.keep))
    elif setup.strategy == "keep-blocks":
        kept_bits = float(setup.keep * k)
        entropy = kept_bits
        exact_success = (setup.keep + (N - setup.keep) * 2.0 ** (-k)) / N
    else:
        kept_bits = entropy = 0.0
        exact_success = 2.0 ** (-k)
    bound = theory.recovery_success_bound(N, k, kept_bits)
    consistent: bool | None = None
    if not recovering:
        lo_check = clopper_pearson(successes, trials, 1.0 - 2.0 * (1.0 - _CHECK_CONFIDENCE))[0]
        consistent = bool(lo_check <= min(1.0, bound))
    return EngineRecoveryResult(
        N=N, k=k, budget=float(setup.budget), strategy=setup.strategy, recovering=recovering,
        success=successes / trials, success_ci=clopper_pearson(successes, trials, confidence),
        successes=successes, trials=trials, confidence=confidence, bound=bound,
        exact_success=exact_success, consistent_with_bound=consistent, entropy_bits=entropy,
        feasible=bool(feas.feasible) if recovering else True,
        details={"kept": float(setup.keep), "kept_bits": kept_bits, "c0_tokens": c0,
                 "required_tokens": float(feas.required), "slack_tokens": float(feas.slack)},
        handle_cost={"c0": float(c0), "instruction": float(probe["instruction_tokens"])},
        seed_entropy=seed.entropy, seed_spawn_key=seed.spawn_key, elapsed_seconds=elapsed,
        trials_per_second=trials / elapsed if elapsed > 0 else math.inf,
        store=setup.spec.kind, tokenizer=setup.tok.name, handle_tokens=float(handle),
        instruction_tokens=int(probe["instruction_tokens"]),
        block_tokens=int(probe["block_tokens"]), read_tokens=int(probe["read_tokens"]),
        raw_history_tokens=int(probe["raw_history_tokens"]), kept=setup.keep,
        archive_events=archives, delete_events=deletes, read_events=reads,
        byte_exact_recoveries=exact,
        engine_feasible=(normal / trials) if recovering else math.nan,
    )


def stream_seed(seed: SeedInfo, *key: int) -> np.random.SeedSequence:
    """The SeedSequence of sub-stream ``key`` (:func:`vistalab._core.child_seq`)."""
    return _stream_seq(seed, *key)
