"""Bad input gives a clear error and changes nothing (paper, Implementation
Details, "Context tool definitions": block IDs, lists, ranges and groups;
Methodology, "Workspace invariants": archived bytes stay recoverable unless the
agent deletes them; eq. archive-contract: recovery is a read of the payload path)."""

from __future__ import annotations

import os
import re

import pytest
from vistalab.workspace import (
    BlockSpecError,
    BlockStateError,
    BudgetConfigError,
    DiskStore,
    PathEscapeError,
    PayloadIntegrityError,
    ProtocolOrderError,
    UnknownBlockError,
    Workspace,
    WorkspaceArgumentError,
    WorkspaceError,
)


def _call(cid):
    return {"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.fixture
def ws(tmp_path):
    """B1 system (pinned), B2 task (pinned), B3 call, B4/B5 results, B6 assistant,
    G1 = {B4,B5}, G2 = {G1,B6}, B7 deleted, B8 visible."""
    w = Workspace(8000, tokenizer="approx", store=DiskStore(tmp_path / "archive"))
    w.register_system("sys")
    w.register_user("task")
    w.register_tool_call([_call("a"), _call("b")])
    w.register_tool_result("a", "alpha")
    w.register_tool_result("b", "beta")
    w.register_assistant("gamma")
    w.archive("B4,B5", "results")
    w.archive("G1,B6", "coarser")
    w.register_assistant("to be deleted")
    w.delete("B7", "noise")
    w.register_assistant("visible")
    return w


def _snapshot(w):
    return (
        w.state_hash(),
        sorted(w.store.keys()),
        len(w.events),
        [w.recover(b.id) for b in w.blocks if b.status.value != "deleted"],
    )


BAD_SPECS = [
    ("B0", BlockSpecError, r"item 'B0' at position 1: IDs start at 1"),
    ("B-3", BlockSpecError, r"IDs are positive \(no minus sign\)"),
    ("G99", UnknownBlockError, r"G99 does not exist \(groups so far: 2\)"),
    ("", BlockSpecError, r"must name at least one block"),
    ("   ", BlockSpecError, r"must name at least one block"),
    ("B3,,B4", BlockSpecError, r"empty item at position 2 .*; remove the extra comma"),
    ("B３", BlockSpecError, r"ASCII letters and digits only"),
    ("Ｂ3", BlockSpecError, r"ASCII letters and digits only"),
    ("G1-G2", BlockSpecError, r"ranges are only for blocks"),
    (
        "B1-B99999999999",
        UnknownBlockError,
        r"B99999999999 does not exist \(the newest block is "
        r"B8\); ranges must end at an existing block",
    ),
    ("B" + "9" * 40, BlockSpecError, r"is not a block ID"),
    ("B9", UnknownBlockError, r"B9 does not exist \(the newest block is B8\)"),
    ("B3," * 2000, BlockSpecError, r"at most 4096 characters"),
    ("B1", BlockStateError, r"B1 is pinned \(protocol-required\) and cannot be archived"),
    ("B1-B3", BlockStateError, r"B1 \(in range B1-B3\) is pinned"),
    ("B7", BlockStateError, r"B7 was deleted; its content is gone"),
    ("B4", BlockStateError, r"B4 is archived inside G2; name G2 instead"),
    ("G1", BlockStateError, r"G1 is archived inside G2; name G2 instead"),
    ("B5-B8", BlockStateError, r"G2 has members outside B5-B8 \(it holds B4-B6\)"),
    (["B3"], BlockSpecError, r"must be a string"),
]


@pytest.mark.parametrize("spec,exc,msg", BAD_SPECS, ids=[repr(s)[:20] for s, _, _ in BAD_SPECS])
def test_bad_archive_specs_are_clear_and_change_nothing(ws, spec, exc, msg):
    """Malformed IDs, unknown or nested units, pinned and deleted blocks: the
    Python API raises a named error, the agent tool returns it as a string,
    and neither changes the state or the store."""
    before = _snapshot(ws)
    with pytest.raises(exc, match=msg):
        ws.archive(spec, "x")
    out = ws.context_workspace_archive(spec, "x")
    assert out.startswith("Error: ") and "Traceback" not in out
    assert _snapshot(ws)[:2] == before[:2] and _snapshot(ws)[3] == before[3]
    assert all(not e.ok for e in ws.events[before[2] :])


@pytest.mark.parametrize(
    "spec,msg",
    [
        ("B1", r"B1 is pinned \(protocol-required\) and cannot be deleted"),
        ("B7", r"B7 was deleted"),
        ("B4", r"B4 is archived inside G2"),
    ],
)
def test_bad_delete_targets(ws, spec, msg):
    before = _snapshot(ws)
    with pytest.raises(BlockStateError, match=msg):
        ws.delete(spec, "reason")
    assert ws.context_workspace_delete(spec, "reason").startswith("Error: ")
    assert _snapshot(ws)[:2] == before[:2]


def test_delete_needs_a_reason(ws):
    with pytest.raises(WorkspaceArgumentError, match=r"`reason` must be a non-empty short reason"):
        ws.delete("B8", "  ")
    assert ws.block("B8").status.value == "visible"


def test_restore_refuses_visible_blocks(ws):
    with pytest.raises(BlockStateError, match=r"B8 is not archived; restore archived units only"):
        ws.restore("B8")


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "G2.txt/../../../etc/passwd",
        "..",
        "G2.txt\x00.png",
        "archive/../G2.txt/..",
        "notes.txt",
    ],
)
def test_traversal_paths_in_read_path_are_refused(ws, path):
    """Paths are confined to the archive folder (no traversal)."""
    before = _snapshot(ws)
    with pytest.raises(PathEscapeError):
        ws.read_path(path)
    assert _snapshot(ws)[0] == before[0]


def test_symlink_escape_in_read_path_is_refused(ws, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("top secret")
    os.symlink(secret, ws.store.directory / "G9.txt")
    with pytest.raises(PathEscapeError, match="symlink"):
        ws.read_path(f"{ws.store.root}/G9.txt")


def test_deleted_or_unknown_payloads_are_not_readable(ws):
    """Deleted content is unrecoverable, even by its old path."""
    ws.register_assistant("short-lived")
    res = ws.archive("B9")
    ws.delete("B9", "done")
    with pytest.raises(PayloadIntegrityError, match=r"'B9.txt': is not a live payload"):
        ws.read_path(res.path)
    with pytest.raises(BlockStateError, match="B9 was deleted; its content cannot be recovered"):
        ws.recover("B9")


def test_tampered_payload_fails_loudly_and_nothing_is_lost(ws):
    """Reads verify checksums; a tampered payload is refused by read, recover
    and restore, and the workspace (and the intact payloads) stay as they were."""
    g2 = ws.store.directory / "G2.txt"
    g2.write_bytes(g2.read_bytes().replace(b"gamma", b"GAMMA"))
    before = _snapshot_no_recover(ws)
    for call in (
        lambda: ws.read_path(str(g2)),
        lambda: ws.recover("B6"),
        lambda: ws.restore("G2"),
        lambda: ws.recover("B4"),
    ):
        with pytest.raises(PayloadIntegrityError, match="checksum mismatch"):
            call()
    assert _snapshot_no_recover(ws) == before
    assert ws.read_path(f"{ws.store.root}/G1.txt", "member=B4") == b"alpha"


def _snapshot_no_recover(w):
    return (w.state_hash(), sorted(w.store.keys()), [b.status for b in w.blocks])


@pytest.mark.parametrize(
    "selector,msg",
    [
        ("bytes=5:2", r"must have START <= STOP"),
        ("lines=0-3", r"must have 1 <= FIRST <= LAST"),
        ("lines=4-2", r"must have 1 <= FIRST <= LAST"),
        ("rows=1-2", r"unknown kind 'rows'"),
        ("member=G1", r"must name one block"),
        ("member=B8", r"names a block that is not in G2"),
        ("bytes", r"must have the form KIND=RANGE"),
        (3, r"must be a string or a selector object"),
    ],
)
def test_bad_selectors(ws, selector, msg):
    with pytest.raises(WorkspaceArgumentError, match=msg):
        ws.read_path(f"{ws.store.root}/G2.txt", selector)


def test_bad_registrations_name_the_problem(ws):
    before = ws.state_hash()
    cases = [
        (
            lambda: ws.register_tool_result("zzz", "x"),
            ProtocolOrderError,
            r"tool result for 'zzz' does not answer a pending call",
        ),
        (
            lambda: ws.register_tool_result("a", "x"),
            ProtocolOrderError,
            r"tool call 'a' was already answered by B4",
        ),
        (
            lambda: ws.register_tool_call([]),
            WorkspaceArgumentError,
            r"`tool_calls` must be a non-empty list",
        ),
        (
            lambda: ws.register_tool_call([{"id": "q", "function": {"name": "f", "arguments": 3}}]),
            WorkspaceArgumentError,
            r"item 0 arguments must be a JSON string",
        ),
        (lambda: ws.register_user(b"bytes"), WorkspaceArgumentError, r"`content` must be a string"),
        (
            lambda: ws.register_user("bad \ud800 surrogate"),
            WorkspaceArgumentError,
            r"unpaired surrogate at index 4",
        ),
        (
            lambda: ws.register_message({"role": "robot", "content": "x"}),
            WorkspaceArgumentError,
            r"`role` must be one of system, user, assistant, tool",
        ),
        (
            lambda: ws.register_message({"role": "user", "content": [42]}),
            WorkspaceArgumentError,
            r"part 0 must be a content part",
        ),
        (
            lambda: ws.register_user("x", pinned="yes"),
            WorkspaceArgumentError,
            r"`pinned` must be True or False",
        ),
    ]
    for call, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            call()
    assert ws.state_hash() == before


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        ({"budget": 0}, BudgetConfigError, r"`budget` must be a positive integer"),
        ({"budget": 5000.0}, BudgetConfigError, r"`budget` must be a positive integer"),
        ({"budget": True}, BudgetConfigError, r"`budget` must be a positive integer"),
        (
            {"budget": 5000, "hard_limit": 100},
            WorkspaceArgumentError,
            r"`hard_limit` must be an "
            r"integer >= budget \(5000\)",
        ),
        ({"budget": 5000, "tokenizer": "cl100"}, KeyError, r"Did you mean 'cl100k_base'"),
        (
            {"budget": 5000, "task_tools": [{"name": "x"}]},
            WorkspaceArgumentError,
            r"item 0 must be an OpenAI tool schema",
        ),
        (
            {
                "budget": 5000,
                "task_tools": [
                    {"type": "function", "function": {"name": "context_workspace_archive"}}
                ],
            },
            WorkspaceArgumentError,
            r"must not repeat a name or reuse a context tool's name",
        ),
        (
            {"budget": 5000, "store": "/tmp"},
            WorkspaceArgumentError,
            r"must implement the PayloadStore protocol",
        ),
    ],
)
def test_bad_configuration(kwargs, exc, msg):
    budget = kwargs.pop("budget")
    with pytest.raises(exc, match=msg):
        Workspace(budget, **kwargs)


def test_every_error_is_a_workspace_error_and_a_builtin():
    """One exception root; subclasses also inherit the matching builtin, so the
    CLI (which maps ValueError/KeyError from workspace modules to exit 2) and
    callers can catch them as usual."""
    for cls in (
        BlockSpecError,
        BlockStateError,
        BudgetConfigError,
        PayloadIntegrityError,
        ProtocolOrderError,
        WorkspaceArgumentError,
        PathEscapeError,
    ):
        assert issubclass(cls, WorkspaceError) and issubclass(cls, ValueError)
        assert cls.__module__.split(".")[:2] == ["vistalab", "workspace"]
    assert issubclass(UnknownBlockError, KeyError) and issubclass(PathEscapeError, PermissionError)
    err = UnknownBlockError("B9", "does not exist")
    assert str(err) == "B9 does not exist"  # not KeyError's repr


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ("hello", "must be a list of messages, not text"),
        (b"hello", "must be a list of messages, not text"),
        ({"role": "user", "content": "hi"}, "a single message is a mapping"),
        (5, "must be a list of messages"),
    ],
)
def test_register_messages_refuses_text_and_single_messages_at_the_door(messages, rule):
    """Audit item 5 (DESIGN.md rule 5, validate once at the door): a string
    used to be iterated character by character ("`message` must be a mapping
    (got message='h')"), a single message mapping registered nothing. Both are
    refused naming `messages`, the value and the fix; nothing is registered."""
    from vistalab.workspace import Workspace, WorkspaceArgumentError

    ws = Workspace(3000)
    with pytest.raises(WorkspaceArgumentError, match=r"`messages` must be a list of messages"):
        ws.register_messages(messages)
    with pytest.raises(WorkspaceArgumentError, match=re.escape(rule)) as e:
        ws.register_messages(messages)
    assert e.value.parameter == "messages" and "pass a list of messages" in str(e.value)
    assert ws.blocks == ()
    assert ws.register_messages({"messages": [{"role": "user", "content": "hi"}]}) == ["B1"]
