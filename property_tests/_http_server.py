"""The MCP server over streamable HTTP in a child process, for the tests that talk
to it through a real socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The bearer token the test server is started with (VISTA_LAB_MCP_TOKEN).
TOKEN = "vista-lab-test-token-0123456789"


def auth_headers() -> dict[str, str]:
    """The Authorization header the test server requires."""
    return {"Authorization": f"Bearer {TOKEN}"}


def http_client(url: str) -> Any:
    """The official MCP SDK client for ``url``, sending the bearer token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return Client(streamable_http_client(
        url, http_client=create_mcp_http_client(headers=auth_headers())))


@contextmanager
def serving_http(budget: int = 3000) -> Iterator[int]:
    """``vista-lab workspace serve --transport http`` on a free loopback port;
    yields the port once the server accepts connections, and stops it at the end."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", str(budget),
         "--transport", "http", "--port", str(port)],
        stderr=subprocess.PIPE,
        env={**os.environ, "VISTA_LAB_MCP_TOKEN": TOKEN},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()  # type: ignore[union-attr]
