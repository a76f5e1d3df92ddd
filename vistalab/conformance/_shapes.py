"""The checkers of the invariants of today's request shapes: ``batch`` (a
parallel batch kept whole), ``coupling`` (reasoning items and thinking blocks
stay with their tool loop; a signed block never outlives a rewrite of its
turn), ``closure`` (every id the request references is defined in it) and
``pending`` (a call whose result has not arrived is kept, exactly). Statements
and sources: :data:`vistalab.workspace.INVARIANTS`.

Each format is read as a list of *turns* (:func:`turns`): what one message (or,
in the Responses format, one run of model output items) holds -- the calls it
issues, the results it carries, its reasoning or thinking blocks, and whether
one of them is signed -- so the relational checks below are written once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ._canon import canonical_key

__all__ = [
    "Turn",
    "turns",
    "batch_problems",
    "coupling_problems",
    "closure_problems",
    "pending_calls",
    "pending_problems",
    "complete_pending",
]

_METADATA_KEYS = frozenset({"cache_control"})
#: Anthropic blocks that are a model's reasoning (kept with the turn's tool_use).
_THINKING = ("thinking", "redacted_thinking")


def _key(obj: Any) -> str:
    return canonical_key(obj, _METADATA_KEYS)


def _short(obj: Any, limit: int = 100) -> str:
    text = json.dumps(obj, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Turn:
    """What one turn of a request holds (see :func:`turns`).

    Attributes
    ----------
    index : int
        Its position (message index; Responses: the index of its first item).
    role : str
        ``"assistant"``, ``"user"``, ``"tool"``, ``"system"`` (the wire role).
    key : str
        Its identity (canonical JSON of its content, wire metadata aside).
    calls : list of (str, str)
        ``(call id, identity of the call)`` for each call it issues, in order.
    results : list of str
        The call ids its tool results answer.
    reasoning : list of str
        The identities of its reasoning items or thinking blocks.
    signed : list of str
        The identities of those that are signed (a thinking ``signature``, a
        ``redacted_thinking`` block, a reasoning item's ``encrypted_content``).
    references : list of (str, str)
        Other ids it references, as ``(what, id)`` (server tool results, callers).
    defines : list of str
        Other ids it defines (server tool uses).
    """

    index: int
    role: str
    key: str
    calls: list[tuple[str, str]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signed: list[str] = field(default_factory=list)
    references: list[tuple[str, str]] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)


def _openai_turns(messages: Sequence[Any]) -> list[Turn]:
    out = []
    for i, m in enumerate(messages):
        t = Turn(i, str(m.get("role")), _key(m))
        for c in m.get("tool_calls") or ():
            if isinstance(c, Mapping):
                raw = c.get("function")
                fn: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
                t.calls.append((str(c.get("id")), _key([c.get("id"), fn.get("name"),
                                                        fn.get("arguments")])))
        if m.get("role") == "tool":
            t.results.append(str(m.get("tool_call_id")))
        out.append(t)
    return out


def _blocks(m: Mapping[str, Any]) -> list[Any]:
    c = m.get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}] if c else []
    return [b for b in c or () if isinstance(b, Mapping)]


def _anthropic_turns(request: Mapping[str, Any]) -> list[Turn]:
    out = []
    for i, m in enumerate(request.get("messages") or ()):
        if not isinstance(m, Mapping):
            continue
        blocks = _blocks(m)
        t = Turn(i, str(m.get("role")), _key({"role": m.get("role"), "content": blocks}))
        for b in blocks:
            kind = b.get("type")
            if kind == "tool_use":
                t.calls.append((str(b.get("id")), _key(b)))
                caller = b.get("caller")
                if isinstance(caller, Mapping) and caller.get("tool_id") is not None:
                    t.references.append(("tool_use caller", str(caller.get("tool_id"))))
            elif kind == "tool_result":
                t.results.append(str(b.get("tool_use_id")))
            elif kind in _THINKING:
                t.reasoning.append(_key(b))
                if kind == "redacted_thinking" or b.get("signature"):
                    t.signed.append(_key(b))
            elif kind in ("server_tool_use", "mcp_tool_use"):
                t.defines.append(str(b.get("id")))
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                t.references.append((kind, str(b.get("tool_use_id"))))
        out.append(t)
    return out


def turns(request: Any, protocol: str) -> list[Turn]:
    """The turns of ``request`` (:class:`Turn`), read leniently.

    Parameters
    ----------
    request : list or dict
        OpenAI messages, an Anthropic ``{"system", "messages"}`` document, or
        Responses input items.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list of Turn
        OpenAI and Anthropic: one per message. Responses: one per input item,
        except that a run of model output items (``reasoning``,
        ``function_call``, an assistant ``message``) is one turn, as the one
        response that produced it. Gemini: one per content (the parts of a
        model content are its calls, thoughts and signed parts).

    Raises
    ------
    TypeError
        If the request does not have its format's outer shape.
    """
    if protocol == "anthropic":
        if not isinstance(request, Mapping):
            raise TypeError("an Anthropic request must be an object")
        return _anthropic_turns(request)
    if protocol == "responses":
        from ._responses import responses_turns

        return responses_turns(request)
    if protocol == "gemini":
        from ._gemini import gemini_turns

        return gemini_turns(request)
    if not isinstance(request, (list, tuple)) or not all(isinstance(m, Mapping) for m in request):
        raise TypeError("OpenAI messages must be a list of objects")
    return _openai_turns(request)


#: The turns of the requests being checked, while :func:`memo_turns` is active
#: (per thread): the batch, coupling, closure and pending checks of one output read
#: the same two requests, which nothing changes meanwhile.
_MEMO = threading.local()


@contextmanager
def memo_turns() -> Iterator[None]:
    """Within the block, :func:`_safe_turns` reads each request once (by identity;
    the caller promises not to change a request inside the block)."""
    previous = getattr(_MEMO, "cache", None)
    _MEMO.cache = {}
    try:
        yield
    finally:
        _MEMO.cache = previous


def _safe_turns(request: Any, protocol: str) -> list[Turn] | None:
    cache = getattr(_MEMO, "cache", None)
    if cache is not None:
        hit = cache.get((id(request), protocol))
        if hit is not None and hit[0] is request:
            return hit[1]  # type: ignore[no-any-return]
    try:
        got: list[Turn] | None = turns(request, protocol)
    except (TypeError, AttributeError):
        got = None  # a malformed request: the protocol check says why
    if cache is not None:
        cache[(id(request), protocol)] = (request, got)  # the request kept: its id stays its
    return got


# ----------------------------------------------------------------- batch


def batch_problems(conversation: Any, output: Any, protocol: str = "openai") -> list[str]:
    """The ``batch`` invariant: no output turn holds some of an input batch's
    calls without the others.

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.

    Returns
    -------
    list of str
        One problem per split batch, ``[]`` when every batch is whole or gone.
    """
    src = _safe_turns(conversation, protocol) or []
    got = _safe_turns(output, protocol)
    if got is None:
        return []
    batches = [frozenset(k for _, k in t.calls) for t in src if t.calls]
    problems = []
    for t in got:
        if not t.calls:
            continue
        kept = frozenset(k for _, k in t.calls)
        if kept in batches:
            continue
        whole = next((b for b in batches if kept < b), None)
        if whole is not None:
            ids = [cid for cid, _ in t.calls]
            problems.append(f"turn {t.index} keeps {len(ids)} of the {len(whole)} calls of a "
                            f"parallel batch ({ids}) without the others")
    return problems


# ----------------------------------------------------------------- coupling


def coupling_problems(conversation: Any, output: Any, protocol: str = "openai") -> list[str]:
    """The ``coupling`` invariant: a kept call keeps the reasoning items or
    thinking blocks that preceded it in its turn, and a signed block is kept
    only inside its turn exactly as the input had it.

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.

    Returns
    -------
    list of str
        The problems, ``[]`` when the invariant holds.
    """
    src = _safe_turns(conversation, protocol) or []
    got = _safe_turns(output, protocol)
    if got is None:
        return []
    problems = []
    for t in got:
        if t.calls:
            kept = {k for _, k in t.calls}
            # the input turn it is (calls may look alike across turns, e.g.
            # Gemini calls without ids), else one whose calls it keeps some of
            home = next((s for s in src if s.key == t.key), None) or next(
                (s for s in src if s.calls and kept <= {k for _, k in s.calls}), None)
            if home is not None and home.reasoning and not set(home.reasoning) <= set(t.reasoning):
                ids = [cid for cid, _ in t.calls]
                problems.append(f"turn {t.index} keeps the calls {ids} without the reasoning "
                                f"that preceded them ({len(home.reasoning)} reasoning item(s) or "
                                "thinking block(s) of their turn)")
        for s in t.signed:
            homes = [h for h in src if s in h.signed]
            if homes and not any(h.key == t.key for h in homes):
                problems.append(f"turn {t.index} keeps a signed reasoning or thinking block "
                                "whose turn was rewritten (the signature binds it to the turn "
                                "that produced it)")
                break
    return problems


# ----------------------------------------------------------------- closure


def closure_problems(output: Any, protocol: str = "openai") -> list[str]:
    """The ``closure`` invariant: every id ``output`` references is defined in it.

    A tool result's call id names a call of the request; an Anthropic server
    tool result's ``tool_use_id`` and a ``tool_use`` block's ``caller.tool_id``
    name a ``server_tool_use`` of the request.

    Parameters
    ----------
    output : list or dict
        The request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list of str
        One problem per undefined reference, ``[]`` when all are defined.
    """
    got = _safe_turns(output, protocol)
    if got is None:
        return []
    calls = {cid for t in got for cid, _ in t.calls}
    servers = {d for t in got for d in t.defines}
    problems = []
    for t in got:
        for cid in t.results:
            if cid not in calls:
                problems.append(f"turn {t.index}: reference closure broken, the result for call "
                                f"{_short(cid, 60)} names no call of the request")
        for what, rid in t.references:
            if rid not in servers:
                problems.append(f"turn {t.index}: reference closure broken, the {what} names "
                                f"{_short(rid, 60)}, no server_tool_use of the request")
    return problems


# ----------------------------------------------------------------- pending


def pending_calls(conversation: Any, protocol: str = "openai") -> list[str]:
    """The ids of the pending calls of ``conversation``: those of its last turn
    when that turn issues calls no later turn answers (the agent waits for
    their results while the manager runs).

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.

    Returns
    -------
    list of str
        The pending call ids, in order (``[]``: none).
    """
    got = _safe_turns(conversation, protocol)
    if not got or got[-1].role != "assistant" or not got[-1].calls:
        return []
    return [cid for cid, _ in got[-1].calls]


def _pending_turn(conversation: Any, protocol: str) -> Turn | None:
    got = _safe_turns(conversation, protocol)
    if not got or got[-1].role != "assistant" or not got[-1].calls:
        return None
    return got[-1]


def pending_problems(
    conversation: Any,
    output: Any,
    protocol: str = "openai",
    *,
    placeholder: Callable[[Any], Sequence[str] | None] | None = None,
) -> list[str]:
    """The ``pending`` invariant: the input's pending calls (:func:`pending_calls`)
    are in the request, in their turn exactly as the input had it, and that
    turn is not declared a placeholder or summary. What answers them in the
    request is judged by the other checks: nothing (the harness appends the
    result when it arrives), or a stand-in the manager declares (a "no result
    yet" stub); an undeclared invented result is a fidelity break.

    Parameters
    ----------
    conversation : list or dict
        The manager's input.
    output : list or dict
        Its request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of both.
    placeholder : callable, optional
        The manager's declarations (a pending call declared a placeholder was
        archived or summarised).

    Returns
    -------
    list of str
        The problem, ``[]`` when the invariant holds or nothing is pending.
    """
    pend = _pending_turn(conversation, protocol)
    if pend is None:
        return []
    got = _safe_turns(output, protocol)
    if got is None:
        return []
    ids = [cid for cid, _ in pend.calls]
    home = next((t for t in got if t.key == pend.key), None)
    if home is None:
        kept = {cid for t in got for cid, _ in t.calls} & set(ids)
        how = "altered" if kept else "evicted or summarised"
        return [f"the pending call(s) {ids} (not answered yet) are not in the request in their "
                f"turn, exactly: {how} before their results arrived"]
    if placeholder is not None:
        if protocol == "anthropic":
            msg = (output.get("messages") or [])[home.index]
            units: list[Any] = [{"role": msg.get("role"), "block": b} for b in _blocks(msg)]
        elif protocol == "responses":
            from ._responses import turn_items

            units = turn_items(output, home.index)
        elif protocol == "gemini":
            content = output["contents"][home.index]
            units = [{"role": content.get("role"), "part": p} for p in content["parts"]]
        else:
            units = [output[home.index]]
        if any(placeholder(u) is not None for u in units):
            return [f"the pending call(s) {ids} are declared a placeholder or summary (archived "
                    "before their results arrived)"]
    return []


def complete_pending(output: Any, protocol: str, pending: Sequence[str]) -> Any:
    """``output`` with answers appended for its trailing ``pending`` calls: the
    request the provider receives once their results arrive (which the
    protocol checks judge). Unchanged when its last turn is not those calls.

    Parameters
    ----------
    output : list or dict
        The manager's request.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        Its wire format.
    pending : sequence of str
        The input's pending call ids (:func:`pending_calls`).

    Returns
    -------
    list or dict
        The completed request (a new object; ``output`` is not changed).

    Raises
    ------
    DomainError
        ``protocol`` is not one of the four wire formats, or ``pending`` is not a
        sequence of call ids (str).
    """
    from vistalab._core import DomainError

    if not isinstance(protocol, str) \
            or protocol not in ("openai", "anthropic", "responses", "gemini"):
        raise DomainError("protocol", protocol, "must be 'openai', 'anthropic', "
                          "'responses' or 'gemini'", "pass the request's wire format")
    if isinstance(pending, (str, bytes)) or not isinstance(pending, (list, tuple)) \
            or not all(isinstance(c, str) for c in pending):
        raise DomainError("pending", pending, "must be a list of call ids (str)",
                          "pass pending_calls(conversation, protocol)")
    if not pending:
        return output
    got = _safe_turns(output, protocol)
    if not got or got[-1].role != "assistant" or [c for c, _ in got[-1].calls] != list(pending):
        return output
    if protocol == "anthropic":
        answers = [{"type": "tool_result", "tool_use_id": cid, "content": "(result)"}
                   for cid in pending]
        return {**output, "messages": [*output["messages"],
                                       {"role": "user", "content": answers}]}
    if protocol == "responses":
        return [*output, *({"type": "function_call_output", "call_id": cid,
                            "output": "(result)"} for cid in pending)]
    if protocol == "gemini":
        from ._gemini import gemini_complete

        return gemini_complete(output, pending)
    return [*output, *({"role": "tool", "tool_call_id": cid, "content": "(result)"}
                       for cid in pending)]
