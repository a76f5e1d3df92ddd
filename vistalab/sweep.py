"""Parameter sweeps from Python: run a grid of experiment cells and read the
results back as a pyarrow table (``.to_pandas()`` when pandas is installed).

Example
-------
>>> from vistalab.sweep import run_sweep, load_results
>>> table = run_sweep({"experiment": "recovery", "seed": 1,
...                    "params": {"N": 16, "k": 8, "trials": 200,
...                               "budget": [16, 64], "strategy": "keep-bits"}},
...                   workers=1, out="sweep-out")                  # doctest: +SKIP
>>> load_results("sweep-out").equals(table)                       # doctest: +SKIP
True

Cells are keyed by content: a cell's seed is derived from the sweep's seed and
the cell's own parameters, so adding, removing or reordering values never
changes another cell's result, and rerunning a larger config into the same
``out`` folder computes only the new cells. Every column carries its unit and
description in the Parquet field metadata (``table.schema.field(name).metadata``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from vistalab._core._door import install_contract as _install_contract
from vistalab._core._limits import json_loads
from vistalab.figures._vocabulary import COLUMNS, Column

from ._sweep import (
    EXPERIMENTS,
    DaskBackend,
    LocalBackend,
    SweepConfig,
    SweepConfigError,
    SweepProgress,
    SweepStoreError,
    load_config,
    parse_config,
    read_results,
)
from ._sweep import run_sweep as _run_sweep
from ._sweep._errors import SweepCellError, SweepConfigErrors
from ._sweep._runner import csv_dtypes

__all__ = [
    "COLUMNS",
    "Column",
    "EXPERIMENTS",
    "SweepCellError",
    "SweepConfig",
    "SweepConfigError",
    "SweepConfigErrors",
    "SweepStoreError",
    "column_units",
    "csv_dtypes",
    "load_config",
    "load_results",
    "parse_config",
    "run_sweep",
]


def _config_iv(config: Any) -> SweepConfig:
    if isinstance(config, SweepConfig):
        return config
    if isinstance(config, Mapping):
        return parse_config(config)
    if isinstance(config, (str, os.PathLike)):
        return load_config(os.fspath(config))
    raise SweepConfigError("config", type(config).__name__,
                           "must be a SweepConfig, a mapping (the parsed TOML) or a path to a "
                           "TOML file", "pass the config file's path", file="<config>",
                           where="run_sweep")


def run_sweep(
    config: SweepConfig | Mapping[str, Any] | str | os.PathLike[str],
    *,
    workers: int | None = None,
    client: Any = None,
    out: str | os.PathLike[str] | None = None,
    fresh: bool = False,
    progress: Callable[[SweepProgress], None] | None = None,
) -> pa.Table:
    """Run every cell of a sweep (reusing cells already stored in ``out``).

    Parameters
    ----------
    config : SweepConfig, mapping or path
        A TOML file, the same content as a dict, or a parsed :class:`SweepConfig`.
        Every problem in it is reported at once (:class:`SweepConfigErrors`).
    workers : int, optional
        Local worker processes (default: the available CPUs, capped at the cells
        to compute). ``1`` runs in this process.
    client : distributed.Client, optional
        Run the cells on this Dask client instead (e.g. a ``LocalCluster``'s);
        it is not closed. Give either ``workers`` or ``client``.
    out : path, optional
        Results folder. Cells are stored there as they finish, so an interrupted
        run resumes, and a config with more values extends the store (existing
        cells are reused byte for byte). None keeps everything in memory.
    fresh : bool
        Discard the cells stored in ``out`` first.
    progress : callable, optional
        Called with a ``SweepProgress`` before the first cell and after each one.

    Returns
    -------
    pyarrow.Table
        One row per cell in canonical order. Columns: ``cell`` (content key),
        ``seed_entropy``, every parameter, every output; each field's metadata
        has ``unit`` and ``description``, and the schema metadata ``vista-lab``
        has the experiment and seed entropy. ``table.to_pandas()`` needs pandas.

    Raises
    ------
    SweepConfigError
        A bad config, or both ``workers`` and ``client`` (nothing has run).
    DomainError
        ``workers`` is not an integer >= 1 (nothing has run).
    SweepStoreError
        ``out`` cannot hold this sweep (another experiment or seed, a file, locked).
    SweepCellError
        Some cells raised; the others are stored and a rerun computes only the
        failed ones.
    """
    cfg = _config_iv(config)
    if client is not None and workers is not None:
        raise SweepConfigError("workers", workers, "applies to local runs only",
                               "pass either workers or client, not both", file=cfg.file,
                               where="run_sweep")
    if out is not None and not str(out).strip():
        raise SweepStoreError("out", str(out), "must be a folder path, not empty",
                              "pass a folder, or None for an in-memory run")
    backend = DaskBackend(client=client) if client is not None else LocalBackend(workers)
    result = _run_sweep(cfg, out=out, backend=backend, fresh=fresh, progress=progress)
    if result.summary.failed:
        raise SweepCellError(result.summary.failed, result.summary)
    assert result.table is not None
    return result.table


def load_results(path: str | os.PathLike[str]) -> pa.Table:
    """Read a sweep's results table back (a results folder, ``.parquet`` or ``.csv``).

    A folder's ``results.parquet`` and ``results.csv`` are checked against the
    sha256 recorded in ``results.json`` (a damaged file is refused); a CSV is
    read with the column types the sweep declared, so integer columns stay
    integers and all-empty columns keep their type.

    Parameters
    ----------
    path : str or PathLike
        A results folder (the ``out`` of :func:`run_sweep`), or a
        ``results.parquet`` / ``results.csv`` file.

    Returns
    -------
    pyarrow.Table
        One row per cell, with unit and description metadata on every field.

    Raises
    ------
    SweepStoreError
        Not a results folder or file, or a checksum mismatch.
    """
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    side_path = folder / "results.json"
    target = p / "results.parquet" if p.is_dir() else p
    side: dict[str, Any] = {}
    if side_path.is_file():
        try:
            side = json_loads(side_path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise SweepStoreError("path", str(side_path), f"must be readable JSON ({exc})",
                                  "rerun the sweep to rewrite it") from None
    expected = side.get("sha256", {}).get(target.name)
    if expected is not None and target.is_file():
        got = hashlib.sha256(target.read_bytes()).hexdigest()
        if got != expected:
            raise SweepStoreError("path", str(target),
                                  f"must match the checksum recorded in results.json "
                                  f"(sha256 {got[:12]}... != {expected[:12]}...)",
                                  "the file was changed or damaged: rerun the sweep into the "
                                  "same folder to rebuild it from the stored cells")
    if target.suffix == ".csv" and side:
        return read_results(target, dtypes=side.get("sweep", {}).get("csv_dtypes"))
    return read_results(target)


def column_units(table: pa.Table) -> dict[str, dict[str, str]]:
    """The unit and description of every column, from a table's field metadata.

    Parameters
    ----------
    table : pyarrow.Table
        A sweep's results table (:func:`run_sweep` or :func:`load_results`).

    Returns
    -------
    dict
        ``{column: {"unit": ..., "description": ...}}``; empty strings where a
        field carries no metadata.

    Examples
    --------
    >>> import pyarrow as pa
    >>> field = pa.field("mean_z", pa.float64(), metadata={"unit": "blocks"})
    >>> column_units(pa.table({"mean_z": [1.0]}, schema=pa.schema([field])))
    {'mean_z': {'unit': 'blocks', 'description': ''}}
    """
    out = {}
    for f in table.schema:
        meta = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
        out[f.name] = {"unit": meta.get("unit", ""), "description": meta.get("description", "")}
    return out

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
