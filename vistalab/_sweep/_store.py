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
import hmac
import io
import json
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vistalab._core._limits import json_loads

from .._provenance import atomic_write_bytes, atomic_write_json, atomic_write_text
from ._errors import SweepStoreError
from ._grid import Cell, cell_key
from ._schema import Experiment

__all__ = [
    "CellRecord",
    "CellStore",
    "MemoryStore",
    "DirectoryStore",
    "build_table",
    "column_metadata",
    "read_results",
    "MANIFEST_FORMAT",
]

MANIFEST_FORMAT = "vista-lab-sweep/2"

_ARROW_TYPES = {"int": pa.int64(), "real": pa.float64(), "str": pa.string(), "bool": pa.bool_()}


@dataclass(frozen=True)
class CellRecord:
    """A completed cell as stored.

    Parameters
    ----------
    index : int
        Canonical index of the cell in the sweep that computed it (for messages
        only; a stored cell is found by ``key``).
    key : str
        Content hash of the cell's parameters: its identity and the source of its seed.
    row : dict
        The experiment's outputs (plain Python values).
    elapsed_s : float
        Wall time of the cell on its worker (kept out of the table: not reproducible).
    worker : str
        Where it ran (host:pid or thread), for the record.
    params : dict
        The cell's resolved parameters (the record is self-describing).
    """

    index: int
    key: str
    row: dict[str, Any]
    elapsed_s: float
    worker: str
    params: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"key": self.key, "params": self.params, "row": self.row}


def _checksum(payload: Mapping[str, Any], key: bytes = b"") -> str:
    """HMAC-SHA256 of the record under the output folder's secret ``key`` (a plain
    sha256 without one, for in-memory stores): a record edited outside the sweep
    cannot be given a matching checksum without reading that secret."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
    if not key:
        return hashlib.sha256(text.encode()).hexdigest()
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


@runtime_checkable
class CellStore(Protocol):
    """Where a sweep keeps its manifest and completed cells.

    Cells are stored by content key, so one store can hold the cells of several
    configs of the same experiment and seed (a sweep extended with new values
    reuses every cell it already has).

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

    def load_records(self, cells: Sequence[Cell]) -> dict[str, CellRecord]:
        """Stored records of ``cells``, by key (damaged records are discarded)."""
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
        self._records: dict[str, CellRecord] = {}
        self.discarded: list[str] = []
        self.table: pa.Table | None = None
        self.sidecar: dict[str, Any] | None = None

    def load_manifest(self) -> dict[str, Any] | None:
        return None if self._manifest is None else json.loads(json.dumps(self._manifest))

    def save_manifest(self, manifest: Mapping[str, Any]) -> None:
        self._manifest = json.loads(json.dumps(manifest))

    def load_records(self, cells: Sequence[Cell]) -> dict[str, CellRecord]:
        return {c.key: self._records[c.key] for c in cells if c.key in self._records}

    def put(self, record: CellRecord) -> None:
        # Round-trip through JSON exactly as the directory store does, so both
        # stores hand the table builder identical values.
        row = json.loads(json.dumps(record.row, allow_nan=True))
        params = json.loads(json.dumps(record.params, allow_nan=True))
        self._records[record.key] = CellRecord(record.index, record.key, row,
                                               record.elapsed_s, record.worker, params)

    def finish(self, table: pa.Table, sidecar: Mapping[str, Any]) -> dict[str, str]:
        self.table = table
        self.sidecar = dict(sidecar)
        return {"table": "<memory>"}


class DirectoryStore:
    """On-disk store under one folder.

    Layout::

        DIR/manifest.json        what this folder holds (experiment, seed entropy, runs)
        DIR/cells/<key>.json     one checksummed record per completed cell, named by
                                 its content key (parameters, outputs)
        DIR/results.parquet      the tidy table of the last run's config, canonical row
                                 order, with every column's unit and description
        DIR/results.csv          the same table as CSV
        DIR/results.json         sidecar: config, seed entropy, versions, git commit,
                                 columns, and the sha256 of both table files

    Every file is written to a temp file in the same folder, fsynced and
    renamed, so a crash leaves either the old file or the new one. A lock
    (``DIR/.lock``, released by the kernel if the process dies) stops two
    sweeps from writing the same folder at once. Nothing the store writes,
    reads or deletes may be a symlink (``cells``, the lock, the manifest, the
    results, the key): such a folder is refused before anything is touched, so
    ``fresh`` never deletes outside it. Each cell record carries an
    HMAC-SHA256 under a random key kept in ``DIR/.cell-key`` (mode 0600): a
    record edited outside the sweep, even with its checksum recomputed, is
    discarded and recomputed unless the editor read that key (the checksum
    protects against tampering by anyone who cannot read the output folder's
    key file, and against damage). Cells are kept by content, so
    rerunning a config with more (or fewer) values reuses every stored cell.

    Parameters
    ----------
    path : str or Path
        The output folder (created if needed).
    fresh : bool
        Delete this store's own files first (``--fresh`` on the command line); other files are kept.
    """

    MANIFEST = "manifest.json"
    CELLS = "cells"
    KEY = ".cell-key"
    FILES = {"parquet": "results.parquet", "csv": "results.csv", "sidecar": "results.json"}

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False) -> None:
        self.path = Path(path)
        self.discarded: list[str] = []
        if not str(path).strip():
            raise SweepStoreError("out", str(path), "must be a folder path, not empty",
                                  "pass a folder path (or out=None for an in-memory run)")
        if self.path.exists() and not self.path.is_dir():
            raise SweepStoreError("out", str(self.path), "must be a folder",
                                  "choose a folder path for the results")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            for name in (".lock", self.CELLS, self.MANIFEST, self.KEY, *self.FILES.values()):
                if (self.path / name).is_symlink():
                    raise SweepStoreError(
                        "out", str(self.path), f"must not hold a symlink as {name} (the sweep "
                        "writes and deletes there, and never through a link)",
                        f"remove {self.path / name} or choose another `out` folder")
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
            self._lock_fh = os.fdopen(os.open(self.path / ".lock", flags, 0o644), "a+b")
        except OSError as exc:
            raise SweepStoreError("out", str(self.path),
                                  f"must be a folder this user can create and write "
                                  f"({exc.strerror})",
                                  "choose a writable folder for the results") from None
        try:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_fh.close()
            raise SweepStoreError("out", str(self.path),
                                  "must not be in use by another running sweep",
                                  "wait for it to finish or choose another `out` folder") from None
        self._key = self._read_key()
        if fresh:
            self._clear()
        elif not (self.path / self.MANIFEST).exists() and any(
            (self.path / f).exists() for f in self.FILES.values()
        ):
            self.close()
            raise SweepStoreError("out", str(self.path),
                                  "holds results files but no sweep manifest",
                                  "choose an empty or new folder (or pass fresh=True to replace "
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

    def _read_key(self) -> bytes:
        """The folder's record key, created (32 random bytes, mode 0600) if missing."""
        path = self.path / self.KEY
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
                fh.flush()
                os.fsync(fh.fileno())
        try:
            fd = os.open(path, os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise OSError(0, "not a regular file")
                key = fh.read(64)
        except OSError as exc:
            self.close()
            raise SweepStoreError("out", str(self.path), f"must hold a readable {self.KEY} "
                                  f"({exc.strerror})", f"remove {path}") from None
        if len(key) < 16:
            self.close()
            raise SweepStoreError("out", str(self.path), f"holds a {self.KEY} of {len(key)} "
                                  "bytes (at least 16 needed)", f"remove {path}")
        return key

    def _clear(self) -> None:
        cells = self.path / self.CELLS
        if cells.is_dir() and not cells.is_symlink():
            for f in cells.glob("*.json"):
                f.unlink()  # never follows: a symlinked record loses only its link
        for name in [self.MANIFEST, *self.FILES.values()]:
            (self.path / name).unlink(missing_ok=True)

    def load_manifest(self) -> dict[str, Any] | None:
        p = self.path / self.MANIFEST
        if not p.exists():
            return None
        try:
            manifest = json_loads(p.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise SweepStoreError("out", str(self.path), f"has an unreadable manifest ({exc})",
                                  "pass fresh=True to start over") from None
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        if not isinstance(manifest, dict) or fmt != MANIFEST_FORMAT:
            raise SweepStoreError("out", str(self.path),
                                  f"has a manifest that is not a {MANIFEST_FORMAT} manifest "
                                  f"(format {fmt!r}; stores of an earlier vista-lab seed cells "
                                  "by position)", "choose another `out` folder or pass fresh=True")
        return manifest

    def save_manifest(self, manifest: Mapping[str, Any]) -> None:
        atomic_write_json(self.path / self.MANIFEST, manifest)

    def _cell_path(self, key: str) -> Path:
        return self.path / self.CELLS / f"{key}.json"

    def stored_keys(self) -> list[str]:
        """Keys of every cell record in the folder (whatever config computed it)."""
        folder = self.path / self.CELLS
        if not folder.is_dir():
            return []
        return sorted(f.stem for f in folder.glob("*.json") if not f.name.startswith("."))

    def load_records(self, cells: Sequence[Cell]) -> dict[str, CellRecord]:
        out: dict[str, CellRecord] = {}
        for c in cells:
            f = self._cell_path(c.key)
            if not f.exists():
                continue
            rec = _read_record(f, self._key)
            if rec is None or rec.key != c.key or cell_key(rec.params) != c.key:
                # Only reachable by outside damage (writes are atomic): recompute it.
                self.discarded.append(f"{f.name}: unreadable or checksum mismatch")
                f.unlink()
                continue
            out[c.key] = CellRecord(c.index, rec.key, rec.row, rec.elapsed_s, rec.worker,
                                    rec.params)
        return out

    def put(self, record: CellRecord) -> None:
        payload = record.payload()
        doc = {**payload, "checksum": _checksum(payload, self._key),
               "elapsed_s": record.elapsed_s, "worker": record.worker}
        atomic_write_text(self._cell_path(record.key),
                          json.dumps(doc, sort_keys=True, allow_nan=True) + "\n")

    def finish(self, table: pa.Table, sidecar: Mapping[str, Any]) -> dict[str, str]:
        files = {k: self.path / v for k, v in self.FILES.items()}
        parquet, csv = table_to_parquet_bytes(table), table_to_csv_bytes(table)
        side = dict(sidecar)
        side["sha256"] = {"results.parquet": hashlib.sha256(parquet).hexdigest(),
                          "results.csv": hashlib.sha256(csv).hexdigest()}
        atomic_write_bytes(files["parquet"], parquet)
        atomic_write_bytes(files["csv"], csv)
        atomic_write_json(files["sidecar"], side)
        return {k: str(v) for k, v in files.items()}


def _read_record(path: Path, key: bytes) -> CellRecord | None:
    try:
        doc = json_loads(path.read_text("utf-8"))
        payload = {"key": doc["key"], "params": doc["params"], "row": doc["row"]}
        if not hmac.compare_digest(_checksum(payload, key), str(doc["checksum"])):
            return None
        return CellRecord(-1, str(doc["key"]), dict(doc["row"]),
                          float(doc.get("elapsed_s", 0.0)), str(doc.get("worker", "")),
                          dict(doc["params"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def column_metadata(experiment: Experiment) -> dict[str, dict[str, str]]:
    """Unit, description and role of every column of ``experiment``'s results table."""
    from vistalab.figures._vocabulary import describe

    cols: dict[str, dict[str, str]] = {
        "cell": {"role": "id", "kind": "str", **describe("cell")},
        "seed_entropy": {"role": "id", "kind": "str", **describe("seed_entropy")},
    }
    for p in experiment.params:
        cols[p.name] = {"role": "parameter", "kind": p.kind, **describe(p.name, p.doc)}
    for o in experiment.outputs:
        cols[o.name] = {"role": "output", "kind": o.kind, **describe(o.name, o.doc),
                        "nullable": "true" if o.nullable else "false"}
    for p in experiment.params:
        nullable = p.when or (p.default is None and not p.required)
        cols[p.name]["nullable"] = "true" if nullable else "false"
    for c in ("cell", "seed_entropy"):
        cols[c]["nullable"] = "false"
    return cols


def build_table(
    experiment: Experiment,
    cells: Sequence[Cell],
    records: Mapping[str, CellRecord],
    seed_entropy: int,
    *,
    extra_metadata: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The tidy results table: one row per completed cell in canonical order.

    Columns: ``cell`` (the cell's content key; its seed is
    ``SeedSequence(seed_entropy, spawn_key=key_words(cell))``), ``seed_entropy``
    (the sweep's root entropy, as text: it may exceed 64 bits), every parameter
    of the schema (null where it does not apply), then every declared output.

    Every field carries ``unit``, ``description``, ``role``, ``kind`` and
    ``nullable`` in its Parquet field metadata; the schema metadata carries
    ``vista-lab`` (JSON: experiment, seed entropy, the column table, and
    ``extra_metadata``).
    """
    done = [c for c in cells if c.key in records]
    meta = column_metadata(experiment)
    arrays: dict[str, pa.Array] = {
        "cell": pa.array([c.key for c in done], type=pa.string()),
        "seed_entropy": pa.array([str(seed_entropy)] * len(done), type=pa.string()),
    }
    for spec in experiment.params:
        arrays[spec.name] = pa.array([c.params[spec.name] for c in done],
                                     type=_ARROW_TYPES[spec.kind])
    for out in experiment.outputs:
        arrays[out.name] = pa.array([records[c.key].row[out.name] for c in done],
                                    type=_ARROW_TYPES[out.kind])
    fields = [
        pa.field(name, arr.type, nullable=meta[name]["nullable"] == "true",
                 metadata={k: v.encode() for k, v in meta[name].items()})
        for name, arr in arrays.items()
    ]
    doc = {"experiment": experiment.name, "description": experiment.description,
           "seed_entropy": str(seed_entropy),
           "columns": {k: {"unit": v["unit"], "description": v["description"]}
                       for k, v in meta.items()},
           **dict(extra_metadata or {})}
    schema = pa.schema(fields, metadata={b"vista-lab": json.dumps(doc, sort_keys=True).encode()})
    return pa.Table.from_arrays(list(arrays.values()), schema=schema)


def table_to_parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def table_to_csv_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pacsv.write_csv(table, buf)
    return buf.getvalue()


_FROM_PANDAS = {"Int64": pa.int64(), "Float64": pa.float64(), "boolean": pa.bool_(),
                "string": pa.string()}


def read_results(
    path: str | os.PathLike[str], *, dtypes: Mapping[str, str] | None = None
) -> pa.Table:
    """Read a results table from a sweep folder, a ``.parquet`` file or a ``.csv`` file.

    ``dtypes`` (the sidecar's ``sweep.csv_dtypes``) fixes the CSV column types,
    so empty cells stay typed nulls rather than changing a column's type.
    """
    p = Path(path)
    if p.is_dir():
        p = p / DirectoryStore.FILES["parquet"]
    if not p.exists():
        raise SweepStoreError("path", str(path), "must be a sweep folder or a results file",
                              "run a sweep into a folder first (run_sweep(config, out=DIR) or "
                              "`vista-lab sweep CONFIG --out DIR`), then pass that folder")
    try:
        if p.suffix == ".csv":
            types = {k: _FROM_PANDAS[v] for k, v in (dtypes or {}).items() if v in _FROM_PANDAS}
            return pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(column_types=types))
        return pq.read_table(p)
    except (OSError, pa.ArrowInvalid) as exc:
        raise SweepStoreError("path", str(path), f"must be a readable table ({exc})",
                              "pass a results.parquet or results.csv written by a sweep"
                              ) from None
