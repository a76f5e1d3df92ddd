"""``vista-lab workspace serve``: the reference workspace as an MCP server
(stdio by default, streamable HTTP on 127.0.0.1 as an option)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from vistalab._core._limits import json_loads

from .._errors import CliUsageError

__all__ = ["register_serve", "run_serve"]


def register_serve(subparsers: Any) -> None:
    """Add ``serve`` to the ``workspace`` command."""
    from vistalab.workspace import TOKENIZERS

    parser = subparsers.add_parser(
        "serve",
        help="run the workspace as a Model Context Protocol server (stdio or HTTP)",
        description=(
            "Serve one context workspace over MCP. The agent role lists the paper's context "
            "tools (context_workspace_archive, context_workspace_delete) plus "
            "context_workspace_read and context_workspace_status; the harness role adds "
            "harness_register, harness_render and harness_gate. Over stdio the connection "
            "has one role (--role); over HTTP one process serves the agent role at /mcp and "
            "the harness role at /harness, bound to 127.0.0.1. Needs the 'mcp' package."
        ),
    )
    parser.add_argument("--budget", required=True, metavar="TOKENS", help="budget B in tokens")
    parser.add_argument(
        "--store",
        metavar="DIR",
        default=None,
        help="archive payloads as files in DIR (default: in memory)",
    )
    parser.add_argument(
        "--tokenizer",
        default="cl100k_base",
        choices=tuple(TOKENIZERS),
        help="token counter (default cl100k_base)",
    )
    parser.add_argument(
        "--transport",
        default="stdio",
        choices=("stdio", "http"),
        help="stdio (default) or streamable HTTP on 127.0.0.1",
    )
    parser.add_argument(
        "--role",
        default=None,
        choices=("agent", "harness"),
        help="stdio only: which tool list this connection gets (default agent); over HTTP "
        "both roles are served, at /mcp and /harness",
    )
    parser.add_argument(
        "--port", default="8765", metavar="PORT", help="HTTP port on 127.0.0.1 (default 8765)"
    )
    parser.add_argument(
        "--hard-limit",
        dest="hard_limit",
        metavar="TOKENS",
        default=None,
        help="budget guard ceiling (default 2 x budget)",
    )
    parser.add_argument(
        "--task-tools",
        dest="task_tools",
        metavar="FILE",
        default=None,
        help="JSON list of the agent's own tool schemas (OpenAI format), counted in the budget",
    )
    parser.add_argument(
        "--log", metavar="FILE", default=None, help="append the event log (JSONL) to FILE"
    )
    parser.add_argument(
        "--token-file",
        dest="token_file",
        metavar="FILE",
        default=None,
        help="HTTP only: where the generated bearer token is written, owner-only (default "
        "$XDG_RUNTIME_DIR or ~/.cache, vista-lab/mcp-<port>.token); set VISTA_LAB_MCP_TOKEN "
        "to give your own token instead",
    )
    parser.set_defaults(func=run_serve, _parser=parser)


_JSON_TYPE = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean",
              type(None): "null"}


def _task_tools(value: str | None) -> list[Any]:
    from .._paths import input_file

    if value is None:
        return []
    path = input_file("--task-tools", value)  # a FIFO or folder is refused before opening
    from vistalab._core import MAX_JSON_DEPTH, DomainError, read_bounded
    from vistalab._core._limits import json_text_depth

    try:
        raw = read_bounded("--task-tools", path)
        if json_text_depth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            raise CliUsageError(f"--task-tools: {str(path)!r} is nested more than "
                                f"{MAX_JSON_DEPTH} levels deep (the JSON depth limit); pass a "
                                "flat JSON list of OpenAI tool schemas")
        doc = json_loads(raw.decode("utf-8", "replace"))
    except DomainError:
        raise
    except OSError as exc:
        raise CliUsageError(f"--task-tools: cannot read {str(path)!r} ({exc.strerror}); check its "
                             "permissions") from None
    except json.JSONDecodeError as exc:
        raise CliUsageError(
            f"--task-tools: {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno}); "
            "pass a JSON list of OpenAI tool schemas"
        ) from None
    if not isinstance(doc, list):
        got = _JSON_TYPE.get(type(doc), "value")
        raise CliUsageError(f"--task-tools: {str(path)!r} must hold a JSON list of tool schemas "
                             f"(got a JSON {got}); wrap the schemas in [...]")
    return doc


def _serve_stdio(service: Any, role: str) -> None:
    """The stdio transport with the request limits applied before the SDK parses a
    line (see :func:`vistalab.workspace._mcp_transport.stdio_streams`)."""
    import anyio
    from mcp.server.stdio import stdio_server

    from vistalab.workspace import build_mcp_server
    from vistalab.workspace._mcp_transport import stdio_streams

    server = build_mcp_server(service, role=role)

    async def main() -> None:
        stdin, stdout = stdio_streams()
        async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
            low = server._lowlevel_server
            await low.run(read, write, low.create_initialization_options())

    anyio.run(main)


def _bind(port: int) -> Any:
    """The listening socket on 127.0.0.1:port, bound before any banner (a port in
    use is a one-line error, exit 2)."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise CliUsageError(
            f"`--port` {port}: 127.0.0.1:{port} cannot be used ({exc.strerror}); another "
            "server holds it: stop it or choose another --port"
        ) from None
    return sock


def _token_path(port: int, given: str | None) -> str:
    import os

    if given is not None:
        return given
    base = os.environ.get("XDG_RUNTIME_DIR") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vista-lab", f"mcp-{port}.token")


def _write_token(path: str, token: str) -> None:
    """``token`` into ``path``, readable by its owner only (its folder created 0700)."""
    import os

    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # never write through a link or into another's file
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(token + "\n")
    except OSError as exc:
        raise CliUsageError(f"`--token-file` {path}: cannot write the token there "
                            f"({exc.strerror}); pass a writable --token-file") from None


def _serve_http(service: Any, port: int, token_file: str | None) -> None:
    import os

    import uvicorn

    from vistalab.workspace import build_http_app
    from vistalab.workspace._mcp_transport import timed_http_protocol

    given = os.environ.get("VISTA_LAB_MCP_TOKEN")
    if given is not None and (len(given) < 16 or any(c.isspace() for c in given)):
        raise CliUsageError("VISTA_LAB_MCP_TOKEN must be at least 16 characters without "
                            "spaces; unset it to have a token generated")
    sock = _bind(port)
    app = build_http_app(service, token=given)
    where = ""
    if given is None:
        path = _token_path(port, token_file)
        _write_token(path, app.token)
        where = f"; bearer token {app.token} (also in {path}, owner-only)"
    sys.stderr.write(
        f"vista-lab workspace serve: agent role at http://127.0.0.1:{port}/mcp, "
        f"harness role at http://127.0.0.1:{port}/harness{where}\n"
    )
    config = uvicorn.Config(app, log_level="warning", http=timed_http_protocol())
    uvicorn.Server(config).run(sockets=[sock])


def run_serve(args: argparse.Namespace) -> int:
    from vistalab._core import import_optional
    from vistalab.workspace import DiskStore, Workspace, WorkspaceService

    from .workspace import _int_arg

    import_optional("mcp", "vista-lab workspace serve")
    from .._paths import output_dir, output_file

    budget = _int_arg("--budget", args.budget, lo=1)
    assert budget is not None
    port_text = str(args.port).strip()
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise CliUsageError(
            f"`--port` must be a TCP port number from 1 to 65535 (got --port={args.port!r}); "
            "e.g. --port 8765"
        )
    port = int(port_text)
    store_dir = None if args.store is None else output_dir("--store", args.store)
    log_path = None if args.log is None else output_file("--log", args.log)
    if args.transport == "stdio" and args.port != "8765":
        raise CliUsageError(
            f"--port {args.port} applies to --transport http only; over stdio there is no "
            "port (drop --port, or add --transport http)"
        )
    if args.transport == "stdio" and args.token_file is not None:
        raise CliUsageError("--token-file applies to --transport http only (stdio needs no "
                            "token: only the process that started the server can talk to it)")
    if args.transport == "http" and args.role is not None:
        raise CliUsageError(
            f"--role {args.role} applies to --transport stdio only; over HTTP one process "
            "serves both roles (the agent at /mcp, the harness at /harness)"
        )
    store = None if store_dir is None else DiskStore(store_dir)
    if store is not None and (held := store.keys()):
        # serve starts a fresh workspace, and payload files are never overwritten:
        # refuse now rather than at the agent's first colliding archive
        raise CliUsageError(
            f"`--store` {store_dir} already holds {len(held)} archived payload(s) of an earlier "
            f"workspace (e.g. {sorted(held)[0]}); serve starts a fresh workspace and never "
            "overwrites them: pass an empty or new folder"
        )
    ws = Workspace(
        budget,
        tokenizer=args.tokenizer,
        store=store,
        hard_limit=_int_arg("--hard-limit", args.hard_limit, lo=1),
        task_tools=_task_tools(args.task_tools),
        log_path=log_path,
    )
    service = WorkspaceService(ws)
    try:
        if args.transport == "stdio":
            _serve_stdio(service, args.role or "agent")
        else:
            _serve_http(service, port, args.token_file)
    finally:
        ws.close()
    return 0
