"""The workspace engine against its executable Coq model, at scale: at least one
million operations of the differential test, and its speed.

Sequences are drawn by the same generator Hypothesis drives in
``vistalab.workspace.differential_test``, here from seeded ``random.Random``
streams (one per sequence, from ``SeedSequence``-style spawning: sequence ``i``
uses seed ``(seed, i)``), so the run can be split over processes and any
sequence replayed. Each sequence is applied to the engine, observed after every
operation with every token figure recounted, fed to the model's executable, and
compared line by line, and every rendering the model produced is built into an
OpenAI and an Anthropic request that the conformance suite's checker
(``vistalab.conformance.request_problems``) must accept. A divergence is shrunk
by dropping operations and printed.

Baseline (same run, same sequences): the engine alone, applying the operations
through the driver with its observation switched off (no model lines, no views,
no recount, no model). The ratio says what the differential
check costs per operation on top of running the engine.

Target: 0 divergences over >= 1,000,000 operations (default) across both
configurations (``cache_prefix`` True and False, both drawn by the generator),
two worker processes by default. Printed per configuration: the
operations, the sequences, and how many of them were compared with the model
whole (every observation line, none cut short); then ops/s and the total time.
Exit status 1 on any divergence or if the model executable is unavailable.

    .venv/bin/python benchmarks/bench_engine_differential.py              # 1e6 operations
    .venv/bin/python benchmarks/bench_engine_differential.py --quick      # 2e4 operations
    .venv/bin/python benchmarks/bench_engine_differential.py --workers 2 --seed 1
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import time
from typing import Any

from vistalab.workspace import OperationSequence, Workspace, build_engine_model
from vistalab.workspace._diff_drive import _Driver, _run_folder
from vistalab.workspace._diff_ops import RandomChoices, generate_sequence
from vistalab.workspace._differential import _minimize, check_sequence

from vistalab.conformance import request_problems

MAX_OPS = 40


def _sequence(seed: int, i: int) -> OperationSequence:
    return generate_sequence(RandomChoices(random.Random(f"{seed}:{i}")), max_ops=MAX_OPS)


def _configs() -> dict[str, dict[str, int]]:
    return {k: {"sequences": 0, "operations": 0, "whole": 0} for k in CONFIGS}


#: The two configurations counted apart (the engine's default is cache_prefix=True).
CONFIGS = ("cache_prefix=True", "cache_prefix=False")


def _chunk(args: tuple[int, int, int, str]) -> tuple[int, int, int, int, list[str], float,
                                                       dict[str, dict[str, int]]]:
    """Sequences [start, stop) of the stream: (sequences, operations, modelled,
    requests checked, divergence lines, CPU seconds, per-configuration counts)."""
    seed, start, stop, exe = args
    c0 = _cpu()
    ops = modelled = 0
    checked = [0]
    found: list[str] = []
    per = _configs()
    for i in range(start, stop):
        seq = _sequence(seed, i)
        outcome: dict[str, str] = {}
        finding, seen = check_sequence(seq, None, exe, request_problems, checked,
                                       outcome=outcome)
        ops += len(seq)
        modelled += int(seen)
        row = per[f"cache_prefix={bool(seq.config['cache_prefix'])}"]
        row["sequences"] += 1
        row["operations"] += len(seq)
        row["whole"] += int(outcome.get("compared") == "compared_whole")
        if finding is not None:
            seq, finding = _minimize(seq, finding, None, exe, time.perf_counter() + 60,
                                     request_problems)
            found.append(
                f"sequence {i}: {finding.invariant} ({finding.source}) after operation "
                f"{finding.step}: {finding.detail} | {seq.describe()}"
            )
    return stop - start, ops, modelled, checked[0], found, _cpu() - c0, per


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the model's
    executable runs as a child process, once per sequence)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _engine_only(seed: int, n: int) -> tuple[int, float]:
    """The baseline: the same sequences' operations on the engine alone."""
    c0 = _cpu()
    ops = 0
    for i in range(n):
        seq = _sequence(seed, i)
        ops += len(seq)
        _apply_engine_only(seq)
    return ops, _cpu() - c0


class _EngineOnly(_Driver):
    """The driver with its observation switched off: no model lines, no views
    (renderings in both formats, ``read_path`` of every payload), no recount;
    only the operations applied to the engine (and one rendering after an
    admitted result, which the guard's own check reads)."""

    def dash(self) -> int:
        return 0

    def _emit(self, *args: Any, **kwargs: Any) -> None:
        return None


def _apply_engine_only(seq: OperationSequence) -> None:
    with _run_folder(seq) as tmp:
        d = _EngineOnly(seq, Workspace, tmp + "/archive")
        try:
            for i, op in enumerate(seq.ops):
                d.apply(i, op)
        finally:
            d.ws.close()
            close = getattr(d.ws.store, "close", None)
            if callable(close):
                close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--operations", "--ops", dest="operations", type=int, default=1_000_000,
                   help="operations to run (default 1e6; --ops is the same)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="2e4 operations")
    args = p.parse_args(argv)
    target = 20_000 if args.quick else args.operations
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load}")
    exe = str(build_engine_model())
    print(f"model executable: {exe}")

    # Baseline on the first sequences of the same stream.
    base_n = 150 if args.quick else 400
    base_ops, base_cpu = _engine_only(args.seed, base_n)

    # Enough sequences for the target (mean length (MAX_OPS + 1) / 2 and a little more).
    t0 = time.perf_counter()
    found: list[str] = []
    stopped = False
    try:
        _run_chunks(args, exe, target, found, t0)
    except KeyboardInterrupt:  # Ctrl-C: report what ran
        stopped = True
    seqs, ops, modelled, requests, cpu = (
        _PROGRESS[k] for k in ("seqs", "ops", "modelled", "requests", "cpu")
    )
    wall = time.perf_counter() - t0
    if stopped:
        print("stopped before the target: the figures below cover the operations that ran")
    return _summary(args, found, seqs, ops, modelled, requests, cpu, wall, base_ops, base_cpu,
                    target)


_PROGRESS: dict[str, Any] = {"seqs": 0, "ops": 0, "modelled": 0, "requests": 0, "cpu": 0.0}
_PER = _configs()


def _run_chunks(args: Any, exe: str, target: int, found: list[str], t0: float) -> None:
    """Run chunks of the stream until ``target`` operations ran (counts in _PROGRESS)."""
    seqs = ops = modelled = requests = 0
    cpu = 0.0
    chunk = 200
    start = 0
    with mp.Pool(args.workers) if args.workers > 1 else _Serial() as pool:
        while ops < target:
            need = max(1, int((target - ops) / ((MAX_OPS + 1) / 2)) + 1)
            jobs = []
            for _ in range(max(1, min(args.workers * 4, need // chunk + 1))):
                jobs.append((args.seed, start, start + chunk, exe))
                start += chunk
            for n, o, m, r, f, c, per in pool.imap_unordered(_chunk, jobs):
                seqs, ops, modelled, cpu = seqs + n, ops + o, modelled + m, cpu + c
                requests += r
                for k, row in per.items():
                    for f_, v in row.items():
                        _PER[k][f_] += v
                found.extend(f)
                for line in f:  # at once: a long run may be stopped before its end
                    print("DIVERGENCE " + line, flush=True)
                _PROGRESS.update(seqs=seqs, ops=ops, modelled=modelled, requests=requests,
                                 cpu=cpu)
            el = time.perf_counter() - t0
            print(f"  {ops:,} operations, {seqs:,} sequences, {len(found)} divergences, "
                  f"{ops / el:,.0f} ops/s wall, {el:,.0f} s", flush=True)


def _summary(args: Any, found: list[str], seqs: int, ops: int, modelled: int, requests: int,
             cpu: float, wall: float, base_ops: int, base_cpu: float, target: int) -> int:
    diff_rate = ops / max(cpu, 1e-9)
    base_rate = base_ops / base_cpu
    print(
        f"differential: {ops:,} operations in {seqs:,} sequences ({modelled:,} compared with "
        f"the Coq model line by line), {len(found)} divergences; {diff_rate:,.0f} ops/s per "
        f"CPU second (engine, checks and model), {ops / wall:,.0f} ops/s wall with "
        f"{args.workers} worker(s); {requests:,} requests built from the model's renderings "
        f"accepted by the conformance checker"
    )
    for k, row in _PER.items():
        print(f"  {k}: {row['operations']:,} operations in {row['sequences']:,} sequences, "
              f"{row['whole']:,} of them compared with the model whole (every line)")
    print(f"total time {wall:,.1f} s wall ({wall / 60:.1f} min), {cpu:,.1f} CPU s")
    print(
        f"baseline (engine alone, same stream, {base_ops:,} operations): {base_rate:,.0f} ops/s "
        f"CPU; the differential check runs at {diff_rate / base_rate:.2f}x the engine's speed"
    )
    cut_short = any(row["whole"] < row["sequences"] for row in _PER.values())
    if cut_short:
        print("FAILED: some sequences were not compared with the model whole")
    return 1 if found or ops < target or cut_short else 0


class _Serial:
    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Any, jobs: list[Any]) -> Any:
        return map(fn, jobs)


if __name__ == "__main__":
    raise SystemExit(main())
