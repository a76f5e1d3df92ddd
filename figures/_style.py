"""Look and output format shared by every figure: the style file, the
colour-blind-safe palette, and PNG (200 dpi) + PDF writing on the Agg canvas.

Figures are built on :class:`matplotlib.figure.Figure` directly (never pyplot),
so no global figure registry or backend switch is touched.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from vistalab._core import atomic_write, import_optional

__all__ = [
    "PALETTE",
    "STYLE_PATH",
    "figure_style",
    "new_figure",
    "panel_label",
    "save_figure",
]

#: The style file applied by :func:`figure_style`.
STYLE_PATH = Path(__file__).with_name("vista.mplstyle")

#: Okabe-Ito colours by name (Okabe & Ito 2008), safe under colour-vision deficiency.
PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "purple": "#CC79A7",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
    "grey": "#7F7F7F",
}


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """Apply ``vista.mplstyle`` for the duration of the block (rcParams restored after)."""
    import_optional("matplotlib", "the figures")
    import matplotlib.style

    with matplotlib.style.context(str(STYLE_PATH)):
        yield


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 3.2,
               **subplot_kw: Any) -> tuple[Any, np.ndarray]:
    """A Figure on an Agg canvas and a 2-D array of its axes (call inside :func:`figure_style`).

    Parameters
    ----------
    nrows, ncols : int
        Panels down and across, 1..64 each.
    width, height : float
        Size in inches, in (0, 200].
    **subplot_kw
        Passed to :meth:`matplotlib.figure.Figure.subplots`.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure, drawn by the Agg backend (no display needed).
    axes : numpy.ndarray
        Its axes, shape ``(nrows, ncols)``.
    """
    import_optional("matplotlib", "the figures")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from vistalab.theory._validate import as_int, as_real

    nrows = as_int("nrows", nrows, lo=1, hi=64, fix="a figure has 1..64 rows of panels")
    ncols = as_int("ncols", ncols, lo=1, hi=64, fix="a figure has 1..64 columns of panels")
    width = as_real("width", width, lo=0.0, hi=200.0, lo_open=True, fix="inches, e.g. 6.4")
    height = as_real("height", height, lo=0.0, hi=200.0, lo_open=True, fix="inches, e.g. 3.2")
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    return fig, axes


def panel_label(ax: Any, label: str) -> None:
    """Bold panel letter in the axes' top-left corner, outside the data area.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    label : str
        The letter, e.g. ``"a"``.
    """
    from vistalab.theory._validate import as_text

    if not callable(getattr(ax, "set_title", None)):
        from vistalab.theory import DomainError

        raise DomainError("ax", ax, "must be a matplotlib Axes", "pass one of new_figure()'s axes")
    ax.set_title(as_text("label", label, fix="e.g. 'a'"), loc="left", fontweight="bold")


def save_figure(fig: Any, out_dir: str | os.PathLike[str], name: str) -> tuple[Path, Path]:
    """Write ``name.png`` (200 dpi) and ``name.pdf`` (vector) into ``out_dir``.

    Each file is rendered in memory first and then written atomically and
    durably (:func:`vistalab._core.atomic_write`), so a crash never leaves a
    truncated figure behind; the files honour the umask. The PDF carries no creation date,
    so identical inputs give identical bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to write.
    out_dir : str or PathLike
        The folder (created if needed).
    name : str
        The file stem, e.g. ``"fig4_tradeoff"``.

    Returns
    -------
    png, pdf : Path
        The two files written.
    """
    from vistalab.theory import DomainError
    from vistalab.theory._validate import as_text

    if not callable(getattr(fig, "savefig", None)):
        raise DomainError("fig", fig, "must be a matplotlib Figure", "pass new_figure()[0]")
    out_text = os.fspath(out_dir) if isinstance(out_dir, os.PathLike) else out_dir
    as_text("out_dir", out_text, fix="pass the folder to write into")
    as_text("name", name, fix="pass a file stem such as 'fig1_recovery'")
    if "/" in name or os.sep in name or name in (".", ".."):
        raise DomainError("name", name, "must be a file stem without folders",
                          "pass e.g. 'fig1_recovery'")
    out = Path(out_text)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, extra in (("png", {"dpi": 200}), ("pdf", {"metadata": {"CreationDate": None}})):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, **extra)
        target = out / f"{name}.{fmt}"
        atomic_write(target, buf.getvalue())
        paths.append(target)
    return paths[0], paths[1]
