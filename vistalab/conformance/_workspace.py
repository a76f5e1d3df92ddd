"""The adapter that puts vista-lab's own :class:`~vistalab.workspace.Workspace`
under the conformance suite (the reference implementation must pass it)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from vistalab.workspace import (
    PROTOCOL_TEXT,
    GeminiIds,
    Workspace,
    anthropic_to_openai,
    find_handles,
    placeholder_kind,
    register_gemini,
    render_gemini,
    to_openai_messages,
)
from vistalab.workspace._frozen import thaw as _plain
from vistalab.workspace._validate import _content_iv

__all__ = ["WorkspaceAdapter"]

#: Text the Anthropic rendering puts first when a rendering would open with an
#: assistant turn (see :func:`vistalab.workspace.openai_to_anthropic`).
_CONVERSATION_START = "[conversation start]"
#: A tool result shown as ordinary context because its call left the prompt.
_ORPHAN_FORM = "[tool result "
_PROBE_BUDGET = 1_000_000


def _identity(m: Mapping[str, Any]) -> str:
    return json.dumps(
        {
            "role": m.get("role"),
            "content": m.get("content"),
            "calls": [c.get("id") for c in m.get("tool_calls") or ()],
            "tool_call_id": m.get("tool_call_id"),
        },
        sort_keys=True,
    )


@functools.lru_cache(maxsize=4096)
def _floor(pinned_json: str, calls_json: str = "[]") -> int:
    """The least budget B with ``management_floor() <= B`` once the pinned
    messages are registered, and ``call_floor(m) <= B`` for every tool-call
    message m of the conversation (each is pending when it is registered, and
    the management rendering keeps it then). The floor grows with the budget
    (its digits appear in the protocol's budget notice and the dashboard), so
    iterating B <- floor(B) from a large B settles in a few rounds."""
    pinned = json.loads(pinned_json)
    calls = json.loads(calls_json)
    budget = _PROBE_BUDGET
    for _ in range(16):
        ws = Workspace(budget)
        for m in pinned:
            ws.register_message(m)
        floor = max([ws.management_floor(), *(
            ws.call_floor(m["tool_calls"], content=m.get("content") or None) for m in calls)])
        ws.close()
        if floor >= budget:
            break
        budget = floor
    return budget


class WorkspaceAdapter:
    """:class:`~vistalab.workspace.Workspace` as a conformance-suite manager.

    ``WorkspaceAdapter(budget)`` builds a workspace with that budget (the
    paper's cl100k_base tokenizer, an in-memory store); ``register`` feeds it
    one message (OpenAI, or Anthropic through the workspace's projection and
    codec); ``render`` returns ``Workspace.render`` in the protocol of the
    messages registered, tool schemas left out (the suite counts messages).

    What the workspace adds or replaces is declared by :meth:`placeholder`:
    the protocol notice, the dashboard, archive handles and offload
    placeholders (whose block ids :meth:`recover` reads back exactly), the
    budget guard's rejection notice, member stubs and tombstones, the orphan
    form of a result whose call left the prompt, and the Anthropic
    ``[conversation start]`` opener. A message registered with content parts
    is rendered by the engine as joined text; the adapter hands back the
    original message (what a harness that kept the parts would send).

    Parameters
    ----------
    budget : int
        The workspace's budget B (at least its management floor, see
        :meth:`min_budget`).
    """

    def __init__(self, budget: int) -> None:
        self.workspace = Workspace(budget)
        self._format = "openai"
        self._originals: list[tuple[str, dict[str, Any] | None]] = []
        self._dashboard: str | None = None
        # Responses: the model items of the turn being registered
        self._run: list[dict[str, Any]] = []
        # Gemini: the conversation's call ids (calls may come without one)
        self._ids = GeminiIds()

    @staticmethod
    def min_budget(conversation: Any) -> int:
        """The least budget whose management rendering fits this conversation's
        pinned system prompt and task (:meth:`Workspace.management_floor`) and,
        at each of its tool-call messages, that message kept while its calls
        wait for results (:meth:`Workspace.call_floor`).

        Parameters
        ----------
        conversation : list or dict
            The conversation: a list of OpenAI messages, or an Anthropic
            ``{"system", "messages"}`` document.

        Returns
        -------
        int
            The floor in tokens.
        """
        from ._counter import conversation_iv

        conversation_iv(conversation)
        if isinstance(conversation, Mapping) and "contents" in conversation:  # Gemini
            from ._gemini import to_chat as gemini_chat

            head = {**conversation, "contents": list(conversation["contents"])[:1]}
            pinned = gemini_chat(head)
            chat = gemini_chat(conversation)
        elif isinstance(conversation, Mapping):
            system = conversation.get("system")
            msgs = list(conversation.get("messages") or [])
            pinned = anthropic_to_openai(msgs[:1], system=system)
            chat = anthropic_to_openai(msgs)
        else:
            chat = to_openai_messages(list(conversation))  # Responses items projected
            pinned = []
            for m in chat:
                pinned.append(m)
                if m.get("role") == "user":
                    break
        calls = [{"tool_calls": m["tool_calls"], "content": m.get("content")}
                 for m in chat if m.get("role") == "assistant" and m.get("tool_calls")]
        return _floor(json.dumps(pinned, sort_keys=True, default=repr),
                      json.dumps(calls, sort_keys=True, default=repr))

    def _flush(self) -> None:
        """Register the buffered model turn (Responses) through the engine's
        Responses format: one assistant message, its reasoning with its calls."""
        if self._run:
            run, self._run = self._run, []
            self.workspace.register_messages(run)

    def _register_item(self, item: Any) -> None:
        from ._responses import _is_model

        if _is_model(item):
            self._run.append(item)  # a model turn: registered whole, with its reasoning
            return
        self._flush()
        self.workspace.register_messages([item])

    def register(self, message: Any) -> None:
        """Register one message in the workspace; Anthropic blocks (tool use,
        tool results, media, thinking, a system prompt in blocks) switch the
        adapter to the Anthropic format, and a list-content OpenAI message's
        original is kept so the rendering can return it unchanged.

        Parameters
        ----------
        message : dict
            An OpenAI chat message, an Anthropic message or a Responses input item.

        Raises
        ------
        DomainError
            ``message`` is not a mapping.
        """
        if not isinstance(message, Mapping):
            from vistalab._core import DomainError

            raise DomainError("message", message, "must be a mapping (one message or "
                              "input item)", "pass e.g. {'role': 'user', 'content': 'hi'}")
        ws = self.workspace
        if self._format == "responses":
            self._register_item(message)
            return
        if self._format == "gemini":
            register_gemini(ws, message, self._ids)
            return
        role = message.get("role") if isinstance(message, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        anthropic = isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in (
                "tool_use", "tool_result", "image", "document", "thinking", "redacted_thinking"
            ) for b in content
        )
        if role == "system" and isinstance(content, list):
            anthropic = True  # an Anthropic system prompt in blocks
        if anthropic or self._format == "anthropic":
            self._format = "anthropic"
            if role == "system":
                items = anthropic_to_openai([], system=content, codec=ws._codec)
            else:
                items = anthropic_to_openai([message], codec=ws._codec)
            for m in items:
                ws.register_message(m)
            return
        original = None
        joined = message
        if isinstance(content, list) and role in ("user", "assistant", "tool"):
            joined = dict(message)
            joined["content"] = _content_iv(content, role)
            original = _plain(message)
        self._originals.append((_identity(joined), original))
        ws.register_message(message)

    def begin(self, protocol: str) -> None:
        """Take messages in ``protocol`` (``"openai"``, ``"anthropic"`` or
        ``"responses"``: Responses input items, registered in the engine's
        Responses format, a model turn as one assistant message; ``"gemini"``:
        Gemini contents, registered through :func:`vistalab.workspace.register_gemini`
        and rendered by :func:`vistalab.workspace.render_gemini`, each kept
        content's original parts and thought signatures with it) and render in it (without this
        call the format is detected from the messages, as
        :func:`vistalab.workspace.detect_format` does).

        Parameters
        ----------
        protocol : str
            ``"openai"``, ``"anthropic"``, ``"responses"`` or ``"gemini"``.
        """
        self._format = protocol if protocol in ("anthropic", "responses", "gemini") else "openai"

    def _render_items(self) -> list[Any]:
        """The engine's Responses rendering (``Workspace.render(format=
        "responses")``): a kept message as the items registered for it."""
        self._flush()
        r = self.workspace.render(format="responses")
        self._dashboard = r.dashboard
        return [_plain(m) for m in r.messages]

    def render(self, budget: int) -> Any:
        """The workspace's rendering (eq. workspace-render) in the adapter's
        format, each passed-through OpenAI message replaced by its registered
        original (Responses: the engine's own Responses rendering).

        Parameters
        ----------
        budget : int
            The budget of the suite (the workspace was built with it).

        Returns
        -------
        list or dict
            OpenAI messages or Responses items, or an Anthropic
            ``{"system", "messages"}`` document.
        """
        if self._format == "responses":
            return self._render_items()
        if self._format == "gemini":
            request, r = render_gemini(self.workspace)
            self._dashboard = r.dashboard
            return request
        r = self.workspace.render(format=self._format)
        self._dashboard = r.dashboard
        if self._format == "anthropic":
            req = r.as_request()
            out: dict[str, Any] = {"system": _plain(req.get("system")),
                                   "messages": _plain(req["messages"])}
            return out
        # Rendered messages keep registration order: each takes the original of
        # the earliest unused registration with the same identity.
        msgs, pos = [], 0
        for m in r.messages:
            m = _plain(m)
            key = _identity(m)
            for j in range(pos, len(self._originals)):
                if self._originals[j][0] == key:
                    pos = j + 1
                    m = self._originals[j][1] or m
                    break
            msgs.append(m)
        return msgs

    # ------------------------------------------------------------ declarations

    def _text_kind(self, text: Any) -> tuple[str, ...] | None:
        if not isinstance(text, str):
            return None
        if text.startswith(PROTOCOL_TEXT) or text == _CONVERSATION_START:
            return ()
        if self._dashboard is not None and text == self._dashboard:
            return ()
        kind = placeholder_kind(text)
        if kind in ("handle", "offload"):
            return tuple(h.unit_id for h in find_handles(text))
        if kind is not None:
            return ()
        if text.startswith(_ORPHAN_FORM):
            return tuple(h.unit_id for h in find_handles(text))
        return None

    def placeholder(self, unit: Any) -> tuple[str, ...] | None:
        """None for passed-through content; else the block ids behind the unit.

        Parameters
        ----------
        unit : dict
            An OpenAI message, or an Anthropic ``{"role", "block"}`` pair.

        Returns
        -------
        tuple of str or None
            The IDs of the units a handle or offload notice stands for, ``()``
            for the dashboard, protocol text or another notice, None for
            ordinary content.
        """
        if not isinstance(unit, Mapping):
            return None
        if self._format == "responses":
            from ._responses import item_text

            return self._text_kind(item_text(unit))
        part = unit.get("part")
        if isinstance(part, Mapping):  # a Gemini unit
            if isinstance(part.get("text"), str):
                return self._text_kind(part["text"])
            fr = part.get("functionResponse")
            if isinstance(fr, Mapping) and isinstance(fr.get("response"), Mapping):
                return self._text_kind(fr["response"].get("result"))
            return None
        block = unit.get("block")
        if isinstance(block, Mapping):  # an Anthropic unit
            if block.get("type") == "text":
                return self._text_kind(block.get("text"))
            if block.get("type") == "tool_result":
                c = block.get("content")
                if isinstance(c, list) and len(c) == 1 and isinstance(c[0], Mapping):
                    c = c[0].get("text")
                return self._text_kind(c)
            return None
        return self._text_kind(unit.get("content"))

    def recover(self, block_id: str) -> bytes:
        """The exact bytes of block ``block_id`` (:meth:`Workspace.recover`).

        Parameters
        ----------
        block_id : str
            A block ID a placeholder declared.

        Returns
        -------
        bytes
            The block's original bytes.
        """
        return self.workspace.recover(block_id)
