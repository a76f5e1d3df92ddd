"""The model side of the differential test: each applied operation translated
into the operation language of the Coq model's executable (with the costs it
needs, measured here with the tokenizer on the engine's documented text forms),
the engine's state abstracted into the model's observation format, and the two
observation lines compared field by field (``theory/coq/engine/FORMAT.md``).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from ._dashboard import DASHBOARD_ROLE, DashboardConfig, DashboardRenderer, LedgerRow
from ._diff_texts import PRIMING as REPLY_PRIMING
from ._diff_texts import Counter, Row, dashboard_cost, management_bound, message_cost, tools_cost
from ._diff_texts import handle as _handle
from ._diff_texts import id_ranges as _id_ranges
from ._diff_texts import member_stub as _member_stub
from ._diff_texts import offload as _offload
from ._diff_texts import orphan_prefix as _orphan_prefix
from ._diff_texts import pending as _pending
from ._diff_texts import tombstone as _tombstone
from ._errors import (
    BlockSpecError,
    BlockStateError,
    BudgetConfigError,
    ProtocolOrderError,
    UnknownBlockError,
    WorkspaceArgumentError,
)
from ._handles import (
    SHORTEST_REJECTION,
    find_handles,
    parse_group_payload,
    parse_handle,
    placeholder_kind,
    rejection_text,
)
from ._spec import BlockRange, BlockRef, GroupRef, parse_block_spec
from ._store import sha256_hex

__all__ = [
    "byte_token",
    "ModelTranslator",
    "engine_observation",
    "compare_observations",
    "parse_observation",
    "run_model",
    "refusal_reason",
    "model_requests",
    "guard_offloads",
]

_SAFE = re.compile(r"[A-Za-z0-9_.-]+\Z")


def byte_token(data: bytes) -> str:
    """The model's token for payload bytes: 16 hex digits of the sha256 and the length."""
    return f"{sha256_hex(data)[:16]}-{len(data)}"


def refusal_reason(exc: BaseException | None, detail: str = "") -> str:
    """The model's refusal reason for an engine refusal (``refused`` when the
    engine's reason is one the model does not distinguish)."""
    text = detail or str(exc or "")
    if isinstance(exc, BudgetConfigError):
        return "refused:floor"
    if isinstance(exc, ProtocolOrderError):
        if "unanswered tool calls" in text:
            return "refused:pending"
        return "refused:not_pending"
    table = (
        ("does not exist", "unknown"),
        ("no longer exists", "unknown"),
        ("was deleted", "deleted"),
        ("is archived inside", "in_group"),
        ("is pinned", "pinned"),
        ("still waiting for results", "has_pending"),
        ("would leave its tombstone no room", "floor"),
        ("is not archived", "not_archived"),
        ("selects no live blocks", "empty"),
    )
    if isinstance(exc, (BlockStateError, UnknownBlockError)) or exc is None:
        for needle, why in table:
            if needle in text:
                return f"refused:{why}"
    return "refused"


# ---------------------------------------------------------------- translation


class ModelTranslator:
    """Writes the model's operation lines for one run, measuring every cost the
    model needs on texts written by :mod:`._diff_texts` (the paper's formats,
    sharing no code with the engine's formatters) and counted with the tokenizer
    library directly (:class:`._diff_texts.Counter`), never from the engine's
    caches or accounting.

    Parameters
    ----------
    tok : object
        The run's tokenizer (its ``name`` picks the independent counter;
        ``approx`` and ``cl100k_base`` are supported, any other tokenizer is
        used as given).
    budget, hard : int
        The workspace's budget ``B`` and hard limit.
    root : str
        The store's display root (payload paths are ``<root>/<key>``).
    """

    def __init__(self, tok: Any, budget: int, hard: int, root: str) -> None:
        self.tok = tok
        name = getattr(tok, "name", "")
        self.counter: Any = Counter(name) if name in ("approx", "cl100k_base") else tok
        self.budget = budget
        self.hard = hard
        self.root = root
        self.ids: dict[str, str] = {}
        self.cache_prefix = False  # the engine's options, read by init_line
        self.keep_pending = False

    def cid(self, call_id: str) -> str:
        """A safe token for an engine call id (unsafe ids get ``c<k>``)."""
        if _SAFE.match(call_id):
            return call_id
        return self.ids.setdefault(call_id, f"c{len(self.ids) + 1}.x")

    def mt(self, msg: Mapping[str, Any]) -> int:
        """Tokens of one message, counted independently of the engine."""
        return message_cost(msg, self.counter)

    # ------------------------------------------------------------ init
    def init_line(self, ws: Any, dash: int) -> str:
        r = ws.render()
        tools = list(r.tools)
        proto = 0
        if getattr(ws, "protocol", True) and r.messages and r.messages[0].get("role") == "system":
            proto = self.mt(r.messages[0])
        fixed = tools_cost(tools, self.counter) + REPLY_PRIMING + proto
        cfg = getattr(ws, "dashboard_config", None)
        compact = bool(getattr(cfg, "compact", False))
        if isinstance(self.counter, Counter):
            mgmt = management_bound(self.budget, self.counter, compact=compact)
            dfloor = dashboard_cost([Row("B1", 0, 0, "tool_result", 0, "-", "visible")], [],
                                    budget=self.budget, overhead=0, conversation=0,
                                    counter=self.counter, compact=compact)
        else:  # a tokenizer the independent counter does not know: the engine's renderer
            renderer = DashboardRenderer(self.tok, cfg or DashboardConfig())
            mgmt = renderer.worst_case_management_bytes(self.budget)
            dfloor = renderer.ledger(
                (LedgerRow("B1", 0, 0, "tool_result", 0, "-", "visible"),), (),
                budget=self.budget, overhead=0, conversation=0,
            ).message_tokens
        self.cache_prefix = bool(getattr(ws, "cache_prefix", False))
        cache_prefix = int(self.cache_prefix)
        self.keep_pending = bool(getattr(ws, "keep_pending", False))
        kp = ""
        if self.keep_pending:
            # the notice reserve per pending call: what the shortest rejection notice
            # costs beyond a pending placeholder (FORMAT.md, nres)
            def tool(text: str) -> int:
                return self.mt({"role": "tool", "tool_call_id": "", "content": text})

            nres = max(0, tool(SHORTEST_REJECTION) - tool(_pending("")))
            kp = f" keep_pending=1 nres={nres}"
        return (
            f"init budget={self.budget} hard={self.hard} fixed={fixed} mgmt={mgmt} "
            f"dfloor={dfloor} dash={dash} cache_prefix={cache_prefix}{kp}"
        )

    # ------------------------------------------------------------ registration
    def plain_line(self, kind: str, text: str, pinned: bool, dash: int) -> str:
        c = self.mt({"role": kind, "content": text})
        data = byte_token(text.encode("utf-8"))
        return f"{kind} pin={int(pinned)} data={data} c={c} dash={dash}"

    def call_line(self, content: str | None, calls: Sequence[tuple[str, str, str]],
                  data: bytes, dash: int) -> str:
        msg = {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in calls
            ],
        }
        c = self.mt(msg)
        pend = ",".join(
            str(self.mt({"role": "tool", "tool_call_id": i, "content": _pending(i)}))
            for i, _, _ in calls
        )
        ids = ",".join(self.cid(i) for i, _, _ in calls)
        return f"call ids={ids} data={byte_token(data)} c={c} pend={pend} dash={dash}"

    def _pair(self, bid: str, call_id: str, name: str | None, parent: str | None,
              text: str) -> str:
        tool = self.mt({"role": "tool", "tool_call_id": call_id, "content": text})
        user = self.mt({"role": "user", "content": _orphan_prefix(bid, name, parent) + text})
        return f"{tool}/{user}"

    def result_line(self, *, bid: str, call_id: str, name: str | None, parent: str | None,
                    data: bytes, notice: str, dashes: Sequence[int]) -> str:
        text = data.decode("utf-8")
        sha = sha256_hex(data)
        p = _offload(bid, path=f"{self.root}/{bid}.txt", size=len(data), sha=sha)
        t = self.mt({"role": "tool", "tool_call_id": call_id, "content": _tombstone(bid)})
        return (
            f"result id={self.cid(call_id)} data={byte_token(data)} "
            f"c={self._pair(bid, call_id, name, parent, text)} "
            f"p={self._pair(bid, call_id, name, parent, p)} t={t} "
            f"notice={byte_token(notice.encode('utf-8'))} "
            f"n={self._pair(bid, call_id, name, parent, notice)} "
            f"dash={','.join(str(x) for x in dashes)}"
        )

    # ------------------------------------------------------------ actions
    def handle_pair(self, unit: str, *, level: int, size: int, sha: str, replacement: str,
                    members: Sequence[str], first: Any, blocks_after: Sequence[Any]) -> str:
        """Costs of the handle a unit leaves at its first position (``tool/user``)."""
        path = f"{self.root}/{unit}.txt"
        text = _handle(
            unit, level=level, path=path, size=size, sha=sha, replacement=replacement,
            members=_id_ranges(list(members)) if unit[0] == "G" else "",
        )
        if first.type.value == "tool_result":
            tool = self.mt({"role": "tool", "tool_call_id": first.tool_call_id, "content": text})
            if unit[0] == "G":
                user = self.mt({"role": "user", "content": text})
            else:
                user = self.mt(
                    {"role": "user",
                     "content": _orphan_prefix(first.id, first.name, first.parent) + text}
                )
            return f"{tool}/{user}"
        role = "user" if unit[0] == "G" else first.role
        c = self.mt({"role": role, "content": text})
        return f"{c}/{c}"

    def stubs(self, group: str, leaves: Sequence[int], blocks_after: Sequence[Any]) -> str:
        out = []
        for s in leaves[1:]:
            b = blocks_after[s - 1]
            if b.type.value != "tool_result" or b.parent is None:
                continue
            msg = {"role": "tool", "tool_call_id": b.tool_call_id,
                   "content": _member_stub(b.id, group)}
            out.append(f"{b.id}:{self.mt(msg)}")
        return ",".join(out)


def guard_offloads(
    blocks: Sequence[Any], before: Mapping[str, str], effects: Mapping[str, Any]
) -> tuple[tuple[str, ...], str | None]:
    """The blocks one result's guard moved to offloaded, in the guard's order.

    The order is the one the engine's event log records and the model's guard
    prints: under ``cache_prefix=True`` the results the management rendering
    would not show go first (Algorithm 1 with the cached prefix kept), so it is
    not the positions' order. Returns the ids and, when the event log names a
    set other than the blocks whose status changed, a sentence saying so (the
    ids are then the changed blocks in position order).

    Parameters
    ----------
    blocks : sequence of Block
        The workspace's blocks after the result.
    before : mapping
        Each block's status value before the result.
    effects : mapping
        The result's event effects (``offloaded``: the guard's list).

    Returns
    -------
    tuple
        ``(ids, problem)``; ``problem`` is None when the log and the statuses agree.
    """
    moved = [
        x.id for x in blocks
        if x.status.value == "offloaded_placeholder"
        and before.get(x.id) != "offloaded_placeholder"
    ]
    logged = [str(x) for x in effects.get("offloaded") or ()]
    if not logged or sorted(logged) == sorted(moved):
        return tuple(logged or moved), None
    return tuple(moved), (
        f"the event log says the guard offloaded {','.join(logged)}, but the blocks "
        f"moved to offloaded are {','.join(moved) or 'none'}"
    )


def resolve_spec(spec: Any, blocks: Sequence[Any], groups: Mapping[str, Any]
                 ) -> list[str] | None:
    """The explicit unit list a block spec names (the model takes unit lists),
    or None when the spec is refused by rules the model does not state (its
    grammar, a range past the newest block, a range cutting a group)."""
    try:
        items = parse_block_spec(spec)
    except (BlockSpecError, WorkspaceArgumentError):
        return None
    n = len(blocks)
    units: dict[str, int] = {}

    def top_of(gid: str) -> str:
        while groups[gid].parent is not None:
            gid = groups[gid].parent
        return gid

    def leaves(uid: str) -> list[int]:
        if uid[0] == "B":
            return [int(uid[1:])]
        out: list[int] = []
        for m in groups[uid].members:
            out.extend(leaves(m))
        return out

    for item in items:
        if isinstance(item, BlockRef):
            units.setdefault(str(item), item.n)
        elif isinstance(item, GroupRef):
            gid = str(item)
            pos = min(leaves(gid)) if gid in groups else 10**12 + item.n
            units.setdefault(gid, pos)
        else:
            assert isinstance(item, BlockRange)
            if item.stop > n:
                return None
            for s in range(item.start, item.stop + 1):
                b = blocks[s - 1]
                if b.status.value == "deleted":
                    continue
                if b.group is None:
                    units.setdefault(b.id, s)
                    continue
                top = top_of(b.group)
                lv = leaves(top)
                if min(lv) < item.start or max(lv) > item.stop:
                    return None
                units.setdefault(top, min(lv))
    # In the order the spec names them (the engine checks them in that order and
    # reports the first refusal; the model sorts accepted units itself).
    return list(units)


# ---------------------------------------------------------------- observation


def _status(b: Any) -> str:
    s = b.status.value
    return "offloaded" if s == "offloaded_placeholder" else s


def engine_observation(
    *,
    status: str,
    ws: Any,
    rendering: Any,
    tokens: int,
    store: Mapping[str, bytes],
    guard: str,
    offloaded: Sequence[str],
    recovered: str,
    tok: Any,
    translator: ModelTranslator,
) -> str:
    """The engine's state in the model's observation format. The figures are the
    ones the engine shows the agent (the dashboard's budget line in normal mode,
    the rendering's fields in overflow) and the rendering's structure is read
    back from its messages."""
    r = rendering
    blocks = ws.blocks
    groups = ws.groups
    mode = "normal" if r.mode == "normal" else "management"
    figures = _figures(r)
    if figures is None:
        total, overhead, conversation, dashboard = (
            r.candidate_tokens, r.overhead_tokens, r.conversation_tokens, r.dashboard_tokens,
        )
    else:
        total, overhead, conversation, dashboard = figures
    rows = _ledger_tokens(r)
    units = []
    for u in r.block_tokens:
        t = rows.get(u, r.block_tokens[u])
        if u[0] == "G":
            units.append(f"{u}:archived:{groups[u].level}:{t}")
        else:
            b = blocks[int(u[1:]) - 1]
            units.append(f"{u}:{_status(b)}:{b.level}:{t}")
    render = render_structure(r, blocks, groups, translator)
    store_ = _store_structure(store)
    return (
        f"status={status} mode={mode} tokens={tokens} total={total} overhead={overhead} "
        f"conversation={conversation} dashboard={dashboard} guard={guard} "
        f"offloaded={','.join(offloaded) or '-'} recovered={recovered or '-'} "
        f"units={','.join(units) or '-'} render={','.join(render) or '-'} "
        f"store={','.join(store_) or '-'}"
    )


def _figures(r: Any) -> tuple[int, int, int, int] | None:
    if r.mode != "normal":
        return None
    m = re.search(r"\(~([0-9,]+) / [0-9,]+ tokens\)", r.dashboard)
    s = re.search(
        r"overhead ~([0-9,]+) \| conversation ~([0-9,]+) \| dashboard ~([0-9,]+)", r.dashboard
    )
    if m is None or s is None:
        return None

    def n(x: str) -> int:
        return int(x.replace(",", ""))

    return n(m.group(1)), n(s.group(1)), n(s.group(2)), n(s.group(3))


def _ledger_tokens(r: Any) -> dict[str, int]:
    from ._dashboard import parse_ledger_rows

    if r.mode != "normal":
        return {}
    return {row.unit_id: row.tokens for row in parse_ledger_rows(r.dashboard)}


def _role(m: Mapping[str, Any]) -> str:
    if m.get("tool_calls"):
        return "calls"
    return str(m.get("role"))


def protocol_offset(r: Any) -> int:
    """1 if the rendering starts with the protocol message, else 0."""
    msgs = r.messages
    first = msgs[0] if msgs else {}
    text = str(first.get("content", ""))
    return int(first.get("role") == "system" and text.startswith("CONTEXT MANAGEMENT PROTOCOL"))


def render_structure(
    r: Any, blocks: Sequence[Any], groups: Mapping[str, Any], tr: ModelTranslator
) -> list[str]:
    """``<pos>/<form>/<role>`` for every rendered message after the protocol
    message, matched to block positions in order (positions render in block
    order; explicit IDs in handles, stubs and tombstones, contents by equality)."""
    msgs = list(r.messages)[protocol_offset(r):]
    out: list[str] = []
    ptr = 0  # next block position a message may belong to
    # keep_pending: a management rendering ends with the batch still waiting for
    # results (the newest calling block, one message per position after it, a
    # placeholder per pending call), then the dashboard; its calling message is
    # placed by where the batch starts (an older call may have the same ids).
    owner = batch_at = 0
    if r.mode != "normal" and tr.keep_pending:
        n_pend = sum(placeholder_kind(str(m.get("content") or "")) == "pending" for m in msgs)
        calls = [s for s in range(1, len(blocks) + 1) if blocks[s - 1].type.value == "tool_call"]
        if n_pend and calls:
            owner = calls[-1]
            batch_at = len(msgs) - 1 - n_pend - (len(blocks) - owner) - 1
    # A management rendering with cache_prefix shows a leading run of whole units,
    # every visible position in it rendered; once a visible position was passed
    # without being rendered the run is over, and only pinned positions follow
    # (until the kept batch, whose positions all render).
    run_over = [r.mode == "normal" or not tr.cache_prefix]
    for i, m in enumerate(msgs):
        role = _role(m)
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        if owner and i == batch_at and m.get("tool_calls"):
            out.append(f"B{owner}/content/{role}")
            ptr = owner
            run_over[0] = False  # every position of the kept batch renders
            continue
        if i == len(msgs) - 1 and role == DASHBOARD_ROLE and text.startswith(
            "<context_workspace_status>"
        ):
            out.append(f"dash/dashboard/{role}")
            continue
        kind = placeholder_kind(text)
        if kind == "pending":
            cid = text[len("[no result registered for "):-1]
            out.append(f"pending.{tr.cid(cid)}/pending/{role}")
            continue
        # a management rendering with cache_prefix also shows a leading run of
        # visible positions (FORMAT.md, "The budget guard and the management rendering"),
        # with keep_pending the batch still waiting for results
        pos, form = _classify(m, text, kind, blocks, groups, ptr,
                              r.mode == "normal" or tr.cache_prefix or tr.keep_pending,
                              None if r.mode == "normal" else run_over)
        if pos is None:
            out.append(f"?/unknown/{role}")
            continue
        out.append(f"B{pos}/{form}/{role}")
        ptr = pos
    return out


def _classify(m: Mapping[str, Any], text: str, kind: str | None, blocks: Sequence[Any],
              groups: Mapping[str, Any], ptr: int, normal: bool,
              run_over: list[bool] | None = None) -> tuple[int | None, str]:
    if kind in ("handle", "offload"):
        h = parse_handle(text)
        if h is None:
            hs = find_handles(text)
            h = hs[0] if hs else None
        if h is not None:
            if h.unit_id[0] == "B":
                n = int(h.unit_id[1:])
                return n, ("placeholder" if kind == "offload" else f"handle.{h.unit_id}")
            # a group's handle sits at its first live leaf at or after ptr
            for s in range(ptr + 1, len(blocks) + 1):
                b = blocks[s - 1]
                if b.group is not None and _top(b.group, groups) == h.unit_id:
                    return s, f"handle.{h.unit_id}"
    if kind is None and text.startswith("[tool result B"):
        # a result in user form: its block ID is in the orphan prefix
        n = int(text[len("[tool result B"):].split(" ", 1)[0].split("]", 1)[0])
        rest = text.split("]\n", 1)[1] if "]\n" in text else ""
        inner = placeholder_kind(rest)
        if inner == "offload":
            return n, "placeholder"
        if inner == "handle":
            hs = find_handles(rest)
            return n, f"handle.{hs[0].unit_id}" if hs else "handle.?"
        if inner == "rejection":
            return n, "notice"
        return n, "content"
    if kind == "member_stub":
        n = int(text[2:].split(" ", 1)[0])
        gid = text.rsplit(" ", 1)[1].rstrip("]")
        return n, f"stub.{gid}"
    if kind == "tombstone":
        return int(text[2:].split(" ", 1)[0]), "tombstone"
    # content or a rejection notice: the next block position that renders it (every
    # visible position renders, in order; the management rendering shows pinned ones)
    shown = ("visible", "pinned") if normal else ("pinned",)
    for s in range(ptr + 1, len(blocks) + 1):
        b = blocks[s - 1]
        if b.status.value not in shown:
            continue
        hit = _renders(m, text, b)
        if run_over is not None and b.status.value == "visible":
            if run_over[0]:
                continue  # past the shown prefix: a visible position is not rendered
            if not hit:
                run_over[0] = True  # this visible position was not rendered
                continue
        if hit:
            return s, ("notice" if kind == "rejection" and m.get("role") == "tool" else "content")
    return None, ""


def _renders(m: Mapping[str, Any], text: str, b: Any) -> bool:
    """Whether message ``m`` (``text`` its string content) is block ``b`` shown
    whole: the same calls, the result of the same call, or the same text and role."""
    if m.get("tool_calls"):
        return b.type.value == "tool_call" and [c["id"] for c in m["tool_calls"]] == list(
            b.call_ids)
    if m.get("role") == "tool":
        return b.type.value == "tool_result" and b.tool_call_id == m.get("tool_call_id")
    return b.content == text and b.role == m.get("role") and b.type.value != "tool_result"


def _top(gid: str, groups: Mapping[str, Any]) -> str:
    while groups[gid].parent is not None:
        gid = groups[gid].parent
    return gid


#: Each payload's entry of the store field, by (key, bytes): the entry is a pure
#: function of the two, and a long session's store holds thousands of payloads
#: that do not change, so the observation after every operation parses and hashes
#: each payload once instead of once per operation (the bytes are still read back
#: and compared whole: a dict look-up by bytes compares them).
_ENTRY_MEMO: dict[tuple[str, bytes], str] = {}
_ENTRY_MEMO_MAX = 20_000  # entries
_ENTRY_MEMO_BYTES = [0, 64 << 20]  # bytes held, most held before it is cleared


def _store_structure(store: Mapping[str, bytes]) -> list[str]:
    keys = list(store)

    def order(k: str) -> tuple[int, int]:
        stem = k.rsplit(".", 1)[0]
        return (0 if stem[0] == "B" else 1, int(stem[1:]) if stem[1:].isdigit() else 0)

    memo, held = _ENTRY_MEMO, _ENTRY_MEMO_BYTES
    if len(memo) > _ENTRY_MEMO_MAX or held[0] > held[1]:
        memo.clear()
        held[0] = 0
    out = []
    for key in sorted(keys, key=order):
        data = store[key]
        hit = memo.get((key, data))
        if hit is None:
            hit = memo[(key, data)] = _store_entry(key, data)
            held[0] += len(data)
        out.append(hit)
    return out


def _store_entry(key: str, data: bytes) -> str:
    """``key:<token>``, or for a group payload ``key:[<entry>;...]``."""
    if not key.startswith("G"):
        return f"{key}:{byte_token(data)}"
    try:
        _, _, entries = parse_group_payload(key, data)
    except Exception:  # noqa: BLE001 - a corrupt payload shows as its token
        return f"{key}:{byte_token(data)}"
    parts = [
        f"{e.unit_id}={byte_token(e.data)}" if e.data is not None else f"{e.unit_id}>{e.ref}"
        for e in entries
    ]
    return f"{key}:[{';'.join(parts)}]"


# ---------------------------------------------------------------- comparison

_FIELDS = (
    "status", "mode", "tokens", "total", "overhead", "conversation", "dashboard", "guard",
    "offloaded", "recovered", "units", "render", "store",
)


def parse_observation(line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for tok in line.split(" "):
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def compare_observations(engine: str, model: str) -> list[str]:
    """The fields on which two observation lines disagree (``field: engine vs
    model``), every one exactly: in management mode too the model charges the
    management dashboard the cost the driver counted on its text (``mdash``,
    ``theory/coq/engine/FORMAT.md``), so the request's ``tokens`` agree to the
    token. Only a refusal the engine words in a way the model does not name
    (``refused``) matches any of the model's refusal reasons."""
    e, m = parse_observation(engine), parse_observation(model)
    out = []
    for f in _FIELDS:
        ev, mv = e.get(f, "?"), m.get(f, "?")
        if f == "status" and (ev == "refused" and mv.startswith("refused")):
            continue  # the engine's reason is one the model does not name
        if ev != mv:
            out.append(f"{f}: engine {ev} vs model {mv}")
    return out


def _ids(field: str) -> list[str]:
    return [] if field in ("", "-") else field.split(";")


def model_requests(line: str) -> list[tuple[Any, str]]:
    """The concrete requests a model observation's rendering stands for.

    From the ``request`` field (the rendered messages as the wire sees them) an
    OpenAI chat request, and from the ``turns`` field (the model's own Anthropic
    projection, ``anthropic_request`` of ``Protocol.v``) an Anthropic Messages
    request, each ``(request, protocol)``. The protocol message heads both (in
    Anthropic's ``system`` field). Texts name the position they stand for; call
    ids are the model's (``c<n>``). ``[]`` for a line without a workspace.
    """
    obs = parse_observation(line)
    if obs.get("mode", "-") == "-" or "request" not in obs or "turns" not in obs:
        return []
    render = [] if obs.get("render", "-") == "-" else obs["render"].split(",")
    wire = [] if obs["request"] == "-" else obs["request"].split(",")
    openai: list[dict[str, Any]] = [{"role": "system", "content": "[protocol message]"}]
    for i, w in enumerate(wire):
        text = f"[{render[i]}]" if i < len(render) else f"[message {i}]"
        kind, _, ids = w.partition(":")
        if kind == "calls":
            openai.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c, "type": "function", "function": {"name": "tool", "arguments": "{}"}}
                for c in _ids(ids)]})
        elif kind == "tool":
            openai.append({"role": "tool", "tool_call_id": ids, "content": text})
        else:
            openai.append({"role": kind, "content": text})
    turns = [] if obs["turns"] == "-" else obs["turns"].split(",")
    messages: list[dict[str, Any]] = []
    for t in turns:
        side, results, uses, texts = t.split(":")
        blocks: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": c, "content": "[result]"}
            for c in _ids(results)]
        blocks += [{"type": "text", "text": "[text]"} for _ in range(int(texts))]
        blocks += [{"type": "tool_use", "id": c, "name": "tool", "input": {}}
                   for c in _ids(uses)]
        messages.append({"role": side, "content": blocks})
    anthropic = {"system": "[protocol message]", "messages": messages}
    return [(openai, "openai"), (anthropic, "anthropic")]


def run_model(executable: str, lines: Sequence[str], *, timeout: float = 60.0) -> list[str]:
    """Feed operation lines to the model's executable; its observation lines."""
    proc = subprocess.run(
        [executable],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"the engine model exited with status {proc.returncode}: {proc.stderr.strip()[:300]}"
        )
    return [ln for ln in proc.stdout.splitlines() if ln.strip()]


def rejection_notice_for(current: int, limit: int, attempted: int, cap: int) -> str:
    return rejection_text(current=current, limit=limit, attempted=attempted, cap=cap)
