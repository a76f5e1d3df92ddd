"""The trade-off plot of a sweep's results table, with theory overlaid.

For make-room tables (x = rate, y = E[Z] or E[Z]/kappa) each (n, kappa) panel
gets Theorem 1's lower bound and the exact optimal frontier from ``theory``;
recovery tables (x = budget, y = success) get Proposition 1's bound. Drawn on a
bare :class:`matplotlib.figure.Figure` with the Agg canvas: no pyplot state,
no rcParams edits outside a local ``rc_context``.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vistalab._core import import_optional
from vistalab.theory import DomainError, UnknownNameError

from .._provenance import atomic_write_bytes

__all__ = ["PlotSummary", "Panel", "Series", "plot_sweep", "ALIASES", "OKABE_ITO"]

#: No aliases: a column is named exactly (``--x rate`` means the column
#: ``rate``, never ``rate_bits``); anything else is refused with close matches.
ALIASES: dict[str, str] = {}

#: Colour-blind-safe palette (Okabe & Ito 2008).
OKABE_ITO: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                              "#56B4E9", "#F0E442", "#000000")

_LABELS = {
    "rate_bits": "rate I(J*;Y) [bits]",
    "mean_z": "E[Z] [blocks]",
    "mean_z/kappa": "E[Z] / kappa",
    "budget": "budget B [bits]",
    "success": "success probability",
    "sigma": "sigma [nats of log-size]",
    "n": "n [blocks]",
}

MAX_PANELS = 12


@dataclass(frozen=True)
class Series:
    """One plotted series.

    Parameters
    ----------
    label : str
        Legend text.
    x, y : tuple of float
        Points, sorted by x.
    xerr, yerr : tuple of (low, high) half-widths, or None
        95% error bars when the table has them.
    kind : {"data", "bound", "frontier"}
        Measured points, or a theory curve.
    """

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    xerr: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    yerr: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    kind: str = "data"


@dataclass(frozen=True)
class Panel:
    """One subplot: the rows sharing the panel keys (e.g. n and kappa)."""

    title: str
    keys: dict[str, Any]
    series: tuple[Series, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlotSummary:
    """What :func:`plot_sweep` drew and where.

    Parameters
    ----------
    out : str
        The image written.
    x, y : str
        Resolved column expressions.
    panels : tuple of Panel
        Every panel with its series (data and theory curves).
    rows : int
        Table rows plotted (after ``where`` filters).
    """

    out: str
    x: str
    y: str
    panels: tuple[Panel, ...]
    rows: int
    notes: tuple[str, ...] = field(default=())


def _column(table: pa.Table, name: str, option: str) -> str:
    """``name`` if it is exactly a column with values; otherwise refuse it, naming
    the close matches (``rate`` -> ``rate_bits``, ``rate_exact``...)."""
    cols = table.column_names
    related = [c for c in cols if c != name and (c.startswith(name) or name.startswith(c))]
    if name not in cols:
        err = UnknownNameError(f"column for {option}", name, cols)
        if related:
            err.message += f" Columns starting like it: {', '.join(related)}."
            err.args = (err.message,)
        raise err
    if table.num_rows and table.column(name).null_count == table.num_rows:
        hint = f"; did you mean {' or '.join(related)}?" if related else ""
        raise DomainError(option, name,
                          f"must name a column with values, but all {table.num_rows} rows of "
                          f"{name!r} are empty{hint}",
                          "pick a column that applies to these rows")
    return name


def _resolve_expr(table: pa.Table, expr: str, option: str) -> tuple[str, str | None]:
    """``"a"`` or ``"a/b"`` -> (numerator column, denominator column or None)."""
    num, sep, den = expr.partition("/")
    a = _column(table, num.strip(), option)
    b = _column(table, den.strip(), option) if sep else None
    for c in (a, b):
        if c is not None and not (pa.types.is_integer(table.schema.field(c).type)
                                  or pa.types.is_floating(table.schema.field(c).type)):
            raise DomainError(option, expr, "must name numeric columns",
                              f"pick one of: {', '.join(_numeric(table))}",
                              context=f"column {c!r} has type {table.schema.field(c).type}")
    return a, b


def _numeric(table: pa.Table) -> list[str]:
    return [f.name for f in table.schema
            if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]


def _parse_where(table: pa.Table, where: Sequence[str]) -> list[tuple[str, Any]]:
    out = []
    for item in where:
        key, sep, raw = item.partition("=")
        if not sep:
            raise DomainError("--where", item, "must look like COLUMN=VALUE", "e.g. --where n=1024")
        col = _column(table, key.strip(), "--where")
        ftype = table.schema.field(col).type
        value: Any = raw.strip()
        try:
            if pa.types.is_integer(ftype):
                value = int(float(value))
            elif pa.types.is_floating(ftype):
                value = float(value)
            elif pa.types.is_boolean(ftype):
                value = value.lower() in ("1", "true", "yes")
        except ValueError:
            raise DomainError("--where", item, f"must give a value of the column's type ({ftype})",
                              "write a number for numeric columns") from None
        out.append((col, value))
    return out


def _values(rows: Sequence[Mapping[str, Any]], num: str, den: str | None) -> np.ndarray:
    a = np.array([np.nan if r[num] is None else r[num] for r in rows], dtype=float)
    if den is None:
        return a
    b = np.array([np.nan if r[den] is None else r[den] for r in rows], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(a / b, dtype=float)


def _errs(
    rows: Sequence[Mapping[str, Any]], table: pa.Table, num: str, den: str | None,
    centre: np.ndarray,
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """95% half-widths from ``<col>_ci_low/high`` or 1.96 x ``<col>_se`` columns."""
    names = set(table.column_names)
    scale = np.ones(len(rows)) if den is None else _values(rows, den, None)
    if {f"{num}_ci_low", f"{num}_ci_high"} <= names:
        lo = _values(rows, f"{num}_ci_low", None) / scale
        hi = _values(rows, f"{num}_ci_high", None) / scale
        return tuple(np.maximum(centre - lo, 0.0)), tuple(np.maximum(hi - centre, 0.0))
    if f"{num}_se" in names:
        half = 1.96 * _values(rows, f"{num}_se", None) / scale
        return tuple(half), tuple(half)
    return None


def _overlay_makeroom(keys: Mapping[str, Any], den: str | None) -> tuple[list[Series], list[str]]:
    from vistalab import theory

    n, kappa = int(keys["n"]), int(keys["kappa"])
    scale = float(kappa) if den == "kappa" else 1.0
    rates = np.linspace(0.0, math.log2(n), 161)
    notes: list[str] = []
    curves: list[Series] = []
    frontier = [theory.optimal_mean_z(n, kappa, float(r)) / scale for r in rates]
    curves.append(Series("exact optimal frontier", tuple(rates), tuple(frontier),
                         kind="frontier"))
    if 2 <= kappa < n / 2:
        bound = [theory.makeroom_lower_bound(n, kappa, float(r)) / scale for r in rates]
        curves.append(Series("Theorem 1 lower bound", tuple(rates), tuple(bound), kind="bound"))
    else:
        notes.append(f"Theorem 1 bound not drawn: needs 2 <= kappa < n/2 (n={n}, kappa={kappa})")
    return curves, notes


def _overlay_recovery(keys: Mapping[str, Any], xs: np.ndarray) -> tuple[list[Series], list[str]]:
    from vistalab import theory

    N, k = int(keys["N"]), int(keys["k"])
    finite = xs[np.isfinite(xs)]
    hi = float(finite.max()) if finite.size else float(N * k)
    budgets = np.linspace(0.0, max(hi, 1.0), 161)
    bound = [min(1.0, theory.recovery_success_bound(N, k, float(b))) for b in budgets]
    return [Series("Proposition 1 bound (capped at 1)", tuple(budgets), tuple(bound),
                   kind="bound")], []


_Overlay = Callable[[Mapping[str, Any], str | None, np.ndarray], tuple[list[Series], list[str]]]


def _overlay_for(
    table: pa.Table, x: tuple[str, str | None], y: tuple[str, str | None], theory: bool
) -> tuple[tuple[str, ...], _Overlay | None]:
    """Panel keys and the theory overlay that applies to this (x, y), if any."""
    names = set(table.column_names)
    if {"n", "kappa", "mean_z"} <= names:
        keys: tuple[str, ...] = ("n", "kappa")
        if theory and x == ("rate_bits", None) and y[0] == "mean_z" and y[1] in (None, "kappa"):
            return keys, lambda k, den, xs: _overlay_makeroom(k, den)
        return keys, None
    if {"N", "k", "success"} <= names:
        keys = ("N", "k")
        if theory and x == ("budget", None) and y == ("success", None):
            return keys, lambda k, den, xs: _overlay_recovery(k, xs)
        return keys, None
    return (), None


#: Default series columns: the first is always used when present, the others
#: only when they vary (e.g. recover at two handle costs is two series).
_DEFAULT_GROUPS = ("interface", "strategy", "policy", "mode", "handle_cost")


def _group_columns(
    table: pa.Table, rows: Sequence[Mapping[str, Any]], group: str | None
) -> list[str]:
    if group is not None:
        return [_column(table, g.strip(), "--group") for g in group.split(",") if g.strip()]
    cols = []
    for g in _DEFAULT_GROUPS:
        if g in table.column_names:
            varies = len({r[g] for r in rows}) > 1
            if g in ("interface", "strategy") or varies:
                cols.append(g)
    return cols


def _group_label(row: Mapping[str, Any], cols: Sequence[str]) -> str:
    parts = []
    for i, c in enumerate(cols):
        v = row[c]
        if v is None:
            continue
        parts.append(str(v) if i == 0 and c in ("interface", "strategy") else f"{c}={_fmt(v)}")
    return ", ".join(parts)


def _label(num: str, den: str | None) -> str:
    expr = num if den is None else f"{num}/{den}"
    return _LABELS.get(expr, expr)


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def plot_sweep(
    table: pa.Table,
    out: str | os.PathLike[str],
    *,
    x: str = "rate_bits",
    y: str = "mean_z",
    group: str | None = None,
    where: Sequence[str] = (),
    theory: bool = True,
    title: str | None = None,
) -> PlotSummary:
    """Draw ``y`` against ``x`` from a sweep table into ``out`` (PNG, PDF or SVG).

    Parameters
    ----------
    table : pyarrow.Table
        A results table (:func:`read_results`).
    out : path
        Image to write; the suffix picks the format.
    x, y : str
        Column names or ``"a/b"`` ratios (``"mean_z/kappa"``); aliases: rate, Z, B.
    group : str, optional
        Comma-separated columns whose values make the legend series (default:
        ``interface`` or ``strategy``, plus ``policy``, ``mode`` and
        ``handle_cost`` when they vary).
    where : sequence of str
        ``COLUMN=VALUE`` filters.
    theory : bool
        Overlay Theorem 1's bound and the exact frontier (make-room tables,
        x = rate, y = E[Z] or E[Z]/kappa) or Proposition 1's bound (recovery
        tables, x = budget, y = success).
    title : str, optional
        Figure title.

    Returns
    -------
    PlotSummary
        The panels and series drawn (data and theory curves), for tests and reports.
    """
    path = Path(out)
    if path.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise DomainError("--out", str(path), "must end in .png, .pdf or .svg",
                          "e.g. --out tradeoff.png")
    xs_expr = _resolve_expr(table, x, "--x")
    ys_expr = _resolve_expr(table, y, "--y")
    rows = table.to_pylist()
    for col, value in _parse_where(table, where):
        rows = [r for r in rows if r[col] == value]
    if not rows:
        raise DomainError("--where", list(where), "must leave at least one row to plot",
                          "loosen the filters (check the values in results.csv)")
    groups_by = _group_columns(table, rows, group)
    panel_keys, overlay = _overlay_for(table, xs_expr, ys_expr, theory)

    by_panel: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        by_panel.setdefault(tuple(r[k] for k in panel_keys), []).append(r)
    if len(by_panel) > MAX_PANELS:
        raise DomainError("RESULTS", f"{len(by_panel)} panels",
                          f"must give at most {MAX_PANELS} ({', '.join(panel_keys)}) panels",
                          "select some with --where, e.g. --where n=1024")

    panels = []
    for pk in sorted(by_panel, key=lambda t: tuple((v is None, v) for v in t)):
        prow = by_panel[pk]
        keys = dict(zip(panel_keys, pk, strict=True))
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in prow:
            groups.setdefault(_group_label(r, groups_by) or y, []).append(r)
        series = []
        for gname in sorted(groups):
            grows = groups[gname]
            gx = _values(grows, *xs_expr)
            order = np.argsort(gx, kind="stable")
            grows = [grows[i] for i in order]
            gx = gx[order]
            gy = _values(grows, *ys_expr)
            series.append(Series(str(gname), tuple(gx), tuple(gy),
                                 xerr=_errs(grows, table, *xs_expr, gx),
                                 yerr=_errs(grows, table, *ys_expr, gy)))
        notes: list[str] = []
        if overlay is not None:
            all_x = _values(prow, *xs_expr)
            curves, notes = overlay(keys, ys_expr[1], all_x)
            series = [*curves, *series]
        ptitle = ", ".join(f"{k}={_fmt(v)}" for k, v in keys.items())
        panels.append(Panel(ptitle, keys, tuple(series), tuple(notes)))

    _draw(panels, path, _label(*xs_expr), _label(*ys_expr), title)
    notes_all = tuple(n for p in panels for n in p.notes)
    return PlotSummary(str(path), "/".join(c for c in xs_expr if c),
                       "/".join(c for c in ys_expr if c), tuple(panels), len(rows), notes_all)


def _draw(panels: Sequence[Panel], path: Path, xlabel: str, ylabel: str,
          title: str | None) -> None:
    import_optional("matplotlib", "vista-lab plot-sweep")
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    suffix = path.suffix.lower()
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    rc: Any = {"font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 8,
          "axes.spines.top": False, "axes.spines.right": False}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(4.6 * ncols, 3.6 * nrows), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        colours: dict[str, str] = {}
        for ax, panel in zip(axes.flat, panels, strict=False):
            for s in panel.series:
                if s.kind == "frontier":
                    ax.plot(s.x, s.y, color="0.25", lw=1.6, label=s.label, zorder=2)
                elif s.kind == "bound":
                    ax.plot(s.x, s.y, color="0.45", lw=1.4, ls="--", label=s.label, zorder=2)
                else:
                    c = colours.setdefault(s.label, OKABE_ITO[len(colours) % len(OKABE_ITO)])
                    # Single points (ledger, blind endpoints) as larger squares on
                    # top, so a curve through the same spot cannot hide them.
                    single = len(s.x) == 1
                    ax.errorbar(s.x, s.y, xerr=_bar(s.xerr), yerr=_bar(s.yerr), color=c,
                                marker="s" if single else "o", ms=6 if single else 4, lw=1.0,
                                capsize=2, label=s.label, zorder=4 if single else 3)
            ax.set_title(panel.title)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            # Below the panel, off the data: "best" still covered a point when every
            # corner held one (the clash finder, figures.find_text_clashes, checks it).
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False,
                      ncols=2)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        if title:
            fig.suptitle(title)
        buf = io.BytesIO()
        fig.savefig(buf, format=suffix[1:], dpi=200)
    atomic_write_bytes(path, buf.getvalue())


def _bar(err: tuple[tuple[float, ...], tuple[float, ...]] | None) -> np.ndarray | None:
    if err is None:
        return None
    arr = np.asarray(err, dtype=float)
    return None if not np.isfinite(arr).any() or not arr.any() else np.nan_to_num(arr)
