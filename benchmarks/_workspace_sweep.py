"""The sweep's sessions of ``bench_workspace_scaling.py``: the scenarios and their budgets, the
agent that fills a workspace, the text shapes of its results and the timed turns per cache state."""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np

__all__ = [
    "SCENARIOS",
    "TEXT_SHAPES",
    "TOKENIZER_NAMES",
    "Session",
    "Agent",
    "Sweeper",
    "new_workspace",
    "grow",
    "text_shape",
    "timed_turns",
    "lower_quartile",
]

SCENARIOS = {
    "normal": 10_000_000,
    "overflow": 128_000,
    "overflow8k": 8_000,
    "archiving": 128_000,
}
_VOCAB = (
    "county year value change total rate population median income growth index region "
    "state district survey estimate margin error source table row column record id"
).split()


class Session:
    """Deterministic small tool calls and results (one rng, so every scenario
    registers the same messages)."""

    def __init__(self, seed: int, shape: str = "word") -> None:
        self.rng = np.random.default_rng(seed)
        self.i = 0
        # Pre-drawn words: drawing per message would dominate the build.
        self.words = [str(w) for w in self.rng.choice(_VOCAB, 1 << 16)]
        # Other shapes: results are slices of one drawn text of that shape.
        self.shape = shape
        self.text = "" if shape == "word" else text_shape(shape, 1 << 18, seed)

    def pair(self) -> tuple[list[dict], str, str]:
        i = self.i
        self.i += 1
        cid = f"call_{i}"
        calls = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": "query", "arguments": f'{{"page": {i}}}'},
            }
        ]
        k = (i * 7919) % (len(self.words) - 40)
        n = 8 + (i * 31) % 24
        if self.shape == "word":
            result = f"page {i}: " + " ".join(self.words[k : k + n])
        else:
            at = (i * 7919) % (len(self.text) - 300)
            result = f"page {i}: " + self.text[at : at + 6 * n]
        return calls, cid, result


class Agent:
    """Registers tool-call turns; in the archiving scenario it archives its older
    visible blocks into one group whenever the candidate passes 0.8 B."""

    def __init__(self, ws, archiving: bool, keep_recent: int = 40) -> None:
        self.ws = ws
        self.archiving = archiving
        self.keep_recent = keep_recent
        self.first_visible = 3  # after the pinned system and task blocks
        self.archives = 0

    def turn(self, session: Session) -> None:
        calls, cid, result = session.pair()
        self.ws.register_tool_call(calls, content=None)
        self.ws.register_tool_result(cid, result)

    def after_turn(self) -> None:
        if not self.archiving:
            return
        ws = self.ws
        # The agent's own decision, not timed: the candidate's size and the
        # block count without copying the block list (engine internals).
        if ws._candidate_total() <= 0.8 * ws.budget:
            return
        last = len(ws._blocks) - self.keep_recent
        if last % 2 == 1:  # end on a result, so the group holds whole call/result pairs
            last -= 1
        if last <= self.first_visible:
            return
        ws.archive(f"B{self.first_visible}-B{last}", "older query results")
        self.first_visible = last + 1
        self.archives += 1


def new_workspace(budget: int, log_path: str | None = None, tokenizer="cl100k_base"):
    from vistalab.workspace import Workspace

    ws = Workspace(budget, tokenizer=tokenizer, log_path=log_path)
    ws.register_system("You are a careful data analysis agent.")
    ws.register_user("Find the county with the largest income growth.")
    return ws


def grow(ws, agent: Agent, session: Session, n_blocks: int) -> float:
    t0 = time.perf_counter()
    while len(ws._blocks) + 2 <= n_blocks:
        agent.turn(session)
        agent.after_turn()
    return time.perf_counter() - t0


class Sweeper:
    """Touches one byte per cache line of a buffer larger than the last-level
    cache, so the next turn starts with cold caches."""

    def __init__(self, megabytes: int) -> None:
        self.buf = np.zeros(megabytes * 2**20, dtype=np.uint8)

    def __call__(self) -> None:
        self.buf[::64] += 1


def _one_turn(ws, session: Session) -> tuple[float, float]:
    calls, cid, result = session.pair()
    w0, c0 = time.perf_counter(), time.process_time()
    ws.register_tool_call(calls, content=None)
    ws.register_tool_result(cid, result)
    return time.process_time() - c0, time.perf_counter() - w0


def timed_turns(ws, agent: Agent, session: Session, turns: int, sweep: Sweeper) -> dict:
    """CPU and wall seconds per turn in three cache states and per render, and
    the rendering's size."""
    t_cpu, t_wall, r_cpu, r_wall, r_msgs, r_vis = [], [], [], [], [], []
    warm, cold = [], []
    gc.collect()
    ws.render()
    for _ in range(turns):  # after render
        c, w = _one_turn(ws, session)
        t_cpu.append(c)
        t_wall.append(w)
        c1, w1 = time.process_time(), time.perf_counter()
        r = ws.render()
        c2, w2 = time.process_time(), time.perf_counter()
        r_cpu.append(c2 - c1)
        r_wall.append(w2 - w1)
        r_msgs.append(len(r.messages))
        # Visible top-level units (ledger rows of units in the prompt).
        r_vis.append(len(ws._ledger) - ws._ledger.archived_rows)
        assert r.tokens <= ws.budget
        agent.after_turn()
    for _ in range(turns):
        warm.append(_one_turn(ws, session)[0])
        agent.after_turn()
    for _ in range(turns):
        sweep()
        cold.append(_one_turn(ws, session)[0])
        agent.after_turn()
    return {
        "turn_cpu": lower_quartile(t_cpu),
        "turn_median": statistics.median(t_cpu),
        "turn_wall": lower_quartile(t_wall),
        "warm": lower_quartile(warm),
        "cold": lower_quartile(cold),
        "render_cpu": lower_quartile(r_cpu),
        "render_wall": lower_quartile(r_wall),
        "render_msgs": statistics.median(r_msgs),
        "visible": statistics.median(r_vis),
        "mode": r.mode,
    }


#: Text shapes of the refusal rows (and of the sweep's results).
TEXT_SHAPES = ("word", "long line", "base64", "CJK", "JSON")
#: Tokenizers of the refusal rows: every shipped one.
TOKENIZER_NAMES = ("cl100k_base", "o200k_base", "approx", "qwen3", "llama3", "deepseek_v4")


def text_shape(shape: str, nchars: int, seed: int = 0) -> str:
    """``nchars`` characters of one shape: words and spaces, one long line of
    hex digits (no whitespace), base64 (no whitespace), CJK sentences with
    CJK punctuation (no spaces), or compact JSON records. A ~0.3 MB unit is
    drawn once and repeated."""
    import base64
    import json
    import random

    rng = random.Random(seed)
    if shape == "word":
        unit = " ".join(rng.choice(_VOCAB) for _ in range(40_000))
    elif shape == "long line":
        unit = "".join(rng.choice("0123456789abcdef") for _ in range(300_000))
    elif shape == "base64":
        unit = base64.b64encode(rng.randbytes(225_000)).decode()
    elif shape == "CJK":
        unit = "".join(
            "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(8, 30)))
            + rng.choice("，。")
            for _ in range(12_000)
        )
    elif shape == "JSON":
        unit = json.dumps(
            [{"id": i, "name": rng.choice(_VOCAB), "value": rng.random()} for i in range(6_000)],
            separators=(",", ":"),
        )
    else:
        raise ValueError(shape)
    return (unit * (nchars // len(unit) + 1))[:nchars]


def lower_quartile(xs: list[float]) -> float:
    """The 25th percentile: other jobs on a shared machine only slow a turn
    down, so the lower quartile is the steadier estimate (the median is
    printed beside it)."""
    return float(np.percentile(xs, 25))
