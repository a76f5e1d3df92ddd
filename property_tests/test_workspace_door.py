"""The workspace's side of the error contract: public
functions check argument types at the door and raise the project's
WorkspaceError subclasses naming the parameter; agent-facing tools always
return a string; FIFOs and folders given as traces are refused at once."""

from __future__ import annotations

import os
import threading

import pytest
from vistalab.workspace import (
    ByteRange,
    DiskStore,
    LineRange,
    MemberSelector,
    MemoryStore,
    TraceError,
    Workspace,
    WorkspaceArgumentError,
    WorkspaceError,
    get_tokenizer,
    handle_text,
    load_trace,
    message_tokens,
    offload_text,
    rejection_text,
)

TOK = get_tokenizer("approx")
_H = {"level": 1, "path": "p", "size": 1, "sha256": "a", "replacement": ""}


@pytest.mark.parametrize(
    "call,param",
    [
        (lambda: message_tokens(None, TOK), "message"),
        (lambda: message_tokens({"role": "user", "content": "x"}, None), "tokenizer"),
        (lambda: message_tokens({"role": "user", "content": [{"type": "text"}]}, TOK), "message"),
        (lambda: handle_text(3, level=1, path="p", size=1, sha256="a", replacement=""), "unit_id"),
        (
            lambda: handle_text("B1", level="1", path="p", size=1, sha256="a", replacement=""),
            "level",
        ),
        (
            lambda: handle_text("B1", level=1, path="p", size=1, sha256="a", replacement=None),
            "replacement",
        ),
        (lambda: offload_text("B1", path=None, size=1, sha256="a"), "path"),
        (lambda: rejection_text(current="x", limit=1, attempted=1, cap=1), "current"),
        (lambda: rejection_text(current=1, limit=1, attempted=True, cap=1), "attempted"),
        (lambda: load_trace(None), "source"),
        (lambda: load_trace(42), "source"),
        (lambda: DiskStore(None), "directory"),
        (lambda: DiskStore("a\x00b"), "directory"),
        (lambda: MemoryStore(None), "root"),
        (lambda: Workspace(4000, log_path=True), "log_path"),
        (lambda: Workspace(4000, log_path=1), "log_path"),
    ],
)
def test_public_functions_check_types_at_the_door(call, param):
    """Wrong types raise WorkspaceArgumentError naming the parameter (never a
    TypeError or AttributeError from deep inside)."""
    with pytest.raises(WorkspaceArgumentError, match=f"`{param}`") as info:
        call()
    assert info.value.parameter == param


def test_lone_surrogates_in_call_ids_are_refused_cleanly():
    """A lone surrogate in a tool-call id (or a result's id) is refused like one
    in content, naming the field; nothing is registered."""
    ws = Workspace(9000, tokenizer="approx")
    ws.register_user("task")
    before = ws.state_hash()
    bad = {"id": "a\ud800", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    with pytest.raises(WorkspaceArgumentError, match="unpaired surrogate"):
        ws.register_tool_call([bad])
    with pytest.raises(WorkspaceArgumentError, match="unpaired surrogate"):
        ws.register_message({"role": "tool", "tool_call_id": "x\udfff", "content": "y"})
    assert ws.state_hash() == before


@pytest.mark.parametrize(
    "name,arguments",
    [
        (["x"], "{}"),
        (None, None),
        ("context_workspace_archive", "[1]"),
        ("context_workspace_archive", "{"),
    ],
)
def test_dispatch_always_returns_a_string(name, arguments):
    """Agent-facing dispatch never raises, whatever the model sent."""
    ws = Workspace(9000, tokenizer="approx")
    ws.register_user("task")
    out = ws.dispatch(name, arguments)
    assert isinstance(out, str) and out.startswith("Error: ")


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_fifo_or_folder_as_a_trace_is_refused_at_once(tmp_path, kind):
    """A FIFO (which would block a plain read) or a folder given as a trace
    gets one TraceError at once."""
    p = tmp_path / "trace.json"
    os.mkfifo(p) if kind == "fifo" else p.mkdir()
    caught: list[BaseException] = []

    def run() -> None:
        try:
            load_trace(p)
        except WorkspaceError as exc:
            caught.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], TraceError)
    assert "is not a regular file" in str(caught[0])


@pytest.mark.parametrize(
    "make,param",
    [
        (lambda: ByteRange(float("nan"), 3), "start"),
        (lambda: ByteRange(0, float("nan")), "stop"),
        (lambda: ByteRange(5, 2), "stop"),
        (lambda: ByteRange(True), "start"),
        (lambda: LineRange(float("nan")), "first"),
        (lambda: LineRange(1, float("nan")), "last"),
        (lambda: LineRange(0), "first"),
        (lambda: MemberSelector(float("nan")), "block_id"),
        (lambda: MemberSelector("G2"), "block_id"),
    ],
)
def test_selector_objects_refuse_nan_and_bad_bounds(make, param):
    """Python API: NaN (and other non-positions) never passes silently into a
    read selector; the error names the field."""
    with pytest.raises(WorkspaceArgumentError, match=f"`{param}`"):
        make()
    assert ByteRange(0, 5) == ByteRange(0, 5) and LineRange(3).last is None


@pytest.mark.parametrize("bad", [5, None, b"fetch", ["fetch"], True, ""])
def test_gate_refuses_a_tool_name_that_is_not_a_string(bad):
    """Audit item 5 (eq. overflow: the gate decides which tool may run): ws.gate(5)
    returned None, i.e. "allowed"; a non-string or empty tool name is refused at the
    door naming `tool_name`, in normal and in overflow mode."""
    ws = Workspace(4000, tokenizer="approx")
    ws.register_user("task")
    with pytest.raises(WorkspaceArgumentError, match=r"`tool_name` must be a non-empty string"):
        ws.gate(bad)
    ws.register_user("x " * 20_000)
    assert ws.render().mode == "overflow" and ws.gate("fetch") is not None
    with pytest.raises(WorkspaceArgumentError, match=r"`tool_name` must be a non-empty string"):
        ws.gate(bad)
    assert ws.gate("context_workspace_archive") is None
