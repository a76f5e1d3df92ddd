"""Thread safety: for each batch of 16 parallel tool calls,
16 threads register the results at once while other threads render and
archive; every rendering stays within the budget, and at the end the engine's
incremental counts, ledger sums and hash equal a recount from scratch (paper,
eq. workspace-render and preflight)."""

from __future__ import annotations

import sys
import threading

from vistalab.workspace import (
    Status,
    Workspace,
    WorkspaceError,
    count_request_tokens,
    message_tokens,
)

THREADS = 16
BATCHES = 12


def _check(ws: Workspace) -> None:
    assert ws.recompute_state_hash() == ws.state_hash()
    r = ws.render()
    assert count_request_tokens(r.messages, r.tools, ws.tokenizer) == r.tokens <= r.budget
    conv = sum(ws._pos_cost[b.seq - 1] for b in ws.blocks if b.type.value != "system")
    assert ws._conv_cost == conv
    assert (ws._ledger.piece_tokens, ws._ledger.archived_rows) == ws._ledger.recount()
    assert message_tokens(r.messages[-1], ws.tokenizer) == r.dashboard_tokens


def test_concurrent_registrations_renders_and_archives_keep_the_invariants():
    """Each public call is one whole transition under the workspace's lock;
    thread switches are forced every microsecond to make interleavings likely."""
    ws = Workspace(400_000, tokenizer="approx")
    ws.register_user("task")
    errors: list[BaseException] = []
    over: list[int] = []
    stop = threading.Event()

    def renderer() -> None:
        try:
            while not stop.is_set():
                r = ws.render()
                if r.tokens > r.budget:
                    over.append(r.tokens)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def archiver() -> None:
        try:
            while not stop.is_set():
                live = [b.id for b in ws.blocks if b.status is Status.VISIBLE]
                if not live:
                    continue
                try:
                    ws.archive(live[len(live) // 2])
                except WorkspaceError:
                    pass  # another thread changed it first: refused, nothing changed
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def result(cid: str, k: int) -> None:
        try:
            ws.register_tool_result(cid, f"worker {k} result " * (5 + k * 3))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    side = [threading.Thread(target=renderer) for _ in range(2)] + [
        threading.Thread(target=archiver)
    ]
    try:
        for t in side:
            t.start()
        for b in range(BATCHES):
            calls = [
                {
                    "id": f"b{b}_{k}",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                }
                for k in range(THREADS)
            ]
            ws.register_tool_call(calls)
            workers = [
                threading.Thread(target=result, args=(c["id"], k)) for k, c in enumerate(calls)
            ]
            for t in workers:
                t.start()
            for t in workers:
                t.join()
    finally:
        stop.set()
        for t in side:
            t.join()
        sys.setswitchinterval(old)
    assert errors == [] and over == []
    assert len(ws.blocks) == 1 + BATCHES * (THREADS + 1)
    _check(ws)
    again = Workspace.replay(ws.events)
    assert again.state_hash() == ws.state_hash()


def test_rendered_messages_cannot_be_corrupted_by_the_caller():
    """A caller editing a rendered message in place gets a TypeError, and the
    next rendering is unchanged; copies are ordinary, editable dicts."""
    import copy
    import pickle

    import pytest

    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    ws.register_tool_call(
        [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    )
    ws.register_tool_result("c", "result")
    r = ws.render()
    call = next(m for m in r.messages if m.get("tool_calls"))
    for edit in (
        lambda: r.messages[1].__setitem__("content", "hacked"),
        lambda: r.messages[1].update(content="hacked"),
        lambda: call["tool_calls"].append({}),
        lambda: call["tool_calls"][0]["function"].__setitem__("arguments", "{}{}"),
        lambda: r.tools[0]["function"].__setitem__("name", "x"),
    ):
        with pytest.raises(TypeError, match="read-only"):
            edit()
    again = ws.render()
    assert again.messages == r.messages and again.tokens == r.tokens
    for c in (copy.deepcopy(call), pickle.loads(pickle.dumps(call)), r.as_request()["messages"][2]):
        c["content"] = "mine"
        assert type(c) is dict
    assert ws.render().messages == r.messages
