"""The toolkit's figures: one script per figure (``figN_<name>.py``), each with
a cached ``compute(params, *, rng) -> TidyTable`` and a ``plot(table, out_dir)``.

Shared pieces: the style file applied with :func:`figure_style`, the Okabe-Ito
:data:`PALETTE`, PNG + PDF writing with :func:`save_figure`, the tidy table and
the check record each figure returns about its own data.

Example
-------
>>> import numpy as np
>>> from vistalab.figures import load_figure
>>> fig = load_figure("fig2_separation")
>>> table = fig.compute(fig.default_params(quick=True), rng=np.random.default_rng(1))
>>> png, pdf = fig.plot(table, "out/figures")            # doctest: +SKIP
"""

from vistalab._core._door import install_contract as _install_contract

from ._checks import STATUSES, Check, status_of
from ._deps import MissingDependency
from ._labels import PointLabel, TextClash, find_text_clashes, place_labels
from ._registry import FIGURE_NAMES, FigureScript, load_figure, merge_params
from ._style import PALETTE, STYLE_PATH, figure_style, new_figure, panel_label, save_figure
from ._table import TidyTable

__all__ = [
    "Check",
    "FIGURE_NAMES",
    "FigureScript",
    "MissingDependency",
    "PALETTE",
    "PointLabel",
    "STATUSES",
    "STYLE_PATH",
    "TextClash",
    "TidyTable",
    "figure_style",
    "find_text_clashes",
    "load_figure",
    "merge_params",
    "new_figure",
    "panel_label",
    "place_labels",
    "save_figure",
    "status_of",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
