"""The HTTP server is authenticated by default: without the bearer token every
request gets 401 (nothing served); with it the official MCP client is served; a
slow-header client is dropped within HEADER_TIMEOUT_S; a taken port is one line
and exit 2 before any banner; a generated token is printed once and written to an
owner-only file."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import httpx  # noqa: E402
from vistalab.workspace import Workspace, WorkspaceService, build_http_app  # noqa: E402
from vistalab.workspace._mcp_transport import HEADER_TIMEOUT_S  # noqa: E402

from ._http_server import TOKEN, http_client, serving_http  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}


@pytest.mark.slow
def test_without_the_token_401_with_it_served():
    with serving_http() as port:
        base = f"http://127.0.0.1:{port}"
        headers = {"accept": "application/json, text/event-stream",
                   "content-type": "application/json"}
        with httpx.Client(timeout=30) as c:
            for path in ("/harness/", "/mcp/"):
                r = c.post(base + path, headers=headers, content=json.dumps(INIT))
                assert r.status_code == 401, r.text
                assert "bearer token is missing" in r.json()["error"]
                r = c.post(base + path, headers={**headers, "Authorization": "Bearer nope"},
                           content=json.dumps(INIT))
                assert r.status_code == 401 and "wrong" in r.json()["error"]
                assert c.get(base + path).status_code == 401

        async def run() -> None:
            with anyio.fail_after(60):
                async with http_client(f"{base}/harness") as h:
                    names = [t.name for t in (await h.list_tools()).tools]
                    assert "harness_register" in names

        anyio.run(run)

        # A slow-header client (a request line, then nothing) is dropped.
        with socket.create_connection(("127.0.0.1", port), timeout=HEADER_TIMEOUT_S * 3) as s:
            s.sendall(b"POST /harness/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            start = time.monotonic()
            assert s.recv(1024) == b""  # closed by the server, no answer
            waited = time.monotonic() - start
        assert waited < HEADER_TIMEOUT_S * 3


def test_app_generates_a_token_and_refuses_short_ones():
    app = build_http_app(WorkspaceService(Workspace(3000, tokenizer="approx")))
    assert len(app.token) >= 32
    from vistalab.workspace import WorkspaceArgumentError

    with pytest.raises(WorkspaceArgumentError, match="token"):
        build_http_app(WorkspaceService(Workspace(3000, tokenizer="approx")), token="short")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_port_in_use_is_one_line_exit_2_before_any_banner():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", "3000",
             "--tokenizer", "approx", "--transport", "http", "--port", str(port)],
            capture_output=True, text=True, timeout=120, check=False,
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be used" in lines[0] and "serving" not in lines[0]
    assert "agent role at" not in proc.stderr


@pytest.mark.slow
def test_generated_token_is_printed_once_and_written_owner_only(tmp_path):
    port = _free_port()
    token_file = tmp_path / "tok" / "mcp.token"
    env = {k: v for k, v in os.environ.items() if k != "VISTA_LAB_MCP_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", "3000",
         "--tokenizer", "approx", "--transport", "http", "--port", str(port),
         "--token-file", str(token_file)],
        stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        banner = proc.stderr.readline()  # type: ignore[union-attr]
        token = token_file.read_text().strip()
        assert banner.count(token) == 1 and len(token) >= 32
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/mcp/", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert r.status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()  # type: ignore[union-attr]
    assert TOKEN not in banner
