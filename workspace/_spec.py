"""Parsers for the agent-facing selectors: block specs (``"B3,B4"``,
``"B10-B20"``, ``"G2"``) and payload read selectors (byte / line ranges)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._errors import BlockSpecError, WorkspaceArgumentError

__all__ = [
    "BlockRef",
    "GroupRef",
    "BlockRange",
    "parse_block_spec",
    "ByteRange",
    "LineRange",
    "MemberSelector",
    "Selector",
    "parse_selector",
    "format_id_ranges",
]

#: Longest block spec accepted (a guard against pathological tool arguments).
MAX_SPEC_CHARS = 4096
_EXAMPLES = 'e.g. "B3", "B3,B4", "B10-B20" or "G2"'
_ID = re.compile(r"([BbGg])([1-9][0-9]{0,11})\Z", re.ASCII)
# Range separators agents write: "B4-B5", "B6:B7", "B4 to B5", "B4..B5", "B4–B5".
_RANGE = re.compile(
    r"[Bb]([1-9][0-9]{0,11})\s*(?:-|:|\.\.|\u2013|\s[Tt][Oo]\s)\s*[Bb]?([1-9][0-9]{0,11})\Z"
)


@dataclass(frozen=True, slots=True)
class BlockRef:
    """One block named explicitly, ``B<n>``."""

    n: int

    def __str__(self) -> str:
        return f"B{self.n}"


@dataclass(frozen=True, slots=True)
class GroupRef:
    """One archive group named explicitly, ``G<n>``."""

    n: int

    def __str__(self) -> str:
        return f"G{self.n}"


@dataclass(frozen=True, slots=True)
class BlockRange:
    """An inclusive range of blocks, ``B<start>-B<stop>``."""

    start: int
    stop: int

    def __str__(self) -> str:
        return f"B{self.start}-B{self.stop}"


SpecItem = BlockRef | GroupRef | BlockRange


def parse_block_spec(spec: Any) -> tuple[SpecItem, ...]:
    """Parse a block selector into its items, in order (duplicates kept).

    Grammar: comma-separated items, each ``B<n>``, ``G<n>`` or a block range
    ``B<n>-B<m>``, with ``n, m >= 1`` written in ASCII digits without leading
    zeros. Accepted as agents write them: lowercase letters (``b7``), the range
    separators ``:``, ``..``, an en dash and `` to `` (``B6:B7``, ``B4 to B5``),
    ``B<n>-<m>``, and descending ranges (``B8-B7`` is ``B7-B8``). Whitespace
    around items is ignored. Whether the IDs exist is checked by the engine.

    Parameters
    ----------
    spec : str
        The selector as the agent wrote it, e.g. ``"B4,B7-B9,G2"``.

    Returns
    -------
    tuple
        One item per selected ID or range, in order.

    Raises
    ------
    BlockSpecError
        With the offending item and its position.
    """
    if not isinstance(spec, str):
        raise BlockSpecError("block_id", spec, "must be a string", f"pass block IDs, {_EXAMPLES}")
    if len(spec) > MAX_SPEC_CHARS:
        raise BlockSpecError(
            "block_id",
            spec,
            f"must be at most {MAX_SPEC_CHARS} characters long",
            "use ranges (B10-B20) or group IDs instead of long lists",
        )
    if not spec.strip():
        raise BlockSpecError("block_id", spec, "must name at least one block", _EXAMPLES)
    items: list[SpecItem] = []
    for pos, raw in enumerate(spec.split(","), start=1):
        item = raw.strip()
        if not item:
            raise BlockSpecError(
                "block_id", spec, f"has an empty item at position {pos}", "remove the extra comma"
            )
        m = _ID.match(item)
        if m:
            n = int(m.group(2))
            items.append(BlockRef(n) if m.group(1) in "Bb" else GroupRef(n))
            continue
        m = _RANGE.match(item)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a > b:  # a descending range names the same blocks
                a, b = b, a
            items.append(BlockRange(a, b))
            continue
        raise BlockSpecError("block_id", spec, _item_problem(item, pos), _EXAMPLES)
    return tuple(items)


def _item_problem(item: str, pos: int) -> str:
    if re.fullmatch(r"[BbGg]0+[0-9]*", item, re.ASCII):
        return f"has item {item!r} at position {pos}: IDs start at 1 and have no leading zeros"
    if re.fullmatch(r"[BbGg]-.*", item):
        return f"has item {item!r} at position {pos}: IDs are positive (no minus sign)"
    if re.fullmatch(r"G\d+\s*-.*", item, re.ASCII):
        return f"has item {item!r} at position {pos}: ranges are only for blocks (B<n>-B<m>)"
    if not item.isascii():
        return f"has item {item!r} at position {pos}: IDs use ASCII letters and digits only"
    return (
        f"has item {item!r} at position {pos}, which is not a block ID (B<n>), "
        "a range (B<n>-B<m>) or a group ID (G<n>)"
    )


def format_id_ranges(ids: list[str], *, limit: int = 8) -> str:
    """Compress IDs such as ``B3,B4,B5,G1,G2`` into ``B3-B5,G1,G2``; at most
    ``limit`` items, then ``+N more``. Used by handles and folded rows."""
    by_prefix: dict[str, list[int]] = {}
    for uid in ids:
        by_prefix.setdefault(uid[0], []).append(int(uid[1:]))
    parts: list[str] = []
    for prefix in sorted(by_prefix):
        nums = sorted(set(by_prefix[prefix]))
        if prefix != "B":  # only blocks have range syntax; list groups one by one
            parts.extend(f"{prefix}{n}" for n in nums)
            continue
        runs: list[list[int]] = []
        for n in nums:
            if runs and n == runs[-1][1] + 1:
                runs[-1][1] = n
            else:
                runs.append([n, n])
        for a, b in runs:
            if a == b:
                parts.append(f"B{a}")
            elif b == a + 1:
                parts.extend([f"B{a}", f"B{b}"])
            else:
                parts.append(f"B{a}-B{b}")
    if len(parts) > limit:
        return ",".join(parts[:limit]) + f",+{len(parts) - limit} more"
    return ",".join(parts)


# ---------------------------------------------------------------- selectors


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Bytes ``[start, stop)`` of a payload, 0-based like a Python slice
    (``stop=None`` reads to the end). Text form: ``"bytes=START:STOP"``.

    Attributes
    ----------
    start : int
        First byte, 0-based (default 0).
    stop : int or None
        One past the last byte; None reads to the end.
    """

    start: int = 0
    stop: int | None = None

    def __post_init__(self) -> None:
        start = _offset("start", self.start, 0)
        stop = None if self.stop is None else _offset("stop", self.stop, 0)
        if stop is not None and stop < start:
            raise WorkspaceArgumentError(
                "stop", self.stop, f"must be >= start (got start={start})",
                "byte ranges are [start, stop)",
            )
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "stop", stop)


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines ``first..last`` of a payload, 1-based and inclusive like ``sed -n``
    (``last=None`` reads to the end); line endings are kept, so the lines of
    a payload concatenate to its exact bytes. Text form: ``"lines=FIRST-LAST"``.

    Attributes
    ----------
    first : int
        First line, 1-based (default 1).
    last : int or None
        Last line, inclusive; None reads to the end.
    """

    first: int = 1
    last: int | None = None

    def __post_init__(self) -> None:
        first = _offset("first", self.first, 1)
        last = None if self.last is None else _offset("last", self.last, 1)
        if last is not None and last < first:
            raise WorkspaceArgumentError(
                "last", self.last, f"must be >= first (got first={first})",
                "lines are numbered from 1 and inclusive, like sed -n",
            )
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "last", last)


@dataclass(frozen=True, slots=True)
class MemberSelector:
    """The exact bytes of one member block of a group payload, found by
    walking the archive hierarchy down. Text form: ``"member=B7"``.

    Attributes
    ----------
    block_id : str
        The member block (``B<n>``).
    """

    block_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.block_id, str) or not re.fullmatch(
            r"B[1-9][0-9]{0,11}", self.block_id, re.ASCII
        ):
            raise WorkspaceArgumentError(
                "block_id", self.block_id, "must name one block such as 'B7'",
                "pass the member's block id",
            )


def _offset(name: str, value: Any, least: int) -> int:
    """A whole number >= ``least`` (bool, float and NaN refused: a position is exact)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise WorkspaceArgumentError(
            name, value, f"must be a whole number >= {least}", "pass an int"
        )
    out = int(value)
    if out < least:
        raise WorkspaceArgumentError(name, value, f"must be >= {least}", "pass an int")
    return out


Selector = ByteRange | LineRange | MemberSelector

_SEL_EXAMPLES = '"bytes=0:4096", "lines=10-20", "lines=5-" or "member=B7"'


def parse_selector(selector: Any) -> Selector | None:
    """Parse a read selector; ``None`` or ``""`` means the whole payload.

    Parameters
    ----------
    selector : str or None
        ``lines=a-b``, ``bytes=a-b`` or ``member=B<n>``; None or ``""`` for the
        whole payload.

    Returns
    -------
    LineRange, ByteRange, MemberSelector or None

    Raises
    ------
    BlockSpecError
        For a malformed selector, naming it.
    """
    if selector is None or isinstance(selector, (ByteRange, LineRange, MemberSelector)):
        return selector
    if not isinstance(selector, str):
        raise WorkspaceArgumentError(
            "selector", selector, "must be a string or a selector object", _SEL_EXAMPLES
        )
    text = selector.strip()
    if not text:
        return None
    kind, sep, rest = text.partition("=")
    kind = kind.strip().lower()
    rest = rest.strip()
    if not sep:
        raise WorkspaceArgumentError(
            "selector", selector, "must have the form KIND=RANGE", _SEL_EXAMPLES
        )
    if kind == "bytes":
        m = re.fullmatch(r"(\d{0,15})\s*:\s*(\d{0,15})", rest, re.ASCII)
        if not m:
            raise WorkspaceArgumentError(
                "selector", selector, "byte ranges must look like bytes=START:STOP", _SEL_EXAMPLES
            )
        start = int(m.group(1)) if m.group(1) else 0
        stop = int(m.group(2)) if m.group(2) else None
        if stop is not None and stop < start:
            raise WorkspaceArgumentError(
                "selector", selector, "must have START <= STOP", "byte ranges are [START, STOP)"
            )
        return ByteRange(start, stop)
    if kind == "lines":
        m = re.fullmatch(r"(\d{1,15})(?:\s*-\s*(\d{0,15}))?", rest, re.ASCII)
        if not m:
            raise WorkspaceArgumentError(
                "selector", selector, "line ranges must look like lines=FIRST-LAST", _SEL_EXAMPLES
            )
        first = int(m.group(1))
        if m.group(2) is None:
            last: int | None = first
        else:
            last = int(m.group(2)) if m.group(2) else None
        if first < 1 or (last is not None and last < first):
            raise WorkspaceArgumentError(
                "selector",
                selector,
                "must have 1 <= FIRST <= LAST",
                "lines are numbered from 1, like sed -n",
            )
        return LineRange(first, last)
    if kind == "member":
        if not re.fullmatch(r"B[1-9][0-9]{0,11}", rest, re.ASCII):
            raise WorkspaceArgumentError(
                "selector", selector, "must name one block, e.g. member=B7", _SEL_EXAMPLES
            )
        return MemberSelector(rest)
    raise WorkspaceArgumentError(
        "selector", selector, f"has unknown kind {kind!r} (bytes, lines or member)", _SEL_EXAMPLES
    )


def apply_range(data: bytes, sel: ByteRange | LineRange) -> bytes:
    """Cut the exact bytes a range selector asks for (ranges past the end are clipped)."""
    if isinstance(sel, ByteRange):
        return data[sel.start : sel.stop]
    return b"".join(split_lines(data)[sel.first - 1 : sel.last])


def split_lines(data: bytes) -> list[bytes]:
    """Split on ``\\n`` only (like sed), keeping the endings: ``b"".join`` restores ``data``."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
