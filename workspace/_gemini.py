"""The Gemini ``generateContent`` format in and out of the workspace.

A Gemini request is ``{"systemInstruction": {"parts": [...]}, "contents": [...]}``;
each content has ``role`` ``"user"`` or ``"model"`` and a list of ``parts``
(Gemini API reference, ``Content`` and ``Part``, ai.google.dev/api/caching#Content).
A part holds one of ``text`` (``thought: true`` marks a thought summary),
``inlineData`` (``mimeType``, base64 ``data``), ``fileData``, ``functionCall``
(``name``, ``args`` an object, optional ``id``) or ``functionResponse``
(``name``, ``response`` an object, optional ``id``); any part may carry an
opaque ``thoughtSignature`` that must be passed back exactly as received, on
the part it came with (Gemini API, 'Thought signatures',
ai.google.dev/gemini-api/docs/thought-signatures).

As for Anthropic Messages, the engine stores and counts OpenAI-form messages:
a Gemini content is *projected* onto them by fixed rules
(:data:`GEMINI_PROJECTION_RULES`), and the workspace's codec remembers each
projected message's original parts, so a message that is still visible renders
back byte-identical (its thought signatures on the parts they came with) and an
archived one renders as its handle text. The originals live in the workspace's
wire table, so they survive :meth:`Workspace.save` / ``load``, ``fork`` and the
guard like the Anthropic ones.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._errors import TraceError, WorkspaceArgumentError
from ._formats import AnthropicCodec, _key
from ._frozen import thaw

__all__ = [
    "GEMINI_PROJECTION_RULES",
    "GeminiIds",
    "gemini_request",
    "gemini_tools",
    "gemini_to_openai",
    "openai_to_gemini",
    "register_gemini",
    "render_gemini",
]

#: The projection of Gemini content onto the engine's OpenAI messages: what the
#: engine stores and counts for each part.
GEMINI_PROJECTION_RULES: dict[str, str] = {
    "systemInstruction": "one system message; its text parts joined by a blank line",
    "text": "the text itself; several parts of one content joined by a blank line",
    "thought": "'<thought>\\n' + text + '\\n</thought>' in the assistant content",
    "thoughtSignature": "not counted (opaque); kept by the codec on the part it came with",
    "inlineData": "'[image: MIME, N bytes base64, sha256 HEX12]' ('[file: ...]' for other "
    "MIME types; the data is kept by the codec)",
    "fileData": "'[file: URI]'",
    "functionCall": "an OpenAI tool call; arguments = compact JSON of args; id = the part's "
    "id, or 'gemini-fc-N' when the call has none",
    "functionResponse": "an OpenAI tool message answering the call with the same id (or, "
    "without ids, the oldest open call of that name); content = the result text when "
    "response is {'result': TEXT}, else the compact JSON of response",
}
_JOIN = "\n\n"
#: Call ids the projection makes up for calls without one (never sent to Gemini).
SYNTHETIC_PREFIX = "gemini-fc-"
_DATA_KEYS = ("text", "inlineData", "fileData", "functionCall", "functionResponse")
#: Codec keys of Gemini originals (apart from the Anthropic ones).
_CODEC_PREFIX = "gemini:"
#: The codec key of the workspace's Gemini call ids (GeminiIds state), so they
#: are saved in a snapshot and copied by a fork with the originals.
_IDS_KEY = "gemini-ids"


@dataclass
class GeminiIds:
    """The call ids of one Gemini conversation as it is registered: Gemini
    calls may come without ids (results are then matched by name and order),
    while the engine needs one per call.

    Attributes
    ----------
    made : int
        How many ids were made up so far (``gemini-fc-N``).
    open : list of (str, str)
        ``(id, name)`` of each call not answered yet, oldest first.
    """

    made: int = 0
    open: list[tuple[str, str]] = field(default_factory=list)

    def call(self, part_id: Any, name: str) -> str:
        """The id of a new call (its own, or a made-up one).

        Parameters
        ----------
        part_id : str or None
            The functionCall's ``id``, if it has one.
        name : str
            The function's name.

        Returns
        -------
        str
            The call id the engine registers.
        """
        if isinstance(part_id, str) and part_id:
            cid = part_id
        else:
            cid = f"{SYNTHETIC_PREFIX}{self.made}"
            self.made += 1
        self.open.append((cid, name))
        return cid

    def answer(self, part_id: Any, name: Any) -> str:
        """The id a functionResponse answers: its own id, else the oldest open
        call with its name (else a made-up id no call has: an orphan).

        Parameters
        ----------
        part_id : str or None
            The functionResponse's ``id``, if it has one.
        name : str
            The function's name.

        Returns
        -------
        str
            The call id of the tool message the engine registers.
        """
        if isinstance(part_id, str) and part_id:
            self.open = [(c, n) for c, n in self.open if c != part_id]
            return part_id
        for k, (cid, n) in enumerate(self.open):
            if n == name:
                del self.open[k]
                return cid
        self.made += 1
        return f"{SYNTHETIC_PREFIX}{self.made - 1}"


def _next_seq(codec: AnthropicCodec) -> int:
    """The registration number of the next Gemini original (one past the largest
    recorded; the table is read once per codec object, a loaded or forked one
    included)."""
    seq = getattr(codec, "_gemini_seq", None)
    if seq is None:
        seq = 1 + max((int(b.get("seq", -1)) for k, v in codec.originals.items()
                       if k.startswith(_CODEC_PREFIX) for b in v), default=-1)
    codec._gemini_seq = seq + 1  # type: ignore[attr-defined]
    return int(seq)


def _record(codec: AnthropicCodec | None, msg: Mapping[str, Any],
            parts: Sequence[Mapping[str, Any]]) -> None:
    """Remember ``parts`` behind ``msg``. Two contents may project onto the same
    message (two answers of the same text, one of them signed): each is kept
    as a variant numbered in registration order, and rendering picks for each
    message the next variant after the one before it (:func:`openai_to_gemini`)."""
    if codec is None:
        return
    seq = _next_seq(codec)
    # wrapped so the table stays a table of typed blocks (snapshots check it);
    # a content without parts leaves a marker
    variant = [{"type": "gemini_part", "seq": seq, "part": copy.deepcopy(dict(p))}
               for p in parts] or [{"type": "gemini_part", "seq": seq}]
    key = _CODEC_PREFIX + _key(msg)
    codec.originals[key] = [*codec.originals.get(key, ()), *variant]  # never mutated


def _variants(codec: AnthropicCodec | None, msg: Mapping[str, Any]
              ) -> list[tuple[int, list[dict[str, Any]]]]:
    """The recorded variants behind ``msg``: ``(seq, parts)``, oldest first."""
    if codec is None:
        return []
    out: dict[int, list[dict[str, Any]]] = {}
    for b in codec.originals.get(_CODEC_PREFIX + _key(msg), ()):
        parts = out.setdefault(int(b.get("seq", 0)), [])
        if "part" in b:
            parts.append(copy.deepcopy(b["part"]))
    return sorted(out.items())


def _json(obj: Any, where: str) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TraceError(None, f"{where}: must be plain JSON ({exc})") from None


def _project(p: Mapping[str, Any], where: str) -> str | None:
    """The counted text of one non-call part (None: nothing, e.g. a bare signature)."""
    if "text" in p:
        text = p["text"]
        if not isinstance(text, str):
            raise TraceError(None, f"{where}: text part without a string 'text'")
        return f"<thought>\n{text}\n</thought>" if p.get("thought") is True else text
    if "inlineData" in p:
        d = p["inlineData"]
        if not isinstance(d, Mapping) or not isinstance(d.get("data"), str):
            raise TraceError(None, f"{where}: inlineData needs a string 'data'")
        mime = str(d.get("mimeType", "?"))
        kind = "image" if mime.startswith("image/") else "file"
        digest = hashlib.sha256(d["data"].encode("ascii", "replace")).hexdigest()[:12]
        return f"[{kind}: {mime}, {len(d['data'])} bytes base64, sha256 {digest}]"
    if "fileData" in p:
        d = p["fileData"]
        uri = d.get("fileUri") if isinstance(d, Mapping) else None
        return f"[file: {uri}]"
    if not any(k in p for k in _DATA_KEYS):
        return None
    raise TraceError(None, f"{where}: unexpected part {sorted(p)!r:.80}")


def _response_text(resp: Any) -> str:
    if isinstance(resp, Mapping) and set(resp) == {"result"} and isinstance(resp["result"], str):
        return resp["result"]
    return _json(resp, "functionResponse response")


def gemini_to_openai(
    contents: Sequence[Mapping[str, Any]],
    *,
    system_instruction: Any = None,
    codec: AnthropicCodec | None = None,
    ids: GeminiIds | None = None,
) -> list[dict[str, Any]]:
    """Project Gemini contents onto the engine's OpenAI chat messages.

    Parameters
    ----------
    contents : sequence of dict
        Gemini contents (``role`` user or model, ``parts``). A content with role
        ``"system"`` is a system prompt (how an adapter is handed
        ``systemInstruction``).
    system_instruction : dict, optional
        The request's ``systemInstruction`` (``{"parts": [text parts]}``).
    codec : AnthropicCodec, optional
        The workspace's codec: records each projected message's original parts.
    ids : GeminiIds, optional
        The conversation's call ids so far (pass the same object for every
        content of one conversation registered one at a time).

    Returns
    -------
    list of dict
        OpenAI messages: a model content becomes one assistant message (its
        functionCall parts its ``tool_calls``); a user content's functionResponse
        parts become ``tool`` messages (in part order), followed by one user
        message for its other parts.

    Raises
    ------
    TraceError
        Naming the content and part.
    """
    ids = GeminiIds() if ids is None else ids
    out: list[dict[str, Any]] = []
    items = list(contents)
    if system_instruction is not None:
        items.insert(0, {"role": "system", **(dict(system_instruction)
                                                if isinstance(system_instruction, Mapping)
                                                else {"parts": system_instruction})})
    for i, c in enumerate(items):
        if not isinstance(c, Mapping):
            raise TraceError(i, f"must be a content object, got {type(c).__name__}")
        role, parts = c.get("role", "user"), c.get("parts")
        if isinstance(parts, str):
            parts = [{"text": parts}]
        if not isinstance(parts, list) or not all(isinstance(p, Mapping) for p in parts):
            raise TraceError(i, "parts must be a list of part objects")
        where = f"content {i}"
        if role == "system":
            stexts = [_project(p, f"{where} part {j}") for j, p in enumerate(parts)]
            smsg = {"role": "system", "content": _JOIN.join(t for t in stexts if t is not None)}
            _record(codec, smsg, parts)
            out.append(smsg)
        elif role == "model":
            calls: list[dict[str, Any]] = []
            texts: list[str] = []
            for j, p in enumerate(parts):
                if "functionCall" in p:
                    fc = p["functionCall"]
                    if not isinstance(fc, Mapping) or not isinstance(fc.get("name"), str):
                        raise TraceError(i, f"part {j}: functionCall needs a string 'name'")
                    args = fc.get("args", {})
                    if not isinstance(args, Mapping):
                        raise TraceError(i, f"part {j}: functionCall 'args' must be an object")
                    cid = ids.call(fc.get("id"), fc["name"])
                    calls.append({"id": cid, "type": "function", "function": {
                        "name": fc["name"], "arguments": _json(args, f"{where} part {j}")}})
                elif "functionResponse" in p:
                    raise TraceError(i, f"part {j}: functionResponse belongs in a user content")
                else:
                    t = _project(p, f"{where} part {j}")
                    if t is not None:
                        texts.append(t)
            msg: dict[str, Any] = {"role": "assistant",
                                   "content": _JOIN.join(texts) if texts else None}
            if calls:
                msg["tool_calls"] = calls
            elif msg["content"] is None:
                msg["content"] = ""
            _record(codec, msg, parts)
            out.append(msg)
        elif role == "user":
            others = []
            for j, p in enumerate(parts):
                if "functionResponse" in p:
                    fr = p["functionResponse"]
                    if not isinstance(fr, Mapping) or not isinstance(fr.get("name"), str):
                        raise TraceError(i, f"part {j}: functionResponse needs a string 'name'")
                    cid = ids.answer(fr.get("id"), fr["name"])
                    tmsg = {"role": "tool", "tool_call_id": cid,
                            "content": _response_text(fr.get("response", {}))}
                    _record(codec, tmsg, [p])
                    out.append(tmsg)
                elif "functionCall" in p:
                    raise TraceError(i, f"part {j}: functionCall belongs in a model content")
                else:
                    others.append(p)
            if others or not parts:
                utexts = [_project(p, f"{where} part {j}") for j, p in enumerate(others)]
                umsg = {"role": "user", "content": _JOIN.join(t for t in utexts if t is not None)}
                _record(codec, umsg, others)
                out.append(umsg)
        else:
            raise TraceError(i, f"has role {role!r}; Gemini contents are user or model")
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    from ._validate import _content_iv

    return str(_content_iv(content, "user"))


def openai_to_gemini(
    messages: Sequence[Mapping[str, Any]], *, codec: AnthropicCodec | None = None
) -> dict[str, Any]:
    """The engine's OpenAI messages as a Gemini request.

    A message whose original parts the codec recorded comes back as those
    parts (thought signatures included); any other message (the dashboard, a
    notice, an archive handle, a stub result) is written as Gemini parts:
    system messages before the first content form ``systemInstruction`` (a
    later one becomes a user content), each run of tool messages one user
    content of functionResponse parts (``response`` ``{"result": TEXT}``,
    the call's ``name``, and its ``id`` unless the projection made it up).

    Parameters
    ----------
    messages : sequence of dict
        OpenAI chat messages (a workspace rendering).
    codec : AnthropicCodec, optional
        The codec that recorded the Gemini originals.

    Returns
    -------
    dict
        ``{"contents": [...]}``, with ``systemInstruction`` when there is one.
    """
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    responses_open = False  # the last content holds functionResponse parts
    last = -1  # the registration number of the last original given back
    for m in messages:
        role = m.get("role")
        orig: list[dict[str, Any]] | None = None
        found = _variants(codec, m)
        if found:
            # messages render in registration order: the first variant after the
            # previous original (else the oldest: the earlier ones left)
            seq, orig = next(((q, v) for q, v in found if q > last), found[0])
            last = max(last, seq)
        if role == "system":
            parts = orig or [{"text": _text_of(m.get("content"))}]
            if not contents:
                system += parts
            else:
                contents.append({"role": "user", "parts": parts})
                responses_open = False
            continue
        if role == "tool":
            cid = str(m.get("tool_call_id"))
            if orig is None:
                fr: dict[str, Any] = {"name": names.get(cid, "tool"),
                                      "response": {"result": _text_of(m.get("content"))}}
                if not cid.startswith(SYNTHETIC_PREFIX):
                    fr["id"] = cid
                orig = [{"functionResponse": fr}]
            if responses_open:
                contents[-1]["parts"] += orig
            else:
                contents.append({"role": "user", "parts": orig})
                responses_open = True
            continue
        responses_open = False
        if role == "assistant":
            for c in m.get("tool_calls") or ():
                names[str(c.get("id"))] = str((c.get("function") or {}).get("name"))
            if orig is None:
                orig = []
                text = _text_of(m.get("content"))
                if text:
                    orig.append({"text": text})
                for c in m.get("tool_calls") or ():
                    fn = c.get("function") or {}
                    try:
                        args = json.loads(fn.get("arguments") or "{}")
                    except (TypeError, ValueError):
                        args = {"arguments": fn.get("arguments")}
                    fc: dict[str, Any] = {"name": fn.get("name"), "args": args
                                          if isinstance(args, dict) else {"value": args}}
                    if not str(c.get("id")).startswith(SYNTHETIC_PREFIX):
                        fc["id"] = c.get("id")
                    orig.append({"functionCall": fc})
                orig = orig or [{"text": text}]
            contents.append({"role": "model", "parts": orig})
        else:
            contents.append({"role": "user",
                             "parts": orig or [{"text": _text_of(m.get("content"))}]})
    out: dict[str, Any] = {"contents": contents}
    if system:
        out["systemInstruction"] = {"parts": system}
    return out


def _ws_iv(workspace: Any) -> Any:
    codec = getattr(workspace, "_codec", None)
    if not isinstance(codec, AnthropicCodec) or not callable(getattr(workspace, "render", None)):
        raise WorkspaceArgumentError("workspace", workspace, "must be a Workspace",
                                     "pass the Workspace to register in or render")
    return codec


def _saved_ids(codec: AnthropicCodec) -> GeminiIds:
    """The call ids the codec's table holds (those of the last registration)."""
    entry = codec.originals.get(_IDS_KEY) or [{}]
    doc = entry[0]
    return GeminiIds(int(doc.get("made", 0)),
                     [(str(c), str(n)) for c, n in doc.get("open", ())])


def _save_ids(codec: AnthropicCodec, ids: GeminiIds) -> None:
    codec.originals[_IDS_KEY] = [{"type": "gemini_ids", "made": ids.made,
                                  "open": [[c, n] for c, n in ids.open]}]


def register_gemini(workspace: Any, content: Mapping[str, Any],
                    ids: GeminiIds | None = None) -> None:
    """Register one Gemini content (or a ``{"role": "system", "parts"}``
    system instruction) in ``workspace``, its original parts kept by the
    workspace's codec.

    Parameters
    ----------
    workspace : Workspace
        The workspace.
    content : dict
        One content of the conversation, in order.
    ids : GeminiIds, optional
        The conversation's call ids (the same object for all its contents).
        Without it, the workspace's own: the ids as the last registration left
        them. Either way the state after this content is kept in the
        workspace's wire table, so it is part of a :meth:`Workspace.save`
        snapshot (and of a fork): after ``load``, a response without an id
        still answers the open call of its name registered before the save.

    Raises
    ------
    TraceError
        If the content is not Gemini content.
    """
    codec = _ws_iv(workspace)
    if ids is None:
        ids = _saved_ids(codec)
    for m in gemini_to_openai([content], codec=codec, ids=ids):
        workspace.register_message(m)
    _save_ids(codec, ids)


def gemini_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tool schemas as Gemini tools: one
    ``{"functionDeclarations": [...]}`` tool (Gemini API reference, Tool and
    FunctionDeclaration: ``name``, ``description``, ``parameters``), or ``[]``.

    Parameters
    ----------
    tools : sequence of dict
        OpenAI tool schemas (``{"type": "function", "function": {...}}``).

    Returns
    -------
    list of dict
    """
    decls = []
    for t in tools:
        raw = t.get("function")
        fn: Mapping[str, Any] = raw if isinstance(raw, Mapping) else t
        decl = {"name": fn.get("name"), "description": fn.get("description", "")}
        if fn.get("parameters") is not None:
            decl["parameters"] = thaw(fn["parameters"])
        decls.append(decl)
    return [{"functionDeclarations": decls}] if decls else []


def gemini_request(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = (),
                   *, codec: AnthropicCodec | None = None) -> dict[str, Any]:
    """A rendering's OpenAI messages and tools as a Gemini request.

    Parameters
    ----------
    messages : sequence of dict
        The rendering's messages.
    tools : sequence of dict
        Its tool schemas (:func:`gemini_tools`).
    codec : AnthropicCodec, optional
        The codec that recorded the Gemini originals.

    Returns
    -------
    dict
        ``{"systemInstruction", "contents", "tools"}`` (:func:`openai_to_gemini`;
        ``tools`` only when there are some).
    """
    req = openai_to_gemini([thaw(m) for m in messages], codec=codec)
    gtools = gemini_tools(tools)
    if gtools:
        req["tools"] = gtools
    return req


def render_gemini(workspace: Any) -> tuple[dict[str, Any], Any]:
    """The workspace's current rendering as a Gemini request (the contents of
    ``workspace.render(format="gemini")``, without tools).

    Parameters
    ----------
    workspace : Workspace
        The workspace (its contents registered with :func:`register_gemini`).

    Returns
    -------
    (dict, Rendering)
        The ``{"systemInstruction", "contents"}`` request and the engine's
        OpenAI rendering it was written from (its ``tokens``, ``mode`` and
        ``dashboard``).
    """
    codec = _ws_iv(workspace)
    r = workspace.render(format="openai")
    return openai_to_gemini([thaw(m) for m in r.messages], codec=codec), r
