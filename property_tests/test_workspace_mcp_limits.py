"""The MCP server's request limits and one-line tool errors on both transports
(paper, Implementation Details: the workspace is an MCP server). The limits are
stated once (``vistalab._core._limits``: MAX_JSON_DEPTH, MAX_REQUEST_BYTES); a
request beyond them is answered at once with a one-line refusal naming the limit,
never left unanswered (stdio) or failed with a bare HTTP 413.

A request nested 10,000 deep cannot be built by the SDK client (its serializer
stops at a few hundred levels), so those are written as raw JSON-RPC; the
schema-miss errors go through the real ``mcp`` SDK client. Timeouts here are hang
detectors (generous), not speed checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from vistalab.workspace import Workspace, WorkspaceService, build_mcp_server  # noqa: E402

from ._http_server import auth_headers, serving_http  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "limits-test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def deep_register(depth: int, rid: int) -> str:
    content = "[" * depth + '"x"' + "]" * depth
    head = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    return (json.dumps(head)[:-1] + ', "params": {"name": "harness_register", "arguments": '
            '{"messages": [{"role": "user", "content": ' + content + "}]}}}")


def _readline(proc: subprocess.Popen, seconds: float = 60.0) -> bytes:
    """One stdout line of the server, or fail (a hang detector)."""
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert out and out[0], "the server did not answer (a hang)"
    return out[0]


def _limit(name: str) -> int:
    """A limit stated once in ``vistalab._core`` (imported when a check needs it, so
    that each case here fails on its own against code from before the limits)."""
    import vistalab._core as core

    return getattr(core, name)


def _refusal(line: bytes, rid: int, limit: str) -> str:
    """The one-line JSON-RPC error answering request ``rid``, naming the ``limit``."""
    doc = json.loads(line)
    assert doc["id"] == rid, doc
    text = doc["error"]["message"]
    assert "\n" not in text and str(_limit(limit)) in text, text
    return text


@pytest.mark.slow
def test_stdio_answers_a_request_nested_10000_deep_in_one_line():
    """Over stdio a request nested ~200 deep or more was never answered (the client
    waited forever); now: a one-line JSON-RPC error with the request's id, and the
    server keeps serving."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", "3000",
         "--role", "harness"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def send(text: str) -> None:
            proc.stdin.write(text.encode() + b"\n")
            proc.stdin.flush()

        send(json.dumps(INIT))
        assert json.loads(_readline(proc))["id"] == 1
        send(json.dumps(INITIALIZED))
        for rid, depth in ((7, 10_000), (8, 200)):
            send(deep_register(depth, rid))
            text = _refusal(_readline(proc), rid, "MAX_JSON_DEPTH")
            assert "`arguments`" in text
        send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "harness_register",
            "arguments": {"messages": [{"role": "user", "content": "hello"}]}}}))
        ok = json.loads(_readline(proc))
        assert ok["id"] == 9 and not ok["result"].get("isError"), ok
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.slow
def test_stdio_refuses_an_over_long_line_while_reading_it():
    """A 64 MiB line over stdio is refused (one-line JSON-RPC error) after reading
    about MAX_REQUEST_BYTES of it, never held whole: the server's peak memory
    grows by far less than the line; the next request is served."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", "3000",
         "--role", "harness"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def peak_mib() -> float:
        with open(f"/proc/{proc.pid}/status") as fh:
            kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
        return kb / 1024

    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(_readline(proc))["id"] == 1
        before = peak_mib() if os.path.exists(f"/proc/{proc.pid}/status") else None
        head = b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": ' \
               b'"harness_register", "arguments": {"messages": [{"role": "user", "content": "'
        proc.stdin.write(head)
        piece = b"x" * (1 << 20)
        for _ in range(64):
            proc.stdin.write(piece)
        proc.stdin.write(b'"}]}}}\n')
        proc.stdin.flush()
        _refusal(_readline(proc), 5, "MAX_REQUEST_BYTES")
        if before is not None:
            assert peak_mib() - before < 40, (before, peak_mib())
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
                         .encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(_readline(proc))["id"] == 6
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.slow
def test_http_refuses_deep_and_oversized_requests_in_one_line():
    """Over streamable HTTP: nested 10,000 deep -> 400 with a one-line JSON-RPC error;
    a body above MAX_REQUEST_BYTES (4 MiB) -> 413 whose body says which limit and
    what to do (it was an unexplained 413)."""
    import httpx

    with serving_http() as port:
        url = f"http://127.0.0.1:{port}/harness/"
        headers = {"accept": "application/json, text/event-stream",
                   "content-type": "application/json", **auth_headers()}
        with httpx.Client(timeout=60) as c:
            r = c.post(url, headers=headers, content=json.dumps(INIT))
            assert r.status_code == 200, r.text
            headers["mcp-session-id"] = r.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = INIT["params"]["protocolVersion"]
            c.post(url, headers=headers, content=json.dumps(INITIALIZED))
            r = c.post(url, headers=headers, content=deep_register(10_000, 7))
            assert r.status_code == 400
            _refusal(r.content, 7, "MAX_JSON_DEPTH")
            big = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
                "name": "harness_register", "arguments": {"messages": [
                    {"role": "tool", "tool_call_id": "c1",
                     "content": "x" * (_limit("MAX_REQUEST_BYTES") + 10)}]}}})
            r = c.post(url, headers=headers, content=big)
            assert r.status_code == 413
            _refusal(r.content, 8, "MAX_REQUEST_BYTES")


def test_schema_misses_are_one_line_tool_errors():
    """Wrong-typed or missing tool arguments returned the SDK's multi-line validation
    report; now one line naming the argument and the rule (real SDK client)."""

    async def run() -> None:
        ws = Workspace(3000, tokenizer="approx")
        with anyio.fail_after(60):
            async with Client(build_mcp_server(WorkspaceService(ws), role="harness")) as c:
                wrong = await c.call_tool("harness_register", {"messages": "abc"})
                missing = await c.call_tool("harness_register", {})
                archive = await c.call_tool("context_workspace_archive", {"block_id": 3})
                for res, name in ((wrong, "messages"), (missing, "messages"),
                                  (archive, "block_id")):
                    text = res.content[0].text
                    assert res.is_error and "\n" not in text and f"`{name}`" in text, text

    anyio.run(run)


def test_engine_refusals_of_every_kind_are_one_line_tool_errors():
    """A vista-lab refusal that is not a WorkspaceError (a depth limit, the contract
    net) is still a one-line tool error, not the SDK's 'Error executing tool'."""

    async def run() -> None:
        ws = Workspace(3000, tokenizer="approx")
        nested: object = "x"
        for _ in range(150):
            nested = [nested]
        with anyio.fail_after(60):
            async with Client(build_mcp_server(WorkspaceService(ws), role="harness")) as c:
                res = await c.call_tool("harness_register", {"messages": [
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "f", "arguments": json.dumps(nested)}}]}]})
                text = res.content[0].text
                assert res.is_error and "\n" not in text and "deep" in text, text
                assert "Error executing tool" not in text
                # harness_render failed with a traceback on the server's stderr once such
                # arguments were in; refused at registration, rendering keeps working
                for fmt in ("anthropic", "openai"):
                    out = await c.call_tool("harness_render", {"format": fmt})
                    assert not out.is_error, out.content[0].text

    anyio.run(run)
