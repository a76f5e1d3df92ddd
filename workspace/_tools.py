"""The one agent-tool dispatch table (name -> action, required and optional
arguments) and the one trace driver, used by the engine, trace replay, the
process reward and the probe analysis."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import UnknownNameError, WorkspaceError
from ._protocol import ARCHIVE_TOOL, DELETE_TOOL, READ_PATH_TOOL
from ._reads import ReadLayer

__all__ = [
    "ToolSpec",
    "AGENT_TOOLS",
    "ACTIONS",
    "parse_tool_call",
    "apply_action",
    "drive_trace",
    "ToolLayer",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One context action: its agent-facing tool name (None when only the
    harness can run it), the event it logs, and its argument names."""

    action: str
    tool: str | None
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    @property
    def params(self) -> tuple[str, ...]:
        return self.required + self.optional


#: Every context action, by the op name its event logs (trace ``action`` items use it).
ACTIONS: dict[str, ToolSpec] = {
    "archive": ToolSpec("archive", ARCHIVE_TOOL, ("block_id",), ("replacement",)),
    "delete": ToolSpec("delete", DELETE_TOOL, ("block_id", "reason")),
    "restore": ToolSpec("restore", None, ("block_id",)),
    "read": ToolSpec("read", READ_PATH_TOOL, ("path",), ("selector",)),
}
#: Agent-facing tools by name (``read_path`` only when the workspace exposes it).
AGENT_TOOLS: dict[str, ToolSpec] = {s.tool: s for s in ACTIONS.values() if s.tool is not None}


def parse_tool_call(
    name: Any, arguments: Any, *, include_read_path: bool
) -> tuple[ToolSpec, dict[str, Any]] | str:
    """Check one agent tool call: its spec and parsed arguments, or the error
    string the agent gets back (nothing is run on a bad call)."""
    tools = {k: v for k, v in AGENT_TOOLS.items() if include_read_path or v.action != "read"}
    if not isinstance(name, str) or name not in tools:
        return f"Error: {UnknownNameError('context tool', str(name), tools)}"
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"Error: arguments of {name} are not valid JSON ({exc.msg} at {exc.pos})"
        except RecursionError:
            return f"Error: arguments of {name} are nested too deeply"
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        return f"Error: arguments of {name} must be a JSON object"
    spec = tools[name]
    missing = [k for k in spec.required if k not in parsed]
    extra = [k for k in parsed if k not in spec.params]
    if missing or extra:
        return (
            f"Error: {name} takes {', '.join(spec.params)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unexpected {', '.join(map(str, extra))}" if extra else "")
        )
    return spec, dict(parsed)


def apply_action(ws: Any, item: Mapping[str, Any]) -> bool:
    """Run a harness-level trace ``action`` item; False if the engine refused it
    (the engine logs the refusal as a failed event: the agent's mistake)."""
    act = item["action"]
    try:
        if act == "archive":
            ws.archive(item["block_id"], item.get("replacement", ""))
        elif act == "delete":
            ws.delete(item["block_id"], item["reason"])
        elif act == "restore":
            ws.restore(item["block_id"])
        else:
            # A bare key ("G1.txt") resolves inside the store, like a relative path.
            ws.read_path(item["path"], item.get("selector") or None)
    except WorkspaceError:
        return False
    return True


#: How an agent-facing tool's answer starts when the payload store itself failed (an
#: OSError such as ENOSPC or EACCES); the state is unchanged.
STORE_FAILURE = "Error: the archive store failed"


def drive_trace(
    ws: Any,
    items: Sequence[Mapping[str, Any]],
    before_model: Callable[[int, bool], None],
    on_error: Callable[[int, WorkspaceError], Exception],
) -> tuple[int, int]:
    """Feed checked trace items to ``ws``: messages are registered, ``action``
    items applied, context tool calls executed and answered by the engine (the
    trace's own answers to them are skipped, matched by order: a call id may be
    reused once its earlier call was answered).

    ``before_model(index, is_action)`` runs where the model was called: before
    each assistant message and each action item. Returns (messages registered,
    actions applied).
    """
    auto: dict[str, int] = {}  # call id -> trace answers still to skip
    n_messages = n_actions = 0
    for i, item in enumerate(items):
        if "action" in item:
            auto.clear()
            before_model(i, True)
            n_actions += 1
            apply_action(ws, item)
            continue
        role = item.get("role")
        if role == "tool":
            cid = item.get("tool_call_id")
            if isinstance(cid, str) and auto.get(cid):
                auto[cid] -= 1  # answered by the engine when the call was replayed
                continue
        else:
            auto.clear()  # recorded answers follow their call directly, or are absent
        if role == "assistant":
            before_model(i, False)
        try:
            ws.register_message(item)
        except WorkspaceError as exc:
            raise on_error(i, exc) from None
        n_messages += 1
        if role == "assistant" and item.get("tool_calls"):
            for call in item["tool_calls"]:
                name = call["function"]["name"]
                spec = AGENT_TOOLS.get(name)
                if spec is not None and spec.action in ("archive", "delete"):
                    n_actions += 1
                    out = ws.dispatch(name, call["function"].get("arguments", "{}"))
                    if out.startswith(STORE_FAILURE):
                        # The agent would be told and could retry; a replay cannot go on
                        # faithfully with the store failing, so the harness is told instead.
                        raise WorkspaceError(
                            f"replaying message {i}: {out.removeprefix('Error: ')}"
                        )
                    ws.register_tool_result(call["id"], out)
                    auto[call["id"]] = auto.get(call["id"], 0) + 1
    return n_messages, n_actions


class ToolLayer(ReadLayer):
    """The agent-facing tools: strings in, strings out, nothing changed on a bad call."""

    def context_workspace_archive(self, block_id: str, replacement: str = "") -> str:
        """Agent tool: archive blocks; returns the payload path or an error string."""
        return self._agent_call(lambda: self.archive(block_id, replacement).path)

    def context_workspace_delete(self, block_id: str, reason: str) -> str:
        """Agent tool: delete blocks; returns a confirmation or an error string."""

        def run() -> str:
            res = self.delete(block_id, reason)
            n = res.freed_tokens
            # Deleting a call can cost tokens: its results then render as plain
            # context with a short prefix. Say so instead of "freed ~-6".
            change = (
                f"freed ~{n:,} tokens"
                if n >= 0
                else f"added ~{-n:,} tokens: its results now show as plain context"
            )
            return (
                f"Deleted {','.join(res.units)} ({len(res.blocks)} blocks, {change}). "
                "Deleted content cannot be recovered."
            )

        return self._agent_call(run)

    def read_path_tool(self, path: str, selector: str = "") -> str:
        """Agent tool: payload text (undecodable bytes shown as escapes) or an error string."""
        return self._agent_call(
            lambda: self.read_path(path, selector or None).decode("utf-8", "backslashreplace")
        )

    def _agent_call(self, run: Callable[[], str]) -> str:
        try:
            return run()
        except WorkspaceError as exc:
            return f"Error: {exc}"
        except OSError as exc:  # the store could not write or read; nothing changed
            return (
                f"{STORE_FAILURE} ({exc.strerror or exc}); nothing changed. "
                "Free disk space or fix the archive folder, then call again."
            )

    def dispatch(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run a context tool call from a model response; always returns a string.

        ``arguments`` is the call's JSON string (or an already-parsed mapping).
        Unknown tools, malformed JSON and wrong argument names come back as
        error strings and change nothing.
        """
        checked = parse_tool_call(name, arguments, include_read_path=self._include_read_path)
        if isinstance(checked, str):
            return checked
        spec, args = checked
        if spec.action == "archive":
            return self.context_workspace_archive(**args)
        if spec.action == "delete":
            return self.context_workspace_delete(**args)
        return self.read_path_tool(**args)
