"""Grid cells in canonical order and their seeds.

A cell is identified by its content: ``Cell.key`` hashes its resolved
parameters, and its seed is ``SeedSequence(entropy, spawn_key=key words)``.
So adding, removing or reordering values of a sweep never changes another
cell's result, and results do not depend on workers, backend or finish order.
The canonical order (sorted by parameter values, schema order) only fixes the
row order of the table.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from vistalab._core import child_seq

from ._schema import Experiment

__all__ = ["Cell", "canonical_cells", "cell_key", "cell_seed", "cells_digest", "key_words"]


@dataclass(frozen=True)
class Cell:
    """One task of a sweep.

    Parameters
    ----------
    index : int
        Position in this sweep's canonical order (the table's row order). Not
        part of the cell's identity: it shifts when values are added.
    params : mapping
        Every parameter of the experiment's schema, resolved (defaults filled
        in; ``None`` where a parameter does not apply).
    key : str
        Content hash of ``params`` (32 hex digits): the cell's identity, the
        name of its stored record and the source of its seed (:func:`cell_seed`).
    """

    index: int
    params: Mapping[str, Any]
    key: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)


def _canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def cell_key(params: Mapping[str, Any]) -> str:
    """Content hash of a resolved parameter mapping (first 16 bytes of sha256, hex)."""
    return hashlib.sha256(_canonical_json(dict(params)).encode()).hexdigest()[:32]


def _sort_key(experiment: Experiment, params: Mapping[str, Any]) -> tuple[Any, ...]:
    # Absent values sort first; values of one parameter share one kind after
    # conversion, so they compare cleanly.
    return tuple(
        (0, 0) if params.get(name) is None else (1, params[name])
        for name in experiment.param_names
    )


def canonical_cells(
    experiment: Experiment, resolved: Iterable[Mapping[str, Any]]
) -> tuple[Cell, ...]:
    """Sort resolved parameter mappings canonically and number them.

    Duplicates must have been removed by the caller (who knows where each came
    from and can name both places in the error).
    """
    ordered = sorted(resolved, key=lambda p: _sort_key(experiment, p))
    return tuple(
        Cell(index=i, params=MappingProxyType(dict(p)), key=cell_key(p))
        for i, p in enumerate(ordered)
    )


def key_words(key: str) -> tuple[int, ...]:
    """A cell key (32 hex digits) as four 32-bit words: the spawn key of its seed."""
    return tuple(int(key[i:i + 8], 16) for i in range(0, 32, 8))


def cell_seed(entropy: int, key: str) -> np.random.SeedSequence:
    """Seed of the cell whose content key is ``key``.

    ``SeedSequence(entropy, spawn_key=key_words(key))``: a function of the
    sweep's root entropy and the cell's parameters only, so a cell's numbers
    are the same in every sweep (of the same seed) that contains it.
    """
    return child_seq(np.random.SeedSequence(entropy), *key_words(key))


def cells_digest(experiment: str, cells: Iterable[Cell]) -> str:
    """Hash identifying a sweep's work: the experiment and every cell in order."""
    h = hashlib.sha256(experiment.encode())
    for key in sorted(c.key for c in cells):
        h.update(b"\0")
        h.update(key.encode())
    return h.hexdigest()
