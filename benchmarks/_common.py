"""Helpers shared by the sims benchmarks: best-of-k timing, a results table,
and the exit status (1 when a target is missed).

Benchmarks are scripts, not tests: every speed claim is a ratio against a
baseline measured in the same run, on the same (possibly shared) machine.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["best_of", "Report", "machine_line", "warm_allocator"]


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float, Any]:
    """Smallest wall time and smallest CPU time (this process, all threads) of
    ``repeat`` calls, and the last result.

    Other load only slows a run down, so minima are the least noisy
    estimates. CPU time is what the targets are judged on: on a machine
    shared with other jobs, wall time measures the scheduler as much as the
    code (both are printed).
    """
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, max(cpu, 1e-9), out


def warm_allocator() -> None:
    """Put glibc's allocator in the state a long-running process reaches.

    glibc serves every block of at least its mmap threshold (128 KiB at
    start) with fresh pages, faulted in and zeroed on first touch, and raises
    the threshold to the size of the largest such block freed so far (up to
    32 MiB). Arrays of a few MiB are therefore cheap or dear depending on what
    ran before: the same simulator code measured 3.1e4 or 6.5e4 trials/s,
    the same naive estimator 4 or 8 ms per trial. Freeing one 16 MiB block up
    front puts every row of a script in the warm state.
    """
    import numpy as np

    block = np.ones((1 << 21) + 4096)
    del block


def durable_write(folder: str | os.PathLike[str], name: str, data: bytes) -> None:
    """The steps a durable store must take, without an engine: a temporary file,
    write, fsync, rename to ``name``, folder fsync (the disk's floor for one
    durable payload write)."""
    tmp, final = os.path.join(folder, f".{name}.tmp"), os.path.join(folder, name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)
    dfd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def machine_line() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} cores, load average {load:.2f}")


@dataclass
class Report:
    """Rows of (what, measured, target, ok) printed as they come."""

    title: str
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        print(f"# {self.title}")
        print(f"# {machine_line()}")

    def row(self, what: str, measured: str, target: str | None = None,
            ok: bool | None = None) -> None:
        status = "" if ok is None else ("  PASS" if ok else "  FAIL")
        tgt = "" if target is None else f"   (target {target})"
        print(f"{what:<58} {measured}{tgt}{status}", flush=True)
        if ok is False:
            self.failures.append(what)

    def note(self, text: str) -> None:
        print(f"# {text}", flush=True)

    def finish(self) -> int:
        if self.failures:
            print(f"# {len(self.failures)} target(s) missed: {', '.join(self.failures)}")
            print("# (a loaded machine slows the fast paths more than the baselines; "
                  "rerun when it is quiet before concluding)")
            return 1
        print("# all targets met")
        return 0


def run(main: Callable[[], int]) -> None:
    sys.exit(main())
