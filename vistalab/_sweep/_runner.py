"""Running a sweep: skip stored cells, send the rest to a backend, store each
outcome as it arrives, and compact the table once every cell is done."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vistalab.theory import DomainError

from .._provenance import provenance
from ._backends import Backend, LocalBackend
from ._config import SweepConfig, config_summary
from ._errors import SweepStoreError
from ._schema import coerce_row
from ._store import (
    MANIFEST_FORMAT,
    CellRecord,
    CellStore,
    DirectoryStore,
    MemoryStore,
    build_table,
    column_metadata,
)
from ._task import CellTask

__all__ = [
    "CellFailure", "SweepProgress", "SweepSummary", "SweepResult", "run_sweep", "default_out",
    "csv_dtypes",
]


@dataclass(frozen=True)
class CellFailure:
    """A cell whose run function raised (or returned a malformed row).

    Parameters
    ----------
    index : int
        Canonical index of the cell.
    params : dict
        Its parameters.
    error : str
        ``"ExceptionType: message"``.
    traceback : str or None
        Where it happened, when known.
    """

    index: int
    params: dict[str, Any]
    error: str
    traceback: str | None


@dataclass(frozen=True)
class SweepProgress:
    """A snapshot passed to the progress callback after each cell.

    Parameters
    ----------
    total : int
        Cells in the sweep.
    done : int
        Cells finished so far, including those found already stored.
    skipped : int
        Cells found already stored when the run started.
    failed : int
        Cells whose run raised.
    elapsed_s : float
        Seconds since the backend started computing.
    """

    total: int
    done: int
    skipped: int
    failed: int
    elapsed_s: float


@dataclass(frozen=True)
class SweepSummary:
    """What a run did.

    Parameters
    ----------
    experiment : str
        Experiment name.
    n_cells : int
        Cells in the sweep.
    computed : int
        Cells computed by this run.
    skipped : int
        Cells already stored (resumed).
    failed : tuple of CellFailure
        Cells that raised; they are not stored and a rerun retries them.
    complete : bool
        Whether every cell is stored and the final table written.
    seed_entropy : int
        Root entropy of the sweep (a cell uses
        ``SeedSequence(seed_entropy, spawn_key=key_words(cell.key))``).
    backend : str
        ``"local"`` or ``"dask"``.
    workers : int
        Cells that could run at once.
    startup_s : float
        Seconds to bring the workers up (excluded from ``wall_s``).
    wall_s : float
        Seconds from the first task submitted to the last outcome stored.
    cell_seconds : float
        Sum of the cells' own run times (work done, on all workers).
    files : dict
        Written files by kind (``parquet``, ``csv``, ``sidecar``), empty if incomplete.
    discarded : tuple of str
        Stored cells that were unreadable (recomputed).
    notes : tuple of str
        What the run adjusted, e.g. the worker count capped at the cells to compute.
    """

    experiment: str
    n_cells: int
    computed: int
    skipped: int
    failed: tuple[CellFailure, ...]
    complete: bool
    seed_entropy: int
    backend: str
    workers: int
    startup_s: float
    wall_s: float
    cell_seconds: float
    files: dict[str, str] = field(default_factory=dict)
    discarded: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def cells_per_second(self) -> float:
        """Throughput of this run (computed cells per wall second)."""
        return self.computed / self.wall_s if self.wall_s > 0 else float("nan")


@dataclass(frozen=True)
class SweepResult:
    """A finished run: its summary and, when complete, the results table."""

    summary: SweepSummary
    table: pa.Table | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _resolve_seed(
    config: SweepConfig, manifest: Mapping[str, Any] | None, where: str
) -> int:
    if manifest is None:
        if config.seed is not None:
            return config.seed
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if manifest.get("experiment") != config.experiment.name:
        raise SweepStoreError("out", where,
                              f"must hold cells of experiment {config.experiment.name!r} to be "
                              f"extended, but holds experiment {manifest.get('experiment')!r}",
                              "choose another `out` folder, or pass fresh=True to discard the "
                              "stored cells")
    stored = int(manifest["seed_entropy"])
    if config.seed is not None and config.seed != stored:
        raise SweepStoreError("out", where,
                              f"must hold cells of the same seed to be extended, but it was "
                              f"started with seed {stored} (config says {config.seed})",
                              "restore the seed, choose another `out` folder, or pass fresh=True")
    return stored


def run_sweep(
    config: SweepConfig,
    *,
    out: str | os.PathLike[str] | CellStore | None = None,
    backend: Backend | None = None,
    fresh: bool = False,
    progress: Callable[[SweepProgress], None] | None = None,
) -> SweepResult:
    """Run every cell of ``config`` not already stored in ``out``.

    Parameters
    ----------
    config : SweepConfig
        From :func:`load_config` or :func:`parse_config`.
    out : path, CellStore or None
        A folder (a :class:`DirectoryStore`: resumable and extendable, writes
        ``results.parquet``/``.csv``/``.json``), any store, or None for an
        in-memory run.
    backend : Backend, optional
        Defaults to :class:`LocalBackend` on every available CPU (capped at the
        number of cells to compute).
    fresh : bool
        Discard cells already stored in the folder.
    progress : callable, optional
        Called with a :class:`SweepProgress` once before the first cell and
        after every cell.

    Returns
    -------
    SweepResult
        Summary plus the table (None if some cells failed).

    Notes
    -----
    A cell's seed is ``SeedSequence(entropy, spawn_key=key_words(cell.key))``,
    a function of the sweep's entropy and the cell's parameters only. The table
    is therefore identical whatever the backend, the number of workers, the
    finish order, how many times the run was interrupted and resumed, and which
    other values the config lists: a store extended with new values reuses every
    stored cell unchanged and computes only the new ones.
    """
    own_store = False
    if out is None:
        store: CellStore = MemoryStore()
    elif isinstance(out, (str, os.PathLike)):
        store = DirectoryStore(out, fresh=fresh)
        own_store = True
    else:
        store = out
    where = str(out) if isinstance(out, (str, os.PathLike)) else "<store>"
    try:
        return _run(config, store, backend or LocalBackend(), progress, where)
    finally:
        if own_store and isinstance(store, DirectoryStore):
            store.close()


def _run(
    config: SweepConfig,
    store: CellStore,
    backend: Backend,
    progress: Callable[[SweepProgress], None] | None,
    where: str,
) -> SweepResult:
    exp = config.experiment
    previous = store.load_manifest()
    entropy = _resolve_seed(config, previous, where)
    runs = list(previous.get("runs", [])) if previous else []
    run_entry: dict[str, Any] = {"started_utc": _now(), "backend": backend.name, "status":
                                 "running", "config": config.file, "digest": config.digest,
                                 "n_cells": config.n_cells}
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "experiment": exp.name,
        "seed_entropy": str(entropy),
        "config": config_summary(config),
        "runs": [*runs, run_entry],
    }
    records = store.load_records(config.cells)
    todo = [c for c in config.cells if c.key not in records]
    skipped = len(records)
    run_entry["todo"] = len(todo)
    store.save_manifest(manifest)

    failures: list[CellFailure] = []
    cell_seconds = 0.0
    startup = wall = 0.0
    workers = 0
    notes: list[str] = []
    status = "interrupted"
    try:
        if todo:
            limit = getattr(backend, "limit_workers", None)
            if callable(limit):
                note = limit(len(todo))
                if note:
                    notes.append(note)
            startup = backend.start(exp.warm_modules)
        workers = backend.workers
        run_entry["workers"] = workers
        if notes:
            run_entry["notes"] = notes
        t0 = time.perf_counter()
        if progress:
            progress(SweepProgress(config.n_cells, skipped, skipped, 0, 0.0))
        tasks = [CellTask(c.index, c.key, dict(c.params), entropy, exp.run) for c in todo]
        by_key = {c.key: c for c in todo}
        done = skipped
        for outcome in backend.run(tasks):
            cell = by_key[outcome.key]
            cell_seconds += outcome.elapsed_s
            error, tb = outcome.error, outcome.traceback
            if error is None and outcome.row is not None:
                try:
                    row = coerce_row(exp, outcome.row)
                except DomainError as exc:
                    error, tb = f"{type(exc).__name__}: {exc}", None
                else:
                    rec = CellRecord(cell.index, cell.key, row, outcome.elapsed_s,
                                     outcome.worker, dict(cell.params))
                    store.put(rec)
                    records[cell.key] = rec
            if error is not None:
                failures.append(CellFailure(cell.index, dict(cell.params), error, tb))
            done += 1
            if progress:
                progress(SweepProgress(config.n_cells, done, skipped, len(failures),
                                       time.perf_counter() - t0))
        wall = time.perf_counter() - t0
        status = "failed" if failures else "finished"
    finally:
        backend.close()
        run_entry.update(status=status, failed=len(failures), wall_s=round(wall, 3),
                         startup_s=round(startup, 3))
        store.save_manifest(manifest)

    complete = all(c.key in records for c in config.cells)
    table = None
    files: dict[str, str] = {}
    if complete:
        table = build_table(exp, config.cells, records, entropy,
                            extra_metadata={"n_cells": config.n_cells,
                                            "digest": config.digest,
                                            "config": config.file})
        sidecar = provenance(config_summary(config), entropy)
        sidecar["sweep"] = {
            "experiment": exp.name,
            "description": exp.description,
            "n_cells": config.n_cells,
            "digest": config.digest,
            "seed_entropy": str(entropy),
            "cell_seed": "numpy.random.SeedSequence(seed_entropy, spawn_key=key_words(cell)): "
                         "the four 32-bit words of the cell's content key",
            "columns": _columns_doc(config),
            "csv_dtypes": csv_dtypes(exp),
            "runs": manifest["runs"],
            "discarded": list(store.discarded),
        }
        files = store.finish(table, sidecar)
    summary = SweepSummary(
        experiment=exp.name, n_cells=config.n_cells, computed=len(todo) - len(failures),
        skipped=skipped, failed=tuple(failures), complete=complete, seed_entropy=entropy,
        backend=backend.name, workers=workers, startup_s=startup, wall_s=wall,
        cell_seconds=cell_seconds, files=files, discarded=tuple(store.discarded),
        notes=tuple(notes),
    )
    return SweepResult(summary, table)


def _columns_doc(config: SweepConfig) -> list[dict[str, str]]:
    meta = column_metadata(config.experiment)
    return [{"name": name, "type": m["kind"], "unit": m["unit"], "doc": m["description"],
             "role": m["role"], "nullable": m["nullable"]} for name, m in meta.items()]


_PANDAS_DTYPES = {"int": "Int64", "real": "Float64", "str": "string", "bool": "boolean"}


def csv_dtypes(experiment: Any) -> dict[str, str]:
    """pandas dtypes that read ``results.csv`` back with stable types.

    Integer columns stay integers even when some cells are empty (``Int64``),
    and all-empty columns keep their declared type, e.g.
    ``pandas.read_csv(path, dtype=csv_dtypes(exp))``; the same mapping is in
    ``results.json`` under ``sweep.csv_dtypes``.

    Parameters
    ----------
    experiment : Experiment
        A registered experiment (a value of :data:`EXPERIMENTS`).

    Returns
    -------
    dict of str to str
        Column name to pandas dtype name (``Int64``, ``Float64``, ``string``,
        ``boolean``).
    """
    out = {"cell": "string", "seed_entropy": "string"}
    for p in experiment.params:
        out[p.name] = _PANDAS_DTYPES[p.kind]
    for o in experiment.outputs:
        out[o.name] = _PANDAS_DTYPES[o.kind]
    return out


def default_out(config_path: str | os.PathLike[str]) -> Path:
    """Default output folder for a config file: ``vista-lab-out/sweeps/<stem>``."""
    return Path("vista-lab-out") / "sweeps" / Path(config_path).stem
