"""The workspace as an MCP server (paper, Implementation
Details: the paper's implementation is an MCP server with the two context
tools), driven end to end by the official ``mcp`` SDK client over stdio."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from vistalab.workspace import (  # noqa: E402
    MCP_AGENT_TOOLS,
    MCP_HARNESS_TOOLS,
    MemoryStore,
    Workspace,
    WorkspaceService,
    build_mcp_server,
)
from vistalab.workspace import DiskStore as workspace_disk_store  # noqa: E402

from ._http_server import http_client, serving_http  # noqa: E402

# Bytes that a lossy path would change: non-ASCII, CRLF, trailing spaces, tabs.
EXACT = "résumé\r\n\tline with trailing spaces   \nemoji 🧪 and a NUL-free end\n"


def _server(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "vistalab.cli", "workspace", "serve", *args],
    )


def _text(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


@pytest.mark.slow
def test_stdio_end_to_end_with_the_sdk_client(tmp_path):
    """spawn ``vista-lab workspace serve`` over stdio, list the
    tools, register a transcript, archive, read the payload back byte-exact,
    see engine refusals as MCP tool errors and the overflow refusal (task
    tools refused, guard rejection) without the server crashing."""
    store = tmp_path / "archive"

    async def run() -> None:
        params = _server("--budget", "3000", "--role", "harness", "--store", str(store))
        with anyio.fail_after(60):
            async with Client(params) as c:
                names = [t.name for t in (await c.list_tools()).tools]
                assert names == list(MCP_AGENT_TOOLS + MCP_HARNESS_TOOLS)
                transcript = [
                    {"role": "user", "content": "Find the failing build."},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "search", "arguments": '{"q":"ci"}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": EXACT},
                ]
                reg = await c.call_tool("harness_register", {"messages": transcript})
                assert not reg.is_error, _text(reg)
                doc = json.loads(_text(reg))
                assert doc["block_ids"] == ["B1", "B2", "B3"]
                assert doc["mode"] == "normal" and doc["tokens"] <= 3000

                arch = await c.call_tool(
                    "context_workspace_archive", {"block_id": "B3", "replacement": "ci log"}
                )
                assert not arch.is_error, _text(arch)
                path = _text(arch)
                assert path.startswith(str(store))
                back = await c.call_tool("context_workspace_read", {"path": path})
                assert not back.is_error
                assert _text(back).encode("utf-8") == EXACT.encode("utf-8")
                with open(path, "rb") as fh:  # the paper's recovery: an ordinary read
                    assert fh.read() == EXACT.encode("utf-8")

                status = _text(await c.call_tool("context_workspace_status", {}))
                assert "## Context Budget" in status and "B3" in status

                # Engine refusals: MCP tool errors carrying the engine's one line.
                bad = await c.call_tool("context_workspace_archive", {"block_id": "B99"})
                assert bad.is_error and _text(bad) == "B99 does not exist (the newest block is B3)"
                pinned = await c.call_tool(
                    "context_workspace_delete", {"block_id": "B1", "reason": "x"}
                )
                assert pinned.is_error and "pinned" in _text(pinned)
                assert "\n" not in _text(pinned)
                wrong = await c.call_tool("context_workspace_archive", {"blockid": "B2"})
                assert wrong.is_error  # schema validation, still a tool error

                # Overflow: two large results, one call each, push the candidate past B
                # (one parallel batch of both would be kept whole: the guard rejects a
                # result the waiting batch cannot hold beside the floor).
                def call(cid: str) -> dict:
                    return {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "cat", "arguments": "{}"},
                    }

                big = {
                    "messages": [
                        {"role": "assistant", "content": None, "tool_calls": [call("c2")]},
                        {"role": "tool", "tool_call_id": "c2", "content": "word " * 1500},
                        {"role": "assistant", "content": None, "tool_calls": [call("c3")]},
                        {"role": "tool", "tool_call_id": "c3", "content": "word " * 1500},
                    ]
                }
                assert json.loads(_text(await c.call_tool("harness_register", big)))[
                    "block_ids"
                ] == ["B4", "B5", "B6", "B7"]
                rendered = json.loads(_text(await c.call_tool("harness_render", {})))
                assert rendered["mode"] == "overflow" and rendered["tokens"] <= 3000
                assert set(rendered["allowed_tools"]) == {
                    "context_workspace_archive",
                    "context_workspace_delete",
                }
                refusal = _text(await c.call_tool("harness_gate", {"tool_name": "search"}))
                assert refusal.startswith("[refused] search is disabled")
                # Making room clears it.
                freed = await c.call_tool("context_workspace_archive", {"block_id": "B5"})
                assert not freed.is_error
                assert _text(await c.call_tool("harness_gate", {"tool_name": "search"})) == ""
                # The guard's refusal: a result that can never fit is replaced by a notice.
                huge = {
                    "messages": [
                        {"role": "assistant", "content": None, "tool_calls": [call("c4")]},
                        {"role": "tool", "tool_call_id": "c4", "content": "word " * 5000},
                    ]
                }
                assert not (await c.call_tool("harness_register", huge)).is_error
                got = json.loads(_text(await c.call_tool("harness_render", {})))
                last = got["request"]["messages"][-2]
                assert last["tool_call_id"] == "c4"
                assert last["content"].startswith("[budget guard] Tool result rejected")
                anth = json.loads(
                    _text(await c.call_tool("harness_render", {"format": "anthropic"}))
                )
                assert anth["format"] == "anthropic" and anth["request"]["messages"]
                # The server is still alive after every refusal.
                assert (await c.list_tools()).tools

    anyio.run(run)


def test_agent_role_lists_only_the_agent_tools():
    """an agent connected to the agent role cannot see (so
    cannot call by mistake) a harness operation; calling one is an error."""

    async def run() -> None:
        ws = Workspace(3000, tokenizer="approx", store=MemoryStore())
        ws.register_user("task")
        async with Client(build_mcp_server(WorkspaceService(ws), role="agent")) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert names == list(MCP_AGENT_TOOLS)
            res = await c.call_tool("harness_register", {"messages": []})
            assert res.is_error
        assert [b.id for b in ws.blocks] == ["B1"]

    anyio.run(run)


def test_unknown_role_is_refused():
    """Bad input at the door: an unknown role names the choices."""
    ws = Workspace(3000, tokenizer="approx")
    with pytest.raises(KeyError, match="harness"):
        build_mcp_server(WorkspaceService(ws), role="admin")


def test_harness_register_names_the_refused_message():
    """A refused registration comes back with the index of the message and the
    engine's reason; earlier messages stay registered."""
    ws = Workspace(3000, tokenizer="approx")
    svc = WorkspaceService(ws)
    with pytest.raises(ValueError, match=r"messages\[1\].*does not answer a pending call"):
        svc.register(
            [
                {"role": "user", "content": "t"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ]
        )
    assert [b.id for b in ws.blocks] == ["B1"]


def _twin_workspaces() -> tuple[Workspace, Workspace]:
    out = []
    for _ in range(2):
        ws = Workspace(4000, tokenizer="approx")
        ws.register_user("task")
        for cid, body in (("c1", "x" * 300), ("c2", "y" * 30)):
            fn = {"name": "fetch", "arguments": "{}"}
            ws.register_tool_call([{"id": cid, "type": "function", "function": fn}])
            ws.register_tool_result(cid, body)
        out.append(ws)
    return out[0], out[1]


def test_service_answers_are_the_engine_tool_answers():
    """The MCP agent tools run the engine's one tool path: every answer, the
    refusal's message, and a delete that costs tokens ("added ~N tokens", not
    "freed ~-N") equal what ``Workspace.dispatch`` returns on a twin workspace."""
    from vistalab.workspace import ARCHIVE_TOOL, DELETE_TOOL, WorkspaceError

    served, direct = _twin_workspaces()
    svc = WorkspaceService(served)
    calls = [
        (svc.archive, ARCHIVE_TOOL, {"block_id": "B3", "replacement": "x log"}),
        (svc.delete, DELETE_TOOL, {"block_id": "B4", "reason": "done with it"}),
        (svc.archive, ARCHIVE_TOOL, {"block_id": "B99"}),
    ]
    answers = []
    for method, name, args in calls:
        want = direct.dispatch(name, json.dumps(args))
        if want.startswith("Error: "):
            with pytest.raises(WorkspaceError) as err:
                method(**args)
            assert "Error: " + str(err.value) == want
        else:
            answers.append(method(**args))
            assert answers[-1] == want
    assert "added ~" in answers[1], answers[1]
    assert served.state_hash() == direct.state_hash()


@pytest.mark.slow
def test_http_serves_both_roles_on_one_workspace():
    """streamable HTTP: one process bound to 127.0.0.1 serves
    the agent role at /mcp and the harness role at /harness on one
    workspace; a change made through one is seen through the other. Loopback
    only, bounded in time, the server stopped at the end."""
    with serving_http() as port:

        async def run() -> None:
            with anyio.fail_after(60):
                base = f"http://127.0.0.1:{port}"
                async with http_client(f"{base}/harness") as h, http_client(f"{base}/mcp") as a:
                    assert [t.name for t in (await a.list_tools()).tools] == list(MCP_AGENT_TOOLS)
                    reg = await h.call_tool(
                        "harness_register",
                        {
                            "messages": [
                                {"role": "user", "content": "t"},
                                {"role": "assistant", "content": EXACT},
                            ]
                        },
                    )
                    assert json.loads(_text(reg))["block_ids"] == ["B1", "B2"]
                    path = _text(await a.call_tool("context_workspace_archive", {"block_id": "B2"}))
                    back = await a.call_tool("context_workspace_read", {"path": path})
                    assert _text(back) == EXACT
                    rendered = json.loads(_text(await h.call_tool("harness_render", {})))
                    assert rendered["request"]["messages"][-2]["content"].startswith("[archived B2")

        anyio.run(run)


def test_serve_bad_input_is_one_line_exit_2(capsys):
    """CLI door: a bad budget or port is one line on stderr and exit status 2."""
    from vistalab.cli import main

    assert main(["workspace", "serve", "--budget", "lots"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budget" in err
    assert main(["workspace", "serve", "--budget", "3000", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err
    assert (
        main(["workspace", "serve", "--budget", "3000", "--transport", "http", "--role", "agent"])
        == 2
    )
    assert "applies to --transport stdio only" in capsys.readouterr().err


def test_serve_refuses_a_store_folder_holding_payloads(tmp_path, capsys):
    """serve starts a fresh workspace and payloads are never overwritten, so a --store
    folder that already holds archived payloads is refused at start (one line, exit 2)
    instead of at the agent's first colliding archive."""
    from vistalab.cli import main

    store = tmp_path / "archive"
    ws = Workspace(3000, tokenizer="approx", store=workspace_disk_store(store))
    ws.register_user("task")
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ws.register_tool_call([call])
    ws.register_tool_result("c1", "earlier result " * 40)
    ws.archive("B3")
    ws.close()
    assert main(["workspace", "serve", "--budget", "3000", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--store" in err and "B3.txt" in err
