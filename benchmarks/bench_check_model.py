"""What ``Workspace(..., check_model=True)`` costs: the run-time check of every
operation against the extracted Coq model, per operation, as a ratio to the
engine alone, measured in the same run on the same session.

The session is an agent's: a system prompt and a task, then turns of a tool
call and its result (sizes cycling from a line to a few pages, so the budget
guard offloads and the rendering overflows now and then), every fifth turn the
agent archives its oldest visible results through the archive tool and answers
the tool call with the tool's text, every seventh it reads a payload back, and
every turn the harness renders the request. The same operations run on

* the engine alone: ``Workspace(budget, cache_prefix=cp)``, for ``cp`` False and
  True (the engine's default; ``--cache-prefix`` picks one);
* the engine with the option off, spelled out: ``check_model=False`` (must be
  the same class and cost the same: the option costs nothing when off);
* the engine under the check: ``check_model=<the model's executable>``
  (built once by ``build_engine_model()``, not timed).

Time is CPU time of this process and of its reaped children (the model's
process is one; it is reaped when the workspace closes, inside the timed
region), best of ``--repeat`` interleaved runs. The ratio is printed per
session length (the check's observation reads the whole rendering and store
after every operation, so its cost grows with the session; the engine's is
incremental). No target: the ratio is reported, not judged; exit status 1 only
if the checked session disagrees with the model or the off switch costs more
than 1.5x the engine alone.

    .venv/bin/python benchmarks/bench_check_model.py            # 40 and 160 turns
    .venv/bin/python benchmarks/bench_check_model.py --quick    # 20 turns
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from vistalab.workspace import Workspace, build_engine_model


def _cpu() -> float:
    """CPU seconds of this process (high resolution) and of its reaped children
    (the model's processes; clock ticks)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def session(make: Any, turns: int) -> int:
    """Run the agent's session on ``make()``; the number of operations."""
    ws = make()
    ops = 0
    try:
        ws.register_system("You are a careful operations agent.")
        ws.register_user("Reconcile the refunds of last week against the order log.")
        ops += 2
        for t in range(turns):
            cid = f"call_{t % 3}"  # ids reused once answered, as real traces do
            if t % 5 == 4:
                visible = [b.id for b in ws.blocks
                           if b.type.value == "tool_result" and b.status.value == "visible"]
                spec = ",".join(visible[:2]) or "B2"
                args = json.dumps({"block_id": spec, "replacement": "older search results"})
                ws.register_tool_call([{"id": cid, "type": "function", "function": {
                    "name": "context_workspace_archive", "arguments": args}}])
                out = ws.call_tool("context_workspace_archive", args)
                ws.register_tool_result(cid, out.text)
                ops += 3
            else:
                ws.register_tool_call([{"id": cid, "type": "function", "function": {
                    "name": "search", "arguments": json.dumps({"q": f"order {t}"})}}])
                size = (1, 8, 40, 200)[t % 4]
                ws.register_tool_result(cid, f"order {t}: refund shipped, row {t}\n" * size)
                ops += 2
            if t % 7 == 6 and ws.groups:
                gid = next(iter(ws.groups))
                ws.read_path(ws.payload_path(f"{gid}.txt"))
                ops += 1
            ws.render()
            ops += 1
    finally:
        ws.close()
    return ops


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one short session length")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--budget", type=int, default=4000)
    p.add_argument("--turns", type=int, nargs="+", default=None,
                   help="session lengths in agent turns (default 40 160; --quick: 20)")
    p.add_argument("--cache-prefix", choices=("0", "1", "both"), default="both",
                   help="the engine's cache_prefix option (default: both, each measured)")
    args = p.parse_args(argv)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load}")
    exe = str(build_engine_model())
    print(f"model executable: {exe}")
    budget = args.budget
    status = 0
    cps = {"0": (False,), "1": (True,), "both": (False, True)}[args.cache_prefix]
    lengths = args.turns or ((20,) if args.quick else (40, 160))
    for cp, turns in [(cp, t) for cp in cps for t in lengths]:
        configs = {
            "engine alone": lambda cp=cp: Workspace(budget, cache_prefix=cp, keep_pending=False),
            "check_model=False": lambda cp=cp: Workspace(
                budget, cache_prefix=cp, keep_pending=False, check_model=False),
            "check_model=True": lambda cp=cp: Workspace(budget, cache_prefix=cp, keep_pending=False,
                                                        check_model=exe),
        }
        assert type(configs["check_model=False"]()) is Workspace
        best = dict.fromkeys(configs, float("inf"))
        ops = dict.fromkeys(configs, 0)
        for _ in range(max(1, args.repeat)):
            for name, make in configs.items():  # interleaved: all see the same load
                c0 = _cpu()
                try:
                    ops[name] = session(make, turns)
                except Exception as exc:  # noqa: BLE001 - reported, then exit 1
                    print(f"{name}: the session failed: {type(exc).__name__}: {exc}"[:400])
                    return 1
                best[name] = min(best[name], _cpu() - c0)
        base = best["engine alone"] / ops["engine alone"]
        print(f"cache_prefix={cp}: session of {turns} turns ({ops['engine alone']} operations), "
              "CPU per operation:")
        for name in configs:
            per = best[name] / ops[name]
            print(f"  {name:18s} {per * 1e3:8.3f} ms   {per / base:6.2f}x the engine alone")
        off = (best["check_model=False"] / ops["check_model=False"]) / base
        if off > 1.5:
            print(f"  the option off costs {off:.2f}x the engine alone (> 1.5x)")
            status = 1
    t = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"done {t}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
