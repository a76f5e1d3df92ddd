"""The engine keeps no small string of a caller's parsed messages: the short
texts it stores (contents, call ids, names, arguments) are its own copies, so
the allocator arenas of a history the caller parsed and dropped are freed
(paper, "Implementation Details"; the memory row of
benchmarks/bench_workspace_scaling.py measures the RSS this frees)."""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc

from vistalab.workspace import Workspace
from vistalab.workspace._validate import own_text


def _history(n: int) -> str:
    msgs: list[dict] = [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "Find the county with the largest growth."},
    ]
    for i in range(n):
        msgs.append(
            {
                "role": "assistant",
                "content": f"step {i}",
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": json.dumps({"page": i})},
                    }
                ],
            }
        )
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"call_{i}",
                "content": f"page {i}: estimate {i * 7} income {i % 13}",
            }
        )
    msgs.append({"role": "user", "content": "Thanks, and the runner-up?"})
    return json.dumps(msgs)


def test_nothing_of_a_parsed_history_stays_alive_after_registration():
    """Every object ``json.loads`` made for the history is freed once the caller
    drops it, although the engine holds every message's text: the registered
    history renders back the same messages. Fails when the engine keeps the
    caller's strings (about 5 per exchange here)."""
    wire = _history(300)
    ws = Workspace(200_000, tokenizer="approx")
    gc.collect()
    tracemalloc.start()
    try:
        data = json.loads(wire)
        ws.register_messages(data)
        del data
        gc.collect()
        snap = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    kept = [
        s
        for s in snap.statistics("traceback")
        if any(f.filename.endswith(("json/decoder.py", "json/__init__.py")) for f in s.traceback)
    ]
    assert kept == [], [(s.count, s.size) for s in kept]
    rendered = [m for m in ws.render().messages if m["role"] != "system"]
    wanted = [m for m in json.loads(wire) if m["role"] != "system"]
    assert [m.get("content") for m in rendered[: len(wanted)]] == [m.get("content") for m in wanted]


def test_own_text_copies_small_strings_only():
    small = "".join(["call_", "42"])
    big = "x" * 10_000
    copy = own_text(small)
    assert copy == small and copy is not small
    assert own_text(big) is big
    assert own_text("") == ""
    assert sys.getsizeof(copy) <= 512
