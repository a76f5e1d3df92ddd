"""Workspace.fork: an independent copy of the engine state (paper, Methodology:
"Workspace invariants", eq. workspace-render; DESIGN.md rule 8, state changes
are explicit transitions on frozen records and the state replays to the same
canonical hash), and the counterfactual fork that substitutes the text of plain
messages, which must equal registering that history from scratch."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    BlockStateError,
    BudgetConfigError,
    DiskStore,
    MemoryStore,
    UnknownBlockError,
    Workspace,
    WorkspaceArgumentError,
)

BUDGET = 3000


def _call(cid: str) -> list[dict]:
    return [{"id": cid, "type": "function", "function": {"name": "fetch", "arguments": "{}"}}]


def _busy(store=None, tokenizer="cl100k_base") -> Workspace:
    """A workspace with every kind of unit: pinned, visible, archived, nested group,
    tool traffic."""
    ws = Workspace(BUDGET, tokenizer=tokenizer, store=store)
    ws.register_system("You are a test agent.")
    ws.register_user("Task: keep evidence recoverable.")
    for i in range(6):
        ws.register_tool_call(_call(f"c{i}"), content=f"query {i}")
        ws.register_tool_result(f"c{i}", f"row {i}, value {i * 37}\n" * (5 + 3 * i))
    ws.register_assistant("Interim summary.")
    ws.archive("B4")
    ws.archive("B5-B8", "pages 1-2")
    ws.archive("G1,B9-B10", "pages 1-3")
    return ws


def _same(a: Workspace, b: Workspace) -> None:
    assert a.state_hash() == b.state_hash() == a.recompute_state_hash()
    assert a.render() == b.render()
    assert [e.to_plain() for e in a.events] == [e.to_plain() for e in b.events]
    assert a.store.keys() == b.store.keys()
    for blk in a.blocks:
        assert a.recover(blk.id) == b.recover(blk.id)


def test_fork_is_an_equal_and_independent_copy():
    """Workspace invariants: the copy renders, hashes and recovers exactly as the original;
    afterwards each evolves alone (archive, restore, registration, delete)."""
    ws = _busy()
    before = (ws.state_hash(), ws.render(), ws.store.keys(), len(ws.events))
    f = ws.fork()
    _same(f, ws)
    assert isinstance(f.store, MemoryStore) and f.store is not ws.store
    f.archive("B12-B13", "later pages")
    f.restore("G2")
    f.register_user("A new question.")
    f.delete("B14", "not needed")
    assert (ws.state_hash(), ws.render(), ws.store.keys(), len(ws.events)) == before
    assert f.state_hash() != ws.state_hash()
    # Both logs replay to their own state.
    assert Workspace.replay(f.events).state_hash() == f.state_hash()
    assert Workspace.replay(ws.events).state_hash() == ws.state_hash()
    # The original keeps working too, and the fork does not see it.
    ws.archive("B12", "")
    assert "B12.txt" not in f.store.keys()


def test_fork_payload_store_rules(tmp_path):
    """Implementation details (payload store): a fork's handles show the same paths, so its
    store must have the same root; payloads on disk are copied into the store given."""
    disk = DiskStore(tmp_path / "archive")
    ws = _busy(store=disk)
    with pytest.raises(WorkspaceArgumentError, match=r"`store` must be given to fork a "
                                                     r"workspace whose payloads are in DiskStore"):
        ws.fork()
    with pytest.raises(WorkspaceArgumentError, match=r"must have the root .* of the workspace "
                                                     r"it copies"):
        ws.fork(store=MemoryStore("mem://elsewhere"))
    with pytest.raises(WorkspaceArgumentError, match=r"must implement the PayloadStore"):
        ws.fork(store=object())
    mem = ws.fork(store=MemoryStore(disk.root))
    _same(mem, ws)
    shared = ws.fork(store=disk)
    assert shared.store is disk and shared.state_hash() == ws.state_hash()


def test_event_count_and_events_since():
    """Event log (append-only): events_since(k) is the log's tail from sequence number k,
    event_count the next sequence number."""
    ws = _busy()
    n = ws.event_count
    assert n == len(ws.events)
    ws.archive("B12", "")
    assert ws.event_count == n + 1
    tail = ws.events_since(n)
    assert len(tail) == 1 and tail[0].op == "archive" and tail[0].seq == n
    assert ws.events_since(0) == ws.events
    with pytest.raises(WorkspaceArgumentError, match=r"`seq` must be a non-negative integer"):
        ws.events_since(-1)


_TEXT = st.text(st.sampled_from("ab c.\n日é0123"), min_size=0, max_size=60)
_MSG = st.tuples(st.sampled_from(["user", "assistant", "system"]), _TEXT)


@given(
    msgs=st.lists(_MSG, min_size=1, max_size=12),
    data=st.data(),
    tokenizer=st.sampled_from(["cl100k_base", "approx"]),
)
def test_substituted_fork_equals_registering_that_history(msgs, data, tokenizer):
    """DESIGN.md rule 8 (the state replays to the same canonical hash): a fork with some
    plain messages' texts substituted has exactly the state, log, rendering and preflight
    of a workspace that registered the edited messages from scratch."""

    def build(texts):
        ws = Workspace(BUDGET, tokenizer=tokenizer)
        for (role, _), text in zip(msgs, texts, strict=True):
            ws.register_message({"role": role, "content": text})
        return ws

    original = [t for _, t in msgs]
    picks = data.draw(st.sets(st.integers(0, len(msgs) - 1), min_size=1, max_size=3))
    edited = list(original)
    for i in picks:
        edited[i] = data.draw(_TEXT)
    ws = build(original)
    ws.render()  # warm caches: the fork must not reuse stale ones
    before = ws.state_hash()
    f = ws.fork(substitute={f"B{i + 1}": edited[i] for i in picks})
    ref = build(edited)
    assert f.mode == ref.mode
    assert f.render() == ref.render()
    assert f.state_hash() == ref.state_hash() == f.recompute_state_hash()
    assert [e.to_plain() for e in f.events] == [e.to_plain() for e in ref.events]
    assert ws.state_hash() == before
    assert Workspace.replay(f.events).state_hash() == f.state_hash()


def test_substituted_fork_acts_like_the_fresh_workspace():
    """Eq. overflow and the archive contract on a counterfactual fork: archives free the same
    tokens, preflight switches at the same point, and the log written after the fork (read
    before the old events are rewritten) equals the fresh workspace's."""
    texts = [f"evidence {i}: " + "word " * (8 + 5 * i) for i in range(8)]

    def build(big):
        ws = Workspace(1800, tokenizer="cl100k_base")
        ws.register_user("Task: answer from the evidence.")
        for i, t in enumerate(texts):
            ws.register_user(big if i == 3 else t)
        return ws

    big = "bulky evidence: " + "filler " * 400
    light = build(texts[3])
    f, ref = light.fork(substitute={"B5": big}), build(big)
    k = f.event_count
    assert k == ref.event_count
    for bid in ("B3", "B5", "B7"):
        assert f.archive(bid).freed_tokens == ref.archive(bid).freed_tokens
        assert f.mode == ref.mode
    assert [e.to_plain() for e in f.events_since(k)] == [e.to_plain() for e in ref.events_since(k)]
    assert f.recover("B5") == big.encode() and f.state_hash() == ref.state_hash()


def test_substitute_refuses_what_could_have_changed_the_history():
    """Budget guard and actions (eq. overflow, Algorithm 1): a substitution is refused when an
    engine decision after the block's registration may depend on its text (a tool result
    through the guard, any action), or when the block is not a plain message in the prompt;
    nothing changes."""
    ws = Workspace(BUDGET)
    ws.register_user("Task.")
    ws.register_user("Some evidence.")
    ws.register_tool_call(_call("c1"))
    ws.register_tool_result("c1", "result")
    ws.register_user("More evidence.")
    state = ws.state_hash()
    with pytest.raises(BlockStateError, match=r"B2 cannot be substituted: the tool result "
                                              r"registered at event 4 came after"):
        ws.fork(substitute={"B2": "other"})
    with pytest.raises(BlockStateError, match=r"is a tool_result; only system, user and "
                                              r"assistant messages"):
        ws.fork(substitute={"B4": "other"})
    with pytest.raises(UnknownBlockError, match=r"B99"):
        ws.fork(substitute={"B99": "other"})
    with pytest.raises(WorkspaceArgumentError, match=r"`substitute` must map block IDs to text"):
        ws.fork(substitute=["B5"])
    with pytest.raises(WorkspaceArgumentError, match=r"`substitute` must be a string"):
        ws.fork(substitute={"B5": 7})
    ok = ws.fork(substitute={"B5": "Changed evidence."})  # after the tool traffic: allowed
    assert ok.block("B5").content == "Changed evidence."
    ws.archive("B5", "")
    with pytest.raises(BlockStateError, match=r"B5 is archived, not in the prompt"):
        ws.fork(substitute={"B5": "x"})
    ws.register_user("Late question.")
    with pytest.raises(BlockStateError, match=r"the archive at event 6 came after"):
        ws.fork(substitute={"B2": "x"})
    assert ws.block("B2").content == "Some evidence."
    assert ws.fork(substitute={"B6": "Other question."}).block("B6").content == "Other question."
    state = ws.state_hash()
    assert ws.fork().state_hash() == state


def test_substituted_pinned_text_must_leave_room_for_management():
    """Eq. overflow: pinned blocks are always rendered, so a substituted pinned text may not
    push the management rendering past the budget (the same rule as registration)."""
    ws = Workspace(1500)
    ws.register_user("Task.")  # pinned
    with pytest.raises(BudgetConfigError, match=r"register the substituted pinned text "
                                                r"unpinned or raise the budget"):
        ws.fork(substitute={"B1": "long task " * 2000})


def test_fork_copies_every_mutable_container_by_name():
    """``fork`` copies the containers named in MUTABLE_STATE (plus the ledger,
    the children lists and the lock): every list, dict or set attribute of a
    workspace is named there, so a new container cannot be shared by accident."""
    from vistalab.workspace._events import EventColumns
    from vistalab.workspace._positions import PositionMessages
    from vistalab.workspace._state import MUTABLE_STATE

    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    kinds = (list, dict, set, bytearray, PositionMessages, EventColumns)
    containers = {k for k, v in vars(ws).items() if type(v) in kinds}
    assert containers == set(MUTABLE_STATE)
    f = ws.fork()
    for name in MUTABLE_STATE:
        assert getattr(f, name) is not getattr(ws, name)
        assert type(getattr(f, name)) is type(getattr(ws, name))
    assert f._ledger is not ws._ledger and f._lock is not ws._lock
