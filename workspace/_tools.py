"""The one agent-tool dispatch table (name -> action, required and optional
arguments) and the one trace driver, used by the engine, trace replay, the
process reward and the probe analysis."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vistalab._core._limits import json_loads

from ._errors import (
    BudgetConfigError,
    PayloadConflictError,
    UnknownNameError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._protocol import ARCHIVE_TOOL, DELETE_TOOL, READ_PATH_TOOL, READ_TOOL_ALIAS, error_text
from ._reads import ReadLayer
from ._records import _LookupEnum

__all__ = [
    "ToolSpec",
    "AGENT_TOOLS",
    "ACTIONS",
    "ToolFailure",
    "ToolOutcome",
    "ToolReply",
    "ToolCallRequest",
    "DriveCounts",
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


class ToolFailure(_LookupEnum):
    """Why an agent tool call failed; in every case the workspace is unchanged.

    Attributes
    ----------
    BAD_CALL : str
        ``"bad_call"``: not run (unknown tool, malformed JSON, wrong argument names).
    REFUSED : str
        ``"refused"``: the engine refused the action (logged as a failed event).
    STORE : str
        ``"store"``: the payload store failed (an ``OSError``); nothing logged.
    """

    #: Not run: unknown tool, malformed JSON, wrong argument names.
    BAD_CALL = "bad_call"
    #: The engine refused the action (a :class:`WorkspaceError`, the agent's
    #: mistake); it is logged as a failed event.
    REFUSED = "refused"
    #: The payload store itself failed (an ``OSError`` such as ENOSPC or EACCES);
    #: nothing is logged, and a retry may succeed once the store is fixed.
    STORE = "store"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one agent tool call.

    Attributes
    ----------
    text : str
        What the agent is told: the payload path, a confirmation, the text
        read, or an error string starting with :data:`ERROR_PREFIX`.
    failure : ToolFailure or None
        Why the call failed; None when it succeeded.
    detail : str
        The failure's reason (``text`` without :data:`ERROR_PREFIX`); empty
        when the call succeeded.
    """

    text: str
    failure: ToolFailure | None = None
    detail: str = ""

    @classmethod
    def failed(cls, failure: ToolFailure, detail: str) -> ToolOutcome:
        """A failed call whose reason is ``detail`` (the text is :func:`error_text`).

        Parameters
        ----------
        failure : ToolFailure
            Why it failed.
        detail : str
            The reason, without :data:`ERROR_PREFIX`.

        Returns
        -------
        ToolOutcome
            The failed outcome.
        """
        return cls(error_text(detail), failure, detail)

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.failure is None


class ToolReply(str):
    """The text an agent tool returns, which Python code can also ask whether
    the call succeeded: a ``str`` (exactly :attr:`ToolOutcome.text`, so it goes
    to the agent unchanged, compares and serialises as that text) carrying its
    :class:`ToolOutcome`.

    Parameters
    ----------
    outcome : ToolOutcome
        The call's outcome; the string is its ``text``.

    Attributes
    ----------
    outcome : ToolOutcome
        The typed outcome of the call (``failure`` and ``detail``).

    Examples
    --------
    >>> from vistalab.workspace import Workspace
    >>> ws = Workspace(3000)
    >>> ws.register_user("the task")
    'B1'
    >>> out = ws.context_workspace_archive("B1")
    >>> out.ok, out.failure.value
    (False, 'refused')
    >>> out.startswith("Error:")
    True
    """

    outcome: ToolOutcome

    def __new__(cls, outcome: ToolOutcome) -> ToolReply:
        if not isinstance(outcome, ToolOutcome):
            raise WorkspaceArgumentError(
                "outcome", outcome, "must be a ToolOutcome",
                "take the reply an agent tool returns, or wrap ToolOutcome.failed(...)")
        reply = super().__new__(cls, outcome.text)
        reply.outcome = outcome
        return reply

    @property
    def ok(self) -> bool:
        """True when the call succeeded (:attr:`ToolOutcome.ok`)."""
        return self.outcome.ok

    @property
    def failure(self) -> ToolFailure | None:
        """Why the call failed, None when it succeeded (:attr:`ToolOutcome.failure`)."""
        return self.outcome.failure

    def __reduce__(self) -> tuple[Any, ...]:
        return (ToolReply, (self.outcome,))


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A checked agent tool call: its spec and its parsed arguments."""

    spec: ToolSpec
    args: dict[str, Any]


def _bad_call(detail: str) -> ToolOutcome:
    return ToolOutcome.failed(ToolFailure.BAD_CALL, detail)


_TOOLS_WITH_READ: dict[str, ToolSpec] = {**AGENT_TOOLS, READ_TOOL_ALIAS: ACTIONS["read"]}
_TOOLS_NO_READ: dict[str, ToolSpec] = {k: v for k, v in AGENT_TOOLS.items() if v.action != "read"}


def parse_tool_call(
    name: Any, arguments: Any, *, include_read_path: bool
) -> ToolCallRequest | ToolOutcome:
    """Check one agent tool call: the checked request, or the failed outcome
    (``ToolFailure.BAD_CALL``) whose text the agent gets back; nothing is run
    on a bad call."""
    tools = _TOOLS_WITH_READ if include_read_path else _TOOLS_NO_READ
    if name in (READ_PATH_TOOL, READ_TOOL_ALIAS) and not include_read_path:
        return _bad_call(
            f"{name} is not a tool of this workspace: recovery is an ordinary file read of "
            "the path the handle shows (build the workspace with "
            "include_read_path_tool=True for agents without a file tool)"
        )
    if not isinstance(name, str) or name not in tools:
        return _bad_call(str(UnknownNameError("context tool", str(name), tools)))
    if isinstance(arguments, str):
        try:
            parsed = json_loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _bad_call(f"arguments of {name} are not valid JSON ({exc.msg} at {exc.pos})")
        except RecursionError:
            return _bad_call(f"arguments of {name} are nested too deeply")
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        return _bad_call(f"arguments of {name} must be a JSON object")
    spec = tools[name]
    missing = [k for k in spec.required if k not in parsed]
    extra = [k for k in parsed if k not in spec.params]
    if missing or extra:
        return _bad_call(
            f"{name} takes {', '.join(spec.params)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unexpected {', '.join(map(str, extra))}" if extra else "")
        )
    return ToolCallRequest(spec, dict(parsed))


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


@dataclass(frozen=True, slots=True)
class DriveCounts:
    """What :func:`drive_trace` fed to the workspace.

    Attributes
    ----------
    messages : int
        Trace messages registered (the trace's own answers to replayed
        context calls are skipped, so not counted).
    actions : int
        Context actions run: ``action`` items plus archive and delete calls.
    """

    messages: int
    actions: int


def drive_trace(
    ws: Any,
    items: Sequence[Mapping[str, Any]],
    before_model: Callable[[int, bool], None],
    on_error: Callable[[int, WorkspaceError], Exception],
) -> DriveCounts:
    """Feed checked trace items to ``ws``: messages are registered, ``action``
    items applied, context tool calls executed and answered by the engine (the
    trace's own answers to them are skipped, matched by order: a call id may be
    reused once its earlier call was answered).

    ``before_model(index, is_action)`` runs where the model was called: before
    each assistant message and each action item.

    Raises
    ------
    WorkspaceError
        When the payload store fails while a context call is replayed (the
        agent would be told and could retry; the replay cannot go on faithfully).
    Exception
        ``on_error(index, exc)`` for a message the workspace refuses.
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
        except BudgetConfigError as exc:
            # the trace is fine; the budget cannot hold what this message pins
            raise BudgetConfigError(
                "budget", ws.budget, f"must hold the trace's message {i} ({role}, pinned): it "
                f"{exc.rule}", "raise the budget (the trace itself is well formed)") from None
        except WorkspaceError as exc:
            raise on_error(i, exc) from None
        n_messages += 1
        if role == "assistant" and item.get("tool_calls"):
            for call in item["tool_calls"]:
                name = call["function"]["name"]
                spec = AGENT_TOOLS.get(name)
                if spec is not None and spec.action in ("archive", "delete"):
                    n_actions += 1
                    out = ws.call_tool(name, call["function"].get("arguments", "{}"))
                    if out.failure is ToolFailure.STORE:
                        # The agent would be told and could retry; a replay cannot go on
                        # faithfully with the store failing, so the harness is told instead.
                        raise WorkspaceError(f"replaying message {i}: {out.detail}")
                    ws.register_tool_result(call["id"], out.text)
                    auto[call["id"]] = auto.get(call["id"], 0) + 1
    return DriveCounts(messages=n_messages, actions=n_actions)


class ToolLayer(ReadLayer):
    """The agent-facing tools: strings in, strings out, nothing changed on a bad call.

    Every call goes through one path, :meth:`call_tool` (or :meth:`_run_tool`
    for the per-tool methods, whose arguments are already named), which
    returns a typed :class:`ToolOutcome`; the string methods return its text.
    """

    def context_workspace_archive(self, block_id: str, replacement: str = "") -> ToolReply:
        """Agent tool: archive blocks (the paper's ``archive(S, r)``).

        Parameters
        ----------
        block_id : str
            The blocks, as the agent writes them (``"B4"``, ``"B3-B5,G1"``).
        replacement : str
            Index text the handle shows in place of the blocks.

        Returns
        -------
        ToolReply
            The payload path, or an error string starting with
            :data:`ERROR_PREFIX` (nothing changed); ``.ok`` and ``.failure`` say
            which, for Python code (the text itself is what the agent gets).
        """
        return ToolReply(
            self._run_tool("archive", {"block_id": block_id, "replacement": replacement}))

    def context_workspace_delete(self, block_id: str, reason: str) -> ToolReply:
        """Agent tool: delete blocks (no payload is kept).

        Parameters
        ----------
        block_id : str
            The blocks, as the agent writes them (``"B4"``, ``"B3-B5"``).
        reason : str
            Why they are deleted (logged).

        Returns
        -------
        ToolReply
            A confirmation with the tokens freed, or an error string (nothing
            changed); ``.ok`` and ``.failure`` say which.
        """
        return ToolReply(self._run_tool("delete", {"block_id": block_id, "reason": reason}))

    def read_path_tool(self, path: str, selector: str = "") -> ToolReply:
        """Agent tool: read a payload (for agents without a file tool).

        Parameters
        ----------
        path : str
            The payload path a handle shows.
        selector : str
            ``""`` (all), ``"bytes=START:STOP"``, ``"lines=FIRST-LAST"`` or
            ``"member=B7"``.

        Returns
        -------
        ToolReply
            The payload text (undecodable bytes shown as escapes) or an error
            string; ``.ok`` and ``.failure`` say which.
        """
        return ToolReply(self._run_tool("read", {"path": path, "selector": selector}))

    def call_tool(self, name: Any, arguments: str | Mapping[str, Any]) -> ToolOutcome:
        """Run a context tool call from a model response; the typed outcome.

        Parameters
        ----------
        name : str
            The tool's name (``context_workspace_archive``, ...).
        arguments : str or Mapping
            The call's JSON string, or an already-parsed mapping.

        Returns
        -------
        ToolOutcome
            ``text`` is exactly what :meth:`dispatch` returns; ``failure``
            says whether and why the call failed (unknown tool, malformed JSON
            and wrong argument names are ``BAD_CALL`` and change nothing).
        """
        checked = parse_tool_call(name, arguments, include_read_path=self._include_read_path)
        if isinstance(checked, ToolOutcome):
            return checked
        return self._run_tool(checked.spec.action, checked.args)

    def dispatch(self, name: str, arguments: str | Mapping[str, Any]) -> ToolReply:
        """Run a context tool call from a model response; always returns a string.

        Unknown tools, malformed JSON and wrong argument names come back as
        error strings and change nothing.

        Parameters
        ----------
        name : str
            The tool's name (``context_workspace_archive``, ...).
        arguments : str or Mapping
            The call's JSON string, or an already-parsed mapping.

        Returns
        -------
        ToolReply
            The text to send back as the tool result (a ``str``); its ``.ok``,
            ``.failure`` and ``.outcome`` are :meth:`call_tool`'s typed outcome.
        """
        return ToolReply(self.call_tool(name, arguments))

    def _run_tool(self, action: str, args: Mapping[str, Any]) -> ToolOutcome:
        run: dict[str, Callable[..., str]] = {
            "archive": self._archive_text,
            "delete": self._delete_text,
            "read": self._read_text,
        }
        try:
            return ToolOutcome(run[action](**args))
        except WorkspaceError as exc:
            return ToolOutcome.failed(ToolFailure.REFUSED, str(exc))
        except PayloadConflictError as exc:  # would overwrite bytes it does not own
            return ToolOutcome.failed(
                ToolFailure.STORE, f"the archive store refused the write: {exc}; nothing changed."
            )
        except OSError as exc:  # the store could not write or read; nothing changed
            return ToolOutcome.failed(
                ToolFailure.STORE,
                f"the archive store failed ({exc.strerror or exc}); nothing changed. "
                "Free disk space or fix the archive folder, then call again.",
            )

    def _archive_text(self, block_id: str, replacement: str = "") -> str:
        return self.archive(block_id, replacement).path

    def _delete_text(self, block_id: str, reason: str) -> str:
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

    def _read_text(self, path: str, selector: str = "") -> str:
        return self.read_path(path, selector or None).decode("utf-8", "backslashreplace")
