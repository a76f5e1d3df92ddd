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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from vistalab._core import DomainError

__all__ = ["conversations", "budgets", "cut_points", "minimal_tail", "pinned_floor", "PINNED",
           "PROTOCOLS"]

#: The wire formats the suite speaks.
PROTOCOLS = ("openai", "anthropic", "responses", "gemini")
#: What the suite pins (``check(..., pinned=...)``): ``"system"``, the system
#: prompt (the default, as the paper pins protocol-required blocks); ``"none"``,
#: for managers that may drop it.
PINNED = ("system", "none")

#: Texts the conversations are made of: one draw each (generation cost is what
#: bounds conversations per second), shrinking towards the first.
_PHRASES = (
    "ok", "", "alpha beta", "The result is 42.", "é日本 ünïcode", "line one\nline two",
    "  leading and trailing  ", "{\"json\": [1, 2, 3]}", "<tag>markup</tag>", "a" * 40,
    "Summarise the file.", "tab\tseparated\tvalues", "emoji \U0001f600 text", "\r\n",
    "SELECT * FROM t;", "0123456789", "<|endoftext|>", "done",
)
_TOOLS = ("search", "read_file", "run_python")
_ARG_SETS: tuple[dict[str, Any], ...] = (
    {}, {"q": "alpha"}, {"path": "/data/x.csv", "n": 3}, {"q": "é", "n": -1},
)

_SHORT = st.sampled_from(_PHRASES)
_NONEMPTY = st.sampled_from([p for p in _PHRASES if p])
_SYSTEM = st.one_of(st.none(), _NONEMPTY)
# Few choices per call and per round: the shrinker's work grows with them.
#: A tool result: a phrase repeated 1 to 400 times (empty, short or long).
_RESULT = st.builds(lambda text, n: text if n == 1 or not text else (text + "\n") * n,
                    _SHORT, st.integers(1, 400))
_TOOL_CALL = st.sampled_from([(name, args) for name in _TOOLS for args in _ARG_SETS])
#: How a result is written: (as text parts, flagged as an error).
_RESULT_FORM = st.sampled_from([(False, False), (True, False), (False, True), (True, True)])
_CALL = st.builds(
    lambda tool, result, form: {"name": tool[0], "args": tool[1], "result": result,
                                "parts": form[0], "error": form[1]},
    _TOOL_CALL, _RESULT, _RESULT_FORM,
)
#: How a user message is written: a string, text parts, text parts and an image.
_USER_FORM = st.sampled_from([(False, False), (True, False), (True, True)])


#: What reasoning a tool-call step carries (Anthropic: a signed thinking block, a
#: redacted_thinking block; the Responses format: a reasoning item).
_THINK = st.sampled_from((None, "thinking", "redacted"))


def _step(max_calls: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda text, calls, think: {"text": text, "calls": calls, "think": think},
        _SHORT, st.lists(_CALL, min_size=1, max_size=max_calls), _THINK,
    )


#: The Anthropic server tools each tool-call step runs before its client calls
#: (step k runs the k-th list; each tool is a use block and its result block in
#: the same assistant turn). Drawn after the abstract conversation, for Anthropic
#: only, so the other formats' conversations stay as they were.
_SERVERS = st.lists(st.lists(st.sampled_from(
    ("web_search", "web_fetch", "code_execution", "bash_code_execution", "mcp")), max_size=2),
    max_size=6)


def _server_blocks(kind: str, sid: str, text: str) -> list[dict[str, Any]]:
    """A server tool's use block and its result block, as the Messages API returns
    them in one assistant turn (field names of ``anthropic.types``:
    ServerToolUseBlockParam, WebSearchToolResultBlockParam,
    WebFetchToolResultBlockParam, CodeExecutionToolResultBlockParam,
    BashCodeExecutionToolResultBlockParam; beta BetaMCPToolUseBlockParam,
    BetaRequestMCPToolResultBlockParam)."""
    if kind == "mcp":
        return [{"type": "mcp_tool_use", "id": sid, "name": "lookup", "server_name": "wiki",
                 "input": {"q": text}},
                {"type": "mcp_tool_result", "tool_use_id": sid, "is_error": False,
                 "content": [{"type": "text", "text": "Found: " + text}]}]
    inp: dict[str, Any] = {"web_search": {"query": text}, "web_fetch":
                           {"url": "https://example.com/" + str(len(text))}}.get(
        kind, {"code": f"print({text!r})"} if kind == "code_execution"
        else {"command": "echo " + str(len(text))})
    content: Any
    if kind == "web_search":
        content = [{"type": "web_search_result", "url": "https://example.com/r",
                    "title": text, "encrypted_content": "EqgfCioIARgB" + sid[-3:],
                    "page_age": "1 day"}]
    elif kind == "web_fetch":
        content = {"type": "web_fetch_result", "url": inp["url"],
                   "retrieved_at": "2025-09-01T12:00:00Z",
                   "content": {"type": "document", "source": {
                       "type": "text", "media_type": "text/plain", "data": text}}}
    else:
        content = {"type": f"{kind}_result", "stdout": text + "\n", "stderr": "",
                   "return_code": 0, "content": []}
    return [{"type": "server_tool_use", "id": sid, "name": kind, "input": inp},
            {"type": f"{kind}_tool_result", "tool_use_id": sid, "content": content}]


def _round(max_calls: int, max_steps: int) -> st.SearchStrategy[dict[str, Any]]:
    step = _step(max_calls)
    return st.builds(
        lambda user, form, steps, answer: {"user": user, "parts": form[0], "image": form[1],
                                           "steps": steps, "answer": answer},
        _NONEMPTY, _USER_FORM, st.lists(step, max_size=max_steps), _NONEMPTY,
    )


def _abstract(max_rounds: int, max_calls: int, max_steps: int) -> st.SearchStrategy[Any]:
    # Lists (not counts then loops), so the shrinker deletes whole rounds and steps.
    def build(system: str | None, rounds: list[dict[str, Any]],
              pending: dict[str, Any] | None) -> dict[str, Any]:
        rounds = [dict(r) for r in rounds]
        rounds[-1]["answer"] = None  # the conversation ends where the manager runs
        # ... or while the last step's calls are pending (issued, not answered yet)
        rounds[-1]["pending"] = pending
        return {"system": system, "rounds": rounds}

    return st.builds(
        build, _SYSTEM, st.lists(_round(max_calls, max_steps), min_size=1, max_size=max_rounds),
        st.none() | _step(max_calls),
    )


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
        steps = [*rd["steps"], rd["pending"]] if rd.get("pending") else rd["steps"]
        for n_step, step in enumerate(steps):
            pending = n_step == len(rd["steps"])
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
                if pending:
                    break
                body: Any = c["result"]
                if c["parts"] and body:
                    body = [{"type": "text", "text": body}]
                out.append({"role": "tool", "tool_call_id": cid, "content": body})
        if rd["answer"] is not None:
            out.append({"role": "assistant", "content": rd["answer"]})
    return out


def _visible(text: str | None) -> str | None:
    """``text``, or None when it is empty or only whitespace: the Messages API
    refuses such text blocks ('text content blocks must contain non-whitespace
    text'), so Anthropic conversations never hold one."""
    return text if text and text.strip() else None


def _anthropic(conv: dict[str, Any], servers: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = []
    n_ids = 0
    n_steps = 0
    for rd in conv["rounds"]:
        rd = {**rd, "user": _visible(rd["user"]) or "ok",
              "answer": rd["answer"] if rd["answer"] is None else _visible(rd["answer"]) or "ok"}
        if rd["parts"]:
            content: Any = [{"type": "text", "text": w} for w in rd["user"].split(" ", 1)
                            if _visible(w)]
            if rd["image"]:
                content.append(
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": "iVBORw0KGgo="}}
                )
            msgs.append({"role": "user", "content": content or rd["user"]})
        else:
            msgs.append({"role": "user", "content": rd["user"]})
        steps = [*rd["steps"], rd["pending"]] if rd.get("pending") else rd["steps"]
        for n_step, step in enumerate(steps):
            blocks: list[dict[str, Any]] = []
            # thinking comes first in its turn, signed for that turn (the
            # signature names the turn, as a real one is bound to it)
            if step.get("think") == "thinking":
                blocks.append({"type": "thinking", "thinking": "Plan: " + (
                    _visible(step["text"]) or "call the tools"),
                    "signature": f"sig-{len(msgs):03d}-{n_ids:03d}"})
            elif step.get("think") == "redacted":
                blocks.append({"type": "redacted_thinking",
                               "data": f"EmwKAhgB{len(msgs):03d}{n_ids:03d}"})
            if _visible(step["text"]):
                blocks.append({"type": "text", "text": step["text"]})
            kinds = servers[n_steps] if n_steps < len(servers) else ()
            n_steps += 1
            for kind in kinds:
                # server tools run inside the turn: use and result side by side
                blocks += _server_blocks(kind, f"srvtoolu_{n_ids:02d}",
                                         _visible(step["text"]) or "query")
                n_ids += 1
            results: list[dict[str, Any]] = []
            for c in step["calls"]:
                tid = f"toolu_{n_ids:02d}"
                n_ids += 1
                blocks.append({"type": "tool_use", "id": tid, "name": c["name"],
                               "input": dict(c["args"])})
                res: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid}
                if _visible(c["result"]):
                    res["content"] = (
                        [{"type": "text", "text": c["result"]}] if c["parts"] else c["result"]
                    )
                if c["error"]:
                    res["is_error"] = True
                results.append(res)
            msgs.append({"role": "assistant", "content": blocks})
            if n_step < len(rd["steps"]):  # else the calls are pending
                msgs.append({"role": "user", "content": results})
        if rd["answer"] is not None:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": rd["answer"]}]})
    return {"system": _visible(conv["system"]), "messages": msgs}


def _protocol_iv(protocol: Any) -> str:
    if protocol not in PROTOCOLS:
        raise DomainError("protocol", protocol,
                          "must be 'openai', 'anthropic', 'responses' or 'gemini'",
                          "pass protocol='openai' (chat completions), 'anthropic' (Messages), "
                          "'responses' (OpenAI Responses input items) or 'gemini' (Gemini "
                          "generateContent contents)")
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

    Responses (``protocol="responses"``): OpenAI Responses input items, with
    ``message`` items, parallel ``function_call`` items (``call_id`` reused once
    answered, unique item ``id``), ``function_call_output`` items and
    ``reasoning`` items (a summary and ``encrypted_content``) before the calls
    they produced.

    Gemini (``protocol="gemini"``): a ``{"systemInstruction", "contents"}``
    document (:func:`vistalab.conformance._gemini.render_gemini`): parallel
    ``functionCall`` parts in one model content, with ids on every call or on
    none (results then matched by name, the same names used again), answered
    by one user content of ``functionResponse`` parts; thought parts and a
    ``thoughtSignature`` on the first call of a step with thinking; images as
    ``inlineData``.

    Anthropic tool_use turns may open with a signed ``thinking`` block or a
    ``redacted_thinking`` block, and may run server tools before their client
    calls: a ``server_tool_use`` (web_search, web_fetch, code_execution,
    bash_code_execution) or ``mcp_tool_use`` block followed in the same turn by
    its result block (``web_search_tool_result``, ..., ``mcp_tool_result``), as
    the Messages API returns them. Every conversation ends after a user message,
    after tool results, or with a pending call (an assistant turn whose calls
    are not answered yet).

    Parameters
    ----------
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format.
    max_rounds : int
        Most user turns (rounds) per conversation.
    max_calls : int
        Most parallel calls per assistant step.
    max_steps : int
        Most tool-call steps per round.

    Returns
    -------
    SearchStrategy
        Conversations (lists of OpenAI messages, or Anthropic documents).
    """
    protocol = _protocol_iv(protocol)
    max_rounds = _bound_iv("max_rounds", max_rounds, 1)
    max_calls = _bound_iv("max_calls", max_calls, 1)
    max_steps = _bound_iv("max_steps", max_steps, 0)
    abstract = _abstract(max_rounds, max_calls, max_steps)
    if protocol == "anthropic":
        return st.builds(_anthropic, abstract, _SERVERS)
    if protocol == "responses":
        from ._responses import render_responses

        return st.builds(render_responses, abstract, st.lists(st.integers(0, 8), max_size=4))
    if protocol == "gemini":
        from ._gemini import render_gemini

        return st.builds(render_gemini, abstract, st.booleans())
    return st.builds(_openai, abstract, st.lists(st.integers(0, 8), max_size=4))


def cut_points(conversation: Any, protocol: str = "openai") -> list[int]:
    """Indexes (into the message list) where a protocol-valid tail may start.

    Parameters
    ----------
    conversation : list or dict
        OpenAI messages or an Anthropic document.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list of int
        Each user message that is not a tool-result turn and, for OpenAI,
        each assistant message.
    """
    protocol = _protocol_iv(protocol)
    if protocol == "gemini":
        if not isinstance(conversation, Mapping) or not isinstance(
                conversation.get("contents"), (list, tuple)) or not all(
                isinstance(c, Mapping) for c in conversation["contents"]):
            raise DomainError("conversation", conversation, "must be a Gemini {'contents': "
                              "[...]} document", "pass a conversation")
        from ._gemini import gemini_cut_points

        return gemini_cut_points(conversation)
    msgs_of = conversation.get("messages") if isinstance(conversation, Mapping) else conversation
    if isinstance(msgs_of, (str, bytes)) or not isinstance(msgs_of, (list, tuple)) or not all(
            isinstance(m, Mapping) for m in msgs_of) or (
            protocol == "anthropic" and not isinstance(conversation, Mapping)):
        raise DomainError("conversation", conversation, "must be a list of messages (or an "
                          "Anthropic {'messages': [...]} document)", "pass a conversation")
    if protocol == "anthropic":
        msgs = conversation.get("messages") or []
        return [
            i for i, m in enumerate(msgs)
            if m.get("role") == "user" and not (
                isinstance(m.get("content"), list)
                and any(b.get("type") == "tool_result" for b in m["content"])
            )
        ]
    if protocol == "responses":
        from ._responses import _is_model

        return [i for i, m in enumerate(conversation) if m.get("role") == "user"
                or (_is_model(m) and not (i and _is_model(conversation[i - 1])))]
    return [i for i, m in enumerate(conversation) if m.get("role") in ("user", "assistant")]


def _tail(conversation: Any, protocol: str, i: int, keep_system: bool) -> Any:
    if protocol == "gemini":
        from ._gemini import gemini_tail

        return gemini_tail(conversation, i, keep_system)
    if protocol == "anthropic":
        return {"system": conversation.get("system") if keep_system else None,
                "messages": conversation["messages"][i:]}
    head = [m for m in conversation[:i] if m.get("role") == "system"] if keep_system else []
    return head + list(conversation[i:])


def minimal_tail(conversation: Any, protocol: str = "openai") -> Any:
    """The smallest protocol-valid request that still ends where the
    conversation ends.

    Parameters
    ----------
    conversation : list or dict
        OpenAI messages or an Anthropic document.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list or dict
        Its last user turn (with the tool calls its trailing results
        answer), without the system prompt.
    """
    protocol = _protocol_iv(protocol)
    cuts = cut_points(conversation, protocol)
    if protocol in ("openai", "responses"):
        # the last tail start whose tail is valid: a user message, or the
        # assistant message that opens the trailing tool results
        msgs = conversation
        last = len(msgs) - 1
        while last >= 0 and (msgs[last].get("role") == "tool"
                             or msgs[last].get("type") == "function_call_output"):
            last -= 1
        cuts = [c for c in cuts if c <= last]
        start = cuts[-1] if cuts else 0
    elif protocol == "gemini":
        # the last user content, or the model content its trailing results answer
        contents = conversation["contents"]
        start = cuts[-1] if cuts else 0
        if len(contents) >= 2 and contents[-2].get("role") == "model" and contents[-1].get(
                "role") == "user" and start < len(contents) - 2:
            start = len(contents) - 2
    else:
        start = cuts[-1] if cuts else 0
    return _tail(conversation, protocol, start, keep_system=False)


def _pinned_iv(pinned: Any) -> str:
    if not isinstance(pinned, str) or pinned not in PINNED:
        raise DomainError("pinned", pinned, "must be 'system' or 'none'",
                          "pass pinned='system' (the system prompt is pinned, the default) or "
                          "pinned='none' (the manager may drop it)")
    return pinned


def pinned_floor(conversation: Any, protocol: str = "openai", *, pinned: str = "system") -> Any:
    """The smallest request a manager must be able to send: the pinned
    messages plus the conversation's last user turn and everything after it.

    At every budget at or above its cost a manager must return a valid,
    non-empty request that keeps the pinned messages; below it no such request
    exists, and the manager refuses (raises :class:`BudgetTooSmall`). The
    last user turn is where a request may start under every provider's rules
    (the stricter chat templates included), and it carries the task the rest
    of the tail serves.

    Parameters
    ----------
    conversation : list or dict
        OpenAI messages or an Anthropic document.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.
    pinned : {"system", "none"}
        ``"system"``: the system prompt is pinned (kept); ``"none"``: it is not.

    Returns
    -------
    list or dict
        The floor request, in the conversation's format.
    """
    protocol = _protocol_iv(protocol)
    pinned = _pinned_iv(pinned)
    cuts = cut_points(conversation, protocol)
    if protocol in ("openai", "responses"):
        cuts = [i for i in cuts if conversation[i].get("role") == "user"]
    if not cuts:
        return _tail(conversation, protocol, 0, keep_system=pinned == "system")
    return _tail(conversation, protocol, cuts[-1], keep_system=pinned == "system")


def budgets(
    conversation: Any,
    count: Callable[[Any], int],
    protocol: str = "openai",
    *,
    at_least: int = 0,
    pinned: str = "system",
) -> st.SearchStrategy[int]:
    """Budgets near every boundary of ``conversation``, above and below its
    pinned floor.

    The boundaries are the costs (by ``count``) of every tail of the
    conversation (from each message on, with and without the system prompt:
    where a careless trimmer cuts between a call and its results); the
    strategy draws each boundary, one token below and one above it, any
    integer from the pinned floor (:func:`pinned_floor`) up, or a budget below
    that floor, where the only correct answer is a refusal. Nothing below 1 or
    ``at_least`` is drawn.

    Parameters
    ----------
    conversation : list or dict
        OpenAI messages or an Anthropic document.
    count : callable
        The token counter (a :class:`SuiteCounter` prices tails fastest).
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.
    at_least : int
        A lower bound of the manager's own (its ``min_budget``).
    pinned : {"system", "none"}
        What is pinned (see :func:`pinned_floor`).

    Returns
    -------
    SearchStrategy
        Integer budgets.
    """
    protocol = _protocol_iv(protocol)
    pinned = _pinned_iv(pinned)
    costs = getattr(count, "costs", None)
    priced = costs(conversation) if callable(costs) else None
    if priced is None:

        def tail(i: int, keep: bool) -> int:
            return count(_tail(conversation, protocol, i, keep))

    else:
        const, system, per = priced
        msgs = conversation["messages"] if protocol == "anthropic" else conversation
        is_sys = [protocol != "anthropic" and m.get("role") == "system" for m in msgs]
        suffix = [0] * (len(per) + 1)
        for i in range(len(per) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + per[i]

        def tail(i: int, keep: bool) -> int:
            head = sum(c for c, s in zip(per[:i], is_sys[:i], strict=True) if s) if keep else 0
            return const + (system if keep else 0) + head + suffix[i]

    low = max(1, int(at_least))
    floor = max(count(pinned_floor(conversation, protocol, pinned=pinned)), low)
    # Boundaries are named from the end of the conversation (the j-th tail start
    # from the end, with or without the system prompt, one token below, at or
    # above its cost), so deleting an early round while shrinking keeps the budget.
    # Tails from every message, valid or not: a trimmer that cuts between a
    # call and its results does so at exactly these budgets.
    n_msgs = len(conversation["messages"] if protocol == "anthropic" else
                 conversation["contents"] if protocol == "gemini" else conversation)
    cuts_from_end = list(range(n_msgs - 1, -1, -1)) or [0]
    marks = {tail(i, keep) for i in cuts_from_end for keep in (False, True)}
    top = max(max(marks) + 1, floor)

    def at_mark(choice: tuple[int, bool, int]) -> int:
        j, keep, delta = choice
        return max(low, tail(cuts_from_end[min(j, len(cuts_from_end) - 1)], keep) + delta)

    drawn = [
        st.tuples(
            st.integers(0, len(cuts_from_end) - 1), st.booleans(), st.sampled_from((0, -1, 1))
        ).map(at_mark),
        st.integers(floor, top),
        # the pinned floor itself, where a refusal turns into a duty to answer
        st.sampled_from(sorted({max(low, floor - 1), floor, floor + 1})),
    ]
    if low < floor:
        # below the pinned floor: a correct manager refuses (BudgetTooSmall)
        drawn.append(st.integers(low, floor - 1))
    return st.one_of(*drawn)
