"""The recovery task T_{N,k} run through the reference workspace engine: N blocks
of k random bits registered as tool results, a token budget below the raw
history, a revealed index, and an answer checked byte for byte; plus the
engine's handle cost (fit of c0 in c0 log2 N) and its feasibility region
against theory's condition (Proposition 1).

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
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError, HandleCostModel, UnknownNameError
from vistalab.theory._validate import as_int, as_real
from vistalab.workspace import (
    ARCHIVE_TOOL,
    DELETE_TOOL,
    READ_PATH_TOOL,
    ToolOutcome,
    Workspace,
    WorkspaceError,
    find_handles,
    message_tokens,
)

from vistalab import theory

from ._engine_common import MemoTokenizer, StoreSpec, store_iv, tokenizer_iv
from ._recovery import RecoveryResult
from ._seeding import MAX_ENGINE_TRIALS, SeedInfo, block_sizes, root_seed, stream, trials_iv
from ._seeding import stream_seq as _stream_seq
from ._stats import clopper_pearson, confidence_iv

__all__ = [
    "ENGINE_STRATEGIES",
    "EngineRecoveryResult",
    "HandleCostFit",
    "FeasibilityMap",
    "simulate_recovery_engine",
    "measure_handle_cost",
    "recovery_feasibility_map",
]

#: Strategies with an engine implementation.
ENGINE_STRATEGIES: tuple[str, ...] = ("recover", "delete", "keep-bits", "keep-blocks")
_RECOVERING = {"recover"}
ENGINE_RECOVERY_BLOCK = 32
"""Trials per random-stream block."""
MAX_ENGINE_BITS = 1 << 20
"""Largest N*k per trial (every bit is a character of the prompt)."""
_CHECK_CONFIDENCE = 1.0 - 1e-4  # as the array simulator's consistency check
_TOOL = "fetch_evidence"
_TASK_TOOLS = ({
    "type": "function",
    "function": {
        "name": _TOOL,
        "description": "Fetch one evidence block (a string of bits) by number.",
        "parameters": {"type": "object", "properties": {"block": {"type": "integer"}},
                       "required": ["block"]},
    },
},)
_TASK = ("Task: the tool results below are evidence blocks of random bits. After the history "
         "a query names one block; answer with its exact bits.")


# --------------------------------------------------------------------------- one trial


@dataclass(frozen=True)
class _Setup:
    """A run's fixed configuration (shared by every trial)."""

    N: int
    k: int
    budget: int
    strategy: str
    tok: MemoTokenizer
    spec: StoreSpec
    keep: int  # b (keep-bits) or s (keep-blocks); 0 otherwise

    @property
    def hard_limit(self) -> int:
        # The guard admits the whole history: the agent, not the guard, makes room.
        return 2 * self.budget + 4 * self.N * (self.k + 64)


def _bits_text(gen: np.random.Generator, N: int, k: int) -> list[str]:
    bits = gen.integers(0, 2, size=(N, k), dtype=np.uint8) + ord("0")
    return [row.tobytes().decode("ascii") for row in bits]


def _history(setup: _Setup, texts: list[str], store: Any) -> Workspace:
    ws = Workspace(setup.budget, tokenizer=setup.tok, store=store, hard_limit=setup.hard_limit,
                   task_tools=_TASK_TOOLS, include_read_path_tool=True)
    ws.register_user(_TASK)
    # One call per block (a parallel call of N entries would be a unit the
    # guard must keep beside every result, and would outgrow small budgets).
    for i, text in enumerate(texts):
        ws.register_tool_call([{"id": f"call_{i + 1}", "type": "function", "function": {
            "name": _TOOL, "arguments": json.dumps({"block": i + 1})}}])
        ws.register_tool_result(f"call_{i + 1}", text)
    return ws


def _bid(i: int) -> str:
    """Block ID of evidence block i (B1 is the task, then call/result pairs)."""
    return f"B{2 * i + 3}"


def _pair(i: int) -> str:
    """The call and result of evidence block i, as one archive unit."""
    return f"B{2 * i + 2}-B{2 * i + 3}"


@dataclass
class _TrialOutcome:
    success: bool
    archive_events: int = 0
    delete_events: int = 0
    read_events: int = 0
    byte_exact: bool = False
    normal_after: bool = False


def _act(setup: _Setup, ws: Workspace, texts: list[str]) -> tuple[int, int]:
    """The strategy's make-room actions before the reveal; (archives, deletes)."""
    N, name = setup.N, setup.strategy
    last = _bid(N - 1)
    if name == "recover":
        for i in range(N):
            _ok(ws.call_tool(ARCHIVE_TOOL, {"block_id": _pair(i)}))
        return N, 0
    if name == "keep-bits":
        b = setup.keep
        for i in range(N):
            _ok(ws.call_tool(ARCHIVE_TOOL, {"block_id": _pair(i),
                                            "replacement": f"kept bits: {texts[i][:b]}"}))
        return N, 0
    if name == "delete":
        _ok(ws.call_tool(DELETE_TOOL, {"block_id": f"B2-{last}",
                                       "reason": "non-recovering baseline"}))
        return 0, 1
    s = setup.keep  # keep-blocks
    if s >= N:
        return 0, 0
    _ok(ws.call_tool(DELETE_TOOL, {"block_id": f"B{2 * s + 2}-{last}",
                                   "reason": "non-recovering baseline"}))
    return 0, 1


def _ok(out: ToolOutcome) -> str:
    if not out.ok:
        raise DomainError("engine", out.text, "must accept the strategy's context action",
                          "report this as a workspace bug")
    return out.text


def _guess(gen: np.random.Generator, k: int) -> str:
    return (gen.integers(0, 2, size=k, dtype=np.uint8) + ord("0")).tobytes().decode("ascii")


def _run_trial(setup: _Setup, gen: np.random.Generator) -> _TrialOutcome:
    N, k = setup.N, setup.k
    texts = _bits_text(gen, N, k)
    target = int(gen.integers(N))
    ws = _history(setup, texts, setup.spec.new())
    archives, deletes = _act(setup, ws, texts)
    bid = _bid(target)
    ws.register_user(f"Query: reproduce evidence block {target + 1} ({bid}) exactly.")
    r = ws.render()
    out = _TrialOutcome(False, archives, deletes, 0)
    name = setup.strategy
    truth = texts[target]
    if name == "recover":
        rec = _answer_recover(ws, target, truth, query=False, rendering=r)
        rec.archive_events, rec.delete_events = archives, deletes
        return rec
    out.normal_after = r.mode == "normal"
    answer = _guess(gen, k)
    if out.normal_after:
        if name == "keep-bits":
            found = _find_handle(r, bid)
            if found is not None and found[1] is not None:
                answer = found[1] + answer[len(found[1]):]
        elif name == "keep-blocks":
            seen = [m.get("content") for m in r.messages
                    if m.get("role") == "tool" and m.get("tool_call_id") == f"call_{target + 1}"]
            if seen and isinstance(seen[0], str) and re.fullmatch(r"[01]+", seen[0]):
                answer = seen[0]
    out.success = answer == truth
    return out


def _answer_recover(ws: Workspace, target: int, truth: str, *, query: bool = True,
                    rendering: Any = None) -> _TrialOutcome:
    """After the reveal: find block ``target``'s handle in the rendering, read
    it back by its path as a tool call, and check that the exact bytes sit
    in the prompt the model answers from."""
    bid = _bid(target)
    if query:
        ws.register_user(f"Query: reproduce evidence block {target + 1} ({bid}) exactly.")
    r = ws.render() if rendering is None else rendering
    out = _TrialOutcome(False)
    found = _find_handle(r, bid)
    if found is None or ws.gate(READ_PATH_TOOL) is not None:
        return out  # overflow: the agent cannot see the handle or may not read
    args = {"path": found[0], "selector": f"member={bid}"}
    ws.register_tool_call([{"id": "read_1", "type": "function", "function": {
        "name": READ_PATH_TOOL, "arguments": json.dumps(args)}}])
    text = ws.dispatch(READ_PATH_TOOL, args)
    out.read_events = 1
    ws.register_tool_result("read_1", text)
    r2 = ws.render()
    out.normal_after = r2.mode == "normal"
    out.byte_exact = text.encode("utf-8") == truth.encode("ascii")
    # The block must be in the prompt the model answers from, not just read.
    seen = out.normal_after and any(m.get("role") == "tool" and m.get("content") == text
                                    for m in r2.messages)
    out.success = bool(seen and out.byte_exact)
    return out


def _find_handle(r: Any, bid: str) -> tuple[str, str | None] | None:
    """(payload path, kept bits or None) of the visible handle whose members
    include ``bid``, read off the rendering the model would see."""
    n = int(bid[1:])
    for m in r.messages:
        c = m.get("content")
        if not isinstance(c, str) or "[archived G" not in c:
            continue
        for h in find_handles(c):
            if h.unit_id[0] == "G" and _members_include(h.members, n):
                kept = h.replacement.removeprefix("kept bits: ")
                return h.path, (kept if kept != h.replacement else None)
    return None


def _members_include(members: str, n: int) -> bool:
    for part in members.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            if a[:1] == "B" and b[:1] == "B" and int(a[1:]) <= n <= int(b[1:]):
                return True
        elif part == f"B{n}":
            return True
    return False


# --------------------------------------------------------------------------- probes


def _probe(setup: _Setup, gen: np.random.Generator) -> dict[str, Any]:
    """Token accounting of one recovering trial, read-back included, at
    ``setup.budget`` (which must be large enough for the engine to admit it)."""
    from vistalab.workspace import MemoryStore

    N = setup.N
    texts = _bits_text(gen, N, setup.k)
    ws = _history(setup, texts, MemoryStore(setup.spec.root))
    raw = ws.render().candidate_tokens
    units = []
    for i in range(N):
        path = _ok(ws.call_tool(ARCHIVE_TOOL, {"block_id": _pair(i)}))
        units.append(path.rsplit("/", 1)[-1].removesuffix(".txt"))
    bid = _bid(N - 1)
    ws.register_user(f"Query: reproduce evidence block {N} ({bid}) exactly.")
    r = ws.render()
    handles = [r.prompt_tokens[u] for u in units]
    found = _find_handle(r, bid)
    assert found is not None, "the probe's handles must be visible"
    args = {"path": found[0], "selector": f"member={bid}"}
    ws.register_tool_call([{"id": "read_1", "type": "function", "function": {
        "name": READ_PATH_TOOL, "arguments": json.dumps(args)}}])
    ws.register_tool_result("read_1", ws.dispatch(READ_PATH_TOOL, args))
    after = ws.render().candidate_tokens
    return {
        "raw_history_tokens": raw,
        "archived_tokens": r.candidate_tokens,
        "handle_tokens": float(np.mean(handles)),
        "handle_tokens_total": int(sum(handles)),
        "instruction_tokens": r.candidate_tokens - int(sum(handles)),
        "block_tokens": message_tokens({"role": "tool", "content": texts[-1]}, setup.tok),
        # The read-back's whole footprint: its call, its result and their ledger rows.
        "read_tokens": after - r.candidate_tokens,
        "floor_tokens": ws.management_floor(),
    }


def _largest_keep(setup: _Setup, gen: np.random.Generator) -> int:
    """Largest b (keep-bits) or s (keep-blocks) whose rendering, with the query,
    still fits the budget (bisection on a probe history)."""
    from vistalab.workspace import MemoryStore

    texts = _bits_text(gen, setup.N, setup.k)
    top = setup.k if setup.strategy == "keep-bits" else setup.N

    def fits(v: int) -> bool:
        probe = _Setup(setup.N, setup.k, setup.budget, setup.strategy, setup.tok, setup.spec, v)
        ws = _history(probe, texts, MemoryStore(setup.spec.root))
        _act(probe, ws, texts)
        ws.register_user(f"Query: reproduce evidence block {setup.N} ({_bid(setup.N - 1)}) "
                         "exactly.")
        return ws.mode == "normal"

    if not fits(0):
        return 0
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


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
        """The array mode's JSON document plus the engine's numbers."""
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
        dashboard and conversation). Must hold the engine's overflow
        rendering (about 1,300 tokens with cl100k_base).
    strategy : {"recover", "delete", "keep-bits", "keep-blocks"}
    trials : int
    rng : None, int, SeedSequence or Generator
        Seed of the run; recorded in the result.
    store : {"memory", "disk"}
        Payload store (``store_dir``: disk folder, default a temporary one).
        Handles show the payload path, so token costs depend on the folder:
        pass ``store_dir`` for token counts that repeat across runs.
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
                      include_read_path_tool=True).register_user(_TASK)
            probe = _probe(_Setup(N, k, max(budget, 1 << 20), strategy, tok, spec, 0),
                           stream(seed, 2))
        except WorkspaceError as exc:
            raise DomainError("budget", budget, "must hold the engine's fixed rendering",
                              f"raise the budget ({exc})") from None
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


# --------------------------------------------------------------------------- handle cost


@dataclass(frozen=True)
class HandleCostFit:
    """Handle cost of the engine as N grows, fitted to theory's c0 log2 N.

    Attributes
    ----------
    N : tuple of int
        Block counts measured.
    handle_tokens : tuple of float
        Mean prompt tokens of one archive handle with N blocks archived.
    c0 : float
        Least-squares fit of ``handle_tokens = c0 log2 N`` (through the
        origin, theory's model), in tokens per log2 N (N >= 2 only).
    c0_residual_max : float
        Largest |measured - c0 log2 N| in tokens.
    intercept, slope : float
        Affine fit ``intercept + slope log2 N``: the engine's handle is mostly
        a constant (tag, level, size, checksum, folder) plus the ID and file
        name, whose digits grow like log N.
    affine_residual_max : float
    tokenizer, store_root : str
    k : int
        Bits per block used for the measurement.
    """

    N: tuple[int, ...]
    handle_tokens: tuple[float, ...]
    c0: float
    c0_residual_max: float
    intercept: float
    slope: float
    affine_residual_max: float
    tokenizer: str
    store_root: str
    k: int

    def to_dict(self) -> dict[str, Any]:
        return {"N": list(self.N), "handle_tokens": list(self.handle_tokens), "c0": self.c0,
                "c0_residual_max": self.c0_residual_max, "intercept": self.intercept,
                "slope": self.slope, "affine_residual_max": self.affine_residual_max,
                "tokenizer": self.tokenizer, "store_root": self.store_root, "k": self.k}


def _n_values_iv(N_values: Any, *, hi: int) -> list[int]:
    """A non-empty collection of block counts 2 <= N <= hi, sorted and distinct."""
    values = np.asarray(N_values, dtype=object) if not isinstance(N_values, (str, bytes)) \
        else np.asarray([N_values], dtype=object)
    items = list(np.atleast_1d(values).ravel()) if values.ndim <= 1 else None
    if items is None or not items:
        raise DomainError("N_values", N_values, f"must be a non-empty list of integers "
                          f"2 <= N <= {hi}", "pass e.g. (4, 16, 64)")
    out = set()
    for v in items:
        try:
            out.add(as_int("N_values", v, lo=2, hi=hi,
                           rule=f"must hold integers 2 <= N <= {hi}", fix="pass e.g. (4, 16, 64)"))
        except DomainError:
            raise DomainError("N_values", N_values, f"must hold integers 2 <= N <= {hi}",
                              "pass e.g. (4, 16, 64)", context=f"bad entry {v!r}") from None
    return sorted(out)


def measure_handle_cost(
    N_values: Any = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    *,
    k: int = 64,
    tokenizer: str = "cl100k_base",
    store: str = "memory",
    rng: Any = None,
) -> HandleCostFit:
    """Measure tokens per archive handle for each N and fit ``c0 log2 N``.

    Each N builds one engine history of N random k-bit blocks, archives all of
    them and reads each handle's prompt cost from the rendering.
    """
    Ns = _n_values_iv(N_values, hi=10_000)
    if len(Ns) < 2:
        raise DomainError("N_values", N_values, "must hold at least two distinct N >= 2",
                          "pass e.g. (8, 64, 512)")
    k = as_int("k", k, lo=1, hi=4096, fix="bits per block of the measurement")
    seed = root_seed(rng)
    with store_iv(store) as spec:
        return _handle_cost_fit(Ns, k, tokenizer_iv(tokenizer), spec, seed)


def _handle_cost_fit(Ns: list[int], k: int, tok: MemoTokenizer, spec: StoreSpec,
                     seed: SeedInfo) -> HandleCostFit:
    handles = []
    for i, N in enumerate(Ns):
        setup = _Setup(N, k, 1 << 30, "recover", tok, spec, 0)
        handles.append(_probe(setup, stream(seed, 0, i))["handle_tokens"])
    x = np.log2(np.asarray(Ns, dtype=float))
    y = np.asarray(handles, dtype=float)
    c0 = float(np.dot(x, y) / np.dot(x, x))
    slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
    return HandleCostFit(
        N=tuple(Ns), handle_tokens=tuple(float(v) for v in y), c0=c0,
        c0_residual_max=float(np.max(np.abs(y - c0 * x))), intercept=intercept, slope=slope,
        affine_residual_max=float(np.max(np.abs(y - intercept - slope * x))),
        tokenizer=tok.name, store_root=spec.root, k=k)


# --------------------------------------------------------------------------- feasibility


@dataclass(frozen=True)
class FeasibilityMap:
    """Smallest budget at which the engine's recovering method succeeds, per N,
    next to theory's condition ``B >= instruction + N c0 log2 N + block``.

    Attributes
    ----------
    N : tuple of int
    k : int
    engine_threshold : tuple of int
        Smallest B (tokens) at which a recovering trial succeeds (bisection
        on fixed blocks; B - 1 fails).
    theory_threshold : tuple of float
        ``instruction + N c0 log2 N + block`` with the measured instruction
        and read-back tokens and the fitted ``c0``.
    theory_threshold_measured : tuple of float
        The same condition with this N's measured handle tokens instead of
        the fit: isolates the handle model from the condition itself.
    engine_floor : tuple of int
        The engine's own minimum budget (its overflow rendering must always
        fit); where it exceeds the condition, it is what binds.
    c0 : float
        The global fit used (tokens per log2 N).
    relative_error : tuple of float
        ``|engine - max(theory, floor)| / engine`` with the fitted c0.
    relative_error_measured : tuple of float
        Same with the measured handle tokens.
    """

    N: tuple[int, ...]
    k: int
    engine_threshold: tuple[int, ...]
    theory_threshold: tuple[float, ...]
    theory_threshold_measured: tuple[float, ...]
    engine_floor: tuple[int, ...]
    c0: float
    relative_error: tuple[float, ...]
    relative_error_measured: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"N": list(self.N), "k": self.k, "engine_threshold": list(self.engine_threshold),
                "theory_threshold": list(self.theory_threshold),
                "theory_threshold_measured": list(self.theory_threshold_measured),
                "engine_floor": list(self.engine_floor), "c0": self.c0,
                "relative_error": list(self.relative_error),
                "relative_error_measured": list(self.relative_error_measured)}


def recovery_feasibility_map(
    N_values: Any = (4, 16, 64, 256),
    k: int = 256,
    *,
    tokenizer: str = "cl100k_base",
    c0: float | None = None,
    store_root: str = "mem://archive",
    rng: Any = None,
) -> FeasibilityMap:
    """Map where the engine's recovering method fits the budget, against theory.

    For each N, bisect the smallest engine budget B at which one recovering
    trial (archive all, query, read block i* back into the prompt) succeeds,
    with the blocks fixed; compare with ``theory.recovery_feasibility`` in
    token units, with ``c0`` from :func:`measure_handle_cost` over the same N
    (or the value given). The accounting probe runs at the threshold's own
    scale, since the budget's digits are part of the prompt.

    Handles show the payload path, so token costs (and the region) depend on
    the store's root: ``store_root`` is the root a run will use (the default
    is the in-memory store's; pass a :class:`workspace.DiskStore`'s ``root``
    to map the region for payloads in that folder).
    """
    Ns = _n_values_iv(N_values, hi=4096)
    k = as_int("k", k, lo=1, hi=1 << 14, fix="bits per block")
    if (not isinstance(store_root, str) or not store_root.strip() or store_root.endswith("/")
            or any(ch.isspace() or not ch.isprintable() for ch in store_root)):
        raise DomainError("store_root", store_root, "must be a payload root without a trailing "
                          "slash, whitespace or control characters",
                          "pass a store's .root, e.g. DiskStore('archive').root")
    seed = root_seed(rng)
    tok = tokenizer_iv(tokenizer)
    spec = StoreSpec("memory", store_root)
    if c0 is not None:
        c0 = as_real("c0", c0, lo=0.0, fix="tokens per log2(N) of one handle; omit it to "
                     "measure it")
    if c0 is None:
        c0 = _handle_cost_fit(Ns if len(Ns) >= 2 else [*Ns, 2 * Ns[0]], k, tok, spec,
                              root_seed(stream_seed(seed, 1))).c0
    eng, th, thm, floor, rel, relm = [], [], [], [], [], []
    for i, N in enumerate(Ns):
        budget = 1 << 30
        for _ in range(3):  # re-probe at the threshold's scale (budget digits)
            probe = _probe(_Setup(N, k, budget, "recover", tok, spec, 0), stream(seed, 2, i))
            need = probe["instruction_tokens"] + probe["handle_tokens_total"] \
                + probe["read_tokens"]
            if len(str(need)) == len(str(budget)):
                break
            budget = max(need, probe["floor_tokens"])
        cost = HandleCostModel(c0=float(c0), instruction=float(probe["instruction_tokens"]))
        t_fit = theory.recovery_feasibility(N, int(probe["read_tokens"]), 0, cost=cost).required
        cost_m = HandleCostModel(c0=probe["handle_tokens"] / math.log2(N),
                                 instruction=float(probe["instruction_tokens"]))
        t_meas = theory.recovery_feasibility(N, int(probe["read_tokens"]), 0,
                                             cost=cost_m).required
        b = _engine_threshold(N, k, tok, spec, stream_seed(seed, 2, i), start=int(t_meas))
        eng.append(b)
        th.append(float(t_fit))
        thm.append(float(t_meas))
        floor.append(int(probe["floor_tokens"]))
        rel.append(abs(b - max(t_fit, floor[-1])) / b)
        relm.append(abs(b - max(t_meas, floor[-1])) / b)
    return FeasibilityMap(N=tuple(Ns), k=k, engine_threshold=tuple(eng),
                          theory_threshold=tuple(th), theory_threshold_measured=tuple(thm),
                          engine_floor=tuple(floor), c0=float(c0), relative_error=tuple(rel),
                          relative_error_measured=tuple(relm))


def stream_seed(seed: SeedInfo, *key: int) -> np.random.SeedSequence:
    """The SeedSequence of sub-stream ``key`` (:func:`vistalab._core.child_seq`)."""
    return _stream_seq(seed, *key)


def _engine_threshold(N: int, k: int, tok: MemoTokenizer, spec: StoreSpec,
                      seq: np.random.SeedSequence, *, start: int) -> int:
    """Smallest budget at which one fixed recovering trial succeeds (the same
    blocks and query as the accounting probe)."""

    def ok(budget: int) -> bool:
        setup = _Setup(N, k, budget, "recover", tok, spec, 0)
        try:
            return _fixed_trial(setup, seq)
        except WorkspaceError:  # below the engine's own floor
            return False

    hi = max(2, start)
    while not ok(hi):
        hi *= 2
    lo = hi // 2
    while lo > 1 and ok(lo):
        lo //= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _fixed_trial(setup: _Setup, seq: np.random.SeedSequence) -> bool:
    """One recovering trial on the blocks of ``stream(seq)`` with the last block
    queried (the probe's case)."""
    from vistalab.workspace import MemoryStore

    gen = np.random.default_rng(seq)
    texts = _bits_text(gen, setup.N, setup.k)
    ws = _history(setup, texts, MemoryStore(setup.spec.root))
    _act(setup, ws, texts)
    return _answer_recover(ws, setup.N - 1, texts[-1]).success
