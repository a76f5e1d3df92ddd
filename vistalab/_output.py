"""Printing helpers for the CLI: JSON documents and rich tables.

Only the CLI layer prints; library code returns named results.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["to_plain", "emit_json", "emit_table"]


def to_plain(obj: Any) -> Any:
    """Convert dataclasses, numpy scalars/arrays, tuples and non-finite floats
    into JSON-ready plain data (NaN/inf become None)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_plain(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return to_plain(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj


def emit_json(obj: Any, *, stream: Any = None) -> None:
    """Print one JSON document (strict: no NaN) followed by a newline."""
    out = stream or sys.stdout
    out.write(json.dumps(to_plain(obj), indent=2, allow_nan=False))
    out.write("\n")


def emit_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    stream: Any = None,
) -> None:
    """Print a table with rich (plain text when not a terminal), as wide as the
    terminal (or ``$COLUMNS``; 80 when neither is known)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream or sys.stdout, highlight=False)
    table = Table(title=title, show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*[_fmt(v) for v in row])
    console.print(table)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:.6g}"
    if v is None:
        return "-"
    return str(v)
