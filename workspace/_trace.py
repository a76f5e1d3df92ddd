"""Replay an OpenAI chat-format conversation (plus optional context actions)
through a workspace, turn by turn, reporting what the agent would have seen."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vistalab._core import MAX_JSON_DEPTH
from vistalab._core._limits import json_loads, json_text_depth

from ._bulk import bulk_build
from ._cache import cacheable_prefix_tokens
from ._disk_store import read_regular_file
from ._errors import TraceError, UnknownNameError, WorkspaceArgumentError
from ._events import Event
from ._formats import (
    FORMATS,
    anthropic_problems,
    anthropic_to_openai,
    detect_format,
    to_openai_messages,
)
from ._protocol import protocol_problems
from ._sdk import plain_sdk
from ._store import PayloadStore
from ._tokenizers import Tokenizer
from ._tools import ACTIONS, drive_trace

__all__ = ["load_trace", "replay_trace", "TurnReport", "TraceReplay", "ACTIONS"]


def load_trace(source: str | os.PathLike[str] | Sequence[Any]) -> list[dict[str, Any]]:
    """Read a trace: a JSON list of items, ``{"messages": [...]}``, or JSONL.

    Items are chat messages (with ``role``) or context actions (with
    ``action``: archive, delete, restore, read). The wire format is detected
    (:func:`detect_format`): Anthropic Messages (content blocks, an optional
    top-level ``system``) are projected onto OpenAI chat messages, which is
    what is returned. A list passes through after the same checks.

    Parameters
    ----------
    source : str, PathLike or sequence
        A trace file, or its items.

    Returns
    -------
    list of dict
        OpenAI chat messages and context actions.

    Raises
    ------
    TraceError
        Naming the message index (or JSONL line) and the problem.
    """
    raw, src = _read_raw(source)
    return _to_items(raw, src, None)


def _to_items(raw: Any, src: str, codec: Any) -> list[dict[str, Any]]:
    """Checked OpenAI-form items from a parsed trace in either wire format."""
    if detect_format(raw) == "responses":
        items = to_openai_messages(raw, codec=codec)
    elif detect_format(raw) == "anthropic":
        if isinstance(raw, Mapping):
            items = anthropic_to_openai(
                raw.get("messages", []), system=raw.get("system"), codec=codec
            )
        else:
            items = anthropic_to_openai(raw, codec=codec)
    else:
        items = list(raw.get("messages", [])) if isinstance(raw, Mapping) else list(raw)
    for i, item in enumerate(items):
        _check_item(i, item, src)
    return items


def _read_raw(source: Any) -> tuple[Any, str]:
    """The parsed trace (a list, or an Anthropic ``{"system", "messages"}``
    document) and the file name it came from ("" for in-memory data)."""
    if isinstance(source, (str, os.PathLike)) and not isinstance(source, bool):
        path = os.fspath(source)
        if not isinstance(path, str) or not path or "\x00" in path:
            raise WorkspaceArgumentError(
                "source", source, "must be a non-empty text path without NUL bytes"
            )
        data, problem = read_regular_file(path)
        if data is None:
            raise TraceError(None, f"cannot read the trace: it {problem}", source=path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceError(
                None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})", source=path
            ) from None
        return _parse_text(text, path), path
    source = plain_sdk(source, "source")  # SDK message objects in an in-memory trace
    if isinstance(source, Mapping) and isinstance(source.get("messages"), list):
        return source, ""
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes, bytearray)):
        return list(source), ""
    raise WorkspaceArgumentError(
        "source",
        source,
        "must be a trace file path, a list of messages / actions, or an Anthropic "
        "{'system', 'messages'} document",
        "pass e.g. load_trace('trace.json')",
    )


def _parse_text(text: str, src: str) -> list[Any]:
    stripped = text.lstrip()
    if not stripped:
        raise TraceError(None, "is empty", source=src)
    if json_text_depth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise TraceError(
            None,
            f"is nested more than {MAX_JSON_DEPTH} levels deep (the JSON depth limit); flatten it",
            source=src,
        )
    if stripped[0] in "[{":
        try:
            doc = json_loads(text)
        except json.JSONDecodeError as exc:
            if stripped[0] == "{":
                return _parse_jsonl(text, src)  # JSONL whose lines are objects
            raise TraceError(
                None, f"is not valid JSON ({exc.msg} at line {exc.lineno})", source=src
            ) from None
        if isinstance(doc, list):
            return doc
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            if "system" in doc:  # Anthropic: a top-level system prompt
                return {"system": doc["system"], "messages": list(doc["messages"])}  # type: ignore[return-value]
            return list(doc["messages"])
        if isinstance(doc, dict) and ("role" in doc or "action" in doc):
            return [doc]
        raise TraceError(
            None,
            "must be a JSON list of messages, an object with a 'messages' list, or JSONL",
            source=src,
        )
    return _parse_jsonl(text, src)


def _parse_jsonl(text: str, src: str) -> list[Any]:
    items: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json_loads(line))
        except json.JSONDecodeError as exc:
            raise TraceError(
                None, f"line {lineno} is not valid JSON ({exc.msg})", source=src
            ) from None
    return items


def _check_item(i: int, item: Any, src: str) -> None:
    if not isinstance(item, Mapping):
        raise TraceError(
            i, f"must be an object with 'role' or 'action', got {type(item).__name__}", source=src
        )
    if "action" in item:
        act = item["action"]
        if act not in ACTIONS:
            raise TraceError(
                i, f"unknown action {act!r} (choose from {', '.join(ACTIONS)})", source=src
            )
        required, optional = ACTIONS[act].required, ACTIONS[act].optional
        missing = [k for k in required if not isinstance(item.get(k), str)]
        if missing:
            raise TraceError(
                i, f"action {act!r} needs string field(s) {', '.join(missing)}", source=src
            )
        extra = [k for k in item if k not in required + optional + ("action",)]
        if extra:
            raise TraceError(
                i, f"action {act!r} has unknown field(s) {', '.join(extra)}", source=src
            )
        return
    role = item.get("role")
    if role not in ("system", "user", "assistant", "tool", "function"):
        raise TraceError(
            i,
            f"has role {role!r}; expected system, user, assistant, tool or function "
            "(or an 'action' item)",
            source=src,
        )
    if role == "tool" and not isinstance(item.get("tool_call_id"), str):
        raise TraceError(i, "is a tool message without a string tool_call_id", source=src)
    if role == "function" and not isinstance(item.get("name"), str):
        raise TraceError(i, "is a function message without a string name", source=src)


@dataclass(frozen=True, slots=True)
class TurnReport:
    """What the agent saw at one decision point of the replay.

    A turn is rendered just before each assistant message of the trace (the
    moment the model was called) and once at the end.

    Attributes
    ----------
    turn : int
        Turn number, from 1.
    message_index : int or None
        Index of the trace item the model produced next (None at the end).
    mode : str
        ``normal`` or ``overflow``.
    tokens, budget, candidate_tokens : int
        ``|C_t|``, B and ``|C~_t|`` (what preflight compared with B).
    dashboard : str
        Dashboard text the agent saw.
    events : tuple of dict
        Events since the previous turn, summarised (message contents are
        reduced to their length).
    state_hash : str
    protocol_problems : tuple of str
        Empty when the rendering is protocol-valid (in the OpenAI format and,
        when one was requested, in the ``render_format`` too).
    cacheable_tokens : int
        Tokens of this request that repeat a byte-identical prefix of the
        previous request, dashboard excluded (:func:`cacheable_prefix_tokens`).
    cacheable_share : float
        ``cacheable_tokens / tokens`` (0 at the first turn).
    request : dict or None
        The request in ``render_format``, when the replay was asked for one.
    """

    turn: int
    message_index: int | None
    mode: str
    tokens: int
    budget: int
    candidate_tokens: int
    dashboard: str
    events: tuple[dict[str, Any], ...]
    state_hash: str
    protocol_problems: tuple[str, ...] = ()
    cacheable_tokens: int = 0
    cacheable_share: float = 0.0
    request: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class TraceReplay:
    """Result of :func:`replay_trace`.

    Attributes
    ----------
    turns : tuple of TurnReport
    state_hash : str
        Canonical hash of the final workspace.
    budget : int
    tokenizer : str
    messages : int
        Trace items registered as messages.
    actions : int
        Context actions applied (trace actions and context tool calls).
    workspace : Workspace
        The final workspace (not serialised by ``to_plain``).
    format : str
        Wire format of the trace (``openai`` or ``anthropic``, detected).
    """

    turns: tuple[TurnReport, ...]
    state_hash: str
    budget: int
    tokenizer: str
    messages: int
    actions: int
    workspace: Any
    format: str = "openai"

    @property
    def cacheable_share(self) -> float:
        """Token-weighted share of all requests after the first that was a cached prefix."""
        later = self.turns[1:]
        total = sum(t.tokens for t in later)
        return sum(t.cacheable_tokens for t in later) / total if total else 0.0

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the replay: format, budget, tokenizer, cacheable share,
        the replayed messages and actions, the final state hash, and every turn
        (mode, tokens, dashboard, events, protocol problems, cacheable tokens,
        and the request when one was kept).

        Returns
        -------
        dict
            The replay as JSON data.
        """
        return {
            "format": self.format,
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "cacheable_share": self.cacheable_share,
            "messages": self.messages,
            "actions": self.actions,
            "state_hash": self.state_hash,
            "turns": [
                {
                    "turn": t.turn,
                    "message_index": t.message_index,
                    "mode": t.mode,
                    "tokens": t.tokens,
                    "budget": t.budget,
                    "candidate_tokens": t.candidate_tokens,
                    "dashboard": t.dashboard,
                    "events": list(t.events),
                    "state_hash": t.state_hash,
                    "protocol_problems": list(t.protocol_problems),
                    "cacheable_tokens": t.cacheable_tokens,
                    "cacheable_share": t.cacheable_share,
                    **({"request": t.request} if t.request is not None else {}),
                }
                for t in self.turns
            ],
        }


def _summary(ev: Event) -> dict[str, Any]:
    args = dict(ev.args)
    msg = args.get("message")
    if isinstance(msg, Mapping):
        short: dict[str, Any] = {"role": msg.get("role")}
        if msg.get("content") is not None:
            short["content_chars"] = len(msg["content"])
        if msg.get("tool_calls"):
            short["tool_calls"] = [c["function"]["name"] for c in msg["tool_calls"]]
        if msg.get("tool_call_id"):
            short["tool_call_id"] = msg["tool_call_id"]
        args["message"] = short
    return {
        "seq": ev.seq,
        "op": ev.op,
        "ok": ev.ok,
        "result": ev.result,
        "args": args,
        "effects": ev.effects,
        "state_hash": ev.state_hash,
    }


def replay_trace(
    trace: str | os.PathLike[str] | Sequence[Any],
    *,
    budget: int,
    tokenizer: str | Tokenizer = "cl100k_base",
    store: PayloadStore | None = None,
    hard_limit: int | None = None,
    render_format: str | None = None,
    **workspace_kwargs: Any,
) -> TraceReplay:
    """Register a trace turn by turn, applying its context actions.

    Assistant calls to ``context_workspace_archive`` / ``_delete`` are
    executed on the workspace and answered with the engine's own result
    string; the trace's recorded answers to those calls are skipped. Trace
    ``action`` items are applied directly (harness-level). A failing action
    is reported as a failed event, not an error: it is the agent's mistake.
    The trace may be in OpenAI chat or Anthropic Messages format (detected).
    ``render_format`` (``"openai"`` or ``"anthropic"``) also records each
    turn's request in that format and checks that format's protocol rules.
    Every turn reports the share of its tokens that is a cached prefix of
    the previous request.

    Parameters
    ----------
    trace : str, PathLike or sequence
        A trace file (JSON list, ``{"messages": [...]}`` or JSONL, OpenAI chat or
        Anthropic Messages) or the items themselves.
    budget : int
        B of the replaying workspace.
    tokenizer : str or Tokenizer
        The engine's tokenizer.
    store : PayloadStore, optional
        Where archived payloads go (default in memory).
    hard_limit : int, optional
        The guard's hard limit (default ``2 * budget``).
    render_format : {"openai", "anthropic"}, optional
        Also record each turn's request in this format and check its rules.
    **workspace_kwargs
        Passed to :class:`Workspace`.

    Returns
    -------
    TraceReplay
        Per-turn reports, the workspace, and the self-checks.

    Raises
    ------
    TraceError
        Malformed trace or a message the protocol forbids, naming its index.
    """
    from ._engine import Workspace

    if render_format is not None and (
        not isinstance(render_format, str) or render_format not in FORMATS
    ):
        raise UnknownNameError("render format", render_format, FORMATS)
    raw, src = _read_raw(trace)
    fmt = detect_format(raw)
    ws = Workspace(
        budget, tokenizer=tokenizer, store=store, hard_limit=hard_limit, **workspace_kwargs
    )
    try:
        items = _to_items(raw, src, ws._codec)
    except TraceError:
        ws.close()
        raise
    turns: list[TurnReport] = []
    cursor = ws.event_count
    previous: list[Any] = [None]

    def close_turn(index: int | None) -> None:
        nonlocal cursor
        r = ws.render()
        evs = ws.events_since(cursor)  # this turn's events, not a copy of the whole log
        cursor = ws.event_count
        problems = list(protocol_problems(r.messages))
        request = None
        if render_format is not None:
            wire = ws.render(format=render_format)
            request = wire.as_request()
            if render_format == "anthropic":
                problems += [f"anthropic: {p}" for p in anthropic_problems(request)]
        cached = cacheable_prefix_tokens(previous[0], r, ws.tokenizer)
        previous[0] = r
        turns.append(
            TurnReport(
                turn=len(turns) + 1,
                message_index=index,
                mode=r.mode,
                tokens=r.tokens,
                budget=r.budget,
                candidate_tokens=r.candidate_tokens,
                dashboard=r.dashboard,
                events=tuple(_summary(e) for e in evs),
                state_hash=r.state_hash,
                protocol_problems=tuple(problems),
                cacheable_tokens=cached,
                cacheable_share=cached / r.tokens if r.tokens else 0.0,
                request=request,
            )
        )

    def before_model(index: int, is_action: bool) -> None:
        if not is_action:  # replay reports renderings before assistant messages
            close_turn(index)

    with bulk_build():
        counts = drive_trace(ws, items, before_model, lambda i, exc: TraceError(i, str(exc)))
        close_turn(None)
    return TraceReplay(
        turns=tuple(turns),
        state_hash=ws.state_hash(),
        budget=ws.budget,
        tokenizer=ws.tokenizer.name,
        messages=counts.messages,
        actions=counts.actions,
        workspace=ws,
        format=fmt,
    )
