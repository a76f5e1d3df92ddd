"""The list of figure scripts and the interface each one implements.

A figure is one module ``figures/figN_<name>.py``; adding one means writing the
module and adding it to :data:`figures._catalog.FIGURES` (a static import, so a
renamed module breaks the build).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np
from vistalab.theory import UnknownNameError

from ._checks import Check
from ._table import TidyTable

__all__ = ["FIGURE_NAMES", "FigureScript", "load_figure", "merge_params"]

FIGURE_NAMES: tuple[str, ...] = (
    "fig1_recovery",
    "fig2_separation",
    "fig3_content_channel",
    "fig4_tradeoff",
    "fig5_phase_transition",
    "fig6_paper_tables",
    "fig7_dashboard_overhead",
    "fig8_beyond",
)


class FigureScript(Protocol):
    """What every ``figures/figN_*.py`` module provides.

    Required members: ``NAME`` (the module name), ``TITLE`` (one line),
    ``STOCHASTIC`` (whether ``compute`` draws random numbers, so the seed
    belongs in its cache key), ``default_params(quick)``, ``compute``,
    ``plot``, ``caption`` and ``checks``.
    """

    NAME: str
    TITLE: str
    STOCHASTIC: bool

    def default_params(self, quick: bool = False) -> dict[str, Any]: ...

    def compute(
        self, params: Mapping[str, Any] | None = None, *, rng: np.random.Generator | None = None
    ) -> TidyTable: ...

    def plot(self, table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]: ...

    def caption(self, table: TidyTable) -> tuple[str, str]: ...

    def checks(self, table: TidyTable) -> list[Check]: ...


def load_figure(name: str) -> FigureScript:
    """The figure script called ``name`` (e.g. ``"fig2_separation"``)."""
    # Imported here, not at the top: each figure module imports merge_params from here.
    from ._catalog import FIGURES

    if name not in FIGURES:
        raise UnknownNameError("figure", name, FIGURES)
    return cast(FigureScript, FIGURES[name])


def merge_params(
    figure: str, defaults: Mapping[str, Any], given: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Defaults overridden by ``given``; an unknown key is an error with a suggestion."""
    out = dict(defaults)
    for key, value in (given or {}).items():
        if key not in defaults:
            raise UnknownNameError(f"parameter of {figure}", key, defaults)
        out[key] = value
    return out
