"""What a worker receives and returns: one cell in, one outcome out.

Kept small and free of I/O so any executor (in-process, joblib/loky processes,
Dask workers) can run it; errors are caught and returned so one bad cell does
not abort the others.
"""

from __future__ import annotations

import importlib
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._grid import cell_seed

__all__ = [
    "CellTask", "CellOutcome", "execute_cell", "execute_watched", "warm_worker", "watch_parent",
]

RunFn = Callable[[dict[str, Any], np.random.SeedSequence], Mapping[str, Any]]


@dataclass(frozen=True)
class CellTask:
    """One cell to compute.

    Parameters
    ----------
    index : int
        Canonical index (row order only).
    key : str
        Content hash of ``params``; the cell's seed is derived from it.
    params : dict
        Resolved parameters.
    entropy : int
        The sweep's root seed entropy.
    run : callable or str
        The experiment's run function or its ``"module:function"`` reference.
    """

    index: int
    key: str
    params: dict[str, Any]
    entropy: int
    run: RunFn | str


@dataclass(frozen=True)
class CellOutcome:
    """What came back from a worker.

    Parameters
    ----------
    index, key : int, str
        Identify the cell.
    row : dict or None
        The experiment's raw output (None when it raised).
    error : str or None
        ``"ExceptionType: message"`` when the run function raised.
    traceback : str or None
        The formatted traceback for the error.
    elapsed_s : float
        Wall time on the worker.
    worker : str
        ``host:pid:thread`` of the worker.
    """

    index: int
    key: str
    row: dict[str, Any] | None
    error: str | None
    traceback: str | None
    elapsed_s: float
    worker: str


def _resolve(run: RunFn | str) -> RunFn:
    if callable(run):
        return run
    module, _, attr = run.partition(":")
    fn: RunFn = getattr(importlib.import_module(module), attr)
    return fn


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def execute_cell(task: CellTask) -> CellOutcome:
    """Run one cell with its own seed ``cell_seed(entropy, key)``."""
    start = time.perf_counter()
    try:
        fn = _resolve(task.run)
        row = dict(fn(dict(task.params), cell_seed(task.entropy, task.key)))
        return CellOutcome(task.index, task.key, row, None, None,
                           time.perf_counter() - start, _worker_id())
    except Exception as exc:  # noqa: BLE001 - reported per cell, the sweep goes on
        return CellOutcome(task.index, task.key, None, f"{type(exc).__name__}: {exc}",
                           traceback.format_exc(), time.perf_counter() - start, _worker_id())


_WATCHING: set[int] = set()


def watch_parent(parent_pid: int, *, period_s: float = 0.2) -> None:
    """In a worker process, exit as soon as the sweep's process ``parent_pid`` dies.

    A daemon thread polls ``os.getppid()``: when the parent dies (even by
    SIGKILL) the worker is re-parented and exits at once, so no worker outlives
    the sweep by more than ``period_s`` (plus the cell step it is in, when that
    holds the GIL). Call it in a process whose parent is ``parent_pid``; does
    nothing in the sweep's own process.
    """
    if os.getpid() == parent_pid or parent_pid in _WATCHING:
        return
    # Compare with the pid passed in, not with getppid() at install time: a
    # worker still starting up when the sweep died is already re-parented.
    if os.getppid() != parent_pid:
        os._exit(1)
    _WATCHING.add(parent_pid)

    def _watch() -> None:
        while True:
            time.sleep(period_s)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=_watch, name="vista-lab-parent-watch", daemon=True).start()


def execute_watched(task: CellTask, parent_pid: int) -> CellOutcome:
    """:func:`execute_cell` in a pool worker that exits when ``parent_pid`` dies."""
    watch_parent(parent_pid)
    return execute_cell(task)


def warm_worker(modules: Iterable[str], hold_s: float = 0.0, parent_pid: int | None = None
                ) -> str:
    """Import ``modules`` in a worker (so imports are not timed as cell work).

    ``hold_s`` keeps the worker busy a moment, so a pool handing out one warm-up
    task per free worker reaches every worker rather than the first one twice.
    ``parent_pid`` makes the worker exit when that process dies (:func:`watch_parent`).
    """
    if parent_pid is not None:
        watch_parent(parent_pid)
    for m in modules:
        importlib.import_module(m)
    if hold_s > 0:
        time.sleep(hold_s)
    return _worker_id()
