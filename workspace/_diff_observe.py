"""The abstraction step of the differential test: after every operation, the
engine's state and rendering as the model's observation, and the problems an
independent recount finds in the engine's own figures (paper, Methodology:
"Workspace invariants", "Structure preservation", "Dashboard format").

Token counts are recomputed with the tokenizer on the rendered messages, the
dashboard's numbers are read back from its text, payloads are read back from the
store and hashed here, and recovered bytes are compared with the bytes the
driver registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._dashboard import parse_ledger_rows
from ._diff_model import protocol_offset, render_structure
from ._diff_texts import PRIMING as REPLY_PRIMING
from ._diff_texts import message_cost
from ._errors import WorkspaceArgumentError, WorkspaceError
from ._formats import anthropic_problems
from ._protocol import protocol_problems
from ._store import sha256_hex

if TYPE_CHECKING:
    from ._diff_drive import _Driver

__all__ = ["observe", "checked_request"]


def observe(d: _Driver) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The abstraction of the engine's state and rendering, and the problems the
    independent recount finds in the engine's own figures."""
    ws = d.ws
    problems: list[tuple[str, str]] = []
    blocks = ws.blocks
    groups = ws.groups
    r = d.rendering()
    # ---- budget: recount the request from its messages
    recount = d.recount(r)
    if recount != r.tokens:
        problems.append(("budget", f"rendering claims {r.tokens} tokens, recount {recount}"))
    if recount > d.budget:
        problems.append(("budget", f"rendering has {recount} tokens > budget {d.budget}"))
    # ---- protocol: both wire formats' pairing rules
    for p in protocol_problems(r.messages):
        problems.append(("protocol", f"openai: {p}"))
    request = None
    if d.anthropic:
        request = ws.render(format="anthropic").as_request()
        for p in anthropic_problems(request):
            problems.append(("protocol", f"anthropic: {p}"))
    if d.request_check is not None:
        # The engine's own request, judged by the caller's checker as well.
        for proto, req in (("openai", list(r.messages)), ("anthropic", request)):
            if req is not None:
                for p in checked_request(d.request_check, req, proto)[:1]:
                    problems.append(("protocol", f"{proto} request refused by the request "
                                     f"checker: {p}"))
    # ---- store: every key read back and hashed here
    store = {k: sha256_hex(v) for k, v in sorted(d.store_bytes().items())}
    # ---- recoverability and stable IDs
    if len(blocks) != d.n_blocks:
        problems.append(
            ("stable_ids", f"engine holds {len(blocks)} blocks, {d.n_blocks} were registered")
        )
    for i, b in enumerate(blocks, start=1):
        if b.id != f"B{i}":
            problems.append(("stable_ids", f"block {i} is named {b.id}"))
        want = d.expected.get(i)
        if b.status == "deleted":
            continue
        # Recovered again whenever the block's place changed (all of them are
        # recovered once more at the end of the sequence).
        sig = (b.status, b.group, b.level, b.payload, b.group and groups[b.group].payload)
        if d._rec_sig.get(b.id) == sig:
            continue
        d._rec_sig[b.id] = sig
        got = _recover(ws, b.id)
        if got is None:
            problems.append(("recoverability", f"{b.id} ({b.status}) cannot be recovered"))
        elif want is not None and got != want and not b.rejected:
            problems.append(("recoverability", f"{b.id} recovers other bytes than registered"))
    for gid in groups:
        n = int(gid[1:])
        if gid not in d.seen_groups:
            if n <= d.max_group:
                problems.append(("stable_ids", f"new group {gid} reuses an earlier group number"))
            d.seen_groups.add(gid)
            d.max_group = max(d.max_group, n)
    # ---- dashboard: its figures against the recount
    problems.extend(_dashboard_problems(d, r, blocks, groups))
    units = [
        (u, "group" if u[0] == "G" else blocks[int(u[1:]) - 1].status.value)
        for u in r.block_tokens
    ]
    obs = {
        "mode": r.mode,
        "tokens": recount,
        "blocks": [
            (b.id, b.status.value, b.group, b.level, b.rejected) for b in blocks
        ],
        "groups": [
            (g.id, tuple(g.members), g.level, g.parent) for g in groups.values()
        ],
        "units": units,
        "store": store,
    }
    return obs, problems


def checked_request(request_check: Callable[..., Any], request: Any, protocol: str) -> list[str]:
    """``request_check(request, protocol)`` as a list of problem texts; a checker that
    fails on a request or returns something else is refused naming it (the
    caller's error, never a divergence of the engine)."""
    fix = "pass vistalab.conformance.request_problems, or leave it out"
    try:
        got = request_check(request, protocol)
        problems = list(got)
    except Exception as exc:  # noqa: BLE001 - any failure of the checker is the caller's
        raise WorkspaceArgumentError(
            "request_check", request_check, "must be callable as request_check(request, "
            f"protocol) -> list of problems (calling it failed: {type(exc).__name__})", fix,
        ) from exc
    if not all(isinstance(p, str) for p in problems):
        raise WorkspaceArgumentError("request_check", request_check, "must return a list of "
                                     "problem texts (str)", fix)
    return problems


def _recover(ws: Any, bid: str) -> bytes | None:
    try:
        return ws.recover(bid)
    except WorkspaceError:
        return None


def _dashboard_problems(
    d: _Driver, r: Any, blocks: Any, groups: Any
) -> list[tuple[str, str]]:
    """The dashboard's figures (paper, "Dashboard format") against the recount:
    the budget line's total and split, and each visible unit's ~Tok against the
    tokens of the messages that unit renders to."""
    out: list[tuple[str, str]] = []
    tok = d.counter
    if r.mode != "normal":
        return out  # the management dashboard's figures describe the candidate
    msgs = r.messages
    dash_msg = msgs[-1]
    dash_cost = message_cost(dash_msg, tok)
    head = _budget_line(r.dashboard)
    if head is None:
        out.append(("dashboard", "no budget line in the dashboard"))
        return out
    used, budget, overhead, conversation, dashboard = head
    recount = d.recount(r)
    by_block, sys_cost = _position_costs(d, r, blocks, groups)
    if protocol_offset(r):
        sys_cost += message_cost(msgs[0], tok)
    over = d._tools_cost + REPLY_PRIMING + sys_cost
    for name, shown, want in (
        ("total", used, recount),
        ("budget", budget, d.budget),
        ("overhead", overhead, over),
        ("dashboard", dashboard, dash_cost),
        ("conversation", conversation, recount - over - dash_cost),
    ):
        if shown != want:
            out.append(("dashboard", f"the dashboard's {name} is {shown}, the recount {want}"))
    rows = {row.unit_id: row for row in parse_ledger_rows(r.dashboard)}
    for uid, cost in by_block.items():
        row = rows.get(uid)
        if row is None:
            out.append(("dashboard", f"visible {uid} has no ledger row"))
        elif row.tokens != cost:
            out.append(("dashboard", f"{uid}'s row says ~{row.tokens} tok, it renders to {cost}"))
        else:
            d.last_visible_cost[uid] = cost
    return out


def _budget_line(text: str) -> tuple[int, int, int, int, int] | None:
    import re

    m = re.search(r"\(~([0-9,]+) / ([0-9,]+) tokens\)", text)
    s = re.search(r"overhead ~([0-9,]+) \| conversation ~([0-9,]+) \| dashboard ~([0-9,]+)", text)
    if m is None or s is None:
        return None

    def n(x: str) -> int:
        return int(x.replace(",", ""))

    return n(m.group(1)), n(m.group(2)), n(s.group(1)), n(s.group(2)), n(s.group(3))


def _position_costs(d: _Driver, r: Any, blocks: Any, groups: Any) -> tuple[dict[str, int], int]:
    """Tokens of each visible block's rendered message(s), and of the messages at
    system blocks' positions, from the rendering read back position by position
    (not from the engine's caches)."""
    tok = d.counter
    structure = render_structure(r, blocks, groups, d.tr)
    msgs = list(r.messages)[protocol_offset(r):]
    visible: dict[str, int] = {}
    system = 0
    for m, where in zip(msgs, structure, strict=True):
        pos, form, _ = where.split("/", 2)
        if pos[0] != "B":
            continue
        b = blocks[int(pos[1:]) - 1]
        cost = message_cost(m, tok)
        if b.type.value == "system":
            system += cost
        if form in ("content", "notice") and b.status.value in ("visible", "pinned"):
            visible[b.id] = visible.get(b.id, 0) + cost
    return visible, system
