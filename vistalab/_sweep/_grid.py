"""Grid cells in canonical order and their seeds.

The canonical order sorts cells by their parameter values (schema order), so
the same set of cells gets the same indices however the config lists its
values or blocks; cell ``i`` draws from ``SeedSequence(entropy).spawn(...)[i]``,
so results do not depend on workers, backend or finish order.
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

__all__ = ["Cell", "canonical_cells", "cell_key", "cell_seed", "cells_digest"]


@dataclass(frozen=True)
class Cell:
    """One task of a sweep.

    Parameters
    ----------
    index : int
        Position in the canonical order; also the spawn key of the cell's seed.
    params : mapping
        Every parameter of the experiment's schema, resolved (defaults filled
        in; ``None`` where a parameter does not apply).
    key : str
        Content hash of ``params`` (hex), used to check that a stored cell
        belongs to this sweep.
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


def cell_seed(entropy: int, index: int) -> np.random.SeedSequence:
    """Seed of cell ``index``: identical to ``SeedSequence(entropy).spawn(n)[index]`` for any n."""
    return child_seq(np.random.SeedSequence(entropy), index)


def cells_digest(experiment: str, cells: Iterable[Cell]) -> str:
    """Hash identifying a sweep's work: the experiment and every cell in order."""
    h = hashlib.sha256(experiment.encode())
    for c in cells:
        h.update(b"\0")
        h.update(f"{c.index}:{c.key}".encode())
    return h.hexdigest()
