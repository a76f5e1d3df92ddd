"""Text formats read back by their parsers (paper,
Implementation Details: dashboard format and archive handles): every handle,
placeholder and ledger row parses back to the fields it was formatted from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    HANDLE_SHA_CHARS,
    LedgerRow,
    Workspace,
    find_handles,
    format_ledger_row,
    handle_text,
    offload_text,
    parse_handle,
    parse_ledger_rows,
    placeholder_kind,
    rejection_text,
)
from vistalab.workspace._handles import member_stub, pending_text, tombstone_text
from vistalab.workspace._spec import format_id_ranges

_N = st.integers(1, 10**6)
_UNIT = st.builds(lambda p, n: f"{p}{n}", st.sampled_from("BG"), _N)
_SHA = st.text("0123456789abcdef", min_size=64, max_size=64)
_ROOT = st.text(
    st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="/_-. :"),
    min_size=1,
    max_size=30,
).map(lambda r: "/" + r.strip("/"))
_REPLACEMENT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(
    unit=_UNIT,
    members=st.lists(_UNIT, max_size=6),
    level=st.integers(1, 20),
    size=st.integers(0, 10**12),
    sha=_SHA,
    root=_ROOT,
    replacement=_REPLACEMENT,
)
def test_handle_round_trip(unit, members, level, size, sha, root, replacement):
    """``parse_handle(handle_text(...))`` returns every field (sha as its prefix)."""
    path = f"{root}/{unit}.txt"
    m = format_id_ranges(members) if members else ""
    text = handle_text(
        unit, level=level, path=path, size=size, sha256=sha, replacement=replacement, members=m
    )
    h = parse_handle(text)
    assert h is not None
    assert (h.kind, h.unit_id, h.members, h.level, h.size, h.path, h.replacement) == (
        "archived",
        unit,
        m,
        level,
        size,
        path,
        replacement,
    )
    assert h.sha256_prefix == sha[:HANDLE_SHA_CHARS]
    assert placeholder_kind(text) == "handle"
    if "\n" not in replacement:
        assert find_handles("[tool result B9 of f]\n" + text) == [h]


@given(n=_N, size=st.integers(0, 10**9), sha=_SHA, root=_ROOT)
def test_offload_placeholder_round_trip(n, size, sha, root):
    """Offload placeholders parse back; stubs, tombstones, pending stubs and
    guard notices are recognised; ordinary text is not."""
    path = f"{root}/B{n}.txt"
    h = parse_handle(offload_text(f"B{n}", path=path, size=size, sha256=sha))
    assert h is not None and (h.kind, h.unit_id, h.level, h.size, h.path) == (
        "offloaded",
        f"B{n}",
        1,
        size,
        path,
    )
    assert placeholder_kind(member_stub(f"B{n}", f"G{n}")) == "member_stub"
    assert placeholder_kind(tombstone_text(f"B{n}")) == "tombstone"
    assert placeholder_kind(pending_text(f"call_{n}")) == "pending"
    notice = rejection_text(current=n, limit=n, attempted=size, cap=n)
    assert placeholder_kind(notice) == "rejection"


@given(text=st.text(max_size=80))
def test_ordinary_text_is_not_a_placeholder(text):
    """Text that does not start like an engine stand-in is never classified as one."""
    if not text.lstrip().startswith("["):
        assert placeholder_kind(text) is None and parse_handle(text) is None


_ROW = st.builds(
    LedgerRow,
    _UNIT,
    st.integers(0, 10**9),
    st.integers(0, 10**5),
    st.sampled_from(["tool_result", "tool_call", "user_message", "group", "system"]),
    st.integers(0, 99),
    st.one_of(st.just("-"), _UNIT),
    st.sampled_from(["visible", "pinned", "archived", "offloaded_placeholder"]),
)


@given(rows=st.lists(_ROW, max_size=8), compact=st.booleans())
def test_ledger_rows_round_trip(rows, compact):
    """``parse_ledger_rows`` inverts ``format_ledger_row`` (compact rows do not
    print Level and Parent: they come back as 0 and '-')."""
    text = "## Context Blocks\n" + "".join(format_ledger_row(r, compact=compact) for r in rows)
    got = parse_ledger_rows(text + "(+3 older archived units folded: B1-B3; ~9 tok)\n")
    want = [
        LedgerRow(r.unit_id, r.tokens, r.age, r.type, 0, "-", r.status) if compact else r
        for r in rows
    ]
    assert got == want


def test_a_real_dashboard_parses_to_the_rendering_fields():
    """The rows parsed off a rendered dashboard equal the rendering's own
    structured ``block_tokens`` (and the handles in its messages parse)."""
    ws = Workspace(20_000, tokenizer="approx")
    ws.register_user("task")
    for i in range(6):
        ws.register_tool_call(
            [{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
        )
        ws.register_tool_result(f"c{i}", f"result {i} " * (10 + 20 * i))
    ws.archive("B3", "first")
    ws.archive("B5,B7", "pair")
    r = ws.render()
    rows = parse_ledger_rows(r.dashboard)
    assert {row.unit_id: row.tokens for row in rows} == r.block_tokens
    handles = [h for m in r.messages for h in find_handles(m.get("content") or "")]
    assert {h.unit_id for h in handles} == {"B3", "G1"}
