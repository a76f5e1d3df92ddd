"""Wire formats in and out of the workspace: OpenAI chat (the engine's own) and
Anthropic Messages, with the projection between them and a protocol checker.

The engine stores and counts OpenAI-form messages. An Anthropic message is
*projected* onto them by fixed rules (the format's framing, documented in
:data:`PROJECTION_RULES`), so an Anthropic trace and the OpenAI trace of the
same projected conversation cost the same tokens under the same tokenizer.
An :class:`AnthropicCodec` remembers each registered message's original
blocks (thinking signatures, image data, ``is_error`` flags), so a block that
is still visible renders back byte-identical; archived blocks render as their
handle text.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vistalab._core import MAX_JSON_DEPTH, check_depth
from vistalab._core._limits import json_loads, json_text_depth

from ._anthropic_rules import _ANTHROPIC_ID, _has_text, anthropic_problems
from ._errors import TraceError, UnknownNameError, WorkspaceArgumentError
from ._responses_wire import is_responses, responses_to_openai
from ._server_tools import SERVER_BLOCKS, SERVER_PROJECTION_RULES, project_server_block

__all__ = [
    "FORMATS",
    "PROJECTION_RULES",
    "AnthropicCodec",
    "detect_format",
    "anthropic_to_openai",
    "openai_to_anthropic",
    "anthropic_problems",
    "anthropic_tool_use_ids",
    "to_openai_messages",
    "render_request",
]

FORMATS = ("openai", "anthropic", "responses", "gemini")
#: Block types only Anthropic Messages uses (their presence decides the format).
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
    | SERVER_BLOCKS
)
_KNOWN_BLOCKS = _ANTHROPIC_BLOCKS | {"text"}
_KNOWN_LIST = ", ".join(sorted(_KNOWN_BLOCKS))
#: The projection of Anthropic content onto the engine's OpenAI messages: what
#: the engine stores and counts for each block (the format's framing).
PROJECTION_RULES: dict[str, str] = {
    "system": "top-level system (string or text blocks) -> one system message; blocks "
    "joined by a blank line",
    "text": "the text itself; several blocks of one message joined by a blank line",
    "thinking": "'<thinking>\\n' + thinking + '\\n</thinking>' in the assistant content "
    "(the signature is kept by the codec, not counted)",
    "redacted_thinking": "'<redacted_thinking/>' (the encrypted data is kept by the "
    "codec, not counted)",
    "image": "'[image: MEDIA_TYPE, N bytes base64, sha256 HEX12]' or '[image: URL]' "
    "(the data is kept by the codec)",
    "tool_use": "an OpenAI tool call; arguments = compact JSON of input (keys in order)",
    "tool_result": "an OpenAI tool message; content projected as above; is_error "
    "prefixes '[error] '",
    **SERVER_PROJECTION_RULES,
}
_JOIN = "\n\n"
#: The codec's key space for Responses items (AnthropicCodec.record_items).
_ITEMS_KEY = "responses:"


def _sha(obj: Any) -> str:
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


def _key(msg: Mapping[str, Any]) -> str:
    """Identity of a projected message (what the engine would render visibly):
    its role, content, calls (id, name and arguments: a call id may be reused
    once answered, by a call with other arguments) and answered call id."""
    return _sha(
        {
            "role": msg.get("role"),
            "content": msg.get("content"),
            "calls": [
                [c.get("id"), (c.get("function") or {}).get("name"),
                 (c.get("function") or {}).get("arguments")]
                for c in msg.get("tool_calls") or ()
            ],
            "tool_call_id": msg.get("tool_call_id"),
        }
    )


class AnthropicCodec:
    """Remembers the original Anthropic blocks behind each projected message.

    ``record`` is called by :func:`anthropic_to_openai`; rendering looks a
    visible message up by its projected identity and, when found, emits the
    original blocks instead of re-deriving them from text.
    """

    def __init__(self) -> None:
        self.originals: dict[str, list[dict[str, Any]]] = {}

    def record(self, projected: Mapping[str, Any], blocks: Sequence[Mapping[str, Any]]) -> None:
        """Remember the original Anthropic blocks behind one projected message.

        Parameters
        ----------
        projected : Mapping
            The OpenAI-shaped message the blocks were projected to; its identity
            (role, content, calls, answered call id) is the key.
        blocks : sequence of Mapping
            The original content blocks (deep-copied).
        """
        self.originals[_key(projected)] = [copy.deepcopy(dict(b)) for b in blocks]

    def record_block_items(self, block_id: str, items: Sequence[Mapping[str, Any]]) -> None:
        """Remember the original Responses items behind block ``block_id`` (a
        key space of their own, by block: two model turns that project to the
        same message keep their own items and ids).

        Parameters
        ----------
        block_id : str
            The block the items were registered as.
        items : sequence of Mapping
            The original items (deep-copied).
        """
        self.originals[_ITEMS_KEY + block_id] = [copy.deepcopy(dict(b)) for b in items]

    def block_items(self, block_id: str | None) -> list[dict[str, Any]] | None:
        """The original Responses items behind block ``block_id``, if recorded.

        Parameters
        ----------
        block_id : str or None
            A visible block's ID (None: no block).

        Returns
        -------
        list of dict or None
            A deep copy of the items, or None.
        """
        if block_id is None:
            return None
        found = self.originals.get(_ITEMS_KEY + block_id)
        return copy.deepcopy(found) if found is not None else None

    def copy(self) -> AnthropicCodec:
        """An independent codec with the same originals (a forked workspace's).

        Returns
        -------
        AnthropicCodec
            The copy; its table is a new dict sharing the never-mutated entries.
        """
        new = AnthropicCodec()
        new.originals = dict(self.originals)  # entries are never mutated
        return new

    def to_plain(self) -> dict[str, list[dict[str, Any]]]:
        """The originals as plain data (saved in a workspace snapshot).

        Returns
        -------
        dict
            A deep copy of the table: message identity -> list of original blocks.
        """
        return copy.deepcopy(self.originals)

    @staticmethod
    def plain_problem(doc: Any) -> str | None:
        """Why ``doc`` is not :meth:`to_plain` output, or None.

        Parameters
        ----------
        doc : object
            A candidate table, as read from a snapshot.

        Returns
        -------
        str or None
            The first problem found (not an object, an entry that is not a list of
            blocks, a block without a string ``type``), or None if it is valid.
        """
        if not isinstance(doc, Mapping):
            return "must be an object"
        for k, v in doc.items():
            if not isinstance(k, str) or not isinstance(v, list):
                return f"entry {k!r:.40} must map a key to a list of blocks"
            if k.startswith(_ITEMS_KEY):  # Responses items (a message item may omit type)
                if not all(isinstance(b, Mapping) for b in v):
                    return f"entry {k!r:.40} holds an item that is not an object"
            elif not all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in v):
                return f"entry {k!r:.40} holds a block without a string 'type'"
        return None

    def update_plain(self, doc: Mapping[str, Any]) -> None:
        """Add originals from :meth:`to_plain` output (checked by :meth:`plain_problem`).

        Parameters
        ----------
        doc : Mapping
            A table as :meth:`to_plain` returns it.

        Raises
        ------
        WorkspaceArgumentError
            If ``doc`` is not such a table (the message names the problem).
        """
        problem = self.plain_problem(doc)
        if problem is not None:
            raise WorkspaceArgumentError("doc", doc, problem, "pass AnthropicCodec.to_plain() "
                                         "output")
        for k, v in doc.items():
            self.originals[k] = [copy.deepcopy(dict(b)) for b in v]

    def lookup(self, projected: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The original blocks behind a visible projected message, if recorded.

        Parameters
        ----------
        projected : Mapping
            An OpenAI-shaped message the engine renders.

        Returns
        -------
        list of dict or None
            A deep copy of the original blocks, or None when the message was not
            projected from Anthropic blocks.
        """
        found = self.originals.get(_key(projected))
        return copy.deepcopy(found) if found is not None else None


# ----------------------------------------------------------------- detection


def detect_format(items: Any) -> str:
    """``"responses"`` if ``items`` holds an OpenAI Responses item (an object
    whose ``type`` is message, function_call, function_call_output or
    reasoning), ``"anthropic"`` if it (a message list, or a ``{"system",
    "messages"}`` document) uses Anthropic-only structure, else ``"openai"``.

    Anthropic-only: a top-level ``system`` field beside ``messages``, or any
    content block of type tool_use, tool_result, thinking, redacted_thinking,
    image or document. Text-only conversations read the same in both.

    Parameters
    ----------
    items : list or mapping
        A message list or a ``{"system", "messages"}`` document.

    Returns
    -------
    {"openai", "anthropic", "responses"}
    """
    if isinstance(items, Mapping):
        if "system" in items and isinstance(items.get("messages"), list):
            return "anthropic"
        items = items.get("messages", items.get("input", ()))
    if is_responses(items):
        return "responses"
    for m in items if isinstance(items, Sequence) and not isinstance(items, str) else ():
        if not isinstance(m, Mapping):
            continue
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, Mapping) and b.get("type") in _ANTHROPIC_BLOCKS:
                    return "anthropic"
    return "openai"


# ----------------------------------------------------------------- Anthropic -> OpenAI


def _project_block(b: Mapping[str, Any], where: str) -> str:
    t = b.get("type")
    if t == "text":
        text = b.get("text")
        if not isinstance(text, str):
            raise TraceError(None, f"{where}: text block without a string 'text'")
        return text
    if t == "thinking":
        th = b.get("thinking")
        if not isinstance(th, str):
            raise TraceError(None, f"{where}: thinking block without a string 'thinking'")
        return f"<thinking>\n{th}\n</thinking>"
    if t == "redacted_thinking":
        return "<redacted_thinking/>"
    if t in SERVER_BLOCKS:
        return project_server_block(b, where)
    if t in ("image", "document"):
        src = b.get("source") or {}
        if src.get("type") == "base64" and isinstance(src.get("data"), str):
            data = src["data"]
            digest = hashlib.sha256(data.encode("ascii", "replace")).hexdigest()[:12]
            return f"[{t}: {src.get('media_type', '?')}, {len(data)} bytes base64, sha256 {digest}]"
        if src.get("type") == "url" and isinstance(src.get("url"), str):
            return f"[{t}: {src['url']}]"
        if src.get("type") == "text" and isinstance(src.get("data"), str):
            return str(src["data"])
        raise TraceError(None, f"{where}: {t} block with an unsupported source {src!r:.80}")
    raise TraceError(
        None,
        f"{where}: unsupported content block type {t!r} (expected one of "
        f"{', '.join(sorted(_KNOWN_BLOCKS))})",
    )


def _project_blocks(blocks: Any, where: str) -> str:
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        raise TraceError(None, f"{where}: content must be a string or a list of blocks")
    return _JOIN.join(_project_block(b, f"{where} block {j}") for j, b in enumerate(blocks))


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return _JOIN.join(_project_block(b, f"system block {j}") for j, b in enumerate(system))
    raise TraceError(None, "top-level 'system' must be a string or a list of text blocks")


def anthropic_to_openai(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: Any = None,
    codec: AnthropicCodec | None = None,
) -> list[dict[str, Any]]:
    """Project Anthropic Messages onto the engine's OpenAI chat messages.

    Parameters
    ----------
    messages : sequence of dict
        Anthropic messages (``role`` user/assistant, ``content`` a string or
        blocks). Items with ``action`` (trace context actions) and OpenAI
        ``system`` messages pass through unchanged.
    system : str or list, optional
        The top-level system prompt.
    codec : AnthropicCodec, optional
        Records each projected message's original blocks.

    Returns
    -------
    list of dict
        OpenAI messages: a user turn's tool_result blocks become ``tool``
        messages (in block order) followed by one user message for its other
        blocks; an assistant turn becomes one message whose tool_use blocks are
        ``tool_calls`` and whose other blocks are its content.

    Raises
    ------
    TraceError
        Naming the message index and block.
    """
    out: list[dict[str, Any]] = []
    if system is not None:
        smsg: dict[str, Any] = {"role": "system", "content": _system_text(system)}
        if codec is not None and isinstance(system, list):
            codec.record(smsg, system)
        out.append(smsg)
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TraceError(i, f"must be an object, got {type(m).__name__}")
        if "action" in m or m.get("role") in ("system", "tool"):
            out.append(dict(m))
            continue
        role, content = m.get("role"), m.get("content")
        where = f"message {i}"
        if role not in ("user", "assistant"):
            raise TraceError(i, f"has role {role!r}; Anthropic messages are user or assistant")
        if isinstance(content, str) or role == "assistant" and not isinstance(content, list):
            if not isinstance(content, str) and "tool_calls" in m:
                out.append(dict(m))  # an OpenAI assistant message in a mixed list
                continue
            out.append({"role": role, "content": content if isinstance(content, str) else ""})
            continue
        if not isinstance(content, list):
            raise TraceError(i, "content must be a string or a list of content blocks")
        for j, b in enumerate(content):
            if not isinstance(b, Mapping) or b.get("type") not in _KNOWN_BLOCKS:
                got = b.get("type") if isinstance(b, Mapping) else type(b).__name__
                raise TraceError(
                    i,
                    f"block {j} has type {got!r} (expected one of {_KNOWN_LIST})",
                )
        if role == "assistant":
            calls = []
            rest = []
            for j, b in enumerate(content):
                if b["type"] == "tool_use":
                    if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str):
                        raise TraceError(i, f"block {j}: tool_use needs string 'id' and 'name'")
                    inp = b.get("input", {})
                    if not isinstance(inp, Mapping):
                        raise TraceError(i, f"block {j}: tool_use 'input' must be an object "
                                         f"(got {type(inp).__name__}); wrap the value, e.g. "
                                         "{'value': ...}")
                    try:
                        args = json.dumps(inp, separators=(",", ":"), ensure_ascii=False,
                                          allow_nan=False)
                    except (ValueError, TypeError) as exc:
                        raise TraceError(i, f"block {j}: tool_use 'input' must be plain JSON "
                                         f"({exc})") from None
                    calls.append(
                        {
                            "id": b["id"],
                            "type": "function",
                            "function": {
                                "name": b["name"],
                                "arguments": args,
                            },
                        }
                    )
                elif b["type"] == "tool_result":
                    raise TraceError(i, f"block {j}: tool_result belongs in a user turn")
                else:
                    rest.append(b)
            projected = _project_blocks(rest, where) if rest else None
            msg: dict[str, Any] = {"role": "assistant", "content": projected}
            if calls:
                msg["tool_calls"] = calls
            elif projected is None:
                msg["content"] = ""
            if codec is not None:
                codec.record(msg, content)
            out.append(msg)
            continue
        others = []
        for j, b in enumerate(content):
            if b["type"] == "tool_result":
                tid = b.get("tool_use_id")
                if not isinstance(tid, str):
                    raise TraceError(i, f"block {j}: tool_result without a string tool_use_id")
                body = _project_blocks(b.get("content", ""), f"{where} block {j}")
                if b.get("is_error"):
                    body = "[error] " + body
                tmsg = {"role": "tool", "tool_call_id": tid, "content": body}
                if codec is not None:
                    codec.record(tmsg, [b])
                out.append(tmsg)
            elif b["type"] in ("tool_use", "thinking", "redacted_thinking") or (
                    b["type"] in SERVER_BLOCKS):
                raise TraceError(i, f"block {j}: {b['type']} belongs in an assistant turn")
            else:
                others.append(b)
        if others or not content:
            umsg = {"role": "user", "content": _project_blocks(others, where)}
            if codec is not None:
                codec.record(umsg, others)
            out.append(umsg)
    return out


def to_openai_messages(items: Any, *, codec: AnthropicCodec | None = None) -> list[dict[str, Any]]:
    """Messages in any of the three formats (or a ``{"system", "messages"}``
    document) as the engine's OpenAI messages; OpenAI input passes through,
    Anthropic messages are projected (:func:`anthropic_to_openai`), Responses
    input items too (``responses_to_openai``: a model turn, its reasoning
    included, one assistant message).

    Parameters
    ----------
    items : list or mapping
        Messages in any format, or a ``{"system", "messages"}`` document.
    codec : AnthropicCodec, optional
        Records the originals of Anthropic content for the way back (the
        originals of Responses items are recorded per block, by
        ``Workspace.register_messages``).

    Returns
    -------
    list of dict
        OpenAI chat messages.

    Raises
    ------
    WorkspaceArgumentError
        ``items`` is text, not a list, holds a non-object, or is nested deeper
        than :data:`vistalab._core.MAX_JSON_DEPTH`.
    """
    _items_iv(items)
    fmt = detect_format(items)
    if fmt == "responses":
        if isinstance(items, Mapping):
            items = items.get("input", items.get("messages", []))
        return [m for m, _ in responses_to_openai(items)]
    if fmt == "openai":
        if isinstance(items, Mapping):
            items = items.get("messages", [])
        return [dict(m) if isinstance(m, Mapping) else m for m in items]
    if isinstance(items, Mapping):
        return anthropic_to_openai(
            items.get("messages", []), system=items.get("system"), codec=codec
        )
    return anthropic_to_openai(items, codec=codec)


def _items_iv(items: Any) -> None:
    fix = "pass a list of messages, e.g. [{'role': 'user', 'content': 'hello'}]"
    msgs = items.get("messages", []) if isinstance(items, Mapping) else items
    if isinstance(msgs, (str, bytes, bytearray)) or not isinstance(msgs, (list, tuple)):
        raise WorkspaceArgumentError("items", items, "must be a list of messages (or a "
                                     "{'system', 'messages'} document)", fix)
    for i, m in enumerate(msgs):
        if not isinstance(m, Mapping):
            raise WorkspaceArgumentError("items", items, f"item {i} must be a message object, "
                                         f"not {type(m).__name__}", fix)
    check_depth("items", items, error=WorkspaceArgumentError)


# ----------------------------------------------------------------- OpenAI -> Anthropic


def _tool_schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool)
    return {
        "name": fn["name"],
        "description": fn.get("description", ""),
        "input_schema": fn.get("parameters", {"type": "object", "properties": {}}),
    }


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _blocks_of(
    m: Mapping[str, Any], codec: AnthropicCodec | None
) -> tuple[str, list[dict[str, Any]]]:
    role = m["role"]
    orig = codec.lookup(m) if codec is not None else None
    if role == "tool":
        if orig is not None:
            return "user", orig
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m.get("content") or "",
            }
        ]
    if orig is not None and role in ("user", "assistant"):
        return role, orig
    blocks: list[dict[str, Any]] = []
    if m.get("content"):
        blocks.append(_text_block(m["content"]))
    for c in m.get("tool_calls") or ():
        args = c["function"].get("arguments") or "{}"
        inp = None
        if json_text_depth(args, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH:
            try:
                inp = json_loads(args)
            except (json.JSONDecodeError, RecursionError):
                inp = None
        if not isinstance(inp, dict):
            inp = {"_arguments": args}
        blocks.append(
            {"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": inp}
        )
    if role == "system":  # a system message after the first turn: ordinary user context
        return "user", blocks
    return role, blocks


_ANTHROPIC_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")


def anthropic_tool_use_ids(
    calls: Sequence[tuple[str, Sequence[str]]],
) -> dict[tuple[str, str], str]:
    """Anthropic ``tool_use`` ids for OpenAI calls whose id an earlier call used.

    OpenAI accepts a call id again once its earlier call was answered (the
    engine pairs results with calls by order); the Anthropic Messages API
    refuses a repeated ``tool_use`` id anywhere in a request. The first use of
    an id keeps it; every later call with an id already used gets
    ``ID_OWNER`` (characters outside ``[A-Za-z0-9_-]`` replaced by ``_``,
    ``OWNER`` the id of the block that holds the call), with a ``_N`` suffix
    in the unlikely case that name is taken too. An id outside the API's
    pattern ``^[A-Za-z0-9_-]+$`` (``"a b"``, ``"call:1/2"``, ``""``) is renamed
    the same way at its first use, so every request is valid by construction.

    The result depends only on the call history, never on what a rendering
    shows, so a later reuse never changes an id an earlier request carried
    (the provider's prompt cache keeps matching that prefix).

    Parameters
    ----------
    calls : sequence of (owner, call ids)
        Every tool-call block in registration order: its block id and the ids
        of its calls.

    Returns
    -------
    dict
        ``(owner, call id) -> Anthropic id``, only for the calls renamed.
    """
    if isinstance(calls, (str, bytes)) or not isinstance(calls, Sequence):
        raise WorkspaceArgumentError("calls", calls, "must be a sequence of (owner, call ids) "
                                     "pairs", "pass e.g. [('B2', ['call_1'])]")
    used: set[str] = set()
    out: dict[tuple[str, str], str] = {}
    for item in calls:
        if (not isinstance(item, Sequence) or isinstance(item, (str, bytes)) or len(item) != 2
                or not isinstance(item[0], str) or isinstance(item[1], (str, bytes))
                or not isinstance(item[1], Sequence)
                or not all(isinstance(c, str) for c in item[1])):
            raise WorkspaceArgumentError("calls", calls, "must hold (owner, call ids) pairs of "
                                         "strings", "pass e.g. [('B2', ['call_1'])]")
    for owner, ids in calls:
        extend_tool_use_ids(owner, ids, used, out)
    return out


def extend_tool_use_ids(
    owner: str, ids: Sequence[str], used: set[str], out: dict[tuple[str, str], str]
) -> None:
    """One step of :func:`anthropic_tool_use_ids`: the calls of the next tool-call
    block, given the ids ``used`` so far; adds to ``used`` and to the renames
    ``out`` (so a caller keeping both can extend them block by block)."""
    for cid in ids:
        if cid not in used and _ANTHROPIC_ID.fullmatch(cid):
            used.add(cid)
            continue
        base = f"{_ANTHROPIC_ID_BAD.sub('_', cid)}_{owner}"
        new, n = base, 1
        while new in used:
            new, n = f"{base}_{n}", n + 1
        used.add(new)
        out[(owner, cid)] = new


def _renamed(block: dict[str, Any], ids: Mapping[str, str]) -> dict[str, Any]:
    if block.get("type") == "tool_use" and block.get("id") in ids:
        return {**block, "id": ids[block["id"]]}
    if block.get("type") == "tool_result" and block.get("tool_use_id") in ids:
        return {**block, "tool_use_id": ids[block["tool_use_id"]]}
    return block


def openai_to_anthropic(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
    *,
    codec: AnthropicCodec | None = None,
    cache_breakpoint: bool = True,
    stable_messages: int | None = None,
    tool_use_ids: Sequence[Mapping[str, str] | None] | None = None,
) -> dict[str, Any]:
    """An engine rendering (OpenAI messages) as an Anthropic Messages request.

    Rules (each checked by :func:`anthropic_problems`): leading system
    messages become the top-level ``system``; tool messages become
    ``tool_result`` blocks at the start of the user turn after their
    ``tool_use``; consecutive same-role messages merge so roles alternate,
    starting with ``user`` (a ``[conversation start]`` user block is put
    first when the rendering would open with an assistant turn; the engine's
    count does not include it); empty and whitespace-only text blocks are dropped (the
    Messages API refuses a text block without non-whitespace text; the engine's
    OpenAI rendering keeps them); thinking blocks stay
    in their assistant turn ahead of its tool_use blocks (the codec's
    originals keep their order). With ``cache_breakpoint``, the block that ends
    the stable prefix (the first ``stable_messages`` messages, default all but
    the final dashboard message) carries ``cache_control``. ``tool_use_ids``,
    one entry per message (None for none), maps that message's OpenAI call ids
    to the ``tool_use`` / ``tool_use_id`` the request carries instead (see
    :func:`anthropic_tool_use_ids`: the workspace renames reused call ids).

    Parameters
    ----------
    messages : sequence of mapping
        The rendering's OpenAI chat messages.
    tools : sequence of mapping
        Tool schemas (OpenAI format), converted to Anthropic's.
    codec : AnthropicCodec, optional
        Keeps the originals of registered Anthropic content (thinking blocks).
    cache_breakpoint : bool
        Mark the end of the stable prefix with ``cache_control``.
    stable_messages : int, optional
        How many leading messages are stable (default: all but the dashboard).
    tool_use_ids : sequence, optional
        Per message, the tool-call ids to use on the wire (reused OpenAI ids
        mapped to unique ones).

    Returns
    -------
    dict
        ``{"system": ..., "messages": [...], "tools": [...]}``.
    """
    msgs = list(messages)
    n_stable = len(msgs) - 1 if stable_messages is None else stable_messages
    system: list[dict[str, Any]] = []
    k = 0
    while k < len(msgs) and msgs[k]["role"] == "system":
        orig = codec.lookup(msgs[k]) if codec is not None else None
        if orig is not None:
            system.extend(orig)
        elif _has_text(msgs[k].get("content")):
            system.append(_text_block(msgs[k]["content"]))
        k += 1
    turns: list[dict[str, Any]] = []
    last_stable: dict[str, Any] | None = None  # the block that ends the stable prefix
    for idx in range(k, len(msgs)):
        role, blocks = _blocks_of(msgs[idx], codec)
        ids = tool_use_ids[idx] if tool_use_ids is not None else None
        if ids:
            blocks = [_renamed(b, ids) for b in blocks]
        blocks = [b for b in blocks
                  if not (b.get("type") == "text" and not _has_text(b.get("text")))]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turn = turns[-1]
        else:
            turn = {"role": role, "content": []}
            turns.append(turn)
        if role == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            other = [b for b in blocks if b.get("type") != "tool_result"]
            n_res = sum(1 for b in turn["content"] if b.get("type") == "tool_result")
            turn["content"][n_res:n_res] = results  # tool results lead the user turn
            turn["content"].extend(other)
            if idx < n_stable:
                last_stable = other[-1] if other else results[-1]
        else:
            turn["content"].extend(blocks)
            if idx < n_stable:
                last_stable = blocks[-1]
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [_text_block("[conversation start]")]})
    request: dict[str, Any] = {"messages": turns}
    if system:
        request["system"] = system
    if tools:
        request["tools"] = [_tool_schema(t) for t in tools]
    if cache_breakpoint:
        if last_stable is not None:
            last_stable["cache_control"] = {"type": "ephemeral"}
        elif system:
            system[-1] = {**system[-1], "cache_control": {"type": "ephemeral"}}
    return request


# ----------------------------------------------------------------- protocol checker


# ----------------------------------------------------------------- one rendering, two formats


def _format_iv(format: Any) -> str:
    if not isinstance(format, str) or format not in FORMATS:
        raise UnknownNameError("render format", format, FORMATS)
    return str(format)


def render_request(workspace: Any, format: str = "openai") -> dict[str, Any]:
    """The workspace's current rendering as a request in ``format``, with its
    mode, tokens (engine accounting), allowed tools and dashboard.

    Parameters
    ----------
    workspace : Workspace
        The workspace to render.
    format : {"openai", "anthropic", "responses", "gemini"}
        The wire format.

    Returns
    -------
    dict
        The request, ``mode``, ``tokens``, ``allowed_tools`` and ``dashboard``.
    """
    fmt = _format_iv(format)
    if not callable(getattr(workspace, "render", None)):
        raise WorkspaceArgumentError("workspace", workspace, "must be a Workspace",
                                     "pass the Workspace to render")
    r = workspace.render(format=fmt)
    return {
        "format": fmt,
        "request": r.as_request(),
        "mode": r.mode,
        "tokens": r.tokens,
        "budget": r.budget,
        "allowed_tools": list(r.allowed_tools),
        "dashboard": r.dashboard,
    }
