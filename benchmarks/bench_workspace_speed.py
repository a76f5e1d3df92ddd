"""Workspace engine speed on a 10^4-block transcript, against langchain-core's
``trim_messages`` fitting the same transcript to the same budget, in one run.

What is compared (the engine of the paper's Implementation Details against the
baseline a LangChain agent loop uses):

* engine, per turn: on a workspace that already holds the transcript's blocks,
  one agent turn = ``register_tool_call`` + ``register_tool_result`` (through
  the budget guard) + ``render()`` (candidate rendering, preflight, final
  assembly). The workspace was filled by a simple agent that archives its
  oldest visible blocks into a group whenever the candidate passes 0.8 B, so
  every rendering is a real, within-budget prompt with a dashboard.
* ``trim_messages`` (strategy "last", include_system, start_on human/ai), per
  call: what a LangChain loop pays every turn to fit the full history to B.
  Its ``token_counter`` is the engine's own per-message count
  (``workspace.message_tokens`` with the same cl100k_base tokenizer) on the
  same OpenAI-format message, so both sides count identical numbers.
  ``trim_messages`` re-counts on every call (it has no cache); the run also
  reports it with per-message counts memoised, its best case.
* one archive of a single visible block into a :class:`DiskStore`, including
  the payload fsync, rename and folder fsync, on the same 10^4-block workspace.

Targets: engine per-turn time <= trim_messages time (ratio <= 1); an archive
makes no more fsyncs than one bare durable write (the payload file and its
folder: durable before the block leaves the prompt, renamed atomically), and
costs at most ``ARCHIVE_RATIO_TARGET`` bare durable writes (median against
median). The disk's floor, a bare temp-file write, fsync, rename and folder
fsync of a payload-sized file in the same folder, is measured in the same run,
interleaved with the archives (one of each in turn, so both see the same disk
load), since fsync latency is a property of the machine, not of the engine.
The archive line is also split into the engine's own work and the durable
write. Exit status 1 if a target is missed.

    .venv/bin/python benchmarks/bench_workspace_speed.py [--blocks 10000] [--budget 128000]

Building the workspace is not timed; it is printed for information (the
engine re-renders the candidate on every registration, so building is
O(n) per block).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from _common import durable_write  # noqa: E402

#: An archive costs at most this many bare durable writes: the one it must
#: make, and at most as much again for the engine's own work.
ARCHIVE_RATIO_TARGET = 2.0
_VOCAB = (
    "county year value change total rate population median income growth index region "
    "state district survey estimate margin error source table row column record id"
).split()


def make_transcript(n_blocks: int, seed: int) -> list[dict]:
    """A deterministic tool-agent transcript of ``n_blocks`` OpenAI messages:
    system, task, then tool calls answered by CSV-like results of
    log-normally distributed length (median ~120 words)."""
    rng = np.random.default_rng(seed)
    msgs: list[dict] = [
        {"role": "system", "content": "You are a careful data analysis agent."},
        {
            "role": "user",
            "content": "Find the county with the largest income growth. "
            + " ".join(rng.choice(_VOCAB, 40)),
        },
    ]
    i = 0
    while len(msgs) < n_blocks - 1:
        cid = f"call_{i}"
        args = json.dumps({"table": str(rng.choice(_VOCAB)), "page": int(i)})
        msgs.append(
            {
                "role": "assistant",
                "content": f"Query page {i}.",
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "query", "arguments": args},
                    }
                ],
            }
        )
        rows = max(2, int(rng.lognormal(np.log(12), 0.8)))
        body = "\n".join(
            ",".join(
                [
                    str(rng.choice(_VOCAB)),
                    str(int(rng.integers(1000, 99999))),
                    f"{rng.normal():.4f}",
                    str(rng.choice(_VOCAB)),
                ]
            )
            for _ in range(rows)
        )
        msgs.append({"role": "tool", "tool_call_id": cid, "content": body})
        i += 1
    if len(msgs) < n_blocks:
        msgs.append({"role": "assistant", "content": "Continuing the analysis."})
    return msgs


class Agent:
    """Registers messages and archives old blocks when the candidate passes 0.8 B."""

    def __init__(self, ws, keep_recent: int = 40) -> None:
        self.ws = ws
        self.keep_recent = keep_recent
        self.first_visible = 3  # after the pinned system and task blocks
        self.archives = 0

    def maybe_archive(self) -> None:
        ws = self.ws
        r = ws.render()
        if r.candidate_tokens <= 0.8 * ws.budget:
            return
        last = len(ws.blocks) - self.keep_recent
        if last <= self.first_visible:
            return
        ws.archive(f"B{self.first_visible}-B{last}", "older query results")
        self.first_visible = last + 1
        self.archives += 1


def build(messages: list[dict], budget: int, store) -> tuple[object, Agent, float]:
    from vistalab.workspace import Workspace

    ws = Workspace(budget, tokenizer="cl100k_base", store=store)
    agent = Agent(ws)
    t0 = time.perf_counter()
    for m in messages:
        ws.register_message(m)
        if m["role"] == "tool" or (m["role"] == "assistant" and not m.get("tool_calls")):
            agent.maybe_archive()
    return ws, agent, time.perf_counter() - t0


def turn_pairs(turns: int, seed: int) -> list[tuple[dict, dict]]:
    """``turns`` new (tool call, result) message pairs of the transcript's kind,
    with call ids ``bench_<k>`` (the timed turns' new messages)."""
    extra = make_transcript(2 * turns + 3, seed + 1)[2:]
    out = []
    for k in range(turns):
        call, result = dict(extra[2 * k]), dict(extra[2 * k + 1])
        cid = f"bench_{k}"
        call["tool_calls"] = [dict(call["tool_calls"][0], id=cid)]
        result["tool_call_id"] = cid
        out.append((call, result))
    return out


def engine_turns(ws, agent: Agent, turns: int, seed: int) -> list[float]:
    """Seconds per turn of register(call) + register(result) + render()."""
    out = []
    for call, result in turn_pairs(turns, seed):
        cid = result["tool_call_id"]
        t0 = time.perf_counter()
        ws.register_tool_call(call["tool_calls"], content=call["content"])
        ws.register_tool_result(cid, result["content"])
        r = ws.render()
        out.append(time.perf_counter() - t0)
        assert r.tokens <= ws.budget
        agent.maybe_archive()  # the agent's own decision, not part of the timed turn
    return out


class TrimLoop:
    """A LangChain loop's side of the comparison: the history as LangChain
    messages and one ``trim_messages`` call (strategy "last", include_system,
    start_on human/ai) fitting it to ``budget``.

    Its ``token_counter`` is the engine's own per-message count
    (``workspace.message_tokens``, cl100k_base) on the same OpenAI-format
    message, so both sides count identical numbers; with ``memoised`` each
    message is counted once (a dict keyed by the message id) and looked up
    after, otherwise on every call (``trim_messages`` has no cache).
    """

    def __init__(self, messages: list[dict], budget: int) -> None:
        from vistalab.workspace import get_tokenizer

        self.budget = budget
        self.tok = get_tokenizer("cl100k_base")
        self.lc: list = []
        # trim_messages may copy messages; the message id survives, so it keys
        # the original OpenAI form (a dict look-up, negligible next to tokenising).
        self.openai_of: dict[str, dict] = {}
        self.memo: dict[str, int] = {}
        for m in messages:
            self.add(m)

    def add(self, m: dict) -> None:
        """Append one OpenAI-format message (converted to LangChain's type)."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

        mid = f"m{len(self.lc)}"
        if m["role"] == "system":
            x = SystemMessage(m["content"], id=mid)
        elif m["role"] == "user":
            x = HumanMessage(m["content"], id=mid)
        elif m["role"] == "tool":
            x = ToolMessage(m["content"], tool_call_id=m["tool_call_id"], id=mid)
        else:
            calls = [
                {
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"]),
                }
                for c in m.get("tool_calls") or ()
            ]
            x = AIMessage(m["content"] or "", tool_calls=calls, id=mid)
        self.lc.append(x)
        self.openai_of[mid] = m

    def count(self, msgs: list) -> int:
        """Tokens of ``msgs``, every message counted now."""
        from vistalab.workspace import message_tokens

        return sum(message_tokens(self.openai_of[str(m.id)], self.tok) for m in msgs)

    def count_memo(self, msgs: list) -> int:
        """Tokens of ``msgs``, each message counted once per loop."""
        from vistalab.workspace import message_tokens

        memo, total = self.memo, 0
        for m in msgs:
            mid = str(m.id)
            n = memo.get(mid)
            if n is None:
                n = memo[mid] = message_tokens(self.openai_of[mid], self.tok)
            total += n
        return total

    def trim(self, memoised: bool) -> list:
        """One ``trim_messages`` call over the whole history."""
        from langchain_core.messages import trim_messages

        return trim_messages(
            self.lc,
            max_tokens=self.budget,
            token_counter=self.count_memo if memoised else self.count,
            strategy="last",
            include_system=True,
            start_on=("human", "ai"),
        )


def trim_times(
    messages: list[dict], budget: int, repeats: int
) -> tuple[list[float], list[float], int]:
    """Seconds per trim_messages call: counting every call, and with memoised counts."""
    loop = TrimLoop(messages, budget)

    def run(memoised: bool) -> tuple[float, list]:
        t0 = time.perf_counter()
        kept = loop.trim(memoised)
        return time.perf_counter() - t0, kept

    plain, memoised = [], []
    kept: list = []
    for _ in range(repeats):
        dt, kept = run(False)
        plain.append(dt)
    run(True)  # fill the memo: its best case excludes the first count
    for _ in range(repeats):
        memoised.append(run(True)[0])
    fitted = loop.count(kept)
    assert fitted <= budget, (fitted, budget)
    return plain, memoised, len(kept)


class TimedStore:
    """Delegates to a store and adds up the seconds spent in ``put`` (the durable
    write), so the engine's own share of an archive can be printed apart."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.root = inner.root
        self.put_seconds = 0.0

    def put(self, key, data):
        t0 = time.perf_counter()
        try:
            return self.inner.put(key, data)
        finally:
            self.put_seconds += time.perf_counter() - t0

    def get(self, key, *, sha256=None):
        return self.inner.get(key, sha256=sha256)

    def delete(self, key):
        self.inner.delete(key)

    def contains(self, key):
        return self.inner.contains(key)

    def keys(self):
        return self.inner.keys()

    def key_of(self, path):
        return self.inner.key_of(path)


class FsyncCounter:
    """Counts ``os.fsync`` calls while installed (a context manager)."""

    def __init__(self) -> None:
        self.calls = 0
        self._real = os.fsync

    def __enter__(self) -> FsyncCounter:
        def counting(fd: int) -> None:
            self.calls += 1
            self._real(fd)

        os.fsync = counting
        return self

    def __exit__(self, *exc: object) -> None:
        os.fsync = self._real


def bare_durable_write(folder: Path, data: bytes, i: int) -> float:
    """The disk's floor, in the same folder: temp file, write, fsync, rename,
    folder fsync (the steps a durable store must take), no engine."""
    t0 = time.perf_counter()
    durable_write(folder, f"floor{i}.bin", data)
    dt = time.perf_counter() - t0
    (folder / f"floor{i}.bin").unlink()
    return dt


def archive_times(ws, store: TimedStore, count: int, folder: Path, size: int) -> dict:
    """Archives of one visible tool result each, interleaved with bare durable
    writes of ``size`` bytes: per archive the total seconds (payload fsync
    included), the seconds outside the store's durable write and the fsync
    calls; per bare write its seconds and fsync calls."""
    visible = [
        b.id for b in ws.blocks if b.status.value == "visible" and b.type.value == "tool_result"
    ]
    out: dict[str, list] = {"total": [], "engine": [], "fsyncs": [], "floor": [], "floor_fs": []}
    data = b"x" * size
    for i, bid in enumerate(visible[:count]):
        before = store.put_seconds
        with FsyncCounter() as fs:
            t0 = time.perf_counter()
            ws.archive(bid, "bench")
            dt = time.perf_counter() - t0
        out["total"].append(dt)
        out["engine"].append(dt - (store.put_seconds - before))
        out["fsyncs"].append(fs.calls)
        with FsyncCounter() as fs:
            out["floor"].append(bare_durable_write(folder, data, i))
        out["floor_fs"].append(fs.calls)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=10_000)
    ap.add_argument("--budget", type=int, default=128_000)
    ap.add_argument("--turns", type=int, default=40, help="timed engine turns")
    ap.add_argument("--trim-repeats", type=int, default=3)
    ap.add_argument("--archives", type=int, default=30, help="timed single-block archives")
    ap.add_argument(
        "--archive-dir", default=None, help="folder for the DiskStore (default: a temporary folder)"
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from vistalab.workspace import DiskStore, get_tokenizer, message_tokens

    messages = make_transcript(args.blocks, args.seed)
    tok = get_tokenizer("cl100k_base")
    total = sum(message_tokens(m, tok) for m in messages)
    print(
        f"transcript: {len(messages):,} messages, {total:,} tokens (cl100k_base); "
        f"budget B = {args.budget:,}"
    )

    with tempfile.TemporaryDirectory(dir=args.archive_dir) as tmp:
        store = TimedStore(DiskStore(Path(tmp) / "archive"))
        ws, agent, build_s = build(messages, args.budget, store)
        r = ws.render()
        print(
            f"engine build (not timed below): {build_s:.1f} s, {len(ws.blocks):,} blocks, "
            f"{agent.archives} group archives, rendering {r.tokens:,} tokens ({r.mode}), "
            f"dashboard {r.dashboard_tokens:,} tokens"
        )

        per_turn = engine_turns(ws, agent, args.turns, args.seed)
        plain, memoised, kept = trim_times(messages, args.budget, args.trim_repeats)
        sizes = [b.size for b in ws.blocks if b.type.value == "tool_result"]
        a = archive_times(ws, store, args.archives, Path(tmp), int(np.median(sizes)))
        arch, arch_engine, floor = a["total"], a["engine"], a["floor"]
        store_root = store.root

    eng = statistics.median(per_turn)
    trim = statistics.median(plain)
    trim_memo = statistics.median(memoised)
    a_med = statistics.median(arch)
    a_p95 = float(np.percentile(arch, 95))
    f_med = statistics.median(floor)
    f_p95 = float(np.percentile(floor, 95))
    e_med = statistics.median(arch_engine)
    print(
        f"engine per turn (register call + result, preflight, render) at {len(ws.blocks):,} "
        f"blocks: median {eng * 1e3:.1f} ms, mean {statistics.mean(per_turn) * 1e3:.1f} ms "
        f"over {len(per_turn)} turns"
    )
    print(
        f"trim_messages per call (same counter, counts every call): median {trim * 1e3:.1f} ms "
        f"over {len(plain)} runs; keeps {kept:,} messages"
    )
    print(
        f"trim_messages per call (counts memoised, its best case): median {trim_memo * 1e3:.1f} ms"
    )
    ratio = eng / trim
    print(f"ratio engine / trim_messages = {ratio:.3f}  (target <= 1)")
    print(f"ratio engine / memoised trim_messages = {eng / trim_memo:.3f}  (informative)")
    a_ratio = a_med / f_med
    fs_arch, fs_floor = max(a["fsyncs"]), max(a["floor_fs"])
    print(
        f"archive one block to DiskStore incl. fsync ({store_root}): median "
        f"{a_med * 1e3:.2f} ms, p95 {a_p95 * 1e3:.2f} ms, max {max(arch) * 1e3:.2f} ms over "
        f"{len(arch)} archives"
    )
    print(
        f"  of which the engine (outside the durable write): median {e_med * 1e3:.2f} ms; "
        f"the disk's floor (bare write + fsync + rename + folder fsync, same folder, "
        f"interleaved): median {f_med * 1e3:.2f} ms, p95 {f_p95 * 1e3:.2f} ms"
    )
    print(
        f"fsyncs per archive = {fs_arch} (bare durable write: {fs_floor})  "
        f"(target <= the bare write's)"
    )
    print(
        f"ratio archive / bare durable write = {a_ratio:.2f}  "
        f"(target <= {ARCHIVE_RATIO_TARGET:g})"
    )
    ok = ratio <= 1.0 and a_ratio <= ARCHIVE_RATIO_TARGET and fs_arch <= fs_floor
    print("PASS" if ok else "MISS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
