"""The MCP server over streamable HTTP in a child process, for the tests that talk
to it through a real socket."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


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
