"""The transports of the workspace's MCP server: stdio streams and the streamable HTTP app,
with the request limits, the bearer token and the deadlines both enforce before the SDK."""

import json
from typing import Any

from vistalab._core import MAX_JSON_DEPTH, MAX_REQUEST_BYTES
from vistalab._core._limits import json_text_depth

from ._errors import WorkspaceArgumentError
from ._mcp import WorkspaceService, _service_iv, build_mcp_server

__all__ = [
    "build_http_app",
    "limit_refusal",
    "stdio_streams",
    "timed_http_protocol",
    "HEADER_TIMEOUT_S",
    "BODY_TIMEOUT_S",
]


def limit_refusal(raw: bytes | str) -> str | None:
    """Why the JSON-RPC message ``raw`` breaks the request limits (one line), or None.

    Checked without parsing: the byte size against ``MAX_REQUEST_BYTES`` and the
    bracket depth against ``MAX_JSON_DEPTH`` (a scan, never recursion).
    """
    size = len(raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)
    if size > MAX_REQUEST_BYTES:
        return (f"`request` must be at most {MAX_REQUEST_BYTES} bytes (the MCP request size "
                f"limit; it has at least {size} bytes); register large content in several calls or "
                "archive it to a file")
    if json_text_depth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return (f"`arguments` must be nested at most {MAX_JSON_DEPTH} levels deep (the MCP "
                "request depth limit); flatten the structure or pass deep data as a string")
    return None


def _request_id(raw: bytes | str) -> Any:
    """The top-level ``"id"`` of a JSON-RPC message too big or deep to parse (a scan of
    depth 1 only), or None."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    decoder = json.JSONDecoder()
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            try:
                key, end = decoder.raw_decode(text, i)
            except ValueError:
                return None
            if depth == 1 and key == "id":
                j = end
                while j < n and text[j] in " \t\r\n:":
                    j += 1
                try:
                    value, _ = decoder.raw_decode(text, j)
                except ValueError:
                    return None
                return value if isinstance(value, (str, int)) else None
            i = end
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        i += 1
    return None


def refusal_response(raw: bytes | str, reason: str) -> dict[str, Any]:
    """The JSON-RPC error answering a message refused by :func:`limit_refusal`."""
    return {"jsonrpc": "2.0", "id": _request_id(raw),
            "error": {"code": -32600, "message": reason}}


def stdio_streams() -> tuple[Any, Any]:
    """``(stdin, stdout)`` for ``mcp.server.stdio.stdio_server``: stdin lines beyond
    the request limits are answered on stdout with a one-line JSON-RPC error (a
    request the SDK cannot parse would otherwise never be answered) and never reach
    the SDK; writes are serialised so an answer never tears another."""
    import io
    import sys

    import anyio

    lock = anyio.Lock()
    out = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8",
                                           write_through=True))

    class _Out:
        async def write(self, text: str) -> None:
            async with lock:
                await out.write(text)

        async def flush(self) -> None:
            async with lock:
                await out.flush()

    writer = _Out()
    text_in = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")

    async def readline(limit: int) -> str:
        return await anyio.to_thread.run_sync(text_in.readline, limit)

    class _In:
        def __aiter__(self) -> Any:
            return self._lines()

        async def _lines(self) -> Any:
            while True:
                # Read at most the limit (plus one) of a line: an over-long line is
                # refused while it is read, its rest skipped a piece at a time,
                # never held whole in memory.
                line = await readline(MAX_REQUEST_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_REQUEST_BYTES and not line.endswith("\n"):
                    reason = limit_refusal(line) or ""
                    head = line[:65536]
                    del line
                    while True:
                        rest = await readline(1 << 20)
                        if not rest or rest.endswith("\n"):
                            break
                    answer = json.dumps(refusal_response(head, reason)) + "\n"
                    async with lock:
                        await out.write(answer)
                        await out.flush()
                    continue
                refused = limit_refusal(line)
                if refused is None:
                    yield line
                    continue
                answer = json.dumps(refusal_response(line, refused)) + "\n"
                async with lock:
                    await out.write(answer)
                    await out.flush()

    return _In(), writer


#: Seconds a connection may take to send a request's headers (slow-header clients,
#: "slowloris", are dropped after it).
HEADER_TIMEOUT_S = 10.0
#: Seconds a POST may take to send its whole body (then 408, one-line JSON-RPC error).
BODY_TIMEOUT_S = 30.0


def build_http_app(service: WorkspaceService, *, token: str | None = None) -> Any:
    """One Starlette app serving both roles on one workspace: the agent role at
    ``/mcp`` and the harness role at ``/harness`` (streamable HTTP).

    Every request must carry ``Authorization: Bearer <token>`` (else 401 with a
    one-line JSON error, before anything else is read): the app's ``token``
    attribute, generated here (32 random bytes, URL-safe) unless given. The MCP
    SDK's Origin and Host checks stay in force behind it. A POST body must arrive
    within ``BODY_TIMEOUT_S`` seconds (else 408).

    A POST body beyond the request limits (``MAX_REQUEST_BYTES``, 4 MiB, the
    transport's own body limit; ``MAX_JSON_DEPTH`` levels) is answered with a
    one-line JSON-RPC error naming the limit (HTTP 413 for size, 400 for depth,
    with that JSON body), before the SDK sees it.

    Parameters
    ----------
    service : WorkspaceService
        The workspace to serve.
    token : str, optional
        The bearer token clients must send (at least 16 characters); default:
        a new random one.

    Returns
    -------
    ASGI application
        The Starlette app behind the authentication and request-limit middleware
        (run it with uvicorn); its ``token`` attribute is the bearer token.
    """
    import secrets

    service = _service_iv(service)
    if token is None:
        token = secrets.token_urlsafe(32)
    elif not isinstance(token, str) or len(token) < 16 or not token.isprintable() \
            or any(c.isspace() for c in token):
        raise WorkspaceArgumentError(
            "token", "<hidden>", "must be a string of at least 16 printable characters "
            "without spaces", "omit it to have one generated")
    import contextlib

    from starlette.applications import Starlette
    from starlette.routing import Mount

    agent = build_mcp_server(service, role="agent")
    harness = build_mcp_server(service, role="harness")
    agent_app = agent.streamable_http_app(streamable_http_path="/")
    harness_app = harness.streamable_http_app(streamable_http_path="/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with agent.session_manager.run(), harness.session_manager.run():
            yield

    app = Starlette(
        routes=[Mount("/mcp", app=agent_app), Mount("/harness", app=harness_app)],
        lifespan=lifespan,
    )
    return _BearerAuth(_LimitedBody(app), token)


class _BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``
    (compared in constant time); without it, 401 and nothing else is read."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token
        self._want = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import hmac

        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        got = b""
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                got = value
                break
        if hmac.compare_digest(got, self._want):
            await self.app(scope, receive, send)
            return
        detail = "missing" if not got else "wrong"
        payload = json.dumps({"error": f"unauthorized: the bearer token is {detail}; send "
                              "'Authorization: Bearer <token>' with the token the server "
                              "printed at start (or wrote to its token file)"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"www-authenticate", b'Bearer realm="vista-lab"'),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


def timed_http_protocol() -> Any:
    """uvicorn's h11 protocol with a header deadline: a connection that has not
    sent a request's complete headers within ``HEADER_TIMEOUT_S`` seconds (of
    connecting, or of its previous request finishing) is closed."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11Protocol(H11Protocol):  # type: ignore[misc]
        _header_timer: Any = None

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._drop_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _drop_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self._arm()
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return TimedH11Protocol


class _LimitedBody:
    """ASGI middleware: reads a POST body up to ``MAX_REQUEST_BYTES`` + 1 and refuses
    it (one-line JSON-RPC error) beyond the size or depth limit; otherwise replays
    the body to the app unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        import anyio

        chunks: list[bytes] = []
        size = 0
        more = True
        with anyio.move_on_after(BODY_TIMEOUT_S):
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    await self.app(scope, _replay([message]), send)
                    return
                body = message.get("body", b"")
                chunks.append(body)
                size += len(body)
                more = bool(message.get("more_body"))
                if size > MAX_REQUEST_BYTES:
                    break
        if more and size <= MAX_REQUEST_BYTES:  # the deadline passed mid-body
            payload = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": f"request body not received within "
                f"{BODY_TIMEOUT_S:g} s (BODY_TIMEOUT_S); send the whole body at once"}}).encode()
            await send({"type": "http.response.start", "status": 408,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"connection", b"close"),
                                    (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
            return
        raw = b"".join(chunks)
        reason = limit_refusal(raw)
        if reason is None:
            await self.app(scope, _replay([{"type": "http.request", "body": raw,
                                            "more_body": False}], receive), send)
            return
        status = 413 if size > MAX_REQUEST_BYTES else 400
        payload = json.dumps(refusal_response(raw[:65536], reason)).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


def _replay(messages: list[Any], then: Any = None) -> Any:
    queue = list(messages)

    async def receive() -> Any:
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
