"""Everything the prompt shows in place of content (archive handles, offload
placeholders, stubs, tombstones, guard notices) and the group payload format.

Kept in one module so the token cost of each form can be measured and
changed in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._errors import PayloadIntegrityError, WorkspaceArgumentError
from ._store import sha256_hex

__all__ = [
    "HANDLE_SHA_CHARS",
    "handle_text",
    "offload_text",
    "member_stub",
    "tombstone_text",
    "pending_text",
    "PENDING_RULE",
    "SHORTEST_REJECTION",
    "rejection_text",
    "orphan_prefix",
    "ParsedHandle",
    "parse_handle",
    "find_handles",
    "placeholder_kind",
    "GroupEntry",
    "encode_group_payload",
    "parse_group_payload",
]

#: Hex digits of the sha256 shown in a handle. The full digest is in the
#: event log, the state and the group manifests; 16 hex digits (64 bits)
#: let an agent or auditor spot a swapped file at a quarter of the cost.
HANDLE_SHA_CHARS = 16


def _need(name: str, value: object, kind: type) -> None:
    """Check one argument of a formatter at the door."""
    if kind is str:
        if not isinstance(value, str):
            raise WorkspaceArgumentError(name, value, "must be a string")
    elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkspaceArgumentError(name, value, "must be a non-negative integer")


def handle_text(
    unit_id: str,
    *,
    level: int,
    path: str,
    size: int,
    sha256: str,
    replacement: str,
    members: str = "",
) -> str:
    """The compact handle an archived unit leaves in the prompt.

    It keeps what the paper's contract names: the payload path, the
    archive level, the size and a checksum, plus the agent's replacement
    (index) text and, for groups, the member IDs.

    Parameters
    ----------
    unit_id : str
        The archived block or group ID (``B7``, ``G2``).
    level : int
        The archive level (1 on the first archive, +1 on each re-archive).
    path : str
        The payload path an ordinary read recovers the bytes from.
    size : int
        The payload's size in bytes.
    sha256 : str
        The payload's sha256 (hex).
    replacement : str
        The agent's index text.
    members : str
        For a group, its member IDs (default ``""``).

    Returns
    -------
    str
        The handle text.
    """
    _need("unit_id", unit_id, str)
    _need("level", level, int)
    _need("path", path, str)
    _need("size", size, int)
    _need("sha256", sha256, str)
    _need("replacement", replacement, str)
    _need("members", members, str)
    inner = f" ({members})" if members else ""
    text = (
        f"[archived {unit_id}{inner} level={level} size={size:,}B "
        f"sha256={sha256[:HANDLE_SHA_CHARS]} path={path}]"
    )
    return f"{text} {replacement}" if replacement else text


def offload_text(block_id: str, *, path: str, size: int, sha256: str) -> str:
    """Placeholder for a raw tool result the budget guard moved out of the prompt.

    Parameters
    ----------
    block_id : str
        The offloaded tool result's block ID.
    path : str
        The payload path.
    size : int
        The payload's size in bytes.
    sha256 : str
        The payload's sha256 (hex).

    Returns
    -------
    str
        The placeholder text.
    """
    _need("block_id", block_id, str)
    _need("path", path, str)
    _need("size", size, int)
    _need("sha256", sha256, str)
    return (
        f"[offloaded {block_id} level=1 size={size:,}B sha256={sha256[:HANDLE_SHA_CHARS]} "
        f"path={path}] Raw tool result moved out by the budget guard; read the path to "
        "recover it."
    )


def member_stub(block_id: str, unit_id: str) -> str:
    """Tool message kept for a member whose call stays visible (protocol pairing)."""
    return f"[{block_id} archived in {unit_id}]"


def tombstone_text(block_id: str) -> str:
    """Tool message kept for a deleted result whose call stays visible."""
    return f"[{block_id} deleted]"


def pending_text(call_id: str) -> str:
    """Tool message for a call whose result has not been registered yet."""
    return f"[no result registered for {call_id}]"


#: The rule named by a rejection that keeps a pending batch's management
#: rendering within the budget (see the budget guard).
PENDING_RULE = "budget with the pending calls kept"
#: The guard's shortest rejection notice (when no longer one fits beside a
#: pending batch; never longer than a pending placeholder in the shipped
#: tokenizers, and the floor reserves any difference).
SHORTEST_REJECTION = "[budget guard] rejected"


def rejection_text(
    *,
    current: int,
    limit: int,
    attempted: int,
    cap: int,
    at_least: bool = False,
    rule: str = "hard limit",
) -> str:
    """Notice the budget guard registers instead of a result it cannot admit.

    Parameters
    ----------
    current : int
        Tokens of the candidate rendering before the result.
    limit : int
        The limit that decided (the hard limit or the per-result cap).
    attempted : int
        Tokens the result would have added.
    cap : int
        The per-result cap.
    at_least : bool
        ``attempted`` is a lower bound: the result was counted only until it
        exceeded the cap (a long result), and the notice says "needs over".
    rule : str
        The name of the limit that decided (default ``"hard limit"``).

    Returns
    -------
    str
        The notice, which names the rule that decided.
    """
    for name, value in (("current", current), ("limit", limit), ("attempted", attempted)):
        _need(name, value, int)
    if isinstance(cap, bool) or not isinstance(cap, int):
        raise WorkspaceArgumentError("cap", cap, "must be an integer")
    _need("rule", rule, str)
    return (
        f"[budget guard] Tool result rejected: context ~{current:,} tokens, {rule} "
        f"{limit:,}, this result needs {'over ' if at_least else ''}+{attempted:,} "
        f"(largest admissible now ~{max(cap, 0):,}). "
        "Rerun it after freeing context or with a narrower query."
    )


def orphan_prefix(block_id: str, call_name: str | None, parent: str | None) -> str:
    """Prefix of a tool result rendered as ordinary context because its call
    is no longer in the prompt (archived or deleted): never an orphan tool message."""
    src = f" of {call_name}" if call_name else ""
    frm = f" (call {parent} not in context)" if parent else ""
    return f"[tool result {block_id}{src}{frm}]\n"


# ------------------------------------------------------------ parsers
# Each parser inverts the formatter above it (round-trip tested); callers that
# read renderings back (sims, probe analysis) use these, never their own regexes.

_HANDLE = re.compile(
    r"\[(?P<kind>archived|offloaded) (?P<id>[BG][1-9][0-9]*)(?: \((?P<members>[^()]*)\))?"
    r" level=(?P<level>[0-9]+) size=(?P<size>[0-9][0-9,]*)B sha256=(?P<sha>[0-9a-f]+)"
    r" path=(?P<path>[^\n]*?/[BG][1-9][0-9]*\.txt)\]",
)
_OFFLOAD_TAIL = " Raw tool result moved out by the budget guard; read the path to recover it."
_STUB = re.compile(r"\[B[1-9][0-9]* archived in G[1-9][0-9]*\]\Z")
_TOMBSTONE = re.compile(r"\[B[1-9][0-9]* deleted\]\Z")


@dataclass(frozen=True, slots=True)
class ParsedHandle:
    """The fields of an archive handle or offload placeholder read back from text.

    Attributes
    ----------
    kind : str
        ``"archived"`` (:func:`handle_text`) or ``"offloaded"`` (:func:`offload_text`).
    unit_id, members : str
        The unit and, for groups, its member ranges as printed (else ``""``).
    level, size : int
    sha256_prefix : str
        The first ``HANDLE_SHA_CHARS`` hex digits of the payload's sha256.
    path : str
    replacement : str
        The agent's index text (``""`` when none; offload placeholders have none).
    """

    kind: str
    unit_id: str
    members: str
    level: int
    size: int
    sha256_prefix: str
    path: str
    replacement: str


def _handle_from(m: re.Match[str], rest: str) -> ParsedHandle:
    kind = m.group("kind")
    replacement = ""
    if kind == "archived" and rest.startswith(" "):
        replacement = rest[1:]
    return ParsedHandle(
        kind,
        m.group("id"),
        m.group("members") or "",
        int(m.group("level")),
        int(m.group("size").replace(",", "")),
        m.group("sha"),
        m.group("path"),
        replacement,
    )


def parse_handle(text: str) -> ParsedHandle | None:
    """The handle (or offload placeholder) that ``text`` is, or None.

    Inverse of :func:`handle_text` and :func:`offload_text` on their whole
    output: ``parse_handle(handle_text(...))`` gives back every field (the
    sha256 as its printed prefix).

    Parameters
    ----------
    text : str
        A message's text.

    Returns
    -------
    ParsedHandle or None
        Its fields, or None when ``text`` is not a handle or placeholder.
    """
    if not isinstance(text, str):
        return None
    m = _HANDLE.match(text)
    if m is None:
        return None
    rest = text[m.end() :]
    if m.group("kind") == "offloaded":
        if rest != _OFFLOAD_TAIL:
            return None
    elif rest and not rest.startswith(" "):
        return None
    return _handle_from(m, rest)


def find_handles(text: str) -> list[ParsedHandle]:
    """Every handle inside ``text`` (a message may prefix one, as the orphan
    form of a tool result does); replacements run to the end of their line.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list of ParsedHandle
        In order of appearance.
    """
    out = []
    for m in _HANDLE.finditer(text):
        line_end = text.find("\n", m.end())
        rest = text[m.end() : len(text) if line_end < 0 else line_end]
        out.append(_handle_from(m, rest if m.group("kind") == "archived" else ""))
    return out


def placeholder_kind(text: str) -> str | None:
    """Which engine stand-in ``text`` is: ``"handle"``, ``"offload"``,
    ``"member_stub"``, ``"tombstone"``, ``"pending"`` or ``"rejection"``; None
    for ordinary content. Inverse of the formatters above (leading
    whitespace ignored).

    Parameters
    ----------
    text : str
        A message's text.

    Returns
    -------
    str or None
        The kind, or None.
    """
    if not isinstance(text, str):
        return None
    t = text.lstrip()
    h = parse_handle(t) if t.startswith("[") else None
    if h is not None:
        return "handle" if h.kind == "archived" else "offload"
    # Handles another harness printed into a transcript may carry other paths:
    # "[archived <ID> " / "[offloaded <ID> " is enough to know what they are.
    for word, kind in (("[archived ", "handle"), ("[offloaded ", "offload")):
        if t.startswith(word):
            uid = t[len(word) :].split(" ", 1)[0]
            if len(uid) > 1 and uid[0] in "BG" and uid[1:].isascii() and uid[1:].isdigit():
                return kind
    if _STUB.match(t):
        return "member_stub"
    if _TOMBSTONE.match(t):
        return "tombstone"
    if t.startswith("[no result registered for ") and t.endswith("]"):
        return "pending"
    if t.startswith("[budget guard] Tool result rejected") or t.startswith(SHORTEST_REJECTION):
        return "rejection"
    return None


# ------------------------------------------------------------ group payloads

_MAGIC = b"VISTA-ARCHIVE 1 "
_ENTRY = re.compile(
    rb"@@ (?P<id>[BG][1-9][0-9]*) (?P<type>[a-z_]+)(?: ref=(?P<ref>[BG][1-9][0-9]*\.txt))?"
    rb" bytes=(?P<n>[0-9]+) sha256=(?P<sha>[0-9a-f]{64})\Z",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class GroupEntry:
    """One member of a group payload.

    Inline members (raw blocks) carry their exact bytes in ``data``;
    archived members are referenced by their payload ``ref`` key, with the
    referenced payload's size and sha256.
    """

    unit_id: str
    type: str
    size: int
    sha256: str
    data: bytes | None = None
    ref: str | None = None


def encode_group_payload(group_id: str, level: int, entries: list[GroupEntry]) -> bytes:
    """Serialise a group: a header line, then per member one ``@@`` line and,
    for inline members, exactly ``bytes=`` raw bytes and a newline.

    Length prefixes make the format exact for any content (a member may
    itself contain ``@@`` lines) while staying readable with ``cat``/``sed``.
    """
    parts = [_MAGIC + f"{group_id} level={level} members={len(entries)}\n".encode("ascii")]
    for e in entries:
        ref = f" ref={e.ref}" if e.ref else ""
        parts.append(
            f"@@ {e.unit_id} {e.type}{ref} bytes={e.size} sha256={e.sha256}\n".encode("ascii")
        )
        if e.ref is None:
            assert e.data is not None
            parts.append(e.data)
            parts.append(b"\n")
    return b"".join(parts)


def parse_group_payload(key: str, data: bytes) -> tuple[str, int, list[GroupEntry]]:
    """Parse and verify a group payload; inline members' sha256 are checked.

    Raises
    ------
    PayloadIntegrityError
        If the payload is not in the format written by
        :func:`encode_group_payload` or a member's bytes do not match.
    """
    if not data.startswith(_MAGIC):
        raise PayloadIntegrityError(key, "is not a group payload (missing VISTA-ARCHIVE header)")
    nl = data.find(b"\n")
    head = data[len(_MAGIC) : nl].decode("ascii", "replace").split()
    try:
        gid = head[0]
        level = int(head[1].removeprefix("level="))
        count = int(head[2].removeprefix("members="))
    except (IndexError, ValueError):
        raise PayloadIntegrityError(key, "has a malformed group header") from None
    pos = nl + 1
    entries: list[GroupEntry] = []
    for _ in range(count):
        end = data.find(b"\n", pos)
        if end < 0:
            raise PayloadIntegrityError(key, "ends inside a member header")
        m = _ENTRY.match(data[pos:end])
        if not m:
            raise PayloadIntegrityError(key, f"has a malformed member header at byte {pos}")
        pos = end + 1
        n = int(m.group("n"))
        sha = m.group("sha").decode("ascii")
        ref = m.group("ref")
        if ref is None:
            body = data[pos : pos + n]
            if len(body) != n or data[pos + n : pos + n + 1] != b"\n":
                raise PayloadIntegrityError(key, f"member {m.group('id').decode()} is truncated")
            if sha256_hex(body) != sha:
                raise PayloadIntegrityError(
                    key, f"member {m.group('id').decode()} does not match its sha256"
                )
            pos += n + 1
            entries.append(
                GroupEntry(m.group("id").decode(), m.group("type").decode(), n, sha, body)
            )
        else:
            entries.append(
                GroupEntry(
                    m.group("id").decode(), m.group("type").decode(), n, sha, None, ref.decode()
                )
            )
    if pos != len(data):
        raise PayloadIntegrityError(key, "has trailing bytes after its last member")
    return gid, level, entries
