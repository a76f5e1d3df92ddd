"""The differential test's expected view: the driver's record of a run, the rendering the
model's observation stands for (texts from :mod:`._diff_texts`), compared with the engine's."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._diff_texts import (
    PRIMING,
    SHORT_NOTICES,
    Counter,
    Row,
    _pad_of,
    _plain,
    _sha,
    call_payload,
    context_tools,
    dashboard_text,
    group_payload,
    handle,
    id_ranges,
    id_summary,
    management_dashboard,
    member_stub,
    message_cost,
    notice_fields,
    offload,
    orphan_prefix,
    pending,
    protocol_text,
    to_anthropic,
    tombstone,
    tool_use_renames,
    tools_cost,
)

__all__ = ["Shadow", "ShadowBlock", "Expected", "expected_view", "compare_view"]


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
        fixed = (tools_cost(tools, counter) + PRIMING
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
