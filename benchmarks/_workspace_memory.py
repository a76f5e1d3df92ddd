"""The memory row of ``bench_workspace_scaling.py`` and its short-session row:
RSS of an ``n``-block history held by the engine, as plain dicts and as
LangChain messages (each in a fresh interpreter, same run), and the engine's
turn against memoised ``trim_messages`` on the same history."""

from __future__ import annotations

import gc
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import NamedTuple

#: RSS per block at most this multiple of the messages' own JSON.
MEMORY_TARGET = 3.0


def _rss_bytes() -> int:
    """Current resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()
    except OSError:
        return 0


def memory_child(kind: str, n_blocks: int, seed: int) -> None:
    """Run in a fresh interpreter: hold an ``n_blocks`` history as ``kind``
    (``engine``; ``engine, rendered``, the same after one ``render()``, whose
    caches an agent loop keeps filled; ``dicts`` or ``langchain``) and print
    ``rss_growth json_bytes``."""
    import json

    from bench_workspace_scaling import SCENARIOS, Session

    session = Session(seed)
    msgs: list[dict] = [
        {"role": "system", "content": "You are a careful data analysis agent."},
        {"role": "user", "content": "Find the county with the largest income growth."},
    ]
    while len(msgs) + 2 <= n_blocks:
        calls, cid, result = session.pair()
        msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
        msgs.append({"role": "tool", "tool_call_id": cid, "content": result})
    json_bytes = sum(len(json.dumps(m)) for m in msgs)
    wire = json.dumps(msgs)  # what the history arrives as; each kind builds from it
    del msgs
    # Imports, the tokenizer's vocabulary and one empty workspace come first:
    # the row measures what the history itself costs.
    from langchain_core.messages import convert_to_messages
    from vistalab.workspace import Workspace

    Workspace(SCENARIOS["normal"], tokenizer="cl100k_base").register_messages(
        json.loads(wire)[:40]
    )
    convert_to_messages(json.loads(wire)[:40])
    gc.collect()
    base = _rss_bytes()
    if kind in ("engine", "engine, rendered"):
        held: object = Workspace(SCENARIOS["normal"], tokenizer="cl100k_base")
        held.register_messages(json.loads(wire))  # type: ignore[attr-defined]
        if kind == "engine, rendered":  # what an agent loop holds: its caches filled
            held.render()  # type: ignore[attr-defined]
    elif kind == "dicts":
        held = json.loads(wire)
    else:
        held = convert_to_messages(json.loads(wire))
    del wire
    gc.collect()
    print(_rss_bytes() - base, json_bytes, held is not None)


def memory_rows(n_blocks: int, seed: int) -> dict[str, tuple[int, int]]:
    """RSS growth and the history's JSON bytes for each kind, each in its own
    interpreter (same machine, same run)."""
    import subprocess

    out = {}
    for kind in ("engine", "engine, rendered", "dicts", "langchain"):
        code = (
            f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import _workspace_memory as b; b.memory_child({kind!r}, {n_blocks}, {seed})"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            out[kind] = (-1, -1)
            continue
        rss, js, _ = proc.stdout.split()
        out[kind] = (int(rss), int(js))
    return out


class ShortSession(NamedTuple):
    """Medians of the short-session row, in seconds per turn.

    ``engine``: register a call and its result, render. ``trim``: the same two
    messages appended to a LangChain history and one memoised
    ``trim_messages`` call (the new messages counted once, on first use, as a
    memoised loop counts them). ``trim_warm``: one more call right after, every
    count already memoised (the baseline's best case, printed beside)."""

    engine: float
    trim: float
    trim_warm: float


def short_session_turns(n_blocks: int, seed: int, turns: int = 60) -> ShortSession:
    """The engine's turn and a memoised ``trim_messages`` loop's turn on the
    same ``n_blocks`` history (``bench_workspace_speed``'s transcript), timed
    alternately turn by turn (so load drift on a shared machine hits both
    sides alike) after 10 warm-up turns; see :class:`ShortSession`."""
    import bench_workspace_speed as speed
    from vistalab.workspace import MemoryStore

    messages = speed.make_transcript(n_blocks, seed)
    ws, agent, _ = speed.build(messages, 128_000, MemoryStore())
    loop = speed.TrimLoop(messages, 128_000)
    loop.trim(True)  # fill the memo with the history's counts
    eng: list[float] = []
    trim: list[float] = []
    warm: list[float] = []
    for k, (call, result) in enumerate(speed.turn_pairs(turns + 10, seed)):
        cid = result["tool_call_id"]
        t0 = time.perf_counter()
        ws.register_tool_call(call["tool_calls"], content=call["content"])
        ws.register_tool_result(cid, result["content"])
        ws.render()
        t1 = time.perf_counter()
        loop.add(call)
        loop.add(result)
        loop.trim(True)
        t2 = time.perf_counter()
        loop.trim(True)
        t3 = time.perf_counter()
        agent.maybe_archive()  # the agent's own decision, not part of the timed turn
        if k >= 10:
            eng.append(t1 - t0)
            trim.append(t2 - t1)
            warm.append(t3 - t2)
    del ws, agent, loop
    gc.collect()
    return ShortSession(statistics.median(eng), statistics.median(trim), statistics.median(warm))
