"""A last shrinking pass after Hypothesis: delete whole rounds, tool-call steps,
single calls (with their answers) and the system prompt, and simplify texts,
while the same invariant stays broken. Every counterexample is then 1-minimal:
no single one of these deletions or simplifications keeps the failure, even
where the budget drawn depends on the conversation and Hypothesis's shrinker
cannot see the smaller case."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["smaller_conversations", "minimize"]


def _rounds(msgs: list[Any], protocol: str) -> list[int]:
    """Start index of each round: a user message that is not a tool-result turn."""
    starts = []
    for i, m in enumerate(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if protocol == "anthropic" and isinstance(c, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in c
        ):
            continue
        starts.append(i)
    return starts


def _calls(m: Any, protocol: str) -> list[str]:
    if protocol == "anthropic":
        c = m.get("content")
        return [b["id"] for b in c if isinstance(b, dict) and b.get("type") == "tool_use"] \
            if isinstance(c, list) else []
    return [c["id"] for c in m.get("tool_calls") or ()]


def _drop_call(msgs: list[Any], i: int, cid: str, protocol: str) -> list[Any]:
    """``msgs`` without call ``cid`` of message ``i`` and its answer."""
    out = copy.deepcopy(msgs)
    if protocol == "anthropic":
        out[i]["content"] = [b for b in out[i]["content"]
                             if not (b.get("type") == "tool_use" and b.get("id") == cid)]
        if i + 1 < len(out):  # else the call is pending (not answered yet)
            out[i + 1]["content"] = [b for b in out[i + 1]["content"]
                                     if not (b.get("type") == "tool_result"
                                             and b.get("tool_use_id") == cid)]
        return out
    out[i]["tool_calls"] = [c for c in out[i]["tool_calls"] if c["id"] != cid]
    j = next((k for k in range(i + 1, len(out)) if out[k].get("tool_call_id") == cid), None)
    if j is not None:  # None: the call is pending (not answered yet)
        del out[j]
    return out


def _step_end(msgs: list[Any], i: int, protocol: str) -> int:
    if protocol == "anthropic":
        return i + 2
    j = i + 1
    while j < len(msgs) and msgs[j].get("role") == "tool":
        j += 1
    return j


def smaller_conversations(conversation: Any, protocol: str = "openai") -> Iterator[Any]:
    """Every conversation one deletion smaller that the strategies could also
    have generated: without the system prompt, without one round (not the
    last), without one tool-call step, or without one of several parallel calls
    and its answer."""
    if protocol == "gemini":
        from ._gemini import gemini_smaller

        yield from gemini_smaller(conversation)
        return
    anthropic = protocol == "anthropic"
    msgs = list(conversation["messages"] if anthropic else conversation)

    def wrap(new: list[Any], system: Any = ...) -> Any:
        if anthropic:
            return {"system": conversation.get("system") if system is ... else system,
                    "messages": new}
        return new

    if anthropic and conversation.get("system") is not None:
        yield wrap(msgs, None)
    if not anthropic and msgs and msgs[0].get("role") == "system":
        yield msgs[1:]
    starts = _rounds(msgs, protocol)
    for r in range(len(starts) - 1):
        yield wrap(msgs[: starts[r]] + msgs[starts[r + 1]:])
    for i, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        calls = _calls(m, protocol)
        if not calls:
            continue
        yield wrap(msgs[:i] + msgs[_step_end(msgs, i, protocol):])
        if len(calls) > 1:
            for cid in calls:
                yield wrap(_drop_call(msgs, i, cid, protocol))


def _text_paths(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to the texts of a conversation: string ``content`` and ``text``
    fields (never ids, names or arguments)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("content", "text", "system") and isinstance(v, str):
                yield (*path, k)
            elif isinstance(v, (dict, list)) and k in ("content", "messages", "system",
                                                       "contents", "parts",
                                                       "systemInstruction"):
                yield from _text_paths(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _text_paths(v, (*path, i))


def _set(obj: Any, path: tuple[Any, ...], value: str) -> Any:
    out = copy.deepcopy(obj)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return out


def simpler_texts(conversation: Any) -> Iterator[Any]:
    """The conversation with one text made simpler: ``"ok"`` in place of a
    longer text, or the first half of a long one's lines."""
    for path in _text_paths(conversation):
        cur = conversation
        for k in path:
            cur = cur[k]
        if len(cur) > 2:
            yield _set(conversation, path, "ok")
        lines = cur.split("\n")
        if len(lines) > 2:
            yield _set(conversation, path, "\n".join(lines[: len(lines) // 2]))


def minimize(
    conversation: Any, protocol: str, still_fails: Callable[[Any], bool], *, limit: int = 200
) -> Any:
    """Greedily apply deletions (:func:`smaller_conversations`), then text
    simplifications (:func:`simpler_texts`), while ``still_fails(smaller)``;
    at most ``limit`` trials."""
    trials = 0
    changed = True
    while changed and trials < limit:
        changed = False
        candidates = itertools.chain(smaller_conversations(conversation, protocol),
                                     simpler_texts(conversation))
        for smaller in candidates:
            trials += 1
            if still_fails(smaller):
                conversation, changed = smaller, True
                break
            if trials >= limit:
                break
    return conversation
