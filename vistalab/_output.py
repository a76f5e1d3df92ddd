"""Printing helpers for the CLI: JSON documents and rich tables.

Only the CLI layer prints; library code returns named results.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from vistalab._core import to_plain

__all__ = ["to_plain", "emit_json", "emit_table"]


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
    terminal or ``$COLUMNS``; off a terminal without ``$COLUMNS`` (a log file, CI)
    as wide as its cells need, so no cell wraps."""
    import os

    from rich.console import Console
    from rich.table import Table

    out = stream or sys.stdout
    tty = bool(getattr(out, "isatty", lambda: False)())
    width = None if tty or os.environ.get("COLUMNS") else _UNBOUNDED
    console = Console(file=out, highlight=False, width=width)
    table = Table(title=title, show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*[_fmt(v) for v in row])
    console.print(table)


#: Console width off a terminal: wide enough that rich never wraps a cell (the
#: table itself is only as wide as its content).
_UNBOUNDED = 10_000


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:.6g}"
    if v is None:
        return "-"
    return str(v)
