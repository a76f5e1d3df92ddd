"""Small frozen records of the workspace state W_t = (V_t, A_t): blocks, archive
groups and payload references, with their exact payload encodings."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields
from enum import EnumType, StrEnum
from operator import attrgetter
from typing import Any

from vistalab._core._limits import json_loads

from ._accounting import canonical_json
from ._errors import plain_door

__all__ = [
    "BlockType",
    "Status",
    "ToolCall",
    "PayloadRef",
    "Block",
    "Group",
    "block_payload_bytes",
    "decode_block_payload",
    "record_digest",
    "digest_key",
    "fresh_block",
]


class _LookupEnumType(EnumType):
    """Looks a value up before the standard lookup can fail on it: Python's enum
    compares the value with every member (an empty numpy array cannot be compared)
    and formats ``repr(value)`` for its own message before ``_missing_`` is heard
    (a value nested 10,000 deep raises RecursionError there). Only a ``str`` can
    be a member's value, so anything else is refused at once."""

    def __call__(cls, value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not cls._member_map_:
            return super().__call__(value, *args, **kwargs)  # the functional API
        if isinstance(value, cls):
            return value
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        if member is None:
            cls._missing_(value)  # type: ignore[attr-defined]
        return member


class _LookupEnum(StrEnum, metaclass=_LookupEnumType):
    """A StrEnum whose failed lookup by value is a vista-lab error (a ValueError)
    naming the value and the choices, not the bare enum message."""

    @classmethod
    def _missing_(cls, value: object) -> None:
        from ._errors import WorkspaceArgumentError

        raise WorkspaceArgumentError(
            "value",
            value,
            f"must be a {cls.__name__}: one of {', '.join(m.value for m in cls)}",
            f"pass e.g. {next(iter(cls)).value!r}",
        )


class BlockType(_LookupEnum):
    """What a registered message is (the dashboard's Type column).

    Attributes
    ----------
    SYSTEM : str
        ``"system"``: a system message (pinned).
    USER : str
        ``"user_message"``: a user message (the first one, the task, is pinned).
    ASSISTANT : str
        ``"assistant_message"``: an assistant message without tool calls.
    TOOL_CALL : str
        ``"tool_call"``: an assistant message that calls tools.
    TOOL_RESULT : str
        ``"tool_result"``: a tool's answer to one call.
    """

    SYSTEM = "system"
    USER = "user_message"
    ASSISTANT = "assistant_message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"


class Status(_LookupEnum):
    """Where a block's content lives (the dashboard's Status column).

    ``deleted`` is a tombstone kept so IDs are never reused; the agent
    cannot act on it.

    Attributes
    ----------
    VISIBLE : str
        ``"visible"``: the exact content is in the prompt.
    PINNED : str
        ``"pinned"``: in the prompt and protocol-required (system, task); never
        archived or deleted.
    ARCHIVED : str
        ``"archived"``: the content is in the payload store; a handle is shown.
    OFFLOADED : str
        ``"offloaded_placeholder"``: a tool result the budget guard moved to the
        store on arrival; a placeholder handle is shown.
    DELETED : str
        ``"deleted"``: a tombstone; content and payload are gone.
    """

    VISIBLE = "visible"
    PINNED = "pinned"
    ARCHIVED = "archived"
    OFFLOADED = "offloaded_placeholder"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call of an assistant message (OpenAI format).

    Attributes
    ----------
    id : str
        The call's ID, answered by the tool result with this ``tool_call_id``.
    name : str
        The function called.
    arguments : str
        The arguments as the model wrote them (a JSON string, kept verbatim).
    """

    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        """The call in OpenAI's chat-completions shape.

        Returns
        -------
        dict
            ``{"id": ..., "type": "function", "function": {"name": ...,
            "arguments": ...}}``, the arguments verbatim.
        """
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class PayloadRef:
    """A stored payload as the state records it (the display path is the
    store's root plus ``key``, so it is not part of the state).

    Attributes
    ----------
    key : str
        The store key (``B7.txt``, ``G2.json``).
    size : int
        Payload length in bytes.
    sha256 : str
        Hex sha256 of the payload bytes, verified on every read.
    """

    key: str
    size: int
    sha256: str


#: The defaults of a block's rarely set fields, in :class:`_Rare` order.
_RARE_DEFAULTS: tuple[Any, ...] = (None, "", False, "")


class _Rare:
    """One of a block's rarely set fields (``payload``, ``replacement``,
    ``rejected``, ``reason``: set only for an archived, offloaded, rejected or
    deleted block). The four share one slot, ``_rare``: None while all hold
    their defaults (most blocks, three slots fewer each), else the tuple of
    the four values. A dataclass field whose default is a descriptor (the
    dataclasses documentation, "Descriptor-typed fields"): the class reads the
    default, ``__init__`` writes through ``__set__``."""

    __slots__ = ("k", "default")

    def __init__(self, k: int) -> None:
        self.k, self.default = k, _RARE_DEFAULTS[k]

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self.default
        x = _RARE_GET(obj)
        return self.default if x is None else x[self.k]

    def __set__(self, obj: Any, value: Any) -> None:
        # A frozen record is written only by __init__ and __setstate__, each
        # field once and in order: ``payload`` (k = 0) first of the four.
        x = _RARE_GET(obj) if self.k else None
        if x is None:
            if value is self.default:
                _RARE_SET(obj, None)
                return
            x = _RARE_DEFAULTS
        x = (*x[: self.k], value, *x[self.k + 1 :])
        _RARE_SET(obj, None if all(v is d for v, d in zip(x, _RARE_DEFAULTS, strict=True)) else x)


@dataclass(frozen=True)
class Block:
    """One registered message.

    Attributes
    ----------
    id : str
        ``B<seq>``; never reused, even after deletion.
    seq : int
        Registration order, from 1.
    type : BlockType
    role : str
        OpenAI role of the original message.
    turn : int
        Root turn the block belongs to (tool results share their call's turn);
        age = current turn - ``turn``.
    parent : str or None
        The tool_call block a tool_result answers.
    status : Status
    group : str or None
        The archive group that directly contains this block.
    level : int
        Compression level as a unit: 0 raw, 1 archived or offloaded alone.
    content : str or None
        Exact text while the block is visible or pinned, else None (the
        bytes live in the payload store).
    tool_calls : tuple of ToolCall or None
        Calls of a tool_call block while visible.
    call_ids, call_names : tuple of str
        Structure of a tool_call block's calls, kept after archiving.
    tool_call_id, name : str or None
        For tool results: the call answered and the function name.
    size : int
        Length of the block's payload bytes.
    sha256 : str
        Hex sha256 of the block's payload bytes ("" once deleted).
    tokens : int
        Tokens of the block's message when last visible (the ledger's ~Tok
        for archived blocks).
    payload : PayloadRef or None
        Payload of a block archived or offloaded on its own.
    replacement : str
        Index text shown in the block's handle.
    rejected : bool
        True if the budget guard refused the original tool result and this
        block holds the rejection notice instead.
    reason : str
        Reason given when deleted.
    """

    id: str
    seq: int
    type: BlockType
    role: str
    turn: int
    parent: str | None
    status: Status
    group: str | None
    level: int
    content: str | None
    tool_calls: tuple[ToolCall, ...] | None
    call_ids: tuple[str, ...]
    call_names: tuple[str, ...]
    tool_call_id: str | None
    name: str | None
    size: int
    sha256: str
    tokens: int
    payload: PayloadRef | None = _Rare(0)  # type: ignore[assignment]
    replacement: str = _Rare(1)  # type: ignore[assignment]
    rejected: bool = _Rare(2)  # type: ignore[assignment]
    reason: str = _Rare(3)  # type: ignore[assignment]

    __slots__ = (
        "id",
        "seq",
        "type",
        "role",
        "turn",
        "parent",
        "status",
        "group",
        "level",
        "content",
        "tool_calls",
        "call_ids",
        "call_names",
        "tool_call_id",
        "name",
        "size",
        "sha256",
        "tokens",
        "_rare",  # payload, replacement, rejected, reason (see _Rare)
    )

    def __getstate__(self) -> list[Any]:
        return [getattr(self, f) for f in _BLOCK_FIELDS]

    def __setstate__(self, state: list[Any]) -> None:
        for f, v in zip(_BLOCK_FIELDS, state, strict=True):
            object.__setattr__(self, f, v)  # a frozen record: as __init__ writes

    @property
    def is_live(self) -> bool:
        """The block is not deleted (visible, pinned or archived: its ID still
        resolves).
        """
        return self.status is not Status.DELETED

    @property
    def in_prompt(self) -> bool:
        """Content is in the prompt (visible or pinned)."""
        return self.status is Status.VISIBLE or self.status is Status.PINNED

    def to_plain(self, *, with_content: bool = True) -> dict[str, Any]:
        """Plain data with a type tag (for snapshots and the canonical hash).

        Parameters
        ----------
        with_content : bool
            Include the content, the tool calls and the token count (a snapshot
            does; the canonical hash of the state without them does not).

        Returns
        -------
        dict
            ``kind: "block"`` and every field as JSON data (enums by value, the
            payload reference as ``[key, size, sha256]``).
        """
        out: dict[str, Any] = {
            "kind": "block",
            "id": self.id,
            "seq": self.seq,
            "type": self.type.value,
            "role": self.role,
            "turn": self.turn,
            "parent": self.parent,
            "status": self.status.value,
            "group": self.group,
            "level": self.level,
            "call_ids": list(self.call_ids),
            "call_names": list(self.call_names),
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "size": self.size,
            "sha256": self.sha256,
            "payload": None
            if self.payload is None
            else [self.payload.key, self.payload.size, self.payload.sha256],
            "replacement": self.replacement,
            "rejected": self.rejected,
            "reason": self.reason,
        }
        if with_content:
            out["content"] = self.content
            out["tool_calls"] = (
                None
                if self.tool_calls is None
                else [[c.id, c.name, c.arguments] for c in self.tool_calls]
            )
            out["tokens"] = self.tokens
        return out

    @classmethod
    @plain_door("Block", ("id", "parent", "group"))
    def from_plain(cls, d: dict[str, Any]) -> Block:
        """The block :meth:`to_plain` wrote (the inverse of ``to_plain()``).

        Parameters
        ----------
        d : dict
            The plain data; ``content``, ``tool_calls``, ``tokens``,
            ``replacement``, ``rejected`` and ``reason`` may be absent.

        Returns
        -------
        Block
            The block.

        Raises
        ------
        KeyError
            If a required key is missing.
        ValueError
            If the type or status is not a member of its enum, or a number is
            not an integer.
        """
        payload = d.get("payload")
        calls = d.get("tool_calls")
        return cls(
            id=d["id"],
            seq=int(d["seq"]),
            type=BlockType(d["type"]),
            role=d["role"],
            turn=int(d["turn"]),
            parent=d["parent"],
            status=Status(d["status"]),
            group=d["group"],
            level=int(d["level"]),
            content=d.get("content"),
            tool_calls=None if calls is None else tuple(ToolCall(*c) for c in calls),
            call_ids=tuple(d["call_ids"]),
            call_names=tuple(d["call_names"]),
            tool_call_id=d["tool_call_id"],
            name=d["name"],
            size=int(d["size"]),
            sha256=d["sha256"],
            tokens=int(d.get("tokens", 0)),
            payload=None
            if payload is None
            else PayloadRef(payload[0], int(payload[1]), payload[2]),
            replacement=d.get("replacement", ""),
            rejected=bool(d.get("rejected", False)),
            reason=d.get("reason", ""),
        )


class _CallIds:
    """``Block.call_ids``: while the block holds its calls (a visible tool
    call) and they match, the IDs are read off them, so the slot holds
    None instead of a tuple of its own; once the calls are dropped (archived)
    the slot keeps the tuple it was given. Written by ``__init__`` and
    ``__setstate__`` after ``tool_calls`` (field order)."""

    __slots__ = ("raw", "_set")

    def __init__(self, slot: Any) -> None:
        self.raw, self._set = slot.__get__, slot.__set__

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        v = self.raw(obj, cls)
        return tuple(map(_CALL_ID, obj.tool_calls)) if v is None else v

    def __set__(self, obj: Any, value: Any) -> None:
        calls = obj.tool_calls
        if (
            type(value) is tuple
            and calls is not None
            and len(calls) == len(value)
            and all(c.id == v for c, v in zip(calls, value, strict=True))
        ):
            value = None
        self._set(obj, value)


_CALL_ID = attrgetter("id")
Block.call_ids = _CallIds(Block.__dict__["call_ids"])  # type: ignore[assignment,misc]
_RARE_GET = Block.__dict__["_rare"].__get__
_RARE_SET = Block.__dict__["_rare"].__set__
_BLOCK_FIELDS = tuple(f.name for f in fields(Block))


#: A digest as the engine writes it: exactly 64 lowercase hex digits.
_HEX64 = re.compile(r"[0-9a-f]{64}\Z", re.ASCII)


class _HexDigest:
    """A record's ``sha256`` field, stored compactly: a digest of 64 lowercase hex
    digits is held as its 32 raw bytes (a 65-byte object instead of a 113-byte
    string, one per block); any other text (``""`` once deleted) as given.
    Reading gives the very text written, so equality, hashing, ``repr``, pickles,
    ``to_plain`` and every snapshot are unchanged. Wraps the slot the dataclass
    made; its ``raw`` reads the stored value (``bytes`` or the text).

    The text last read is remembered with its bytes (one pair, replaced as a
    whole), so a record rebuilt from another's fields (``dataclasses.replace``
    reads each field and passes it on) holds the very bytes object the old one
    held, which other structures may share (a position key), not an equal copy."""

    __slots__ = ("raw", "_set", "_last")

    def __init__(self, slot: Any) -> None:
        self.raw = slot.__get__
        self._set = slot.__set__
        self._last: tuple[str, bytes] = ("", b"")

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        v = self.raw(obj, cls)
        if type(v) is str:
            return v
        text = v.hex()
        self._last = (text, v)
        return text

    def __set__(self, obj: Any, value: Any) -> None:
        last = self._last
        if value is last[0] and last[0]:
            value = last[1]
        elif type(value) is str and _HEX64.match(value):
            value = bytes.fromhex(value)
        self._set(obj, value)


PayloadRef.sha256 = _HexDigest(PayloadRef.__dict__["sha256"])  # type: ignore[assignment,misc]
Block.sha256 = _HexDigest(Block.__dict__["sha256"])  # type: ignore[assignment,misc]
_BLOCK_SHA_RAW = Block.__dict__["sha256"].raw


def _raw_setter(name: str) -> Any:
    """The setter of ``Block``'s slot ``name`` itself (under a field's wrapping
    descriptor, :class:`_CallIds` or :class:`_HexDigest`, its slot's)."""
    d = Block.__dict__[name]
    return d._set if isinstance(d, (_CallIds, _HexDigest)) else d.__set__


_FRESH_SET = tuple(
    _raw_setter(f)
    for f in (
        "id", "seq", "type", "role", "turn", "parent", "status", "group", "level", "content",
        "tool_calls", "call_ids", "call_names", "tool_call_id", "name", "size", "sha256",
        "tokens", "_rare",
    )
)


def fresh_block(
    seq: int,
    type_: BlockType,
    role: str,
    turn: int,
    parent: str | None,
    status: Status,
    content: str | None,
    tool_calls: tuple[ToolCall, ...] | None,
    call_names: tuple[str, ...],
    tool_call_id: str | None,
    name: str | None,
    size: int,
    digest: bytes,
    tokens: int,
) -> Block:
    """A newly registered message's record (group None, level 0, the rare
    fields at their defaults), equal in every slot to the one
    ``Block(...)`` makes from the same fields with ``call_ids`` those of
    ``tool_calls`` (or ``()``) and ``sha256`` the hex of ``digest`` (its raw
    sha256 bytes): the slots are written directly, as ``__init__`` would
    leave them, without the field descriptors' checks on values the engine
    made itself (the digest is kept as its bytes, never formatted as hex and
    parsed back; the call IDs are read off the calls)."""
    b = object.__new__(Block)
    (s_id, s_seq, s_type, s_role, s_turn, s_parent, s_status, s_group, s_level, s_content,
     s_calls, s_call_ids, s_names, s_cid, s_name, s_size, s_sha, s_tokens, s_rare) = _FRESH_SET
    s_id(b, f"B{seq}")
    s_seq(b, seq)
    s_type(b, type_)
    s_role(b, role)
    s_turn(b, turn)
    s_parent(b, parent)
    s_status(b, status)
    s_group(b, None)
    s_level(b, 0)
    s_content(b, content)
    s_calls(b, tool_calls)
    s_call_ids(b, () if tool_calls is None else None)  # None: read off the calls
    s_names(b, call_names)
    s_cid(b, tool_call_id)
    s_name(b, name)
    s_size(b, size)
    s_sha(b, digest)
    s_tokens(b, tokens)
    s_rare(b, None)
    return b


def digest_key(b: Block) -> bytes | str:
    """What ``b.sha256`` is made from, without formatting it: its digest's raw
    ``bytes`` (equal for equal digests), or the text when it is not a hex digest.
    A position key (see the layout's ``_position_key``) holds this shared object,
    not a string of its own per position."""
    return _BLOCK_SHA_RAW(b, Block)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Group:
    """An archive unit made of several blocks and/or groups (one level up).

    Attributes
    ----------
    id : str
        ``G<n>``; never reused.
    members : tuple of str
        Member unit IDs in block order (blocks and nested groups).
    level : int
        ``1 + max(member level)``; raw members count as level 0.
    payload : PayloadRef
        The group's payload: raw members inline, archived members by reference.
    replacement : str
        Index text shown in the handle.
    parent : str or None
        The coarser group that contains this one.
    """

    id: str
    members: tuple[str, ...]
    level: int
    payload: PayloadRef
    replacement: str
    parent: str | None = None

    def to_plain(self) -> dict[str, Any]:
        """Plain data with a type tag (for snapshots and the canonical hash).

        Returns
        -------
        dict
            ``kind: "group"``, the ID, members, level, payload reference
            ``[key, size, sha256]``, replacement and parent.
        """
        return {
            "kind": "group",
            "id": self.id,
            "members": list(self.members),
            "level": self.level,
            "payload": [self.payload.key, self.payload.size, self.payload.sha256],
            "replacement": self.replacement,
            "parent": self.parent,
        }

    @classmethod
    @plain_door("Group", ("id", "parent"))
    def from_plain(cls, d: dict[str, Any]) -> Group:
        """The group :meth:`to_plain` wrote.

        Parameters
        ----------
        d : dict
            The plain data.

        Returns
        -------
        Group
            The group.

        Raises
        ------
        KeyError
            If a key is missing.
        """
        p = d["payload"]
        return cls(
            id=d["id"],
            members=tuple(d["members"]),
            level=int(d["level"]),
            payload=PayloadRef(p[0], int(p[1]), p[2]),
            replacement=d["replacement"],
            parent=d["parent"],
        )


#: ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``'s
#: encoder, built once (stateless between calls).
_PAYLOAD_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
#: The string encoder it uses (non-ASCII kept).
_PAYLOAD_ESC = json.encoder.encode_basestring


def block_payload_bytes(
    btype: BlockType, content: str | None, tool_calls: tuple[ToolCall, ...] | None
) -> bytes:
    """The exact bytes a block's archive payload holds.

    Text messages store their content as UTF-8, so reading the payload path
    returns exactly what the model saw (a CSV stays a CSV). A tool_call block
    stores ``{"content": ..., "tool_calls": [...]}`` as compact key-sorted
    JSON (non-ASCII kept as UTF-8), which round-trips exactly.
    """
    if btype is BlockType.TOOL_CALL:
        calls = tool_calls or ()
        if (content is None or type(content) is str) and all(
            type(c.id) is str and type(c.name) is str and type(c.arguments) is str for c in calls
        ):  # the encoder's output, written directly (keys in sorted order)
            esc = _PAYLOAD_ESC
            items = ",".join(
                f'{{"function":{{"arguments":{esc(c.arguments)},"name":{esc(c.name)}}},'
                f'"id":{esc(c.id)},"type":"function"}}'
                for c in calls
            )
            text = "null" if content is None else esc(content)
            return f'{{"content":{text},"tool_calls":[{items}]}}'.encode()
        obj = {
            "content": content,
            "tool_calls": [c.to_openai() for c in calls],
        }
        return _PAYLOAD_JSON.encode(obj).encode("utf-8")
    return (content or "").encode("utf-8")


def decode_block_payload(
    btype: BlockType, data: bytes
) -> tuple[str | None, tuple[ToolCall, ...] | None]:
    """Inverse of :func:`block_payload_bytes`."""
    if btype is BlockType.TOOL_CALL:
        obj = json_loads(data.decode("utf-8"))
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in obj["tool_calls"]
        )
        return obj["content"], calls
    return data.decode("utf-8"), None


def record_digest(plain: dict[str, Any]) -> int:
    """sha256 of a record's canonical JSON as an integer (summed into the state hash)."""
    return int.from_bytes(hashlib.sha256(canonical_json(plain).encode("ascii")).digest(), "big")
