"""More peers of the study: the OpenAI Agents SDK's session, semantic-kernel's
truncation reducer, haystack's sliding-window compactor (Python), and the
JavaScript peers (``@langchain/core``, ``ai``, ``@llamaindex/core``,
``@openai/agents-core``) run as processes through the JSON-lines protocol of
:class:`~vistalab.conformance.CommandManager`.

The rules of :mod:`vistalab.conformance._peers` hold here too: the suite's
counter is given wherever the peer takes a counting hook; a message passed
through is mapped back to the original input; nothing reaches the network.

The JavaScript peers live in ``examples/conformance/peers/peers.mjs`` (shipped as
``vistalab.examples.conformance.peers``); their npm packages are pinned by the
``package-lock.json`` next to it and installed into that folder with
``npm ci --prefix FOLDER``. A JS peer whose ``node`` or ``node_modules`` is
missing is "not installed", listed with that command.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._peers import Count, Peer, PeerNotInstalledError, _restore, _text_of

__all__ = ["JsPeer", "js_peers_folder", "MORE_PEERS"]


def js_peers_folder() -> Path:
    """The folder of ``peers.mjs``, its ``package.json`` and ``package-lock.json``.

    Returns
    -------
    pathlib.Path
        ``examples/conformance/peers`` of a checkout (or of the installed package).
    """
    here = Path(__file__).resolve().parents[1]
    installed = here / "examples" / "conformance"  # the wheel: vistalab/examples/...
    base = installed if installed.is_dir() else here.parent / "examples" / "conformance"
    return base / "peers"


@dataclass(frozen=True)
class JsPeer(Peer):
    """A JavaScript peer: ``node peers.mjs NAME`` speaking the JSON-lines
    protocol (:class:`~vistalab.conformance.CommandManager`). ``distributions``
    are npm package names, read from ``node_modules/<name>/package.json``;
    ``modules`` is unused."""

    @property
    def pip(self) -> str:
        """The command that installs the JS peers: ``npm ci --prefix FOLDER``."""
        return f"npm ci --prefix {js_peers_folder()}"

    def missing(self) -> str | None:
        """``"node"`` when node is not on PATH, else the first npm package not
        installed in the peers folder, else None.

        Returns
        -------
        str or None
            What is missing.
        """
        if shutil.which("node") is None:
            return "node"
        for pkg in self.distributions:
            if not (js_peers_folder() / "node_modules" / pkg / "package.json").is_file():
                return pkg
        return None

    def versions(self) -> dict[str, str | None]:
        """``npm package -> version`` (None when not installed).

        Returns
        -------
        dict of str to str or None
            One entry per npm package of the peer.
        """
        out: dict[str, str | None] = {}
        for pkg in self.distributions:
            path = js_peers_folder() / "node_modules" / pkg / "package.json"
            try:
                out[pkg] = str(json.loads(path.read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError):
                out[pkg] = None
        return out

    def load(self) -> Any:
        """The manager: a :class:`~vistalab.conformance.CommandManager` running
        ``node peers.mjs NAME``.

        Returns
        -------
        CommandManager

        Raises
        ------
        PeerNotInstalledError
            If node or the peer's npm package is missing.
        """
        missing = self.missing()
        if missing is not None:
            raise PeerNotInstalledError(self.name, self.pip, missing)
        from ._process import CommandManager

        script = js_peers_folder() / "peers.mjs"
        return CommandManager(f"node {json.dumps(str(script))} {self.name}", self.protocol)


# --------------------------------------------------------------------------- openai-agents


def _agents_session() -> Any:
    from agents.memory import SQLiteSession

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """OpenAI Agents SDK ``SQLiteSession(id)`` (in memory) holding the
        conversation, read back with ``get_items(limit=k)``.

        Conversion: none (the session stores OpenAI Responses input items, the
        suite's ``responses`` format, as JSON). Budget: a session is sized by
        item count, not tokens; the adapter plays the user who picks the
        largest ``limit`` whose items fit the budget by the suite's counter,
        down to ``limit=1``. The items read back equal the input's last
        ``limit`` items and are mapped back to them by position.
        """

        async def go() -> list[Any]:
            session = SQLiteSession("vista-lab-conformance")
            try:
                await session.add_items(list(messages))  # type: ignore[arg-type]
                last: list[Any] = list(messages)
                for k in range(len(messages), 0, -1):
                    items = await session.get_items(limit=k)
                    last = [messages[len(messages) - len(items) + i] if it == messages[
                        len(messages) - len(items) + i] else it for i, it in enumerate(items)]
                    if count(last) <= budget:
                        return last
                return last
            finally:
                session.close()

        return asyncio.run(go())

    return manager


# --------------------------------------------------------------------------- semantic-kernel


def _sk_convert(messages: list[dict[str, Any]]) -> list[Any]:
    """OpenAI dicts -> semantic-kernel ``ChatMessageContent`` the way its OpenAI
    connector records them: text as ``TextContent``, tool calls as
    ``FunctionCallContent`` items of the assistant message, each tool result a
    ``TOOL`` message with one ``FunctionResultContent``."""
    from semantic_kernel.contents import (
        AuthorRole,
        ChatMessageContent,
        FunctionCallContent,
        FunctionResultContent,
        TextContent,
    )

    roles = {"system": AuthorRole.SYSTEM, "user": AuthorRole.USER,
             "assistant": AuthorRole.ASSISTANT, "tool": AuthorRole.TOOL}
    names: dict[str, str] = {}
    out: list[Any] = []
    for m in messages:
        items: list[Any] = []
        text = _text_of(m.get("content"))
        if m.get("role") == "tool":
            cid = str(m.get("tool_call_id"))
            items.append(FunctionResultContent(id=cid, function_name=names.get(cid, "f"),
                                               result=text))
        else:
            if text:
                items.append(TextContent(text=text))
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", {})
                names[str(tc.get("id"))] = str(fn.get("name", "f"))
                items.append(FunctionCallContent(id=str(tc.get("id")),
                                                 function_name=str(fn.get("name", "f")),
                                                 arguments=str(fn.get("arguments", ""))))
        out.append(ChatMessageContent(role=roles[str(m.get("role"))], items=items))
    return out


def _sk_truncation() -> Any:
    from semantic_kernel.contents import ChatHistoryTruncationReducer

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """semantic-kernel ``ChatHistoryTruncationReducer(target_count=k,
        threshold_count=0)`` over the conversation, ``await reducer.reduce()``.

        Conversion: see :func:`_sk_convert`; the messages the reducer keeps
        are mapped back to the original dicts by identity. Budget: the reducer
        is sized by message count; the adapter plays the user who picks the
        largest ``target_count`` whose result fits the budget by the suite's
        counter, down to ``target_count=1`` (the reducer keeps the first
        system message itself and moves the cut to a safe point:
        ``locate_safe_reduction_index``).
        """
        objs = _sk_convert(messages)
        back = {id(o): m for o, m in zip(objs, messages, strict=True)}
        last: list[Any] = list(messages)
        for k in range(len(messages), 0, -1):
            reducer = ChatHistoryTruncationReducer(target_count=k, threshold_count=0)
            reducer.messages = list(objs)
            reduced = asyncio.run(reducer.reduce())
            kept = reduced.messages if reduced is not None else objs
            last = _restore(kept, back, lambda o: {"role": str(o.role.value),
                                                    "content": o.content})
            if count(last) <= budget:
                return last
        return last

    return manager


# --------------------------------------------------------------------------- haystack


def _haystack(note: bool, min_keep_steps: int = 1) -> Any:
    # haystack reports usage to PostHog unless told not to; the study runs offline
    # (the user's own setting wins).
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    from haystack.dataclasses import ChatMessage, ToolCall
    from haystack.hooks.compaction import SlidingWindowCompactor
    from haystack.token_counters import TokenCounter

    def convert(messages: list[dict[str, Any]]) -> list[Any]:
        calls: dict[str, Any] = {}
        out: list[Any] = []
        for m in messages:
            role, text = m.get("role"), _text_of(m.get("content"))
            if role == "system":
                out.append(ChatMessage.from_system(text))
            elif role == "user":
                out.append(ChatMessage.from_user(text))
            elif role == "tool":
                cid = str(m.get("tool_call_id"))
                origin = calls.get(cid) or ToolCall(tool_name="f", arguments={}, id=cid)
                out.append(ChatMessage.from_tool(tool_result=text, origin=origin))
            else:
                tcs = []
                for tc in m.get("tool_calls") or []:
                    fn = tc.get("function", {})
                    try:
                        args = json.loads(fn.get("arguments") or "{}")
                    except ValueError:
                        args = {}
                    call = ToolCall(tool_name=str(fn.get("name", "f")),
                                    arguments=args if isinstance(args, dict) else {},
                                    id=str(tc.get("id")))
                    calls[str(tc.get("id"))] = call
                    tcs.append(call)
                out.append(ChatMessage.from_assistant(text or None, tool_calls=tcs))
        return out

    def to_openai(c: Any) -> dict[str, Any]:
        return {"role": "user" if c.role.value == "user" else str(c.role.value),
                "content": c.text or ""}

    def render(messages: list[dict[str, Any]], budget: int, count: Count) -> tuple[list, list]:
        objs = convert(messages)
        back = {id(o): m for o, m in zip(objs, messages, strict=True)}

        class SuiteCounter(TokenCounter):
            """Counts haystack messages with the suite's counter (on the originals)."""

            def count(self, messages: list[Any], tools: Any = None) -> int:
                return count(_restore(messages, back, to_openai))

            def to_dict(self) -> dict[str, Any]:
                return {"type": "vista-lab-suite-counter"}

        with warnings.catch_warnings():  # its ExperimentalWarning, once per construction
            warnings.simplefilter("ignore")
            compactor = (SlidingWindowCompactor(min_keep_steps=min_keep_steps) if note
                         else SlidingWindowCompactor(min_keep_steps=min_keep_steps,
                                                     omission_note=None))
        kept = compactor.compact(objs, target_tokens=budget, token_counter=SuiteCounter())
        out = _restore(objs if kept is None else kept, back, to_openai)
        made = [u for u in out if not any(u is m for m in messages)]
        return out, made

    if not note:
        def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
            """haystack ``SlidingWindowCompactor(omission_note=None,
            min_keep_steps=...).compact(messages, target_tokens=budget, token_counter=...)``.

            Conversion: ``ChatMessage.from_system/from_user/from_assistant``
            (tool calls as ``ToolCall``) and ``from_tool`` (its ``origin`` the
            call it answers); kept messages map back to the original dicts.
            Counting hook: a ``TokenCounter`` whose ``count`` is the suite's
            counter on the original dicts. ``None`` (nothing to remove) is the
            whole conversation.
            """
            return render(messages, budget, count)[0]

        return manager

    from ._peers import _default_count

    count0 = _default_count()

    class HaystackSlidingWindow:
        """haystack ``SlidingWindowCompactor()`` at its defaults (with its
        omission note) ``.compact(messages, target_tokens=budget, token_counter=...)``.

        Conversion and counting as for the ``omission_note=None`` setting;
        the counter is the suite's default (cl100k_base). The note the
        compactor inserts ("[N earlier messages were removed ... cannot be
        recovered.]") is declared a placeholder standing for no archived bytes.
        """

        def __init__(self, budget: int) -> None:
            self.budget = budget
            self.messages: list[dict[str, Any]] = []
            self.made: list[Any] = []

        def register(self, message: Any) -> None:
            self.messages.append(message)

        def placeholder(self, unit: Any) -> tuple[str, ...] | None:
            return () if any(unit is m or unit == m for m in self.made) else None

        def render(self, budget: int) -> list[Any]:
            out, self.made = render(self.messages, budget, count0)
            return out

    return HaystackSlidingWindow


# --------------------------------------------------------------------------- registry


def _never() -> Any:  # JsPeer.load builds its manager itself
    raise AssertionError("a JsPeer is loaded by JsPeer.load")


_JS_CALL: Mapping[str, tuple[tuple[str, ...], str, str, str]] = {
    "langchainjs-last": (("@langchain/core",), "openai",
                         "trimMessages(messages, {maxTokens: B, tokenCounter: count, "
                         "strategy: 'last'})", ""),
    "langchainjs-last-system": (("@langchain/core",), "openai",
                                "trimMessages(messages, {maxTokens: B, tokenCounter: count, "
                                "strategy: 'last', includeSystem: true, startOn: 'human'})", ""),
    "langchainjs-first": (("@langchain/core",), "openai",
                          "trimMessages(messages, {maxTokens: B, tokenCounter: count, "
                          "strategy: 'first'})", ""),
    "ai-prune-tool-calls": (("ai",), "openai",
                            "pruneMessages({messages, toolCalls: 'before-last-K-messages'}), "
                            "largest K that fits B", "messages (K; the adapter picks it with "
                            "the suite's counter)"),
    "llamaindexjs-chat-memory": (("@llamaindex/core",), "openai",
                                 "new ChatMemoryBuffer({tokenLimit: B, chatHistory}).getMessages()",
                                 "its own tokenizer (Settings.tokenizer, cl100k_base via "
                                 "js-tiktoken) on the messages' joined contents only"),
    "openai-agentsjs-session": (("@openai/agents-core",), "responses",
                                "new MemorySession({initialItems}).getItems(K), largest K that "
                                "fits B", "items (K; the adapter picks it with the suite's "
                                "counter)"),
}

_JS_PEERS = tuple(
    JsPeer(name, pkgs, (), settings, _never, protocol=protocol, counts_with=counts)
    for name, (pkgs, protocol, settings, counts) in _JS_CALL.items()
)

_HS = ("haystack-ai",)
_SK = ("semantic-kernel",)

MORE_PEERS: tuple[Peer, ...] = (
    Peer("openai-agents-session", ("openai-agents",), ("agents",),
         "SQLiteSession(id).get_items(limit=k), largest k that fits B", _agents_session,
         protocol="responses",
         counts_with="items (limit; the adapter picks it with the suite's counter)"),
    Peer("semantic-kernel-truncation", _SK, ("semantic_kernel",),
         "ChatHistoryTruncationReducer(target_count=k, threshold_count=0).reduce(), "
         "largest k that fits B", _sk_truncation,
         counts_with="messages (target_count; the adapter picks it with the suite's counter)"),
    Peer("haystack-sliding-window", _HS, ("haystack",),
         "SlidingWindowCompactor().compact(messages, target_tokens=B, token_counter=count)",
         lambda: _haystack(True)),
    Peer("haystack-sliding-window-no-note", _HS, ("haystack",),
         "SlidingWindowCompactor(omission_note=None).compact(messages, target_tokens=B, "
         "token_counter=count)", lambda: _haystack(False)),
    Peer("haystack-sliding-window-min0", _HS, ("haystack",),
         "SlidingWindowCompactor(min_keep_steps=0, omission_note=None).compact(messages, "
         "target_tokens=B, token_counter=count)", lambda: _haystack(False, 0)),
    *_JS_PEERS,
)
