"""Hypothesis strategies for valid conversations in both wire formats, and for
budgets near every boundary of a conversation (reusable in users' own tests).

A conversation is a series of rounds: a user message, then zero or more
assistant steps that call tools (one or several calls in parallel, with or
without text), each answered by its results, then -- except in the last round
-- an assistant answer. The conversation ends where a context manager runs:
after a user message or after tool results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from vistalab._core import DomainError

__all__ = ["conversations", "budgets", "cut_points", "minimal_tail"]

_WORDS = ["alpha", "beta", "the", "result", "42", "é", "日本", "\n", " ", "{}", "ok", "line"]
_TOOLS = ["search", "read_file", "run_python"]


def _text(max_words: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(_WORDS), max_size=max_words).map(" ".join)


def _long_or_short() -> st.SearchStrategy[str]:
    """A tool result: empty, short, or long (a repeated line, up to a few
    thousand characters)."""
    return st.one_of(
        st.just(""),
        _text(8),
        st.builds(lambda line, n: (line + "\n") * n, _text(6), st.integers(20, 300)),
    )


def _args() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.sampled_from(["q", "path", "n"]),
        st.one_of(st.integers(-5, 99), _text(3)),
        max_size=2,
    )


@st.composite
def _abstract(draw: Any, max_rounds: int, max_calls: int, max_steps: int) -> dict[str, Any]:
    system = draw(st.one_of(st.none(), _text(6).filter(bool)))
    n_rounds = draw(st.integers(1, max_rounds))
    rounds = []
    for r in range(n_rounds):
        last = r == n_rounds - 1
        user = draw(_text(10))
        parts = draw(st.booleans()) if user else False
        image = parts and draw(st.booleans())
        steps = []
        for _ in range(draw(st.integers(0, max_steps))):
            n = draw(st.integers(1, max_calls))
            calls = [
                {
                    "name": draw(st.sampled_from(_TOOLS)),
                    "args": draw(_args()),
                    "result": draw(_long_or_short()),
                    "parts": draw(st.booleans()),
                    "error": draw(st.booleans()),
                }
                for _ in range(n)
            ]
            steps.append({"text": draw(st.one_of(st.just(""), _text(5))), "calls": calls})
        answer = None if last else draw(_text(8).filter(bool))
        rounds.append(
            {"user": user or "?", "parts": parts, "image": image, "steps": steps, "answer": answer}
        )
    return {"system": system, "rounds": rounds}


def _openai(conv: dict[str, Any], reuse: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if conv["system"] is not None:
        out.append({"role": "system", "content": conv["system"]})
    n_ids = 0
    for rd in conv["rounds"]:
        if rd["parts"]:
            content: Any = [{"type": "text", "text": w} for w in rd["user"].split(" ", 1)]
            if rd["image"]:
                content.append(
                    {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}}
                )
            out.append({"role": "user", "content": content})
        else:
            out.append({"role": "user", "content": rd["user"]})
        for step in rd["steps"]:
            ids = []
            for _ in step["calls"]:
                # an id may be reused once its earlier call was answered (reuse[k]
                # picks an earlier id when it is not one of this message's)
                k = reuse[n_ids % len(reuse)] if reuse else -1
                cid = f"call_{k}" if 0 <= k < n_ids and f"call_{k}" not in ids else f"call_{n_ids}"
                ids.append(cid)
                n_ids += 1
            out.append(
                {
                    "role": "assistant",
                    "content": step["text"] or None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": json.dumps(c["args"], separators=(",", ":")),
                            },
                        }
                        for cid, c in zip(ids, step["calls"], strict=True)
                    ],
                }
            )
            for cid, c in zip(ids, step["calls"], strict=True):
                body: Any = c["result"]
                if c["parts"] and body:
                    body = [{"type": "text", "text": body}]
                out.append({"role": "tool", "tool_call_id": cid, "content": body})
        if rd["answer"] is not None:
            out.append({"role": "assistant", "content": rd["answer"]})
    return out


def _anthropic(conv: dict[str, Any]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = []
    n_ids = 0
    for rd in conv["rounds"]:
        if rd["parts"]:
            content: Any = [{"type": "text", "text": w} for w in rd["user"].split(" ", 1) if w]
            if rd["image"]:
                content.append(
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": "iVBORw0KGgo="}}
                )
            msgs.append({"role": "user", "content": content or rd["user"]})
        else:
            msgs.append({"role": "user", "content": rd["user"]})
        for step in rd["steps"]:
            blocks: list[dict[str, Any]] = []
            if step["text"]:
                blocks.append({"type": "text", "text": step["text"]})
            results: list[dict[str, Any]] = []
            for c in step["calls"]:
                tid = f"toolu_{n_ids:02d}"
                n_ids += 1
                blocks.append({"type": "tool_use", "id": tid, "name": c["name"],
                               "input": c["args"]})
                res: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid}
                if c["result"]:
                    res["content"] = (
                        [{"type": "text", "text": c["result"]}] if c["parts"] else c["result"]
                    )
                if c["error"]:
                    res["is_error"] = True
                results.append(res)
            msgs.append({"role": "assistant", "content": blocks})
            msgs.append({"role": "user", "content": results})
        if rd["answer"] is not None:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": rd["answer"]}]})
    system = conv["system"]
    return {"system": system, "messages": msgs}


def _protocol_iv(protocol: Any) -> str:
    if protocol not in ("openai", "anthropic"):
        raise DomainError("protocol", protocol, "must be 'openai' or 'anthropic'",
                          "pass protocol='openai' (chat completions) or 'anthropic' (Messages)")
    return str(protocol)


def _bound_iv(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise DomainError(name, value, f"must be an integer >= {low}")
    return value


def conversations(
    protocol: str = "openai", *, max_rounds: int = 3, max_calls: int = 3, max_steps: int = 2
) -> st.SearchStrategy[Any]:
    """Valid conversations in one wire format.

    OpenAI (``protocol="openai"``): a list of chat messages with an optional
    system message, user messages as strings or content parts (text, an
    image), assistant tool calls with or without text, one to ``max_calls``
    calls in parallel, results empty, short or long (as strings or text
    parts), and call ids reused once their earlier call was answered.

    Anthropic (``protocol="anthropic"``): a ``{"system", "messages"}``
    document (``system`` None or a string) whose turns alternate starting
    with ``user``; ``tool_use`` ids are unique; results are ``tool_result``
    blocks (string or text-block content, some with ``is_error``).

    Every conversation ends after a user message or after tool results.
    """
    protocol = _protocol_iv(protocol)
    max_rounds = _bound_iv("max_rounds", max_rounds, 1)
    max_calls = _bound_iv("max_calls", max_calls, 1)
    max_steps = _bound_iv("max_steps", max_steps, 0)
    abstract = _abstract(max_rounds, max_calls, max_steps)
    if protocol == "anthropic":
        return abstract.map(_anthropic)
    return st.builds(_openai, abstract, st.lists(st.integers(0, 8), max_size=4))


def cut_points(conversation: Any, protocol: str = "openai") -> list[int]:
    """Indexes (into the message list) where a protocol-valid tail may start:
    a user message that is not a tool-result turn, or (OpenAI) an assistant
    message."""
    protocol = _protocol_iv(protocol)
    if protocol == "anthropic":
        msgs = conversation.get("messages") or []
        return [
            i for i, m in enumerate(msgs)
            if m.get("role") == "user" and not (
                isinstance(m.get("content"), list)
                and any(b.get("type") == "tool_result" for b in m["content"])
            )
        ]
    return [i for i, m in enumerate(conversation) if m.get("role") in ("user", "assistant")]


def _tail(conversation: Any, protocol: str, i: int, keep_system: bool) -> Any:
    if protocol == "anthropic":
        return {"system": conversation.get("system") if keep_system else None,
                "messages": conversation["messages"][i:]}
    head = [m for m in conversation[:i] if m.get("role") == "system"] if keep_system else []
    return head + list(conversation[i:])


def minimal_tail(conversation: Any, protocol: str = "openai") -> Any:
    """The smallest protocol-valid request that still ends where the
    conversation ends: its last user turn (with the tool calls its trailing
    results answer), without the system prompt."""
    protocol = _protocol_iv(protocol)
    cuts = cut_points(conversation, protocol)
    if protocol == "openai":
        # the last tail start whose tail is valid: a user message, or the
        # assistant message that opens the trailing tool results
        msgs = conversation
        last = len(msgs) - 1
        while last >= 0 and msgs[last].get("role") == "tool":
            last -= 1
        cuts = [c for c in cuts if c <= last]
        start = cuts[-1] if cuts else 0
    else:
        start = cuts[-1] if cuts else 0
    return _tail(conversation, protocol, start, keep_system=False)


def budgets(
    conversation: Any,
    count: Callable[[Any], int],
    protocol: str = "openai",
    *,
    at_least: int = 0,
) -> st.SearchStrategy[int]:
    """Budgets near every boundary of ``conversation``.

    The boundaries are the costs (by ``count``) of every protocol-valid tail,
    with and without the system prompt, and of the whole conversation; the
    strategy draws each boundary, one token below and one above it, or any
    integer in between. Nothing below the cost of :func:`minimal_tail` (or
    ``at_least``) is drawn: below it no non-empty valid request exists.
    """
    protocol = _protocol_iv(protocol)
    floor = max(count(minimal_tail(conversation, protocol)), int(at_least))
    total = count(conversation)
    marks = {floor, total}
    for i in cut_points(conversation, protocol):
        for keep in (True, False):
            marks.add(count(_tail(conversation, protocol, i, keep)))
    near = sorted({m + d for m in marks for d in (-1, 0, 1) if m + d >= floor})
    top = max(near[-1], floor)
    return st.one_of(st.sampled_from(near), st.integers(floor, top))
