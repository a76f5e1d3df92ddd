"""The encodings the engine writes directly are the JSON encoder's (paper,
Methodology, "Workspace invariants": the state hash is a canonical hash of W_t,
so the event log replays to the same hash; Implementation Details: a payload
holds exactly what was archived). The engine hashes every block it registers or
changes through ``_block_json`` and writes a tool call's payload without the
generic encoder; a block whose fields are not of their plain types is left to
it."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import Workspace
from vistalab.workspace._accounting import canonical_json
from vistalab.workspace._hashing import _BLOCK_KEYS, _block_json, accumulate, record_hash
from vistalab.workspace._records import (
    Block,
    BlockType,
    PayloadRef,
    Status,
    ToolCall,
    block_payload_bytes,
    decode_block_payload,
    record_digest,
)

_text = st.text(st.characters(codec="utf-8") | st.sampled_from('"\\\x00\u2028é😀'), max_size=12)
_opt = st.none() | _text
_int = st.integers(0, 2**70)


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    payload = draw(st.none() | st.builds(PayloadRef, _text, _int, _text))
    return Block(
        id=draw(_text),
        seq=draw(_int),
        type=draw(st.sampled_from(BlockType)),
        role=draw(_text),
        turn=draw(_int),
        parent=draw(_opt),
        status=draw(st.sampled_from(Status)),
        group=draw(_opt),
        level=draw(_int),
        content=draw(_opt),
        tool_calls=None,
        call_ids=tuple(draw(st.lists(_text, max_size=3))),
        call_names=tuple(draw(st.lists(_text, max_size=3))),
        tool_call_id=draw(_opt),
        name=draw(_opt),
        size=draw(_int),
        sha256=draw(_text),
        tokens=draw(_int),
        payload=payload,
        replacement=draw(_text),
        rejected=draw(st.booleans()),
        reason=draw(_text),
    )


@given(blocks())
def test_block_json_is_the_canonical_json_of_its_plain_data(b):
    plain = b.to_plain(with_content=False)
    assert sorted(plain) == _BLOCK_KEYS
    assert _block_json(b) == canonical_json(plain)
    assert record_hash(b) == record_digest(plain)


class _Text(str):
    """A str subclass: not a plain type, so the generic encoder writes it."""


def test_a_field_of_another_type_goes_to_the_generic_encoder():
    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    b = ws.blocks[-1]
    for change in ({"id": _Text(b.id)}, {"seq": True}, {"parent": 3}, {"rejected": 1}):
        odd = dataclasses.replace(b, **change)
        assert _block_json(odd) is None
        assert record_hash(odd) == record_digest(odd.to_plain(with_content=False))


def test_a_sessions_records_hash_as_their_plain_data():
    ws = Workspace(4_000, tokenizer="approx")
    ws.register_user("count the rows " * 20)
    for k in range(12):
        ws.register_tool_call(
            [{"id": f"c{k}", "type": "function", "function": {"name": "q", "arguments": "{}"}}]
        )
        ws.register_tool_result(f"c{k}", "row,é,1\n" * (20 + 30 * k))
    ws.archive(f"B3-B{len(ws.blocks) - 2}", "older rows")
    records = [*ws.blocks]
    assert any(b.payload is not None or b.group is not None for b in records)
    plain = sum(record_digest(b.to_plain(with_content=False)) for b in records) % (1 << 256)
    assert accumulate(records) == plain
    assert ws.recompute_state_hash() == ws.state_hash()


@given(
    _opt,
    st.lists(st.builds(ToolCall, _text, _text, _text), min_size=1, max_size=3),
)
def test_a_tool_call_payload_is_its_canonical_json(content, calls):
    """A tool_call block's payload bytes (Implementation Details: ``read_path``
    gives back exactly what was archived) are the key-sorted compact JSON of
    its content and calls, non-ASCII kept."""
    obj = {"content": content, "tool_calls": [c.to_openai() for c in calls]}
    want = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert block_payload_bytes(BlockType.TOOL_CALL, content, tuple(calls)) == want.encode()
    assert decode_block_payload(BlockType.TOOL_CALL, want.encode()) == (content, tuple(calls))
