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

Target: 0 divergences over >= 1,000,000 operations (``--ops 1000000``) across
both configurations (``cache_prefix`` True and False, both drawn by the
generator), two worker processes by default; the default ``--ops`` is small
enough for a run of about a minute. Printed per configuration: the operations,
the sequences, and how many of them were compared with the model whole (every
observation line, none cut short); then ops/s, the total time and, from the
measured rate, the projected time for a million operations.

Then the run-time check (``Workspace(..., check_model=True)``, Implementation
Details): the agent's session of ``bench_check_model.py`` at several session
lengths (``--check-turns``), in both configurations, CPU per operation of the
engine alone and of the engine under the check, measured in this run; the
ratio of the two is the check's overhead per operation, and the marginal
ratio (the operations added since the previous length) says whether the
per-operation cost stays flat as the session grows.
Exit status 1 on any divergence, if fewer operations ran than asked, or if the
model executable is unavailable.

    .venv/bin/python benchmarks/bench_engine_differential.py                  # about a minute
    .venv/bin/python benchmarks/bench_engine_differential.py --ops 1000000    # the target
    .venv/bin/python benchmarks/bench_engine_differential.py --quick          # 2e4 operations
    .venv/bin/python benchmarks/bench_engine_differential.py --check-turns 0  # no check_model part
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


def _children() -> float:
    """CPU seconds of the reaped children (the model's processes)."""
    t = os.times()
    return t.children_user + t.children_system


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
    p.add_argument("--operations", "--ops", dest="operations", type=int, default=4_000,
                   help="operations to run (default 4000, about a minute; the target is "
                        "1000000; --ops is the same)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="2e4 operations")
    p.add_argument("--check-turns", type=int, nargs="+", default=[20, 80, 240],
                   help="session lengths (agent turns) for check_model's overhead "
                        "(default 20 80 240; 0: skip that part)")
    args = p.parse_args(argv)
    target = 20_000 if args.quick else args.operations
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load}")
    exe = str(build_engine_model())
    print(f"model executable: {exe}")

    # Baseline on the first sequences of the same stream.
    base_n = 150 if args.quick else min(400, max(50, target // 20))
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
    status = _summary(args, found, seqs, ops, modelled, requests, cpu, wall, base_ops,
                      base_cpu, target)
    turns = sorted(t for t in args.check_turns if t > 0)
    if turns and not stopped:
        status = max(status, _check_model_overhead(exe, turns))
    return status


def _check_model_overhead(exe: str, lengths: list[int]) -> int:
    """check_model's CPU per operation over the engine's alone, per session length."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_check_model import _cpu as cpu_all
    from bench_check_model import session

    print("check_model=True (the run-time check) against the engine alone, the same session:")
    status = 0
    for cp in (True, False):
        prev: tuple[int, float, float] | None = None
        for turns in lengths:
            cost: dict[str, tuple[int, float]] = {}
            for name, kw in (("engine", {}), ("checked", {"check_model": exe})):
                k0 = _children()
                c0 = cpu_all()
                try:
                    n = session(lambda kw=kw, cp=cp: Workspace(4000, cache_prefix=cp,
                                                        keep_pending=False, **kw), turns)
                except Exception as exc:  # noqa: BLE001 - reported, then exit 1
                    print(f"  cache_prefix={cp} {turns} turns, {name}: the session failed: "
                          f"{type(exc).__name__}: {exc}"[:400])
                    return 1
                cost[name] = (n, cpu_all() - c0)
                model = _children() - k0
            n, e = cost["engine"]
            _, c = cost["checked"]
            line = (f"  cache_prefix={cp}: {turns:4d} turns, {n:5d} operations: engine "
                    f"{e / n * 1e3:7.3f} ms/op, checked {c / n * 1e3:8.3f} ms/op (of it the "
                    f"model's process {model / n * 1e3:7.3f}), overhead {c / max(e, 1e-9):6.2f}x")
            if prev is not None and n > prev[0]:
                dn, de, dc = n - prev[0], e - prev[1], c - prev[2]
                line += (f"; the {dn} operations added: {dc / dn * 1e3:8.3f} ms/op, "
                         f"{dc / max(de, 1e-9):6.2f}x")
            print(line, flush=True)
            prev = (n, e, c)
    return status


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
            # Chunks of at most 200 sequences, fewer for a small target.
            chunk = max(5, min(200, need // max(1, args.workers) + 1))
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
    if ops:
        print(f"projected for 1,000,000 operations at this rate: {1e6 / ops * cpu:,.0f} CPU s, "
              f"{1e6 / ops * wall / 3600:,.2f} h wall with {args.workers} worker(s) "
              f"at this machine's load")
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
