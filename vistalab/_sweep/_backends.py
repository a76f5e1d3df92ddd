"""Where cells run: local processes (joblib/loky) by default, or an existing
Dask distributed scheduler through Dask's own client.

Both yield outcomes as cells finish, in any order; the runner stores them by
index, so the order never matters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from vistalab._core import import_optional
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

from ._task import CellOutcome, CellTask, execute_cell, warm_worker, watch_parent

__all__ = [
    "Backend", "LocalBackend", "DaskBackend", "make_backend", "available_cpus",
    "scheduler_address_iv",
]


def available_cpus() -> int:
    """CPUs this process may use (affinity-aware)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


@runtime_checkable
class Backend(Protocol):
    """Executes cells and yields their outcomes as they complete.

    Required members: ``name``, ``workers``, ``start``, ``run``, ``close``.
    """

    name: str

    @property
    def workers(self) -> int:
        """Number of cells that can run at once."""
        ...

    def start(self, warm_modules: Sequence[str] = ()) -> float:
        """Bring workers up and import ``warm_modules`` on them; return the seconds taken."""
        ...

    def run(self, tasks: Sequence[CellTask]) -> Iterator[CellOutcome]:
        """Compute every task; yield outcomes in completion order."""
        ...

    def close(self) -> None:
        """Release what ``start`` acquired."""
        ...


class LocalBackend:
    """Parallel local processes through joblib (loky), or in-process for one worker.

    Parameters
    ----------
    workers : int, optional
        Processes to use; defaults to the CPUs available to this process. With
        1, cells run in this process (no pool, no pickling). Before a run the
        count is capped at the cells to compute and the CPUs available
        (:meth:`limit_workers`), and the cap is reported.

    Notes
    -----
    Every worker watches its parent: if the sweep's process dies (even by
    SIGKILL, with no chance to clean up) the workers exit within about a
    second instead of running on.
    """

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.requested = None if workers is None else as_int(
            "workers", workers, lo=1, fix="use a positive number of worker processes")
        self._workers: int = available_cpus() if self.requested is None else self.requested
        self._executor: Any = None

    def limit_workers(self, cells: int) -> str:
        """Cap the workers at ``cells`` and the available CPUs; return a note when capped."""
        cpus = available_cpus()
        limit = max(1, min(cells, cpus))
        if self._workers <= limit:
            return ""
        asked = self._workers
        self._workers = limit
        if self.requested is None:  # the default (all CPUs) is capped without a note
            return ""
        return (f"workers={asked} capped at {limit}: {cells} cell(s) to compute, "
                f"{cpus} CPU(s) available (more processes would only wait)")

    @property
    def workers(self) -> int:
        return self._workers

    def start(self, warm_modules: Sequence[str] = ()) -> float:
        t0 = time.perf_counter()
        if self._workers == 1:
            warm_worker(warm_modules)
        else:
            import_optional("joblib", "local sweep workers (--workers N)")
            from joblib.externals.loky import get_reusable_executor

            # loky's executor (what joblib uses), with an initializer: every worker
            # watches this process from the moment it starts, before any task.
            self._executor = get_reusable_executor(
                max_workers=self._workers, initializer=watch_parent, initargs=(os.getpid(),),
                timeout=60)
            futures = [self._executor.submit(warm_worker, tuple(warm_modules), 0.1)
                       for _ in range(self._workers)]
            for f in futures:
                f.result()
        return time.perf_counter() - t0

    def run(self, tasks: Sequence[CellTask]) -> Iterator[CellOutcome]:
        if self._workers == 1:
            for task in tasks:
                yield execute_cell(task)
            return
        from concurrent.futures import as_completed

        if self._executor is None:
            self.start()
        assert self._executor is not None
        futures = {self._executor.submit(execute_cell, t): t for t in tasks}
        try:
            for fut in as_completed(futures):
                task = futures[fut]
                try:
                    yield fut.result()
                except Exception as exc:  # noqa: BLE001 - a crashed worker fails its cell
                    yield CellOutcome(task.index, task.key, None, f"{type(exc).__name__}: {exc}",
                                      None, 0.0, "local")
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        self._executor = None


class DaskBackend:
    """Cells as tasks on a Dask distributed cluster, through ``distributed.Client``.

    Parameters
    ----------
    address : str, optional
        Scheduler address, e.g. ``tcp://host:8786``.
    client : distributed.Client, optional
        An existing client to use instead (not closed by :meth:`close`).
    timeout : float
        Seconds to wait for the scheduler.
    """

    name = "dask"

    def __init__(
        self, address: str | None = None, *, client: Any = None, timeout: float = 10.0
    ) -> None:
        if (address is None) == (client is None):
            raise DomainError("address/client", (address, client),
                              "must give exactly one of a scheduler address and a client",
                              "pass --scheduler tcp://host:8786")
        if address is not None:
            address = scheduler_address_iv(address)
        self.address = address
        self._client = client
        self._owns_client = client is None
        self._timeout = timeout

    @property
    def client(self) -> Any:
        if self._client is None:
            raise DomainError("backend", "dask", "must be started before use", "call start()")
        return self._client

    @property
    def workers(self) -> int:
        """Worker threads on the cluster (0 before :meth:`start`)."""
        if self._client is None:
            return 0
        return int(sum(self._client.nthreads().values()))

    def start(self, warm_modules: Sequence[str] = ()) -> float:
        t0 = time.perf_counter()
        if self._client is None:
            Client = import_optional("distributed", "the Dask backend (--scheduler)").Client

            try:
                self._client = Client(self.address, timeout=self._timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise DomainError("--scheduler", self.address,
                                  "must be the address of a running Dask scheduler",
                                  "start one (`dask scheduler`, then `dask worker ADDRESS`) or "
                                  f"omit --scheduler to run locally; error was: {exc}") from None
        self.client.run(warm_worker, tuple(warm_modules))
        return time.perf_counter() - t0

    def run(self, tasks: Sequence[CellTask]) -> Iterator[CellOutcome]:
        as_completed = import_optional("distributed", "the Dask backend").as_completed

        if not tasks:
            return
        futures = self.client.map(execute_cell, list(tasks), pure=False)
        by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
        for fut in as_completed(futures):
            task = by_key[fut.key]
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker fails only its cell
                outcome = CellOutcome(task.index, task.key, None,
                                      f"{type(exc).__name__}: {exc}", None, 0.0, "dask")
            fut.release()
            yield outcome

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None


_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


def scheduler_address_iv(address: Any) -> str:
    """Check a Dask scheduler address at the door: ``tcp://host:port`` (or ``host:port``)."""
    fix = "pass the scheduler's address, e.g. --scheduler tcp://127.0.0.1:8786"
    if not isinstance(address, str) or not address.strip():
        raise DomainError("--scheduler", address, "must be a scheduler address, not empty", fix)
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in _SCHEMES:
        raise DomainError("--scheduler", address,
                          f"must use one of the schemes {', '.join(_SCHEMES)}", fix)
    if scheme != "inproc":
        host, colon, port = rest.rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise DomainError("--scheduler", address,
                              "must be HOST:PORT with a port between 1 and 65535", fix)
    return f"{scheme}://{rest}"


def make_backend(*, workers: int | None = None, scheduler: str | None = None) -> Backend:
    """The backend for the CLI options ``--workers`` / ``--scheduler``."""
    if scheduler is not None:
        if workers is not None:
            raise DomainError("--workers", workers, "applies to local runs only",
                              "drop --workers: with --scheduler the cluster's workers are used")
        return DaskBackend(scheduler)
    return LocalBackend(workers)
