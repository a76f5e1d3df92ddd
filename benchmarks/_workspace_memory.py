"""The memory row of ``bench_workspace_scaling.py`` and its short-session row:
RSS of an ``n``-block history held by the engine, as plain dicts and as
LangChain messages (each in a fresh interpreter, same run), and the engine's
turn against memoised ``trim_messages`` on the same history."""

from __future__ import annotations

import gc
import resource
import statistics
import sys
from pathlib import Path

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


def short_session_turns(n_blocks: int, seed: int, turns: int = 40) -> tuple[float, float]:
    """Median seconds of the engine's turn (register a call and its result,
    render) at ``n_blocks`` blocks and of memoised ``trim_messages`` on the
    same history, in this run (``bench_workspace_speed``'s transcript)."""
    import bench_workspace_speed as speed
    from vistalab.workspace import MemoryStore

    messages = speed.make_transcript(n_blocks, seed)
    ws, agent, _ = speed.build(messages, 128_000, MemoryStore())
    speed.engine_turns(ws, agent, 10, seed + 7)  # warm the caches
    per_turn = speed.engine_turns(ws, agent, turns, seed)
    _, memoised, _ = speed.trim_times(messages, 128_000, 3)
    del ws, agent
    gc.collect()
    return statistics.median(per_turn), statistics.median(memoised)
