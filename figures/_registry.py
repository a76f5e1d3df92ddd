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

    def default_params(self, quick: bool = False) -> dict[str, Any]:
        """The figure's parameters for the paper (or a quick run).

        Parameters
        ----------
        quick : bool
            Smaller sizes and fewer trials, for a fast check.

        Returns
        -------
        dict
            Parameter name -> value; :func:`merge_params` overlays a user's values.
        """

    def compute(
        self, params: Mapping[str, Any] | None = None, *, rng: np.random.Generator | None = None
    ) -> TidyTable:
        """The figure's data as a tidy table (exact curves, and Monte Carlo for a
        stochastic figure).

        Parameters
        ----------
        params : Mapping, optional
            Parameters overriding :meth:`default_params`.
        rng : numpy.random.Generator, optional
            The randomness of a stochastic figure (it belongs in the cache key).

        Returns
        -------
        TidyTable
            One row per plotted point.
        """

    def plot(self, table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
        """Draw the figure from its table and write it.

        Parameters
        ----------
        table : TidyTable
            What :meth:`compute` returned.
        out_dir : str or pathlib.Path
            The folder to write into.

        Returns
        -------
        tuple of pathlib.Path
            The PNG and the PDF written (:func:`save_figure`).
        """

    def caption(self, table: TidyTable) -> tuple[str, str]:
        """The figure's caption, computed from its table.

        Parameters
        ----------
        table : TidyTable
            What :meth:`compute` returned.

        Returns
        -------
        tuple of str
            What the figure shows, then what its numbers say.
        """

    def checks(self, table: TidyTable) -> list[Check]:
        """The figure's checks of the paper's statements on its own data.

        Parameters
        ----------
        table : TidyTable
            What :meth:`compute` returned.

        Returns
        -------
        list of Check
            One per statement checked, each with its verdict.
        """


def load_figure(name: str) -> FigureScript:
    """The figure script called ``name``.

    Parameters
    ----------
    name : str
        One of :data:`FIGURE_NAMES`, e.g. ``"fig2_separation"``.

    Returns
    -------
    FigureScript
        The figure's module: ``default_params``, ``compute``, ``plot``, ``caption``
        and ``checks``.

    Raises
    ------
    UnknownNameError
        If no figure has that name (with the closest names).

    Examples
    --------
    >>> fig = load_figure("fig2_separation")
    >>> fig.NAME
    'fig2_separation'
    """
    # Imported here, not at the top: each figure module imports merge_params from here.
    from ._catalog import FIGURES

    if not isinstance(name, str) or name not in FIGURES:
        raise UnknownNameError("figure", name, FIGURES)
    return cast(FigureScript, FIGURES[name])


def merge_params(
    figure: str, defaults: Mapping[str, Any], given: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A figure's parameters: its defaults overridden by ``given``.

    Parameters
    ----------
    figure : str
        The figure's name, for error messages.
    defaults : mapping
        The figure's default parameters (``default_params(quick)``).
    given : mapping or None
        The parameters to override; every key must be a default's key.

    Returns
    -------
    dict
        A new dict: the defaults with the given values in place.

    Raises
    ------
    UnknownNameError
        If ``given`` has a key the figure does not define (with a suggestion).
    DomainError
        If ``figure`` is not a name or ``defaults`` / ``given`` are not mappings.

    Examples
    --------
    >>> merge_params("fig4_tradeoff", {"n": 64, "kappa": 4}, {"n": 128})
    {'n': 128, 'kappa': 4}
    """
    from vistalab.theory import DomainError

    if not isinstance(figure, str) or not figure:
        raise DomainError("figure", figure, "must be a figure name", "e.g. 'fig1_recovery'")
    if not isinstance(defaults, Mapping):
        raise DomainError("defaults", defaults, "must be a mapping of parameter names to values",
                          "pass the figure's DEFAULTS dict")
    if given is not None and not isinstance(given, Mapping):
        raise DomainError("given", given, "must be a mapping of parameter names to values "
                          "or None", "pass e.g. {'trials': 1000}")
    out = dict(defaults)
    for key, value in (given or {}).items():
        if key not in defaults:
            raise UnknownNameError(f"parameter of {figure}", key, defaults)
        out[key] = value
    return out
