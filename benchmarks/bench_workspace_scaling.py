"""Workspace engine per-turn cost against session length (1k ... 100k blocks).

An agent loop calls the engine on every turn, and the paper's trajectories
run to millions of tokens (LOCA-Bench), so a turn must not cost more as the
session grows. Three agents fill a workspace to N blocks (system prompt, task,
then tool calls answered by short results), and at each N the script times

* one turn: ``register_tool_call`` + ``register_tool_result`` (through the
  budget guard), in three cache states (below), and
* one ``render()`` right after it,

for three scenarios:

``normal``
    many small results, nothing archived, budget 10,000,000 (normal mode:
    every block is visible, so a rendering holds every block and a ledger
    row for each);
``overflow``
    the same agent with budget 128,000 (the workspace is in overflow mode;
    the guard offloads older results);
``archiving``
    budget 128,000, and the agent archives its older visible blocks into a
    group whenever the candidate passes 0.8 B (the loop of
    ``bench_workspace_speed.py``).

The cache states of a timed turn:

``warm``
    turns back to back (the engine's code and recent data in the CPU caches);
``cold``
    each turn after a sweep over ``--sweep-mb`` MB of memory (more than the
    last-level cache), standing in for what a real loop does between two
    turns: serialising the request, the model call, running the tool. The
    turn runs with cold caches at every session length;
``after render``
    each turn right after the previous turn's ``render()`` (the loop of
    earlier versions of this script). A rendering costs O(visible units) and
    touches that much memory: at 1k units it leaves the caches warm, from 10k
    on it evicts them, so this column moves from the warm to the cold cost as
    N grows. That step is the cache state the render leaves, not per-turn
    work that grows with N (the warm and cold columns are each flat), so it
    is printed, with its exponent, but not judged.

Every scenario runs once per ``--tokenizers`` x ``--texts`` pair (``all``
for every shipped tokenizer, every text shape: words, one long line of hex,
base64, CJK, compact JSON), and one table closes the sweep: a row per pair, a
column per mode.

The fitted exponent p of cost ~ N^p (least squares on log-log over the sizes)
is printed per scenario for each turn column and for the render. Targets:
p <= 0.15 for every scenario's warm and cold turn (flat), fitted over the sizes
at which the session is in the mode it settles in (the largest size's) when two
or more are and a smaller one is not: a 1k-block history fits 128,000 tokens,
so the ``overflow`` agent starts in normal mode, and its turn steps up once when
the history passes the budget (a constant factor, not growth); the fit over
every size is printed beside it. A rendering may
cost O(what it returns) but never O(units ever registered): its exponent must
be <= 0.15 either for the render itself or for render time per message
rendered (in ``normal`` no block is archived, so every block is in the prompt
and the ledger lists each of them; in ``archiving`` each archived group keeps
its handle in the prompt, so the prompt holds the visible blocks plus one
message per group, and a long session's groups add up; the positions of the
blocks inside the groups, which render nothing, are not visited).

The 100k row's turn (the largest of its three columns) must cost at most 1 ms
of CPU. Absolute times depend on the machine, so the script also times a
trivial baseline in the same run (inserting fresh keys into a dict) and states
the turn as a multiple of it; the target is judged on that ratio:
``TURN_TARGET_DICT_INSERTS`` dict inserts is 1 ms on the machine the target
was set on (a ~50 ns insert), so a slower machine moves both sides together.

More rows:

* the error contract's net (every public method of ``Workspace`` and of the
  tokenizer wrapped in one ``try``, ``vistalab._core._door``): a turn with
  the net against the same turn with every wrapper removed, alternating in
  the same run; its overhead must stay under ``NET_TARGET`` of a turn;
* per tokenizer and text shape, two more modes beside the scenarios, judged
  and printed as columns of the same table: re-archiving ``B3-B<last>`` (the
  previous group plus 20 new blocks, so groups nest one level per call) at
  ``--rearchive`` blocks, fitted exponent <= ``REARCHIVE_TARGET`` (linear in
  the blocks it covers), and answering one call of one assistant message
  holding ``--pending`` calls, exponent <= 0.15;
* the actions on one large group (``--group-actions`` blocks): ``archive
  B3-B<n>``, ``restore`` of that group, and ``delete B3-B<n>`` of it, each
  changing every block but the system prompt and task; fitted exponent <=
  ``REARCHIVE_TARGET`` (linear in what it changes);
* an agent that archives every result on its own (one archived unit each, all
  but ``archived_rows`` of them folded into one ledger line): archive plus
  preflight at 1k and 10k archived units; the fitted exponent must be <= 0.15;
* a 50 MB tool result of every text shape is refused (the per-result cap)
  in under 50 ms (the fastest of ``--big-repeats`` refusals) with under 50 MB
  of extra peak memory (``tracemalloc`` peak over the call, and the process's
  max RSS growth), per tokenizer;
* memory (``_workspace_memory``): RSS growth of a ``--memory``-block history
  held by the engine (registered, and registered then rendered once: an agent
  loop renders every turn, and a rendering's caches stay), as plain dicts and
  as LangChain messages, each in a fresh interpreter of this run, against the
  messages' JSON (target <= 3x, for both engine rows);
* a short session: the engine's turn at ``--trim-blocks`` blocks against
  memoised ``trim_messages`` on the same history (ratio <= 1);
* replaying the event log of a 10k- and a 100k-block session
  (``Workspace.replay``) is linear: CPU time(100k) / CPU time(10k) <= 12.

Times are the lower quartile over ``--turns`` turns (CPU time of this
process; the median and wall time printed beside); building the workspaces
is not timed per turn, its wall time is printed. Exit status 1 if a target is missed.

    .venv/bin/python benchmarks/bench_workspace_scaling.py [--sizes 1000,10000,30000,100000]
    .venv/bin/python benchmarks/bench_workspace_scaling.py --tokenizers all --texts all \\
        --sizes 1000,3000,10000 --turns 20 --big-mb 0 --replay '' --net-blocks 0 \\
        --archived '' --memory 0 --trim-blocks 0    # the sweep alone
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line  # noqa: E402
from _workspace_memory import MEMORY_TARGET, memory_rows, short_session_turns  # noqa: E402
from _workspace_refusal import refusal_rows  # noqa: E402
from _workspace_sweep import (  # noqa: E402
    SCENARIOS,
    TEXT_SHAPES,
    TOKENIZER_NAMES,
    Agent,
    Session,
    Sweeper,
    _one_turn,
    grow,
    lower_quartile,
    new_workspace,
    text_shape,
    timed_turns,
)

EXPONENT_TARGET = 0.15
#: 1 ms of CPU expressed in dict inserts on the reference machine (~50 ns each).
TURN_TARGET_DICT_INSERTS = 20_000
REPLAY_RATIO_TARGET = 12.0
#: Re-archiving the previous group plus new blocks: linear in the blocks covered.
REARCHIVE_TARGET = 1.1
#: The error contract's net may add at most this share to a turn.
NET_TARGET = 0.05


@contextlib.contextmanager
def contract_net_removed(classes):
    """Every method the error contract's net wraps on ``classes``, unwrapped for
    the duration (restored after); yields how many."""
    saved = []
    for klass in classes:
        for name, raw in list(vars(klass).items()):
            fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            if getattr(fn, "__vista_contract__", False):
                inner = fn.__wrapped__
                bare = type(raw)(inner) if isinstance(raw, (staticmethod, classmethod)) else inner
                setattr(klass, name, bare)
                saved.append((klass, name, raw))
    try:
        yield len(saved)
    finally:
        for klass, name, raw in saved:
            setattr(klass, name, raw)


def net_cost(n_blocks: int, seed: int, rounds: int = 10, per_round: int = 30) -> tuple:
    """Lower-quartile CPU seconds per turn with and without the error contract's
    net, alternating rounds on one workspace, and how many methods it wraps."""
    ws = new_workspace(SCENARIOS["normal"])
    agent = Agent(ws, archiving=False)
    session = Session(seed)
    grow(ws, agent, session, n_blocks)
    classes = [*type(ws).__mro__, *type(ws.tokenizer).__mro__]
    net, bare = [], []
    wrapped = 0
    for _ in range(rounds):
        net += [_one_turn(ws, session)[0] for _ in range(per_round)]
        with contract_net_removed(classes) as k:
            bare += [_one_turn(ws, session)[0] for _ in range(per_round)]
        wrapped = k
    return lower_quartile(net), lower_quartile(bare), wrapped


def exponent(sizes: list[int], costs: list[float]) -> float:
    """Least-squares slope of log(cost) against log(size)."""
    x = np.log(np.asarray(sizes, float))
    y = np.log(np.maximum(np.asarray(costs, float), 1e-12))
    return float(np.polyfit(x, y, 1)[0])


def exponent_row(
    what: str,
    sizes: list[int],
    costs: list[float],
    target: float,
    *,
    unit: str,
    digits: int,
    why: str = "",
) -> tuple[float, bool]:
    """Fit, print and judge one cost-against-size row: ``what`` followed by
    each cost in ms (``digits`` decimals) at its size in ``unit``, the fitted
    exponent and PASS / FAIL against ``target`` (``why`` says what it means)."""
    p = exponent(sizes, costs)
    ok = p <= target
    cells = ", ".join(
        f"{c * 1e3:.{digits}f} ms at {n:,}" for n, c in zip(sizes, costs, strict=True)
    )
    note = f": {why}" if why else ""
    print(
        f"{what}: {cells} {unit}; exponent {p:+.3f} "
        f"({'PASS' if ok else 'FAIL'}, target <= {target}{note})",
        flush=True,
    )
    return p, ok


def dict_insert_seconds(n: int = 200_000, repeat: int = 5) -> float:
    """Best-of CPU seconds per insert of a fresh key into a dict (the baseline)."""
    keys = [f"k{i}" for i in range(n)]
    best = math.inf
    for _ in range(repeat):
        d: dict[str, int] = {}
        c0 = time.process_time()
        for k in keys:
            d[k] = 1
        best = min(best, time.process_time() - c0)
    return best / n


def rearchive_costs(
    sizes: list[int],
    seed: int,
    per: int = 5,
    step: int = 20,
    *,
    tokenizer: str = "cl100k_base",
    shape: str = "word",
) -> list[float]:
    """Lower-quartile CPU seconds of one re-archive ``B3-B<last>`` (the previous
    group plus ``step`` new blocks, so groups nest one level per call) once the
    workspace holds ``n`` blocks, for each ``n`` in ``sizes``, with results of
    text ``shape`` counted by ``tokenizer``. The agent is grown by re-archiving
    every ``step`` blocks (untimed)."""
    ws = new_workspace(SCENARIOS["normal"], tokenizer=tokenizer)
    agent = Agent(ws, archiving=False)
    session = Session(seed, shape)
    out = []

    def grow_and_rearchive() -> float:
        for _ in range(step // 2):
            agent.turn(session)
        c0 = time.process_time()
        ws.archive(f"B3-B{len(ws._blocks)}", "older query results")
        return time.process_time() - c0

    for n in sizes:
        while len(ws._blocks) + step <= n:
            grow_and_rearchive()
        out.append(lower_quartile([grow_and_rearchive() for _ in range(per)]))
    return out


def pending_answer_costs(
    counts: list[int],
    seed: int,
    per: int = 200,
    *,
    tokenizer: str = "cl100k_base",
    shape: str = "word",
) -> list[float]:
    """Lower-quartile CPU seconds of answering one call of one assistant message
    holding ``n`` calls, for each ``n`` in ``counts`` (fresh workspaces), with
    short results of text ``shape`` counted by ``tokenizer``."""
    text = "" if shape == "word" else text_shape(shape, 1 << 16, seed)
    out = []
    for n in counts:
        ws = new_workspace(SCENARIOS["normal"], tokenizer=tokenizer)
        ws.register_tool_call(
            [
                {"id": f"c{i}", "type": "function", "function": {"name": "q", "arguments": "{}"}}
                for i in range(n)
            ]
        )
        times = []
        for i in range(min(per, n)):
            if shape == "word":
                result = f"page {i}: county year value"
            else:
                at = (i * 7919) % (len(text) - 40)
                result = f"page {i}: " + text[at : at + 24]
            c0 = time.process_time()
            ws.register_tool_result(f"c{n - 1 - i}", result)
            times.append(time.process_time() - c0)
        out.append(lower_quartile(times))
        del ws
    return out


def archive_costs(counts: list[int], seed: int, per: int = 200) -> list[float]:
    """Lower-quartile CPU seconds of one ``archive`` of a fresh result plus the
    next preflight, once ``n`` units are archived, for each ``n`` in ``counts``."""
    ws = new_workspace(SCENARIOS["normal"])
    session = Session(seed)
    out = []
    for n in counts:
        times: list[float] = []
        while ws._ledger.archived_rows < n or len(times) < per:
            calls, cid, result = session.pair()
            ws.register_tool_call(calls, content=None)
            bid = ws.register_tool_result(cid, result)
            c0 = time.process_time()
            ws.archive(bid, "done with it")
            ws.mode  # noqa: B018 - the preflight the next turn needs
            times.append(time.process_time() - c0)
        out.append(lower_quartile(times[-per:]))
    return out


def group_action_costs(sizes: list[int], seed: int) -> dict[str, list[float]]:
    """CPU seconds of the actions on one large group, for each ``n`` in
    ``sizes`` (a fresh workspace of ``n`` blocks each): ``archive B3-B<n>``
    (one group of every block but the system prompt and task), ``restore`` of
    that group, and ``delete B3-B<n>`` of the archived group on a twin. Each
    changes ``n - 2`` blocks, so each must be linear in ``n``."""
    out: dict[str, list[float]] = {"archive": [], "restore": [], "delete": []}
    for n in sizes:
        twins = []
        for _ in range(2):
            ws = new_workspace(SCENARIOS["normal"])
            agent, session = Agent(ws, archiving=False), Session(seed)
            while len(ws._blocks) < n:
                agent.turn(session)
            twins.append(ws)
        first, last = 3, len(twins[0]._blocks)
        c0 = time.process_time()
        gid = twins[0].archive(f"B{first}-B{last}", "older query results").unit_id
        out["archive"].append(time.process_time() - c0)
        c0 = time.process_time()
        twins[0].restore(gid)
        out["restore"].append(time.process_time() - c0)
        twins[1].archive(f"B{first}-B{last}", "older query results")
        c0 = time.process_time()
        twins[1].delete(f"B{first}-B{last}", "superseded")
        out["delete"].append(time.process_time() - c0)
        del twins
        gc.collect()
    return out


def replay_seconds(n_blocks: int, seed: int) -> tuple[float, float, int]:
    """CPU and wall seconds to replay the event log of an ``n_blocks``-block
    archiving session, and its events."""
    from vistalab.workspace import Workspace

    ws = new_workspace(128_000)
    agent = Agent(ws, archiving=True)
    grow(ws, agent, Session(seed), n_blocks)
    events = ws.events
    want = ws.state_hash()
    del ws, agent
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    again = Workspace.replay(events)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    assert again.state_hash() == want
    return cpu, wall, len(events)


def scenario_cell(
    scen: str,
    tok: str,
    shape: str,
    sizes: list[int],
    args: argparse.Namespace,
    sweep: Sweeper,
    base: float,
    failures: list[str],
    name: str,
) -> tuple[tuple[float, float], bool] | None:
    """Grow one agent of scenario ``scen`` through ``sizes``, print a row per size
    and the fitted exponents; return the turn's (warm, cold) exponents and
    whether both meet the target (None with fewer than two sizes)."""
    ws = new_workspace(SCENARIOS[scen], tokenizer=tok)
    agent = Agent(ws, archiving=scen == "archiving")
    session = Session(args.seed, shape)
    rows = []
    for n in sizes:
        build = grow(ws, agent, session, n)
        m = timed_turns(ws, agent, session, args.turns, sweep)
        worst = max(m["turn_cpu"], m["warm"], m["cold"])
        rows.append((n, m))
        print(
            f"{name:<10} {n:>7,} {m['mode']:>8} {m['warm'] * 1e3:>8.3f} "
            f"{m['cold'] * 1e3:>8.3f} {m['turn_cpu'] * 1e3:>15.3f} "
            f"{m['turn_median'] * 1e3:>7.3f} {m['turn_wall'] * 1e3:>7.3f} "
            f"{worst / base:>8,.0f} {m['render_cpu'] * 1e3:>9.3f} "
            f"{m['render_wall'] * 1e3:>7.3f} {m['render_msgs']:>7,.0f} "
            f"{m['visible']:>7,.0f} {build:>8.1f}",
            flush=True,
        )
    out = None
    ns = [n for n, _ in rows]
    # The mode a cell names is the one its session settles in (the largest
    # size's): a smaller size still in another mode (a 1k-block history fits
    # 128k tokens, so it renders normally) is a step in the cost, not growth,
    # and the turn's exponents are judged over the sizes in the settled mode
    # when two or more are; the fit over every size is printed beside.
    settled = [(n, m) for n, m in rows if m["mode"] == rows[-1][1]["mode"]]
    judged = settled if 2 <= len(settled) < len(rows) else rows
    if len(ns) >= 2:
        js = [n for n, _ in judged]
        p_warm = exponent(js, [m["warm"] for _, m in judged])
        p_cold = exponent(js, [m["cold"] for _, m in judged])
        p_after = exponent(ns, [m["turn_cpu"] for _, m in rows])
        p_render = exponent(ns, [m["render_cpu"] for _, m in rows])
        p_per_msg = exponent(ns, [m["render_cpu"] / m["render_msgs"] for _, m in rows])
        ok_t = p_warm <= EXPONENT_TARGET and p_cold <= EXPONENT_TARGET
        out = ((p_warm, p_cold), ok_t)
        ok_r = p_render <= EXPONENT_TARGET or p_per_msg <= EXPONENT_TARGET
        over = ""
        if judged is not rows:
            all_w = exponent(ns, [m["warm"] for _, m in rows])
            all_c = exponent(ns, [m["cold"] for _, m in rows])
            over = (
                f" over the {len(js)} sizes from {js[0]:,} in {rows[-1][1]['mode']} mode (all "
                f"sizes, across the change of mode: {all_w:+.3f} / {all_c:+.3f})"
            )
        print(
            f"{name:<10} exponent: turn warm {p_warm:+.3f}, cold {p_cold:+.3f}{over} "
            f"({'PASS' if ok_t else 'FAIL'}, target both <= {EXPONENT_TARGET}; after render "
            f"{p_after:+.3f}, not judged); render {p_render:+.3f}, per message rendered "
            f"{p_per_msg:+.3f} ({'PASS' if ok_r else 'FAIL'}, target: either <= "
            f"{EXPONENT_TARGET})",
            flush=True,
        )
        if not ok_t:
            failures.append(f"{name} turn exponent")
        if not ok_r:
            failures.append(f"{name} render exponent")
    n_last, m_last = rows[-1]
    if n_last >= 100_000:
        ratio = max(m_last["turn_cpu"], m_last["warm"], m_last["cold"]) / base
        ok = ratio <= TURN_TARGET_DICT_INSERTS
        print(
            f"{name:<10} {n_last:,}-block turn (largest column) = {ratio:,.0f} dict inserts "
            f"({'PASS' if ok else 'FAIL'}, target <= {TURN_TARGET_DICT_INSERTS:,})"
        )
        if not ok:
            failures.append(f"{name} 100k turn")
    del ws, agent
    gc.collect()
    return out


def print_table(
    table: dict[tuple[str, str], dict[str, tuple[tuple[float, ...], bool]]],
    rsizes: list[int],
    pcounts: list[int],
) -> None:
    """The sweep's one table: a row per tokenizer and text shape, a column per
    mode (the turn's warm/cold exponents per scenario, the re-archive's and
    the pending answer's exponent); a missed target is marked ``!``."""
    modes = list(dict.fromkeys(m for cell in table.values() for m in cell))
    if not modes:
        return
    print(
        f"fitted exponents per tokenizer x text x mode (scenarios: turn warm/cold, target <= "
        f"{EXPONENT_TARGET}; rearchive over {','.join(map(str, rsizes))} blocks, target <= "
        f"{REARCHIVE_TARGET}; pending over {','.join(map(str, pcounts))} calls, target <= "
        f"{EXPONENT_TARGET}; ! = missed):"
    )
    width = 13
    print(f"  {'tokenizer':<12} {'text':<10} " + " ".join(f"{m:>{width}}" for m in modes))
    for (tok, shape), cell in table.items():
        txt = []
        for m in modes:
            got = cell.get(m)
            if got is None:
                txt.append(" " * width)
                continue
            ps, ok = got
            txt.append(("/".join(f"{p:+.2f}" for p in ps) + ("" if ok else "!")).rjust(width))
        print(f"  {tok:<12} {shape:<10} " + " ".join(txt), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,30000,100000")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument(
        "--tokenizers", default="cl100k_base", help="'all' or e.g. " + ",".join(TOKENIZER_NAMES)
    )
    ap.add_argument("--texts", default="word", help="'all' or of " + ",".join(TEXT_SHAPES))
    ap.add_argument("--turns", type=int, default=60, help="timed turns per size")
    ap.add_argument(
        "--big-mb",
        default="1,50",
        help="result sizes in MB of the refusal rows, e.g. 1,50 (1 MB: a few times the cap, "
        "refused from the split-point bound; 50 MB: from the byte bound); 0 skips them",
    )
    ap.add_argument("--big-budget", type=int, default=128_000)
    ap.add_argument("--big-tokenizers", default=",".join(TOKENIZER_NAMES))
    ap.add_argument(
        "--big-repeats",
        type=int,
        default=3,
        help="refusals per cell (fresh workspace each); the fastest is judged",
    )
    ap.add_argument("--replay", default="10000,100000", help="two sizes, or '' to skip")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sweep-mb", type=int, default=64, help="memory swept before a cold turn")
    ap.add_argument("--net-blocks", type=int, default=10_000, help="0 skips the net row")
    ap.add_argument("--archived", default="1000,10000", help="archived units, or '' to skip")
    ap.add_argument("--rearchive", default="1000,3000,10000", help="block counts, or '' to skip")
    ap.add_argument("--pending", default="100,1000,10000", help="pending calls, or '' to skip")
    ap.add_argument(
        "--group-actions",
        default="1000,3000,10000",
        help="block counts of the archive / restore / delete of one large group, or '' to skip",
    )
    ap.add_argument("--memory", type=int, default=100_000, help="blocks, 0 skips the row")
    ap.add_argument("--trim-blocks", type=int, default=1000, help="0 skips the trim row")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="bounded run for a shared 2-core machine: sizes 1000,3000,10000, 20 turns, no "
        "replay or net rows, 5 MB refusal rows on cl100k_base and approx",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.turns, args.replay, args.net_blocks = "1000,3000,10000", 20, "", 0
        args.big_mb, args.big_tokenizers = 5, "cl100k_base,approx"
        args.rearchive, args.archived = "1000,2000,4000", "1000,3000"
        args.group_actions = "1000,2000,4000"
        args.memory = 10_000
    if args.tokenizers == "all":
        args.tokenizers = ",".join(TOKENIZER_NAMES)
    if args.texts == "all":
        args.texts = ",".join(TEXT_SHAPES)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    scenarios = [s for s in args.scenarios.split(",") if s]

    print(f"# {machine_line()}")
    base = dict_insert_seconds()
    target_s = TURN_TARGET_DICT_INSERTS * base
    print(
        f"baseline: one dict insert {base * 1e9:.1f} ns (CPU); turn target "
        f"{TURN_TARGET_DICT_INSERTS:,} inserts = {target_s * 1e3:.2f} ms on this machine now"
    )
    failures: list[str] = []
    sweep = Sweeper(args.sweep_mb)
    head = (
        f"{'scenario':<10} {'blocks':>7} {'mode':>8} {'warm ms':>8} {'cold ms':>8} "
        f"{'after-render ms':>15} {'(med)':>7} {'(wall)':>7} {'xinsert':>8} {'render ms':>9} "
        f"{'(wall)':>7} {'msgs':>7} {'visible':>7} {'build s':>8}"
    )
    print(head)
    rsizes = [int(c) for c in args.rearchive.split(",") if c]
    pcounts = [int(c) for c in args.pending.split(",") if c]
    pairs = [(tok, shape) for tok in args.tokenizers.split(",") for shape in args.texts.split(",")]
    # (tokenizer, text) -> mode -> (exponents, passed): the one table printed after the sweep.
    table: dict[tuple[str, str], dict[str, tuple[tuple[float, ...], bool]]] = {}
    for tok, shape in pairs:
        try:
            new_workspace(SCENARIOS["normal"], tokenizer=tok)
        except ImportError as exc:
            print(f"{tok}: skipped ({exc})")
            continue
        tag = "" if (tok, shape) == ("cl100k_base", "word") else f"/{tok}/{shape}"
        cell = table[tok, shape] = {}
        for scen in scenarios:
            got = scenario_cell(scen, tok, shape, sizes, args, sweep, base, failures, scen + tag)
            if got is not None:
                cell[scen] = got
        if len(rsizes) >= 2:
            costs = rearchive_costs(rsizes, args.seed, tokenizer=tok, shape=shape)
            p_re, ok = exponent_row(
                f"re-archive{tag} B3-B<last> (previous group + 20 new blocks)",
                rsizes,
                costs,
                REARCHIVE_TARGET,
                unit="blocks covered",
                digits=2,
                why="linear in the blocks it covers",
            )
            cell["rearchive"] = ((p_re,), ok)
            if not ok:
                failures.append(f"re-archive{tag} exponent")
        if len(pcounts) >= 2:
            costs = pending_answer_costs(pcounts, args.seed, tokenizer=tok, shape=shape)
            p_pe, ok = exponent_row(
                f"answer one of N pending calls{tag}",
                pcounts,
                costs,
                EXPONENT_TARGET,
                unit="pending",
                digits=3,
            )
            cell["pending"] = ((p_pe,), ok)
            if not ok:
                failures.append(f"pending-answer{tag} exponent")
    print_table(table, rsizes, pcounts)

    if args.net_blocks:
        net, bare, wrapped = net_cost(args.net_blocks, args.seed)
        share = net / bare - 1
        ok = share <= NET_TARGET
        print(
            f"error contract's net ({wrapped} wrapped methods) at {args.net_blocks:,} blocks: "
            f"turn {net * 1e3:.3f} ms with it, {bare * 1e3:.3f} ms without, overhead "
            f"{share:+.1%} ({'PASS' if ok else 'FAIL'}, target <= {NET_TARGET:.0%})"
        )
        if not ok:
            failures.append("error contract's net")

    if args.archived:
        counts = [int(c) for c in args.archived.split(",")]
        costs = archive_costs(counts, args.seed)
        _, ok = exponent_row(
            "archive one result + preflight",
            counts,
            costs,
            EXPONENT_TARGET,
            unit="archived units",
            digits=3,
        )
        if not ok:
            failures.append("archive exponent")

    if args.group_actions:
        gsizes = [int(c) for c in args.group_actions.split(",")]
        for action, costs in group_action_costs(gsizes, args.seed).items():
            _, ok = exponent_row(
                f"{action} one group of every block but the first two",
                gsizes,
                costs,
                REARCHIVE_TARGET,
                unit="blocks",
                digits=1,
                why="linear in the blocks it changes",
            )
            if not ok:
                failures.append(f"group {action} exponent")

    for mb in (int(x) for x in str(args.big_mb).split(",") if x.strip()):
        if mb > 0:
            refusal_rows(mb, args, failures)

    if args.memory:
        rows_m = memory_rows(args.memory, args.seed)
        js = max(v[1] for v in rows_m.values())
        cells = [
            f"{k} {v[0] / 2**20:.1f} MiB ({v[0] / js:.2f}x JSON)" if v[0] >= 0 else f"{k} failed"
            for k, v in rows_m.items()
        ]
        # Judged on the larger engine row: a loop renders every turn, and a
        # rendering fills caches (read-only messages, ledger chunk texts) it keeps.
        held = [rows_m[k][0] for k in ("engine", "engine, rendered")]
        eng = -1 if min(held) < 0 else max(held)
        ok = 0 <= eng <= MEMORY_TARGET * js
        print(
            f"memory at {args.memory:,} blocks (history JSON {js / 2**20:.1f} MiB): "
            f"{', '.join(cells)}; engine per block {held[0] / args.memory:,.0f} B, "
            f"{held[1] / args.memory:,.0f} B rendered "
            f"({'PASS' if ok else 'FAIL'}, target <= {MEMORY_TARGET:g}x JSON, both)"
        )
        if not ok:
            failures.append("memory per block")

    if args.trim_blocks:
        short = short_session_turns(args.trim_blocks, args.seed)
        ratio = short.engine / short.trim
        ok = ratio <= 1.0
        print(
            f"short session, {args.trim_blocks:,} blocks (turns timed alternately): engine turn "
            f"(register call + result, render) median {short.engine * 1e3:.2f} ms, memoised "
            f"trim_messages loop turn (append both, trim) median {short.trim * 1e3:.2f} ms, "
            f"ratio engine / trim = {ratio:.2f} ({'PASS' if ok else 'FAIL'}, target <= 1); "
            f"against a trim with every count memoised ({short.trim_warm * 1e3:.2f} ms): "
            f"{short.engine / short.trim_warm:.2f}"
        )
        if not ok:
            failures.append("short-session turn")

    if args.replay:
        small, large = (int(s) for s in args.replay.split(","))
        t_small, w_small, e_small = replay_seconds(small, args.seed)
        t_large, w_large, e_large = replay_seconds(large, args.seed)
        ratio = t_large / t_small
        ok = ratio <= REPLAY_RATIO_TARGET
        print(
            f"replay (CPU): {small:,} blocks ({e_small:,} events) {t_small:.2f} s, {large:,} "
            f"blocks ({e_large:,} events) {t_large:.2f} s, ratio {ratio:.2f} (wall {w_small:.2f} "
            f"/ {w_large:.2f} s) "
            f"({'PASS' if ok else 'FAIL'}, target <= {REPLAY_RATIO_TARGET:g}; events ratio "
            f"{e_large / e_small:.2f})"
        )
        if not ok:
            failures.append("replay ratio")

    if failures:
        print(f"MISS: {', '.join(failures)}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
