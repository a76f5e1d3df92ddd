"""Prompt-cache friendliness of the workspace's renderings.

Replays the 67-message coding-agent session
``property_tests/data/traces/long_session.json`` (written by
``make_long_session_trace.py``) at budgets 8k / 16k / 32k / 128k and measures,
over the requests after the first, the share of their tokens that is a
byte-identical prefix of the request before (the dashboard, last message of
every request, left out of the comparison; whole messages; tool schemas
included; ``workspace.cacheable_prefix_tokens``). The headline is
token-weighted (cached tokens / all tokens: what a provider bills at the
cached rate); the mean of the per-request shares is printed beside it.

Measured in the same run, on the same trace, with the same function:

* ``now``: this engine's default rendering;
* ``pre-change``: ``Workspace(cache_prefix=False)``, whose overflow-mode
  management rendering shows only protocol, pinned blocks and dashboard (the
  engine before its cache-friendly overflow rendering);
* ``paper engine`` (with ``--paper-engine DIR``): the paper's own reference
  implementation, imported from a local checkout of its public repository and
  driven through the same trace by ``_paper_engine.py`` (its full-method
  configuration). The target is then "now >= paper engine" at every budget.

Without ``--paper-engine`` (no checkout at hand, e.g. in CI) the target is
the same-run baseline: ours at least the pre-change rendering at every
budget. The numbers an earlier measurement gave for the paper engine, 0.79 / 0.86 /
0.92 / 0.94, are printed for reference only: they were measured on the
issue's own trace, and at 32k and 128k they exceed this trace's append-only
ceiling (B = 10^7: nothing ever rewritten), which no rendering that shows
each turn's new content and a fresh dashboard beats in normal mode.
Exit status 1 if a target is missed.

    [VISTA_LAB_PAPER_ENGINE=DIR] .venv/bin/python benchmarks/bench_prompt_cache.py
        [--paper-engine DIR]
        [--trace PATH] [--tokenizer cl100k_base] [--short-system]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report  # noqa: E402
from vistalab.workspace import (  # noqa: E402
    cacheable_prefix_tokens,
    get_tokenizer,
    load_trace,
    replay_trace,
)
from vistalab.workspace._accounting import message_tokens, tools_tokens  # noqa: E402
from vistalab.workspace._validate import _content_iv  # noqa: E402

TRACE = Path(__file__).resolve().parent.parent / "property_tests/data/traces/long_session.json"
BUDGETS = (8_000, 16_000, 32_000, 128_000)
#: An earlier measurement's numbers for the paper engine, on another trace.
ISSUE_PAPER_ENGINE = {8_000: 0.79, 16_000: 0.86, 32_000: 0.92, 128_000: 0.94}

Request = tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]


def request_shares(requests: Sequence[Request], tokenizer: Any) -> tuple[float, float]:
    """(token-weighted, mean per-request) cacheable share of a request stream.

    Every request after the first is compared with the one before it by
    :func:`vistalab.workspace.cacheable_prefix_tokens`; its size is its tool
    schemas plus its messages, dashboard included, in the engine's accounting.
    """
    cached = total = 0
    per: list[float] = []
    prev = None
    for messages, tools in requests:
        cur = SimpleNamespace(messages=[_projected(m) for m in messages], tools=list(tools))
        size = tools_tokens(cur.tools, tokenizer) + sum(
            message_tokens(m, tokenizer) for m in cur.messages
        )
        if prev is not None:
            c = cacheable_prefix_tokens(prev, cur, tokenizer)
            cached += c
            total += size
            per.append(c / size)
        prev = cur
    return cached / total, sum(per) / len(per)


def _projected(m: Mapping[str, Any]) -> Mapping[str, Any]:
    """``m`` with content parts joined the way the engine registers them, so a
    request that passes parts through (the paper's engine does) is counted
    like this engine's."""
    if not isinstance(m.get("content"), list):
        return m
    return {**m, "content": _content_iv(m["content"], m.get("role"))}


def engine_run(trace: list, budget: int, *, cache_prefix: bool, tokenizer: str) -> dict[str, Any]:
    """This engine's replay: its requests, block ids for translation, overflow turns."""
    res = replay_trace(
        trace, budget=budget, tokenizer=tokenizer, cache_prefix=cache_prefix, render_format="openai"
    )
    try:
        assert all(t.tokens <= budget and not t.protocol_problems for t in res.turns)
        requests = [(t.request["messages"], t.request.get("tools", [])) for t in res.turns]
        ids = {
            b.id: {"tool_call_id": b.tool_call_id} if b.tool_call_id else {"content": b.content}
            for b in res.workspace.blocks
        }
        return {
            "requests": requests,
            "block_ids": ids,
            "overflow": sum(t.mode == "overflow" for t in res.turns),
            "report_share": res.cacheable_share,
        }
    finally:
        res.workspace.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", default="cl100k_base")
    ap.add_argument(
        "--trace",
        type=Path,
        default=TRACE,
        help="the trace to replay (OpenAI or Anthropic format; default the 67-message session)",
    )
    ap.add_argument(
        "--paper-engine",
        type=Path,
        metavar="DIR",
        default=os.environ.get("VISTA_LAB_PAPER_ENGINE") or None,
        help="root of a checkout of the paper's reference implementation (the VISTA "
        "repository); measures it on the same trace in the same run (default: "
        "$VISTA_LAB_PAPER_ENGINE, so `make bench` picks it up)",
    )
    ap.add_argument(
        "--short-system",
        action="store_true",
        help="replace the trace's ~1.2k-token system prompt by one line (a fixed prefix "
        "that small makes every share lower)",
    )
    args = ap.parse_args()
    trace = load_trace(args.trace)
    if args.short_system:
        trace[0] = {"role": "system", "content": "You are a careful software engineer."}
    tok = get_tokenizer(args.tokenizer)
    paper = None
    if args.paper_engine is not None:
        from _paper_engine import core_dir, paper_engine_requests

        try:
            core_dir(args.paper_engine)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        paper = paper_engine_requests
    what = "one-line system prompt" if args.short_system else "its own system prompt"
    rep = Report(f"prompt-cache share on {args.trace.name}, {what} ({args.tokenizer})")
    if paper is None:
        rep.row(
            "target",
            "now >= pre-change, same run (pass --paper-engine DIR to measure the paper's "
            "engine on this trace; the earlier numbers for it come from another trace)",
        )
    ok = True
    for b in BUDGETS:
        new = engine_run(trace, b, cache_prefix=True, tokenizer=args.tokenizer)
        old = engine_run(trace, b, cache_prefix=False, tokenizer=args.tokenizer)
        new_w, new_m = request_shares(new["requests"], tok)
        old_w, old_m = request_shares(old["requests"], tok)
        # the replay's own per-turn report and this recomputation agree
        assert abs(new_w - new["report_share"]) < 5e-3, (new_w, new["report_share"])
        if paper is not None:
            try:
                reqs = paper(
                    args.paper_engine,
                    trace,
                    budget=b,
                    tools=new["requests"][0][1],
                    block_ids=new["block_ids"],
                )
            except ValueError as exc:
                print(f"--paper-engine: {exc}", file=sys.stderr)
                return 2
            tgt_w, tgt_m = request_shares(reqs, tok)
            target = f">= paper engine {tgt_w:.3f} (mean {tgt_m:.3f})"
        else:
            tgt_w = old_w
            target = (
                f">= pre-change; an earlier measurement gave {ISSUE_PAPER_ENGINE[b]:.2f} "
                "for the paper engine on its own trace"
            )
        hit = new_w >= tgt_w
        ok &= hit
        rep.row(
            f"B={b:>7,}  ({new['overflow']} overflow turns)",
            f"now {new_w:.3f} (mean {new_m:.3f})  pre-change {old_w:.3f} (mean {old_m:.3f})",
            target,
            hit,
        )
    ceiling = engine_run(trace, 10**7, cache_prefix=True, tokenizer=args.tokenizer)
    c_w, c_m = request_shares(ceiling["requests"], tok)
    rep.row(
        "append-only ceiling (B=10^7: nothing rewritten)",
        f"{c_w:.3f} (mean {c_m:.3f}): each turn's new content and dashboard are never cached",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
