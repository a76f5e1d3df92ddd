"""The OpenAI Responses input-items format (``protocol="responses"``): the
generator's rendering, the request checker, the conversion to and from chat
messages (for counting and for the engine), and the turns the shape checks read.

Items (OpenAI API reference, Responses, ``input``;
platform.openai.com/docs/api-reference/responses/create): ``message`` items
(``role`` system, developer, user or assistant; ``content`` a string or parts:
``input_text``, ``input_image`` for input roles, ``output_text`` for the
assistant), ``function_call`` (``call_id``, the item ``id`` ``fc_...``,
``name``, ``arguments`` a JSON string), ``function_call_output`` (``call_id``,
``output``) and ``reasoning`` (item ``id`` ``rs_...``, ``summary`` parts, and
``encrypted_content`` when the request is stateless). A reasoning item is
followed by the item it produced (OpenAI reasoning guide, 'Keeping reasoning
items in context', platform.openai.com/docs/guides/reasoning).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "MODEL_ITEMS",
    "responses_problems",
    "responses_turns",
    "to_chat",
    "render_responses",
    "turn_items",
    "item_text",
]

#: Item types (and the assistant message) a model response produces: a run of
#: them is one model turn.
MODEL_ITEMS = ("reasoning", "function_call")
_INPUT_ROLES = ("system", "developer", "user")
_PART_TYPES = {"input_text", "input_image", "input_file", "output_text", "refusal"}


def _is_model(item: Any) -> bool:
    return isinstance(item, Mapping) and (
        item.get("type") in MODEL_ITEMS
        or (item.get("type", "message") == "message" and item.get("role") == "assistant"))


def _short(obj: Any, limit: int = 80) -> str:
    text = json.dumps(obj, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _key(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=repr)


def item_text(item: Mapping[str, Any]) -> Any:
    """The text of a message item (string content, or its text parts joined by
    newlines), of a ``function_call_output`` (its output), or None."""
    if item.get("type") == "function_call_output":
        out = item.get("output")
        if isinstance(out, list):
            return "\n".join(str(p.get("text", "")) for p in out if isinstance(p, Mapping))
        return out
    c = item.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        texts = [p.get("text") for p in c if isinstance(p, Mapping)
                 and p.get("type") in ("input_text", "output_text")]
        if len(texts) == len(c):
            return "\n".join(str(t) for t in texts)
    return None


# ----------------------------------------------------------------- generator


def render_responses(conv: Mapping[str, Any], reuse: Sequence[int]) -> list[dict[str, Any]]:
    """One abstract conversation of the strategies as Responses input items:
    reasoning items (a summary and ``encrypted_content``) before the calls
    they produced, parallel ``function_call`` items with ``call_id`` and item
    ``id``, call ids reused once answered, a pending call at the end."""
    out: list[dict[str, Any]] = []
    if conv["system"] is not None:
        out.append({"type": "message", "role": "system", "content": conv["system"]})
    n_ids = n_items = 0
    for rd in conv["rounds"]:
        if rd["parts"]:
            content: Any = [{"type": "input_text", "text": w} for w in rd["user"].split(" ", 1)]
            if rd["image"]:
                content.append({"type": "input_image",
                                "image_url": "https://example.com/chart.png"})
            out.append({"type": "message", "role": "user", "content": content})
        else:
            out.append({"type": "message", "role": "user", "content": rd["user"]})
        steps = [*rd["steps"], rd["pending"]] if rd.get("pending") else rd["steps"]
        for n_step, step in enumerate(steps):
            if step.get("think"):
                item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{n_items:03d}",
                                        "summary": []}
                if step["think"] == "thinking" and step["text"]:
                    item["summary"] = [{"type": "summary_text", "text": step["text"]}]
                item["encrypted_content"] = f"gAAAAB{n_items:03d}"
                out.append(item)
                n_items += 1
            elif step["text"]:
                out.append({"type": "message", "role": "assistant", "id": f"msg_{n_items:03d}",
                            "content": [{"type": "output_text", "text": step["text"]}]})
                n_items += 1
            ids = []
            for _ in step["calls"]:
                k = reuse[n_ids % len(reuse)] if reuse else -1
                cid = f"call_{k}" if 0 <= k < n_ids and f"call_{k}" not in ids else f"call_{n_ids}"
                ids.append(cid)
                n_ids += 1
            for cid, c in zip(ids, step["calls"], strict=True):
                out.append({"type": "function_call", "id": f"fc_{n_items:03d}", "call_id": cid,
                            "name": c["name"],
                            "arguments": json.dumps(c["args"], separators=(",", ":"))})
                n_items += 1
            if n_step == len(rd["steps"]):
                continue  # the calls are pending
            for cid, c in zip(ids, step["calls"], strict=True):
                body: Any = c["result"]
                if c["parts"] and body:
                    body = [{"type": "input_text", "text": body}]
                out.append({"type": "function_call_output", "call_id": cid, "output": body})
        if rd["answer"] is not None:
            out.append({"type": "message", "role": "assistant", "id": f"msg_{n_items:03d}",
                        "content": [{"type": "output_text", "text": rd["answer"]}]})
            n_items += 1
    return out


# ----------------------------------------------------------------- checker


def _shape(i: int, item: Any) -> str | None:
    if not isinstance(item, Mapping):
        return f"item {i} is not an object"
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        if role not in (*_INPUT_ROLES, "assistant"):
            return f"item {i}: unknown message role {_short(role, 30)}"
        c = item.get("content")
        if isinstance(c, str):
            return None
        if not isinstance(c, list) or not all(
                isinstance(p, Mapping) and p.get("type") in _PART_TYPES for p in c):
            return f"item {i}: message content must be a string or a list of content parts"
        return None
    if kind == "function_call":
        if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
            return f"item {i}: function_call needs a string call_id and name"
        if not isinstance(item.get("arguments"), str):
            return f"item {i}: function_call arguments must be a JSON string"
        return None
    if kind == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            return f"item {i}: function_call_output needs a string call_id"
        if not isinstance(item.get("output"), (str, list)):
            return f"item {i}: function_call_output output must be a string or content parts"
        return None
    if kind == "reasoning":
        if not isinstance(item.get("summary"), list):
            return f"item {i}: reasoning item needs a summary list (the API requires the field)"
        return None
    return f"item {i}: unknown item type {_short(kind, 30)}"


def responses_problems(items: Any, *, strict: bool = False) -> list[str]:
    """The Responses API's documented rules for an input-items request.

    Shape (each item a known type with its required fields, a reasoning item
    with its ``summary``); no item ``id`` twice (400 'Duplicate item found with
    id'); every ``function_call_output`` answers an earlier ``function_call``
    once (400 'No tool call found for function call output with call_id');
    every ``function_call`` is answered before the next input message and
    before the request ends (400 'No tool output found for function call');
    a ``reasoning`` item is immediately followed by a ``function_call`` or an
    assistant message (400 "Item 'rs_...' of type 'reasoning' was provided
    without its required following item"). ``strict`` adds the adjacency rules
    of :func:`~vistalab.conformance.request_problems`'s strict mode.

    Parameters
    ----------
    items : list
        The request's ``input`` items.
    strict : bool
        Also check the stricter rules.

    Returns
    -------
    list of str
        The problems, ``[]`` when the request is valid.
    """
    if not isinstance(items, (list, tuple)):
        return [f"the output must be a list of input items, got {type(items).__name__}"]
    if not items:
        return ["the request has no messages (the provider rejects an empty input)"]
    problems = [p for p in (_shape(i, it) for i, it in enumerate(items)) if p]
    if problems:
        return problems
    seen: set[str] = set()
    open_calls: list[str] = []
    answered: set[str] = set()
    called: set[str] = set()
    for i, it in enumerate(items):
        iid = it.get("id")
        if isinstance(iid, str):
            if iid in seen:
                problems.append(f"item {i}: duplicate item id {_short(iid, 40)}")
            seen.add(iid)
        kind = it.get("type", "message")
        if kind == "reasoning":
            nxt = items[i + 1] if i + 1 < len(items) else None
            if nxt is None or not (nxt.get("type") == "function_call" or (
                    nxt.get("type", "message") == "message" and nxt.get("role") == "assistant")):
                problems.append(f"item {i}: reasoning item {_short(iid, 40)} is not followed by "
                                "the function_call or message it produced")
        elif kind == "function_call":
            open_calls.append(it["call_id"])
            called.add(it["call_id"])
            answered.discard(it["call_id"])
        elif kind == "function_call_output":
            cid = it["call_id"]
            if cid in open_calls:
                open_calls.remove(cid)
                answered.add(cid)
            elif cid in answered:
                problems.append(f"item {i}: call {_short(cid, 40)} answered more than once")
            else:
                problems.append(f"item {i}: function_call_output answers "
                                f"{_short(cid, 40)}, which no earlier function_call issued")
        elif it.get("role") in _INPUT_ROLES and open_calls:
            problems.append(f"item {i}: {it.get('role')} message before the calls "
                            f"{open_calls} were answered")
            open_calls = []
    if open_calls:
        problems.append(f"end of request: calls {open_calls} were never answered")
    if strict:
        roles = [it.get("role") if it.get("type", "message") == "message" else it.get("type")
                 for it in items]
        k = 0
        while k < len(roles) and roles[k] in ("system", "developer"):
            k += 1
        late = [j for j in range(k, len(roles)) if roles[j] in ("system", "developer")]
        if late:
            problems.append(f"strict: system message(s) {late} after the conversation started")
        if k < len(roles) and roles[k] != "user":
            problems.append(f"strict: the first non-system message ({k}) is {roles[k]}, not user")
        if roles and roles[-1] not in ("user", "function_call_output"):
            problems.append(f"strict: the request ends with a {roles[-1]} item")
    return problems


# ----------------------------------------------------------------- turns


def _runs(items: Sequence[Any]) -> list[tuple[int, int]]:
    """``(start, end)`` of every turn: a run of model items, or one other item."""
    out, i = [], 0
    while i < len(items):
        j = i + 1
        if _is_model(items[i]):
            while j < len(items) and _is_model(items[j]):
                j += 1
        out.append((i, j))
        i = j
    return out


def turn_items(items: Sequence[Any], index: int) -> list[Any]:
    """The items of the turn that starts at ``index`` (see :func:`responses_turns`)."""
    for a, b in _runs(items):
        if a == index:
            return list(items[a:b])
    return []


def responses_turns(items: Any) -> list[Any]:
    """The turns of a Responses request (:class:`~._shapes.Turn`): each run of
    model items (reasoning, function calls, assistant messages) is one turn,
    as the response that produced it; every other item is its own turn."""
    from ._shapes import Turn

    if not isinstance(items, (list, tuple)) or not all(isinstance(m, Mapping) for m in items):
        raise TypeError("Responses input must be a list of items")
    out = []
    for a, b in _runs(items):
        run = list(items[a:b])
        first = run[0]
        role = "assistant" if _is_model(first) else (
            "tool" if first.get("type") == "function_call_output" else str(first.get("role")))
        t = Turn(a, role, _key(run))
        for it in run:
            kind = it.get("type", "message")
            if kind == "function_call":
                # the item id too: a call_id may be reused once answered
                t.calls.append((str(it.get("call_id")), _key(
                    [it.get("id"), it.get("call_id"), it.get("name"), it.get("arguments")])))
            elif kind == "function_call_output":
                t.results.append(str(it.get("call_id")))
            elif kind == "reasoning":
                t.reasoning.append(_key(it))
                if it.get("encrypted_content"):
                    t.signed.append(_key(it))
        out.append(t)
    return out


# ----------------------------------------------------------------- conversion


def _chat_parts(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    parts: list[Any] = []
    for p in content:
        if p.get("type") in ("input_text", "output_text"):
            parts.append({"type": "text", "text": p.get("text", "")})
        elif p.get("type") == "input_image":
            url = p.get("image_url")
            parts.append({"type": "image_url", "image_url": {"url": url if isinstance(
                url, str) else "file:" + str(p.get("file_id"))}})
        else:
            parts.append({"type": "text", "text": str(p.get("text", ""))})
    return parts


def run_to_chat(run: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One model turn (a run of reasoning, message and function_call items) as
    one chat assistant message: the summary and message texts as its content,
    the function calls as its ``tool_calls`` (``id`` = ``call_id``)."""
    texts: list[str] = []
    calls = []
    for it in run:
        kind = it.get("type", "message")
        if kind == "reasoning":
            texts += [str(s.get("text", "")) for s in it.get("summary") or ()
                      if isinstance(s, Mapping)]
        elif kind == "function_call":
            calls.append({"id": it.get("call_id"), "type": "function",
                          "function": {"name": it.get("name"),
                                       "arguments": it.get("arguments")}})
        else:
            t = item_text(it)
            if isinstance(t, str):
                texts.append(t)
    msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(t for t in texts if t)
                           or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def to_chat(items: Sequence[Any]) -> list[dict[str, Any]]:
    """Responses input items as OpenAI chat messages (what the suite counts and
    what the engine registers): each model turn one assistant message
    (:func:`run_to_chat`), each output a ``tool`` message, each input message
    a message of its role (``developer`` as ``system``)."""
    out: list[dict[str, Any]] = []
    for a, b in _runs(items):
        first = items[a]
        if _is_model(first):
            out.append(run_to_chat(items[a:b]))
        elif first.get("type") == "function_call_output":
            body = first.get("output")
            out.append({"role": "tool", "tool_call_id": first.get("call_id"),
                        "content": _chat_parts(body)})
        else:
            role = "system" if first.get("role") == "developer" else first.get("role")
            out.append({"role": role, "content": _chat_parts(first.get("content"))})
    return out
