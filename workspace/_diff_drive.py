"""The driver of the differential test: apply an operation sequence to an
engine, write each operation's line in the model's language with the costs it
needs, and after every operation take the abstraction of the engine's state
(``_diff_observe``: recounted, never trusted; paper, Methodology: "Workspace
invariants", "Structure preservation", "Dashboard format"). The structural part
of the observation (units, statuses, levels, mode, guard decisions, store keys)
is what the model's executable is compared with.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from ._dashboard import DASHBOARD_ROLE, DashboardConfig
from ._diff_model import (
    ModelTranslator,
    byte_token,
    engine_observation,
    guard_offloads,
    refusal_reason,
    resolve_spec,
)
from ._diff_observe import observe
from ._diff_ops import OperationSequence
from ._diff_run import Run, Step, View
from ._diff_texts import PRIMING as REPLY_PRIMING
from ._diff_texts import Counter, message_cost, notice_fields, tools_cost
from ._diff_view import Shadow
from ._disk_store import DiskStore
from ._errors import WorkspaceError
from ._events import last_event
from ._handles import placeholder_kind, rejection_text
from ._protocol import CONTEXT_TOOL_NAMES
from ._store import MemoryStore, sha256_hex
from ._tokenizers import get_tokenizer

__all__ = ["run_sequence", "EngineFactory", "default_engine_factory"]

EngineFactory = Callable[..., Any]


def default_engine_factory(budget: int, **config: Any) -> Any:
    """The engine under test by default: the reference :class:`Workspace`."""
    from ._engine import Workspace

    return Workspace(budget, **config)


# ---------------------------------------------------------------- messages


def _payload_bytes_of_call(text: str | None, calls: Sequence[Sequence[str]]) -> bytes:
    """A tool-call block's payload as the engine documents it (compact, key-sorted
    JSON of the content and the OpenAI tool calls), written out here independently."""
    obj = {
        "content": text,
        "tool_calls": [
            {"function": {"arguments": a, "name": n}, "id": i, "type": "function"}
            for i, n, a in calls
        ],
    }
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _anthropic_call(text: str | None, calls: Sequence[Sequence[str]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for cid, name, args in calls:
        content.append({"type": "tool_use", "id": cid, "name": name, "input": json.loads(args)})
    return {"role": "assistant", "content": content}


class _Driver:
    """Applies operations, keeps the driver's own record of what it registered,
    and writes each operation's line in the model's language
    (``theory/coq/engine/FORMAT.md``) and the engine's observation line."""

    def __init__(self, seq: OperationSequence, factory: EngineFactory, tmp: str) -> None:
        cfg = seq.config
        self.cfg = cfg
        self.budget = int(cfg["budget"])
        if cfg["store"] == "disk":
            store: Any = DiskStore(tmp)
        else:
            store = MemoryStore(root="mem://archive")
        self.ws = factory(
            self.budget,
            tokenizer=cfg["tokenizer"],
            store=store,
            protocol=cfg["protocol"],
            cache_prefix=cfg["cache_prefix"],
            keep_pending=bool(cfg.get("keep_pending", False)),
            **({} if cfg.get("hard_limit") is None else {"hard_limit": cfg["hard_limit"]}),
            **({} if cfg.get("dashboard") is None
               else {"dashboard": DashboardConfig(**cfg["dashboard"])}),
        )
        self.tok: Any = _CountCache(get_tokenizer(cfg["tokenizer"]))
        # The independent record and counter the expected texts are written from.
        self.counter = Counter(cfg["tokenizer"])
        self.shadow = Shadow(self.ws.store.root)
        self.views: list[View | None] = []
        self.out_of_prompt: set[str] = set()  # units the shadow knows are archived
        self.anthropic = cfg["format"] == "anthropic"
        self.request_check: Callable[[Any, str], Any] | None = None
        # The model has both cache_prefix configurations (FORMAT.md): every
        # line of every run is compared.
        self.modelled = True
        self.prefix_only = False
        hard = int(getattr(self.ws, "hard_limit", 2 * self.budget))
        self.tr = ModelTranslator(self.tok, self.budget, hard, self.ws.store.root)
        # Independent record: block number -> expected payload bytes (None: the
        # projection re-serialised it; checked by structure instead).
        self.expected: dict[int, bytes | None] = {}
        self.n_blocks = 0
        self.user_seen = False
        # What the guard's per-result cap is made of, counted here (paper, "Context
        # Stream"; the model's decide): the pinned blocks' messages and, per call
        # block, its call message; the fixed costs and the smallest dashboard come
        # from the model's init line.
        self.pinned_cost = 0
        self.call_cost: dict[str, int] = {}
        self.cap_terms: dict[str, int] = {}
        self.seen_groups: set[str] = set()
        self.max_group = 0
        self.call_name: dict[str, str] = {}  # call id -> function name (latest call)
        self.call_args: dict[str, str] = {}
        self.last_visible_cost: dict[str, int] = {}
        self._r_key: Any = None
        self._r: Any = None
        self._store_bytes: dict[str, bytes] | None = None
        self._tools_key: Any = None
        self._tools_cost = 0
        self._rec_sig: dict[str, Any] = {}
        self.model_lines: list[str] = []
        self.engine_lines: list[str] = []
        self.line_step: list[int] = []  # which operation each model line belongs to
        if self.modelled:
            init = self.tr.init_line(self.ws, self.dash())
            self.cap_terms = {k: int(v) for k, v in re.findall(r"(fixed|dfloor)=([0-9]+)", init)}
            self._emit(-1, init, "ok", "-", ())

    # ------------------------------------------------------------ measuring
    def dash(self) -> int:
        """The normal (candidate) dashboard message's tokens, counted here on its text
        (only for the model's lines: 0 when the run is outside the model)."""
        if not self.modelled:
            return 0
        ws = self.ws
        cand = getattr(ws, "_candidate", None)
        if callable(cand):
            text = cand().dashboard
        else:
            r = self.rendering()
            if r.mode != "normal":
                return int(r.dashboard_tokens)
            text = r.dashboard
        return message_cost({"role": DASHBOARD_ROLE, "content": text}, self.counter)

    def rendering(self) -> Any:
        """The engine's rendering now (rendered once per state)."""
        key = (self.ws.state_hash(), self.ws.event_count)
        if self._r_key != key:
            self._r_key = key
            self._r = self.ws.render()
            self._store_bytes = None
        return self._r

    def store_bytes(self) -> dict[str, bytes]:
        """Every payload in the store, read back (once per state)."""
        self.rendering()
        if self._store_bytes is None:
            st = self.ws.store
            self._store_bytes = {k: st.get(k) for k in st.keys()}
        return self._store_bytes

    def recount(self, r: Any) -> int:
        """The request's tokens recounted from its messages and tool schemas."""
        if self._tools_key is not r.tools:
            self._tools_key = r.tools
            self._tools_cost = tools_cost(list(r.tools), self.counter)
        messages: int = sum(message_cost(m, self.counter) for m in r.messages)
        return messages + self._tools_cost + REPLY_PRIMING

    def _emit(self, index: int, line: str, status: str, guard: str,
              offloaded: tuple[str, ...], recovered: str = "") -> None:
        if not self.modelled:
            return
        r = self.rendering()
        if index < 10**6 and r.mode != "normal":
            # The management dashboard's cost, counted here on the text the agent
            # sees (FORMAT.md, mdash); in a normal rendering the model keeps the
            # previous one, which only a management rendering uses.
            md = message_cost({"role": DASHBOARD_ROLE, "content": r.dashboard}, self.counter)
            line = f"{line} mdash={md}"
        self.model_lines.append(line)
        self.line_step.append(index)
        self.views.append(None if index >= 10**6 else self._view(r))
        self.engine_lines.append(
            engine_observation(
                status=status, ws=self.ws, rendering=r, guard=guard,
                offloaded=offloaded, recovered=recovered, tok=self.tok, translator=self.tr,
                tokens=self.recount(r), store=self.store_bytes(),
            )
        )

    def _view(self, r: Any) -> View:
        ws = self.ws
        a = ws.render(format="anthropic")
        req: dict[str, Any] = {"messages": [_plain(m) for m in a.messages]}
        if a.system:
            req["system"] = [_plain(b) for b in a.system]
        if a.tools:
            req["tools"] = [_plain(t) for t in a.tools]
        reads: dict[str, bytes | None] = {}
        root = ws.store.root
        paths = {f"{root}/{k}" for k in ws.store.keys()}
        for m in r.messages:
            c = m.get("content")
            if isinstance(c, str) and "path=" in c:
                paths.update(_PATH.findall(c))
        for path in sorted(paths):
            try:
                reads[path] = ws.read_path(path)
            except WorkspaceError:
                reads[path] = None
        return View(tuple(r.messages), req, tuple(r.tools), tuple(r.allowed_tools), r.mode,
                    r.dashboard, reads, self.shadow.snapshot())

    # ------------------------------------------------------------ apply
    def apply(self, index: int, op: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
        kind = op["op"]
        extra: dict[str, Any] = {}
        self.before = (self.ws.blocks, self.ws.groups)
        try:
            if kind in ("system", "user", "assistant"):
                value = self._register_plain(index, kind, op)
            elif kind == "call":
                value = self._register_call(index, op)
            elif kind == "result":
                value = self._register_result(index, op, extra)
            elif kind in ("archive", "delete", "restore"):
                value = self._action(index, kind, op)
            elif kind == "read":
                value = self._read(op, extra)
            else:
                raise ValueError(f"unknown operation {kind!r}")
        except _Refused:
            return False, "", extra
        return True, value, extra

    def _refused(self, index: int, line: str | None, exc: BaseException | None,
                 detail: str = "") -> NoReturn:
        if line is not None:
            self._emit(index, line, refusal_reason(exc, detail), "-", ())
        raise _Refused

    def _register_plain(self, index: int, kind: str, op: Mapping[str, Any]) -> str:
        text = op["text"]
        pinned = op.get("pinned")
        pin = pinned if pinned is not None else (
            kind == "system" or (kind == "user" and not self.user_seen)
        )
        try:
            if self.anthropic and pinned is None and kind != "system":
                msg = {"role": kind, "content": [{"type": "text", "text": text}]}
                bid = self.ws.register_messages([msg])[0]
            else:
                m = {"role": kind, "content": text}
                bid = self.ws.register_message(m, **({} if pinned is None else {"pinned": pinned}))
        except WorkspaceError as exc:
            self._refused(index, self.tr.plain_line(kind, text, bool(pin), self.dash()), exc)
        if kind == "user":
            self.user_seen = True
        if pin:
            self.pinned_cost += self.tr.mt({"role": kind, "content": text})
        self.shadow.add_plain(kind, text)
        self._expect_block(text.encode("utf-8"))
        self._emit(index, self.tr.plain_line(kind, text, bool(pin), self.dash()), "ok", "-", ())
        return bid

    def _expect_block(self, data: bytes | None) -> None:
        self.n_blocks += 1
        self.expected[self.n_blocks] = data

    def _register_call(self, index: int, op: Mapping[str, Any]) -> str:
        calls = [tuple(c) for c in op["calls"]]
        text = op.get("text")
        try:
            if self.anthropic:
                bid = self.ws.register_messages([_anthropic_call(text, calls)])[0]
            else:
                bid = self.ws.register_message(
                    {
                        "role": "assistant",
                        "content": text,
                        "tool_calls": [
                            {"id": i, "type": "function",
                             "function": {"name": n, "arguments": a}}
                            for i, n, a in calls
                        ],
                    }
                )
        except WorkspaceError as exc:
            data = _payload_bytes_of_call(text, calls)
            self._refused(index, self.tr.call_line(text, calls, data, self.dash()), exc)
        # As registered: the Anthropic projection writes a tool_use input back as
        # compact JSON (keys in order, non-ASCII kept), the projection documented
        # for Anthropic traces.
        got = [(i, n, _compact(a) if self.anthropic else a) for i, n, a in calls]
        self.shadow.add_call(text, got)
        self.call_cost[bid] = self.tr.mt({"role": "assistant", "content": text, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in got]})
        data = _payload_bytes_of_call(text, got)
        self._expect_block(data if not self.anthropic else None)
        if self.anthropic:
            self.expected[self.n_blocks] = data
        for cid, name, args in calls:
            self.call_name[cid] = name
            self.call_args[cid] = args
        self._emit(index, self.tr.call_line(text, got, data, self.dash()), "ok", "-", ())
        return bid

    def _register_result(self, index: int, op: Mapping[str, Any], extra: dict[str, Any]) -> str:
        ws = self.ws
        cid = op["id"]
        name = self.call_name.get(cid, "")
        pending = cid in ws.pending_calls
        if pending and name in CONTEXT_TOOL_NAMES:
            # The agent loop: a context call is run by the engine, its text answers it.
            args = json.loads(self.call_args[cid])
            action = "archive" if name.endswith("archive") else "delete"
            sub = {"op": action, "spec": args.get("block_id"), "via": "tool",
                   "replacement": args.get("replacement", ""), "reason": args.get("reason", "")}
            try:
                self._action(index, action, sub)
                extra["tool_ok"] = True
            except _Refused:
                extra["tool_ok"] = False
            text = self._last_tool_text
        else:
            gate = ws.gate(name) if pending and name else None
            if gate is not None:
                text = gate  # a task tool refused in overflow mode (eq. overflow)
                extra["gated"] = True
            elif "fit" in op:
                text = self._fit_text(cid, int(op["fit"])) if pending else "x"
                extra["fit_chars"] = len(text)
            else:
                text = op["text"]
        data = text.encode("utf-8")
        n_before = len(ws.blocks)
        parent = None
        if pending:
            for b in reversed(ws.blocks):
                if b.type.value == "tool_call" and cid in b.call_ids:
                    parent = b.id
                    break
        bid_guess = f"B{n_before + 1}"
        before_status = {b.id: b.status.value for b in ws.blocks}
        dashes: list[int] = []
        probe = getattr(ws, "_candidate_total", None)
        if callable(probe) and self.modelled:
            def recording() -> int:
                dashes.append(self.dash())
                return probe()
            ws._candidate_total = recording  # the guard's evaluations, measured
        try:
            if self.anthropic:
                msg = {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": cid, "content": text}],
                }
                bid = ws.register_messages([msg])[0]
            else:
                bid = ws.register_message({"role": "tool", "tool_call_id": cid, "content": text})
        except WorkspaceError as exc:
            line = self.tr.result_line(
                bid=bid_guess, call_id=cid, name=name or None, parent=parent, data=data,
                notice="", dashes=[self.dash()],
            )
            self._refused(index, line, exc)
        finally:
            if callable(probe) and self.modelled:
                del ws._candidate_total
        b = ws.blocks[-1]
        eff = last_event(ws).effects if hasattr(ws, "events") else {}
        if b.rejected:
            notice = b.content or ""
            guard = "reject:" + str(eff.get("decided_by", "cap"))
        else:
            notice = rejection_text(current=0, limit=0, attempted=0, cap=0)
            guard = "admit"
        offloaded, problem = guard_offloads(ws.blocks, before_status, eff)
        if problem:
            extra["guard_problem"] = problem
        if b.rejected and not problem:
            problem = self._notice_cap_problem(b.id, notice, b.parent)
            if problem:
                extra["guard_problem"] = problem
        dashes.append(self.dash())
        if not b.rejected:
            # The guard's rule (paper, Algorithm 1): an admitted result leaves the
            # candidate rendering at most at the hard limit.
            r = self.rendering()
            total = self.recount(r) if r.mode == "normal" else int(r.candidate_tokens)
            if total > self.tr.hard:
                extra["guard_problem"] = (
                    f"the guard admitted {bid} with the candidate at {total} tokens > hard "
                    f"limit {self.tr.hard}"
                )
        self._expect_block(None if b.rejected else data)
        self.shadow.add_result(cid, text, notice if b.rejected else None)
        self.out_of_prompt.update(offloaded)
        for x in offloaded:
            self.shadow.replacement.pop(x, None)
        self.call_name.pop(cid, None) if cid not in ws.pending_calls else None
        line = self.tr.result_line(
            bid=bid, call_id=cid, name=b.name, parent=b.parent, data=data, notice=notice,
            dashes=dashes,
        )
        self._emit(index, line, "ok", guard, offloaded)
        return bid

    def _notice_cap_problem(self, bid: str, notice: str, parent: str | None) -> str | None:
        """The figure "largest admissible now" of a rejection notice against the
        per-result cap counted here: B less the fixed costs, the pinned blocks, the
        result's call and the smallest dashboard (at least 0)."""
        f = notice_fields(notice)
        if f is None or "fixed" not in self.cap_terms:
            return None  # the wording is checked with the rendering (._diff_texts)
        cap = self.budget - (self.cap_terms["fixed"] + self.pinned_cost
                             + self.call_cost.get(parent or "", 0) + self.cap_terms["dfloor"])
        if f["cap"] != max(cap, 0):
            return (f"{bid}'s rejection notice says the largest admissible result is "
                    f"~{f['cap']:,}, the cap is {max(cap, 0):,} (B {self.budget:,} less fixed "
                    f"{self.cap_terms['fixed']:,}, pinned {self.pinned_cost:,}, call "
                    f"{self.call_cost.get(parent or '', 0):,}, smallest dashboard "
                    f"{self.cap_terms['dfloor']:,})")
        return None

    def _fit_text(self, cid: str, delta: int) -> str:
        """A result at the guard's admission boundary of this engine: the longest
        filler it admits without offloading (found on copies of the workspace,
        by bisection), then ``delta`` tokens' worth of characters more or less."""
        ws = self.ws
        fork = getattr(ws, "fork", None)
        if not callable(fork):
            return "a" * max(0, 4 * self.budget // 2 + 4 * delta)
        root = ws.store.root

        def admitted(n: int) -> bool:
            probe = fork(store=MemoryStore(root=root))
            probe.register_tool_result(cid, "a" * n)
            eff = last_event(probe).effects
            return bool(eff.get("admitted")) and not eff.get("offloaded")

        lo, hi = 0, 8 * self.budget
        if not admitted(0):
            return "a" * max(0, 4 * delta)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if admitted(mid):
                lo = mid
            else:
                hi = mid - 1
        return "a" * max(0, lo + 4 * delta)

    def _action(self, index: int, kind: str, op: Mapping[str, Any]) -> str:
        ws = self.ws
        spec = op["spec"]
        blocks, groups = ws.blocks, ws.groups
        units = resolve_spec(spec, blocks, groups)
        exc: BaseException | None = None
        detail = ""
        self._last_tool_text = ""
        value = ""
        result: Any = None
        try:
            if op.get("via") == "tool":
                if kind == "archive":
                    args = {"block_id": spec, "replacement": op.get("replacement", "")}
                    out = ws.call_tool("context_workspace_archive", args)
                else:
                    args = {"block_id": spec, "reason": op.get("reason", "")}
                    out = ws.call_tool("context_workspace_delete", args)
                self._last_tool_text = out.text
                if not out.ok:
                    detail = out.detail
                    raise _Refused
                value = out.text
                if kind == "archive":
                    result = _last_archive(ws)
            elif kind == "archive":
                result = ws.archive(spec, op.get("replacement", ""))
                value = result.unit_id
            elif kind == "delete":
                value = ",".join(ws.delete(spec, op.get("reason", "")).units)
            else:
                value = ",".join(ws.restore(spec).units)
        except (WorkspaceError, _Refused) as e:
            exc = e if isinstance(e, WorkspaceError) else None
            reason_ok = kind != "delete" or bool(str(op.get("reason", "")).strip())
            if units is None or not reason_ok:
                self._refused(index, None, exc, detail)  # rules the model does not state
            line = f"{kind} units={','.join(units) or '-'}" + (
                " h=0/0" if kind == "archive" else ""
            ) + f" dash={self.dash()}"
            self._refused(index, line, exc, detail)
        if units is None:
            units = ["?spec"]  # the engine accepted what the spec rules refuse
        self._shadow_action(kind, units, result, str(op.get("replacement", "")))
        line = f"{kind} units={','.join(units) or '-'}"
        if kind == "archive" and result is not None:
            line += self._archive_costs(result)
        line += f" dash={self.dash()}"
        self._emit(index, line, "ok", "-", ())
        return value

    def _shadow_action(self, kind: str, units: Sequence[str], result: Any,
                       replacement: str) -> None:
        """The driver's record of an accepted archive / restore / delete: which
        units are out of the prompt and the replacement text each handle shows
        (a re-archive keeps the old text unless a new one is given)."""
        sh, out = self.shadow, self.out_of_prompt
        if kind == "archive" and result is not None:
            uid = result.unit_id
            if uid in out:
                sh.replacement[uid] = replacement or sh.replacement.get(uid, "")
            else:
                sh.replacement[uid] = replacement
            out.add(uid)
            return
        for u in units:
            out.discard(u)
            sh.replacement.pop(u, None)

    def _archive_costs(self, result: Any) -> str:
        ws = self.ws
        blocks, groups = ws.blocks, ws.groups
        uid = result.unit_id
        if uid[0] == "G":
            g = groups[uid]
            leaves = sorted(_leaves(uid, groups))
            first = blocks[leaves[0] - 1]
            members = list(g.members)
            replacement = g.replacement
        else:
            first = blocks[int(uid[1:]) - 1]
            leaves = [first.seq]
            members = [uid]
            replacement = first.replacement
        h = self.tr.handle_pair(
            uid, level=result.level, size=result.size, sha=result.sha256,
            replacement=replacement, members=members, first=first, blocks_after=blocks,
        )
        out = f" h={h}"
        if uid[0] == "G" and result.members != (uid,):
            stubs = self.tr.stubs(uid, leaves, blocks)
            if stubs:
                out += f" stubs={stubs}"
        return out

    def _read(self, op: Mapping[str, Any], extra: dict[str, Any]) -> str:
        path = op["path"].replace("@root/", self.ws.store.root + "/")
        sel = op.get("selector")
        try:
            data = self.ws.read_path(path, sel)
        except WorkspaceError:
            raise _Refused from None
        if sel and sel.startswith("member="):
            n = int(sel[len("member=B") :])
            want = self.expected.get(n)
            if want is not None and data != want:
                extra["read_mismatch"] = f"read {op['path']} {sel} gave bytes other than B{n}'s"
            return sha256_hex(data)
        # A whole or ranged read gives the bytes the store holds under the key (the
        # store itself is compared with the model's after every operation), cut here
        # without the engine's selector code: a deleted payload is not readable.
        root = self.ws.store.root + "/"
        key = path[len(root):] if path.startswith(root) else path
        st = self.ws.store
        held = st.get(key) if key in set(st.keys()) else None
        if held is None:
            extra["read_mismatch"] = (
                f"read {op['path']} gave {len(data)} bytes, but the store holds no payload "
                f"{key} (deleted, or never written)"
            )
        elif data != _cut_range(held, sel):
            extra["read_mismatch"] = (
                f"read {op['path']} {sel or '(whole)'} gave {len(data)} bytes other than "
                f"the payload's {'range' if sel else 'bytes'} ({len(_cut_range(held, sel))} bytes)"
            )
        return sha256_hex(data)

    def recover_all(self) -> None:
        """The model's ``recover`` of every block ever registered (and one past the end)."""
        for n in range(1, self.n_blocks + 2):
            try:
                got = self.ws.recover(f"B{n}")
            except WorkspaceError as exc:
                why = "refused:deleted" if "deleted" in str(exc) else "refused:unknown"
                self._emit(10**6, f"recover unit=B{n}", why, "-", ())
                continue
            self._emit(10**6, f"recover unit=B{n}", "ok", "-", (), byte_token(got))


def _cut_range(data: bytes, sel: str | None) -> bytes:
    """The part of a payload a ``bytes=START:STOP`` (0-based, STOP excluded) or
    ``lines=FIRST-LAST`` (1-based, inclusive, lines ending at ``\\n``) selector
    names, clipped at the end; written from the selector's documentation
    (``Workspace.read_path``), not from the engine's code."""
    if not sel:
        return data
    kind, _, arg = sel.partition("=")
    if kind == "bytes":
        start, stop = (int(x) for x in arg.split(":"))
        return data[start:stop]
    first, last = (int(x) for x in arg.split("-"))
    if last < first:
        return b""
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    if starts[-1] == len(data):
        starts.pop()  # a final newline ends the last line; no empty line after it
    begin = starts[first - 1] if first - 1 < len(starts) else len(data)
    end = starts[last] if last < len(starts) else len(data)
    return data[begin:end]


def _leaves(uid: str, groups: Mapping[str, Any]) -> list[int]:
    if uid[0] == "B":
        return [int(uid[1:])]
    out: list[int] = []
    for m in groups[uid].members:
        out.extend(_leaves(m, groups))
    return out


def _last_archive(ws: Any) -> Any:
    """The archive result of the tool call just run, read back from its event."""
    from ._results import ArchiveResult

    ev = last_event(ws)
    e = ev.effects
    return ArchiveResult(e["unit"], ev.result, e["level"], e["size"], e["sha256"],
                         tuple(e["members"]), e["freed_tokens"])


_PATH = re.compile(r"path=(\S+?\.txt)\]")


def _plain(x: Any) -> Any:
    """A frozen rendering value as plain dicts and lists."""
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _compact(args: str) -> str:
    """Tool-call arguments as the Anthropic projection writes a ``tool_use`` input."""
    try:
        return json.dumps(json.loads(args), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return args


class _CountCache:
    """The tokenizer with its counts remembered by text (a count is a pure
    function of the text, so the recount stays independent of the engine)."""

    __slots__ = ("_tok", "_memo", "name")

    def __init__(self, tok: Any) -> None:
        self._tok = tok
        self._memo: dict[str, int] = {}
        self.name = tok.name

    def count(self, text: str) -> int:
        n = self._memo.get(text)
        if n is None:
            if len(self._memo) > 50_000:
                self._memo.clear()
            n = self._memo[text] = self._tok.count(text)
        return n


class _Refused(Exception):
    """An agent tool call the engine refused (it returned an error string)."""


def run_sequence(
    seq: OperationSequence,
    factory: EngineFactory | None = None,
    *,
    on_step: Callable[[Step], None] | None = None,
    request_check: Callable[[Any, str], Any] | None = None,
) -> Run:
    """Apply ``seq`` to a fresh engine from ``factory`` and observe it after every
    operation (a disk store lives in a temporary folder removed afterwards).
    ``request_check(request, protocol)`` also judges the engine's request after
    every operation (in the sequence's wire format, and always as OpenAI)."""
    run = Run(seq)
    with _run_folder(seq) as tmp:
        d = _Driver(seq, factory or default_engine_factory, tmp + "/archive")
        d.request_check = request_check
        try:
            for i, op in enumerate(seq.ops):
                try:
                    ok, value, extra = d.apply(i, op)
                    obs, more = observe(d)
                except Exception as exc:
                    exc._diff_step = i  # type: ignore[attr-defined]
                    raise
                if "read_mismatch" in extra:
                    more.insert(0, ("recoverability", extra.pop("read_mismatch")))
                if "guard_problem" in extra:
                    more.insert(0, ("budget", extra.pop("guard_problem")))
                step = Step(i, {**op, **extra}, ok, value, obs, tuple(more))
                run.steps.append(step)
                if on_step is not None:
                    on_step(step)
            d.recover_all()
            run.model_lines = d.model_lines
            run.engine_lines = d.engine_lines
            run.line_step = d.line_step
            run.modelled = d.modelled
            run.prefix_only = d.prefix_only
            run.views = d.views
            run.context = {
                "counter": d.counter, "memo": {}, "levels": {}, "hard": d.tr.hard,
                "cid_back": {v: k for k, v in d.tr.ids.items()},
                # the configuration the run asked for (not read back from the engine)
                "dashboard_config": DashboardConfig(**seq.config.get("dashboard") or {}),
            }
        finally:
            close = getattr(d.ws, "close", None)
            if callable(close):
                close()
            store_close = getattr(d.ws.store, "close", None)
            if callable(store_close):
                store_close()
    return run


@contextlib.contextmanager
def _run_folder(seq: OperationSequence) -> Iterator[str]:
    """A scratch folder for one run whose path depends only on the sequence: a
    disk store's payload paths are printed in handles, so their token costs, and
    with them every decision of the guard, must be the same each time the
    sequence runs (a random folder name made a shrunk sequence fail to
    reproduce). Concurrent runs of the same sequence take turns (a lock file);
    the folder is removed afterwards."""
    base = os.path.join(tempfile.gettempdir(), "vista-diff")
    os.makedirs(base, exist_ok=True)
    name = sha256_hex(seq.describe().encode("utf-8"))[:16]
    path = os.path.join(base, name)
    try:
        import fcntl
    except ImportError:  # no flock (Windows): a fresh folder of the same name length
        tmp = tempfile.mkdtemp(prefix="", dir=base)
        try:
            yield tmp
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    # One of 256 lock files (not one per sequence, which would pile up): runs whose
    # names share two hex digits take turns, which costs only a little waiting.
    with open(os.path.join(base, name[:2] + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path)
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


def _is_rejection(text: str) -> bool:
    return placeholder_kind(text) == "rejection"
