"""How fast the MCP server answers a request beyond its limits (the paper's
Implementation Details: the workspace is an MCP server; the limits are stated
once in ``vistalab._core._limits``).

Measures, over stdio and over streamable HTTP, the wall time from sending a
``harness_register`` whose message content is nested 10,000 deep (refused in one
line) to its answer, against the baseline of the same run: a valid
``harness_register`` of one short message on the same server. Each is the best of
``--repeat`` requests (load only slows a request down).

    python benchmarks/bench_mcp_limits.py [--repeat 5] [--depth 10000]

Target: every refusal answered within 1 s, and at most 10x the valid request.
Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from _common import machine_line

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench-limits", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SERVE = [sys.executable, "-m", "vistalab.cli", "workspace", "serve", "--budget", "3000"]


def _register(rid: int, content: str) -> str:
    """A raw JSON-RPC harness_register (a deep content is spliced in as text: the
    standard JSON writer cannot write 10,000 levels)."""
    head = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call"})[:-1]
    return (head + ', "params": {"name": "harness_register", "arguments": '
            '{"messages": [{"role": "user", "content": ' + content + "}]}}}")


def _deep(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


def _best(send: Callable[[str], str], make: Callable[[int], str], repeat: int,
          start: int) -> tuple[float, str]:
    best, answer = float("inf"), ""
    for i in range(repeat):
        body = make(start + i)
        t0 = time.perf_counter()
        answer = send(body)
        best = min(best, time.perf_counter() - t0)
    return best, answer


def stdio(depth: int, repeat: int) -> tuple[float, float, str]:
    proc = subprocess.Popen([*SERVE, "--role", "harness"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def send(text: str) -> str:
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()
        out: list[bytes] = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(60)
        if not out or not out[0]:
            raise SystemExit("stdio: no answer within 60 s (a hang)")
        return out[0].decode()

    try:
        send(json.dumps(INIT))
        proc.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
        proc.stdin.flush()
        ok, _ = _best(send, lambda r: _register(r, '"hello"'), repeat, 100)
        bad, answer = _best(send, lambda r: _register(r, _deep(depth)), repeat, 200)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    return ok, bad, json.loads(answer)["error"]["message"]


def http(depth: int, repeat: int) -> tuple[float, float, str]:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*SERVE, "--transport", "http", "--port", str(port)],
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("http: the server did not start") from None
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/harness/"
        headers = {"accept": "application/json, text/event-stream",
                   "content-type": "application/json"}
        with httpx.Client(timeout=60) as c:
            r = c.post(url, headers=headers, content=json.dumps(INIT))
            headers["mcp-session-id"] = r.headers["mcp-session-id"]
            headers["mcp-protocol-version"] = INIT["params"]["protocolVersion"]
            c.post(url, headers=headers, content=json.dumps(INITIALIZED))

            def send(text: str) -> str:
                return c.post(url, headers=headers, content=text).text

            ok, _ = _best(send, lambda r: _register(r, '"hello"'), repeat, 100)
            bad, answer = _best(send, lambda r: _register(r, _deep(depth)), repeat, 200)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return ok, bad, json.loads(answer)["error"]["message"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--depth", type=int, default=10_000)
    args = ap.parse_args()
    print(machine_line())
    print(f"harness_register with content nested {args.depth:,} deep, best of {args.repeat}")
    print(f"{'transport':<10} {'valid (s)':>10} {'refused (s)':>12} {'ratio':>7}  answer")
    missed = False
    for name, run in (("stdio", stdio), ("http", http)):
        ok, bad, message = run(args.depth, args.repeat)
        ratio = bad / ok
        one_line = "\n" not in message
        missed |= bad >= 1.0 or ratio > 10 or not one_line
        print(f"{name:<10} {ok:>10.4f} {bad:>12.4f} {ratio:>7.2f}  {message[:90]}")
    print("target: refused within 1 s, <= 10x the valid request, one line:",
          "MISSED" if missed else "met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
