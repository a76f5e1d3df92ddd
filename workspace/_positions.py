"""The messages each block position renders to, kept lazily: a visible block
in its usual form (paper, "Implementation Details": the exact content is in
the prompt) is held as its own record and its read-only message is built the
first time a rendering reads it, so a long history does not keep a second,
rendered copy of every message it has never shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

from ._frozen import FrozenDict, FrozenList
from ._records import Block, BlockType

__all__ = ["PositionMessages", "is_usual", "usual_messages", "same_rendering"]

_TOOL_KEYS = ("role", "tool_call_id", "content")
_CALL_KEYS = ("role", "content", "tool_calls")
_TEXT_KEYS = ("role", "content")


def usual_messages(b: Block) -> tuple[dict[str, Any], ...]:
    """The read-only messages of visible block ``b`` in its usual form (a tool
    result answering a call in the prompt, any other block as itself): what
    ``freeze_messages`` of the layout's messages for that form gives."""
    if b.type is BlockType.TOOL_RESULT:
        return (FrozenDict(role="tool", tool_call_id=b.tool_call_id, content=b.content or ""),)
    if b.type is BlockType.TOOL_CALL:
        calls = FrozenList(
            FrozenDict(
                id=c.id,
                type="function",
                function=FrozenDict(name=c.name, arguments=c.arguments),
            )
            for c in b.tool_calls or ()
        )
        return (FrozenDict(role="assistant", content=b.content, tool_calls=calls),)
    return (FrozenDict(role=b.role, content=b.content),)


def is_usual(b: Block, msgs: tuple[dict[str, Any], ...]) -> bool:
    """``msgs`` are exactly :func:`usual_messages` of ``b`` (same keys in the
    same order, equal values), so the position may hold ``b`` in their place."""
    if len(msgs) != 1:
        return False
    m = msgs[0]
    if b.type is BlockType.TOOL_RESULT:
        return (
            tuple(m) == _TOOL_KEYS
            and m["role"] == "tool"
            and m["tool_call_id"] == b.tool_call_id
            and m["content"] == (b.content or "")
        )
    if b.type is BlockType.TOOL_CALL:
        return (
            tuple(m) == _CALL_KEYS
            and m["role"] == "assistant"
            and m["content"] == b.content
            and m["tool_calls"] == [c.to_openai() for c in b.tool_calls or ()]
        )
    return tuple(m) == _TEXT_KEYS and m["role"] == b.role and m["content"] == b.content


def same_rendering(a: Block, b: Block) -> bool:
    """``a`` and ``b`` give the same :func:`usual_messages` (the fields read there)."""
    return (
        a.type is b.type
        and a.role == b.role
        and a.content == b.content
        and a.tool_calls == b.tool_calls
        and a.tool_call_id == b.tool_call_id
    )


class PositionMessages(list):  # type: ignore[type-arg]
    """Per block position, the tuple of read-only messages it renders to.

    An entry is either that tuple or, for a visible block in its usual form,
    the block's record itself (which the state holds anyway); reading such an
    entry builds the tuple once (:func:`usual_messages`) and keeps it in its
    place, so every later read returns the very same message objects
    (renderings find a message's block by identity). Writing and appending are
    the list's own; a copy keeps the records unread."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: SupportsIndex) -> tuple[dict[str, Any], ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[dict[str, Any], ...]]: ...
    def __getitem__(self, i: Any) -> Any:
        v = list.__getitem__(self, i)
        if type(v) is Block:
            v = usual_messages(v)
            list.__setitem__(self, i, v)
            return v
        if type(i) is slice and Block in map(type, v):  # the scans run in C
            where = range(*i.indices(len(self)))
            kinds = list(map(type, v))
            k = kinds.index(Block)
            while True:
                v[k] = self[where[k]]
                try:
                    k = kinds.index(Block, k + 1)
                except ValueError:
                    break
        return v

    def __iter__(self) -> Iterator[tuple[dict[str, Any], ...]]:
        for k, v in enumerate(list.__iter__(self)):
            yield self[k] if type(v) is Block else v

    def held(self, i: int) -> tuple[dict[str, Any], ...] | Block:
        """Entry ``i`` as held: its messages, or the block they will be built from."""
        return list.__getitem__(self, i)

    def unread(self, i: int, b: Block) -> bool:
        """Entry ``i`` is block ``b`` itself, its messages not built yet."""
        return list.__getitem__(self, i) is b

    def copy(self) -> PositionMessages:
        """An independent list of the same entries (records stay unread)."""
        return PositionMessages(list.__iter__(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (PositionMessages, (list(self),))
