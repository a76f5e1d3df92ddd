"""Conversations per second the conformance suite checks (``vistalab.conformance``),
so users can budget it in their CI.

What is timed: ``check(manager, examples=N)`` end to end -- Hypothesis draws
each conversation and its budget near a boundary, the manager runs twice
(determinism) in its timeout thread, and every invariant is checked -- for

* a *trivial* manager (returns its input; run at one fixed budget large enough
  for every conversation, so it passes and nothing is shrunk): the suite's own
  cost per conversation;
* ``tail_trimmer`` (the reference trimmer; budgets drawn near every
  boundary): a realistic trimmer that counts tokens;
* vista-lab's ``Workspace`` through ``WorkspaceAdapter`` (informational).

Baseline, same run: Hypothesis drawing the same N conversations with the same
settings and doing nothing else (generation is the floor the suite cannot go
below). Each row's ratio to it says what budgets, runs and checks cost on top.

Targets, for the trivial manager in both formats: at least 100 conversations
per second of CPU time, and at most 3x the CPU time of generating the same
conversations alone (the baseline row, measured in the same run). CPU time of
this process (all threads) is what the targets are judged on; wall time is
printed beside it.

    .venv/bin/python benchmarks/bench_conformance.py [--examples 200] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, best_of  # noqa: E402

TARGET_RATE = 100.0  # conversations per CPU second, trivial manager
TARGET_RATIO = 3.0  # at most this many times the cost of generation alone
TARGET_EXAMPLES = 200


def _generation_only(protocol: str, examples: int) -> int:
    """Draw ``examples`` conversations exactly as ``check`` does."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from vistalab.conformance import conversations

    convs = conversations(protocol)
    drawn = [0]

    @hseed(0)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck),
              verbosity=Verbosity.quiet)
    @given(st.data())
    def draw(data):
        data.draw(convs)
        drawn[0] += 1

    draw()
    return drawn[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=TARGET_EXAMPLES)
    parser.add_argument("--quick", action="store_true", help="one repeat instead of three")
    args = parser.parse_args()
    repeat = 1 if args.quick else 3
    n = args.examples

    from vistalab.conformance import WorkspaceAdapter, as_counter, check, tail_trimmer

    def identity(messages, budget, count):
        return messages

    as_counter(None, "openai")("")  # load the tokenizer outside the timings
    report = Report(f"conformance suite throughput, {n} conversations per run")
    for protocol in ("openai", "anthropic", "gemini"):
        g_wall, g_cpu, drawn = best_of(lambda p=protocol: _generation_only(p, n), repeat)
        report.row(f"[{protocol}] baseline: generation only ({drawn} drawn)",
                   f"{drawn / g_cpu:8.1f} conv/s CPU ({g_cpu:.2f} s CPU, {g_wall:.2f} s wall)")
        wall, cpu, rep = best_of(
            lambda p=protocol: check(identity, protocol=p, examples=n, budgets=[10**9]), repeat
        )
        rate = rep.conversations / cpu
        ratio = (cpu / rep.conversations) / (g_cpu / drawn)
        report.row(f"[{protocol}] trivial manager: {rep.conversations} checked, ok={rep.ok}",
                   f"{rate:8.1f} conv/s CPU ({cpu:.2f} s CPU, {wall:.2f} s wall)",
                   f">= {TARGET_RATE:g} conv/s CPU", rep.ok and rate >= TARGET_RATE)
        report.row(f"[{protocol}] trivial manager / generation alone, per conversation",
                   f"{ratio:8.2f}x", f"<= {TARGET_RATIO:g}x", rep.ok and ratio <= TARGET_RATIO)
        wall, cpu, rep = best_of(
            lambda p=protocol: check(tail_trimmer, protocol=p, examples=n), repeat
        )
        report.row(f"[{protocol}] tail_trimmer, drawn budgets: ok={rep.ok}",
                   f"{rep.conversations / cpu:8.1f} conv/s CPU ({cpu:.2f} s CPU, "
                   f"{wall:.2f} s wall; {cpu / g_cpu:.2f}x generation)")
        wall, cpu, rep = best_of(
            lambda p=protocol: check(WorkspaceAdapter, protocol=p, examples=n), 1
        )
        report.row(f"[{protocol}] Workspace adapter: ok={rep.ok}",
                   f"{rep.conversations / cpu:8.1f} conv/s CPU ({cpu:.2f} s CPU, "
                   f"{wall:.2f} s wall; {cpu / g_cpu:.2f}x generation)")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
