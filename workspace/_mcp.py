"""The workspace as a Model Context Protocol server (the paper's implementation is
an MCP server): agent-facing context tools and, in a separate role, the harness
operations that feed the workspace. Needs the optional ``mcp`` package.

Two roles, two tool lists, one workspace:

* ``agent`` lists only what the paper's agent may call:
  ``context_workspace_archive``, ``context_workspace_delete`` (the paper's two
  tools, same docstrings), ``context_workspace_read`` (the paper's
  ``read_path(h, q)`` for agents without file tools) and
  ``context_workspace_status`` (the ``<context_workspace_status>`` dashboard).
* ``harness`` lists the same four plus ``harness_register``,
  ``harness_render`` and ``harness_gate``. A model only calls tools its host
  lists, so an agent connected to the agent role cannot call a harness
  operation by mistake; a harness that relays tool calls for its model gives
  the model :data:`MCP_AGENT_TOOLS` only (every harness tool is also marked with
  ``_meta["vista/audience"] = "harness"``).

Over streamable HTTP one process serves both roles on one workspace
(``/mcp`` for the agent's host, ``/harness`` for the harness); over stdio the
single connection belongs to whoever spawned the server, so the role is chosen
with ``role=``. Every engine refusal comes back as an MCP tool error
(``isError``) carrying the engine's one-line message, and so do arguments that
miss the tool's input schema (one line naming the argument and the rule, not
the SDK's multi-line validation report); the server never crashes on bad input.

Limits (stated once in :mod:`vistalab._core._limits`, the same on both
transports): a request is at most ``MAX_REQUEST_BYTES`` (4 MiB, the streamable
HTTP transport's body limit) and nested at most ``MAX_JSON_DEPTH`` (100) deep;
beyond either, the request is answered at once with a one-line refusal
(:func:`._mcp_transport.limit_refusal`), never left unanswered or failed with a
bare HTTP 413. The transports (stdio streams, the HTTP app and its middleware)
live in :mod:`._mcp_transport`; this module holds the service and the servers.
"""

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vistalab._core import MAX_JSON_DEPTH, MAX_REQUEST_BYTES, VistaLabError, short_repr

from ._errors import WorkspaceArgumentError, WorkspaceError
from ._protocol import ARCHIVE_TOOL, DELETE_TOOL, READ_TOOL_ALIAS

__all__ = [
    "MCP_AGENT_TOOLS",
    "MCP_HARNESS_TOOLS",
    "ROLES",
    "WorkspaceService",
    "build_mcp_server",
]

READ_TOOL = READ_TOOL_ALIAS
STATUS_TOOL = "context_workspace_status"
#: Tools a model may be given (the agent role's whole list).
MCP_AGENT_TOOLS: tuple[str, ...] = (ARCHIVE_TOOL, DELETE_TOOL, READ_TOOL, STATUS_TOOL)
#: Harness-only operations (listed in the harness role only).
MCP_HARNESS_TOOLS: tuple[str, ...] = ("harness_register", "harness_render", "harness_gate")
ROLES = ("agent", "harness")
_AUDIENCE = "vista/audience"

# Docstrings the model reads. Archive and delete are the paper's verbatim
# (Implementation Details, "Context tool definitions").
_ARCHIVE_DOC = (
    "Replace one or more blocks with compact indexes. The original content is stored "
    "externally as a payload file. Operations are block-level: only listed block IDs are "
    "archived. Returns the payload file path for later recovery.\n"
    '    block_id:    Block IDs, ranges, or group IDs, e.g. "B3", "B3,B4", "B10-B20", or "G2".\n'
    "    replacement: Short index text for the archived block(s)."
)
_DELETE_DOC = (
    "Permanently remove one or more blocks. Deleted content cannot be recovered.\n"
    "    block_id: Block IDs, ranges, or group IDs.\n"
    "    reason:   Short reason why the content has no future task value."
)
_READ_DOC = (
    "Read the exact bytes of an archived payload (recovery is a normal read). Returns the "
    "payload text, checksum-verified.\n"
    "    path:     The payload path an archive handle or placeholder shows.\n"
    '    selector: Optional part: "bytes=START:STOP", "lines=FIRST-LAST" or "member=B7" '
    "(one block of a group payload)."
)
_STATUS_DOC = (
    "Show the <context_workspace_status> dashboard: the budget bar and one ledger row per "
    "block (ID, ~tokens, age, type, level, parent, status)."
)


class WorkspaceService:
    """The operations the server exposes, as plain Python over one workspace.

    Every method either returns the text a tool returns or raises
    :class:`WorkspaceError` with the engine's one-line message. The engine
    locks each call itself; this service's lock also keeps a multi-message
    registration whole, so an agent's call on the other role cannot land in
    the middle of it. Independent of the ``mcp`` package (usable, and tested,
    without a server).

    Parameters
    ----------
    workspace : Workspace
        The workspace to serve.
    """

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace
        self._lock = threading.RLock()

    # ------------------------------------------------------------ agent-facing
    def archive(self, block_id: str, replacement: str = "") -> str:
        """Archive; returns the payload path (the paper's return value; Section
        "Meta Context Tool", eq. archive-contract).

        Parameters
        ----------
        block_id : str
            A block or group ID the dashboard shows (``B7``, ``G2``).
        replacement : str
            The short index text the handle shows in place of the content.

        Returns
        -------
        str
            The engine's answer, naming the payload path.

        Raises
        ------
        WorkspaceError
            If the engine refuses the call (the message is the engine's text,
            which becomes an MCP tool error).
        """
        return self._agent_tool(ARCHIVE_TOOL, {"block_id": block_id, "replacement": replacement})

    def delete(self, block_id: str, reason: str) -> str:
        """Delete; returns the confirmation naming the units and the tokens freed
        (or added, when a deleted call's results turn into plain context).

        Parameters
        ----------
        block_id : str
            A block or group ID the dashboard shows (``B7``, ``G2``).
        reason : str
            Why the block is dropped for good (recorded in the event log).

        Returns
        -------
        str
            The engine's confirmation.

        Raises
        ------
        WorkspaceError
            If the engine refuses the call (the message is the engine's text,
            which becomes an MCP tool error).
        """
        return self._agent_tool(DELETE_TOOL, {"block_id": block_id, "reason": reason})

    def _agent_tool(self, name: str, arguments: dict[str, Any]) -> str:
        # The engine's one tool path (what dispatch, replay and the LangChain
        # adapter run), so an MCP agent gets the same answers; a refusal is
        # raised with the engine's message and becomes an MCP tool error.
        with self._lock:
            out = self.workspace.call_tool(name, arguments)
        if not out.ok:
            raise WorkspaceError(out.detail or out.text)
        return str(out.text)

    def read(self, path: str, selector: str = "") -> str:
        """Exact payload text (undecodable bytes shown as escapes).

        Parameters
        ----------
        path : str
            The payload path a handle shows.
        selector : str
            Optional part of the payload (``bytes=``, ``lines=`` or ``member=``);
            ``""`` for all of it.

        Returns
        -------
        str
            The bytes decoded as UTF-8 with ``backslashreplace``.

        Raises
        ------
        WorkspaceError
            If the path is refused or the payload fails its checksum.
        """
        with self._lock:
            data = self.workspace.read_path(path, selector or None)
        return data.decode("utf-8", "backslashreplace")

    def status(self) -> str:
        """The dashboard the agent sees now (management form in overflow).

        Returns
        -------
        str
            The dashboard text.
        """
        with self._lock:
            return str(self.workspace.dashboard())

    # ------------------------------------------------------------ harness-facing
    def register(self, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Register messages in order (OpenAI chat or Anthropic Messages format,
        detected per call); returns the new block IDs and the resulting mode.

        All-or-nothing per message: registration stops at the first refused
        message, and the error names its index (earlier ones stay registered,
        as they would in an agent loop).

        Parameters
        ----------
        messages : sequence of Mapping
            The messages (SDK objects are accepted from a Python harness).

        Returns
        -------
        dict
            ``block_ids``, and the rendering's ``mode``, ``tokens``,
            ``candidate_tokens`` and ``budget`` after them.

        Raises
        ------
        WorkspaceArgumentError
            If ``messages`` is not a list, or a message is refused (the error
            names ``messages[i]`` and the IDs registered so far).
        """
        from ._formats import to_openai_messages
        from ._sdk import plain_sdk

        messages = plain_sdk(messages, "messages")  # SDK objects from a Python harness
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
            raise WorkspaceArgumentError(
                "messages", messages, "must be a list of message objects", "wrap it in [...]"
            )
        converted = to_openai_messages(messages, codec=workspace_codec(self.workspace))
        ids: list[str] = []
        with self._lock:
            for i, msg in enumerate(converted):
                try:
                    ids.append(self.workspace.register_message(msg))
                except WorkspaceError as exc:
                    done = f"; registered so far: {', '.join(ids)}" if ids else ""
                    raise WorkspaceArgumentError(
                        f"messages[{i}]", _short(msg), f"was refused ({exc})", "fix it" + done
                    ) from None
            r = self.workspace.render()
        return {
            "block_ids": ids,
            "mode": r.mode,
            "tokens": r.tokens,
            "candidate_tokens": r.candidate_tokens,
            "budget": r.budget,
        }

    def render(self, format: str = "openai") -> dict[str, Any]:
        """The request to send to the model now, in ``format`` (``openai`` or
        ``anthropic``), with the mode, token count and allowed tools.

        Parameters
        ----------
        format : str
            ``"openai"`` or ``"anthropic"``.

        Returns
        -------
        dict
            The request document (:func:`render_request`).
        """
        from ._formats import render_request

        with self._lock:
            return render_request(self.workspace, format)

    def gate(self, tool_name: str) -> str:
        """``""`` if ``tool_name`` may run now, else the refusal notice to return
        as its result (task tools are refused in overflow mode, eq. overflow).

        Parameters
        ----------
        tool_name : str
            The tool the agent called.

        Returns
        -------
        str
            ``""`` or the refusal notice.
        """
        with self._lock:
            return self.workspace.gate(tool_name) or ""


def workspace_codec(ws: Any) -> Any:
    """The workspace's Anthropic codec (originals of projected messages)."""
    return ws._codec


def _short(msg: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k != "content"}
    content = msg.get("content")
    if isinstance(content, str):
        out["content"] = content if len(content) <= 60 else content[:57] + "..."
    return out


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an engine refusal into an MCP tool error with the engine's message
    (not the SDK's "Error executing tool" wrapper around a stack trace)."""
    import functools

    from mcp.types import CallToolResult, TextContent

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            out = fn(*args, **kwargs)
        except (VistaLabError, RecursionError) as exc:
            text = (" ".join(str(exc).split()) if isinstance(exc, VistaLabError) else
                    f"the arguments are nested too deeply (at most {MAX_JSON_DEPTH} levels); "
                    "flatten them")
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    return wrapper


def _role_iv(role: Any) -> str:
    if role not in ROLES:
        from ._errors import UnknownNameError

        raise UnknownNameError("server role", str(role), ROLES)
    return str(role)


def _service_iv(service: Any) -> WorkspaceService:
    """Refuse a non-service before the (slow) ``mcp`` import."""
    if not isinstance(service, WorkspaceService):
        raise WorkspaceArgumentError(
            "service", service, f"must be a WorkspaceService, not {type(service).__name__}",
            "pass WorkspaceService(workspace)")
    return service


def build_mcp_server(service: WorkspaceService, *, role: str = "agent") -> Any:
    """An ``mcp`` ``MCPServer`` exposing ``service`` in ``role``.

    Parameters
    ----------
    service : WorkspaceService
    role : {"agent", "harness"}
        ``agent`` lists :data:`MCP_AGENT_TOOLS` only; ``harness`` adds
        :data:`MCP_HARNESS_TOOLS`.

    Returns
    -------
    MCPServer
        The server; run it with its ``run`` method (stdio) or mount it.

    Raises
    ------
    UnknownNameError
        Unknown role.
    MissingExtraError
        The ``mcp`` package is missing (``pip install 'vista-lab[agents]'``).
    """
    role = _role_iv(role)
    service = _service_iv(service)
    from vistalab._core import import_optional

    import_optional("mcp", "the workspace MCP server")
    from mcp.types import CallToolResult, ToolAnnotations

    ws = service.workspace
    server = _one_line_server_class()(
        name=f"vista-workspace-{role}",
        log_level="WARNING",  # refusals are results, not server events
        instructions=(
            "Context workspace with a hard budget of "
            f"{ws.budget:,} tokens ({ws.tokenizer.name}). "
            + (
                "Agent role: context tools only."
                if role == "agent"
                else "Harness role: harness_* tools feed and render the workspace; give the "
                "model only the context_workspace_* tools."
            )
        ),
    )

    def context_workspace_archive(block_id: str, replacement: str = "") -> CallToolResult:
        return _guarded(service.archive)(block_id, replacement)  # type: ignore[no-any-return]

    def context_workspace_delete(block_id: str, reason: str) -> CallToolResult:
        return _guarded(service.delete)(block_id, reason)  # type: ignore[no-any-return]

    def context_workspace_read(path: str, selector: str = "") -> CallToolResult:
        return _guarded(service.read)(path, selector)  # type: ignore[no-any-return]

    def context_workspace_status() -> CallToolResult:
        return _guarded(service.status)()  # type: ignore[no-any-return]

    agent_tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (
            context_workspace_archive,
            _ARCHIVE_DOC,
            ToolAnnotations(read_only_hint=False, destructive_hint=False),
        ),
        (
            context_workspace_delete,
            _DELETE_DOC,
            ToolAnnotations(read_only_hint=False, destructive_hint=True),
        ),
        (context_workspace_read, _READ_DOC, ToolAnnotations(read_only_hint=True)),
        (context_workspace_status, _STATUS_DOC, ToolAnnotations(read_only_hint=True)),
    ]
    for fn, doc, ann in agent_tools:
        server.add_tool(
            fn,
            name=fn.__name__,
            description=doc,
            annotations=ann,
            meta={_AUDIENCE: "agent"},
            structured_output=False,
        )
    if role == "harness":

        def harness_register(messages: list[dict[str, Any]]) -> CallToolResult:
            return _guarded(service.register)(messages)  # type: ignore[no-any-return]

        def harness_render(format: str = "openai") -> CallToolResult:
            return _guarded(service.render)(format)  # type: ignore[no-any-return]

        def harness_gate(tool_name: str) -> CallToolResult:
            return _guarded(service.gate)(tool_name)  # type: ignore[no-any-return]

        harness_tools: list[tuple[Callable[..., Any], str]] = [
            (
                harness_register,
                "HARNESS ONLY (never give this tool to the model). Register conversation "
                "messages in order: OpenAI chat messages or Anthropic Messages "
                "({role, content blocks}); tool results pass the budget guard. Returns the "
                f"block IDs and the mode. A request is at most {MAX_REQUEST_BYTES} bytes and "
                f"nested at most {MAX_JSON_DEPTH} levels deep (register a large result in "
                "several calls).",
            ),
            (
                harness_render,
                "HARNESS ONLY. The request to send to the model now (format 'openai' or "
                "'anthropic'): messages, tools, tokens <= budget, mode, allowed tools.",
            ),
            (
                harness_gate,
                "HARNESS ONLY. Empty if the task tool may run now, else the refusal notice "
                "to return as its result (task tools are refused in overflow mode).",
            ),
        ]
        for fn, doc in harness_tools:
            server.add_tool(
                fn,
                name=fn.__name__,
                description=doc,
                meta={_AUDIENCE: "harness"},
                structured_output=False,
            )
    return server


def _schema_error_line(tool: str, exc: Any) -> str:
    """One line naming each argument that missed the input schema, and the rule."""
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        if err.get("type") == "missing":
            parts.append(f"`{loc}` is required (missing)")
        else:
            rule = " ".join(str(err.get("msg", "is invalid")).split())
            parts.append(f"`{loc}`: {rule[:1].lower()}{rule[1:]} (got {loc}="
                         f"{short_repr(err.get('input'), 60)})")
    return (f"{tool}: " + "; ".join(parts) + "; pass the arguments the tool's input schema "
            "lists")


def _one_line_server_class() -> Any:
    """``MCPServer`` whose schema-validation refusals are one line (see module doc)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class OneLineServer(MCPServer):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], *a: Any,
                            **k: Any) -> Any:
            try:
                return await super().call_tool(name, arguments, *a, **k)
            except ToolError as exc:
                if isinstance(exc, UnexpectedToolError):
                    raise
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(_schema_error_line(name, exc.__cause__)) from exc.__cause__
                raise ToolError(" ".join(str(exc).split())) from exc

    return OneLineServer
