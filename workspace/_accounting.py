"""How a rendered OpenAI-style request is turned into a token count.

One definition, used by the dashboard, the preflight, the budget guard and
the tests' from-scratch recount, so all of them see the same numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._bounds import count_lower_bound, max_token_bytes_for
from ._errors import WorkspaceArgumentError
from ._tokenizers import Tokenizer, split_points

__all__ = [
    "MESSAGE_FRAMING",
    "TOOL_CALL_FRAMING",
    "TOOLS_FRAMING",
    "REPLY_PRIMING",
    "message_tokens",
    "tools_tokens",
    "count_request_tokens",
    "OPAQUE_PART_TOKENS",
    "opaque_part_text",
    "canonical_json",
]

#: Tokens every message pays for its chat-template framing
#: (``<|im_start|>``, the role separator and ``<|im_end|>``); the role name
#: itself is counted with the tokenizer. This is also the per-message floor.
MESSAGE_FRAMING = 3
#: Tokens each assistant tool call pays beyond its name and JSON arguments.
TOOL_CALL_FRAMING = 3
#: Tokens the tool-schema section pays beyond the schemas' compact JSON.
TOOLS_FRAMING = 3
#: Tokens that prime the assistant's reply (``<|im_start|>assistant``).
REPLY_PRIMING = 3


def canonical_json(obj: Any) -> str:
    """Compact, key-sorted, ASCII-safe JSON: identical bytes on every platform."""
    return _CANONICAL.encode(obj)


#: The encoder ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
#: ensure_ascii=True)`` builds on each call, built once (it holds no state
#: between calls, so threads may share it).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


#: Tokens charged for one non-text content part (an image, audio, a file), on top
#: of its stand-in line: OpenAI's charge for one high-detail 512x512 image tile
#: plus its base (170 + 85). The engine carries text only; such a part is
#: rendered as the line :func:`opaque_part_text` writes, and every such line in
#: a message's content adds this estimate to :func:`message_tokens`, so budgets
#: leave room for a harness that splices the part back in.
OPAQUE_PART_TOKENS = 255
_OPAQUE_LINE = re.compile(
    r"^\[opaque [^\]\n]{1,40} part: [0-9][0-9,]*B sha256=[0-9a-f]{16} ~[0-9]+ tok est\.\]$",
    re.MULTILINE,
)


def opaque_part_text(part: Mapping[str, Any]) -> str:
    """The stand-in line for one non-text content part: its type, the size and
    sha256 of its canonical JSON, and the documented estimate
    (:data:`OPAQUE_PART_TOKENS`, which :func:`message_tokens` adds per line).
    The part's bytes are not carried by the engine."""
    try:
        raw = canonical_json(dict(part)).encode("utf-8")
    except (TypeError, ValueError):
        raw = repr(part).encode("utf-8", "backslashreplace")
    kind = part.get("type")
    kind = kind if isinstance(kind, str) and kind.isprintable() and "]" not in kind else "unknown"
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return (
        f"[opaque {kind[:40]} part: {len(raw):,}B sha256={digest} ~{OPAQUE_PART_TOKENS} tok est.]"
    )


def opaque_parts(text: str) -> int:
    """How many opaque-part stand-in lines ``text`` holds."""
    return len(_OPAQUE_LINE.findall(text)) if "[opaque " in text else 0


def _counter_iv(tokenizer: Any) -> Any:
    """``tokenizer.count``, or a refusal: a text (whose ``str.count`` counts a
    substring) or an object without a callable ``count`` is not a Tokenizer."""
    count = getattr(tokenizer, "count", None)
    if isinstance(tokenizer, (str, bytes, bytearray)) or not callable(count):
        raise WorkspaceArgumentError(
            "tokenizer",
            tokenizer,
            "must be a Tokenizer (an object with count(text)), not "
            + ("a text" if isinstance(tokenizer, (str, bytes, bytearray)) else "that"),
            "pass get_tokenizer('cl100k_base') or get_tokenizer('approx')",
        )
    return count


def message_tokens(message: Mapping[str, Any], tokenizer: Tokenizer) -> int:
    """Tokens of one rendered message.

    ``MESSAGE_FRAMING + count(role) + count(content)``, plus
    ``OPAQUE_PART_TOKENS`` per opaque-part stand-in line in the content, plus
    ``count(name) + 1`` when a ``name`` is set, plus, for each tool call,
    ``TOOL_CALL_FRAMING + count(function name) + count(arguments)``.
    Tool-call IDs are wire metadata the model does not read and are not
    counted.

    Parameters
    ----------
    message : mapping
        One OpenAI chat message.
    tokenizer : Tokenizer
        The counter (e.g. ``get_tokenizer("cl100k_base")``).

    Returns
    -------
    int
        Its tokens in the engine's accounting.
    """
    if type(message) is not dict and not isinstance(message, Mapping):
        raise WorkspaceArgumentError(
            "message", message, "must be a mapping (an OpenAI chat message)"
        )
    count = _counter_iv(tokenizer)
    total = MESSAGE_FRAMING + count(str(message.get("role", "")))
    content = message.get("content")
    if content:
        if not isinstance(content, str):
            raise WorkspaceArgumentError(
                "message",
                message,
                "must have string (or None) content; join content parts first",
                "register it with Workspace.register_message, which joins parts",
            )
        total += count_text(tokenizer, content)[0] if len(content) > CHUNK_CHARS else count(content)
        if "[opaque " in content:
            total += OPAQUE_PART_TOKENS * opaque_parts(content)
    name = message.get("name")
    if name:
        total += count(str(name)) + 1
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        total += (
            TOOL_CALL_FRAMING + count(str(fn.get("name", ""))) + count(str(fn.get("arguments", "")))
        )
    return total


#: Texts longer than this many characters are counted in pieces when the
#: tokenizer declares where its count splits (``Tokenizer.split_points``): no
#: call sees (and no token list holds) much more than one piece, and a bounded
#: count can stop early.
CHUNK_CHARS = 1 << 16


def count_text(tokenizer: Tokenizer, text: str, limit: int | None = None) -> tuple[int, bool]:
    """``(tokenizer.count(text), True)``, counted piece by piece for a long
    text when the tokenizer declares split points (the same number: the count
    splits exactly there, see ``Tokenizer.split_points``).

    With ``limit``, the count may stop as soon as a lower bound on the whole
    count exceeds ``limit``: then ``(that bound, False)``. Three bounds, in
    order of cost (each a lower bound on the count by the contract's optional
    members, so a text that fits is never stopped, and its count is the one
    it gets without a limit):

    1. ``ceil(chars / max_token_bytes)`` (``max_token_bytes_ascii`` for an
       ASCII text, when declared; characters never exceed UTF-8 bytes, so
       this is at most the contract's byte bound): O(1).
    2. For a text longer than ``CHUNK_CHARS``, ``count_lower_bound(text,
       limit)`` when declared, before any piece is counted: it reads the text
       a window at a time and stops once it passes ``limit`` (for the shipped
       vocabularies, after 2 to 6 times ``limit`` characters of CJK text).
    3. While counting pieces: the pieces counted so far plus bound 1 for
       the rest of the current piece, so a text without split points is read
       only until its pieces pass ``limit``; split points are looked for in
       windows of ``CHUNK_CHARS``, each window first charged its lower bound.

    A text of at most ``CHUNK_CHARS`` characters that bound 1 does not refuse
    is counted in one ``count`` call.
    """
    count = tokenizer.count
    n = len(text)
    per = max_token_bytes_for(tokenizer, text) if limit is not None else None
    if per is not None and -(-n // per) > limit:  # type: ignore[operator]
        return -(-n // per), False
    if limit is not None and n > CHUNK_CHARS:
        at_least = count_lower_bound(tokenizer, text, limit)
        if at_least > limit:
            return at_least, False
    split = split_points(tokenizer)
    if n <= CHUNK_CHARS or split is None:
        return count(text), True
    total, start = 0, 0
    while start < n:
        end, pos = n, start + CHUNK_CHARS
        while pos < n:
            m = split.search(text, pos, min(n, pos + CHUNK_CHARS + 1))
            if m is not None:
                end = m.start()
                break
            pos += CHUNK_CHARS + 1
            # No split point up to pos: text[start:pos] is part of one piece.
            if per is not None and total + -(-(min(pos, n) - start) // per) > limit:  # type: ignore[operator]
                return total + -(-(min(pos, n) - start) // per), False
        if per is not None and total + -(-(end - start) // per) > limit:  # type: ignore[operator]
            return total + -(-(end - start) // per), False
        total += count(text[start:end])
        start = end
        if limit is not None and total > limit and start < n:
            return total, False
    return total, True


def tools_tokens(tools: Sequence[Mapping[str, Any]], tokenizer: Tokenizer) -> int:
    """Tokens of the tool-schema section: its compact JSON plus framing (0 if none).

    Parameters
    ----------
    tools : sequence of mapping
        Tool schemas, OpenAI function-calling format.
    tokenizer : Tokenizer
        The counter (e.g. ``get_tokenizer("cl100k_base")``).

    Returns
    -------
    int
        Tokens of the section (0 for no tools).

    Raises
    ------
    WorkspaceArgumentError
        ``tools`` is a text or a mapping (not a sequence of schemas), or
        ``tokenizer`` has no ``count``; both are checked before any schema is
        serialised.
    """
    if isinstance(tools, (str, bytes, bytearray, Mapping)):
        raise WorkspaceArgumentError(
            "tools",
            tools,
            "must be a sequence of tool schemas (mappings), not one "
            + ("mapping" if isinstance(tools, Mapping) else "text"),
            "pass a list of OpenAI function-calling schemas, e.g. [schema]",
        )
    count = _counter_iv(tokenizer)
    if not tools:
        return 0
    return TOOLS_FRAMING + count(canonical_json(list(tools)))


def count_request_tokens(
    messages: Iterable[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tokenizer: Tokenizer,
) -> int:
    """From-scratch token count of a whole request (messages + tools + reply priming).

    This is the reference the engine's cached accounting must equal.

    Parameters
    ----------
    messages : iterable of mapping
        The request's OpenAI chat messages.
    tools : sequence of mapping
        Its tool schemas.
    tokenizer : Tokenizer
        The counter (e.g. ``get_tokenizer("cl100k_base")``).

    Returns
    -------
    int
        The request's tokens.
    """
    return (
        sum(message_tokens(m, tokenizer) for m in messages)
        + tools_tokens(tools, tokenizer)
        + REPLY_PRIMING
    )
