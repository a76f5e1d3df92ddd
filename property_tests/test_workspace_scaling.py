"""The engine's incremental indexes against from-scratch recounts after a long
session (paper, "Implementation Details": the workspace loop runs inside every
turn, so its per-turn work is kept in structures the state's one writer
updates). Each figure the fast path reads -- ledger sums, age tokens, the
candidate total, the canonical hash, the position and offload-gain trees, the
pinned positions, the joined message runs and the overflow prefix -- is
recomputed here by a plain walk over every block and compared."""

from __future__ import annotations

import random

import pytest
from vistalab.workspace import Workspace, WorkspaceError
from vistalab.workspace._dashboard import CLOSE_TAG, parse_ledger_rows
from vistalab.workspace._layout import _CHUNK
from vistalab.workspace._records import BlockType, Status
from vistalab.workspace._seqtree import PrefixTree
from vistalab.workspace._validate import _id_summary


def _reference_prefix(ws: Workspace, room: int) -> int:
    """The overflow rendering's prefix walk, unit by unit over every position."""
    pos_msgs, pos_cost, blocks = ws._pos_msgs, ws._pos_cost, ws._blocks
    owners = set(ws._pending.values())
    n, s = len(blocks), 0
    while s < n:
        e = s + 1
        while e < n and pos_msgs[e] and pos_msgs[e][0]["role"] == "tool":
            e += 1
        if any(blocks[i].id in owners for i in range(s, e)):
            break
        cost = sum(pos_cost[i] for i in range(s, e) if blocks[i].status is not Status.PINNED)
        if cost > room:
            break
        room -= cost
        s = e
    return s


def recount_problems(ws: Workspace) -> list[str]:
    """Every incremental figure that disagrees with its from-scratch recount."""
    out: list[str] = []
    led = ws._ledger
    if (led.piece_tokens, led.archived_rows) != led.recount():
        out.append("ledger sums")
    if led.archived_ids != {u for u, r in led.rows.items() if r.archived}:
        out.append("archived units")
    age = ws._renderer.age_piece
    scratch_age = sum(age(ws.turn - r.turn)[1] for r in led.rows.values())
    if led.age_tokens(ws.turn) != scratch_age:
        out.append("age tokens")
    if ws.state_hash() != ws.recompute_state_hash():
        out.append("state hash")
    fast = ws._fast_total()
    if fast is not None and fast != ws._candidate().total:
        out.append("candidate total")
    pinned = []
    for i, b in enumerate(ws._blocks):
        want = 0 if b.status is Status.PINNED else ws._pos_cost[i]
        if ws._pos_tree.value(i) != want:
            out.append(f"position cost of {b.id}")
        if b.status is Status.PINNED:
            pinned.append(b.seq)
        eligible = b.type is BlockType.TOOL_RESULT and b.status is Status.VISIBLE and not b.rejected
        gain = ws._pos_cost[i] - ws._offload_cost(b) if eligible else None
        if ws._gains().value(i) != gain:  # the tree as the guard reads it
            out.append(f"offload gain of {b.id}")
        ms = ws._pos_msgs[i]
        if ws._cont[i] != (bool(ms) and ms[0]["role"] == "tool"):
            out.append(f"unit continuation at {b.id}")
    if pinned != ws._pinned_seqs:
        out.append("pinned positions")
    joined: list[dict] = []
    ws._messages_upto(len(ws._pos_msgs), joined)
    if joined != [m for ms in ws._pos_msgs for m in ms]:
        out.append("joined messages")
    for room in (0, 500, 2000, ws.budget):
        if ws._prefix_cut(room) != _reference_prefix(ws, room):
            out.append(f"prefix cut at room {room}")
    rows = led.rows
    by_position = sorted(rows, key=lambda u: rows[u].first)
    chunks = [led.chunk(c) for c in range(ws._chunks_count())]
    if [u for ch in chunks for u in ch.uids] != by_position:
        out.append("ledger chunks (units in position order)")
    if [t for ch in chunks for t in ch.tokens] != [rows[u].tokens for u in by_position]:
        out.append("ledger chunks (row tokens)")
    if led.occupied() != [c for c, ch in enumerate(chunks) if ch.uids]:
        out.append("ledger chunks holding rows")
    hidden_now = ws._fold()[0]
    printing = [c for c, ch in enumerate(chunks) if any(u not in hidden_now for u in ch.uids)]
    if not set(printing) <= set(led.shown_chunks()):
        out.append("ledger chunks printing rows (a chunk left out of the dashboard)")
    holding = {i // _CHUNK for i, ms in enumerate(ws._pos_msgs) if ms}
    if not holding <= set(ws._msg_chunks):
        out.append("position chunks holding messages (a chunk left out of the rendering)")
    keep = ws.dashboard_config.archived_rows
    arch = sorted((u for u, r in rows.items() if r.archived), key=lambda u: rows[u].newest)
    want_folded = set(arch[: len(arch) - keep]) if len(arch) > keep else set()
    hidden, note = ws._fold()
    if hidden != want_folded:
        out.append("folded archived units")
    folded_order = sorted(want_folded, key=lambda u: rows[u].first)
    want_note = (
        f"(+{len(folded_order)} older archived units folded: {_id_summary(folded_order)}; "
        f"~{sum(rows[u].tokens for u in folded_order):,} tok)"
        if folded_order
        else None
    )
    if note != want_note:
        out.append("fold summary line")
    try:
        out += _management_index_problems(ws)
    except (KeyError, IndexError) as exc:  # an index pointing at a row that is not there
        out.append(f"management index ({type(exc).__name__}: {exc})")
    # The candidate dashboard's ledger body, assembled row by row from scratch.
    body = "" if note is None else note + "\n"
    for u in by_position:
        if u not in hidden:
            r = rows[u]
            body += r.prefix + age(ws.turn - r.turn)[0] + r.suffix
    ws._candidate_cache = None
    if not ws._candidate().dashboard.endswith(body + CLOSE_TAG):
        out.append("candidate dashboard text")
    return out


def _management_index_problems(ws: Workspace) -> list[str]:
    """The management rendering's index and the rendering's per-unit token
    columns against a plain walk over the rows, and, in overflow, the
    management dashboard's listed rows and summary lines against the walk the
    paper's overflow ledger describes ("Dashboard format": the largest visible
    units, ties older first, listed by ID; the rest summarised)."""
    out: list[str] = []
    led = ws._ledger
    ix = led.index
    rows = led.rows
    by_position = sorted(rows, key=lambda u: rows[u].first)
    visible = [u for u in by_position if not rows[u].archived]
    archived = [u for u in by_position if rows[u].archived]
    if (ix.visible, ix.visible_tokens) != (len(visible), sum(rows[u].tokens for u in visible)):
        out.append("management index (visible count and tokens)")
    firsts = [rows[u].first for u in visible]
    runs: list[tuple[int, int]] = []
    for f in firsts:
        if runs and runs[-1][1] == f - 1:
            runs[-1] = (runs[-1][0], f)
        else:
            runs.append((f, f))
    if ix.runs() != runs:
        out.append("management index (runs of visible positions)")
    ranked = sorted(visible, key=lambda u: (-rows[u].tokens, rows[u].first))
    if [led.uid_at(f) for f in ix.largest(len(visible))] != ranked:
        out.append("management index (visible units by size)")
    arch = ix.archived
    if (arch.firsts, arch.tokens) != (
        [rows[u].first for u in archived],
        sum(rows[u].tokens for u in archived),
    ):
        out.append("management index (archived units in position order)")
    if arch.summary() != _id_summary(archived):
        out.append("management index (archived summary)")
    r = ws.render()
    if list(r.block_tokens.items()) != [(u, rows[u].tokens) for u in by_position]:
        out.append("rendering block_tokens")
    want_prompt = [(u, sum(ws._pos_cost[q - 1] for q in ws._leaves(u))) for u in by_position]
    if list(r.prompt_tokens.items()) != want_prompt:
        out.append("rendering prompt_tokens")
    if r.mode == "overflow":
        body = r.dashboard.split("\n")
        listed = [row.unit_id for row in parse_ledger_rows(r.dashboard)]
        k = len(listed)
        top = set(ranked[:k])
        if listed != [u for u in visible if u in top]:
            out.append("management dashboard (listed units)")
        notes = [line for line in body if line.startswith("(+")]
        want = []
        if len(visible) > k:
            rest = [u for u in visible if u not in top]
            want.append(
                f"(+{len(rest)} more visible units: {_id_summary(rest)}; "
                f"~{sum(rows[u].tokens for u in rest):,} tok)"
            )
        if archived:
            want.append(
                f"(+{len(archived)} archived units: {_id_summary(archived)}; "
                f"~{sum(rows[u].tokens for u in archived):,} tok)"
            )
        if notes != want:
            out.append("management dashboard (summary lines)")
    return out


def _long_session(n_blocks: int, seed: int) -> Workspace:
    """Small and large tool results, group archives, restores, deletes and
    offloads by the guard, in overflow and normal mode."""
    rng = random.Random(seed)
    ws = Workspace(6000, hard_limit=9000)
    ws.register_system("You are a careful agent.")
    ws.register_user("Collect the evidence.")
    words = "alpha beta gamma delta county rate index table row".split()
    k = 0
    groups: list[str] = []
    while len(ws._blocks) < n_blocks:
        k += 1
        calls = [
            {"id": f"c{k}_{j}", "type": "function", "function": {"name": "q", "arguments": "{}"}}
            for j in range(rng.choice((1, 1, 1, 2, 3)))
        ]
        ws.register_tool_call(calls, content=rng.choice((None, f"step {k}")))
        for c in calls:
            size = rng.choice((3, 8, 20, 20, 400))
            ws.register_tool_result(c["id"], " ".join(rng.choice(words) for _ in range(size)))
        roll = rng.random()
        visible = [b.id for b in ws._blocks[-60:] if b.status is Status.VISIBLE]
        try:
            if roll < 0.05 and len(visible) > 6:
                i = rng.randrange(len(visible) - 4)
                groups.append(ws.archive(",".join(visible[i : i + 4]), "older steps").unit_id)
            elif roll < 0.07 and groups:
                ws.restore(groups.pop(rng.randrange(len(groups))))
            elif roll < 0.08 and visible:
                ws.delete(visible[0], "not needed")
            elif roll < 0.12:
                ws.register_assistant(f"noted {k}")
        except WorkspaceError:
            pass  # refused (logged with ok=False); the session goes on
        if k % 7 == 0:
            ws.render()
    return ws


def test_seqtree_search_agrees_with_a_plain_walk():
    """The segment tree's first-reaching search, enumeration and range sums equal
    a walk over a list, on 300 random value lists with negative, zero and empty
    entries (sampled)."""
    rng = random.Random(7)
    for _ in range(300):
        tree, vals = PrefixTree(), []
        for _ in range(rng.randrange(0, 70)):
            v = rng.choice([None, rng.randrange(-6, 10)])
            tree.append(v)
            vals.append(v)
        for _ in range(15):
            if vals:
                i = rng.randrange(len(vals))
                vals[i] = rng.choice([None, rng.randrange(-6, 10)])
                tree.set(i, vals[i])
            lo = rng.randrange(0, len(vals) + 1)
            hi = rng.randrange(lo, len(vals) + 1)
            need = rng.randrange(-3, 16)
            acc, want = 0, None
            for j in range(lo, hi):
                if vals[j] is not None:
                    acc += vals[j]
                    if acc >= need:
                        want = (j, acc)
                        break
            assert tree.first_reaching(lo, hi, need) == (want or (None, acc))
            assert list(tree.positions(lo, hi)) == [j for j in range(lo, hi) if vals[j] is not None]
            assert tree.total(lo, hi) == sum(v or 0 for v in vals[lo:hi])


@pytest.fixture(scope="module")
def long_ws() -> Workspace:
    return _long_session(2500, seed=3)


def test_long_session_incremental_figures_equal_a_recount(long_ws):
    """After 2,500 blocks (archives, restores, deletes, guard offloads and
    rejections), every incremental figure equals its from-scratch recount."""
    ws = long_ws
    assert len(ws._blocks) >= 2500
    kinds = {e.op for e in ws.events}
    assert {"register", "archive", "restore", "delete"} <= kinds
    assert any(e.effects.get("offloaded") for e in ws.events)
    assert recount_problems(ws) == []
    for _ in range(3):  # a few more turns on top, ages moving on
        ws.register_assistant("more")
        assert recount_problems(ws) == []


def test_long_session_replays_fork_and_load_to_the_same_figures(long_ws, tmp_path):
    """Eq. determinism: the long session's log replays, and its fork and saved
    copy load, to the same hash with consistent indexes."""
    ws = long_ws
    again = Workspace.replay(ws.events)
    assert again.state_hash() == ws.state_hash()
    assert recount_problems(again) == []
    assert again.render().messages == ws.render().messages
    twin = ws.fork()
    twin.register_assistant("fork turn")
    assert recount_problems(twin) == [] and recount_problems(ws) == []
    path = tmp_path / "ws.json"
    ws.save(path)
    back = Workspace.load(path, store=ws.store)
    assert back.state_hash() == ws.state_hash()
    assert recount_problems(back) == []


def _corrupt_fold(ws: Workspace) -> None:
    fold = ws._ledger.fold
    uid = next(iter(fold.folded))
    fold.shown[uid] = fold.folded.pop(uid)
    ws._fold_cache = None


def _drop_last_gain(ws: Workspace) -> None:
    """Forget the newest eligible result's offload gain (as if its position had
    never been marked due)."""
    tree = ws._gains()
    i = max(i for i in range(len(ws._blocks)) if tree.value(i) is not None)
    tree.set(i, None)


def _corrupt_columns(ws: Workspace) -> None:
    ws.render()  # the columns are kept from here on
    uids, tokens, prompts = ws._ledger._cols[0]
    ws._ledger._cols[0] = (uids, (tokens[0] + 1, *tokens[1:]), prompts)


def _corrupt_chunk_text(ctext: dict) -> None:
    hidden, pieces, *rest = ctext[0]
    ctext[0] = (hidden, ("x", *pieces[1:]), *rest)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda ws: ws._pos_tree.set(5, ws._pos_tree.value(5) + 1),
        lambda ws: ws._gains().set(len(ws._blocks) - 1, 10**6),
        lambda ws: _drop_last_gain(ws),
        lambda ws: ws._pinned_seqs.append(len(ws._blocks)),
        lambda ws: ws._cont.__setitem__(4, not ws._cont[4]),
        lambda ws: ws._chunks.__setitem__(0, ()),
        lambda ws: ws._ledger.__setattr__("_age", (ws.turn, -1)),
        lambda ws: ws._ledger.archived_ids.pop(),
        lambda ws: (ws._ledger._by_first.pop(max(ws._ledger._by_first)), ws._ledger._cdata.clear()),
        lambda ws: _corrupt_chunk_text(ws._ledger._ctext),
        lambda ws: ws._ledger._occupied.pop(),
        lambda ws: _corrupt_fold(ws),
        lambda ws: ws._ledger.index._ends.__setitem__(0, ws._ledger.index._ends[0] - 1),
        lambda ws: ws._ledger.index._by_size[ws._ledger.index._sizes[-1]].reverse(),
        lambda ws: ws._ledger.index.archived.firsts.pop(),
        lambda ws: _corrupt_columns(ws),
    ],
)
def test_recount_check_fails_on_a_broken_index(corrupt):
    """The recount check is not vacuous: one corrupted index entry is reported."""
    ws = _long_session(300, seed=1)
    assert recount_problems(ws) == []
    corrupt(ws)
    assert recount_problems(ws) != []


def test_bulk_rebuilds_pause_the_cyclic_collector_and_restore_it(long_ws):
    """Replay pauses the cyclic collector (no collection runs during it) and
    leaves it as it found it, enabled or disabled, also after a failure."""
    import gc

    from vistalab.workspace._bulk import bulk_build

    seen: list[int] = []

    def spy(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    events = long_ws.events  # built before: reading the log is not the replay
    gc.callbacks.append(spy)
    try:
        Workspace.replay(events)
    finally:
        gc.callbacks.remove(spy)
    assert gc.isenabled()
    # Unpaused, this replay runs about 60 collections; paused, at most the one
    # that was due when the collector resumes.
    assert len(seen) <= 1, seen
    with pytest.raises(RuntimeError), bulk_build():
        assert not gc.isenabled()
        with bulk_build():
            pass
        assert not gc.isenabled()  # the inner rebuild does not end the outer pause
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_build():
            pass
        assert not gc.isenabled()  # disabled before: stays disabled
    finally:
        gc.enable()


def _reference_tool_use_ids(ws: Workspace, r) -> list | None:
    """The Anthropic id renames per rendered message, from a walk over every block."""
    from vistalab.workspace._formats import anthropic_tool_use_ids

    renames = anthropic_tool_use_ids(
        [(b.id, b.call_ids) for b in ws._blocks if b.type is BlockType.TOOL_CALL]
    )
    if not renames:
        return None
    source = {id(m): b for b, ms in zip(ws._blocks, ws._pos_msgs, strict=True) for m in ms}
    out = []
    for m in r.messages:
        b = source.get(id(m))
        if m.get("tool_calls") and b is not None:
            pairs = [(b.id, c["id"]) for c in m["tool_calls"]]
        elif m.get("role") == "tool":
            cid = m["tool_call_id"]
            pairs = [((b.parent if b is not None else ws._pending.get(cid)) or "", cid)]
        else:
            pairs = []
        out.append({c: renames[(o, c)] for o, c in pairs if (o, c) in renames} or None)
    return out


def test_anthropic_ids_kept_incrementally_equal_a_walk_over_every_block():
    """The Anthropic rendering's tool_use ids (reused OpenAI call ids renamed,
    "Implementation Details") are extended block by block; at every turn of a
    session that reuses ids, with archives and a call still waiting, they equal
    the renames computed from every block."""
    rng = random.Random(5)
    ws = Workspace(4000, hard_limit=6000, tokenizer="approx")
    ws.register_user("go")
    seen_renamed = 0
    for k in range(120):
        cid = rng.choice(["call_0", "call_1", f"c{k}", "bad id"])
        ws.register_tool_call(
            [{"id": cid, "type": "function", "function": {"name": "q", "arguments": "{}"}}]
        )
        if k % 9 != 4:  # sometimes render while the call still waits
            ws.register_tool_result(cid, "result " * rng.choice((2, 30)))
        r = ws.render()
        want = _reference_tool_use_ids(ws, r)
        assert ws._tool_use_ids(r.messages, r.mode) == want, k
        seen_renamed += bool(want and any(want))
        if ws.pending_calls:
            ws.register_tool_result(cid, "late")
        if k % 17 == 16:
            visible = [b.id for b in ws._blocks[-12:] if b.status is Status.VISIBLE]
            try:
                ws.archive(",".join(visible[:4]), "older")
            except WorkspaceError:
                pass
    assert seen_renamed > 20


def test_short_text_counts_remembered_equal_fresh_counts():
    """The offline tiktoken counters remember the counts of short texts (a turn
    counts the same role, tool names and ledger cells again); on 6,000 sampled
    short and long texts, twice each, every count equals a fresh BPE count, and
    the memory stays bounded."""
    from vistalab.workspace import get_tokenizer
    from vistalab.workspace._tokenizers import _SHORT_ENTRIES, _SHORT_TEXT

    rng = random.Random(11)
    alphabet = "ab cd\n  12,345 tool_result  B7 visible ü🙂"
    for name in ("cl100k_base", "o200k_base"):
        tok = get_tokenizer(name)
        texts = [
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 2 * _SHORT_TEXT)))
            for _ in range(3000)
        ]
        for text in texts + texts:
            assert tok.count(text) == len(tok._encode_ordinary(text)), (name, text)
        assert 0 < len(tok._short) <= _SHORT_ENTRIES


def test_seqtree_set_many_equals_one_set_at_a_time():
    """A batch of position updates (a long refresh) leaves the tree exactly as
    the same updates one at a time, on 300 random batches (sampled)."""
    rng = random.Random(13)
    for _ in range(300):
        n = rng.randrange(1, 90)
        one, many = PrefixTree(), PrefixTree()
        for _ in range(n):
            v = rng.choice([None, rng.randrange(-5, 9)])
            one.append(v)
            many.append(v)
        batch = [(rng.randrange(n), rng.choice([None, rng.randrange(-5, 9)])) for _ in range(40)]
        for i, v in batch:
            one.set(i, v)
        many.set_many(batch)
        assert (many._sum, many._best) == (one._sum, one._best)


def _scratch_fold(ws: Workspace) -> tuple[set, str | None]:
    rows = ws._ledger.rows
    keep = ws.dashboard_config.archived_rows
    arch = sorted((u for u, r in rows.items() if r.archived), key=lambda u: rows[u].newest)
    older = arch[: len(arch) - keep] if len(arch) > keep else []
    folded = sorted(older, key=lambda u: rows[u].first)
    if not folded:
        return set(), None
    note = (
        f"(+{len(folded)} older archived units folded: {_id_summary(folded)}; "
        f"~{sum(rows[u].tokens for u in folded):,} tok)"
    )
    return set(folded), note


@pytest.mark.parametrize("keep", [0, 1, 3, 8])
def test_fold_kept_row_by_row_equals_a_recount_after_every_action(keep):
    """The ledger's fold of old archived units (paper, "Does the dashboard
    scale?": older archived units fold into one line) is kept up to date row by
    row; after every registration, archive (single blocks and groups, archived
    units again), restore, delete and guard offload of a sampled session, the
    folded units, the summary line and the candidate's count equal a recount."""
    from vistalab.workspace import DashboardConfig

    rng = random.Random(keep)
    ws = Workspace(5000, hard_limit=7000, dashboard=DashboardConfig(archived_rows=keep))
    ws.register_user("go")
    units: list[str] = []
    for k in range(160):
        ws.register_tool_call(
            [{"id": f"c{k}", "type": "function", "function": {"name": "q", "arguments": "{}"}}]
        )
        ws.register_tool_result(f"c{k}", "row " * rng.choice((3, 10, 60)))
        visible = [b.id for b in ws._blocks[-30:] if b.status is Status.VISIBLE]
        roll = rng.random()
        try:
            if roll < 0.35 and visible:
                units.append(ws.archive(rng.choice(visible), "one").unit_id)
            elif roll < 0.5 and len(visible) > 3:
                units.append(ws.archive(",".join(visible[:3]), "some").unit_id)
            elif roll < 0.6 and units:
                ws.restore(units.pop(rng.randrange(len(units))))
            elif roll < 0.68 and units:
                ws.delete(units.pop(rng.randrange(len(units))), "gone")
            elif roll < 0.75 and len(units) > 2:
                units.append(ws.archive(",".join(units[:2]), "again").unit_id)
                del units[:2]
        except WorkspaceError:
            pass
        hidden, note = ws._fold()
        assert (set(hidden), note) == _scratch_fold(ws), k
        ws._candidate_cache = None
        assert ws._fast_total() == ws._candidate().total, k
    assert ws._ledger.archived_rows > keep + 5


def test_folded_rows_age_sum_advances_without_a_pass_over_the_folded_units():
    """The folded archived rows' age tokens (subtracted from the ledger's sums
    when the newest ``archived_rows`` are listed and the rest fold into one
    line; paper, "Does the dashboard scale?") advance by one turn with a few
    look-ups of the tokenizer's step ages, not by re-pricing every folded
    unit's age: in a session of 300 turns whose 40 oldest results are archived
    (38 folded, each of its own turn, far fewer units than turns), every turn
    after the fold's first sum prices at most a handful of age pieces, and the
    sums equal a recount at every turn."""
    from vistalab.workspace import DashboardConfig

    ws = Workspace(1_000_000, dashboard=DashboardConfig(archived_rows=2))
    ws.register_system("sys")
    ws.register_user("task")
    led = ws._ledger

    def one_result(k: int) -> str:
        cid = f"c{k}"
        ws.register_tool_call(
            [{"id": cid, "type": "function", "function": {"name": "q", "arguments": "{}"}}]
        )
        return ws.register_tool_result(cid, f"page {k}: county year value")

    results = [one_result(k) for k in range(300)]
    for bid in results[:40]:
        ws.archive(bid, "done")
    folded = led.fold.sums
    assert len(led.fold.folded) == 38 and len(folded._turns) == 38
    priced: list[int] = []
    age_piece = folded._age_piece

    def counting(age: int) -> tuple[str, int]:
        priced.append(age)
        return age_piece(age)

    one_result(300)
    ws._fast_total()  # the fold's first age sum: one pass over its units
    folded._age_piece = counting
    for k in range(301, 321):
        priced.clear()
        one_result(k)
        assert ws._fast_total() == ws._candidate().total
        assert len(priced) <= 8, priced
        scratch = sum(cnt * age_piece(ws.turn - t)[1] for t, cnt in folded._turns.items())
        assert folded.age_tokens(ws.turn) == scratch
    assert recount_problems(ws) == []


def test_rendering_visits_the_chunks_of_what_it_shows_and_finds_unfolded_ones_again():
    """A session that archives in large groups leaves runs of positions that
    render nothing (a group's members) and ledger chunks whose rows are all
    folded (paper, "Does the dashboard scale?": the newest ``archived_rows``
    are listed, the rest fold into one line); a rendering skips both, so it
    costs O(what it shows). A restore or delete that unfolds an older group,
    or brings members back, must bring their chunks back: the rendering and
    the dashboard equal the from-scratch walk after every action. Fails if a
    rendering drops a chunk that still holds messages, or if an unfolded
    group's chunk is not visited again."""
    from vistalab.workspace import DashboardConfig

    ws = Workspace(1_000_000, dashboard=DashboardConfig(archived_rows=2))
    ws.register_system("sys")
    ws.register_user("task")
    groups = []
    for g in range(8):
        first = len(ws._blocks) + 1
        for k in range(300):  # 600 blocks: each group spans two chunks and more
            cid = f"c{g}_{k}"
            ws.register_tool_call(
                [{"id": cid, "type": "function", "function": {"name": "q", "arguments": "{}"}}]
            )
            ws.register_tool_result(cid, f"page {k} of {g}: county year value")
        groups.append(ws.archive(f"B{first}-B{len(ws._blocks)}", f"pages of {g}").unit_id)
    ws.render()
    led = ws._ledger
    assert len(led.fold.folded) == 6
    assert len(led.shown_chunks()) < len(led.occupied())  # folded groups' chunks skipped
    assert len(ws._msg_chunks) < len(ws._pos_msgs) // _CHUNK  # members' chunks skipped
    assert recount_problems(ws) == []
    for act in ("restore", "delete", "restore", "restore"):
        target = groups.pop()  # the newest group: listed; a folded one takes its place
        if act == "restore":
            ws.restore(target)
        else:
            ws.delete(target, "not needed")
        ws.render()
        assert recount_problems(ws) == [], act


def test_a_chunk_read_with_more_rows_hidden_than_folded_stays_in_the_dashboard():
    """``Ledger.chunk_text`` with a chunk's archived rows hidden by its caller
    (a set larger than the fold's folded units) gives no rows, but the chunk
    still prints its listed group in the dashboard: it stays in
    ``shown_chunks``. Fails if an empty read alone drops a chunk."""
    ws = Workspace(1_000_000)
    ws.register_system("sys")
    ws.register_user("task")
    for k in range(300):
        cid = f"c{k}"
        call = {"id": cid, "type": "function", "function": {"name": "q", "arguments": "{}"}}
        ws.register_tool_call([call])
        ws.register_tool_result(cid, f"page {k}")
    group = ws.archive("B257-B512", "the middle pages").unit_id  # chunk 1 holds its row alone
    led = ws._ledger
    assert led.chunk(1).uids == (group,) and not led.fold.folded
    pieces, turns, _ = led.chunk_text(1, {group})
    assert turns == () and pieces == ("",)
    assert 1 in led.shown_chunks()
    ws._candidate_cache = None
    assert recount_problems(ws) == []
