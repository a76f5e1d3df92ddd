"""The Gemini ``generateContent`` format (``protocol="gemini"``): the generator's
rendering, the request checker, the units and turns the checks read, the
counted projection, and the shrinker's smaller conversations.

A request is ``{"systemInstruction": {"parts": [...]}, "contents": [...]}``
(Gemini API reference, ``GenerateContentRequest`` and ``Content``,
ai.google.dev/api/generate-content and ai.google.dev/api/caching#Content): each
content has ``role`` ``"user"`` or ``"model"`` and a list of parts; a part holds
``text`` (``thought: true`` for a thought summary), ``inlineData``,
``fileData``, ``functionCall`` (``name``, ``args``, optional ``id``) or
``functionResponse`` (``name``, ``response``, optional ``id``), and may carry a
``thoughtSignature`` (Gemini API, 'Thought signatures',
ai.google.dev/gemini-api/docs/thought-signatures).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "DOCS",
    "render_gemini",
    "gemini_problems",
    "gemini_turns",
    "gemini_units",
    "to_chat",
    "gemini_cut_points",
    "gemini_tail",
    "gemini_smaller",
    "gemini_complete",
]

#: The documentation pages the checks cite.
DOCS = {
    "content": "Gemini API reference, Content (ai.google.dev/api/caching#Content: 'role: "
               "... Must be either 'user' or 'model''; 'parts[]: Ordered Parts that "
               "constitute a single message')",
    "function-calling": "Gemini API, Function calling (ai.google.dev/gemini-api/docs/"
                        "function-calling: the model's functionCall parts are answered by "
                        "functionResponse parts in the next user content, one per call, "
                        "matched by id when the call has one)",
    "count-error": "the Gemini API's 400 'Please ensure that the number of function response "
                   "parts is equal to the number of function call parts of the function "
                   "call turn.'",
    "signatures": "Gemini API, Thought signatures (ai.google.dev/gemini-api/docs/thought-"
                  "signatures: 'pass it back exactly as received'; 'return this signature in "
                  "the exact part where it was received'; with parallel calls only the first "
                  "functionCall part carries it; Gemini 3 answers 4xx when one of the current "
                  "turn is missing)",
    "tokens": "Gemini API, Understand and count tokens (ai.google.dev/gemini-api/docs/tokens: "
              "an image with both dimensions <= 384 pixels counts 258 tokens, a larger one is "
              "tiled into 768x768 tiles of 258 tokens each)",
}
_DATA_KEYS = ("text", "inlineData", "fileData", "functionCall", "functionResponse",
              "executableCode", "codeExecutionResult")
_PNG = "iVBORw0KGgo="


def _short(obj: Any, limit: int = 80) -> str:
    text = json.dumps(obj, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _key(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=repr)


def _visible(text: str | None) -> str | None:
    return text if text and text.strip() else None


# ----------------------------------------------------------------- generator


def render_gemini(conv: Mapping[str, Any], with_ids: bool) -> dict[str, Any]:
    """One abstract conversation of the strategies as a Gemini request, as a
    Gemini agent sends it: parallel ``functionCall`` parts in one model content
    (the same function name used again across and within steps), answered by
    one user content of ``functionResponse`` parts in the calls' order; call
    ``id`` s on every call and response or on none (``with_ids``); a step with
    thinking opens with a ``thought: true`` part and carries a
    ``thoughtSignature`` on its first ``functionCall`` part (the only one in a
    parallel batch that has it), a step with hidden thinking only the
    signature; a round's final text answer after thinking carries one on its
    last part; images as ``inlineData``; a pending call at the end.

    Parameters
    ----------
    conv : dict
        An abstract conversation of :func:`~._strategies._abstract`.
    with_ids : bool
        Whether calls and responses carry ids.

    Returns
    -------
    dict
        ``{"systemInstruction", "contents"}`` (``systemInstruction`` only when
        the conversation has a system prompt).
    """
    contents: list[dict[str, Any]] = []
    n_calls = n_sigs = 0
    for rd in conv["rounds"]:
        user = _visible(rd["user"]) or "ok"
        if rd["parts"]:
            parts: list[dict[str, Any]] = [{"text": w} for w in user.split(" ", 1) if _visible(w)]
            if rd["image"]:
                parts.append({"inlineData": {"mimeType": "image/png", "data": _PNG}})
            contents.append({"role": "user", "parts": parts or [{"text": user}]})
        else:
            contents.append({"role": "user", "parts": [{"text": user}]})
        steps = [*rd["steps"], rd["pending"]] if rd.get("pending") else rd["steps"]
        thought = False
        for n_step, step in enumerate(steps):
            mparts: list[dict[str, Any]] = []
            if step.get("think") == "thinking":
                mparts.append({"text": "Plan: " + (_visible(step["text"]) or "call the tools"),
                               "thought": True})
            if _visible(step["text"]):
                mparts.append({"text": step["text"]})
            answers: list[dict[str, Any]] = []
            for k, c in enumerate(step["calls"]):
                fc: dict[str, Any] = {"name": c["name"], "args": dict(c["args"])}
                fr: dict[str, Any] = {"name": c["name"], "response": (
                    {"error": c["result"]} if c["error"] else {"result": c["result"]})}
                if with_ids:
                    fc["id"] = fr["id"] = f"fc-{n_calls:03d}"
                n_calls += 1
                part: dict[str, Any] = {"functionCall": fc}
                if k == 0 and step.get("think"):
                    part["thoughtSignature"] = f"CiQB{n_sigs:04d}sig"
                    n_sigs += 1
                mparts.append(part)
                answers.append({"functionResponse": fr})
            thought = bool(step.get("think"))
            contents.append({"role": "model", "parts": mparts})
            if n_step < len(rd["steps"]):  # else the calls are pending
                contents.append({"role": "user", "parts": answers})
        if rd["answer"] is not None:
            ans: dict[str, Any] = {"text": _visible(rd["answer"]) or "ok"}
            if thought:
                ans["thoughtSignature"] = f"CiQB{n_sigs:04d}sig"
                n_sigs += 1
            contents.append({"role": "model", "parts": [ans]})
    out: dict[str, Any] = {"contents": contents}
    system = _visible(conv["system"])
    if system is not None:
        out["systemInstruction"] = {"parts": [{"text": system}]}
    return out


# ----------------------------------------------------------------- checker


def _kind(p: Mapping[str, Any]) -> str | None:
    kinds = [k for k in _DATA_KEYS if k in p]
    if len(kinds) == 1:
        return kinds[0]
    if not kinds and "thoughtSignature" in p:
        return "signature"  # a bare signature part (streamed responses end with one)
    return None


def _part_shape(i: int, j: int, role: str, p: Any) -> str | None:
    where = f"content {i} part {j}"
    if not isinstance(p, Mapping):
        return f"{where} is not an object"
    kind = _kind(p)
    if kind is None:
        return f"{where}: a part holds exactly one of {', '.join(_DATA_KEYS[:5])}"
    if kind == "text" and not isinstance(p["text"], str):
        return f"{where}: text must be a string"
    if kind == "inlineData" and not (isinstance(p["inlineData"], Mapping) and isinstance(
            p["inlineData"].get("data"), str) and isinstance(p["inlineData"].get("mimeType"),
                                                             str)):
        return f"{where}: inlineData needs a string mimeType and base64 data"
    if kind == "functionCall":
        fc = p["functionCall"]
        if role != "model":
            return f"{where}: functionCall in a {role} content (only the model calls)"
        if not isinstance(fc, Mapping) or not isinstance(fc.get("name"), str):
            return f"{where}: functionCall needs a string name"
        if not isinstance(fc.get("args", {}), Mapping):
            return f"{where}: functionCall args must be an object"
    if kind == "functionResponse":
        fr = p["functionResponse"]
        if role != "user":
            return f"{where}: functionResponse in a {role} content (results are user parts)"
        if not isinstance(fr, Mapping) or not isinstance(fr.get("name"), str):
            return f"{where}: functionResponse needs a string name"
        if not isinstance(fr.get("response"), Mapping):
            return f"{where}: functionResponse response must be an object"
    if "thoughtSignature" in p and not isinstance(p["thoughtSignature"], str):
        return f"{where}: thoughtSignature must be a string"
    return None


def _shape(request: Any) -> list[str]:
    if not isinstance(request, Mapping):
        return [f"the output must be a {{'systemInstruction', 'contents'}} object, got "
                f"{type(request).__name__}"]
    contents = request.get("contents")
    if not isinstance(contents, (list, tuple)):
        return ["the output's 'contents' must be a list of content objects"]
    if not contents:
        return ["the request has no messages (Gemini rejects empty contents)"]
    problems = []
    si = request.get("systemInstruction")
    if si is not None and not (isinstance(si, Mapping) and isinstance(si.get("parts"), list)
                               and all(isinstance(p, Mapping) and isinstance(p.get("text"), str)
                                       for p in si["parts"])):
        problems.append("systemInstruction must be a content whose parts are text parts")
    for i, c in enumerate(contents):
        if not isinstance(c, Mapping):
            problems.append(f"content {i} is not an object")
            continue
        role = c.get("role")
        if role not in ("user", "model"):
            problems.append(f"content {i}: role {_short(role, 30)} is not 'user' or 'model'")
            continue
        parts = c.get("parts")
        if not isinstance(parts, list) or not parts:
            problems.append(f"content {i}: parts must be a non-empty list")
            continue
        problems += [q for j, p in enumerate(parts) if (q := _part_shape(i, j, role, p))]
    return problems


def _calls_of(c: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p["functionCall"] for p in c.get("parts") or () if "functionCall" in p]


def _responses_of(c: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p["functionResponse"] for p in c.get("parts") or () if "functionResponse" in p]


def _tag(obj: Mapping[str, Any]) -> str:
    """How a call or a response is matched: its id, else its function name."""
    return f"id {obj['id']}" if isinstance(obj.get("id"), str) else f"name {obj.get('name')}"


def _match(fr: Mapping[str, Any], asked: Sequence[Mapping[str, Any]],
           left: Sequence[str] | None) -> str | None:
    """The tag of the call ``fr`` answers among ``asked`` (those in ``left``
    still open; all when ``left`` is None): the call with its id, else the
    first open call with its name."""
    tags = [_tag(fc) for fc in asked]
    open_tags = tags if left is None else list(left)
    if isinstance(fr.get("id"), str):
        tag = f"id {fr['id']}"
        return tag if tag in open_tags else None
    for fc, tag in zip(asked, tags, strict=True):
        if fc.get("name") == fr.get("name") and tag in open_tags:
            return tag
    return None


def gemini_problems(request: Any, *, strict: bool = False) -> list[str]:
    """The Gemini API's documented rules for a ``generateContent`` request.

    Shape (:data:`DOCS` 'content'): ``contents`` a non-empty list; each content
    has role ``user`` or ``model`` and a non-empty list of parts, each part one
    data field; ``functionCall`` parts only in model contents (a ``name``, an
    object ``args``), ``functionResponse`` parts only in user contents (a
    ``name``, an object ``response``); ``systemInstruction`` of text parts.
    Function calling (:data:`DOCS` 'function-calling', 'count-error'): the
    content after a model content with functionCall parts is a user content
    with exactly one functionResponse part per call, each answering one of
    those calls (by ``id`` when the call has one, else by ``name``); a
    functionResponse anywhere else answers no call; call ids are unique.
    ``strict`` adds: the first content is a user content, the request ends with
    a user content, and results come in the calls' order.

    Parameters
    ----------
    request : dict
        The request.
    strict : bool
        Also check the stricter rules.

    Returns
    -------
    list of str
        The problems, ``[]`` when the request is valid.
    """
    problems = _shape(request)
    if problems:
        return problems
    contents = list(request["contents"])
    seen: set[str] = set()
    for i, c in enumerate(contents):
        for fc in _calls_of(c):
            fid = fc.get("id")
            if isinstance(fid, str):
                if fid in seen:
                    problems.append(f"content {i}: duplicate call id {_short(fid, 40)}")
                seen.add(fid)
    for i, c in enumerate(contents):
        calls = _calls_of(c)
        responses = _responses_of(c)
        prev = contents[i - 1] if i else None
        if responses:
            asked = _calls_of(prev) if prev is not None and prev.get("role") == "model" else []
            if not asked:
                problems.append(f"content {i}: functionResponse {_tag(responses[0])} answers "
                                "no functionCall of the model content before it")
            else:
                left = [_tag(fc) for fc in asked]
                for fr in responses:
                    tag = _match(fr, asked, left)
                    if tag is not None:
                        left.remove(tag)
                    else:
                        problems.append(f"content {i}: functionResponse {_tag(fr)} answers no "
                                        f"functionCall of content {i - 1} (or one twice)")
                if left:
                    problems.append(f"content {i}: the calls {left} of content {i - 1} have no "
                                    "functionResponse (the number of function response parts "
                                    "must equal the number of function call parts)")
                if strict and not problems:
                    order = [_tag(fc) for fc in asked]
                    got = [_match(fr, asked, None) or _tag(fr) for fr in responses]
                    if got != order[: len(got)]:
                        problems.append(f"strict: the results after content {i - 1} answer "
                                        f"{got}, not the calls in their order {order}")
        if calls:
            nxt = contents[i + 1] if i + 1 < len(contents) else None
            if nxt is None:
                problems.append(f"end of request: calls {[_tag(fc) for fc in calls]} were never "
                                "answered")
            elif nxt.get("role") != "user" or not _responses_of(nxt):
                problems.append(f"content {i + 1}: {nxt.get('role')} content before the calls "
                                f"{[_tag(fc) for fc in calls]} were answered")
    if strict:
        if contents[0].get("role") != "user":
            problems.append("strict: the first non-system message (0) is model, not user")
        if contents[-1].get("role") != "user":
            problems.append("strict: the request ends with a model content")
    return problems


# ----------------------------------------------------------------- units, turns


def _doc_iv(request: Any) -> Mapping[str, Any]:
    if not isinstance(request, Mapping) or not isinstance(request.get("contents"), (list, tuple)):
        raise TypeError("a Gemini request must be a {'systemInstruction', 'contents'} object")
    if not all(isinstance(c, Mapping) and isinstance(c.get("parts", []), list)
               for c in request["contents"]):
        raise TypeError("Gemini contents must be objects with a parts list")
    return request


def gemini_units(request: Any) -> list[dict[str, Any]]:
    """The units fidelity compares: each part as ``{"role", "part"}`` (the
    systemInstruction's parts with role ``"system"``).

    Raises
    ------
    TypeError
        If the request is not a Gemini request.
    """
    doc = _doc_iv(request)
    out: list[dict[str, Any]] = []
    si = doc.get("systemInstruction")
    if isinstance(si, Mapping):
        out += [{"role": "system", "part": p} for p in si.get("parts") or ()]
    for c in doc["contents"]:
        out += [{"role": c.get("role"), "part": p} for p in c.get("parts") or ()]
    return out


def gemini_turns(request: Any) -> list[Any]:
    """The turns of a Gemini request (:class:`~._shapes.Turn`), one per content:
    a model content is an ``"assistant"`` turn whose calls are its functionCall
    parts (matched by id, else by name), and whose reasoning and signed blocks
    are the parts carrying a ``thoughtSignature`` (the docs require those back
    as received; ``thought: true`` summaries are not required); a user content
    of functionResponse parts only is a ``"tool"`` turn."""
    from ._shapes import Turn

    doc = _doc_iv(request)
    out = []
    asked: list[Mapping[str, Any]] = []
    for i, c in enumerate(doc["contents"]):
        parts = [p for p in c.get("parts") or () if isinstance(p, Mapping)]
        left = [_tag(fc) for fc in asked]
        role = "assistant" if c.get("role") == "model" else (
            "tool" if parts and all("functionResponse" in p for p in parts) else "user")
        t = Turn(i, role, _key({"role": c.get("role"), "parts": parts}))
        for p in parts:
            fc = p.get("functionCall")
            if isinstance(fc, Mapping):
                t.calls.append((_tag(fc), _key([fc.get("id"), fc.get("name"), fc.get("args")])))
            fr = p.get("functionResponse")
            if isinstance(fr, Mapping):
                tag = _match(fr, asked, left) if left else None
                if tag is not None:
                    left.remove(tag)
                t.results.append(tag or _tag(fr))
            # the documented rule binds the signature, not thought summaries:
            # only signed parts are the reasoning a kept call must keep
            if "thoughtSignature" in p:
                t.reasoning.append(_key(p))
                t.signed.append(_key(p))
        asked = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), Mapping)
                 ] if c.get("role") == "model" else []
        out.append(t)
    return out


def gemini_complete(request: Any, pending: Sequence[str]) -> Any:
    """``request`` with one user content answering its trailing ``pending``
    calls (what Gemini receives once their results arrive)."""
    doc = _doc_iv(request)
    calls = _calls_of(doc["contents"][-1]) if doc["contents"] else []
    answers = []
    for fc in calls:
        fr: dict[str, Any] = {"name": fc.get("name"), "response": {"result": "(result)"}}
        if isinstance(fc.get("id"), str):
            fr["id"] = fc["id"]
        answers.append({"functionResponse": fr})
    return {**doc, "contents": [*doc["contents"], {"role": "user", "parts": answers}]}


# ----------------------------------------------------------------- counting


def to_chat(request: Any) -> list[dict[str, Any]]:
    """The OpenAI messages the suite counts for a Gemini request: the engine's
    projection (:data:`vistalab.workspace.GEMINI_PROJECTION_RULES`), so the same
    conversation costs the same here and in the workspace. Thought signatures
    are opaque and not counted; an ``inlineData`` image counts as its stand-in
    line, not at the per-image price Gemini documents (:data:`DOCS` 'tokens':
    that price depends on the image's pixel size, which the counter does not
    read)."""
    from vistalab.workspace import gemini_to_openai

    doc = _doc_iv(request)
    return gemini_to_openai(list(doc["contents"]),
                            system_instruction=doc.get("systemInstruction"))


# ----------------------------------------------------------------- tails, shrinking


def _is_result_turn(c: Mapping[str, Any]) -> bool:
    parts = c.get("parts") or ()
    return bool(parts) and all(isinstance(p, Mapping) and "functionResponse" in p for p in parts)


def gemini_cut_points(conversation: Mapping[str, Any]) -> list[int]:
    """Indexes of the user contents that are not function results (where a
    valid tail may start)."""
    return [i for i, c in enumerate(conversation["contents"])
            if c.get("role") == "user" and not _is_result_turn(c)]


def gemini_tail(conversation: Mapping[str, Any], i: int, keep_system: bool) -> dict[str, Any]:
    """The contents from ``i`` on, with the system instruction or without."""
    out: dict[str, Any] = {"contents": list(conversation["contents"][i:])}
    if keep_system and conversation.get("systemInstruction") is not None:
        out["systemInstruction"] = conversation["systemInstruction"]
    return out


def gemini_smaller(conversation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every conversation one deletion smaller that the strategies could also
    have generated: without the system instruction, without one round (not the
    last), without one tool-call step, or without one of several parallel calls
    and its response."""
    import copy

    contents = list(conversation["contents"])
    si = conversation.get("systemInstruction")

    def wrap(new: list[Any], system: Any = si) -> dict[str, Any]:
        out: dict[str, Any] = {"contents": new}
        if system is not None:
            out["systemInstruction"] = system
        return out

    found = []
    if si is not None:
        found.append(wrap(contents, None))
    starts = gemini_cut_points(conversation)
    for r in range(len(starts) - 1):
        found.append(wrap(contents[: starts[r]] + contents[starts[r + 1]:]))
    for i, c in enumerate(contents):
        calls = _calls_of(c) if c.get("role") == "model" else []
        if not calls:
            continue
        answered = i + 1 < len(contents) and _is_result_turn(contents[i + 1])
        found.append(wrap(contents[:i] + contents[i + (2 if answered else 1):]))
        if len(calls) > 1:
            for k in range(len(calls)):
                new = copy.deepcopy(contents)
                idx = [j for j, p in enumerate(new[i]["parts"]) if "functionCall" in p]
                sig = new[i]["parts"][idx[k]].get("thoughtSignature")
                del new[i]["parts"][idx[k]]
                if k == 0 and sig is not None:  # the signature stays on the first call
                    new[i]["parts"][idx[1] - 1]["thoughtSignature"] = sig
                if answered:
                    del new[i + 1]["parts"][k]
                found.append(wrap(new))
    return found
