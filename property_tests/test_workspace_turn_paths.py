"""The short-session turn's shortcuts give what the general paths give (paper,
Implementation Details, "Dashboard format" and the workspace loop): a new
block's record written slot by slot equals the dataclass's, a ledger row that
names a parent is counted as its whole text is, the newest run of rendered
positions kept joined between renderings is what the positions render now, and
the normal rendering written slot by slot is the dataclass's with its columns.
"""

from __future__ import annotations

import hashlib
import pickle
from itertools import chain

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import Workspace, get_tokenizer
from vistalab.workspace._dashboard import DashboardConfig, DashboardRenderer
from vistalab.workspace._records import Block, BlockType, Status, ToolCall, fresh_block
from vistalab.workspace._results import Rendering, normal_rendering, with_token_columns
from vistalab.workspace._store import sha256_hex

_ids = st.integers(1, 10**7).map(lambda n: f"B{n}")
_word = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8)


def _slots(b: Block) -> list[object]:
    """Every slot of ``b`` as stored (the call IDs and digest as held, not read)."""
    out = []
    for name in Block.__slots__:
        d = Block.__dict__[name]
        raw = getattr(d, "raw", None)
        out.append(raw(b, Block) if raw is not None else d.__get__(b, Block))
    return out


@given(
    data=st.binary(max_size=64),
    calls=st.none() | st.lists(st.tuples(_word, _word, _word), max_size=3),
    parent=st.none() | _ids,
    name=st.none() | _word,
    tokens=st.integers(0, 10**6),
)
def test_fresh_block_is_the_dataclass_record(data, calls, parent, name, tokens):
    tool_calls = None if calls is None else tuple(ToolCall(*c) for c in calls)
    ids = tuple(c.id for c in tool_calls) if tool_calls else ()
    names = tuple(c.name for c in tool_calls) if tool_calls else ()
    kind = BlockType.TOOL_CALL if tool_calls is not None else BlockType.TOOL_RESULT
    want = Block(
        id="B7", seq=7, type=kind, role="tool", turn=3, parent=parent, status=Status.VISIBLE,
        group=None, level=0, content="text", tool_calls=tool_calls, call_ids=ids,
        call_names=names, tool_call_id="c1", name=name, size=len(data),
        sha256=sha256_hex(data), tokens=tokens,
    )  # fmt: skip
    got = fresh_block(
        7, kind, "tool", 3, parent, Status.VISIBLE, "text", tool_calls, names, "c1", name,
        len(data), hashlib.sha256(data).digest(), tokens,
    )  # fmt: skip
    assert _slots(got) == _slots(want)
    assert got == want and got.__getstate__() == want.__getstate__()
    assert pickle.loads(pickle.dumps(got)) == want


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base", "approx"])
@pytest.mark.parametrize("compact", [False, True])
@given(
    uid=_ids,
    parent=_ids,
    tokens=st.integers(0, 10**7),
    level=st.integers(0, 300),
    type_=st.sampled_from(["tool_result", "tool_call", "user_message", "group"]),
    status=st.sampled_from(["visible", "archived", "offloaded_placeholder", "pinned"]),
)
def test_a_parent_naming_row_counts_as_its_text(
    tokenizer, compact, uid, parent, tokens, level, type_, status
):
    r = DashboardRenderer(get_tokenizer(tokenizer), DashboardConfig(compact=compact))
    # What a row's pieces carry: tokens (additive), or UTF-8 bytes (a tokenizer
    # counting from bytes alone), of the assembled text either way.
    measure = r._measure
    for _ in range(2):  # the second time its shared pieces are remembered
        prefix, suffix, n = r.row_parts(uid, tokens, type_, level, parent, status)
        assert n == measure(prefix + suffix)


def _turn(ws: Workspace, k: int) -> None:
    ws.register_tool_call(
        [{"id": f"c{k}", "type": "function", "function": {"name": "q", "arguments": f"{k}"}}]
    )
    ws.register_tool_result(f"c{k}", f"result {k} " * 5)


def test_the_joined_newest_positions_are_what_the_positions_render():
    ws = Workspace(20_000)
    ws.register_user("task")
    for k in range(6):
        _turn(ws, k)
        ws.render()
    # A change inside the run the rendering joined (an archive), then new positions.
    ws.archive("B4")
    _turn(ws, 6)
    for _ in range(2):
        r = ws.render()
        shown = list(chain.from_iterable(ws._pos_msgs))
        body = list(r.messages[1:-1])  # the protocol message first, the dashboard last
        assert body == shown
        assert all(a is b for a, b in zip(body, shown, strict=True))


def test_normal_rendering_is_the_dataclass_with_columns():
    ws = Workspace(20_000)
    ws.register_user("task")
    _turn(ws, 0)
    got = ws.render()
    fields = {f: getattr(got, f) for f in Rendering.__dataclass_fields__}
    columns = ws._ledger.token_columns(ws._unit_prompt_tokens)
    want = with_token_columns(Rendering(**fields), columns)
    assert got == want and repr(got) == repr(want)
    # From columns, from the state's inputs, defaults.
    made = ("block_tokens", "prompt_tokens", "state_hash", "format", "system")
    plain = {k: v for k, v in fields.items() if k not in made}
    again = normal_rendering(columns, (ws._config_digest, ws.turn, ws._acc), **plain)
    assert again.state_hash == ws.state_hash() == want.state_hash
    assert again == want and again.format == "openai" and again.system == ()
    assert again.block_tokens == want.block_tokens


def test_a_forks_ledger_columns_are_its_own():
    # The ledger's column tables (rows, first leaves, rows per turn) are copied
    # by one helper; a fork that registers and archives leaves its parent's
    # ledger, and so its dashboard, as they were, and the parent's next turn
    # leaves the fork's.
    ws = Workspace(20_000)
    ws.register_user("task")
    for k in range(4):
        _turn(ws, k)

    def ledger(w: Workspace) -> tuple[object, ...]:
        led = w._ledger
        return (w.render().dashboard, list(led.rows.items()), list(led._turns.items()))

    before = ledger(ws)
    fork = ws.fork()
    fork_before = fork.render().dashboard
    for k in range(4, 8):
        _turn(fork, k)
    fork.archive("B2")
    assert ledger(ws) == before
    _turn(ws, 9)
    ws.archive("B3")
    mine = fork.render().dashboard
    replayed = ws.fork()  # the parent's own history still renders as it should
    assert replayed.render().dashboard == ws.render().dashboard
    assert mine != fork_before and "B3 " in fork.render().dashboard


def test_answering_one_of_many_pending_calls_reads_no_derived_id_tuple(monkeypatch):
    """A result answers one call of a batch in O(1): after the batch's slot
    map is built, registering a result never rebuilds the batch's call-ID
    tuple (``Block.call_ids`` is derived from its calls, O(calls) a read).
    Fails if ``register_tool_result`` takes the answered ID from ``call_ids``."""
    import vistalab.workspace._records as records

    n = 2_000
    ws = Workspace(10_000_000)
    ws.register_system("You are careful.")
    ws.register_user("Fetch every page.")
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "q", "arguments": "{}"}}
        for i in range(n)
    ]
    ws.register_tool_call(calls)
    ws.register_tool_result("c0", "page 0")  # the batch's slot map is built here
    reads = []
    real = records._CallIds.__get__

    def counted(self, obj, cls=None):
        if obj is not None and obj.tool_calls is not None and len(obj.tool_calls) == n:
            reads.append(obj.id)
        return real(self, obj, cls)

    monkeypatch.setattr(records._CallIds, "__get__", counted)
    for i in range(1, 40):
        ws.register_tool_result(f"c{i}", f"page {i}")
    assert reads == []
    answered = {
        m["tool_call_id"]: m["content"]
        for m in ws.render().messages
        if m["role"] == "tool" and m["content"].startswith("page")
    }
    assert answered == {f"c{i}": f"page {i}" for i in range(40)}
