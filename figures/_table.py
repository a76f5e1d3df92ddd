"""A small tidy table: one row per observation, one column per variable.

Every figure's ``compute`` returns one of these, so the reproduce pipeline can
cache it, write it as CSV and re-plot it without recomputing.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from vistalab.theory import DomainError

__all__ = ["TidyTable"]

Scalar = str | int | float | bool | None


def _plain_scalar(column: str, value: Any) -> Scalar:
    """Normalise one cell to a JSON/CSV-ready Python scalar (non-finite -> None)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        fv = float(value)
        return fv if math.isfinite(fv) else None
    raise DomainError(
        "value", value, "must be a scalar (str, int, float, bool or None)",
        "store one number or label per cell", context=f"column={column!r}",
    )


@dataclass(frozen=True)
class TidyTable:
    """Rows of scalars under named columns.

    Attributes
    ----------
    columns : tuple of str
        Column names, in order.
    rows : tuple of tuple
        One tuple per observation, aligned with ``columns``; cells are str, int,
        float, bool or None (None marks "not applicable", e.g. the confidence
        interval of an exact value; non-finite floats are stored as None).
    units : dict
        Unit or meaning of each column, written into the results sidecar.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Scalar, ...], ...]
    units: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(set(self.columns)) != len(self.columns):
            raise DomainError("columns", self.columns, "must be unique names")
        width = len(self.columns)
        clean = []
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise DomainError(
                    "rows", row, f"must have {width} cells, one per column",
                    context=f"row {i}",
                )
            cells = zip(self.columns, row, strict=True)
            clean.append(tuple(_plain_scalar(c, v) for c, v in cells))
        object.__setattr__(self, "rows", tuple(clean))
        unknown = set(self.units) - set(self.columns)
        if unknown:
            raise DomainError("units", sorted(unknown), "must name existing columns")
        object.__setattr__(self, "units", dict(self.units))

    # ------------------------------------------------------------------ build
    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        columns: Sequence[str] | None = None,
        units: Mapping[str, str] | None = None,
    ) -> TidyTable:
        """Build from dicts; missing keys become None. ``columns`` fixes the order.

        Parameters
        ----------
        records : iterable of Mapping
            One dict per row.
        columns : sequence of str, optional
            The columns, in order; default: the keys in order of first appearance.
        units : Mapping, optional
            Column -> unit.

        Returns
        -------
        TidyTable
            The table.

        Raises
        ------
        DomainError
            If a record has a key that is not one of ``columns``.
        """
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise DomainError("records", records, "must be an iterable of dicts, one per row",
                              "pass e.g. [{'N': 16, 'rate': 0.5}]")
        recs = []
        for i, r in enumerate(records):
            if not isinstance(r, Mapping):
                raise DomainError("records", r, "must hold dicts (column -> value), one per "
                                  "row", "pass e.g. [{'N': 16, 'rate': 0.5}]",
                                  context=f"record {i}")
            recs.append(dict(r))
        if units is not None and not isinstance(units, Mapping):
            raise DomainError("units", units, "must be a mapping column -> unit",
                              "pass e.g. {'rate': 'bits'} or omit it")
        if columns is not None and (isinstance(columns, (str, bytes))
                                    or not isinstance(columns, Iterable)):
            raise DomainError("columns", columns, "must be a sequence of column names",
                              "pass e.g. ['N', 'rate'] or omit it")
        if columns is None:
            seen: dict[str, None] = {}
            for r in recs:
                for k in r:
                    seen.setdefault(k, None)
            columns = list(seen)
        cols = tuple(columns)
        extra = {k for r in recs for k in r} - set(cols)
        if extra:
            raise DomainError("records", sorted(extra), "must only use the declared columns")
        return cls(cols, tuple(tuple(r.get(c) for c in cols) for r in recs), dict(units or {}))

    # ------------------------------------------------------------------ query
    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts, column -> value.

        Returns
        -------
        list of dict
            One per row, in order.
        """
        return [dict(zip(self.columns, row, strict=False)) for row in self.rows]

    def _index(self, name: str) -> int:
        try:
            return self.columns.index(name)
        except ValueError:
            from vistalab.theory import UnknownNameError

            raise UnknownNameError("column", name, self.columns) from None

    def values(self, name: str) -> list[Any]:
        """The column as a list of Python scalars.

        Parameters
        ----------
        name : str
            A column name.

        Returns
        -------
        list
            The cells, in row order.

        Raises
        ------
        UnknownNameError
            If there is no such column.
        """
        i = self._index(name)
        return [row[i] for row in self.rows]

    def column(self, name: str) -> np.ndarray:
        """The column as a float array (None -> NaN).

        Parameters
        ----------
        name : str
            A column name.

        Returns
        -------
        numpy.ndarray
            The cells as floats, in row order.

        Raises
        ------
        UnknownNameError
            If there is no such column.
        """
        return np.array(
            [np.nan if v is None else float(v) for v in self.values(name)], dtype=float
        )

    def unique(self, name: str) -> list[Any]:
        """Distinct values of a column in order of first appearance.

        Parameters
        ----------
        name : str
            A column name.

        Returns
        -------
        list
            The distinct cells.

        Raises
        ------
        UnknownNameError
            If there is no such column.
        """
        return list(dict.fromkeys(self.values(name)))

    def where(self, **equal: Scalar) -> TidyTable:
        """Rows whose cells equal every given value.

        Parameters
        ----------
        **equal
            Column -> the value to select.

        Returns
        -------
        TidyTable
            The selected rows, same columns and units.

        Raises
        ------
        UnknownNameError
            If there is no such column.
        """
        idx = [(self._index(k), v) for k, v in equal.items()]
        rows = tuple(r for r in self.rows if all(r[i] == v for i, v in idx))
        return TidyTable(self.columns, rows, self.units)

    # -------------------------------------------------------------- serialise
    def to_csv(self) -> str:
        """CSV text with a header row; floats keep full precision, None is empty.

        Returns
        -------
        str
            The CSV text, one line per row after the header.
        """
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for row in self.rows:
            w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in row])
        return buf.getvalue()

    def to_json(self) -> dict[str, Any]:
        """Typed plain data (the cache format; round-trips exactly).

        Returns
        -------
        dict
            ``columns``, ``rows`` (lists) and ``units``.
        """
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "units": dict(self.units),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TidyTable:
        """The table :meth:`to_json` wrote (an exact round trip).

        Parameters
        ----------
        data : Mapping
            ``columns``, ``rows`` and optionally ``units``.

        Returns
        -------
        TidyTable
            The table.

        Raises
        ------
        DomainError
            If ``data`` is not a mapping with a ``columns`` list, a ``rows`` list of
            lists and an optional ``units`` mapping, or a row does not have one cell
            per column.
        """
        fix = "pass the dict TidyTable.to_json() returns"
        if not isinstance(data, Mapping) or not isinstance(data.get("columns"), (list, tuple)) \
                or not isinstance(data.get("rows"), (list, tuple)) \
                or not all(isinstance(r, (list, tuple)) for r in data["rows"]) \
                or not isinstance(data.get("units", {}), Mapping):
            raise DomainError("data", data, "must be a mapping with a 'columns' list, a "
                              "'rows' list of lists and an optional 'units' mapping", fix)
        return cls(
            tuple(data["columns"]),
            tuple(tuple(r) for r in data["rows"]),
            dict(data.get("units", {})),
        )
