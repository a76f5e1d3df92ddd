"""The checkers of the invariants that look at one output: ``budget``,
``protocol``, ``fidelity`` and ``recoverability`` (``crash`` and
``determinism`` are properties of runs, checked in :mod:`._runner`). Each
returns the list of problems it found, ``[]`` when the invariant holds; the
invariants' statements and sources are :data:`vistalab.workspace.INVARIANTS`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vistalab._core import DomainError
from vistalab.workspace import anthropic_problems, protocol_problems

from ._canon import canonical_key, memo_by_request
from ._counter import to_counted_messages

__all__ = [
    "ANTHROPIC_ID",
    "budget_problems",
    "request_problems",
    "fidelity_problems",
    "recoverability_problems",
    "pinned_problems",
    "units",
]

#: The Anthropic Messages API's pattern for ``tool_use`` ids.
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
#: Wire metadata that does not change what a unit says (ignored by fidelity).
_METADATA_KEYS = frozenset({"cache_control"})


def _short(obj: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(obj, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------- budget


def budget_problems(output: Any, budget: int, count: Callable[[Any], int]) -> list[str]:
    """The ``budget`` invariant: ``count(output) <= budget``.

    ``count`` is the suite's counter (:func:`~vistalab.conformance.check`'s
    ``counter``); a request it cannot count is reported by the ``protocol``
    invariant, not here.

    Parameters
    ----------
    output : list or dict
        The manager's request.
    budget : int
        The budget B it was given.
    count : callable
        ``count(request) -> int``.

    Returns
    -------
    list of str
        The problems, ``[]`` when the invariant holds.
    """
    if (isinstance(output, list) and not output) or (
            isinstance(output, dict) and output.get("messages") == []):
        return []
    try:
        used = count(output)
    except Exception:  # noqa: BLE001 - malformed output: the protocol check says why
        return []
    if used > budget:
        return [f"the output costs {used:,} tokens, over the budget of {budget:,} "
                f"(by {used - budget:,})"]
    return []


# ----------------------------------------------------------------- protocol


def _openai_shape(output: Any) -> list[str]:
    if not isinstance(output, (list, tuple)):
        return [f"the output must be a list of messages, got {type(output).__name__}"]
    bad = [i for i, m in enumerate(output) if not isinstance(m, Mapping)]
    if bad:
        return [f"message {bad[0]} is not an object"]
    if not output:
        return ["the request has no messages (the provider rejects an empty list)"]
    return []


def _openai_strict(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    problems = []
    roles = [m.get("role") for m in messages]
    k = 0
    while k < len(roles) and roles[k] == "system":
        k += 1
    late = [i for i in range(k, len(roles)) if roles[i] == "system"]
    if late:
        problems.append(f"strict: system message(s) {late} after the conversation started")
    if k < len(roles) and roles[k] != "user":
        problems.append(f"strict: the first non-system message ({k}) is {roles[k]}, not user")
    if roles and roles[-1] not in ("user", "tool"):
        problems.append(f"strict: the request ends with a {roles[-1]} message")
    for i, m in enumerate(messages):
        calls = [c.get("id") for c in m.get("tool_calls") or () if isinstance(c, Mapping)]
        if not calls:
            continue
        answers = []
        for n in messages[i + 1 :]:
            if n.get("role") != "tool":
                break
            answers.append(n.get("tool_call_id"))
        if answers != calls[: len(answers)]:
            problems.append(f"strict: the results after message {i} answer {answers}, not the "
                            f"calls in their order {calls}")
    return problems


def _anthropic_extra(request: Mapping[str, Any], strict: bool) -> list[str]:
    """Rules of the Messages API that :func:`vistalab.workspace.anthropic_problems`
    leaves out: the id pattern, ``input`` an object, a system of text."""
    problems = []
    system = request.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list) or not all(
            isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in system
        ):
            problems.append("system must be a string or a list of text blocks")
        else:
            if any(isinstance(b.get("text"), str) and not b["text"].strip() for b in system):
                problems.append("system: text block of only whitespace (the API refuses it: "
                                "'text content blocks must contain non-whitespace text')")
    msgs = request.get("messages") or []
    for i, m in enumerate(msgs):
        content = m.get("content") if isinstance(m, Mapping) else None
        if not isinstance(content, list):
            continue
        for j, b in enumerate(content):
            if not isinstance(b, Mapping):
                problems.append(f"message {i} block {j} is not an object")
                continue
            if b.get("type") == "tool_use":
                bid = b.get("id")
                if not isinstance(bid, str) or not ANTHROPIC_ID.match(bid):
                    problems.append(f"message {i} block {j}: tool_use id {_short(bid, 40)} does "
                                    f"not match {ANTHROPIC_ID.pattern}")
                if not isinstance(b.get("input"), Mapping):
                    problems.append(f"message {i} block {j}: tool_use input must be an object")
        for j, b in enumerate(content):
            if (isinstance(b, Mapping) and b.get("type") == "text"
                    and isinstance(b.get("text"), str) and b["text"] and not b["text"].strip()):
                problems.append(f"message {i} block {j}: text block of only whitespace (the API "
                                "refuses it: 'text content blocks must contain non-whitespace "
                                "text')")
        if strict and i > 0 and isinstance(msgs[i - 1], Mapping):
            uses = [b.get("id") for b in msgs[i - 1].get("content") or ()
                    if isinstance(b, Mapping) and b.get("type") == "tool_use"]
            results = [b.get("tool_use_id") for b in content
                       if isinstance(b, Mapping) and b.get("type") == "tool_result"]
            if uses and results and results != uses:
                problems.append(f"strict: message {i}'s tool results {results} are not in the "
                                f"order of the calls {uses}")
    return problems


def _as_blocks(request: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` with string contents written as one text block (the API
    accepts both; :func:`anthropic_problems` reads blocks)."""
    msgs = []
    for m in request.get("messages") or []:
        if isinstance(m, Mapping) and isinstance(m.get("content"), str):
            text = m["content"]
            m = {**m, "content": [{"type": "text", "text": text}] if text else []}
        msgs.append(m)
    out = {**request, "messages": msgs}
    system = request.get("system")
    if isinstance(system, str):
        out["system"] = [{"type": "text", "text": system}] if system else None
    return out


def request_problems(output: Any, protocol: str = "openai", *, strict: bool = False) -> list[str]:
    """The ``protocol`` invariant: ``output`` is a request the provider accepts.

    OpenAI chat (:func:`vistalab.workspace.protocol_problems`, plus a
    non-empty list): every ``tool`` message answers a call of the assistant
    message that opens its contiguous run of tool messages, every call is
    answered before the next non-tool message, no call is answered twice.
    ``strict`` adds the adjacency rules some providers and chat templates
    enforce: system messages only at the start, the first other message a
    user message, results in the order of their calls, the request ending
    with a user or tool message.

    Anthropic Messages (:func:`vistalab.workspace.anthropic_problems`, plus the
    rules below): roles alternate starting with ``user``; every
    ``tool_result`` answers a ``tool_use`` of the immediately preceding
    assistant message and every ``tool_use`` is answered in the next user
    message; ``tool_use`` ids are unique and match ``^[a-zA-Z0-9_-]+$``;
    ``input`` is an object; ``system`` is a string or text blocks. ``strict``
    adds: tool results in the order of their calls.

    Parameters
    ----------
    output : list or dict
        The request: OpenAI messages, or an Anthropic ``{"system", "messages"}``
        document.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.
    strict : bool
        Also check the stricter rules above.

    Returns
    -------
    list of str
        The problems, ``[]`` when the request is valid.
    """
    if protocol == "anthropic":
        if not isinstance(output, Mapping):
            return [f"the output must be a {{'system', 'messages'}} object, got "
                    f"{type(output).__name__}"]
        msgs = output.get("messages")
        if not isinstance(msgs, (list, tuple)) or not all(isinstance(m, Mapping) for m in msgs):
            return ["the output's 'messages' must be a list of objects"]
        request = _as_blocks({**output, "messages": list(msgs)})
        problems = _anthropic_extra(request, strict)
        try:
            problems = list(anthropic_problems(request)) + problems
        except (AttributeError, TypeError, KeyError) as exc:
            problems.insert(0, f"the request is malformed ({type(exc).__name__}: "
                            f"{_short(str(exc), 80)})")
        return problems
    if protocol == "responses":
        from ._responses import responses_problems

        return responses_problems(output, strict=strict)
    if protocol == "gemini":
        from ._gemini import gemini_problems

        return gemini_problems(output, strict=strict)
    shape = _openai_shape(output)
    if shape:
        return shape
    try:
        problems = list(protocol_problems(output))
    except (AttributeError, TypeError, KeyError) as exc:
        return [f"the request is malformed ({type(exc).__name__}: {_short(str(exc), 80)})"]
    if strict:
        problems += _openai_strict(output)
    return problems


# ----------------------------------------------------------------- pinned


def pinned_problems(conversation: Any, output: Any, protocol: str = "openai", *,
                    pinned: str = "system") -> list[str]:
    """The ``pinned`` invariant: every pinned message of ``conversation`` is in
    ``output``, exactly (wire metadata such as ``cache_control`` aside).

    With ``pinned="system"`` the system prompt is pinned (OpenAI: the system
    messages; Anthropic: the ``system`` field's text); with ``"none"`` nothing is.

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.
    pinned : {"system", "none"}
        What is pinned.

    Returns
    -------
    list of str
        The first pinned unit missing, ``[]`` when all are kept.
    """
    from ._strategies import _pinned_iv

    protocol = _protocol_iv(protocol)
    if _pinned_iv(pinned) == "none":
        return []
    src = [u for u in _request_units("conversation", conversation, protocol)
           if (u.get("role") if protocol == "anthropic" else u.get("role")) == "system"]
    if not src:
        return []
    try:
        got = {_key(u) for u in _units(output, protocol)}
    except (AttributeError, TypeError):
        return []  # malformed output: the protocol check says why
    for u in src:
        if _key(u) not in got:
            return [f"the pinned system prompt is missing from the request (or altered): "
                    f"{_short(u)}"]
    return []


# ----------------------------------------------------------------- fidelity


_PROTOCOLS = ("openai", "anthropic", "responses", "gemini")


def _protocol_iv(protocol: Any) -> str:
    if not isinstance(protocol, str) or protocol not in _PROTOCOLS:
        raise DomainError("protocol", protocol,
                          "must be 'openai', 'anthropic', 'responses' or 'gemini'",
                          "pass the wire format of the requests")
    return protocol


def _callable_iv(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise DomainError(name, value, "must be a callable or None",
                          "pass the manager's method, or omit it")


def _request_units(name: str, request: Any, protocol: str) -> list[Any]:
    """:func:`units` of an argument that must be well formed (the manager's input)."""
    try:
        return _units(request, protocol)
    except (AttributeError, TypeError):
        what = ("an Anthropic {'system', 'messages'} object" if protocol == "anthropic"
                else "a Gemini {'systemInstruction', 'contents'} object"
                if protocol == "gemini"
                else "OpenAI messages or Responses items (a list of objects)")
        raise DomainError(name, request, f"must be {what}",
                          f"pass a {protocol} request") from None


def units(request: Any, protocol: str = "openai") -> list[Any]:
    """The units fidelity compares.

    Parameters
    ----------
    request : list or dict
        OpenAI messages, or an Anthropic ``{"system", "messages"}`` document.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list
        OpenAI: the messages. Anthropic: each content block as
        ``{"role", "block"}`` (a string content is one text block; the system
        prompt's blocks have role ``"system"``). Gemini: each part as
        ``{"role", "part"}`` (the systemInstruction's parts with role
        ``"system"``).
    """
    return _request_units("request", request, _protocol_iv(protocol))


@memo_by_request
def _units(request: Any, protocol: str) -> list[Any]:
    """:func:`units` without the door: ``TypeError``/``AttributeError`` on a
    malformed request (the callers that check a manager's output report it)."""
    if protocol == "gemini":
        from ._gemini import gemini_units

        return gemini_units(request)
    if protocol != "anthropic":
        if not isinstance(request, (list, tuple)) or not all(
                isinstance(m, Mapping) for m in request):
            raise TypeError("OpenAI messages must be a list of objects")
        return list(request)
    if not isinstance(request, Mapping):
        raise TypeError("an Anthropic request must be an object")
    out: list[Any] = []
    system = request.get("system")
    if isinstance(system, str):
        if system:
            out.append({"role": "system", "block": {"type": "text", "text": system}})
    elif isinstance(system, (list, tuple)):
        out += [{"role": "system", "block": b} for b in system]
    for m in request.get("messages") or ():
        content = m.get("content")
        if isinstance(content, str):
            if content:
                out.append({"role": m.get("role"), "block": {"type": "text", "text": content}})
            continue
        out += [{"role": m.get("role"), "block": b} for b in content or ()]
    return out


def _key(unit: Any) -> str:
    return canonical_key(unit, _METADATA_KEYS)


def _declared(placeholder: Callable[[Any], Any] | None, unit: Any) -> Any:
    return placeholder(unit) if placeholder is not None else None


def fidelity_problems(
    conversation: Any,
    output: Any,
    protocol: str = "openai",
    *,
    placeholder: Callable[[Any], Sequence[str] | None] | None = None,
) -> list[str]:
    """The ``fidelity`` invariant: every output unit (:func:`units`) is an input
    unit, unaltered (wire metadata such as ``cache_control`` aside) and in the
    original order, unless ``placeholder(unit)`` declares it a placeholder,
    summary or notice (returns a tuple, possibly empty, instead of None).

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.
    placeholder : callable, optional
        The manager's declarations (:class:`ManagerAdapter`).

    Returns
    -------
    list of str
        The first break of fidelity found, ``[]`` when none.
    """
    protocol = _protocol_iv(protocol)
    _callable_iv("placeholder", placeholder)
    src = [_key(u) for u in _request_units("conversation", conversation, protocol)]
    try:
        got = _units(output, protocol)
    except (AttributeError, TypeError):
        return []  # malformed output: the protocol check says why
    problems = []
    pos = 0
    what = {"anthropic": "block", "gemini": "part"}.get(protocol, "message")
    for i, u in enumerate(got):
        if _declared(placeholder, u) is not None:
            continue
        k = _key(u)
        try:
            pos = src.index(k, pos) + 1
            continue
        except ValueError:
            pass
        if k in src:
            problems.append(f"output {what} {i} is an input {what} out of its original order "
                            f"(or repeated): {_short(u)}")
        else:
            problems.append(f"output {what} {i} is not an input {what} (altered or invented, and "
                            f"not declared a placeholder): {_short(u)}")
        break  # the first break of order makes every later comparison moot
    return problems


# ----------------------------------------------------------------- recoverability


def _texts(conversation: Any, protocol: str) -> set[bytes]:
    """The exact bytes a placeholder may stand for: each input message's text
    as counted (its content, or for Anthropic its documented projection)."""
    out: set[bytes] = set()
    for m in to_counted_messages(conversation, protocol):
        c = m.get("content")
        if isinstance(c, str):
            out.add(c.encode("utf-8"))
    return out


def recoverability_problems(
    conversation: Any,
    output: Any,
    protocol: str = "openai",
    *,
    placeholder: Callable[[Any], Sequence[str] | None] | None = None,
    recover: Callable[[str], bytes] | None = None,
) -> list[str]:
    """The ``recoverability`` invariant: for every payload id a declared
    placeholder of ``output`` names, ``recover(id)`` returns the exact bytes of
    the input it replaced (an input message's text).

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.
    placeholder : callable, optional
        The manager's declarations; without them nothing is archived.
    recover : callable, optional
        ``recover(id) -> bytes``.

    Returns
    -------
    list of str
        The first unrecoverable payload found, ``[]`` when none.
    """
    protocol = _protocol_iv(protocol)
    _callable_iv("placeholder", placeholder)
    _callable_iv("recover", recover)
    _request_units("conversation", conversation, protocol)
    if placeholder is None:
        return []
    try:
        got = _units(output, protocol)
    except (AttributeError, TypeError):
        return []
    originals: set[bytes] | None = None
    for i, u in enumerate(got):
        ids = placeholder(u)
        for pid in ids or ():
            if recover is None:
                return [f"output unit {i} stands for payload {pid!r} but the manager has no "
                        "recover(id)"]
            try:
                data = recover(pid)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                return [f"recover({pid!r}) raised {type(exc).__name__}: {_short(str(exc), 160)}"]
            if originals is None:
                originals = _texts(conversation, protocol)
            if not isinstance(data, (bytes, bytearray)) or bytes(data) not in originals:
                return [f"recover({pid!r}) for output unit {i} did not return the exact bytes "
                        f"of any input message (got {_short(repr(data)[:200], 80)})"]
    return []
