"""One engine trial of the recovery task T_{N,k}: the history of tool results, each
strategy's context actions, the query and the read-back; and the token-accounting probes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.workspace import (
    ARCHIVE_TOOL,
    DELETE_TOOL,
    READ_PATH_TOOL,
    ToolOutcome,
    Workspace,
    find_handles,
    message_tokens,
)

from ._engine_common import MemoTokenizer, StoreSpec, remove_trial_payloads

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
    # keep_pending=False: the recovery task's thresholds (Prop. 1, App. B) are the
    # floor with no call waiting, the configuration the engine's Coq model covers; the
    # default also reserves room for a waiting batch (Workspace.call_floor), which
    # moves the measured threshold by that reserve.
    ws = Workspace(setup.budget, tokenizer=setup.tok, store=store, hard_limit=setup.hard_limit,
                   task_tools=_TASK_TOOLS, include_read_path_tool=True, keep_pending=False)
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
    try:
        return _play(setup, gen, ws, texts, target)
    finally:
        if setup.spec.kind == "disk":  # one folder for the run: free the trial's IDs
            remove_trial_payloads(ws)


def _play(setup: _Setup, gen: np.random.Generator, ws: Workspace, texts: list[str],
          target: int) -> _TrialOutcome:
    k = setup.k
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
    # a visible handle's path must read back: a failure is an engine bug, not a
    # failed trial, so it raises instead of lowering the success rate
    text = _ok(ws.call_tool(READ_PATH_TOOL, args))
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
    ws.register_tool_result("read_1", _ok(ws.call_tool(READ_PATH_TOOL, args)))
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
