"""The refusal rows of ``bench_workspace_scaling.py``: a tool result far over
the per-result cap, of every text shape, registered on a small workspace with
every shipped tokenizer; it must be refused in under ``REFUSE_TARGET_S`` with
under ``REFUSE_TARGET_BYTES`` of extra memory (paper, "Implementation Details":
the budget guard decides before a result enters the context)."""

from __future__ import annotations

import argparse
import gc
import resource
import time
import tracemalloc
from typing import NamedTuple

#: A refusal's wall-clock target and its extra-memory target.
REFUSE_TARGET_S = 0.05
REFUSE_TARGET_BYTES = 50 * 2**20


def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Refusal(NamedTuple):
    """One refusal of a big result: wall and CPU seconds of the call, its
    ``tracemalloc`` peak and max-RSS growth in bytes, and the guard's effects."""

    wall: float
    cpu: float
    peak: int
    rss: int
    effects: dict


def refuse_big_result(text: str, tokenizer: str, budget: int) -> Refusal:
    """Register ``text`` as a tool result on a small workspace and measure it
    (see :class:`Refusal`). The tokenizer's one-time loading (its vocabulary,
    the bounds read off it) is done before the clock starts."""
    from bench_workspace_scaling import new_workspace
    from vistalab.workspace import get_tokenizer, max_token_bytes

    tok = get_tokenizer(tokenizer)
    tok.count("warm up " * 10)
    max_token_bytes(tok)
    getattr(tok, "vocab_bound", None)
    ws = new_workspace(budget, tokenizer=tok)
    ws.register_tool_call(
        [{"id": "big", "type": "function", "function": {"name": "dump", "arguments": "{}"}}]
    )
    gc.collect()
    rss0 = _maxrss_bytes()
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    ws.register_tool_result("big", text)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = _maxrss_bytes() - rss0
    return Refusal(dt, cpu, peak, rss, dict(ws.events[-1].effects))


def copy_seconds(text: str) -> float:
    """Wall seconds of one copy of ``text`` a piece at a time (the cost of
    looking at every character once: the floor for any check of its bytes)."""
    piece = 1 << 16
    t0 = time.perf_counter()
    for i in range(0, len(text), piece):
        text[i : i + piece].encode("utf-16-le", "surrogatepass")
    return time.perf_counter() - t0


def refusal_rows(megabytes: int, args: argparse.Namespace, failures: list[str]) -> None:
    """Print one row per text shape and tokenizer (``args.big_tokenizers``)
    for a ``megabytes`` MB result at ``args.big_budget``, fastest of
    ``args.big_repeats``; a missed target is appended to ``failures``."""
    from bench_workspace_scaling import TEXT_SHAPES, text_shape

    nchars = megabytes * 10**6
    print(
        f"{megabytes} MB tool results (budget {args.big_budget:,}), per text shape and "
        f"tokenizer: refused by (cap; at_least = before counting to the end), wall ms "
        f"and CPU ms "
        f"(fastest of {max(1, args.big_repeats)}), tracemalloc peak MB, max RSS growth MB "
        f"(largest); 'copy' = one pass over the text (utf-16 encode, same run, fastest): "
        f"the floor of any check of its characters"
    )
    for shape in TEXT_SHAPES:
        text = text_shape(shape, nchars, args.seed)
        reps = max(1, args.big_repeats)
        floor = min(copy_seconds(text) for _ in range(reps))
        for name in args.big_tokenizers.split(","):
            try:
                runs = [refuse_big_result(text, name, args.big_budget) for _ in range(reps)]
            except ImportError as exc:  # an optional extra not installed
                print(f"  {shape:<10} {name:<12} skipped ({exc})")
                continue
            # The fastest run is judged (a loaded machine only adds time);
            # memory is judged on the largest.
            best = min(runs, key=lambda r: r.wall)
            dt, cpu, eff = best.wall, min(r.cpu for r in runs), best.effects
            peak, rss = max(r.peak for r in runs), max(r.rss for r in runs)
            small = peak < REFUSE_TARGET_BYTES and rss < REFUSE_TARGET_BYTES
            ok = dt < REFUSE_TARGET_S and small
            print(
                f"  {shape:<10} {name:<12} refused={bool(eff.get('rejected'))} "
                f"({eff.get('decided_by')}, at_least={bool(eff.get('attempted_at_least'))}) "
                f"{dt * 1e3:8.1f} ms (cpu {cpu * 1e3:6.1f}, copy {floor * 1e3:6.1f} ms) "
                f"peak {peak / 2**20:5.1f} MB "
                f"RSS +{rss / 2**20:5.1f} MB "
                f"({'PASS' if ok else 'FAIL'}, target < {REFUSE_TARGET_S * 1e3:.0f} ms and "
                f"< {REFUSE_TARGET_BYTES // 2**20} MB)",
                flush=True,
            )
            if not ok or not eff.get("rejected"):
                failures.append(f"big result refusal ({shape}, {name})")
        del text
        gc.collect()
