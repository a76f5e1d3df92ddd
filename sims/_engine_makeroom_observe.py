"""What each make-room interface observes through the engine: the dashboard's ledger,
its bucket coarsening, or the block texts (the content channel)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int
from vistalab.workspace import Rendering, Workspace, parse_ledger_rows

from ._engine_makeroom_layout import _FIRST_BLOCK, MakeRoomLayout
from ._interfaces import Interface

__all__ = ["LedgerEntry", "parse_ledger", "coarsen_ledger"]


class LedgerEntry(NamedTuple):
    """One ledger row as an observation interface reads it.

    The fields are those of :class:`vistalab.workspace.LedgerRow` (same names)
    that a make-room observation uses; a named tuple, so
    ``for uid, tok, status in parse_ledger(...)`` keeps working.

    Attributes
    ----------
    unit_id : str
        The unit's ID (``"B3"``).
    tokens : int
        Its ~Tok figure.
    status : str
        Its status cell (``"visible"``, ``"archived"``, ...).
    """

    unit_id: str
    tokens: int
    status: str


def parse_ledger(dashboard: str) -> list[LedgerEntry]:
    """Rows of a rendered dashboard as :class:`LedgerEntry` ``(unit_id, tokens, status)``.

    Works on the normal and the management (overflow) form, full or compact
    columns: a row starts with the unit ID and its ~Tok figure and ends with
    its status. For every column (age, type, level, parent) use
    :func:`vistalab.workspace.parse_ledger_rows`.

    Parameters
    ----------
    dashboard : str
        A rendered ``<context_workspace_status>`` dashboard.

    Returns
    -------
    list of LedgerEntry
        One per ledger row, in dashboard order.
    """
    if not isinstance(dashboard, str):
        raise DomainError("dashboard", dashboard, "must be a rendered dashboard (str)",
                          "pass Rendering.dashboard")
    return [LedgerEntry(r.unit_id, r.tokens, r.status) for r in parse_ledger_rows(dashboard)]


def coarsen_ledger(dashboard: str, ids: tuple[str, ...], buckets: int) -> str:
    """The bucket view of a dashboard: only which of ``buckets`` balanced
    position buckets holds the largest visible block (Theorem 1, part D).

    Parameters
    ----------
    dashboard : str
        A rendered dashboard.
    ids : tuple of str
        The instance's block IDs in position order.
    buckets : int
        M, the number of balanced buckets, ``1 <= M <= len(ids)``.

    Returns
    -------
    str
        The coarsened observation text."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, (tuple, list)) or not ids \
            or not all(isinstance(i, str) for i in ids):
        raise DomainError("ids", ids, "must be a non-empty tuple of block ids (str)",
                          "pass the layout's ids in position order")
    buckets = as_int("buckets", buckets, lo=1, hi=len(ids),
                     rule="must be an integer with 1 <= buckets <= len(ids)",
                     context=f"len(ids)={len(ids)}", fix="a bucket holds at least one block")
    index = {bid: p for p, bid in enumerate(ids)}
    best, best_tok = -1, -1
    for row in parse_ledger(dashboard):
        p = index.get(row.unit_id)
        if p is not None and row.status == "visible" and row.tokens > best_tok:
            best, best_tok = p, row.tokens
    if best < 0:
        return "largest block: unknown"
    n = len(ids)
    b = best * buckets // n
    lo = -((-b * n) // buckets)
    hi = -((-(b + 1) * n) // buckets) - 1
    return f"largest block: bucket {b + 1} of {buckets} ({ids[lo]}-{ids[hi]})"


_BUCKET = re.compile(r"bucket ([0-9]+) of ([0-9]+)")


def _observe(name: str, layout: MakeRoomLayout, ws: Workspace, r: Rendering,
             iface: Interface, gen: np.random.Generator) -> Any:
    n = layout.n
    if name == "ledger":
        index = {bid: p for p, bid in enumerate(layout.ids)}
        y = np.zeros(n)
        for row in parse_ledger(r.dashboard):
            p = index.get(row.unit_id)
            if p is not None and row.status == "visible":
                y[p] = row.tokens
        return y
    if name == "buckets":
        view = coarsen_ledger(r.dashboard, layout.ids, int(iface.params["buckets"]))
        m = _BUCKET.search(view)
        return 0 if m is None else int(m.group(1)) - 1
    if name == "gaussian":
        sigma = float(iface.params["sigma"])
        blocks = ws.blocks[_FIRST_BLOCK - 1:]
        net = np.fromiter((layout.perceived[b.content or ""] for b in blocks), float, n)
        # ln(net) up to the common shift ln(l): the array channel's ln(size in units of l).
        return np.log(net / layout.l_tokens) + sigma * gen.standard_normal(n)
    return None
