"""What the engine returns: the rendering and the outcome of each action
(frozen records, documented fields)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any

from ._hashing import state_hash_of

__all__ = ["Rendering", "ArchiveResult", "DeleteResult", "RestoreResult", "Candidate"]

# ----------------------------------------------------------------- results

#: Per chunk of ledger rows: the units, their ~Tok and their prompt tokens.
TokenColumns = Sequence[tuple[Sequence[str], Sequence[int], Sequence[int]]]
_UNIT_FIELDS = ("block_tokens", "prompt_tokens")


class _UnitTokensOnRead:
    """Base of :class:`Rendering`: a rendering made by :func:`with_token_columns`
    builds its ``block_tokens`` and ``prompt_tokens`` dicts when one is first
    read, from immutable columns taken when it was rendered, so a rendering
    whose per-unit figures nobody reads costs O(what it shows), not O(units
    ever registered). Read, they are ordinary dicts, stored in the fields."""

    __slots__ = ("_columns", "_state")

    def __getattr__(self, name: str) -> Any:
        # Only reached when ordinary look-up fails: here, a field not built yet.
        if name == "state_hash":  # hashed when first read (see normal_rendering)
            try:
                state = object.__getattribute__(self, "_state")
            except AttributeError:
                state = None
            if state is not None:
                digest = state_hash_of(*state)
                object.__setattr__(self, "state_hash", digest)
                return digest
        if name in _UNIT_FIELDS:
            try:
                columns = object.__getattribute__(self, "_columns")
            except AttributeError:
                columns = None
            if columns is not None:
                block: dict[str, int] = {}
                prompt: dict[str, int] = {}
                for uids, tokens, prompts in columns:
                    block.update(zip(uids, tokens, strict=True))
                    prompt.update(zip(uids, prompts, strict=True))
                object.__setattr__(self, "block_tokens", block)
                object.__setattr__(self, "prompt_tokens", prompt)
                object.__setattr__(self, "_columns", None)
                return block if name == "block_tokens" else prompt
            try:  # built meanwhile by another thread
                return object.__getattribute__(self, name)
            except AttributeError:
                pass
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self
        )


def with_token_columns(r: Rendering, columns: TokenColumns) -> Rendering:
    """``r`` with ``block_tokens`` and ``prompt_tokens`` to be built from
    ``columns`` when first read (whatever ``r`` holds in them is dropped)."""
    object.__delattr__(r, "block_tokens")
    object.__delattr__(r, "prompt_tokens")
    object.__setattr__(r, "_columns", columns)
    return r


def normal_rendering(
    columns: TokenColumns, state: tuple[int, int, int], **values: Any
) -> Rendering:
    """``with_token_columns(Rendering(state_hash=state_hash_of(*state),
    **values), columns)`` for the engine's normal rendering, whose fields it
    made itself: the record's slots are written directly (the fields not given
    take their defaults), without the per-unit dicts it would drop at once, so
    a turn pays no dataclass ``__init__``; ``state`` (config digest, turn,
    record accumulator) is hashed when ``state_hash`` is first read."""
    r = object.__new__(Rendering)
    _SET_STATE(r, state)
    for name, default in _RENDERING_DEFAULTS:
        _RENDERING_SET[name](r, values.pop(name, default))
    for name, value in values.items():
        _RENDERING_SET[name](r, value)
    _SET_COLUMNS(r, columns)
    return r


def replace_rendering(r: Rendering, **changes: Any) -> Rendering:
    """``dataclasses.replace(r, **changes)``, leaving per-unit figures not
    built yet still unbuilt."""
    try:
        columns = object.__getattribute__(r, "_columns")
    except AttributeError:
        columns = None
    if columns is None:
        return replace(r, **changes)
    return with_token_columns(replace(r, block_tokens={}, prompt_tokens={}, **changes), columns)


@dataclass(frozen=True, slots=True)
class Rendering(_UnitTokensOnRead):
    """What the model receives at one turn, after preflight (eq. workspace-render).

    Attributes
    ----------
    messages : tuple of dict
        OpenAI chat messages, protocol-valid. They are shared with the engine's
        cache and read-only (in-place edits raise TypeError); ``dict(m)``,
        ``copy.deepcopy`` and ``as_request()`` give ordinary copies.
    tools : tuple of dict
        Read-only tool schemas sent with the request: task tools then context tools,
        in both modes (so prompt caches survive an overflow).
    tokens : int
        ``|C_t|``: tokens of this request; ``tokens <= budget`` always.
    budget : int
        B.
    mode : str
        ``"normal"`` if the candidate fits (``|C~_t|`` <= B), else ``"overflow"``
        (the management rendering, eq. overflow).
    candidate_tokens : int
        ``|C~_t|``: tokens of the ordinary rendering, what preflight compared
        with B and what the dashboard's budget line prints.
    overhead_tokens, conversation_tokens, dashboard_tokens : int
        The dashboard's split of ``candidate_tokens``: tool schemas, protocol,
        system blocks and reply priming / everything else / the candidate
        dashboard message.
    dashboard : str
        The dashboard text in this rendering (the management dashboard in
        overflow mode).
    block_tokens : dict
        ~Tok of every actionable unit, as the ledger prints it: the prompt
        cost of a visible unit, the last visible cost of an archived one.
    prompt_tokens : dict
        Tokens each actionable unit costs in the candidate rendering now
        (content, or handle plus protocol stubs when archived).
    allowed_tools : tuple of str
        Tools the agent may call this turn (context tools only in overflow).
    state_hash : str
        Canonical hash of the workspace this rendering shows.
    turn : int
        Root-turn counter at rendering time.
    format : str
        ``"openai"`` (chat messages, the engine's own form) or ``"anthropic"``
        (Messages API turns of content blocks; ``tools`` in Anthropic schema
        form; the leading system messages moved to ``system``) or
        ``"responses"`` (``messages`` are OpenAI Responses input items, ``tools``
        Responses function tools) or ``"gemini"`` (``messages`` are Gemini
        contents, ``tools`` one ``{"functionDeclarations"}`` tool, ``system``
        the ``systemInstruction`` parts).
    system : tuple of dict
        Anthropic top-level system blocks, or Gemini systemInstruction parts
        (empty in the OpenAI and Responses formats).

    Token counts are the engine's accounting of the OpenAI form in every
    format: the Anthropic and Responses requests carry the same content,
    re-framed.
    """

    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    tokens: int
    budget: int
    mode: str
    candidate_tokens: int
    overhead_tokens: int
    conversation_tokens: int
    dashboard_tokens: int
    dashboard: str
    block_tokens: dict[str, int]
    prompt_tokens: dict[str, int]
    allowed_tools: tuple[str, ...]
    state_hash: str
    turn: int
    format: str = "openai"
    system: tuple[dict[str, Any], ...] = ()

    def as_request(self) -> dict[str, Any]:
        """``{"messages": [...], "tools": [...]}`` (plus ``"system"`` in the
        Anthropic format when there is one; ``{"input": [...], "tools": [...]}``
        in the Responses format; ``{"systemInstruction", "contents", "tools"}``
        in the Gemini format) as independent plain data.

        Returns
        -------
        dict
            A JSON round-tripped copy: changing it does not change the rendering.
        """
        if self.format == "responses":
            return json.loads(json.dumps({"input": list(self.messages), "tools": list(self.tools)}))
        if self.format == "gemini":
            gdoc: dict[str, Any] = {"contents": list(self.messages)}
            if self.system:
                gdoc["systemInstruction"] = {"parts": list(self.system)}
            if self.tools:
                gdoc["tools"] = list(self.tools)
            return json.loads(json.dumps(gdoc))
        doc: dict[str, Any] = {"messages": list(self.messages), "tools": list(self.tools)}
        if self.system:
            doc = {"system": list(self.system), **doc}
        return json.loads(json.dumps(doc))


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """Outcome of one archive action.

    Attributes
    ----------
    unit_id : str
        The archived block (single block) or the new group ``G<n>``.
    path : str
        Payload path to read for recovery.
    level : int
        Compression level of the new unit.
    size : int
        Payload bytes.
    sha256 : str
        Hex sha256 of the payload.
    members : tuple of str
        Units folded into the new unit (the block itself for one block).
    freed_tokens : int
        Net prompt tokens freed (content out, handle in; the dashboard row
        change is not included).
    """

    unit_id: str
    path: str
    level: int
    size: int
    sha256: str
    members: tuple[str, ...]
    freed_tokens: int


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """Outcome of one delete action: the units removed, every block that became
    a tombstone, the payload keys removed and the net prompt tokens freed.

    Attributes
    ----------
    units : tuple of str
        The top-level units removed (``B<n>`` or ``G<n>``), as selected.
    blocks : tuple of str
        Every block that became a tombstone (members of deleted groups included).
    payloads_removed : tuple of str
        Store keys of the payloads removed with them.
    freed_tokens : int
        Net prompt tokens freed; negative when deleting a tool call makes its
        results render as plain context with a prefix.
    """

    units: tuple[str, ...]
    blocks: tuple[str, ...]
    payloads_removed: tuple[str, ...]
    freed_tokens: int


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """Outcome of one restore: units opened one level, blocks back in the
    prompt, and the net prompt tokens added.

    Attributes
    ----------
    units : tuple of str
        The units opened (each one level: a group of groups gives back its groups).
    blocks : tuple of str
        Blocks whose exact content is back in the prompt.
    added_tokens : int
        Net prompt tokens added (content in, handles out).
    """

    units: tuple[str, ...]
    blocks: tuple[str, ...]
    added_tokens: int


@dataclass(frozen=True, slots=True)
class Candidate:
    version: int
    total: int
    overhead: int
    conversation: int
    dashboard: str | None  # None: counted from the running sums, not assembled
    dashboard_tokens: int


#: Every slot setter of a Rendering's fields, and the fields with defaults.
_RENDERING_SET = {f.name: vars(Rendering)[f.name].__set__ for f in fields(Rendering)}
_RENDERING_DEFAULTS = tuple(
    (f.name, f.default) for f in fields(Rendering) if f.default is not MISSING
)
_SET_COLUMNS = vars(_UnitTokensOnRead)["_columns"].__set__
_SET_STATE = vars(_UnitTokensOnRead)["_state"].__set__
