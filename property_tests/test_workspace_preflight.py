"""Preflight from maintained sums (paper, eq. overflow: C_t = preflight(C~_t, B), and the
dashboard's budget line "(~used / budget tokens)"): the candidate's token count the engine
keeps up to date as blocks change state must equal counting the assembled candidate, and
the dashboard's folded-ID summaries must say the same as a plain walk."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import Workspace, WorkspaceError, count_request_tokens
from vistalab.workspace._engine import _id_summary

_ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["user", "tool", "archive", "group", "delete", "restore", "wait"]),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=30,
)


def _step(ws: Workspace, kind: str, x: int, counter: list[int]) -> None:
    units = [u for u in ws.render().block_tokens if not (u[0] == "B" and
                                                         ws.block(u).status.value == "pinned")]
    try:
        if kind == "user":
            ws.register_user(f"note {x} " * (1 + x % 40))
        elif kind == "tool":
            counter[0] += 1
            cid = f"c{counter[0]}"
            ws.register_tool_call([{"id": cid, "type": "function",
                                    "function": {"name": "f", "arguments": "{}"}}])
            ws.register_tool_result(cid, "row, 12.5\n" * (x % 300))
        elif kind == "wait":
            ws.register_assistant("ok")
        elif units:
            u = units[x % len(units)]
            if kind == "archive":
                ws.archive(u, "")
            elif kind == "group":
                ws.archive(",".join(units[x % len(units):][:3]), "several")
            elif kind == "delete":
                ws.delete(u, "done")
            else:
                ws.restore(u)
    except WorkspaceError:
        pass  # refused actions change nothing; the invariant still applies


@given(actions=_ACTIONS, keep=st.integers(0, 4))
def test_incremental_preflight_equals_the_counted_candidate(actions, keep):
    """Eq. overflow: after every registration and action, the preflight total from the
    maintained row sums equals the assembled candidate's count (the dashboard's own budget
    line and a from-scratch recount of the normal rendering), with and without folded rows;
    each unit's prompt tokens (cached for groups) are the sum over its leaves."""
    from vistalab.workspace import DashboardConfig

    ws = Workspace(2500, hard_limit=4000, dashboard=DashboardConfig(archived_rows=keep))
    ws.register_system("You are a test agent.")
    ws.register_user("Task: keep evidence recoverable.")
    counter = [0]
    fast_seen = 0
    for kind, x in actions:
        _step(ws, kind, x, counter)
        fast = ws._fast_total()
        full = ws._candidate().total
        # The ledger's running sums equal a recount of its frozen rows.
        assert (ws._ledger.piece_tokens, ws._ledger.archived_rows) == ws._ledger.recount()
        r = ws.render()
        assert r.candidate_tokens == full
        if fast is not None:
            fast_seen += 1
            assert fast == full
        for u, t in r.prompt_tokens.items():  # cached per group, kept up to date
            assert t == sum(ws._pos_cost[s - 1] for s in ws._leaves(u))
        used = int(re.search(r"\(~([\d,]+) /", r.dashboard).group(1).replace(",", ""))
        assert used == full and ws.mode == r.mode
        if r.mode == "normal":
            assert count_request_tokens(r.messages, r.tools, ws.tokenizer) == full
    assert fast_seen or ws._ledger.archived_rows > keep


def _reference_summary(ids: list[str], limit: int = 8) -> str:
    """A plain walk: consecutive block numbers fold into ranges."""
    parts: list[str] = []
    i = 0
    while i < len(ids) and len(parts) < limit:
        j = i
        if ids[i][0] == "B":
            while (j + 1 < len(ids) and ids[j + 1][0] == "B"
                   and int(ids[j + 1][1:]) == int(ids[j][1:]) + 1):
                j += 1
        parts.append(ids[i] if j == i else f"{ids[i]}-{ids[j]}")
        i = j + 1
    if i < len(ids):
        parts.append(f"+{len(ids) - i} more")
    return ",".join(parts)


@given(
    blocks=st.lists(st.integers(1, 60), unique=True, max_size=40),
    groups=st.lists(st.integers(1, 60), max_size=6),
    limit=st.integers(1, 9),
)
def test_folded_id_summary_matches_a_plain_walk(blocks, groups, limit):
    """Dashboard (paper, "Does the dashboard scale?"): folded units are summarised as ID
    runs; the bisecting summary says exactly what walking the list does, with groups
    (placed at their first leaf) interleaved anywhere."""
    units = [(b, 0, f"B{b}") for b in blocks] + [(p, 1, f"G{k + 1}") for k, p in
                                                 enumerate(groups)]
    ids = [u for _, _, u in sorted(units)]
    assert _id_summary(ids, limit) == _reference_summary(ids, limit)


def test_the_summary_check_fails_on_a_wrong_summary():
    """The reference walk is a real check: it tells a wrong run from a right one."""
    assert _reference_summary(["B2", "B3", "G1", "B4"]) == "B2-B3,G1,B4"
    assert _id_summary(["B2", "B3", "G1", "B4"]) != "B2-B4,G1"
