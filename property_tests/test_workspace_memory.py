"""What a block costs the engine in memory, and the compact forms that keep it
low behaving exactly as the plain ones (paper, "Implementation Details": the
workspace keeps the whole history, every block and every event, so a long
session's state is held for as long as the session runs).

The engine's own event log keeps a state hash's inputs instead of its hex
text and a registration's message instead of an argument dict, in columns
(an entry read is built as its Event); the position trees hold flat integer
columns; the record digests a flat byte column. Each
is checked here against the plain form it stands for, and the bytes one
block holds (``tracemalloc``, a deterministic count) against a bound."""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import pickle
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vistalab.workspace import Event, Workspace, WorkspaceError, read_event_log
from vistalab.workspace._frozen import FrozenDict, freeze_messages
from vistalab.workspace._hashing import Digests, accumulate
from vistalab.workspace._seqtree import PrefixTree

_CALL = [{"id": "c1", "type": "function", "function": {"name": "query", "arguments": "{}"}}]


def _session(log_path: str | None = None) -> Workspace:
    ws = Workspace(20_000, tokenizer="approx", log_path=log_path)
    ws.register_messages([
        {"role": "system", "content": "You are careful."},
        {"role": "user", "content": "Find the county."},
    ])
    for i in range(6):
        ws.register_tool_call([dict(_CALL[0], id=f"c{i}")], content="Looking." if i else None)
        ws.register_tool_result(f"c{i}", f"result {i} " * 20)
    ws.archive("B3-B4", "the first query")
    ws.archive("B7")
    with pytest.raises(WorkspaceError):  # a refused action is logged too
        ws.archive("B999")
    return ws


def test_logged_events_equal_the_plain_events_of_their_log_file(tmp_path):
    """Each event the engine holds equals (both ways) the plain Event its log
    line reads back as, serialises to that very line, and its copies, pickles
    and ``dataclasses.replace`` results are plain Events equal to it."""
    path = tmp_path / "events.jsonl"
    ws = _session(str(path))
    ws.close()
    lines = path.read_text().splitlines()
    from_file = list(read_event_log(path))
    held = ws.events
    assert len(held) == len(from_file) == len(lines) > 10
    for ev, plain, line in zip(held, from_file, lines, strict=True):
        assert type(plain) is Event
        assert ev == plain and plain == ev and not ev != plain
        assert ev.to_json() == line == plain.to_json()
        assert ev.to_plain() == plain.to_plain()
        same = Event(**{f.name: getattr(ev, f.name) for f in dataclasses.fields(Event)})
        assert repr(ev) == repr(same) and same == ev
        assert ev.state_hash == plain.state_hash and ev.args == plain.args
        for other in (copy.copy(ev), copy.deepcopy(ev), pickle.loads(pickle.dumps(ev)),
                      dataclasses.replace(ev)):
            assert type(other) is Event and other == ev
        assert dataclasses.asdict(ev) == plain.to_plain()
        changed = dataclasses.replace(ev, ok=not ev.ok)
        assert type(changed) is Event and changed != ev
    assert held[-1].state_hash == ws.state_hash()


def test_a_logged_event_differs_from_a_plain_one_with_another_hash():
    """Equality reads the hash: a plain copy with another state hash is unequal."""
    ev = _session().events[-1]
    other = Event.from_plain(dict(ev.to_plain(), state_hash="0" * 64))
    assert ev != other and other != ev


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40),
                          st.one_of(st.none(), st.integers(-60, 300))), max_size=80),
       st.integers(0, 2**32))
def test_prefix_tree_matches_a_plain_list(ops, seed):
    """The flat-column tree answers as a walk over a plain list of the values:
    totals, the first position whose running total reaches a need (with the
    running total there), the non-empty positions and each value, through
    appends, single and batched sets and copies (values may be negative)."""
    rng = random.Random(seed)
    tree, ref = PrefixTree(), []
    for kind, pos, value in ops:
        if kind == 0 or not ref:
            tree.append(value)
            ref.append(value)
        elif kind == 1:
            tree.set(pos % len(ref), value)
            ref[pos % len(ref)] = value
        elif kind == 2:
            items = [(rng.randrange(len(ref)), rng.choice([None, rng.randint(-60, 300)]))
                     for _ in range(rng.randint(1, 20))]
            tree.set_many(items)
            for i, v in items:
                ref[i] = v
        else:
            tree = tree.copy()
        lo = rng.randint(0, len(ref))
        hi = rng.randint(lo, len(ref))
        need = rng.randint(-100, 1500)
        assert tree.total(lo, hi) == sum(v or 0 for v in ref[lo:hi])
        acc, want = 0, (None, sum(v or 0 for v in ref[lo:hi]))
        for j in range(lo, hi):
            if ref[j] is not None:
                acc += ref[j]
                if acc >= need:
                    want = (j, acc)
                    break
        assert tree.first_reaching(lo, hi, need) == want
        assert list(tree.positions(lo, hi)) == [j for j in range(lo, hi) if ref[j] is not None]
        assert [tree.value(i) for i in range(len(ref))] == ref


def test_digest_column_keeps_the_accumulator_of_the_records():
    """After registrations, an archive, a restore and a fork, the accumulator
    kept through the digest column equals the one recomputed from the
    records, in the workspace and in its fork (which has its own column)."""
    ws = _session()
    ws.restore("G1")
    fork = ws.fork()
    fork.archive("B5-B6")
    fork.delete("B7", "not needed")
    for w in (ws, fork):
        records = [*w._blocks, *w._groups.values()]
        assert w._acc == accumulate(records)
        assert w.state_hash() == w.recompute_state_hash()
    assert isinstance(ws._digests, Digests) and fork._digests is not ws._digests


def _traced_bytes_per_block(n_blocks: int) -> tuple[float, int]:
    """Bytes ``tracemalloc`` sees the engine keep per block of a tool-calling
    history (the benchmark's memory row, counted instead of read from RSS),
    and the history's JSON bytes."""
    msgs = [{"role": "system", "content": "You are a careful data analysis agent."},
            {"role": "user", "content": "Find the county with the largest income growth."}]
    i = 0
    while len(msgs) + 2 <= n_blocks:
        cid = f"call_{i}"
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "query", "arguments": json.dumps({"page": i})}}]})
        msgs.append({"role": "tool", "tool_call_id": cid,
                     "content": f"page {i}: row estimate state population median county {i * 7}"})
        i += 1
    wire = json.dumps(msgs)
    js = sum(len(json.dumps(m)) for m in msgs)
    del msgs
    Workspace(10_000_000, tokenizer="approx").register_messages(json.loads(wire)[:40])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ws = Workspace(10_000_000, tokenizer="approx")
        ws.register_messages(json.loads(wire))
        del wire
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert ws.turn > 0
    return held / n_blocks, js


def test_engine_bytes_per_block_stay_bounded():
    """A 4,000-block history costs the engine at most 850 bytes per block
    as tracemalloc counts them (808 now; 914 before the position trees kept
    their nodes per bucket of 16 positions, the dashboard's age table its
    texts only once rendered and a call's one result its ID string instead of
    a list; 1,188 before block digests were held
    as raw bytes, ledger rows as column cells by block number, rows per turn
    as a list and a block's rare fields and visible call IDs without slots of
    their own; 1,365 before the event log became columns and the position
    trees dropped their count column and leaf sums; 2,045 before positions
    held their records instead of rendered messages, registration events
    their parts and ledger rows their standard texts by what they are made
    from; 2,613 before the compact event records, trees, digest column and
    shared ID strings; the messages' own JSON is about 140 bytes per block
    here)."""
    per_block, js = _traced_bytes_per_block(4_000)
    assert per_block <= 850, f"{per_block:,.0f} B per block ({per_block * 4_000 / js:.1f}x JSON)"


def _eager_messages(ws: Workspace, i: int) -> tuple:
    b = ws._blocks[i]
    return freeze_messages(ws._position_messages(b, ws._position_key(b)))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 40)), max_size=30))
def test_positions_read_as_the_messages_they_stand_for(ops):
    """Each position reads as the read-only messages the layout gives its
    block (the same keys in the same order), through registrations, archives,
    restores, offloads, deletions and forks; a record not read yet is the
    block itself, and once read a position returns the very same objects."""
    ws = Workspace(6_000, tokenizer="approx")
    ws.register_messages([{"role": "system", "content": "sys"},
                          {"role": "user", "content": "task"}])
    for k, (op, n) in enumerate(ops):
        live = [b.id for b in ws.blocks if b.status.value in ("visible", "archived")
                and b.type.value != "system" and b.seq > 2]
        try:
            if op <= 2 or not live:
                cid = f"c{k}"
                ws.register_tool_call([dict(_CALL[0], id=cid)], content=None if op else "x")
                ws.register_tool_result(cid, "row " * (n * (30 if op == 2 else 1)))
            elif op == 3:
                ws.archive(live[n % len(live)], "done")
            elif op == 4:
                ws.restore(live[n % len(live)])
            else:
                ws.delete(live[n % len(live)], "not needed")
        except WorkspaceError:
            pass
        if k % 7 == 6:
            ws = ws.fork()
    pos = ws._pos_msgs
    for i in range(len(pos)):
        held = pos.held(i)
        assert type(held) is tuple or held is ws._blocks[i]
        want = _eager_messages(ws, i)
        got = pos[i]
        assert got == want and [list(m) for m in got] == [list(m) for m in want]
        assert all(type(m) is FrozenDict for m in got) and pos[i] is got
    assert list(pos) == [pos[i] for i in range(len(pos))]


def test_ledger_rows_keep_a_text_they_cannot_remake():
    """A row given texts other than the standard ones keeps them as given; a
    standard one holds its unit's ID and reads back the same text."""
    ws = _session()
    uid, row = next((u, r) for u, r in ws._ledger.rows.items() if r.parent != "-")
    assert tuple.__getitem__(row, 5) is uid and type(tuple.__getitem__(row, 6)) is bool
    text = row.prefix, row.suffix
    ws._ledger.put(uid, row._replace(prefix=text[0], suffix=text[1]), ws.turn)
    assert tuple.__getitem__(ws._ledger.rows[uid], 5) is uid
    assert (ws._ledger.rows[uid].prefix, ws._ledger.rows[uid].suffix) == text
    odd = row._replace(prefix=f"{uid:<5}  9,999", suffix="  other  -  visible\n")
    ws._ledger.put(uid, odd, ws.turn)
    assert ws._ledger.rows[uid].prefix == f"{uid:<5}  9,999"
    assert ws._ledger.rows[uid].suffix == "  other  -  visible\n"


def test_event_columns_read_back_the_events_stored():
    """The columnar log reads back, at every index and slice, events equal (and
    serialising the same) to those stored, through appends with consecutive or
    other sequence numbers and config digests, stores over old entries, copies
    and a clear; a copy is independent of later changes to its source."""
    from vistalab.workspace._events import CallParts, EventColumns, logged_event
    from vistalab.workspace._records import ToolCall

    ws = _session()
    calls = (ToolCall("c9", "query", "{}"),)
    made = [
        logged_event(0, "init", {"config": {"budget": 1}}, True, "", {}, (7, 0, 0)),
        logged_event(
            1, "register", {"message": CallParts(("x", calls))}, True, "B1", {}, (7, 1, 2**256 - 1)
        ),
        logged_event(
            2,
            "register",
            {"message": {"role": "tool", "tool_call_id": "c9", "content": "r"}},
            True,
            "B2",
            {},
            (7, 1, 5),
        ),
        logged_event(3, "archive", {"ids": "B1-B2"}, False, "no", {"why": 1}, (7, 1, 5)),
    ]
    col, ref = EventColumns(), []
    for ev in made:
        col.append(ev)
        ref.append(ev)
    odd = logged_event(9, "read", {"id": "B1"}, True, "B1.txt", {}, (8, 4, 3))
    col.append(odd)  # another sequence number and config digest: kept as given
    ref.append(odd)
    snap = col.copy()
    col[1] = logged_event(
        1, "register", {"message": {"role": "user", "content": "u"}}, True, "B1", {}, (7, 2, 11)
    )
    ref[1] = col[1]
    for log, want in ((col, ref), (snap, [*made, odd])):
        assert len(log) == len(want)
        for k in range(-len(want), len(want)):
            assert log[k] == want[k] and log[k].to_json() == want[k].to_json()
            assert log[k].state_hash == want[k].state_hash
        assert list(log) == want and log[1:4] == want[1:4] and log[::-2] == want[::-2]
        with pytest.raises(IndexError):
            log[len(want)]
    col.clear()
    assert len(col) == 0 and list(col) == [] and len(snap) == 5
    for ev in ws.events:
        col.append(ev)
    assert tuple(col) == ws.events


def test_prefix_tree_matches_a_plain_list_across_full_buckets():
    """As above on trees of up to 600 positions (every bucket of 16 full, so
    searches read the nodes above whole buckets up to the root), each update
    followed by the whole range's total and search."""
    rng = random.Random(3)
    for n in (16, 31, 32, 128, 129, 256, 600):
        tree, ref = PrefixTree(), []
        for _ in range(n):
            v = rng.choice([None, rng.randint(-5, 40)])
            tree.append(v)
            ref.append(v)
        for _ in range(60):
            i = rng.randrange(n)
            ref[i] = rng.choice([None, rng.randint(-5, 40)])
            tree.set(i, ref[i])
            need = rng.randint(0, 30 * n)
            acc, want = 0, None
            for j, v in enumerate(ref):
                if v is not None:
                    acc += v
                    if acc >= need:
                        want = (j, acc)
                        break
            assert tree.total(0, n) == sum(v or 0 for v in ref)
            assert tree.first_reaching(0, n, need) == (want or (None, acc))
