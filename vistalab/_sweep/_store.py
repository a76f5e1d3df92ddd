"""Results stores: completed cells are kept as they arrive, so a killed sweep
resumes, and the final table is built from the stored cells only.

Two implementations of one protocol: :class:`MemoryStore` (Python API, tests)
and :class:`DirectoryStore` (one atomically written, checksummed JSON file per
completed cell under ``DIR/cells/``, compacted into ``DIR/results.parquet`` +
``results.csv`` + ``results.json``). Because the table is always built from
the stored records in canonical cell order, a resumed run ends with exactly the
bytes an uninterrupted run writes.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .._provenance import atomic_write_bytes, atomic_write_json, atomic_write_text
from ._errors import SweepStoreError
from ._grid import Cell
from ._schema import Experiment

__all__ = [
    "CellRecord",
    "CellStore",
    "MemoryStore",
    "DirectoryStore",
    "build_table",
    "read_results",
    "MANIFEST_FORMAT",
]

MANIFEST_FORMAT = "vista-lab-sweep/1"

_ARROW_TYPES = {"int": pa.int64(), "real": pa.float64(), "str": pa.string(), "bool": pa.bool_()}


@dataclass(frozen=True)
class CellRecord:
    """A completed cell as stored.

    Parameters
    ----------
    index : int
        Canonical index of the cell.
    key : str
        Content hash of the cell's parameters (must match the config's cell).
    row : dict
        The experiment's outputs (plain Python values).
    elapsed_s : float
        Wall time of the cell on its worker (kept out of the table: not reproducible).
    worker : str
        Where it ran (host:pid or thread), for the record.
    """

    index: int
    key: str
    row: dict[str, Any]
    elapsed_s: float
    worker: str

    def payload(self) -> dict[str, Any]:
        return {"index": self.index, "key": self.key, "row": self.row}


def _checksum(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


@runtime_checkable
class CellStore(Protocol):
    """Where a sweep keeps its manifest and completed cells.

    Required members: ``load_manifest``, ``save_manifest``, ``load_records``,
    ``put``, ``finish``, ``discarded``.
    """

    discarded: list[str]

    def load_manifest(self) -> dict[str, Any] | None:
        """The manifest of the sweep already in the store, or None."""
        ...

    def save_manifest(self, manifest: Mapping[str, Any]) -> None:
        """Persist the manifest (atomically)."""
        ...

    def load_records(self, cells: Sequence[Cell]) -> dict[int, CellRecord]:
        """Stored records that match ``cells`` (index and key); others are discarded."""
        ...

    def put(self, record: CellRecord) -> None:
        """Persist one completed cell (atomically; a crash loses at most this cell)."""
        ...

    def finish(self, table: pa.Table, sidecar: Mapping[str, Any]) -> dict[str, str]:
        """Write the final table and sidecar; return {kind: location}."""
        ...


class MemoryStore:
    """In-memory store (nothing on disk); the reference the directory store is tested against."""

    def __init__(self) -> None:
        self._manifest: dict[str, Any] | None = None
        self._records: dict[int, CellRecord] = {}
        self.discarded: list[str] = []
        self.table: pa.Table | None = None
        self.sidecar: dict[str, Any] | None = None

    def load_manifest(self) -> dict[str, Any] | None:
        return None if self._manifest is None else json.loads(json.dumps(self._manifest))

    def save_manifest(self, manifest: Mapping[str, Any]) -> None:
        self._manifest = json.loads(json.dumps(manifest))

    def load_records(self, cells: Sequence[Cell]) -> dict[int, CellRecord]:
        keys = {c.index: c.key for c in cells}
        return {i: r for i, r in self._records.items() if keys.get(i) == r.key}

    def put(self, record: CellRecord) -> None:
        # Round-trip through JSON exactly as the directory store does, so both
        # stores hand the table builder identical values.
        row = json.loads(json.dumps(record.row, allow_nan=True))
        self._records[record.index] = CellRecord(record.index, record.key, row,
                                                 record.elapsed_s, record.worker)

    def finish(self, table: pa.Table, sidecar: Mapping[str, Any]) -> dict[str, str]:
        self.table = table
        self.sidecar = dict(sidecar)
        return {"table": "<memory>"}


class DirectoryStore:
    """On-disk store under one folder.

    Layout::

        DIR/manifest.json        what this folder is computing (experiment, cells digest, seed)
        DIR/cells/cell-NNNNNNNN.json  one checksummed record per completed cell
        DIR/results.parquet      the tidy table (pyarrow), canonical row order
        DIR/results.csv          the same table as CSV
        DIR/results.json         sidecar: config, seed entropy, versions, git commit, columns

    Every file is written to a temp file in the same folder, fsynced and
    renamed, so a crash leaves either the old file or the new one. A lock
    (``DIR/.lock``, released by the kernel if the process dies) stops two
    sweeps from writing the same folder at once.

    Parameters
    ----------
    path : str or Path
        The output folder (created if needed).
    fresh : bool
        Delete this store's own files first (``--fresh``); other files are kept.
    """

    MANIFEST = "manifest.json"
    CELLS = "cells"
    FILES = {"parquet": "results.parquet", "csv": "results.csv", "sidecar": "results.json"}

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False) -> None:
        self.path = Path(path)
        self.discarded: list[str] = []
        if self.path.exists() and not self.path.is_dir():
            raise SweepStoreError("--out", str(self.path), "must be a folder",
                                  "choose a folder path for the results")
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock_fh = open(self.path / ".lock", "a+b")  # noqa: SIM115 - held for the run
        try:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_fh.close()
            raise SweepStoreError("--out", str(self.path),
                                  "must not be in use by another running sweep",
                                  "wait for it to finish or choose another --out") from None
        if fresh:
            self._clear()
        elif not (self.path / self.MANIFEST).exists() and any(
            (self.path / f).exists() for f in self.FILES.values()
        ):
            raise SweepStoreError("--out", str(self.path),
                                  "holds results files but no sweep manifest",
                                  "choose an empty or new folder (or pass --fresh to replace "
                                  "them)")

    def close(self) -> None:
        """Release the folder lock."""
        if not self._lock_fh.closed:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()

    def __enter__(self) -> DirectoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _clear(self) -> None:
        cells = self.path / self.CELLS
        if cells.is_dir():
            for f in cells.glob("cell-*.json"):
                f.unlink()
        for name in [self.MANIFEST, *self.FILES.values()]:
            (self.path / name).unlink(missing_ok=True)

    def load_manifest(self) -> dict[str, Any] | None:
        p = self.path / self.MANIFEST
        if not p.exists():
            return None
        try:
            manifest = json.loads(p.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise SweepStoreError("--out", str(self.path), f"has an unreadable manifest ({exc})",
                                  "pass --fresh to start over") from None
        if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
            raise SweepStoreError("--out", str(self.path),
                                  f"has a manifest that is not a {MANIFEST_FORMAT} manifest",
                                  "choose another folder or pass --fresh")
        return manifest

    def save_manifest(self, manifest: Mapping[str, Any]) -> None:
        atomic_write_json(self.path / self.MANIFEST, manifest)

    def _cell_path(self, index: int) -> Path:
        return self.path / self.CELLS / f"cell-{index:08d}.json"

    def load_records(self, cells: Sequence[Cell]) -> dict[int, CellRecord]:
        keys = {c.index: c.key for c in cells}
        out: dict[int, CellRecord] = {}
        folder = self.path / self.CELLS
        if not folder.is_dir():
            return out
        for f in sorted(folder.glob("cell-*.json")):
            rec = _read_record(f)
            if rec is None:
                # Only reachable by outside damage (writes are atomic): recompute it.
                self.discarded.append(f"{f.name}: unreadable or checksum mismatch")
                f.unlink()
                continue
            if keys.get(rec.index) != rec.key:
                self.discarded.append(f"{f.name}: not a cell of this sweep")
                f.unlink()
                continue
            out[rec.index] = rec
        return out

    def put(self, record: CellRecord) -> None:
        payload = record.payload()
        doc = {**payload, "checksum": _checksum(payload), "elapsed_s": record.elapsed_s,
               "worker": record.worker}
        atomic_write_text(self._cell_path(record.index),
                          json.dumps(doc, sort_keys=True, allow_nan=True) + "\n")

    def finish(self, table: pa.Table, sidecar: Mapping[str, Any]) -> dict[str, str]:
        files = {k: self.path / v for k, v in self.FILES.items()}
        atomic_write_bytes(files["parquet"], table_to_parquet_bytes(table))
        atomic_write_bytes(files["csv"], table_to_csv_bytes(table))
        atomic_write_json(files["sidecar"], sidecar)
        return {k: str(v) for k, v in files.items()}


def _read_record(path: Path) -> CellRecord | None:
    try:
        doc = json.loads(path.read_text("utf-8"))
        payload = {"index": doc["index"], "key": doc["key"], "row": doc["row"]}
        if _checksum(payload) != doc["checksum"]:
            return None
        return CellRecord(int(doc["index"]), str(doc["key"]), dict(doc["row"]),
                          float(doc.get("elapsed_s", 0.0)), str(doc.get("worker", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build_table(
    experiment: Experiment,
    cells: Sequence[Cell],
    records: Mapping[int, CellRecord],
    seed_entropy: int,
) -> pa.Table:
    """The tidy results table: one row per completed cell in canonical order.

    Columns: ``cell`` (canonical index = spawn key of the cell's seed),
    ``seed_entropy`` (the sweep's root entropy, as text: it may exceed 64
    bits), every parameter of the schema (null where it does not apply), then
    every declared output.
    """
    done = [c for c in cells if c.index in records]
    cols: dict[str, pa.Array] = {
        "cell": pa.array([c.index for c in done], type=pa.int64()),
        "seed_entropy": pa.array([str(seed_entropy)] * len(done), type=pa.string()),
    }
    for spec in experiment.params:
        cols[spec.name] = pa.array([c.params[spec.name] for c in done],
                                   type=_ARROW_TYPES[spec.kind])
    for out in experiment.outputs:
        cols[out.name] = pa.array([records[c.index].row[out.name] for c in done],
                                  type=_ARROW_TYPES[out.kind])
    return pa.table(cols)


def table_to_parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def table_to_csv_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pacsv.write_csv(table, buf)
    return buf.getvalue()


def read_results(path: str | os.PathLike[str]) -> pa.Table:
    """Read a results table from a sweep folder, a ``.parquet`` file or a ``.csv`` file."""
    p = Path(path)
    if p.is_dir():
        p = p / DirectoryStore.FILES["parquet"]
    if not p.exists():
        raise SweepStoreError("RESULTS", str(path), "must be a sweep folder or a results file",
                              "run `vista-lab sweep CONFIG --out DIR` first, then pass DIR")
    try:
        if p.suffix == ".csv":
            return pacsv.read_csv(p)
        return pq.read_table(p)
    except (OSError, pa.ArrowInvalid) as exc:
        raise SweepStoreError("RESULTS", str(path), f"must be a readable table ({exc})",
                              "pass a results.parquet or results.csv written by `vista-lab sweep`"
                              ) from None
